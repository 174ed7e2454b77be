// Fixture: builds the endpoint image from a clean image cache, then checks the cache hit.
#include "../skip.h"
#include "vm-support.h"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

namespace fs = std::filesystem;

TEST_CASE("the endpoint image builds from a clean cache, and a second build is a cache hit")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    fs::remove_all(vmtest::Cache() + "/images");
    const auto t0 = std::chrono::steady_clock::now();
    const std::string first = vmtest::Image();
    const auto t1 = std::chrono::steady_clock::now();
    const auto mtime = fs::last_write_time(first + "/initramfs.cpio.gz");
    std::ifstream a(first + "/initramfs.cpio.gz", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(a)), {});
    const std::string second = vmtest::Image();
    const auto t2 = std::chrono::steady_clock::now();
    CHECK(second == first);
    CHECK(fs::last_write_time(second + "/initramfs.cpio.gz") == mtime); // not rebuilt
    CHECK(fs::file_size(first + "/vmlinuz") > 1'000'000);
    CHECK(bytes.size() > 1'000'000);
    const auto ms = [](auto d) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    MESSAGE("image " << first << ": first build " << ms(t1 - t0) << " ms, cached " << ms(t2 - t1)
                     << " ms");
    std::cout << "image build: first " << ms(t1 - t0) << " ms, cached " << ms(t2 - t1) << " ms\n";
}

TEST_CASE("an extra list puts more host files into a separate image")
{
    const std::string why = vmtest::WhyNoVms();
    if (!why.empty())
    {
        FABEMU_SKIP(why);
    }
    const std::string base = vmtest::Image();
    const std::string list = vmtest::Cache() + "/extra-test.txt";
    std::ofstream(list) << "# a tool the default image lacks\n/usr/bin/getconf\n";
    std::ostringstream err;
    const std::string extra = fabemu::BuildImage(vmtest::Cache(), list, err);
    REQUIRE_MESSAGE(!extra.empty(), err.str());
    CHECK(extra != base); // the list is an input: another image, the default one untouched
    const std::string cmd = "zcat '" + extra +
                            "/initramfs.cpio.gz' | cpio -t 2>/dev/null | "
                            "grep -c '^usr/bin/getconf$'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    char line[32] = {0};
    REQUIRE(fgets(line, sizeof(line), pipe.get()));
    CHECK(std::string(line) == "1\n");
    std::ofstream(list) << "/nonexistent/tool\n";
    std::ostringstream err2;
    CHECK(fabemu::BuildImage(vmtest::Cache(), list, err2).empty()); // named on stderr by the script
    fs::remove_all(extra);
    fs::remove(list);
}
