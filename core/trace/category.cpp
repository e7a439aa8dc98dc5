// SPDX-License-Identifier: Apache-2.0
#include "category.h"

#include "enumnames.h"

namespace peaklens {

namespace {
constexpr std::array<std::string_view, kCategoryCount> kCategoryNames = {
    "parameter", "optimizer_state", "input", "temporary", "activation", "gradient", "autograd_detail", "unknown", "before_trace",
};
} // namespace

std::string_view categoryName(Category category)
{
    return kCategoryNames.at(static_cast<std::size_t>(category));
}

std::optional<Category> parseCategory(std::string_view name)
{
    return enumFromName<Category>(kCategoryNames, name);
}

} // namespace peaklens
