// SPDX-License-Identifier: Apache-2.0
#include "tracestream.h"

#include "childprocess.h"

#include "core/error.h"
#include "core/format/byteorder.h"
#include "core/format/outputfile.h"
#include "core/format/privatecopy.h"
#include "core/format/sqlitedatabase.h"
#include "core/format/tracemirror.h"
#include "core/trace/units.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace peaklens::cli {

namespace {

constexpr char kNewTrace = 'N';
constexpr char kDelta = 'D';
constexpr char kWhole = 'W';
constexpr char kOutput = 'O';
constexpr char kEnd = 'E';
constexpr char kFile = 'F';
constexpr std::array kTags{kNewTrace, kDelta, kWhole, kOutput, kEnd, kFile};
// Other files of the run (a replay's result, a manifest) are sent whole at the end, up to this size.
constexpr std::uintmax_t kLargestOtherFile = std::uintmax_t(16) << 20;
constexpr std::size_t kFrameHead = 1 + 4 + 8;

// Frames on stdout; every failure to write means the receiving end is gone.
class FrameWriter
{
public:
    FrameWriter()
    {
        const std::string header = std::string(kSendHeader) + PEAKLENS_VERSION + "\n";
        write(header.data(), header.size());
    }

    void frame(char tag, std::uint32_t file, std::string_view payload)
    {
        head(tag, file, payload.size());
        write(payload.data(), payload.size());
    }

    // The file as it is now, whole; its size is said first, so it is read to exactly that.
    void wholeFile(std::uint32_t file, std::filesystem::path path)
    {
        // A writer stopped mid-file left its last commits in a log beside it: they are
        // folded into a private copy, and that is sent.
        std::unique_ptr<PrivateCopy> settled;
        if (PrivateCopy::isNeededFor(path.string())) {
            settled = std::make_unique<PrivateCopy>(path.string());
            SqliteDatabase db(settled->path(), SQLITE_OPEN_READWRITE);
            db.exec("PRAGMA journal_mode = DELETE");
            db.close();
            path = settled->path();
        }
        std::ifstream in(path, std::ios::binary);
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        if (!in || ec)
            throw FileError(path.string(), "cannot be read to be sent.");
        head(kWhole, file, size);
        std::vector<char> buffer(std::size_t(1) << 20);
        for (std::uint64_t left = size; left > 0;) {
            const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buffer.size()));
            if (!in.read(buffer.data(), want))
                throw FileError(path.string(), "shrank while it was sent.");
            write(buffer.data(), static_cast<std::size_t>(want));
            left -= static_cast<std::uint64_t>(want);
        }
    }

private:
    void head(char tag, std::uint32_t file, std::uint64_t size)
    {
        std::array<char, kFrameHead> bytes{};
        bytes[0] = tag;
        putLittleEndian(&bytes[1], file, 4);
        putLittleEndian(&bytes[5], size, 8);
        write(bytes.data(), bytes.size());
    }

    static void write(const char *data, std::size_t size) { writeToStdout(std::string_view(data, size)); }
};

// Stops `pid` as a user's Ctrl+C would, then for good if it does not end within seconds.
int stopChild(pid_t pid)
{
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
        if (const auto code = childEnded(pid, false))
            return *code;
        ::usleep(100000);
    }
    ::kill(pid, SIGKILL);
    return *childEnded(pid, true);
}

volatile std::sig_atomic_t g_stops = 0;

void countStop(int)
{
    g_stops = g_stops + 1;
}

// A path inside the run's folder, as the host names it: relative, never up, a few levels deep.
bool isInsideName(const std::string &name)
{
    const std::filesystem::path path(name);
    if (name.empty() || name.find('\0') != std::string::npos || path.is_absolute() || name.size() > 1024)
        return false;
    int depth = 0;
    for (const auto &part : path) {
        if (part == "." || part == ".." || part.empty() || ++depth > 4)
            return false;
    }
    return true;
}

// A trace's log, index or journal: part of the trace, which is sent settled; one arriving
// on its own would be applied by SQLite to the copy beside it.
bool isTraceLog(const std::string &name)
{
    return name.ends_with("-wal") || name.ends_with("-shm") || name.ends_with("-journal");
}

bool isTraceName(const std::string &name)
{
    return isInsideName(name) && name.ends_with(".peaklens");
}

// The regular files in `folder` and its subfolders (a relaunch's run/ and baseline/),
// relative to it.
std::vector<std::string> filesIn(const std::filesystem::path &folder)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (auto entry = std::filesystem::recursive_directory_iterator(folder, ec);
         !ec && entry != std::filesystem::recursive_directory_iterator(); entry.increment(ec)) {
        if (entry.depth() < 3 && entry->is_regular_file(ec))
            files.push_back(std::filesystem::relative(entry->path(), folder, ec).string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

int sendWhileRunning(pid_t pid, int output, const std::filesystem::path &folder,
                     const std::function<std::string(int code)> &finish)
{
    std::signal(SIGPIPE, SIG_IGN);
    struct Sent
    {
        std::uint32_t id;
        MirrorSource source;
    };
    std::map<std::string, Sent> traces;
    std::optional<int> code;
    try {
        FrameWriter frames;
        const auto sendDeltas = [&] {
            for (const std::string &name : filesIn(folder)) {
                if (!isTraceName(name) || traces.contains(name))
                    continue;
                const auto id = static_cast<std::uint32_t>(traces.size() + 1);
                traces.emplace(name, Sent{id, MirrorSource((folder / name).string())});
                frames.frame(kNewTrace, id, name);
            }
            for (auto &[name, trace] : traces) {
                try {
                    if (const std::string delta = trace.source.readDelta(); !delta.empty())
                        frames.frame(kDelta, trace.id, delta);
                } catch (const ImportError &) {
                    // Not a trace of this format, or damaged: it is sent whole at the end.
                }
            }
        };
        const auto forward = [&](bool wait) {
            std::array<char, 65536> buffer{};
            for (;;) {
                pollfd ready{output, POLLIN, 0};
                if (output < 0 || ::poll(&ready, 1, wait ? 250 : 0) <= 0)
                    return;
                const ssize_t got = ::read(output, buffer.data(), buffer.size());
                if (got < 0 && errno == EINTR)
                    continue;
                if (got <= 0) {
                    ::close(output);
                    output = -1;
                    return;
                }
                frames.frame(kOutput, 0, std::string_view(buffer.data(), static_cast<std::size_t>(got)));
                wait = false;
            }
        };
        bool stopAsked = false;
        while (!(code = childEnded(pid, false))) {
            if (!stopAsked) {
                pollfd input{STDIN_FILENO, POLLIN, 0};
                char byte = 0;
                if (::poll(&input, 1, 0) > 0 && ::read(STDIN_FILENO, &byte, 1) <= 0) {
                    stopAsked = true; // the other end closed our stdin: it wants the run stopped
                    ::kill(pid, SIGTERM);
                }
            }
            forward(true);
            sendDeltas();
        }
        forward(false);
        const std::string last = finish(*code);
        sendDeltas();
        for (const auto &[name, trace] : traces)
            frames.wholeFile(trace.id, folder / name);
        for (const std::string &name : filesIn(folder)) {
            std::error_code ec;
            if (isTraceName(name) || isTraceLog(name) || !isInsideName(name)
                || std::filesystem::file_size(folder / name, ec) > kLargestOtherFile || ec)
                continue;
            std::ifstream in(folder / name, std::ios::binary);
            std::ostringstream content;
            content << in.rdbuf();
            frames.frame(kFile, 0, name + '\0' + content.str());
        }
        std::error_code ec;
        const std::string absolute = std::filesystem::absolute(folder, ec).lexically_normal().string();
        frames.frame(kEnd, 0, std::to_string(*code) + "\n" + absolute + "\n" + last);
    } catch (const Error &) {
        if (!code)
            stopChild(pid);
        throw;
    }
    if (output >= 0)
        ::close(output);
    return *code;
}

void writeToStdout(std::string_view bytes)
{
    while (!bytes.empty()) {
        const ssize_t wrote = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            throw Error(std::string("cannot write to its output: ") + std::strerror(errno) + ".");
        bytes.remove_prefix(static_cast<std::size_t>(wrote));
    }
}

std::string hostFolderName(const std::string &prefix)
{
    char when[32] = {};
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y%m%d-%H%M%S", std::localtime(&now));
    return prefix + "-" + when + "-" + std::to_string(::getpid());
}

Received receiveTraces(RemoteCommand &remote, const std::filesystem::path &folder, const std::string &remoteFolder,
                       std::FILE *output)
{
    Received result;
    struct sigaction stop = {};
    stop.sa_handler = countStop;
    ::sigaction(SIGTERM, &stop, nullptr);
    ::sigaction(SIGINT, &stop, nullptr);
    g_stops = 0;

    struct Incoming
    {
        std::filesystem::path path;
        std::unique_ptr<MirrorSink> copy;
    };
    std::map<std::uint32_t, Incoming> incoming;
    struct Whole
    {
        Incoming *trace;
        std::uint64_t left;
        std::unique_ptr<OutputFile> output;
        std::ofstream stream;
    };
    std::optional<Whole> whole;
    std::vector<char> buffer;
    std::size_t received = 0;
    bool headerTaken = false;
    bool ended = false;
    int asked = 0;
    const std::string &host = remote.host();
    const auto source = [&](const std::string &name) { return host + ":" + remoteFolder + "/" + name; };

    // Takes every whole frame in the buffer; a finished file goes to its file as it comes.
    const auto takeFrames = [&] {
        std::size_t at = 0;
        for (;;) {
            if (whole) {
                const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(whole->left, buffer.size() - at));
                whole->stream.write(buffer.data() + at, static_cast<std::streamsize>(take));
                at += take;
                whole->left -= take;
                if (whole->left > 0)
                    break;
                whole->stream.close();
                if (!whole->stream)
                    throw FileError(whole->output->path(), "could not be written.");
                whole->trace->copy->close();
                whole->output->commit();
                result.traces.push_back(whole->trace->path);
                whole.reset();
                continue;
            }
            if (buffer.size() - at < kFrameHead)
                break;
            const char tag = buffer[at];
            if (std::find(kTags.begin(), kTags.end(), tag) == kTags.end())
                throw ImportError(host, "sent a frame PeakLens does not know; the stream is damaged.");
            const auto file = static_cast<std::uint32_t>(littleEndian(&buffer[at + 1], 4));
            const std::uint64_t size = littleEndian(&buffer[at + 5], 8);
            const auto trace = incoming.find(file);
            if ((tag == kDelta || tag == kWhole) && trace == incoming.end())
                throw ImportError(host, "sent rows of a trace it never named; the stream is damaged.");
            if (tag == kWhole) {
                at += kFrameHead;
                auto output = std::make_unique<OutputFile>(trace->second.path.string(), OutputFile::Existing::Replace);
                std::ofstream stream(output->temporary(), std::ios::binary);
                if (!stream)
                    throw FileError(output->temporary(), "cannot be written.");
                whole = Whole{&trace->second, size, std::move(output), std::move(stream)};
                continue;
            }
            if (size > (std::uint64_t(1) << 34))
                throw ImportError(host, "sent a frame of " + std::to_string(size) + " bytes; the stream is damaged.");
            if (buffer.size() - at - kFrameHead < size)
                break;
            const std::string_view payload(buffer.data() + at + kFrameHead, static_cast<std::size_t>(size));
            at += kFrameHead + static_cast<std::size_t>(size);
            switch (tag) {
            case kNewTrace: {
                const std::string name(payload);
                if (!isTraceName(name) || incoming.contains(file))
                    throw ImportError(host, "named a trace \"" + name + "\", which is no file name PeakLens writes.");
                const std::filesystem::path path = folder / name;
                std::error_code ec;
                std::filesystem::create_directories(path.parent_path(), ec); // only once there is something to keep
                if (ec)
                    throw FileError(folder.string(), "cannot be created: " + ec.message() + ".");
                incoming[file] = Incoming{path, std::make_unique<MirrorSink>(path.string(), source(name))};
                break;
            }
            case kDelta:
                trace->second.copy->apply(payload);
                break;
            case kOutput:
                std::fwrite(payload.data(), 1, payload.size(), output);
                std::fflush(output);
                break;
            case kFile: {
                const auto end = payload.find('\0');
                const std::string name(payload.substr(0, end));
                if (end == std::string_view::npos || !isInsideName(name) || isTraceLog(name))
                    throw ImportError(host, "sent a file named \"" + name + "\", which is not inside the run's folder.");
                std::error_code ec;
                std::filesystem::create_directories((folder / name).parent_path(), ec);
                OutputFile(((folder / name).string()), OutputFile::Existing::Refuse).write(payload.substr(end + 1));
                break;
            }
            case kEnd: {
                std::istringstream lines{std::string(payload)};
                std::string code;
                std::getline(lines, code);
                std::getline(lines, result.remoteFolder);
                result.code = std::atoi(code.c_str());
                std::getline(lines, result.last, '\0');
                ended = true;
                break;
            }
            default: // kWhole, taken above
                break;
            }
        }
        buffer.erase(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(at));
    };

    std::string problem;
    try {
        std::vector<char> chunk(std::size_t(1) << 20);
        for (;;) {
            if (g_stops >= 1 && asked == 0) {
                std::fprintf(stderr, "Stopping the run on %s; what it wrote is still sent…\n", host.c_str());
                remote.closeInput();
                asked = 1;
            }
            if (g_stops >= 2 && asked == 1) {
                remote.kill();
                asked = 2;
            }
            pollfd ready{remote.stdoutFd(), POLLIN, 0};
            if (::poll(&ready, 1, 200) <= 0)
                continue;
            const ssize_t got = ::read(remote.stdoutFd(), chunk.data(), chunk.size());
            if (got < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (got <= 0)
                break;
            received += static_cast<std::size_t>(got);
            buffer.insert(buffer.end(), chunk.begin(), chunk.begin() + got);
            if (!headerTaken) {
                if (std::find(buffer.begin(), buffer.end(), '\n') == buffer.end() && buffer.size() < 4096)
                    continue;
                RemoteCommand::takeHeader(host, host, buffer);
                headerTaken = true;
            }
            takeFrames();
        }
    } catch (const Error &error) {
        problem = error.what();
        remote.closeInput();
        remote.kill();
    }
    const auto failure = remote.finish(received);
    whole.reset(); // a finished file that did not arrive whole is not put in place
    std::vector<std::string> kept;
    for (auto &[file, trace] : incoming) {
        if (std::find(result.traces.begin(), result.traces.end(), trace.path) != result.traces.end())
            continue;
        trace.copy->close();
        kept.push_back(trace.path.string() + " (" + formatCount(static_cast<std::int64_t>(trace.copy->events()))
                       + " memory events)");
    }
    if (problem.empty() && ended) {
        result.complete = true; // the host said how its run ended; its exit code is the run's
        return result;
    }
    if (problem.empty())
        problem = failure ? *failure : host + " ended the stream before its end";
    std::string keptText = "nothing had arrived";
    if (!kept.empty()) {
        keptText = "what arrived is kept, readable up to its last commit: ";
        for (std::size_t i = 0; i < kept.size(); ++i)
            keptText += (i ? ", " : "") + kept[i];
    }
    if (problem.ends_with('.'))
        problem.pop_back();
    result.last = problem + "; " + keptText + ".";
    result.code = result.code != 0 ? result.code : 1;
    return result;
}

} // namespace peaklens::cli
