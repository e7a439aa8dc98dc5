#pragma once
// PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot, pickled or as JSON):
// the allocator's trace per device becomes memory, segment and marker events; blocks alive
// before the trace began (freed without an alloc, or still allocated at dump time) start
// at its beginning; record_function annotations become steps and layer ranges.

#include "core/trace/trace.h"
#include "importprogress.h"
#include "pickle/value.h"

#include <memory>
#include <string>

namespace peaklens {

std::shared_ptr<const Trace> importTorchSnapshot(const pickle::Document &document, const std::string &path,
                                                 const ImportProgress &progress = {});

} // namespace peaklens
