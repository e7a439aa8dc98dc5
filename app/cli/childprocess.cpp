// SPDX-License-Identifier: Apache-2.0
#include "childprocess.h"

#include "core/error.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace peaklens::cli {

namespace {

pid_t g_child = 0;

void forwardSignal(int signal)
{
    if (g_child > 0)
        ::kill(g_child, signal);
}

// In the child: points `target` at `path`, created or truncated; exits 127 if it cannot.
void redirect(int target, const std::string &path)
{
    const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (file < 0 || ::dup2(file, target) < 0) {
        std::fprintf(stderr, "peaklens-cli: cannot write %s.\n", path.c_str());
        ::_exit(127);
    }
}

} // namespace

std::filesystem::path ownDirectory()
{
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::current_path() : self.parent_path();
}

int runChild(const ChildProcess &child)
{
    return *childEnded(startChild(child), true);
}

pid_t startChild(const ChildProcess &child)
{
    // Before the fork, so no signal is missed; exec gives the child the defaults back.
    struct sigaction forward = {};
    forward.sa_handler = forwardSignal;
    forward.sa_flags = SA_RESTART; // what this process was doing goes on: reading, writing frames
    ::sigaction(SIGTERM, &forward, nullptr);
    ::sigaction(SIGINT, &forward, nullptr);
    std::fflush(nullptr);
    const pid_t pid = g_child = ::fork();
    if (pid < 0)
        throw Error("cannot start " + child.arguments.front() + ": fork failed.");
    if (pid == 0) {
        for (const auto &[name, value] : child.environment)
            ::setenv(name.c_str(), value.c_str(), 1);
        if (!child.workingDirectory.empty() && ::chdir(child.workingDirectory.c_str()) != 0) {
            std::fprintf(stderr, "peaklens-cli: cannot enter %s.\n", child.workingDirectory.c_str());
            ::_exit(127);
        }
        if (child.outputFd >= 0) {
            const int nothing = ::open("/dev/null", O_RDONLY);
            if (nothing < 0 || ::dup2(nothing, STDIN_FILENO) < 0 || ::dup2(child.outputFd, STDOUT_FILENO) < 0
                || ::dup2(child.outputFd, STDERR_FILENO) < 0)
                ::_exit(127);
        }
        if (!child.stdoutFile.empty())
            redirect(STDOUT_FILENO, child.stdoutFile);
        else if (child.stdoutToStderr)
            ::dup2(STDERR_FILENO, STDOUT_FILENO);
        if (!child.stderrFile.empty())
            redirect(STDERR_FILENO, child.stderrFile);
        std::vector<char *> argv;
        for (const std::string &argument : child.arguments)
            argv.push_back(const_cast<char *>(argument.c_str()));
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "peaklens-cli: cannot run %s.\n", argv[0]);
        ::_exit(127);
    }
    return pid;
}

std::optional<int> childEnded(pid_t pid, bool wait)
{
    int status = 0;
    pid_t ended = 0;
    while ((ended = ::waitpid(pid, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) { }
    if (ended == 0)
        return std::nullopt;
    if (g_child == pid)
        g_child = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace peaklens::cli
