// SPDX-License-Identifier: Apache-2.0
#include "inputfile.h"

#include "core/error.h"
#include "core/trace/units.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace peaklens {

namespace {

std::string kindOf(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a pipe";
    if (S_ISCHR(mode))
        return "a character device";
    return "a device";
}

} // namespace

InputFile InputFile::open(const std::string &path, std::size_t prefixBytes)
{
    InputFile input;
    input.m_path = path;
    struct stat status
    { };
    if (::stat(path.c_str(), &status) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            throw ImportError(path, "does not exist.");
        throw ImportError(path, std::string("cannot be read: ") + std::strerror(errno) + ".");
    }
    if (S_ISDIR(status.st_mode))
        throw ImportError(path, "is a directory, not a trace file.");
    if (S_ISSOCK(status.st_mode))
        throw ImportError(path, "is a socket, not a trace file.");
    // O_NONBLOCK: opening a FIFO nobody writes to would otherwise wait forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throw ImportError(path, std::string("cannot be read: ") + std::strerror(errno) + ".");
    if (::fstat(fd, &status) != 0 || S_ISREG(status.st_mode)) {
        input.m_size = static_cast<std::uint64_t>(status.st_size);
        ::close(fd);
        return input;
    }
    input.m_fd = fd;
    input.readUpTo(prefixBytes);
    if (input.m_streamed.empty() && input.m_streamEnded)
        throw ImportError(path, "is " + kindOf(status.st_mode) + " that delivered no data: it is empty.");
    if (input.m_streamed.empty())
        throw ImportError(path, "is " + kindOf(status.st_mode) + " that delivered no data within " + std::to_string(kWaitSeconds)
                                    + " seconds.");
    return input;
}

InputFile::InputFile(InputFile &&other) noexcept
{
    *this = std::move(other);
}

InputFile &InputFile::operator=(InputFile &&other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_path = std::move(other.m_path);
        m_size = other.m_size;
        m_fd = std::exchange(other.m_fd, -1);
        m_streamEnded = other.m_streamEnded;
        m_streamed = std::move(other.m_streamed);
    }
    return *this;
}

InputFile::~InputFile()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void InputFile::readToEnd(std::uint64_t limit)
{
    if (m_fd < 0)
        return;
    readUpTo(limit + 1);
    if (m_fd >= 0)
        throw ImportError(m_path, "delivers more than " + formatBytes(static_cast<std::int64_t>(limit))
                                      + " through a pipe, more than PeakLens reads from one; save it to a file first.");
}

void InputFile::readUpTo(std::uint64_t total)
{
    constexpr std::size_t kChunk = 1 << 20;
    while (m_fd >= 0 && m_streamed.size() < total) {
        pollfd ready{m_fd, POLLIN, 0};
        const int polled = ::poll(&ready, 1, kWaitSeconds * 1000);
        if (polled < 0 && errno == EINTR)
            continue;
        if (polled == 0) {
            if (m_streamed.empty())
                return; // nothing at all: the caller says so
            throw ImportError(m_path, "stopped delivering data for " + std::to_string(kWaitSeconds) + " seconds after "
                                          + std::to_string(m_streamed.size()) + " bytes.");
        }
        // Read into a buffer of its own and appended: growing the content by a chunk for each
        // read would zero a chunk each time, while a pipe hands over 64 KiB at a read.
        static thread_local std::vector<char> buffer(kChunk);
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, total - m_streamed.size()));
        const ssize_t got = ::read(m_fd, buffer.data(), want);
        if (got > 0)
            m_streamed.insert(m_streamed.end(), buffer.data(), buffer.data() + got);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (got < 0)
            throw ImportError(m_path, std::string("could not be read to its end: ") + std::strerror(errno) + ".");
        if (got == 0) {
            // The writer closed it (or a FIFO never had one: poll reports it readable then).
            ::close(m_fd);
            m_fd = -1;
            m_streamEnded = true;
        }
    }
}

} // namespace peaklens
