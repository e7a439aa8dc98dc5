// SPDX-License-Identifier: Apache-2.0
#include "remotefile.h"

#include "arrivingfile.h"
#include "byteorder.h"
#include "core/error.h"
#include "outputfile.h"
#include "pageorder.h"
#include "tracereader.h"
#include "usercache.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <span>
#include <sstream>

extern char **environ; // NOLINT(readability-redundant-declaration): posix_spawnp's environment

namespace peaklens {

namespace {

// How long a host may take to list a folder, or to start sending a file: a connection, a
// jump host, a login.
constexpr int kRemoteListSeconds = 60;
constexpr int kRemoteWaitSeconds = 60;

std::vector<std::string> words(const char *variable, const char *fallback)
{
    const char *value = std::getenv(variable);
    std::istringstream text(value && *value ? value : fallback);
    std::vector<std::string> out;
    for (std::string word; text >> word;)
        out.push_back(word);
    return out;
}

// How long a connection PeakLens keeps to a host stays open once nothing uses it, and how
// often a kept connection asks whether the host still answers.
constexpr int kKeepSeconds = 300;
constexpr int kAliveSeconds = 30;

int keepSeconds()
{
    const char *value = std::getenv("PEAKLENS_SSH_KEEP");
    int seconds = kKeepSeconds;
    if (value && *value) {
        const std::string_view text(value);
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
        if (error != std::errc() || end != text.data() + text.size() || seconds < 0)
            seconds = kKeepSeconds;
    }
    return seconds;
}

// Starts `line` (its first word looked up on PATH) with its stdin, stdout and stderr on
// the descriptors given, /dev/null for -1; its pid, or -1 with `error` set.
pid_t spawn(const std::vector<std::string> &line, int in, int out, int err, int &error)
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::pair<int, int> streams[] = {{in, STDIN_FILENO}, {out, STDOUT_FILENO}, {err, STDERR_FILENO}};
    for (const auto &[from, to] : streams) {
        if (from >= 0)
            posix_spawn_file_actions_adddup2(&actions, from, to);
        else
            posix_spawn_file_actions_addopen(&actions, to, "/dev/null", to == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
    }
    std::vector<char *> argv;
    argv.reserve(line.size() + 1);
    for (const std::string &word : line)
        argv.push_back(const_cast<char *>(word.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    error = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return error == 0 ? pid : -1;
}

// What `SSH -G HOST` prints: the options the user's configuration gives that host, one
// "name value" per line, names in lower case, those with no value left out. Empty when it
// fails (a client that has no -G, a configuration it rejects: the real command says why).
std::map<std::string, std::string> configuredOptions(std::vector<std::string> line, const std::string &host)
{
    line.emplace_back("-G");
    line.push_back(host);
    int out[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0)
        return {};
    int spawned = 0;
    const pid_t pid = spawn(line, -1, out[1], -1, spawned);
    ::close(out[1]);
    std::string text;
    char buffer[4096];
    while (spawned == 0) {
        const ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(out[0]);
    int status = 0;
    while (spawned == 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return {};
    std::map<std::string, std::string> options;
    std::istringstream lines(text);
    for (std::string name, value; lines >> name && std::getline(lines >> std::ws, value);)
        options.emplace(name, value);
    return options;
}

// The options that make `ssh` keep one connection to `host` for PeakLens's commands (a
// master, ControlMaster, left open kKeepSeconds after its last use): every command after
// the first skips the handshake and the login. None where the user's configuration
// shares connections itself, or keeps none (PEAKLENS_SSH_KEEP=0), or where no private
// folder for the socket can be made.
std::vector<std::string> keptConnectionOptions(const std::vector<std::string> &ssh, const std::string &host)
{
    const int seconds = keepSeconds();
    if (seconds == 0)
        return {};
    const std::string folder = sshControlFolder();
    if (folder.empty())
        return {};
    static std::mutex mutex;
    static std::map<std::vector<std::string>, std::vector<std::string>> known;
    std::vector<std::string> key = ssh;
    key.insert(key.end(), {host, std::to_string(seconds), folder});
    const std::lock_guard lock(mutex);
    if (const auto found = known.find(key); found != known.end())
        return found->second;
    std::vector<std::string> options;
    const auto configured = configuredOptions(ssh, host);
    const auto said = [&](const char *name) {
        const auto found = configured.find(name);
        return found == configured.end() ? std::string() : found->second;
    };
    if (said("controlmaster") == "false" && (said("controlpath").empty() || said("controlpath") == "none")) {
        options = {
            "-o", "ControlMaster=auto", "-o", "ControlPath=" + folder + "/%C", "-o", "ControlPersist=" + std::to_string(seconds)};
        // A master whose host went away (a laptop that slept) ends on its own.
        if (said("serveraliveinterval") == "0")
            options.insert(options.end(), {"-o", "ServerAliveInterval=" + std::to_string(kAliveSeconds)});
    }
    known.emplace(std::move(key), options);
    return options;
}

// The last line ssh or the remote command wrote on stderr, without its newline.
std::string lastLine(const std::string &text)
{
    std::string trimmed = text;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r'))
        trimmed.pop_back();
    const auto newline = trimmed.rfind('\n');
    return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

bool mentions(const std::string &text, std::initializer_list<const char *> phrases)
{
    return std::any_of(phrases.begin(), phrases.end(),
                       [&](const char *phrase) { return text.find(phrase) != std::string::npos; });
}

} // namespace

std::optional<RemotePath> parseRemotePath(const std::string &text)
{
    if (!text.starts_with(kRemoteScheme))
        return std::nullopt;
    const std::string rest = text.substr(kRemoteScheme.size());
    const auto slash = rest.find('/');
    if (slash == 0 || slash == std::string::npos || slash + 1 == rest.size())
        throw ImportError(text, "names no host and path: write ssh://HOST/PATH, such as ssh://gpu1/home/me/run.peaklens.");
    RemotePath remote{rest.substr(0, slash), rest.substr(slash)};
    // "ssh://host/~/x" is relative to the remote home folder, as scp writes it.
    if (remote.path.starts_with("/~/"))
        remote.path = remote.path.substr(3);
    if (remote.host.starts_with('-'))
        throw ImportError(text, "names the host \"" + remote.host + "\", which ssh would take for an option.");
    return remote;
}

std::string sshControlFolder()
{
    // The socket's path must fit a socket address (108 bytes), with the 40 characters of
    // %C and the 17 ssh adds while it makes the socket.
    constexpr std::size_t kLongest = 48;
    const char *runtime = std::getenv("XDG_RUNTIME_DIR");
    std::string folder = runtime && *runtime && std::strlen(runtime) + 13 <= kLongest
                             ? std::string(runtime) + "/peaklens-ssh"
                             : "/tmp/peaklens-ssh-" + std::to_string(::geteuid());
    ::mkdir(folder.c_str(), 0700);
    struct stat info = {};
    // The user's own, and no one else's to enter: the socket logs in as the user.
    if (::lstat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() || (info.st_mode & 077) != 0)
        return {};
    return folder;
}

// Single-quoted, a quote in it closed and escaped.
std::string RemoteCommand::quoted(std::string_view word)
{
    std::string out = "'";
    for (const char c : word)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::vector<std::string> RemoteCommand::commandLine(const std::string &host, const std::vector<std::string> &arguments)
{
    std::vector<std::string> line = words("PEAKLENS_SSH", "ssh");
    const std::vector<std::string> kept = keptConnectionOptions(line, host);
    // No prompt PeakLens could not answer: a key that is refused fails at once.
    for (const char *option : {"-T", "-o", "BatchMode=yes"})
        line.emplace_back(option);
    line.insert(line.end(), kept.begin(), kept.end());
    line.push_back(host);
    line.emplace_back("--");
    std::string command;
    for (const std::string &word : words("PEAKLENS_REMOTE_CLI", "peaklens-cli"))
        command += quoted(word) + " ";
    for (const std::string &argument : arguments)
        command += argument + " ";
    command.pop_back();
    line.push_back(command);
    return line;
}

RemoteCommand::RemoteCommand(const std::string &name, const RemotePath &remote)
    : RemoteCommand(name, remote.host, {"send", quoted(remote.path)})
{
}

RemoteCommand::RemoteCommand(const std::string &name, std::string host, const std::vector<std::string> &arguments, Input input)
    : m_host(std::move(host))
    , m_command(arguments.empty() ? std::string() : arguments.front())
{
    int out[2] = {-1, -1};
    int in[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0 || (input == Input::Pipe && ::pipe2(in, O_CLOEXEC) != 0)) {
        for (const int fd : {out[0], out[1]})
            if (fd >= 0)
                ::close(fd);
        throw ImportError(name, std::string("cannot be read: no pipe for ssh (") + std::strerror(errno) + ").");
    }
    char errName[] = "/tmp/peaklens-ssh-XXXXXX";
    m_stderr = ::mkostemp(errName, O_CLOEXEC);
    if (m_stderr >= 0)
        ::unlink(errName);
    const std::vector<std::string> line = commandLine(m_host, arguments);
    int spawned = 0;
    m_pid = spawn(line, in[0], out[1], m_stderr, spawned);
    ::close(out[1]);
    if (in[0] >= 0)
        ::close(in[0]);
    m_stdin = in[1];
    if (spawned != 0) {
        ::close(out[0]);
        throw ImportError(name, "cannot be read: " + line.front() + " could not be started (" + std::strerror(spawned)
                                    + "); PeakLens reads remote files through the OpenSSH client.");
    }
    m_stdout = out[0];
    ::fcntl(m_stdout, F_SETPIPE_SZ, 1 << 20);
    ::fcntl(m_stdout, F_SETFL, ::fcntl(m_stdout, F_GETFL) | O_NONBLOCK);
}

RemoteCommand::~RemoteCommand()
{
    closeInput();
    if (m_stdout >= 0)
        ::close(m_stdout);
    if (m_pid > 0) {
        ::kill(m_pid, SIGTERM);
        int status = 0;
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) { }
    }
    if (m_stderr >= 0)
        ::close(m_stderr);
}

void RemoteCommand::closeInput()
{
    if (m_stdin >= 0)
        ::close(m_stdin);
    m_stdin = -1;
}

void RemoteCommand::kill()
{
    if (m_pid > 0)
        ::kill(m_pid, SIGTERM);
}

std::optional<std::string> RemoteCommand::finish(std::size_t received)
{
    closeInput();
    if (m_stdout >= 0) {
        ::close(m_stdout);
        m_stdout = -1;
    }
    int status = 0;
    while (m_pid > 0 && ::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) { }
    m_pid = -1;
    std::string complaints;
    if (m_stderr >= 0) {
        char buffer[4096];
        ::lseek(m_stderr, 0, SEEK_SET);
        for (ssize_t got; (got = ::read(m_stderr, buffer, sizeof buffer)) > 0;)
            complaints.append(buffer, static_cast<std::size_t>(got));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return std::nullopt;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const std::string said = lastLine(complaints);
    const std::string what = said.empty() ? std::string() : " (\"" + said + "\")";
    if (WIFSIGNALED(status))
        return "the connection to " + m_host + " was cut after " + std::to_string(received) + " bytes: ssh ended by signal "
               + std::to_string(WTERMSIG(status));
    if (code == 255 && received > 0)
        return "the connection to " + m_host + " broke after " + std::to_string(received) + " bytes" + what;
    if (code == 255 && mentions(complaints, {"Permission denied", "publickey", "Too many authentication failures"}))
        return m_host + " refused the key" + what + ": PeakLens logs in as `ssh " + m_host
               + "` does, with your keys and agent and no password prompt; check that `ssh -o BatchMode=yes " + m_host
               + " true` works.";
    if (code == 255 && mentions(complaints, {"Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED"}))
        return m_host + " is not a known host, or its key changed" + what + ": connect once with `ssh " + m_host
               + "` to check and accept its key.";
    if (code == 255)
        return m_host + " cannot be reached" + what + ".";
    if (code == 127) // the remote shell found no such command
        return m_host + " has no peaklens-cli on its PATH" + what
               + ": install PeakLens there (docs/recording.md, \"On a GPU server\"), or set PEAKLENS_REMOTE_CLI to its path.";
    // A peaklens-cli from before `send` takes it for no subcommand at all.
    if (code == 2 && received == 0
        && mentions(said, {"A subcommand is required", "not expected", "--send: Not an option", "option --send"}))
        return "the peaklens-cli on " + m_host + " is older than this PeakLens (" PEAKLENS_VERSION "): it cannot "
               + (m_command == "send" ? std::string("send files") : m_command + " for another machine")
               + "; install PeakLens " PEAKLENS_VERSION " there.";
    if (said.starts_with("peaklens-cli: "))
        return "on " + m_host + ", " + said.substr(std::string_view("peaklens-cli: ").size());
    return "on " + m_host + ", peaklens-cli " + m_command + " ended with exit code " + std::to_string(code) + what + ".";
}

void RemoteCommand::takeHeader(const std::string &name, const std::string &host, std::vector<char> &bytes)
{
    const auto newline = std::find(bytes.begin(), bytes.end(), '\n');
    const std::string line(bytes.begin(), newline);
    if (newline == bytes.end() || !line.starts_with(kSendHeader))
        throw ImportError(name, "cannot be read: what " + host + " sent is not a file from peaklens-cli send.");
    const std::string version = line.substr(kSendHeader.size());
    if (version != PEAKLENS_VERSION)
        throw ImportError(name, "cannot be read: " + host + " has PeakLens " + version
                                    + ", this is " PEAKLENS_VERSION
                                      "; install the same version on both (docs/recording.md, \"On a GPU server\").");
    bytes.erase(bytes.begin(), newline + 1);
}

} // namespace peaklens

namespace peaklens {

namespace {

// The copies this process made, by remote path.
std::mutex g_copiesMutex;
std::map<std::string, std::string> g_copies;

} // namespace

std::optional<std::string> RemoteFetch::madeBefore(const std::string &text)
{
    const std::lock_guard lock(g_copiesMutex);
    std::error_code ec;
    if (const auto made = g_copies.find(text); made != g_copies.end() && std::filesystem::is_regular_file(made->second, ec)) {
        markCacheUsed(made->second);
        return made->second;
    }
    return std::nullopt;
}

RemoteFetch::RemoteFetch(const std::string &text, const RemotePath &remote, const Progress &progress)
    : m_text(text)
    , m_remote(remote)
    , m_progress(progress)
{
    const std::string folder = userCacheFolder();
    if (folder.empty())
        throw ImportError(text, "cannot be read: no cache folder to copy it into (set HOME or PEAKLENS_CACHE_DIR).");
    const auto slash = remote.path.find_last_of('/');
    char hash[20];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(text));
    const std::filesystem::path copy =
        std::filesystem::path(folder) / "remote"
        / (std::string(hash) + "-" + remote.path.substr(slash == std::string::npos ? 0 : slash + 1));
    std::error_code ec;
    std::filesystem::create_directories(copy.parent_path(), ec);
    m_output = std::make_unique<OutputFile>(copy.string(), OutputFile::Existing::Replace);
    m_file = ::open(m_output->temporary().c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (m_file < 0)
        throw ImportError(text, "cannot be read: its copy " + m_output->temporary() + " cannot be written.");
    try {
        m_command = std::make_unique<RemoteCommand>(text, remote);
        receive(true);
    } catch (...) {
        ::close(m_file);
        throw;
    }
    if (m_ended) {
        m_done = true;
        return;
    }
    // A PeakLens trace is read as its pages arrive; anything else once it is whole.
    std::array<char, 100> header{};
    m_early = ::pread(m_file, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size())
              && TraceReader::recognizes(std::as_bytes(std::span(header)));
    m_rest = std::thread([this] {
        try {
            receive(false);
        } catch (...) {
            m_failure = std::current_exception();
        }
        m_done = true;
        m_arrival->end();
    });
}

RemoteFetch::~RemoteFetch()
{
    if (m_rest.joinable()) {
        m_stop = true;
        m_command->kill();
        m_rest.join();
    }
    if (m_arrival)
        m_arrival->end();
    if (m_file >= 0)
        ::close(m_file);
}

const std::string &RemoteFetch::arriving() const
{
    return m_output->temporary();
}

bool RemoteFetch::headIsHere() const
{
    return m_size && m_arrival && m_arrival->holds(0, PageOrder::kHeadBytes);
}

// Reads what the host sends until it ends, or until the file's head is here (`untilHead`).
void RemoteFetch::receive(bool untilHead)
{
    const auto began = std::chrono::steady_clock::now();
    std::vector<char> buffer(std::size_t(1) << 20);
    while (!m_ended && !(untilHead && headIsHere())) {
        pollfd ready{m_command->stdoutFd(), POLLIN, 0};
        const int polled = ::poll(&ready, 1, 250);
        m_progress.throwIfCancelled();
        if (m_stop)
            throw Cancelled("It was stopped.");
        if (polled < 0 && errno == EINTR)
            continue;
        if (polled == 0) {
            // Nothing yet: a login, a jump host; kRemoteWaitSeconds at most.
            if (m_received == 0 && std::chrono::steady_clock::now() - began > std::chrono::seconds(kRemoteWaitSeconds))
                throw ImportError(m_text, "cannot be read: " + m_remote.host + " sent nothing within "
                                              + std::to_string(kRemoteWaitSeconds) + " seconds.");
            continue;
        }
        const ssize_t got = ::read(m_command->stdoutFd(), buffer.data(), buffer.size());
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            m_ended = true;
            break;
        }
        m_received += static_cast<std::uint64_t>(got);
        take(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
}

// The header lines, then frames: each part of the file written where it belongs.
void RemoteFetch::take(std::string_view bytes)
{
    const auto notSent = [&] {
        return ImportError(m_text, "cannot be read: what " + m_remote.host + " sent is not a file from peaklens-cli send.");
    };
    if (!m_size) {
        m_start.insert(m_start.end(), bytes.begin(), bytes.end());
        const auto first = std::find(m_start.begin(), m_start.end(), '\n');
        const auto second = first == m_start.end() ? m_start.end() : std::find(first + 1, m_start.end(), '\n');
        if (second == m_start.end()) {
            if (m_start.size() > 4096)
                RemoteCommand::takeHeader(m_text, m_remote.host, m_start); // says what answered instead
            return;
        }
        RemoteCommand::takeHeader(m_text, m_remote.host, m_start);
        const auto newline = std::find(m_start.begin(), m_start.end(), '\n');
        std::uint64_t announced = 0;
        const char *end = m_start.data() + (newline - m_start.begin());
        if (const auto [at, error] = std::from_chars(m_start.data(), end, announced); error != std::errc() || at != end)
            throw notSent();
        m_size = announced;
        if (::ftruncate(m_file, static_cast<off_t>(announced)) != 0)
            throw ImportError(m_text, "cannot be read: its copy " + m_output->temporary() + " cannot be written ("
                                          + writeProblemText(errno) + ").");
        m_arrival = ArrivingFile::begin(m_output->temporary(), announced);
        const std::string rest(newline + 1, m_start.end());
        m_start.clear();
        take(rest);
        return;
    }
    while (!bytes.empty()) {
        if (m_left == 0) {
            const std::size_t wanted = std::min(bytes.size(), kSendFrameHeader - m_frame.size());
            m_frame.insert(m_frame.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(wanted));
            bytes.remove_prefix(wanted);
            if (m_frame.size() < kSendFrameHeader)
                return;
            m_at = littleEndian(m_frame.data(), 8);
            m_left = littleEndian(m_frame.data() + 8, 4);
            m_frame.clear();
            if (m_left == 0 || m_left > PageOrder::kMaxRunBytes)
                throw notSent();
            if (m_at > *m_size || m_left > *m_size - m_at || m_written + m_left > *m_size)
                throw ImportError(m_text, "cannot be read: " + m_remote.host + " sent more than the " + std::to_string(*m_size)
                                              + " bytes it announced.");
        }
        const std::size_t part = static_cast<std::size_t>(std::min<std::uint64_t>(m_left, bytes.size()));
        for (std::size_t done = 0; done < part;) {
            const ssize_t wrote = ::pwrite(m_file, bytes.data() + done, part - done, static_cast<off_t>(m_at + done));
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote <= 0)
                throw ImportError(m_text, "cannot be read: its copy " + m_output->temporary() + " cannot be written ("
                                              + writeProblemText(errno) + ").");
            done += static_cast<std::size_t>(wrote);
        }
        m_arrival->arrived(m_at, part);
        m_at += part;
        m_left -= part;
        m_written += part;
        bytes.remove_prefix(part);
    }
    if (*m_size > 0)
        m_progress.tick(static_cast<double>(m_written) / static_cast<double>(*m_size));
}

bool RemoteFetch::stoppedShort() const
{
    return m_done && (!m_arrival || !m_arrival->whole());
}

std::string RemoteFetch::finish()
{
    if (m_rest.joinable())
        m_rest.join();
    if (m_kept)
        return *m_kept;
    if (!m_failure) {
        try {
            m_kept = keep();
            return *m_kept;
        } catch (...) {
            m_failure = std::current_exception();
        }
    }
    std::rethrow_exception(m_failure);
}

// The copy, whole, moved into place.
std::string RemoteFetch::keep()
{
    if (const auto failure = m_command->finish(m_received)) {
        throw ImportError(m_text, "cannot be read: " + *failure
                                      + (failure->starts_with("the connection") ? "; nothing of it was kept." : ""));
    }
    if (!m_size || !m_arrival->whole())
        throw ImportError(m_text, "cannot be read: " + m_remote.host + " sent " + std::to_string(m_written) + " of its "
                                      + (m_size ? std::to_string(*m_size) : std::string("unknown number of"))
                                      + " bytes; nothing of it was kept.");
    if (::close(std::exchange(m_file, -1)) != 0)
        throw ImportError(m_text, "cannot be read: its copy " + m_output->temporary() + " could not be written.");
    // Read only by this process, and fetched again by the next: a crash loses nothing.
    m_output->commit(OutputFile::Durability::Cached);
    keepCacheWithinLimit(m_output->path());
    const std::lock_guard lock(g_copiesMutex);
    g_copies[m_text] = m_output->path();
    return m_output->path();
}

void writeOrigin(const std::string &trace, const std::string &remote)
{
    OutputFile(trace + std::string(kOriginSuffix), OutputFile::Existing::Replace).write(remote + "\n");
}

std::optional<std::string> originOf(const std::string &trace)
{
    std::ifstream file(trace + std::string(kOriginSuffix));
    std::string line;
    if (!file || !std::getline(file, line))
        return std::nullopt;
    try {
        if (parseRemotePath(line))
            return line;
    } catch (const Error &) {
    }
    return std::nullopt;
}

std::optional<std::vector<std::string>> listRemoteFolder(const std::string &text, const RemotePath &remote)
{
    const auto slash = remote.path.find_last_of('/');
    const std::string last = slash == std::string::npos ? remote.path : remote.path.substr(slash + 1);
    if (!remote.path.ends_with('/') && last.find('.') != std::string::npos)
        return std::nullopt;
    RemoteCommand command(text, remote.host, {"send", "--list", RemoteCommand::quoted(remote.path)});
    std::vector<char> said;
    char buffer[4096];
    for (;;) {
        pollfd ready{command.stdoutFd(), POLLIN, 0};
        if (::poll(&ready, 1, kRemoteListSeconds * 1000) <= 0)
            throw ImportError(text, "cannot be listed: " + remote.host + " said nothing within "
                                        + std::to_string(kRemoteListSeconds) + " seconds.");
        const ssize_t got = ::read(command.stdoutFd(), buffer, sizeof buffer);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            break;
        said.insert(said.end(), buffer, buffer + got);
        if (said.size() > (std::size_t(16) << 20))
            throw ImportError(text, "cannot be listed: " + remote.host + " sent more than a listing.");
    }
    if (const auto failure = command.finish(said.size()))
        throw ImportError(text, "cannot be read: " + *failure);
    RemoteCommand::takeHeader(text, remote.host, said);
    std::istringstream lines(std::string(said.begin(), said.end()));
    std::string kind;
    std::getline(lines, kind);
    if (kind == kListFile)
        return std::nullopt;
    if (kind != kListFolder)
        throw ImportError(text, "cannot be listed: what " + remote.host + " sent is not a listing.");
    std::string base = text;
    while (base.ends_with('/'))
        base.pop_back();
    base += '/';
    std::vector<std::string> traces;
    for (std::string name; std::getline(lines, name);) {
        if (!name.empty() && name.find('/') == std::string::npos)
            traces.push_back(base + name);
    }
    return traces;
}

} // namespace peaklens
