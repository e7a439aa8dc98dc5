// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kineto Chrome traces from torch.profiler (*.pt.trace.json[.gz]) with profile_memory=True:
// "[memory]" instant events become memory events, "Total Reserved" the reserved timeline,
// "[OutOfMemory]" markers; nn.Module python_function spans become layers (nested into
// paths), ProfilerStep#N spans steps, autograd and optimizer spans the phases.
// The traceEvents array is parsed a few megabytes at a time, so memory stays near the
// file's own size.

#include "core/progress.h"
#include "core/trace/trace.h"
#include "filebytes.h"

#include <memory>
#include <string>

namespace peaklens {

bool looksLikeKinetoTrace(std::string_view prefix);
// bytes is changed while it is parsed (separators between pieces are rewritten).
std::shared_ptr<const Trace> importKinetoTrace(FileBytes &bytes, const std::string &path, const Progress &progress = {});

} // namespace peaklens
