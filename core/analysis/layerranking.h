// SPDX-License-Identifier: Apache-2.0
#pragma once
// The order in which layers are listed: largest activation bytes first, then module path.

#include "core/trace/trace.h"
#include "layerstats.h"

#include <string_view>
#include <vector>

namespace peaklens {

// Text order with runs of digits compared as numbers: "model:253[2]" before "model:253[10]".
bool naturalLess(std::string_view a, std::string_view b);

// Indices into stats, leaving out layers that never ran and hold no activations; equal
// activations in naturalLess order of their paths.
std::vector<std::size_t> rankLayersByActivation(const Trace &trace, const std::vector<LayerStats> &stats);

} // namespace peaklens
