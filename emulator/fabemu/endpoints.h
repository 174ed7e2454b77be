// fabemu image build, fabemu vm: the endpoint VMs from the command line.
#ifndef FABEMU_ENDPOINTS_H
#define FABEMU_ENDPOINTS_H

#include <ostream>
#include <string>
#include <vector>

namespace fabemu
{

/// The image cache: --cache, else $FABEMU_CACHE, else $XDG_CACHE_HOME/fabemu, else ~/.cache/fabemu.
std::string DefaultCacheDir();

/// Builds (or finds cached) the endpoint image; returns its folder, or "" after printing why not.
std::string BuildImage(const std::string& cache, const std::string& extra, std::ostream& err);

struct VmOptions
{
    unsigned count{1};
    std::string device{"rxe"};
    unsigned mtu{1500};
    bool bridge{false};
    std::vector<std::string> run; ///< commands run on every VM, in turn
    bool hold{false};             ///< keep the VMs until SIGINT or SIGTERM
    std::string accel{"auto"};
    std::string cache;
    std::string backend{"vm"}; ///< vm, or netns where the host kernel gives namespaces rxe/siw
    bool noRdma{false};        ///< netns only: plain IP endpoints, no RDMA device
};

int RunVms(const VmOptions& opt, std::ostream& out, std::ostream& err);

/// A Linux bridge for VM taps, named febr<our pid> so a crashed run's is swept;
/// removed when destroyed. Throws LaunchError when ip(8) refuses.
class LinuxBridge
{
  public:
    LinuxBridge();
    ~LinuxBridge();
    LinuxBridge(const LinuxBridge&) = delete;
    LinuxBridge& operator=(const LinuxBridge&) = delete;
    void Join(const std::string& tap);

  private:
    static void Ip(const std::string& args);
    std::string m_name;
};

} // namespace fabemu

#endif
