#pragma once
// A module in the model's tree, named by its path ("blocks.3.attn").

#include <cstdint>
#include <string>
#include <string_view>

namespace peaklens {

// "No layer" in event and range columns; also one past the largest layer index.
inline constexpr std::uint32_t kNoLayer = (1u << 22) - 1;

struct Layer
{
    std::string path;
    std::string kind;                 // module type, e.g. "TransformerBlock"
    std::uint32_t parent = kNoLayer;  // index of the enclosing module
    std::int64_t parameterBytes = 0;

    // The last component of the path: "attn" for "blocks.3.attn".
    std::string_view name() const
    {
        auto dot = path.rfind('.');
        return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
    }
    bool operator==(const Layer &) const = default;
};

} // namespace peaklens
