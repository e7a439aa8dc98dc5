// SPDX-License-Identifier: Apache-2.0
#include "readablefile.h"

#include "core/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace peaklens {

void requireReadableFile(const std::string &path)
{
    struct stat status
    { };
    if (::stat(path.c_str(), &status) != 0)
        throw ImportError(path, errno == ENOENT || errno == ENOTDIR
                                    ? std::string("does not exist.")
                                    : std::string("cannot be read: ") + std::strerror(errno) + ".");
    if (S_ISDIR(status.st_mode))
        throw ImportError(path, "is a directory, not a trace file.");
    if (!S_ISREG(status.st_mode))
        throw ImportError(path, "is not a regular file.");
    // O_NONBLOCK: should it have become a FIFO since, opening it must not wait.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throw ImportError(path, std::string("cannot be read: ") + std::strerror(errno) + ".");
    ::close(fd);
}

} // namespace peaklens
