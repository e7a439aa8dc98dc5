#include "readablefile.h"

#include "core/error.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace peaklens {

void requireReadableFile(const std::string &path)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status))
        throw ImportError(path, "does not exist.");
    if (std::filesystem::is_directory(status))
        throw ImportError(path, "is a directory, not a trace file.");
    if (!std::ifstream(path, std::ios::binary))
        throw ImportError(path, std::string("cannot be read: ") + std::strerror(errno) + ".");
}

} // namespace peaklens
