// SPDX-License-Identifier: Apache-2.0
#include "budget.h"

#include "planner.h"

#include "core/error.h"
#include "core/trace/units.h"

#include <cmath>
#include <cstdio>

namespace peaklens {

Budget Budget::parse(const std::string &text)
{
    if (text.ends_with('%')) {
        char *end = nullptr;
        const std::string number = text.substr(0, text.size() - 1);
        const double percent = std::strtod(number.c_str(), &end);
        if (number.empty() || *end || !(percent > 0) || percent > 100)
            throw Error("\"" + text + "\" is not a budget: a share of the measured peak is more than 0 % and at most 100 %.");
        return {Kind::PeakShare, percent / 100};
    }
    const auto bytes = parseBytes(text);
    if (!bytes || *bytes <= 0)
        throw Error("\"" + text + "\" is not a budget; write it like 6GiB, 512MiB or 70%.");
    return {Kind::Bytes, static_cast<double>(*bytes)};
}

Budget Budget::activationShare(double share)
{
    if (!(share >= 0 && share <= 1))
        throw Error("An activation budget is a share from 0 (free every activation checkpointing can) to 1 (keep them all).");
    return {Kind::ActivationShare, share};
}

std::int64_t Budget::bytes(const CostModel &model) const
{
    const double measured = static_cast<double>(predict(model, CheckpointSchedule{}).peakBytes);
    switch (kind) {
    case Kind::Bytes:
        return static_cast<std::int64_t>(value);
    case Kind::PeakShare:
        return static_cast<std::int64_t>(std::floor(value * measured));
    case Kind::ActivationShare: {
        const double lowest = static_cast<double>(lowestPeakPlan(model).prediction.peakBytes);
        return static_cast<std::int64_t>(std::floor(lowest + value * (measured - lowest)));
    }
    }
    return 0;
}

std::string Budget::describe(std::int64_t bytes) const
{
    const std::string inBytes = formatBytes(bytes);
    char share[32];
    std::snprintf(share, sizeof share, "%g", kind == Kind::PeakShare ? value * 100 : value);
    switch (kind) {
    case Kind::Bytes:
        return inBytes;
    case Kind::PeakShare:
        return std::string(share) + " % of the measured peak (" + inBytes + ")";
    case Kind::ActivationShare:
        return "activation budget " + std::string(share) + " (" + inBytes + ")";
    }
    return inBytes;
}

} // namespace peaklens
