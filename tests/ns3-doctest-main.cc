// doctest main for suites that use ns-3: picosecond resolution, as every
// FabricEmu simulation uses (one pause quantum at 100 Gb/s is 5.12 ns).
#define DOCTEST_CONFIG_IMPLEMENT
#include "ns3/nstime.h"

#include <doctest/doctest.h>

int
main(int argc, char** argv)
{
    ns3::Time::SetResolution(ns3::Time::PS);
    return doctest::Context(argc, argv).run();
}
