#pragma once
// Opens any trace file PeakLens reads, choosing the reader by the file's content, not its
// name. Bad input throws ImportError naming the file, the place and the problem.

#include "core/trace/trace.h"

#include <memory>
#include <string>

namespace peaklens {

enum class TraceFormat { Native, TraceText, Unknown };

TraceFormat detectFormat(const std::string &path);
std::shared_ptr<const Trace> loadTrace(const std::string &path);

} // namespace peaklens
