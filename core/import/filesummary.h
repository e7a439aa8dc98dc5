#pragma once
// The summary of a trace file with as little of it in memory as its format allows: a
// native file of format 2 whose events were written in time order is read a chunk at a
// time and summarized as it is read (with a pass before, when its categories are worked
// out from lifetimes); any other file is loaded whole and summarized. The figures are the
// same either way.

#include "core/analysis/tracesummary.h"
#include "importprogress.h"

#include <memory>
#include <string>

namespace peaklens {

struct FileSummary
{
    // The trace; without its memory events when they were read a chunk at a time.
    std::shared_ptr<const Trace> trace;
    TraceSummary summary;
    bool streamed = false;
};

// Throws ImportError as loadTrace does.
FileSummary summarizeFile(const std::string &path, const ImportProgress &progress = {});

} // namespace peaklens
