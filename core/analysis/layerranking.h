#pragma once
// The order in which layers are listed: largest activation bytes first, then module path.

#include "core/trace/trace.h"
#include "layerstats.h"

#include <vector>

namespace peaklens {

// Indices into stats, leaving out layers that never ran and hold no activations.
std::vector<std::size_t> rankLayersByActivation(const Trace &trace, const std::vector<LayerStats> &stats);

} // namespace peaklens
