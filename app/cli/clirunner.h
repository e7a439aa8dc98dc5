#pragma once
// peaklens-cli as a function: parses the arguments, runs the command they name and
// writes what it prints to the given streams, so that it also runs inside a fuzzer.

#include <iosfwd>

namespace peaklens::cli {

// Exit codes: 0 success, 2 bad input or usage (one sentence on `err`, nothing on `out`),
// or the exit code of a recorded command.
int runCli(int argc, char **argv, std::ostream &out, std::ostream &err);

} // namespace peaklens::cli
