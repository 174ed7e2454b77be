// check-plots DIR...: exits 1, naming each problem, if a results folder's plots do not
// show their data or its report.md is not for people (plot-checks.h). The scenario
// tests run it on every shipped scenario's folder, the VM ones included.
#include "tests/scenarios/plot-checks.h"

#include <iostream>

int
main(int argc, char** argv)
{
    if (argc < 2)
    {
        std::cerr << "usage: check-plots RESULTS_DIR...\n";
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; ++i)
    {
        const auto f = plotcheck::CheckFolder(argv[i]);
        for (const auto& p : f.problems)
        {
            std::cerr << "check-plots: " << argv[i] << ": " << p << "\n";
        }
        if (!f.problems.empty())
        {
            rc = 1;
            continue;
        }
        std::cout << "check-plots: " << argv[i] << ": " << f.plots.size()
                  << " plot(s), each showing its data; report.md for people\n";
    }
    return rc;
}
