// Reads every frame of a pcap file through ns-3's own PcapFile.
#ifndef FABEMU_TESTS_PCAP_FRAMES_H
#define FABEMU_TESTS_PCAP_FRAMES_H

#include "ns3/pcap-file.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

inline std::vector<std::vector<uint8_t>>
ReadPcapFrames(const std::string& path)
{
    ns3::PcapFile file;
    file.Open(path, std::ios::in);
    if (file.Fail())
    {
        throw std::runtime_error("cannot open " + path);
    }
    std::vector<std::vector<uint8_t>> frames;
    std::vector<uint8_t> buf(65536);
    for (;;)
    {
        uint32_t sec = 0, usec = 0, incl = 0, orig = 0, read = 0;
        file.Read(buf.data(), buf.size(), sec, usec, incl, orig, read);
        if (file.Eof() || file.Fail())
        {
            break;
        }
        frames.emplace_back(buf.begin(), buf.begin() + incl);
    }
    return frames;
}

inline std::string
TestData(const std::string& name)
{
    return std::string(FABEMU_TEST_DATA_DIR) + "/" + name;
}

#endif
