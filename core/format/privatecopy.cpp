// SPDX-License-Identifier: Apache-2.0
#include "privatecopy.h"

#include "core/error.h"

#include <cstdlib>
#include <filesystem>

namespace peaklens {

namespace {
constexpr const char *kSidecars[] = {"-wal", "-journal"};

bool nonEmptyFile(const std::string &path)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > 0 && !ec;
}
} // namespace

bool PrivateCopy::isNeededFor(const std::string &path)
{
    std::error_code ec;
    // An empty -wal still holds the file in WAL mode, which needs a writable -shm.
    return std::filesystem::exists(path + "-wal", ec) || nonEmptyFile(path + "-journal");
}

PrivateCopy::PrivateCopy(const std::string &path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "peaklens-read-XXXXXX").string();
    if (ec || !::mkdtemp(pattern.data()))
        throw ImportError(path, "has a write-ahead log or journal beside it, and no private folder could be made to read "
                                "it in without writing beside it.");
    m_folder = pattern;
    m_copy = m_folder + "/trace.peaklens";
    fs::copy_file(path, m_copy, ec);
    for (const char *sidecar : kSidecars) {
        if (!ec && fs::exists(path + sidecar))
            fs::copy_file(path + sidecar, m_copy + sidecar, ec);
    }
    if (ec) {
        const std::string problem = ec.message();
        fs::remove_all(m_folder, ec);
        throw ImportError(path, "has a write-ahead log or journal beside it, and copying them to read them without writing "
                                "beside the file failed: "
                                    + problem + ".");
    }
}

PrivateCopy::~PrivateCopy()
{
    std::error_code ec;
    std::filesystem::remove_all(m_folder, ec);
}

} // namespace peaklens
