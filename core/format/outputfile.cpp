// SPDX-License-Identifier: Apache-2.0
#include "outputfile.h"

#include "core/error.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace peaklens {

namespace {

constexpr std::size_t kNameMax = 255;
constexpr std::string_view kTag = ".partial-";
// Earlier reports were written through "NAME.tmp-PID"; their leftovers go too.
constexpr std::string_view kStaleTags[] = {".partial-", ".tmp-"};
constexpr std::size_t kSuffixDigits = 21; // PID-SERIAL

std::atomic<unsigned> g_serial{0};

std::string_view stemOf(std::string_view name)
{
    return name.substr(0, kNameMax - kTag.size() - kSuffixDigits);
}

// The writer's process id in a temporary's suffix "PID" or "PID-SERIAL"; 0 if it has none.
long writerOf(std::string_view suffix)
{
    long pid = 0;
    const auto [end, error] = std::from_chars(suffix.data(), suffix.data() + suffix.size(), pid);
    const bool whole = end == suffix.data() + suffix.size() || *end == '-';
    return error == std::errc() && whole ? pid : 0;
}

std::string_view fileTypeName(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a pipe";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

} // namespace

std::string writeProblemText(int error)
{
    if (error == EFBIG)
        return "it would pass the largest file this process may write (ulimit -f)";
    if (error == ENOSPC || error == EDQUOT)
        return "the disk is full";
    return std::strerror(error);
}

namespace {

bool processIsGone(long pid)
{
    return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

bool syncPath(const std::string &path, int flags)
{
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    return synced;
}

// Moves `from` onto `to` only if `to` does not exist, atomically.
int renameNoReplace(const std::string &from, const std::string &to)
{
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return errno;
    // File systems without RENAME_NOREPLACE: a hard link fails just the same when `to` exists.
    if (::link(from.c_str(), to.c_str()) != 0)
        return errno;
    ::unlink(from.c_str());
    return 0;
}

} // namespace

std::string OutputFile::temporaryName(std::string_view name, long pid, unsigned serial)
{
    return std::string(stemOf(name)).append(kTag).append(std::to_string(pid)).append("-").append(std::to_string(serial));
}

bool OutputFile::isTemporaryName(std::string_view name)
{
    for (const std::string_view tag : kStaleTags) {
        if (const auto at = name.rfind(tag); at != std::string_view::npos && writerOf(name.substr(at + tag.size())) != 0)
            return true;
    }
    return false;
}

void ignoreFileSizeSignal()
{
    static const bool ignored = [] {
        ::signal(SIGXFSZ, SIG_IGN);
        return true;
    }();
    (void)ignored;
}

OutputFile::OutputFile(std::string path, Existing existing, const std::vector<std::string> &inputs)
    : m_path(std::move(path))
    , m_existing(existing)
{
    namespace fs = std::filesystem;
    ignoreFileSizeSignal();
    for (const std::string &input : inputs) {
        std::error_code ec;
        if (fs::equivalent(input, m_path, ec))
            throw FileError(m_path, "is one of the inputs; PeakLens never writes onto what it reads. Choose a new file.");
    }
    struct stat status
    { };
    if (::stat(m_path.c_str(), &status) == 0) {
        if (!S_ISREG(status.st_mode))
            throw FileError(m_path,
                            "is " + std::string(fileTypeName(status.st_mode)) + "; PeakLens writes only to regular files.");
        if (existing == Existing::Refuse)
            throw FileError(m_path, "already exists; pass --force to replace it.");
    }
    const fs::path target(m_path);
    const std::string name = target.filename().string();
    if (name.empty() || name == "." || name == "..")
        throw FileError(m_path, "does not name a file.");
    m_temporary = (target.parent_path() / temporaryName(name, ::getpid(), g_serial++)).string();
    removeStaleTemporaries();
    std::error_code ec;
    fs::remove(m_temporary, ec);
}

OutputFile::~OutputFile()
{
    if (!m_committed && !m_temporary.empty())
        ::unlink(m_temporary.c_str());
}

void OutputFile::removeStaleTemporaries() const
{
    const std::filesystem::path target(m_path);
    const std::string directory = target.has_parent_path() ? target.parent_path().string() : ".";
    const std::string name = target.filename().string();
    const std::string_view stem = stemOf(name);
    DIR *listing = ::opendir(directory.c_str());
    if (!listing)
        return;
    while (const dirent *entry = ::readdir(listing)) {
        const std::string_view entryName(entry->d_name);
        for (const std::string_view tag : kStaleTags) {
            if (!entryName.starts_with(stem) || entryName.substr(stem.size(), tag.size()) != tag)
                continue;
            if (processIsGone(writerOf(entryName.substr(stem.size() + tag.size()))))
                ::unlinkat(::dirfd(listing), entry->d_name, 0);
        }
    }
    ::closedir(listing);
}

void OutputFile::fail(const std::string &problem)
{
    ::unlink(m_temporary.c_str());
    m_committed = true; // nothing left to remove
    throw FileError(m_path, problem);
}

void OutputFile::commit(Durability durability)
{
    if (durability == Durability::Synced && !syncPath(m_temporary, O_RDONLY))
        fail("could not be written: syncing the data to disk failed (" + writeProblemText(errno) + ").");
    if (m_existing == Existing::Refuse) {
        if (const int error = renameNoReplace(m_temporary, m_path); error == EEXIST)
            fail("appeared while PeakLens was writing it; it was left as it was. Pass --force to replace it.");
        else if (error != 0)
            fail("could not be written: " + writeProblemText(error) + ".");
    } else {
        // It may have been replaced by something else meanwhile: still only a regular file.
        struct stat status
        { };
        if (::stat(m_path.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
            fail("is " + std::string(fileTypeName(status.st_mode)) + "; PeakLens writes only to regular files.");
        if (::rename(m_temporary.c_str(), m_path.c_str()) != 0)
            fail("could not be replaced: " + writeProblemText(errno) + ".");
    }
    m_committed = true;
    if (durability == Durability::Cached)
        return;
    // The rename itself durable: the folder's entry synced.
    const std::filesystem::path target(m_path);
    syncPath(target.has_parent_path() ? target.parent_path().string() : ".", O_RDONLY | O_DIRECTORY);
}

void OutputFile::write(std::string_view contents)
{
    const int fd = ::open(m_temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        fail("cannot be written: " + writeProblemText(errno) + ".");
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : ENOSPC;
            ::close(fd);
            fail("cannot be written: " + writeProblemText(error) + ".");
        }
        written += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0)
        fail("cannot be written: " + writeProblemText(errno) + ".");
    commit();
}

void OutputFile::write(const std::function<void(std::ostream &)> &produce)
{
    {
        std::ofstream file(m_temporary, std::ios::binary | std::ios::trunc);
        if (!file)
            fail("cannot be written: " + writeProblemText(errno) + ".");
        errno = 0;
        produce(file);
        file.flush();
        if (!file)
            fail("cannot be written: " + writeProblemText(errno ? errno : EIO) + ".");
    }
    commit();
}

} // namespace peaklens
