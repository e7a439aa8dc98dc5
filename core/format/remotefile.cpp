// SPDX-License-Identifier: Apache-2.0
#include "remotefile.h"

#include "core/error.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char **environ; // NOLINT(readability-redundant-declaration): posix_spawnp's environment

namespace peaklens {

namespace {

std::vector<std::string> words(const char *variable, const char *fallback)
{
    const char *value = std::getenv(variable);
    std::istringstream text(value && *value ? value : fallback);
    std::vector<std::string> out;
    for (std::string word; text >> word;)
        out.push_back(word);
    return out;
}

// One word for the remote shell: single-quoted, a quote in it closed and escaped.
std::string shellQuoted(std::string_view word)
{
    std::string quoted = "'";
    for (const char c : word)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
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

std::vector<std::string> RemoteSend::commandLine(const RemotePath &remote)
{
    std::vector<std::string> line = words("PEAKLENS_SSH", "ssh");
    // No prompt PeakLens could not answer: a key that is refused fails at once.
    for (const char *option : {"-T", "-o", "BatchMode=yes"})
        line.emplace_back(option);
    line.push_back(remote.host);
    line.emplace_back("--");
    std::string command;
    for (const std::string &word : words("PEAKLENS_REMOTE_CLI", "peaklens-cli"))
        command += shellQuoted(word) + " ";
    line.push_back(command + "send " + shellQuoted(remote.path));
    return line;
}

RemoteSend::RemoteSend(const std::string &name, const RemotePath &remote)
    : m_host(remote.host)
{
    int out[2] = {-1, -1};
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw ImportError(name, std::string("cannot be read: no pipe for ssh (") + std::strerror(errno) + ").");
    char errName[] = "/tmp/peaklens-ssh-XXXXXX";
    m_stderr = ::mkostemp(errName, O_CLOEXEC);
    if (m_stderr >= 0)
        ::unlink(errName);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    if (m_stderr >= 0)
        posix_spawn_file_actions_adddup2(&actions, m_stderr, STDERR_FILENO);
    const std::vector<std::string> line = commandLine(remote);
    std::vector<char *> argv;
    argv.reserve(line.size() + 1);
    for (const std::string &word : line)
        argv.push_back(const_cast<char *>(word.c_str()));
    argv.push_back(nullptr);
    const int spawned = ::posix_spawnp(&m_pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        m_pid = -1;
        throw ImportError(name, "cannot be read: " + line.front() + " could not be started (" + std::strerror(spawned)
                                    + "); PeakLens reads remote files through the OpenSSH client.");
    }
    m_stdout = out[0];
    ::fcntl(m_stdout, F_SETFL, ::fcntl(m_stdout, F_GETFL) | O_NONBLOCK);
}

RemoteSend::~RemoteSend()
{
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

std::optional<std::string> RemoteSend::finish(std::size_t received)
{
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
    const std::string quoted = said.empty() ? std::string() : " (\"" + said + "\")";
    if (code == 255 && received > 0)
        return "the connection to " + m_host + " broke after " + std::to_string(received) + " bytes" + quoted
               + "; nothing of it was kept.";
    if (code == 255 && mentions(complaints, {"Permission denied", "publickey", "Too many authentication failures"}))
        return m_host + " refused the key" + quoted + ": PeakLens logs in as `ssh " + m_host
               + "` does, with your keys and agent and no password prompt; check that `ssh -o BatchMode=yes " + m_host
               + " true` works.";
    if (code == 255 && mentions(complaints, {"Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED"}))
        return m_host + " is not a known host, or its key changed" + quoted + ": connect once with `ssh " + m_host
               + "` to check and accept its key.";
    if (code == 255)
        return m_host + " cannot be reached" + quoted + ".";
    if (code == 127) // the remote shell found no such command
        return m_host + " has no peaklens-cli on its PATH" + quoted
               + ": install PeakLens there (docs/recording.md, \"On a GPU server\"), or set PEAKLENS_REMOTE_CLI to its path.";
    // A peaklens-cli from before `send` takes it for no subcommand at all.
    if (code == 2 && received == 0 && mentions(said, {"A subcommand is required", "not expected"}))
        return "the peaklens-cli on " + m_host
               + " is older than this PeakLens (" PEAKLENS_VERSION "): it cannot send files; install PeakLens " PEAKLENS_VERSION
                 " there.";
    if (said.starts_with("peaklens-cli: "))
        return "on " + m_host + ", " + said.substr(std::string_view("peaklens-cli: ").size());
    return "on " + m_host + ", peaklens-cli send ended with exit code " + std::to_string(code) + quoted + ".";
}

void RemoteSend::takeHeader(const std::string &name, const std::string &host, std::vector<char> &bytes)
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
