// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a block of memory holds. The codes follow PyTorch's memory-profiler categories
// (PARAMETER=0 ... AUTOGRAD_DETAIL=6, 7 for none) so importers map them one to one;
// BeforeTrace is PeakLens's own.

#include <cstdint>
#include <optional>
#include <string_view>

namespace peaklens {

enum class Category : std::uint8_t {
    Parameter = 0,
    OptimizerState = 1,
    Input = 2,
    Temporary = 3,
    Activation = 4,
    Gradient = 5,
    AutogradDetail = 6,
    Unknown = 7,
    // Live when the recording began, or freed by the trace without being allocated in it:
    // what memory_viz draws as memory from before the snapshot. Its content is not known.
    BeforeTrace = 8,
};
inline constexpr int kCategoryCount = 9;
// The codes files written by PyTorch's memory profiler use: PARAMETER=0 ... 7 for none.
inline constexpr int kProfilerCategoryCount = 8;

std::string_view categoryName(Category category);
std::optional<Category> parseCategory(std::string_view name);

} // namespace peaklens
