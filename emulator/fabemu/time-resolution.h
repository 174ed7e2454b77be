// Every FabricEmu simulation runs at picosecond resolution (a PFC quantum at
// 100 Gb/s is 5.12 ns). ns-3 allows setting it once, before times are used.
#ifndef FABEMU_TIME_RESOLUTION_H
#define FABEMU_TIME_RESOLUTION_H

#include "ns3/nstime.h"

namespace fabemu
{

inline void
UsePicoseconds()
{
    static const bool once = [] {
        ns3::Time::SetResolution(ns3::Time::PS);
        return true;
    }();
    (void)once;
}

} // namespace fabemu

#endif
