// SPDX-License-Identifier: Apache-2.0
#pragma once
// Edits a user makes to the layer tree of a trace whose layers were inferred (from call
// stacks or profiler spans): rename a layer, or merge it into its parent. Each returns a
// new trace; events, ranges and sub-layers follow the edit, nothing else changes.

#include "trace.h"

#include <string_view>

namespace peaklens {

// The layer's last path component becomes `name` (its sub-layers move with it); for a call
// of a loop ("model:253[3]"), every call of the loop is renamed, each keeping its number
// ("blocks[3]"). Throws Error when the name is empty, holds a '.', or a sibling has it already.
Trace renameLayer(const Trace &trace, std::uint32_t layer, std::string_view name);

// The layer's memory, ranges and sub-layers become its parent's. Throws Error for a
// top-level layer.
Trace mergeIntoParent(const Trace &trace, std::uint32_t layer);

} // namespace peaklens
