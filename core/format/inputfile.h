// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a path names, opened without ever blocking: a regular file is read where it lies; a
// pipe, FIFO, terminal or other character device is read once into memory, waiting at most
// kWaitSeconds for data, so `<(zcat trace.pickle.gz)` and /dev/stdin work and an idle FIFO
// ends with a sentence instead of a hang. (A file on another machine, ssh://HOST/PATH, is
// copied here first: remoteread.h.)

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

class InputFile
{
public:
    static constexpr int kWaitSeconds = 5;

    // Throws ImportError when the path does not exist, is a directory or a socket, cannot be
    // opened, or is a stream that delivers nothing within kWaitSeconds. A stream is read up
    // to `prefixBytes` here, so that one which holds no trace (/dev/zero) is never read on.
    static InputFile open(const std::string &path, std::size_t prefixBytes);

    InputFile(InputFile &&other) noexcept;
    InputFile &operator=(InputFile &&other) noexcept;
    InputFile(const InputFile &) = delete;
    InputFile &operator=(const InputFile &) = delete;
    ~InputFile();

    const std::string &path() const { return m_path; }
    bool isStream() const { return m_fd >= 0 || m_streamEnded; }
    // A regular file's size, or what a stream has delivered so far.
    std::uint64_t size() const { return isStream() ? m_streamed.size() : m_size; }
    // A stream's content: its prefix, or all of it after readToEnd().
    const std::vector<char> &streamed() const { return m_streamed; }
    // Moves a stream's content out.
    std::vector<char> takeStreamed() { return std::move(m_streamed); }
    // Reads a stream to its end (nothing for a regular file); `limit` bytes at most.
    void readToEnd(std::uint64_t limit);

private:
    InputFile() = default;
    // Reads until `total` bytes are in or the stream ends.
    void readUpTo(std::uint64_t total);

    std::string m_path;
    std::uint64_t m_size = 0;
    int m_fd = -1;
    bool m_streamEnded = false;
    std::vector<char> m_streamed;
};

} // namespace peaklens
