// SPDX-License-Identifier: Apache-2.0
#pragma once
// A private folder the fuzzed program runs in, holding copies of a few fixtures: after
// each run, whatever the run wrote there is removed and a fixture it replaced is copied
// back, so every run starts from the same files.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace peaklens::fuzz {

class ScratchFolder
{
public:
    // `fixtures`: paths inside the source tree; each is copied under its file name.
    explicit ScratchFolder(const std::vector<std::string> &fixtures);
    ~ScratchFolder();
    ScratchFolder(const ScratchFolder &) = delete;
    ScratchFolder &operator=(const ScratchFolder &) = delete;

    const std::filesystem::path &path() const { return m_path; }
    // Back to the state after construction.
    void restore();

private:
    // Inode, size and modification time: cheaper than comparing contents, and a fixture
    // replaced by a rename gets a new inode, one rewritten in place a new time.
    using Identity = std::array<std::int64_t, 4>;
    static Identity identityOf(const std::filesystem::path &path);

    struct Fixture
    {
        std::filesystem::path source;
        std::filesystem::path copy;
        Identity identity;
    };

    void copyIn(Fixture &fixture);

    std::filesystem::path m_path;
    std::vector<Fixture> m_fixtures;
};

} // namespace peaklens::fuzz
