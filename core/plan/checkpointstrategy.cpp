// SPDX-License-Identifier: Apache-2.0
#include "checkpointstrategy.h"

#include "core/trace/frameclassifier.h"

#include "core/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <tuple>

namespace peaklens {

namespace {

using Item = CheckpointStrategy::Item;

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    return text;
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

bool isKeyword(std::string_view name)
{
    return name == "none" || name == "all" || name == "sqrt" || name.starts_with("every:") || name.starts_with("segments:");
}

// Units nest no deeper than this: a schedule deeper than the chain is long means nothing.
constexpr int kDeepestNesting = 64;

// The list form: ITEM,ITEM,... where ITEM is NAME, NAME..NAME or NAME..NAME(ITEM,...).
class ListParser
{
public:
    ListParser(std::string_view text, std::string_view body)
        : m_text(text)
        , m_body(body)
    {
    }

    std::vector<Item> parse()
    {
        std::vector<Item> items = list(0);
        if (m_pos < m_body.size())
            fail(m_body[m_pos] == ')' ? "a \")\" closes nothing" : "unexpected \"" + std::string(1, m_body[m_pos]) + "\"");
        return items;
    }

private:
    [[noreturn]] void fail(const std::string &why) const
    {
        throw Error("\"" + std::string(m_text) + "\" is not a strategy: " + why + ".");
    }

    std::vector<Item> list(int depth)
    {
        if (depth > kDeepestNesting)
            fail("units nest deeper than " + std::to_string(kDeepestNesting) + " levels");
        std::vector<Item> items;
        for (;;) {
            items.push_back(item(depth));
            if (m_pos < m_body.size() && m_body[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            return items;
        }
    }

    std::string name(std::string_view token) const
    {
        token = trimmed(token);
        if (token.empty() || isKeyword(token))
            fail("say none, all, every:K, segments:K or sqrt on its own, or list units as NAME, NAME..NAME or "
                 "NAME..NAME(UNIT,...), separated by commas");
        return std::string(token);
    }

    Item item(int depth)
    {
        const std::size_t end = std::min(m_body.find_first_of(",()[", m_pos), m_body.size());
        const std::string_view token = m_body.substr(m_pos, end - m_pos);
        m_pos = end;
        Item item;
        const std::size_t dots = token.find("..");
        item.first = name(token.substr(0, dots));
        if (dots != std::string_view::npos)
            item.last = name(token.substr(dots + 2));
        skipBlanks();
        if (m_pos < m_body.size() && m_body[m_pos] == '[') {
            if (!item.last.empty())
                fail("a policy [save:...], [bf16] or [offload] applies to one layer, not to the segment " + item.first + ".."
                     + item.last);
            policy(item);
            skipBlanks();
        }
        if (m_pos < m_body.size() && m_body[m_pos] == '(') {
            if (item.last.empty())
                fail("only a segment FIRST..LAST has inner units (\"" + item.first + "(\")");
            ++m_pos;
            item.inner = list(depth + 1);
            if (m_pos >= m_body.size() || m_body[m_pos] != ')')
                fail("the \"(\" after " + item.first + ".." + item.last + " is not closed");
            ++m_pos;
            skipBlanks();
        }
        return item;
    }

    void skipBlanks()
    {
        while (m_pos < m_body.size() && (m_body[m_pos] == ' ' || m_body[m_pos] == '\t'))
            ++m_pos;
    }

    // "[save:OP+OP+...]" (its operators as overload names, sorted), "[bf16]" or "[offload]"
    // after the item's layer, at m_pos.
    void policy(Item &item)
    {
        const std::string &layer = item.first;
        const std::size_t close = m_body.find(']', m_pos);
        if (close == std::string_view::npos)
            fail("the \"[\" after " + layer + " is not closed");
        const std::string_view inside = trimmed(m_body.substr(m_pos + 1, close - m_pos - 1));
        m_pos = close + 1;
        if (const auto form = keptFormNamed(inside)) {
            item.kept = *form;
            return;
        }
        constexpr std::string_view kSave = "save:";
        if (!inside.starts_with(kSave))
            fail("the policy of " + layer
                 + " is [save:OP+OP...], naming the operators whose outputs it keeps, [bf16], keeping what it saves "
                   "for backward in bfloat16, or [offload], keeping it in host memory");
        std::vector<std::string> ops;
        std::string_view rest = inside.substr(kSave.size());
        for (;;) {
            const std::size_t plus = rest.find('+');
            const std::string_view written = trimmed(rest.substr(0, plus));
            std::string op = operatorOverload(written);
            if (op.empty())
                fail("\"" + std::string(written) + "\" in the policy of " + layer
                     + " is not an operator overload: write it as PyTorch names it, aten.mm.default or aten.mul.Tensor");
            ops.push_back(std::move(op));
            if (plus == std::string_view::npos)
                break;
            rest.remove_prefix(plus + 1);
        }
        std::sort(ops.begin(), ops.end());
        ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
        item.saved = std::move(ops);
    }

    std::string_view m_text, m_body;
    std::size_t m_pos = 0;
};

std::string written(const std::vector<Item> &items)
{
    std::string text;
    for (const Item &item : items) {
        text += (text.empty() ? "" : ",") + item.first;
        if (!item.last.empty())
            text += ".." + item.last;
        if (item.kept != KeptForm::AsMade)
            text += "[" + std::string(keptFormName(item.kept)) + "]";
        if (!item.saved.empty()) {
            text += "[save:";
            for (std::size_t i = 0; i < item.saved.size(); ++i)
                text += (i ? "+" : "") + item.saved[i];
            text += "]";
        }
        if (!item.inner.empty())
            text += "(" + written(item.inner) + ")";
    }
    return text;
}

// Items resolved to positions in `toggleable` (or parts of them), checked: ends in order,
// inner units within their unit and ending before it, no overlap among siblings, parts
// on their own at the top level.
class Resolver
{
public:
    Resolver(const std::vector<std::string> &toggleable, const LayerParts &parts)
        : m_toggleable(toggleable)
        , m_parts(parts)
    {
    }

    std::vector<CheckpointUnit> units(const std::vector<Item> &items, const CheckpointUnit *parent) const
    {
        std::vector<CheckpointUnit> resolved;
        for (const Item &item : items) {
            const std::string name = item.first + (item.last.empty() ? "" : ".." + item.last);
            const auto [first, part] = indexOf(item.first);
            if ((!item.saved.empty() || item.kept != KeptForm::AsMade) && (part != kWholeLayer || parent))
                throw Error("\"" + name + "\": a policy applies to a layer of the chain on its own, not to "
                            + (parent ? "an inner unit." : "a module inside a layer."));
            if (part != kWholeLayer) {
                if (!item.last.empty() || !item.inner.empty() || parent)
                    throw Error("\"" + name + "\": " + item.first + " is a module inside " + m_toggleable[first]
                                + "; it is checkpointed on its own, not as part of a segment.");
                resolved.push_back({first, first, {}, part});
                continue;
            }
            CheckpointUnit unit{first,    item.last.empty() ? first : indexOf(item.last).first, {}, kWholeLayer, item.saved,
                                item.kept};
            if (!item.last.empty() && indexOf(item.last).second != kWholeLayer)
                throw Error("\"" + name + "\": " + item.last + " is a module inside a layer, so it cannot end a segment.");
            if (unit.last < unit.first)
                throw Error("\"" + name + "\" is not a segment: " + item.last + " runs before " + item.first + ".");
            if (parent && (unit.first < parent->first || unit.last >= parent->last))
                throw Error("\"" + name + "\" is not an inner unit of " + m_toggleable[parent->first] + ".."
                            + m_toggleable[parent->last] + ": it must lie within it and end before it ends.");
            unit.inner = units(item.inner, &unit);
            resolved.push_back(std::move(unit));
        }
        // A whole unit before the parts of its first layer, which then lie inside it.
        std::sort(resolved.begin(), resolved.end(), [](const CheckpointUnit &a, const CheckpointUnit &b) {
            const bool aPart = a.isPart(), bPart = b.isPart();
            return std::tie(a.first, aPart, a.last, a.part) < std::tie(b.first, bPart, b.last, b.part);
        });
        resolved.erase(std::unique(resolved.begin(), resolved.end()), resolved.end());
        std::optional<std::size_t> whole; // the last whole unit so far
        for (std::size_t i = 0; i < resolved.size(); ++i) {
            const CheckpointUnit &unit = resolved[i];
            if (whole && resolved[*whole].last >= unit.first) {
                if (unit.isPart())
                    throw Error(label(unit) + " lies inside " + label(resolved[*whole]) + ", which a unit already holds whole.");
                throw Error("The units " + label(resolved[*whole]) + " and " + label(unit) + " overlap.");
            }
            if (!unit.isPart()) {
                whole = i;
                continue;
            }
            for (std::size_t j = i + 1; j < resolved.size() && resolved[j].first == unit.first; ++j) {
                const std::string a = label(unit), b = label(resolved[j]);
                if (resolved[j].isPart() && (b.starts_with(a + ".") || a.starts_with(b + "."))) {
                    std::string message = "The units ";
                    message.append(a).append(" and ").append(b).append(" overlap: one module is inside the other.");
                    throw Error(message);
                }
            }
        }
        return resolved;
    }

private:
    // The position, and the part of it (kWholeLayer: the layer itself).
    std::pair<std::size_t, std::size_t> indexOf(const std::string &path) const
    {
        const auto found = std::find(m_toggleable.begin(), m_toggleable.end(), path);
        if (found != m_toggleable.end())
            return {static_cast<std::size_t>(found - m_toggleable.begin()), kWholeLayer};
        for (std::size_t k = 0; k < m_parts.size() && k < m_toggleable.size(); ++k) {
            const auto part = std::find(m_parts[k].begin(), m_parts[k].end(), path);
            if (part != m_parts[k].end())
                return {k, static_cast<std::size_t>(part - m_parts[k].begin())};
        }
        for (std::size_t k = 0; k < m_toggleable.size(); ++k) {
            if (path.starts_with(m_toggleable[k] + "."))
                throw Error("\"" + path + "\" is not a module of " + m_toggleable[k] + " that can be checkpointed on its own"
                            + (k < m_parts.size() && !m_parts[k].empty() ? " (" + listed(m_parts[k]) + ")" : std::string())
                            + ".");
        }
        throw Error("\"" + path + "\" is not among the layers that can be checkpointed (" + listed(m_toggleable) + ").");
    }

    std::string label(const CheckpointUnit &unit) const
    {
        if (unit.isPart())
            return m_parts[unit.first][unit.part];
        return unit.first == unit.last ? m_toggleable[unit.first] : m_toggleable[unit.first] + ".." + m_toggleable[unit.last];
    }

    const std::vector<std::string> &m_toggleable;
    const LayerParts &m_parts;
};

} // namespace

CheckpointStrategy CheckpointStrategy::parse(std::string_view text)
{
    const std::string_view body = trimmed(text);
    CheckpointStrategy strategy;
    if (body.empty() || body == "none")
        return strategy;
    if (body == "all")
        return every(1);
    if (body == "sqrt") {
        strategy.m_kind = Kind::SquareRoot;
        return strategy;
    }
    for (const std::string_view rule : {std::string_view("every:"), std::string_view("segments:")}) {
        if (!body.starts_with(rule))
            continue;
        const std::string_view digits = body.substr(rule.size());
        std::size_t k = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
        if (error != std::errc() || end != digits.data() + digits.size() || k == 0 || k > 1'000'000)
            throw Error("\"" + std::string(text) + "\" is not a strategy: " + std::string(rule)
                        + "K needs a whole number K of at least 1.");
        if (rule == "every:")
            return every(k);
        strategy.m_kind = Kind::Segments;
        strategy.m_every = k;
        return strategy;
    }
    return units(ListParser(text, body).parse());
}

CheckpointStrategy CheckpointStrategy::every(std::size_t k)
{
    CheckpointStrategy strategy;
    strategy.m_kind = k == 1 ? Kind::All : Kind::Every;
    strategy.m_every = std::max<std::size_t>(k, 1);
    return strategy;
}

CheckpointStrategy CheckpointStrategy::layers(const std::vector<std::string> &paths)
{
    std::vector<Item> items;
    items.reserve(paths.size());
    for (const std::string &path : paths)
        items.push_back({path, {}, {}});
    return units(std::move(items));
}

CheckpointStrategy CheckpointStrategy::units(std::vector<Item> items)
{
    CheckpointStrategy strategy;
    strategy.m_kind = items.empty() ? Kind::None : Kind::Units;
    strategy.m_items = std::move(items);
    return strategy;
}

CheckpointStrategy CheckpointStrategy::ofUnitTexts(const std::vector<std::string> &units)
{
    std::string text;
    for (const std::string &unit : units)
        text += (text.empty() ? "" : ",") + unit;
    return text.empty() ? CheckpointStrategy() : parse(text);
}

const std::vector<CheckpointStrategy> &CheckpointStrategy::presets()
{
    static const std::vector<CheckpointStrategy> rules{parse("none"), parse("all"), every(2), every(3), parse("sqrt")};
    return rules;
}

std::string CheckpointStrategy::toString() const
{
    switch (m_kind) {
    case Kind::None:
        return "none";
    case Kind::All:
        return "all";
    case Kind::Every:
        return "every:" + std::to_string(m_every);
    case Kind::Segments:
        return "segments:" + std::to_string(m_every);
    case Kind::SquareRoot:
        return "sqrt";
    case Kind::Units:
        return written(m_items);
    }
    return "none";
}

std::vector<std::string> CheckpointStrategy::unitTexts() const
{
    if (m_kind == Kind::None)
        return {};
    if (m_kind != Kind::Units)
        return {toString()};
    std::vector<std::string> texts;
    for (const Item &item : m_items)
        texts.push_back(written({item}));
    return texts;
}

std::string CheckpointStrategy::label() const
{
    switch (m_kind) {
    case Kind::None:
        return "None";
    case Kind::All:
        return "All layers";
    case Kind::Every: {
        const std::size_t k = m_every;
        const char *suffix = k % 10 == 2 && k % 100 != 12 ? "nd" : k % 10 == 3 && k % 100 != 13 ? "rd" : "th";
        return "Every " + std::to_string(k) + suffix + " layer";
    }
    case Kind::Segments:
        return "Segments of " + std::to_string(m_every) + " layers";
    case Kind::SquareRoot:
        return "Segments of √N layers";
    case Kind::Units: {
        const bool single = std::all_of(m_items.begin(), m_items.end(), [](const Item &item) { return item.last.empty(); });
        return std::to_string(m_items.size()) + (single ? " chosen layers" : " checkpoint units");
    }
    }
    return {};
}

CheckpointSchedule CheckpointStrategy::schedule(const std::vector<std::string> &chain, const std::vector<std::string> &toggleable,
                                                const LayerParts &parts) const
{
    if (m_kind == Kind::Units)
        return Resolver(toggleable, parts).units(m_items, nullptr);
    std::vector<Item> items;
    const std::size_t n = chain.size();
    if (m_kind == Kind::All || m_kind == Kind::Every) {
        for (std::size_t j = 0; j < n; j += m_every)
            items.push_back({chain[j], {}, {}});
    } else if (m_kind == Kind::Segments || m_kind == Kind::SquareRoot) {
        const std::size_t k =
            m_kind == Kind::Segments
                ? m_every
                : static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(std::max<std::size_t>(n, 1)))));
        for (std::size_t j = 0; j + k < n; j += k)
            items.push_back({chain[j], chain[j + k - 1], {}});
    }
    CheckpointSchedule units = Resolver(toggleable, parts).units(items, nullptr);
    // A rule's segment is the chain's layers from its first to its last, one after another.
    for (const CheckpointUnit &unit : units) {
        for (std::size_t p = unit.first; p <= unit.last; ++p) {
            if (std::find(chain.begin(), chain.end(), toggleable[p]) == chain.end())
                throw Error(toggleable[p] + " runs between the chain's layers " + toggleable[unit.first] + " and "
                            + toggleable[unit.last] + ", so they cannot form one segment.");
        }
    }
    return units;
}

std::vector<bool> CheckpointStrategy::resolve(const std::vector<std::string> &chain,
                                              const std::vector<std::string> &toggleable) const
{
    return toggledPositions(schedule(chain, toggleable), toggleable.size());
}

CheckpointStrategy CheckpointStrategy::of(const CheckpointSchedule &schedule, const std::vector<std::string> &paths,
                                          const LayerParts &parts)
{
    const auto itemsOf = [&](const auto &self, const std::vector<CheckpointUnit> &units) -> std::vector<Item> {
        std::vector<Item> items;
        for (const CheckpointUnit &unit : units) {
            if (unit.isPart()) {
                items.push_back({parts.at(unit.first).at(unit.part), {}, {}});
                continue;
            }
            Item item{paths.at(unit.first),
                      unit.first == unit.last && unit.inner.empty() ? std::string() : paths.at(unit.last),
                      {},
                      unit.saved,
                      unit.kept};
            item.inner = self(self, unit.inner);
            items.push_back(std::move(item));
        }
        return items;
    };
    return units(itemsOf(itemsOf, schedule));
}

bool keptByPolicies(std::string_view op)
{
    const std::size_t first = op.find('.'), second = op.find('.', first == std::string_view::npos ? op.size() : first + 1);
    if (second == std::string_view::npos)
        return false;
    const std::string_view name = op.substr(first + 1, second - first - 1);
    const bool inPlace = name.ends_with('_') && !name.ends_with("__");
    return !inPlace && !isFactoryOperator(std::string(op.substr(0, first)) + "::" + std::string(name));
}

std::string operatorOverload(std::string_view op)
{
    const auto isName = [](std::string_view name) {
        return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        });
    };
    std::string_view space, name, overload;
    if (const std::size_t colons = op.find("::"); colons != std::string_view::npos) {
        space = op.substr(0, colons);
        name = op.substr(colons + 2);
        std::size_t dot = name.find('.');
        // A snapshot's dispatcher frame (at::_ops::mul_Tensor) joins the overload on with
        // an underscore: operator names are lower case, overload names begin upper case.
        for (std::size_t i = 1; dot == std::string_view::npos && i + 1 < name.size(); ++i) {
            if (name[i] == '_' && name[i + 1] >= 'A' && name[i + 1] <= 'Z')
                dot = i;
        }
        overload = dot == std::string_view::npos ? std::string_view("default") : name.substr(dot + 1);
        name = name.substr(0, std::min(dot, name.size()));
    } else {
        const std::size_t first = op.find('.'), second = op.find('.', first == std::string_view::npos ? op.size() : first + 1);
        if (second == std::string_view::npos)
            return {};
        space = op.substr(0, first);
        name = op.substr(first + 1, second - first - 1);
        overload = op.substr(second + 1);
    }
    if (!isName(space) || !isName(name) || !isName(overload))
        return {};
    std::string out;
    out.append(space).append(".").append(name).append(".").append(overload);
    return out;
}

} // namespace peaklens
