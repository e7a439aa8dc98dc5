// SPDX-License-Identifier: Apache-2.0
#include "scratchfolder.h"

#include "sourcefile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdlib.h>
#include <sys/stat.h>

namespace peaklens::fuzz {

ScratchFolder::ScratchFolder(const std::vector<std::string> &fixtures)
{
    char folder[] = "/tmp/peaklens-fuzz-XXXXXX";
    if (!::mkdtemp(folder)) {
        std::perror("mkdtemp");
        std::abort();
    }
    m_path = folder;
    for (const std::string &fixture : fixtures) {
        Fixture entry{sourcePath(fixture), m_path / std::filesystem::path(fixture).filename(), {}};
        copyIn(entry);
        m_fixtures.push_back(std::move(entry));
    }
}

ScratchFolder::~ScratchFolder()
{
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

ScratchFolder::Identity ScratchFolder::identityOf(const std::filesystem::path &path)
{
    struct stat info = {};
    if (::lstat(path.c_str(), &info) != 0)
        return {};
    return {static_cast<std::int64_t>(info.st_ino), info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec};
}

void ScratchFolder::copyIn(Fixture &fixture)
{
    std::error_code ec;
    std::filesystem::remove_all(fixture.copy, ec);
    if (!std::filesystem::copy_file(fixture.source, fixture.copy, ec)) {
        std::fprintf(stderr, "cannot copy the fixture %s: %s\n", fixture.source.c_str(), ec.message().c_str());
        std::abort();
    }
    fixture.identity = identityOf(fixture.copy);
}

void ScratchFolder::restore()
{
    std::error_code ec;
    std::vector<std::filesystem::path> strays;
    for (const auto &entry : std::filesystem::directory_iterator(m_path, ec)) {
        const bool fixture =
            std::any_of(m_fixtures.begin(), m_fixtures.end(), [&](const Fixture &f) { return f.copy == entry.path(); });
        if (!fixture)
            strays.push_back(entry.path());
    }
    for (const auto &stray : strays)
        std::filesystem::remove_all(stray, ec);
    for (Fixture &fixture : m_fixtures) {
        if (identityOf(fixture.copy) != fixture.identity)
            copyIn(fixture);
    }
}

} // namespace peaklens::fuzz
