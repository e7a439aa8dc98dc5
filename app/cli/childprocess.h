// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a program to its end as `record` and `rerun` start training commands: with extra
// environment variables, in a working directory, its stdout and stderr where the caller
// says, and SIGINT and SIGTERM sent to peaklens-cli passed on to it (Ctrl+C, or a stop from
// the app, ends the training too).

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace peaklens::cli {

struct ChildProcess
{
    std::vector<std::string> arguments;                           // the program, then its arguments; found on PATH
    std::vector<std::pair<std::string, std::string>> environment; // set on top of ours
    std::string workingDirectory;                                 // empty: ours
    std::string stdoutFile;                                       // empty: ours
    std::string stderrFile;                                       // empty: ours
    bool stdoutToStderr = false;                                  // its stdout on our stderr, keeping ours for the result
    int outputFd = -1; // when set: its stdout and stderr both go there, and its stdin is /dev/null
};

// The folder peaklens-cli runs from, where its plugins and programs are looked for first.
std::filesystem::path ownDirectory();

// Its exit code, 128 + N when signal N ended it, 127 when it could not be started (said on
// stderr). Throws Error when it cannot be forked.
int runChild(const ChildProcess &child);

// The same in two halves, for a caller with more to do while it runs: starts it, then
// says whether it has ended (its exit code) without waiting, or waits.
pid_t startChild(const ChildProcess &child);
std::optional<int> childEnded(pid_t pid, bool wait);

} // namespace peaklens::cli
