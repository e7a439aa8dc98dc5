// SPDX-License-Identifier: Apache-2.0
#pragma once
// Traces written on a GPU host, streamed to the machine the user sits at while the run
// writes them. On the host, `record --send` (and `rerun --send`) runs the command and
// writes frames to stdout; here, `record --host` (and `rerun --host`) runs that through
// ssh (RemoteCommand) and turns the frames into files: each trace a copy growing commit by
// commit (MirrorSink), which the app and `watch` follow as they follow a local file, then
// replaced by the finished file itself, byte for byte.
//
// After kSendHeader's line, each frame is a tag, a 4-byte file number, an 8-byte length
// (little-endian) and that many bytes:
//   N  a trace appeared; the payload is its file name
//   D  rows its writer committed (a MirrorSource delta)
//   W  the finished file, whole
//   O  what the command printed (file 0)
//   F  another file of the run, whole: its name, a NUL, its bytes (file 0)
//   E  the end: the exit code, the run's folder there, and what peaklens-cli printed, a
//      line each (file 0)
// Names are paths inside the run's folder (a relaunch's run/ and baseline/).
// Closing the sender's stdin asks it to stop the run; it still sends what was written.

#include "core/format/remotefile.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace peaklens::cli {

// The host's half: sends frames on stdout while `pid` runs, its output read from
// `output`, its traces found in `folder`; ends when it has ended, or stops it (SIGTERM)
// when stdin closes. `finish` runs after it ended, before the finished files are sent
// (the summary figures stored in them) and returns the last sentence. Returns its exit
// code; throws Error when stdout is gone (the run is stopped first).
int sendWhileRunning(pid_t pid, int output, const std::filesystem::path &folder,
                     const std::function<std::string(int code)> &finish);

// This machine's half: reads the frames `remote` sends into `folder` (made once a trace
// comes), printing what the command printed on `output`. Returns the exit code to end with, having said on stderr why
// anything went wrong; what arrived stays in `folder`, each copy readable. SIGINT and
// SIGTERM ask the host to stop the run; a second one stops waiting for it.
struct Received
{
    int code = 0;
    std::vector<std::filesystem::path> traces;
    std::string last;         // what the host printed last, or why the stream ended early
    std::string remoteFolder; // the run's folder there, absolute
    bool complete = false;    // the host sent everything: every finished file is in place
};
// Writes all of `bytes` to stdout; throws Error when it cannot (the reader gone).
void writeToStdout(std::string_view bytes);

// A new folder's name for a run on a host, in its working directory or home folder:
// "PREFIX-20261206-231500-4242" (when, and this process).
std::string hostFolderName(const std::string &prefix);

Received receiveTraces(RemoteCommand &remote, const std::filesystem::path &folder, const std::string &remoteFolder,
                       std::FILE *output = stdout);

} // namespace peaklens::cli
