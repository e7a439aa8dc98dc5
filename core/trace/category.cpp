#include "category.h"

#include <array>

namespace peaklens {

namespace {
constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "parameter", "optimizer_state", "input", "temporary",
    "activation", "gradient", "autograd_detail", "unknown",
};
} // namespace

std::string_view categoryName(Category category)
{
    return kCategoryNames.at(static_cast<std::size_t>(category));
}

std::optional<Category> parseCategory(std::string_view name)
{
    for (std::size_t i = 0; i < kCategoryNames.size(); ++i) {
        if (kCategoryNames[i] == name)
            return static_cast<Category>(i);
    }
    return std::nullopt;
}

} // namespace peaklens
