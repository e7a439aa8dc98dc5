// SPDX-License-Identifier: Apache-2.0
#include "layermatch.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>

namespace peaklens {

namespace {

// A part named from a call site: "model:253[3]" is file "model", line 253, rest "[3]".
struct SitePart
{
    std::string_view file;
    int line = 0;
    std::string_view rest; // the loop index and the "~2" of a namesake
};

std::optional<SitePart> sitePart(std::string_view name)
{
    const auto colon = name.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
        return std::nullopt;
    const std::string_view after = name.substr(colon + 1);
    SitePart part{name.substr(0, colon), 0, {}};
    const auto [end, error] = std::from_chars(after.data(), after.data() + after.size(), part.line);
    if (error != std::errc() || end == after.data())
        return std::nullopt;
    part.rest = after.substr(static_cast<std::size_t>(end - after.data()));
    if (!part.rest.empty() && part.rest.front() != '[' && part.rest.front() != '~')
        return std::nullopt;
    return part;
}

} // namespace

std::vector<std::string> layerMatchKeys(const Trace &trace)
{
    const std::size_t count = trace.layers.size();
    // Per (parent, file): the distinct lines its children were called from, in order.
    std::map<std::pair<std::uint32_t, std::string_view>, std::vector<int>> lines;
    std::vector<std::optional<SitePart>> parts(count);
    for (std::size_t l = 0; l < count; ++l) {
        parts[l] = sitePart(trace.layers[l].name());
        if (parts[l])
            lines[{trace.layers[l].parent, parts[l]->file}].push_back(parts[l]->line);
    }
    for (auto &[key, list] : lines) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    const auto ownKey = [&](std::size_t layer) {
        const Layer &info = trace.layers[layer];
        const auto &part = parts[layer];
        if (!part)
            return std::string(info.name());
        const std::vector<int> &siblings = lines[{info.parent, part->file}];
        const auto rank = std::lower_bound(siblings.begin(), siblings.end(), part->line) - siblings.begin();
        return std::string(part->file) + "#" + std::to_string(rank) + std::string(part->rest);
    };
    // Parents may come after their children in the table: each key is made after its
    // parent's, walking up iteratively (a damaged table's cycle of parents is cut where it
    // closes).
    std::vector<std::string> keys(count);
    std::vector<std::uint8_t> made(count, 0);
    std::vector<std::uint32_t> pending, walkOf(count, UINT32_MAX);
    for (std::uint32_t l = 0; l < count; ++l) {
        pending.clear();
        for (std::uint32_t at = l; at < count && !made[at] && walkOf[at] != l; at = trace.layers[at].parent) {
            walkOf[at] = l;
            pending.push_back(at);
        }
        for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
            const std::uint32_t parent = trace.layers[*it].parent;
            keys[*it] = (parent < count && made[parent] ? keys[parent] + "." : std::string()) + ownKey(*it);
            made[*it] = 1;
        }
    }
    return keys;
}

} // namespace peaklens
