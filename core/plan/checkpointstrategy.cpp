#include "checkpointstrategy.h"

#include "core/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace peaklens {

namespace {

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return text;
}

std::string joined(const std::vector<std::string> &paths)
{
    std::string list;
    for (const std::string &path : paths)
        list += (list.empty() ? "" : ",") + path;
    return list;
}

// "a, b, c", shortened past 12 paths.
std::string listed(const std::vector<std::string> &paths)
{
    std::string list;
    for (std::size_t i = 0; i < paths.size() && i < 12; ++i)
        list += (list.empty() ? "" : ", ") + paths[i];
    if (paths.size() > 12)
        list += ", ... " + paths.back();
    return list;
}

} // namespace

CheckpointStrategy CheckpointStrategy::parse(std::string_view text)
{
    const std::string_view body = trimmed(text);
    CheckpointStrategy strategy;
    if (body.empty() || body == "none")
        return strategy;
    if (body == "all") {
        strategy.m_kind = Kind::All;
        return strategy;
    }
    if (body == "sqrt") {
        strategy.m_kind = Kind::SquareRoot;
        return strategy;
    }
    if (body.starts_with("every:")) {
        const std::string_view digits = body.substr(6);
        std::size_t k = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
        if (error != std::errc() || end != digits.data() + digits.size() || k == 0 || k > 1'000'000)
            throw Error("\"" + std::string(text) + "\" is not a strategy: every:K needs a whole number K of at least 1.");
        return every(k);
    }
    std::vector<std::string> paths;
    std::size_t start = 0;
    while (start <= body.size()) {
        const std::size_t comma = std::min(body.find(',', start), body.size());
        const std::string_view name = trimmed(body.substr(start, comma - start));
        if (name.empty() || name == "none" || name == "all" || name == "sqrt" || name.starts_with("every:"))
            throw Error("\"" + std::string(text) + "\" is not a strategy: say none, all, every:K or sqrt on its own, "
                        "or name layers as NAME,NAME,...");
        if (std::find(paths.begin(), paths.end(), name) == paths.end())
            paths.emplace_back(name);
        start = comma + 1;
    }
    return layers(std::move(paths));
}

CheckpointStrategy CheckpointStrategy::every(std::size_t k)
{
    CheckpointStrategy strategy;
    strategy.m_kind = k == 1 ? Kind::All : Kind::Every;
    strategy.m_every = std::max<std::size_t>(k, 1);
    return strategy;
}

CheckpointStrategy CheckpointStrategy::layers(std::vector<std::string> paths)
{
    CheckpointStrategy strategy;
    strategy.m_kind = paths.empty() ? Kind::None : Kind::Layers;
    strategy.m_paths = std::move(paths);
    return strategy;
}

const std::vector<CheckpointStrategy> &CheckpointStrategy::presets()
{
    static const std::vector<CheckpointStrategy> rules{parse("none"), parse("all"), every(2), every(3), parse("sqrt")};
    return rules;
}

std::string CheckpointStrategy::toString() const
{
    switch (m_kind) {
    case Kind::None: return "none";
    case Kind::All: return "all";
    case Kind::Every: return "every:" + std::to_string(m_every);
    case Kind::SquareRoot: return "sqrt";
    case Kind::Layers: return joined(m_paths);
    }
    return "none";
}

std::string CheckpointStrategy::label() const
{
    switch (m_kind) {
    case Kind::None: return "None";
    case Kind::All: return "All layers";
    case Kind::Every: {
        const std::size_t k = m_every;
        const char *suffix = k % 10 == 2 && k % 100 != 12 ? "nd" : k % 10 == 3 && k % 100 != 13 ? "rd" : "th";
        return "Every " + std::to_string(k) + suffix + " layer";
    }
    case Kind::SquareRoot: return "Every √N-th layer";
    case Kind::Layers: return std::to_string(m_paths.size()) + " chosen layers";
    }
    return {};
}

std::vector<bool> CheckpointStrategy::resolve(const std::vector<std::string> &chain,
                                              const std::vector<std::string> &toggleable) const
{
    std::vector<bool> toggles(toggleable.size(), false);
    const auto indexOf = [&](const std::string &path) {
        const auto found = std::find(toggleable.begin(), toggleable.end(), path);
        if (found == toggleable.end())
            throw Error("\"" + path + "\" is not among the layers that can be checkpointed (" + listed(toggleable) + ").");
        return static_cast<std::size_t>(found - toggleable.begin());
    };
    if (m_kind == Kind::Layers) {
        for (const std::string &path : m_paths)
            toggles[indexOf(path)] = true;
        return toggles;
    }
    std::size_t k = 0;
    if (m_kind == Kind::All || m_kind == Kind::Every)
        k = m_every;
    else if (m_kind == Kind::SquareRoot)
        k = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(std::max<std::size_t>(chain.size(), 1)))));
    for (std::size_t j = 0; k > 0 && j < chain.size(); j += k)
        toggles[indexOf(chain[j])] = true;
    return toggles;
}

} // namespace peaklens
