// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace on another machine, named ssh://HOST/PATH: HOST is anything the system's OpenSSH
// client takes (user@host, an alias from ~/.ssh/config, a host behind a ProxyJump), PATH
// the file's path there ("ssh://gpu1/~/runs/a.peaklens" is relative to the home folder).
// PeakLens runs `peaklens-cli send PATH` there through `ssh` — the user's keys and agent,
// no daemon and no port of its own — and reads what it sends as a stream. It keeps one
// connection to each host open for a while (ssh's ControlMaster, in sshControlFolder(),
// PEAKLENS_SSH_KEEP seconds after its last use, 300 by default, 0 for none) unless the
// user's ssh configuration shares connections itself.
//
// `send` writes one line first, kSendHeader and its version, then a line with the file's
// size, so a different version there is found before anything is read and a file cut short
// is known as such; then the file's bytes in frames, each an 8-byte offset and a 4-byte
// length (little-endian) and that many bytes, in PageOrder. PEAKLENS_SSH names the client
// and its options (default "ssh"), PEAKLENS_REMOTE_CLI the command on the host (default
// "peaklens-cli"); both are split on spaces.

#include "core/progress.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace peaklens {

class ArrivingFile;
class OutputFile;

inline constexpr std::string_view kRemoteScheme = "ssh://";
inline constexpr std::string_view kSendHeader = "PEAKLENS-SEND 1 ";
// A frame of `send`: an 8-byte offset and a 4-byte length, little-endian, then its bytes.
inline constexpr std::size_t kSendFrameHeader = 12;
// What `send --list` says after its header: the path is a file, or a folder (its traces follow).
inline constexpr std::string_view kListFile = "file";
inline constexpr std::string_view kListFolder = "folder";

struct RemotePath
{
    std::string host;
    std::string path;
};

// Null for anything that does not start with ssh://; throws ImportError naming `text`
// when it does but names no host or no path.
std::optional<RemotePath> parseRemotePath(const std::string &text);

// A trace recorded on a host and copied here (`record --host`) remembers where it lies
// there in a file beside it, TRACE.origin, one line: ssh://HOST/PATH. Rerunning the copy
// reruns it there. writeOrigin throws FileError naming the file it cannot write; origin
// is null for a trace with no such file (or one that names no remote path).
inline constexpr std::string_view kOriginSuffix = ".origin";
void writeOrigin(const std::string &trace, const std::string &remote);
std::optional<std::string> originOf(const std::string &trace);

// The traces in the folder ssh://HOST/PATH names (`text`), as ssh:// paths sorted by name;
// null when it names a file. Asks the host (`send --list`) only where the last part of the
// path has no extension or ends in a slash: a name with one is taken for a file. Throws
// ImportError naming `text` with the one sentence RemoteCommand::finish gives.
std::optional<std::vector<std::string>> listRemoteFolder(const std::string &text, const RemotePath &remote);

// Where PeakLens keeps the sockets of the connections it keeps open to hosts:
// $XDG_RUNTIME_DIR/peaklens-ssh, else /tmp/peaklens-ssh-UID, made private to the user;
// empty when it cannot be made so (then no connection is kept).
std::string sshControlFolder();

// `ssh` running one peaklens-cli command on a host: its stdout to read and, when asked, its
// stdin to write (closing it tells the command to stop: `record --send` stops its run);
// once stdout ends, what its exit says. Killed (and waited for) when dropped before it ended.
class RemoteCommand
{
public:
    enum class Input { None, Pipe };

    // `arguments`: peaklens-cli's, each quoted for the remote shell. Throws ImportError
    // naming `name` when ssh cannot be started.
    RemoteCommand(const std::string &name, std::string host, const std::vector<std::string> &arguments,
                  Input input = Input::None);
    // `peaklens-cli send PATH`, for one remote file.
    RemoteCommand(const std::string &name, const RemotePath &remote);
    ~RemoteCommand();
    RemoteCommand(const RemoteCommand &) = delete;
    RemoteCommand &operator=(const RemoteCommand &) = delete;

    int stdoutFd() const { return m_stdout; }
    const std::string &host() const { return m_host; }
    // Closes the command's stdin: it ends what it runs and sends what it has.
    void closeInput();
    // Ends ssh at once (SIGTERM), for a user who does not want to wait.
    void kill();
    // Waits for ssh to end; null when it ended well, else one sentence saying why not
    // (the host unreachable, the key refused, no peaklens-cli there, the remote error, the
    // connection broken after `received` bytes).
    std::optional<std::string> finish(std::size_t received);
    // Checks and strips the header from the first bytes sent; throws ImportError naming
    // `name` for another version (or no header: something else answered).
    static void takeHeader(const std::string &name, const std::string &host, std::vector<char> &bytes);

    // The command line run, for messages and tests: the ssh client's words, then the host
    // and the remote command.
    static std::vector<std::string> commandLine(const std::string &host, const std::vector<std::string> &arguments);
    // One word for the remote shell.
    static std::string quoted(std::string_view word);

private:
    std::string m_host;
    std::string m_command; // the subcommand, for messages
    pid_t m_pid = -1;
    int m_stdout = -1;
    int m_stdin = -1;
    int m_stderr = -1; // an unlinked temporary file: ssh's complaints, read once it ends
};

// A copy of the file ssh://HOST/PATH names (`text`), arriving in the user's cache (remote/,
// named after the file and a hash of `text`) to replace the last copy of it. The host
// sends it in PageOrder, so a PeakLens trace is read while the rest arrives
// (readableEarly()): SqliteDatabase::openImmutable waits for each page. Errors are
// ImportError naming `text` with the one sentence RemoteCommand::finish gives, and
// Cancelled; nothing is left of a copy that did not arrive whole.
class RemoteFetch
{
public:
    // Returns once the host has said how big the file is and its first
    // PageOrder::kHeadBytes are here; the rest arrives on another thread, reported to
    // `progress` from there.
    RemoteFetch(const std::string &text, const RemotePath &remote, const Progress &progress);
    // Stops what is still arriving; the copy goes unless finish() returned it.
    ~RemoteFetch();
    RemoteFetch(const RemoteFetch &) = delete;
    RemoteFetch &operator=(const RemoteFetch &) = delete;

    // Where the copy arrives: readable as it does when readableEarly() (a PeakLens trace).
    const std::string &arriving() const;
    bool readableEarly() const { return m_early; }
    // Waits for the rest and returns where the whole copy lies now (again when called again).
    std::string finish();
    // What arrives stopped before the copy was whole (then finish() says why).
    bool stoppedShort() const;

    // The copy this process made of `text` before, while it is still there: another window
    // of the same document reads the very file its first one did.
    static std::optional<std::string> madeBefore(const std::string &text);

private:
    void receive(bool untilHead);
    std::string keep();
    void take(std::string_view bytes);
    bool headIsHere() const;

    std::string m_text;
    RemotePath m_remote;
    Progress m_progress;
    std::unique_ptr<OutputFile> m_output;
    int m_file = -1;
    std::unique_ptr<RemoteCommand> m_command;
    std::shared_ptr<ArrivingFile> m_arrival;
    std::vector<char> m_start;           // the header lines, until both are in
    std::optional<std::uint64_t> m_size; // what the host says the file holds
    std::vector<char> m_frame;           // a frame's header, until its 12 bytes are in
    std::uint64_t m_at = 0, m_left = 0;  // where the frame's bytes go, and how many are to come
    std::uint64_t m_written = 0, m_received = 0;
    bool m_ended = false; // the host's stdout ended
    bool m_early = false;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_done{false}; // nothing more arrives
    std::thread m_rest;
    std::exception_ptr m_failure;
    std::optional<std::string> m_kept;
};

} // namespace peaklens
