#include "marker.h"

#include <array>

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
    for (std::size_t i = 0; i < kNames.size(); ++i) {
        if (kNames[i] == name)
            return static_cast<MarkerKind>(i);
    }
    return std::nullopt;
}

} // namespace peaklens
