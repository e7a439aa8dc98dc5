// SPDX-License-Identifier: Apache-2.0
#pragma once
// The native *.peaklens file: an SQLite 3 database, schema documented in docs/formats.md.
// Memory events are stored column-wise in chunks, one row per chunk. Format 2 codes each
// chunk's columns compactly (eventchunk.h) and keeps running totals beside them; format 1
// stored fixed-width little-endian arrays. Format 3 is format 2 with a table for the
// figures a summary shows, stored once the file is complete. Format 4 puts each lane in a
// memory pool; format 5 names stages (ranges with a name). PeakLens writes format 5 and
// reads all five.

#include <cstdint>
#include <string_view>

namespace peaklens::schema {

inline constexpr int kFormatVersion = 5;                   // PRAGMA user_version
inline constexpr int kOldestFormatVersion = 1;             // the oldest this build still reads
inline constexpr std::int32_t kApplicationId = 0x504B4C53; // PRAGMA application_id, "PKLS"
inline constexpr std::size_t kEventsPerChunk = 65536;
inline constexpr std::uint32_t kFileNoLayer = 0xFFFFFFFFu; // "no layer" in the events.layer column

// The tables every format version has.
inline constexpr std::string_view kCreateTables = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE lanes(id INTEGER PRIMARY KEY, device_type INTEGER NOT NULL, device INTEGER NOT NULL,
                   stream INTEGER NOT NULL, pool_graph INTEGER NOT NULL, pool_user INTEGER NOT NULL);
CREATE TABLE layers(id INTEGER PRIMARY KEY, parent INTEGER, path TEXT NOT NULL, kind TEXT NOT NULL,
                    parameter_bytes INTEGER NOT NULL);
CREATE TABLE ranges(layer INTEGER, phase INTEGER NOT NULL, step INTEGER, t_begin_ns INTEGER NOT NULL,
                    t_end_ns INTEGER NOT NULL, thread INTEGER NOT NULL, stage INTEGER);
CREATE TABLE stage_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE steps(number INTEGER NOT NULL, t_begin_ns INTEGER NOT NULL, t_end_ns INTEGER NOT NULL);
CREATE TABLE frames(id INTEGER PRIMARY KEY, function TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL);
CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, frame INTEGER NOT NULL);
CREATE TABLE reserved(t_ns INTEGER NOT NULL, delta_bytes INTEGER NOT NULL, addr INTEGER NOT NULL,
                      lane INTEGER NOT NULL);
CREATE TABLE kernel_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE kernels(name INTEGER NOT NULL, lane INTEGER NOT NULL, t_begin_ns INTEGER NOT NULL,
                     t_end_ns INTEGER NOT NULL);
CREATE TABLE markers(t_ns INTEGER NOT NULL, lane INTEGER NOT NULL, kind TEXT NOT NULL, bytes INTEGER NOT NULL);
)sql";

// The lanes table of formats 1 to 3, before lanes had memory pools.
inline constexpr std::string_view kCreateLanesBeforePools = R"sql(
CREATE TABLE lanes(id INTEGER PRIMARY KEY, device_type INTEGER NOT NULL, device INTEGER NOT NULL,
                   stream INTEGER NOT NULL);
)sql";

// The ranges table of formats 1 to 4, before stages (which have no stage_names table).
inline constexpr std::string_view kCreateRangesBeforeStages = R"sql(
CREATE TABLE ranges(layer INTEGER, phase INTEGER NOT NULL, step INTEGER, t_begin_ns INTEGER NOT NULL,
                    t_end_ns INTEGER NOT NULL, thread INTEGER NOT NULL);
)sql";

// The events table of format 2: each chunk's columns coded by eventchunk::encode.
inline constexpr std::string_view kCreateEvents = R"sql(
CREATE TABLE events(chunk INTEGER PRIMARY KEY, count INTEGER NOT NULL,
                    t_first_ns INTEGER NOT NULL, t_last_ns INTEGER NOT NULL,
                    t_min_ns INTEGER NOT NULL, t_max_ns INTEGER NOT NULL,
                    bytes_allocated INTEGER NOT NULL, bytes_freed INTEGER NOT NULL, totals BLOB NOT NULL,
                    codec INTEGER NOT NULL, plain_bytes INTEGER NOT NULL, columns BLOB NOT NULL);
)sql";

// Format 3's addition: at most one row, the summary of the complete file's events as the
// analysis numbered `analysis` computes it, valid for a file of exactly `events` events.
inline constexpr std::string_view kCreateFigures = R"sql(
CREATE TABLE figures(analysis INTEGER NOT NULL, events INTEGER NOT NULL, summary BLOB NOT NULL);
)sql";

// The events table of format 1: fixed-width little-endian arrays.
inline constexpr std::string_view kCreateEventsV1 = R"sql(
CREATE TABLE events(chunk INTEGER PRIMARY KEY, count INTEGER NOT NULL,
                    t_first_ns INTEGER NOT NULL, t_last_ns INTEGER NOT NULL,
                    bytes_allocated INTEGER NOT NULL, bytes_freed INTEGER NOT NULL,
                    t_ns BLOB NOT NULL, delta_bytes BLOB NOT NULL, addr BLOB NOT NULL, lane BLOB NOT NULL,
                    category BLOB NOT NULL, phase BLOB NOT NULL, layer BLOB NOT NULL, stack BLOB NOT NULL);
)sql";

} // namespace peaklens::schema
