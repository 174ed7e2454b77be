#include "demo.h"

#include "exit-codes.h"
#include "results-folder.h"
#include "time-resolution.h"

#include "dcqcn-rate-control.h"
#include "rdma-workload.h"
#include "roce-recorders.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fabemu
{

namespace fs = std::filesystem;

int
RunDemo(const DemoOptions& opt, std::ostream& out, std::ostream& err)
{
    using namespace ns3;
    if (opt.senders < 1 || opt.senders > 256)
    {
        err << "fabemu demo: --senders must be 1..256, not " << opt.senders << "\n";
        return kExitBadInput;
    }
    if (opt.cc != "dcqcn" && opt.cc != "none")
    {
        err << "fabemu demo: --cc must be dcqcn or none, not '" << opt.cc << "'\n";
        return kExitBadInput;
    }
    // DataRate's own parser aborts the process on bad input; this one reports it.
    DataRateValue parsed;
    if (!parsed.DeserializeFromString(opt.rate, MakeDataRateChecker()) ||
        parsed.Get().GetBitRate() == 0)
    {
        err << "fabemu demo: --rate '" << opt.rate << "' is not a data rate (e.g. 100Gbps)\n";
        return kExitBadInput;
    }
    const DataRate rate = parsed.Get();

    // Written into a temporary folder beside the target, marked, renamed when complete.
    const fs::path target = ResultsPath(opt.out);
    if (const std::string why = ResultsTargetProblem(target, opt.force); !why.empty())
    {
        err << "fabemu demo: " << why << "\n";
        return kExitBadInput;
    }
    const fs::path tmp = target.parent_path() / fs::path("." + target.filename().string() +
                                                         ".tmp-" + std::to_string(getpid()));
    std::error_code ec;
    fs::create_directories(tmp, ec);
    if (ec)
    {
        err << "fabemu demo: cannot create " << tmp << ": " << ec.message() << "\n";
        return kExitFailure;
    }
    MarkResults(tmp);

    UsePicoseconds();
    Config::Reset();
    Config::SetDefault("ns3::SwitchMmu::PfcEnabled", BooleanValue(opt.pfc));
    if (opt.cc == "dcqcn")
    {
        DcqcnRateControl::ApplyPreset("paper");
        Config::SetDefault("ns3::RoceNic::CongestionControl", StringValue("ns3::DcqcnRateControl"));
    }

    const auto wall0 = std::chrono::steady_clock::now();
    nlohmann::json summary;
    {
        RoceFabricHelper fabric;
        fabric.Install(TopologySpec::Star(opt.senders + 1, LinkParams{rate, MicroSeconds(1)}));
        std::ofstream pfcFile(tmp / "pfc.txt");
        std::ofstream queueFile(tmp / "queue.txt");
        PfcLog pfcLog(fabric, pfcFile);
        QueueSampler queues(fabric, queueFile, MicroSeconds(1));
        auto pcap = Create<PcapWriter>(fabric.GetNic(0)->GetDevice(), (tmp / "h0.pcap").string());
        FlowRunner runner(fabric);
        std::vector<uint32_t> srcs;
        for (uint32_t s = 1; s <= opt.senders; ++s)
        {
            srcs.push_back(s);
        }
        runner.Add(workload::Incast(0, srcs, opt.bytes, Time(0)));
        runner.SetAllDoneCallback(MakeCallback(static_cast<void (*)()>(&Simulator::Stop)));
        runner.Start();
        Simulator::Stop(Seconds(10)); // a guard: an incast this size ends in milliseconds
        Simulator::Run();
        const Time simTime = Simulator::Now();

        std::ofstream fct(tmp / "fct.txt");
        runner.WriteFct(fct);
        std::vector<double> slowdowns; // completed flows only: the others have no FCT
        uint64_t delivered = 0;
        for (const auto& r : runner.Outcomes())
        {
            if (r.Completed())
            {
                slowdowns.push_back(r.fct.GetSeconds() / r.idealFct.GetSeconds());
            }
            delivered += r.Completed() ? r.spec.bytes : r.delivered;
        }
        std::sort(slowdowns.begin(), slowdowns.end());
        summary["scenario"] = "demo";
        summary["fabric"] = "roce";
        summary["topology"] = fmt::format("star, {} senders into h0 at {}", opt.senders, opt.rate);
        summary["pfc"] = opt.pfc;
        summary["cc"] = opt.cc;
        summary["sim_time_s"] = simTime.GetSeconds();
        summary["totals"] = {{"drops", fabric.TotalDrops()},
                             {"pfc_pause_frames", fabric.TotalPfcFrames()},
                             {"ecn_marks", fabric.TotalEcnMarks()},
                             {"cnps", fabric.TotalCnps()},
                             {"bytes_delivered", delivered}};
        summary["flows_completed"] = slowdowns.size();
        summary["flows_failed"] = runner.Failed();
        summary["flows_pending"] = runner.Pending();
        summary["fct_slowdown"] = {
            {"median", slowdowns.empty() ? 0 : slowdowns[slowdowns.size() / 2]},
            {"max", slowdowns.empty() ? 0 : slowdowns.back()}};
        summary["peak_queue_bytes"] = queues.Peak();
        pcap = nullptr;
        Simulator::Destroy();
    }
    summary["wall_time_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::ofstream(tmp / "summary.json") << summary.dump(2) << "\n";

    PublishResults(tmp, target, ec);
    if (ec)
    {
        err << "fabemu demo: cannot move results to " << target << ": " << ec.message() << "\n";
        fs::remove_all(tmp, ec);
        return kExitFailure;
    }
    if (!opt.quiet)
    {
        const auto& t = summary["totals"];
        out << fmt::format("RoCEv2 incast: {} x {} bytes into h0 at {}, PFC {}, CC {}\n",
                           opt.senders, opt.bytes, opt.rate, opt.pfc ? "on" : "off", opt.cc);
        out << fmt::format(
            "  flows completed {} of {} ({} failed, {} pending), bytes delivered {}\n",
            summary["flows_completed"].get<size_t>(), opt.senders,
            summary["flows_failed"].get<size_t>(), summary["flows_pending"].get<size_t>(),
            t["bytes_delivered"].get<uint64_t>());
        out << fmt::format("  drops {}, PFC frames {}, ECN marks {}, CNPs {}, peak queue {} B\n",
                           t["drops"].get<uint64_t>(), t["pfc_pause_frames"].get<uint64_t>(),
                           t["ecn_marks"].get<uint64_t>(), t["cnps"].get<uint64_t>(),
                           summary["peak_queue_bytes"].get<uint64_t>());
        out << fmt::format(
            "  FCT slowdown median {:.2f}, max {:.2f}; simulated {:.3f} ms in {:.2f} s\n",
            summary["fct_slowdown"]["median"].get<double>(),
            summary["fct_slowdown"]["max"].get<double>(), summary["sim_time_s"].get<double>() * 1e3,
            summary["wall_time_s"].get<double>());
        out << "  results: " << target.string()
            << "/ (summary.json, fct.txt, pfc.txt, queue.txt, h0.pcap)\n";
    }
    const size_t failed = summary["flows_failed"].get<size_t>();
    const size_t pending = summary["flows_pending"].get<size_t>();
    if (failed + pending > 0)
    {
        err << fmt::format("fabemu demo: {} flow(s) failed, {} pending\n", failed, pending);
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace fabemu
