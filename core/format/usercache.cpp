// SPDX-License-Identifier: Apache-2.0
#include "usercache.h"

#include "outputfile.h"

#include "core/trace/units.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace peaklens {

namespace {

constexpr std::int64_t kDefaultLimit = std::int64_t(20) << 30;
// A copy used more recently than this stays: a window of it may be read again.
constexpr std::chrono::hours kInUse{24};
// The folders of the cache that hold copies PeakLens makes again when they are wanted.
constexpr const char *kCopyFolders[] = {"copies", "remote"};

} // namespace

std::string userCacheFolder()
{
    if (const char *own = std::getenv("PEAKLENS_CACHE_DIR"); own && *own)
        return own;
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return (std::filesystem::path(xdg) / "peaklens").string();
    if (const char *home = std::getenv("HOME"); home && *home)
        return (std::filesystem::path(home) / ".cache" / "peaklens").string();
    return {};
}

std::int64_t cacheLimitBytes()
{
    const char *text = std::getenv("PEAKLENS_CACHE_LIMIT");
    if (!text || !*text)
        return kDefaultLimit;
    const auto bytes = parseBytes(text);
    return bytes && *bytes >= 0 ? *bytes : kDefaultLimit;
}

void markCacheUsed(const std::string &copy)
{
    ::utimensat(AT_FDCWD, copy.c_str(), nullptr, 0); // now; a copy gone meanwhile is made again
}

std::int64_t keepCacheWithinLimit(const std::string &made)
{
    namespace fs = std::filesystem;
    const std::int64_t limit = cacheLimitBytes();
    const std::string cache = userCacheFolder();
    if (limit == 0 || cache.empty())
        return 0;
    struct Copy
    {
        fs::path path;
        std::int64_t bytes;
        fs::file_time_type used;
    };
    std::vector<Copy> copies;
    std::int64_t total = 0;
    std::error_code ec;
    for (const char *folder : kCopyFolders) {
        for (fs::directory_iterator it(fs::path(cache) / folder, ec), end; !ec && it != end; it.increment(ec)) {
            // An entry that cannot be looked at is left alone; the others are still read.
            std::error_code entry;
            const fs::path &path = it->path();
            if (OutputFile::isTemporaryName(path.filename().string()) || !it->is_regular_file(entry))
                continue;
            const auto bytes = static_cast<std::int64_t>(it->file_size(entry));
            const auto used = it->last_write_time(entry);
            if (entry)
                continue;
            copies.push_back({path, bytes, used});
            total += bytes;
        }
        ec.clear();
    }
    std::sort(copies.begin(), copies.end(), [](const Copy &a, const Copy &b) { return a.used < b.used; });
    const auto inUse = fs::file_time_type::clock::now() - kInUse;
    std::int64_t removed = 0;
    for (const Copy &copy : copies) {
        if (total <= limit || copy.used >= inUse)
            break;
        if (fs::equivalent(copy.path, made, ec) || !fs::remove(copy.path, ec))
            continue;
        total -= copy.bytes;
        removed += copy.bytes;
    }
    return removed;
}

} // namespace peaklens
