#include "reportfile.h"

#include "core/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <unistd.h>

namespace peaklens {

void writeFileAtomically(const std::string &path, const std::string &contents)
{
    const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
    FILE *file = std::fopen(temporary.c_str(), "wb");
    if (!file)
        throw FileError(path, std::string("cannot be written: ") + std::strerror(errno) + ".");
    const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size() && std::fflush(file) == 0
                         && ::fsync(::fileno(file)) == 0;
    const int error = errno;
    std::fclose(file);
    std::error_code ignored;
    if (!written) {
        std::filesystem::remove(temporary, ignored);
        throw FileError(path, std::string("cannot be written: ") + std::strerror(error) + ".");
    }
    std::error_code renamed;
    std::filesystem::rename(temporary, path, renamed);
    if (renamed) {
        std::filesystem::remove(temporary, ignored);
        throw FileError(path, "cannot be replaced: " + renamed.message() + ".");
    }
}

} // namespace peaklens
