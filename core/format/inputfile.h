// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a path names, opened without ever blocking: a regular file is read where it lies; a
// pipe, FIFO, terminal or other character device is read once into memory, waiting at most
// kWaitSeconds for data, so `<(zcat trace.pickle.gz)` and /dev/stdin work and an idle FIFO
// ends with a sentence instead of a hang. An ssh://HOST/PATH (remotefile.h) is such a stream
// too, what `peaklens-cli send` writes there, waited for kRemoteWaitSeconds; a failure of
// the connection or on the host is one sentence naming the path, and nothing is kept.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

class RemoteCommand;

class InputFile
{
public:
    static constexpr int kWaitSeconds = 5;
    static constexpr int kRemoteWaitSeconds = 60; // a connection, a jump host, a login

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

    // The stream ended: for a remote one, how ssh ended too (ImportError if it failed).
    void streamEnded();

    std::string m_path;
    std::uint64_t m_size = 0;
    int m_fd = -1;
    int m_waitSeconds = kWaitSeconds;
    std::unique_ptr<RemoteCommand> m_remote;
    bool m_streamEnded = false;
    std::vector<char> m_streamed;
};

} // namespace peaklens
