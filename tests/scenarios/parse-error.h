// What parsing a scenario text as "bad.yaml" refuses it with, for the tests of mistakes.
#ifndef FABEMU_TESTS_PARSE_ERROR_H
#define FABEMU_TESTS_PARSE_ERROR_H

#include "scenarios/src/scenario.h"

#include <doctest/doctest.h>

#include <string>

/// The message that parsing \p text gives ("bad.yaml:L:C: ..."); fails the test when it
/// parses.
inline std::string
ParseErrorOf(const std::string& text)
{
    try
    {
        fabemu::ParseScenario(text, "bad.yaml");
    }
    catch (const fabemu::ScenarioError& e)
    {
        return e.what();
    }
    FAIL("parsed without an error:\n" << text);
    return "";
}

#endif
