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
        MPI_Allreduce(MPI_IN_PLACE, &here, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        return here;
    }

    void Max(int64_t (&values)[2]) override
    {
        MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    }

    std::vector<std::string> Gather(const std::string& mine) override
    {
        const uint32_t rank = ns3::MpiInterface::GetSystemId();
        const uint32_t ranks = ns3::MpiInterface::GetSize();
        int size = static_cast<int>(mine.size());
        std::vector<int> sizes(ranks);
        MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<int> offsets(ranks, 0);
        int64_t total = 0;
        for (uint32_t r = 0; r < ranks; ++r)
        {
            offsets[r] = static_cast<int>(total);
            total += sizes[r];
            if (rank == 0 && total >= std::numeric_limits<int>::max())
            {
                MPI_Abort(MPI_COMM_WORLD, 1); // the others are already in MPI_Gatherv
            }
        }
        std::string buffer(rank == 0 ? static_cast<size_t>(total) : 0, '\0');
        MPI_Gatherv(mine.data(), size, MPI_CHAR, buffer.data(), sizes.data(), offsets.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD);
        std::vector<std::string> all;
        if (rank == 0)
        {
            for (uint32_t r = 0; r < ranks; ++r)
            {
                all.push_back(buffer.substr(offsets[r], sizes[r]));
            }
        }
        return all;
    }
};

} // namespace

} // namespace fabemu

/// This plugin's entry (PartitionedRun loads it).
extern "C" fabemu::RankComm*
fabemu_make_rank_comm()
{
    return new fabemu::MpiRankComm();
}
