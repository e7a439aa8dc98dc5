// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opens any trace file PeakLens reads, choosing the reader by the file's content, never
// its name; gzip is inflated transparently. Bad input throws ImportError naming the file,
// the place and the problem.

#include "core/progress.h"
#include "core/trace/trace.h"

#include <memory>
#include <string>
#include <string_view>

namespace peaklens {

enum class TraceFormat {
    Native,            // *.peaklens
    TraceText,         // *.pltxt
    TorchSnapshot,     // pickled memory snapshot
    TorchSnapshotJson, // the same dict as JSON
    KinetoTrace,       // *.pt.trace.json[.gz]
    MemoryTimeline,    // export_memory_timeline .json / .raw.json.gz
    Unknown,
};

TraceFormat detectFormat(const std::string &path);
// The format of a file that starts with these bytes (inflated, when gzipped).
TraceFormat formatOf(std::string_view prefix);
std::shared_ptr<const Trace> loadTrace(const std::string &path, const Progress &progress = {});

} // namespace peaklens
