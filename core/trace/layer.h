// SPDX-License-Identifier: Apache-2.0
#pragma once
// A module in the model's tree, named by its path ("blocks.3.attn").

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace peaklens {

// "No layer" in event and range columns; also one past the largest layer index.
inline constexpr std::uint32_t kNoLayer = (1u << 22) - 1;

struct Layer
{
    std::string path;
    std::string kind;                // module type, e.g. "TransformerBlock"
    std::uint32_t parent = kNoLayer; // index of the enclosing module
    std::int64_t parameterBytes = 0;

    // The last component of the path: "attn" for "blocks.3.attn".
    std::string_view name() const
    {
        auto dot = path.rfind('.');
        return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
    }
    bool operator==(const Layer &) const = default;
};

// One call of a loop, as layers named from call stacks are: "model:253[3]" is call 3 of
// the loop "model:253", a sibling of its other calls.
struct LoopCall
{
    std::string_view loop;
    long index = 0;
};

inline std::optional<LoopCall> loopCall(std::string_view name)
{
    const auto bracket = name.rfind('[');
    if (!name.ends_with(']') || bracket == std::string_view::npos || bracket == 0 || bracket + 2 >= name.size())
        return std::nullopt;
    LoopCall call{name.substr(0, bracket), 0};
    const char *first = name.data() + bracket + 1, *last = name.data() + name.size() - 1;
    const auto [end, error] = std::from_chars(first, last, call.index);
    if (error != std::errc() || end != last || *first == '-' || *first == '+')
        return std::nullopt;
    return call;
}

} // namespace peaklens
