// SPDX-License-Identifier: Apache-2.0
#pragma once
// PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot, pickled or as JSON):
// the allocator's trace per device becomes memory, segment and marker events; blocks alive
// before the trace began (freed without an alloc, or still allocated at dump time) start
// at its beginning; record_function annotations become steps and layer ranges.

#include "core/progress.h"
#include "core/trace/trace.h"
#include "filebytes.h"
#include "pickle/value.h"

#include <memory>
#include <string>

namespace peaklens {

// From a whole document: a snapshot saved as JSON, or a pickle decoded first.
std::shared_ptr<const Trace> importTorchSnapshot(const pickle::Document &document, const std::string &path,
                                                 const Progress &progress = {});

// From a pickle, in one pass: trace entries and segments are read as they are decoded and
// released, so memory follows the trace rather than the pickle. A pickle laid out in a way
// one pass cannot follow is read whole instead; the trace is the same either way.
std::shared_ptr<const Trace> streamTorchSnapshot(FileBytes bytes, const std::string &path, const Progress &progress = {});

// The one pass alone, over document.bytes: nullptr when the layout needs the whole document
// (document.bytes are then still there to read it). Throws ImportError for bad input.
std::shared_ptr<const Trace> readTorchSnapshotInOnePass(pickle::Document &document, const std::string &path,
                                                        const Progress &progress = {});

} // namespace peaklens
