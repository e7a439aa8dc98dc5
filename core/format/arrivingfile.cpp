// SPDX-License-Identifier: Apache-2.0
#include "arrivingfile.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <iterator>

namespace peaklens {

namespace {

std::mutex g_registryMutex;
std::map<std::uint64_t, std::weak_ptr<ArrivingFile>> g_registry;
std::atomic<std::uint64_t> g_nextId{1};

// The VFS: the default one, each read of an arriving file first waiting for its bytes.
// A file opened through it holds its ArrivingFile (null for any other) and, right after
// it, the default VFS's own file, which does everything else. The default VFS's files
// are of version 3, as these are.
struct WaitingFile
{
    sqlite3_file base;
    std::shared_ptr<ArrivingFile> *arrival;
    sqlite3_file *real;
};

sqlite3_vfs *g_default = nullptr;

sqlite3_file *realOf(sqlite3_file *file)
{
    return reinterpret_cast<WaitingFile *>(file)->real;
}

int waitingClose(sqlite3_file *file)
{
    auto *waiting = reinterpret_cast<WaitingFile *>(file);
    const int code = waiting->real->pMethods ? waiting->real->pMethods->xClose(waiting->real) : SQLITE_OK;
    delete waiting->arrival;
    waiting->arrival = nullptr;
    return code;
}

int waitingRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset)
{
    const auto *waiting = reinterpret_cast<WaitingFile *>(file);
    if (waiting->arrival && !(*waiting->arrival)->waitFor(static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(amount)))
        return SQLITE_IOERR_READ;
    return waiting->real->pMethods->xRead(waiting->real, buffer, amount, offset);
}

int waitingFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pages)
{
    const auto *waiting = reinterpret_cast<WaitingFile *>(file);
    *pages = nullptr; // SQLite reads instead
    if ((waiting->arrival && !(*waiting->arrival)->whole()) || waiting->real->pMethods->iVersion < 3)
        return SQLITE_OK;
    return waiting->real->pMethods->xFetch(waiting->real, offset, amount, pages);
}

// The rest are the default file's own.
const sqlite3_io_methods kWaitingMethods = {
    3,
    waitingClose,
    waitingRead,
    [](sqlite3_file *f, const void *b, int n, sqlite3_int64 o) { return realOf(f)->pMethods->xWrite(realOf(f), b, n, o); },
    [](sqlite3_file *f, sqlite3_int64 size) { return realOf(f)->pMethods->xTruncate(realOf(f), size); },
    [](sqlite3_file *f, int flags) { return realOf(f)->pMethods->xSync(realOf(f), flags); },
    [](sqlite3_file *f, sqlite3_int64 *size) { return realOf(f)->pMethods->xFileSize(realOf(f), size); },
    [](sqlite3_file *f, int lock) { return realOf(f)->pMethods->xLock(realOf(f), lock); },
    [](sqlite3_file *f, int lock) { return realOf(f)->pMethods->xUnlock(realOf(f), lock); },
    [](sqlite3_file *f, int *out) { return realOf(f)->pMethods->xCheckReservedLock(realOf(f), out); },
    [](sqlite3_file *f, int op, void *arg) { return realOf(f)->pMethods->xFileControl(realOf(f), op, arg); },
    [](sqlite3_file *f) { return realOf(f)->pMethods->xSectorSize(realOf(f)); },
    [](sqlite3_file *f) { return realOf(f)->pMethods->xDeviceCharacteristics(realOf(f)); },
    [](sqlite3_file *f, int region, int size, int extend, void volatile **at) {
        return realOf(f)->pMethods->xShmMap(realOf(f), region, size, extend, at);
    },
    [](sqlite3_file *f, int offset, int n, int flags) { return realOf(f)->pMethods->xShmLock(realOf(f), offset, n, flags); },
    [](sqlite3_file *f) { realOf(f)->pMethods->xShmBarrier(realOf(f)); },
    [](sqlite3_file *f, int remove) { return realOf(f)->pMethods->xShmUnmap(realOf(f), remove); },
    waitingFetch,
    [](sqlite3_file *f, sqlite3_int64 o, void *p) {
        return p && realOf(f)->pMethods->iVersion >= 3 ? realOf(f)->pMethods->xUnfetch(realOf(f), o, p) : SQLITE_OK;
    },
};

int waitingOpen(sqlite3_vfs *, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags)
{
    auto *waiting = reinterpret_cast<WaitingFile *>(file);
    waiting->base.pMethods = nullptr;
    waiting->arrival = nullptr;
    waiting->real = reinterpret_cast<sqlite3_file *>(waiting + 1);
    std::shared_ptr<ArrivingFile> arrival;
    if (name && (flags & SQLITE_OPEN_MAIN_DB)) {
        const char *id = sqlite3_uri_parameter(name, "arrival");
        std::uint64_t number = 0;
        if (id && std::from_chars(id, id + std::strlen(id), number).ec == std::errc())
            arrival = ArrivingFile::withId(number);
        // Gone already: every byte arrived and the copy is whole.
    }
    const int code = g_default->xOpen(g_default, name, waiting->real, flags, outFlags);
    if (code != SQLITE_OK || !waiting->real->pMethods)
        return code;
    if (arrival)
        waiting->arrival = new std::shared_ptr<ArrivingFile>(std::move(arrival));
    waiting->base.pMethods = &kWaitingMethods;
    return SQLITE_OK;
}

sqlite3_vfs *waitingVfs()
{
    static sqlite3_vfs vfs = [] {
        g_default = sqlite3_vfs_find(nullptr);
        sqlite3_vfs made = *g_default;
        made.szOsFile = static_cast<int>(sizeof(WaitingFile)) + g_default->szOsFile;
        made.zName = "peaklens-arriving";
        made.pAppData = nullptr;
        made.pNext = nullptr;
        made.xOpen = waitingOpen;
        made.xDelete = [](sqlite3_vfs *, const char *name, int sync) { return g_default->xDelete(g_default, name, sync); };
        made.xAccess = [](sqlite3_vfs *, const char *name, int flags, int *out) {
            return g_default->xAccess(g_default, name, flags, out);
        };
        made.xFullPathname = [](sqlite3_vfs *, const char *name, int size, char *out) {
            return g_default->xFullPathname(g_default, name, size, out);
        };
        made.xDlOpen = [](sqlite3_vfs *, const char *name) { return g_default->xDlOpen(g_default, name); };
        made.xDlError = [](sqlite3_vfs *, int size, char *out) { g_default->xDlError(g_default, size, out); };
        made.xDlSym = [](sqlite3_vfs *, void *library, const char *symbol) {
            return g_default->xDlSym(g_default, library, symbol);
        };
        made.xDlClose = [](sqlite3_vfs *, void *library) { g_default->xDlClose(g_default, library); };
        made.xRandomness = [](sqlite3_vfs *, int size, char *out) { return g_default->xRandomness(g_default, size, out); };
        made.xSleep = [](sqlite3_vfs *, int micro) { return g_default->xSleep(g_default, micro); };
        made.xCurrentTime = [](sqlite3_vfs *, double *now) { return g_default->xCurrentTime(g_default, now); };
        made.xGetLastError = [](sqlite3_vfs *, int size, char *out) { return g_default->xGetLastError(g_default, size, out); };
        made.xCurrentTimeInt64 = [](sqlite3_vfs *, sqlite3_int64 *now) { return g_default->xCurrentTimeInt64(g_default, now); };
        made.iVersion = 2;
        return made;
    }();
    return &vfs;
}

} // namespace

ArrivingFile::ArrivingFile(std::string path, std::uint64_t size, std::uint64_t id)
    : m_path(std::move(path))
    , m_size(size)
    , m_id(id)
{
}

std::shared_ptr<ArrivingFile> ArrivingFile::begin(std::string path, std::uint64_t size)
{
    std::shared_ptr<ArrivingFile> file(new ArrivingFile(std::move(path), size, g_nextId++));
    const std::lock_guard lock(g_registryMutex);
    g_registry[file->m_id] = file;
    return file;
}

ArrivingFile::~ArrivingFile()
{
    const std::lock_guard lock(g_registryMutex);
    g_registry.erase(m_id);
}

std::shared_ptr<ArrivingFile> ArrivingFile::find(const std::string &path)
{
    const std::lock_guard lock(g_registryMutex);
    for (const auto &[id, entry] : g_registry) {
        auto file = entry.lock();
        if (file && file->m_path == path)
            return file;
    }
    return nullptr;
}

std::shared_ptr<ArrivingFile> ArrivingFile::withId(std::uint64_t id)
{
    const std::lock_guard lock(g_registryMutex);
    const auto found = g_registry.find(id);
    return found == g_registry.end() ? nullptr : found->second.lock();
}

const char *ArrivingFile::vfsName()
{
    static const bool registered = [] { return sqlite3_vfs_register(waitingVfs(), 0) == SQLITE_OK; }();
    return registered ? waitingVfs()->zName : nullptr;
}

void ArrivingFile::arrived(std::uint64_t offset, std::uint64_t length)
{
    if (length == 0)
        return;
    std::uint64_t begin = offset, end = offset + length;
    {
        const std::lock_guard lock(m_mutex);
        // Joined with every span it touches.
        auto at = m_spans.upper_bound(begin);
        if (at != m_spans.begin() && std::prev(at)->second >= begin)
            --at;
        while (at != m_spans.end() && at->first <= end) {
            begin = std::min(begin, at->first);
            end = std::max(end, at->second);
            m_bytes -= at->second - at->first;
            at = m_spans.erase(at);
        }
        m_spans[begin] = end;
        m_bytes += end - begin;
    }
    m_changed.notify_all();
}

void ArrivingFile::end()
{
    {
        const std::lock_guard lock(m_mutex);
        m_ended = true;
    }
    m_changed.notify_all();
}

bool ArrivingFile::whole() const
{
    const std::lock_guard lock(m_mutex);
    return m_bytes >= m_size;
}

bool ArrivingFile::holds(std::uint64_t offset, std::uint64_t length) const
{
    const std::uint64_t end = std::min(m_size, offset + length);
    const std::lock_guard lock(m_mutex);
    return offset >= end || spansHold(offset, end);
}

bool ArrivingFile::spansHold(std::uint64_t offset, std::uint64_t end) const
{
    auto at = m_spans.upper_bound(offset);
    return at != m_spans.begin() && std::prev(at)->second >= end;
}

bool ArrivingFile::waitFor(std::uint64_t offset, std::uint64_t length) const
{
    const std::uint64_t end = std::min(m_size, offset + length);
    if (offset >= end)
        return true; // past the end: SQLite's short read
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return spansHold(offset, end) || m_ended; });
    return spansHold(offset, end);
}

} // namespace peaklens
