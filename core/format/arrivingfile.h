// SPDX-License-Identifier: Apache-2.0
#pragma once
// A file whose bytes arrive in any order while it is read: the copy of a trace on another
// machine (RemoteFetch), read as the host sends its pages. Whoever writes the copy makes
// one and says what has arrived; SqliteDatabase::openImmutable opens such a path through
// an SQLite VFS whose reads wait until their bytes are here, and fail once it is known
// that they never will be (the connection broke, the user cancelled).

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace peaklens {

class ArrivingFile
{
public:
    // `path`, `size` bytes long once whole, is arriving until the result is dropped.
    static std::shared_ptr<ArrivingFile> begin(std::string path, std::uint64_t size);
    ~ArrivingFile();
    ArrivingFile(const ArrivingFile &) = delete;
    ArrivingFile &operator=(const ArrivingFile &) = delete;

    // The arriving file at `path`, if one is.
    static std::shared_ptr<ArrivingFile> find(const std::string &path);
    // The one whose id() is `id`, for the VFS.
    static std::shared_ptr<ArrivingFile> withId(std::uint64_t id);
    // The SQLite VFS that reads it (registered on first use): a URI names the file with
    // vfs=vfsName() and arrival=id().
    static const char *vfsName();

    std::uint64_t id() const { return m_id; }
    std::uint64_t size() const { return m_size; }

    // These bytes are in the file now.
    void arrived(std::uint64_t offset, std::uint64_t length);
    // No more will come: reads still waiting fail.
    void end();
    // Every byte has arrived.
    bool whole() const;
    // [offset, offset + length) (clipped to the file) has arrived.
    bool holds(std::uint64_t offset, std::uint64_t length) const;
    // Waits until [offset, offset + length) (clipped to the file) has arrived; false once
    // it never will.
    bool waitFor(std::uint64_t offset, std::uint64_t length) const;

private:
    ArrivingFile(std::string path, std::uint64_t size, std::uint64_t id);
    bool spansHold(std::uint64_t offset, std::uint64_t end) const;

    std::string m_path;
    std::uint64_t m_size;
    std::uint64_t m_id;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    std::map<std::uint64_t, std::uint64_t> m_spans; // begin -> end, apart and in order
    std::uint64_t m_bytes = 0;
    bool m_ended = false;
};

} // namespace peaklens
