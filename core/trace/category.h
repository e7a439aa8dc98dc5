#pragma once
// What a block of memory holds. The codes follow PyTorch's memory-profiler categories
// (PARAMETER=0 ... AUTOGRAD_DETAIL=6) so importers map them one to one.

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
};
inline constexpr int kCategoryCount = 8;

std::string_view categoryName(Category category);
std::optional<Category> parseCategory(std::string_view name);

} // namespace peaklens
