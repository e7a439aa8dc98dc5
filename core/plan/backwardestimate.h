// SPDX-License-Identifier: Apache-2.0
#pragma once
// Backward spans for chain layers a trace ranged no backward for (traces imported without
// PeakLens's helper), estimated from when the blocks their forwards left were freed.

#include "chainselection.h"

namespace peaklens {

// For the layers of `chain` (one pass, within [begin, end)) without a backward span: a
// layer's backward begins with the first free of the blocks its forward left for the
// backward (its output, which the next layer saved and released as its own backward
// ended) and runs until the previous layer's begins; the first layer's ends with the last
// of them. False when the pass has no backward.
bool estimateBackwardSpans(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::int64_t begin,
                           std::int64_t end, std::vector<UnitSpans> &chain);

} // namespace peaklens
