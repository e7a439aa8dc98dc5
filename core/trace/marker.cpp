// SPDX-License-Identifier: Apache-2.0
#include "marker.h"

#include "enumnames.h"

namespace peaklens {

namespace {
constexpr std::array<std::string_view, kMarkerKindCount> kNames = {"oom", "snapshot"};
} // namespace

std::string_view markerKindName(MarkerKind kind)
{
    return kNames.at(static_cast<std::size_t>(kind));
}

std::optional<MarkerKind> parseMarkerKind(std::string_view name)
{
    return enumFromName<MarkerKind>(kNames, name);
}

} // namespace peaklens
