// MPI for partitioned runs, as a plugin (fabemu-runner-mpi): PartitionedRun loads it, and
// with it Open MPI, ns-3's distributed engines (fabemu-ns3-mpi) and RankExchange's door on
// them (fabemu-rank-exchange-mpi). No other run maps those libraries.
#include "emulator/runner/partitioned-run.h"

#include "ns3/mpi-interface.h"
#include "ns3/mpi-rank-exchange.h"
#include "ns3/simulator.h"

#include <limits>
#include <mpi.h>

namespace fabemu
{

namespace
{

class MpiRankComm : public RankComm
{
  public:
    void Start(uint32_t& rank, uint32_t& size) override
    {
        // ns-3's engines read (and may log) the arguments: give them one.
        static int argc = 1;
        static char name[] = "fabemu";
        static char* args[] = {name, nullptr};
        static char** argv = args;
        ns3::MpiInterface::Enable(&argc, &argv);
        ns3::OpenMpiRankExchange();
        rank = ns3::MpiInterface::GetSystemId();
        size = ns3::MpiInterface::GetSize();
        m_rank = rank;
        m_size = size;
    }

    void End(bool abort) override
    {
        if (abort)
        {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        ns3::Simulator::Destroy(); // the engine's last use of MPI, if the run did not yet
        ns3::MpiInterface::Disable();
    }

    uint64_t Sum(uint64_t here) override
    {
        unsigned long mine = here;
        unsigned long all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
        return all;
    }

    void Max(int64_t (&values)[2]) override
    {
        long long mine[2] = {values[0], values[1]};
        long long all[2] = {0, 0};
        MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        values[0] = all[0];
        values[1] = all[1];
    }

    std::vector<std::string> Gather(const std::string& mine) override
    {
        int size = static_cast<int>(mine.size());
        std::vector<int> sizes(m_size);
        MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<int> offsets(m_size, 0);
        int64_t total = 0;
        for (uint32_t r = 0; r < m_size; ++r)
        {
            offsets[r] = static_cast<int>(total);
            total += sizes[r];
            if (m_rank == 0 && total >= std::numeric_limits<int>::max())
            {
                MPI_Abort(MPI_COMM_WORLD, 1); // the others are already in MPI_Gatherv
            }
        }
        std::string buffer(m_rank == 0 ? static_cast<size_t>(total) : 0, '\0');
        MPI_Gatherv(mine.data(), size, MPI_CHAR, buffer.data(), sizes.data(), offsets.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD);
        std::vector<std::string> all;
        if (m_rank == 0)
        {
            for (uint32_t r = 0; r < m_size; ++r)
            {
                all.push_back(buffer.substr(offsets[r], sizes[r]));
            }
        }
        return all;
    }

  private:
    uint32_t m_rank{0};
    uint32_t m_size{1};
};

} // namespace

} // namespace fabemu

/// This plugin's entry (PartitionedRun loads it).
extern "C" fabemu::RankComm*
fabemu_make_rank_comm()
{
    return new fabemu::MpiRankComm();
}
