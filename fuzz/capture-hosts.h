// The two VMs of the real captures in tests/data/ (tests/data/README.md), as the emulator's
// directory of endpoints holds them: what the frame targets' edges stand between.
#ifndef FABEMU_FUZZ_CAPTURE_HOSTS_H
#define FABEMU_FUZZ_CAPTURE_HOSTS_H

#include "emulator/edge/neighbour-responder.h"

#include <vector>

inline std::vector<fabemu::EndpointAddress>
CaptureHosts()
{
    fabemu::EndpointAddress a;
    a.ipv4 = 0x0a000001;
    a.mac = {0x52, 0x54, 0, 0, 0, 0x01};
    fabemu::EndpointAddress b;
    b.ipv4 = 0x0a000002;
    b.mac = {0x52, 0x54, 0, 0, 0, 0x02};
    return {a, b};
}

#endif
