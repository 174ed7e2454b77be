#include "emulator/fabemu/cli.h"

#include <iostream>

int
main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    return fabemu::RunFabemu(args, std::cout, std::cerr);
}
