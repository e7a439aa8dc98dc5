#pragma once
// Loads a native *.peaklens file into a Trace, checking everything it reads: a file that
// is not a trace, from a newer PeakLens, truncated or damaged gets an ImportError that
// names the file and the problem. The file is opened read-only and never changed.
// Progress is reported by rows read; a cancel ends the read, even mid-statement, with
// ImportCancelled.

#include "core/import/importprogress.h"
#include "core/trace/trace.h"

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace peaklens {

class TraceReader
{
public:
    static std::shared_ptr<const Trace> read(const std::string &path, const ImportProgress &progress = {});
    // The same for a whole file already in memory (read from a pipe); `path` names it.
    static std::shared_ptr<const Trace> readImage(const std::string &path, std::span<const char> image,
                                                  const ImportProgress &progress = {});
    // True when these first bytes of a file are those of a PeakLens trace.
    static bool recognizes(std::span<const std::byte> header);
};

} // namespace peaklens
