// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace as a command opens it: as the app does (openAnalysed), a big native file as the
// window around its peak. A window says so on stderr, so that a plan, a diff or a report
// of it is never taken for the whole file's.

#include "core/document/analysedtrace.h"

#include <string>

namespace peaklens::cli {

// Throws ImportError as openAnalysed does.
AnalysedTracePtr openForCommand(const std::string &path, const ChainSelection &chain = {});

} // namespace peaklens::cli
