// SPDX-License-Identifier: Apache-2.0
#pragma once
// torch.profiler's export_memory_timeline output: the ".json" form [times, sizes] (live
// bytes per category at each time) and the ".raw.json.gz" form, a list of
// [time, action, bytes, category]. Neither names the device; cuda:0 is assumed.

#include "core/progress.h"
#include "core/trace/trace.h"
#include "filebytes.h"

#include <memory>
#include <string>

namespace peaklens {

// Whether JSON text (already sniffed as an array) holds a memory timeline.
bool looksLikeMemoryTimeline(std::string_view prefix);
std::shared_ptr<const Trace> importMemoryTimeline(const FileBytes &bytes, const std::string &path, const Progress &progress = {});

} // namespace peaklens
