// SPDX-License-Identifier: Apache-2.0
// peaklens-cli send FILE: a trace file written to stdout for a PeakLens on another machine,
// which runs it through ssh to open ssh://HOST/FILE (core/format/remotefile.h): one line
// with this version first, then the file's size, then its bytes in frames, in PageOrder.
// With --list, whether FILE is a folder and the traces in it, for ssh://HOST/FOLDER.
#include "command.h"
#include "tracestream.h"

#include "core/error.h"
#include "core/format/byteorder.h"
#include "core/format/pageorder.h"
#include "core/format/readablefile.h"
#include "core/format/remotefile.h"
#include "core/import/tracefolder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace peaklens::cli {

namespace {

// `send --list PATH`: whether PATH is a folder and, if so, the traces in it, a line each,
// for ssh://HOST/FOLDER to open as the ranks of a run.
CommandOutput list(const std::string &path)
{
    std::string text = std::string(kSendHeader) + PEAKLENS_VERSION + "\n";
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
        requireReadableFile(path);
        return {text + std::string(kListFile) + "\n"};
    }
    text += std::string(kListFolder) + "\n";
    for (const std::string &trace : expandTraceFolders({path}))
        text += std::filesystem::path(trace).filename().string() + "\n";
    return {text};
}

CommandOutput send(const std::string &path)
{
    requireReadableFile(path);
    const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file < 0)
        throw ImportError(path, std::string("cannot be read: ") + std::strerror(errno) + ".");
    struct stat status
    { };
    if (::fstat(file, &status) != 0 || !S_ISREG(status.st_mode)) {
        ::close(file);
        throw ImportError(path, "is not a regular file; only files are sent.");
    }
    // The size first: the other end knows a file cut short. A file that grows meanwhile
    // is sent as it was when it was opened; its pages in the order a reader wants them.
    const auto size = static_cast<std::uint64_t>(status.st_size);
    const std::string header = std::string(kSendHeader) + PEAKLENS_VERSION + "\n" + std::to_string(size) + "\n";
    std::vector<char> frame(kSendFrameHeader + PageOrder::kMaxRunBytes);
    try {
        writeToStdout(header);
        for (const ByteRun &run : PageOrder::of(file, size)) {
            putLittleEndian(frame.data(), run.offset, 8);
            putLittleEndian(frame.data() + 8, run.length, 4);
            for (std::uint64_t done = 0; done < run.length;) {
                const ssize_t got = ::pread(file, frame.data() + kSendFrameHeader + done,
                                            static_cast<std::size_t>(run.length - done), static_cast<off_t>(run.offset + done));
                if (got < 0 && errno == EINTR)
                    continue;
                if (got < 0)
                    throw ImportError(path, std::string("could not be read to its end: ") + std::strerror(errno) + ".");
                if (got == 0)
                    throw ImportError(path, "shrank while it was sent.");
                done += static_cast<std::uint64_t>(got);
            }
            writeToStdout(std::string_view(frame.data(), kSendFrameHeader + static_cast<std::size_t>(run.length)));
        }
    } catch (...) {
        ::close(file);
        throw;
    }
    ::close(file);
    return {std::string()};
}

} // namespace

Command addSendCommand(CLI::App &app)
{
    auto *command = app.add_subcommand(
        "send", "Write a trace file to stdout for PeakLens on another machine, which opens it as ssh://HOST/FILE");
    auto path = std::make_shared<std::string>();
    auto listing = std::make_shared<bool>(false);
    command->add_option("FILE", *path, "The trace file, of any format PeakLens reads")->required();
    command->add_flag("--list", *listing, "Say whether FILE is a folder and list the traces in it, a line each");
    return {command, [path, listing] { return *listing ? list(*path) : send(*path); }};
}

} // namespace peaklens::cli
