// SPDX-License-Identifier: Apache-2.0
#pragma once
// A native trace copied while its writer still writes it, for a machine the file is not
// on. A MirrorSource reads the rows committed since its last read (as a follower reads,
// through the writer's log, never writing) and codes them as a delta; a MirrorSink applies
// each delta in one transaction to a native file of its own, in WAL mode, which a
// TraceFollower follows as it follows any file being written. The copy holds the same rows
// under the same row ids, its bytes differ: the finished file is sent whole and put in its
// place.
//
// The copy names its sink as its writer (writer.process), so a follower knows the copy is
// written while the sink runs and a user can stop it there; the source's writer is kept as
// writer.source. A delta is data: the sink checks its tables and columns against its own
// schema and binds every value.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace peaklens {

class SqliteDatabase;

class MirrorSource
{
public:
    explicit MirrorSource(std::string path);

    // The rows committed since the last call; empty while the writer has committed no
    // tables yet, or nothing new. Throws ImportError naming the file when it is not a
    // native trace of this format.
    std::string readDelta();

private:
    std::string m_path;
    std::map<std::string, std::int64_t, std::less<>> m_after; // each appended table's last row id sent
    std::map<std::string, std::string, std::less<>> m_sent;   // each rewritten table as last sent
};

class MirrorSink
{
public:
    // Creates `path`, which must not exist (FileError), as a trace this process is writing
    // (writer.state and writer.process in its meta) with no rows yet; `source` names the
    // original in messages ("gpu1:/runs/rank0.peaklens").
    MirrorSink(std::string path, std::string source);
    ~MirrorSink();
    MirrorSink(const MirrorSink &) = delete;
    MirrorSink &operator=(const MirrorSink &) = delete;

    // Throws ImportError naming the source when the delta is damaged; the copy keeps every
    // delta applied before it.
    void apply(std::string_view delta);
    // Ends writing: the log is folded into the file and removed, the copy stays readable.
    void close();

    const std::string &path() const { return m_path; }
    // The memory events committed to the copy so far.
    std::uint64_t events() const { return m_events; }

private:
    std::string m_path;
    std::string m_source;
    std::unique_ptr<SqliteDatabase> m_db;
    std::uint64_t m_events = 0;
};

} // namespace peaklens
