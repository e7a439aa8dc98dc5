// SPDX-License-Identifier: Apache-2.0
#pragma once
// peaklens-cli as a function: parses the arguments, runs the command they name and
// writes what it prints to the given streams, so that it also runs inside a fuzzer.

#include <iosfwd>

namespace peaklens::cli {

// Returns the exit code (the table in docs/cli.md, "Exit status"); a failure is one sentence
// on `err` and nothing on `out`.
int runCli(int argc, char **argv, std::ostream &out, std::ostream &err);

} // namespace peaklens::cli
