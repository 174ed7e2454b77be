/*
 * A tap device whose endpoint side is this process: frames written here enter
 * the host as if a VM had sent them; frames the host (the emulator's edge)
 * writes to the tap wait in its ring until read here. For tests and benchmarks
 * that need a real tap but no VM. The tap goes away with the object.
 */
#ifndef FABEMU_OWNED_TAP_H
#define FABEMU_OWNED_TAP_H

#include "emulator/edge/tap-port.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fabemu
{

class OwnedTap
{
  public:
    /// Creates \p name (root, /dev/net/tun) with a ring of \p ringFrames (the tap's
    /// txqueuelen), IPv6 off so the host adds no traffic of its own. Throws TapError.
    OwnedTap(const std::string& name, unsigned ringFrames);
    ~OwnedTap();
    OwnedTap(const OwnedTap&) = delete;
    OwnedTap& operator=(const OwnedTap&) = delete;

    const std::string& Name() const { return m_name; }
    int Fd() const { return m_fd; }
    /// Writes one frame into the host; false if the host did not take it.
    bool Send(const std::vector<uint8_t>& frame);
    /// Reads every frame waiting now.
    std::vector<std::vector<uint8_t>> Drain();
    /// Reads the frames waiting now, keeping none; returns how many were \p length
    /// bytes long (0: how many in all).
    size_t Discard(size_t length = 0);

    /// Why no tap can be made here ("" when one can): not root, no /dev/net/tun.
    static std::string WhyNot();

  private:
    std::string m_name;
    int m_fd{-1};
};

} // namespace fabemu

#endif
