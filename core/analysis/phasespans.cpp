// SPDX-License-Identifier: Apache-2.0
#include "phasespans.h"

#include <algorithm>
#include <map>

namespace peaklens {

std::vector<PhaseSpan> phaseSpans(const Trace &trace)
{
    std::map<std::pair<std::int64_t, Phase>, std::pair<std::int64_t, std::int64_t>> spans;
    for (const Range &range : trace.ranges) {
        if (range.phase == Phase::Other)
            continue;
        auto [it, inserted] = spans.try_emplace({range.step, range.phase}, range.beginNs, range.endNs);
        if (!inserted) {
            it->second.first = std::min(it->second.first, range.beginNs);
            it->second.second = std::max(it->second.second, range.endNs);
        }
    }
    std::vector<PhaseSpan> out;
    out.reserve(spans.size());
    for (const auto &[key, span] : spans)
        out.push_back({span.first, span.second, key.second, key.first});
    std::sort(out.begin(), out.end(), [](const PhaseSpan &a, const PhaseSpan &b) { return a.beginNs < b.beginNs; });
    return out;
}

} // namespace peaklens
