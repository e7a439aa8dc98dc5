// SPDX-License-Identifier: Apache-2.0
#include "planner.h"

#include "schedulesearch.h"

#include "core/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

namespace peaklens {

namespace {

struct State
{
    std::int64_t freed;   // bytes freed by the checkpoints chosen so far
    std::int64_t cost;    // time they add
    std::uint32_t from;   // index of the state it came from
    std::uint32_t option; // the chosen layer's option (LayerOption) it took
};

// One way to run a chain layer: plainly, checkpointed whole, or with some of its parts
// checkpointed. What it frees for the layers after it, what it adds, and the highest
// point of its own backward before what the layers before it free.
struct LayerOption
{
    std::int64_t saving = 0, cost = 0, ownPeak = INT64_MIN;
    bool whole = false;
    std::uint64_t parts = 0;
    std::vector<std::string> saved;   // a whole layer's per-op policy
    KeptForm kept = KeptForm::AsMade; // Host: offloaded, no checkpoint
};

// Parts the planner combines per layer: the direct children that free something, the
// ones that free most.
constexpr std::size_t kMostPlannedParts = 6;

// The layer checkpointed whole with each of its leading per-op policies.
void addPolicyOptions(const ChainLayer &layer, const LayerOption &whole, std::vector<LayerOption> &options)
{
    for (std::vector<std::string> &saved : leadingPolicies(layer.operators)) {
        LayerOption option = whole;
        option.saving -= layer.policyKeptBytes(saved);
        option.cost += layer.policyNs(saved);
        option.saved = std::move(saved);
        if (option.saving > 0)
            options.push_back(std::move(option));
    }
}

// The layer offloaded to host memory: what predict() frees for it (its saving and its
// input where only it kept that) and the copies' time (of its input too).
LayerOption offloadOption(const CostModel &model, std::size_t k, std::int64_t forwardPeak)
{
    LayerOption option;
    option.saving = model.keptElsewhereBytes(k);
    option.cost = model.hostRoundTripNs(model.keptElsewhereSaving(k, KeptForm::Host, false));
    option.ownPeak = std::max(model.layers[k].offloadedBackwardPeakBytes, forwardPeak);
    option.kept = KeptForm::Host;
    return option;
}

std::vector<LayerOption> optionsOf(const CostModel &model, std::size_t k, const PlannerOptions &planner)
{
    const ChainLayer &layer = model.layers[k];
    const bool perOpPolicies = planner.perOpPolicies;
    // Its forward after its first part's has ended (before what the layers before it
    // free), which only its parts' checkpoints lower.
    const std::int64_t forwardPeak = layer.forwardPeakWithParts(0).first;
    std::vector<LayerOption> options{{0, 0, std::max(layer.backwardLevelPeakBytes, forwardPeak), false, 0, {}}};
    if (layer.savingBytes > 0) {
        options.push_back(
            {layer.savingBytes,
             layer.recomputeNs,
             std::max({layer.recomputePeakBytes, layer.backwardPeakBytes, layer.backwardLevelPeakBytes, forwardPeak}),
             true,
             0,
             {}});
        if (perOpPolicies) {
            const LayerOption whole = options.back();
            addPolicyOptions(layer, whole, options);
        }
        if (planner.offload)
            options.push_back(offloadOption(model, k, forwardPeak));
    }
    std::vector<std::size_t> children;
    for (std::size_t c = 0; c < layer.parts.size(); ++c) {
        const std::string &path = layer.parts[c].path;
        if (layer.parts[c].savingBytes > 0 && path.find('.', layer.path.size() + 1) == std::string::npos)
            children.push_back(c);
    }
    std::stable_sort(children.begin(), children.end(),
                     [&](std::size_t a, std::size_t b) { return layer.parts[a].savingBytes > layer.parts[b].savingBytes; });
    children.resize(std::min(children.size(), kMostPlannedParts));
    for (std::uint32_t subset = 1; subset < (1u << children.size()); ++subset) {
        LayerOption option;
        for (std::size_t i = 0; i < children.size(); ++i) {
            if (subset >> i & 1u) {
                option.parts |= std::uint64_t(1) << children[i];
                option.cost += layer.parts[children[i]].recomputeNs;
            }
        }
        option.saving = layer.partSavingBytes(option.parts);
        option.ownPeak =
            std::max(layer.backwardPeakWithParts(option.parts).first, layer.forwardPeakWithParts(option.parts).first);
        options.push_back(option);
    }
    // Drop the options another beats on all three counts.
    std::vector<LayerOption> kept;
    for (const LayerOption &option : options) {
        const bool beaten = std::any_of(options.begin(), options.end(), [&](const LayerOption &other) {
            return &other != &option && other.saving >= option.saving && other.cost <= option.cost
                   && other.ownPeak <= option.ownPeak
                   && (other.saving > option.saving || other.cost < option.cost || other.ownPeak < option.ownPeak
                       || &other < &option);
        });
        if (!beaten)
            kept.push_back(option);
    }
    return kept;
}

// The states a layer's options make of `front`, as the front after the layer: those no
// other beats (more freed for no more cost), sorted by freed bytes. Option o is taken after
// the states from firstFitting[o] on, those whose freed bytes let its constraints hold.
//
// `front` is sorted by freed bytes with costs rising, and an option adds the same saving
// and cost to each state, so each option's states are a sorted run. The runs are walked
// down together, most freed first (the cheaper among equals): a state is kept when it costs
// less than every state kept before it. Costs fall along a run, so a run's states that
// cost no less than the cheapest kept are passed over without comparing runs: the walk
// costs O(states + kept × options), with no sort and nothing stored but what is kept.
void nextFront(const std::vector<State> &front, const std::vector<LayerOption> &options,
               const std::vector<std::size_t> &firstFitting, std::vector<std::size_t> &heads, std::vector<State> &out)
{
    out.clear();
    heads.assign(options.size(), front.size()); // each run's next state is the one before its head
    const auto stateAt = [&](std::uint32_t o, std::size_t s) -> State {
        return {front[s].freed + options[o].saving, front[s].cost + options[o].cost, static_cast<std::uint32_t>(s), o};
    };
    const auto before = [](const State &a, const State &b) {
        return a.freed > b.freed || (a.freed == b.freed && a.cost < b.cost);
    };
    std::int64_t cheapest = INT64_MAX;
    for (;;) {
        // The run whose next state comes first, and the next state of the others that does.
        std::optional<State> best, second;
        for (std::uint32_t o = 0; o < options.size(); ++o) {
            std::size_t &head = heads[o];
            while (head > firstFitting[o] && front[head - 1].cost + options[o].cost >= cheapest)
                --head;
            if (head == firstFitting[o])
                continue;
            const State next = stateAt(o, head - 1);
            if (!best || before(next, *best)) {
                second = best;
                best = next;
            } else if (!second || before(next, *second)) {
                second = next;
            }
        }
        if (!best)
            break;
        // The best run's states are kept while they come before the others' (each costs less
        // than the one before it along the run).
        const std::uint32_t o = best->option;
        std::size_t &head = heads[o];
        do {
            out.push_back(stateAt(o, --head));
        } while (head > firstFitting[o] && (!second || before(stateAt(o, head - 1), *second)));
        cheapest = out.back().cost;
    }
    std::reverse(out.begin(), out.end());
}

// Thins a front to at most `limit` states, keeping the cheapest of each band of freed bytes
// and the one that frees most. Every state kept is a real plan.
void thinFront(std::vector<State> &front, std::size_t limit)
{
    if (front.size() <= limit || limit < 2)
        return;
    const long double low = static_cast<long double>(front.front().freed);
    const long double span = static_cast<long double>(front.back().freed) - low + 1;
    std::size_t kept = 0;
    std::int64_t lastBand = -1;
    for (std::size_t i = 0; i + 1 < front.size(); ++i) {
        const auto band = static_cast<std::int64_t>((static_cast<long double>(front[i].freed) - low) * (limit - 1) / span);
        if (band != lastBand) {
            front[kept++] = front[i];
            lastBand = band;
        }
    }
    front[kept++] = front.back();
    front.resize(kept);
}

// The cheapest checkpoint set whose predicted peak is at most budget, or nothing. A
// dynamic programme over the chain: after each layer, the front of (bytes freed, time
// added) over the choices so far; the constraints of predict() are checked as it goes.
// States kept per layer: the option's limit, lowered on long chains so that one programme
// stays near 2M state updates (a search runs a dozen of them).
std::size_t stateLimit(const CostModel &model, const PlannerOptions &options)
{
    constexpr std::size_t kWork = 2'000'000, kFewest = 256;
    const std::size_t n = std::max<std::size_t>(model.layers.size(), 1);
    return std::min(options.maxStates, std::max(kFewest, kWork / n));
}

// `runnerUp`, when given, gets the added time of the next cheapest plan that fits (the
// front's second state), if there is one.
std::optional<CheckpointSchedule> cheapestPerLayer(const CostModel &model, const std::vector<std::vector<LayerOption>> &options,
                                                   std::int64_t budget, const PlannerOptions &plannerOptions,
                                                   std::optional<std::int64_t> *runnerUp = nullptr)
{
    const std::size_t n = model.layers.size();
    const std::size_t limit = stateLimit(model, plannerOptions);
    std::vector<std::int64_t> segments(n + 1, INT64_MIN);
    for (std::size_t p = 0; p <= n; ++p)
        segments[p] = std::max(model.forwardBeforePartsBytes(p), model.gapPeakBytes[p]);
    const auto segmentFits = [&](std::size_t p, std::int64_t freed) {
        return segments[p] == INT64_MIN || segments[p] - freed <= budget;
    };
    if (!segmentFits(0, 0))
        return std::nullopt;
    std::vector<State> front{{0, 0, 0, 0}}, next;
    std::vector<std::size_t> firstFitting, heads;
    // Per layer, where each state of the front after it came from: enough to rebuild a plan.
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> history(n);
    for (std::size_t k = 0; k < n; ++k) {
        // An option's recompute and backward must fit, with what the layers before it free;
        // more freed never breaks that, so it holds from a state of the front on.
        firstFitting.clear();
        for (const LayerOption &option : options[k]) {
            const auto fits = [&](const State &state) {
                return (option.ownPeak == INT64_MIN || option.ownPeak - state.freed <= budget)
                       && segmentFits(k + 1, state.freed + option.saving);
            };
            firstFitting.push_back(
                static_cast<std::size_t>(std::partition_point(front.begin(), front.end(), std::not_fn(fits)) - front.begin()));
        }
        nextFront(front, options[k], firstFitting, heads, next);
        thinFront(next, limit);
        front.swap(next);
        if (front.empty())
            return std::nullopt;
        history[k].reserve(front.size());
        for (const State &state : front)
            history[k].emplace_back(state.from, state.option);
    }
    if (runnerUp && front.size() > 1)
        *runnerUp = front[1].cost;
    // The cheapest final state is the first: costs rise with freed bytes along the front.
    CheckpointSchedule schedule;
    std::uint32_t s = 0;
    for (std::size_t k = n; k > 0; --k) {
        const auto [from, o] = history[k - 1][s];
        const LayerOption &option = options[k - 1][o];
        if (option.whole)
            schedule.push_back({k - 1, k - 1, {}, kWholeLayer, option.saved});
        else if (option.kept != KeptForm::AsMade)
            schedule.push_back({k - 1, k - 1, {}, kWholeLayer, {}, option.kept});
        for (std::size_t c = 0; c < 64; ++c) {
            if (option.parts >> (63 - c) & 1u)
                schedule.push_back({k - 1, k - 1, {}, 63 - c});
        }
        s = from;
    }
    std::reverse(schedule.begin(), schedule.end());
    return schedule;
}

// The smallest budget in [low, high] for which `accept` holds; accept(high) must hold.
template<typename Accept>
std::int64_t smallestBudget(std::int64_t low, std::int64_t high, Accept accept)
{
    while (low < high) {
        const std::int64_t middle = low + (high - low) / 2;
        if (accept(middle))
            high = middle;
        else
            low = middle + 1;
    }
    return high;
}

// Whether any set of checkpoints fits the budget. Freeing more never breaks a later
// constraint, so per layer the option that frees most among those whose own backward
// fits is the best chance: O(N).
bool anyFitsPerLayer(const CostModel &model, const std::vector<std::vector<LayerOption>> &options, std::int64_t budget)
{
    const auto segmentFits = [&](std::size_t p, std::int64_t freed) {
        const std::int64_t peak = std::max(model.forwardBeforePartsBytes(p), model.gapPeakBytes[p]);
        return peak == INT64_MIN || peak - freed <= budget;
    };
    std::int64_t freed = 0;
    if (!segmentFits(0, 0))
        return false;
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        std::optional<std::int64_t> most;
        for (const LayerOption &option : options[k]) {
            if (option.ownPeak == INT64_MIN || option.ownPeak - freed <= budget)
                most = std::max(most.value_or(INT64_MIN), option.saving);
        }
        if (!most)
            return false;
        freed += *most;
        if (!segmentFits(k + 1, freed))
            return false;
    }
    return true;
}

// The cheapest schedule for a budget: per layer on any chain (exact, planForBudget's
// dynamic programme), and over segments and multi-level schedules on chains of up to
// ScheduleSearch::kMostLayers layers; the one that adds less time, per layer on a tie.
// The schedule search counts memory in slots: rounded down, its schedule fits; rounded
// up, its schedule adds no more time than the best that fits, and is that best when it
// fits. Where neither settles it, slots eight times finer are searched, up to
// PlannerOptions::finestSlots.
class Search
{
public:
    Search(const CostModel &model, const PlannerOptions &options)
        : m_model(model)
        , m_options(options)
    {
        if (!model.layers.empty() && model.layers.size() <= ScheduleSearch::kMostLayers)
            refine();
        for (std::size_t k = 0; k < model.layers.size(); ++k) {
            m_layerOptions.push_back(optionsOf(model, k, options));
            if (options.perOpPolicies || options.offload)
                m_plainOptions.push_back(optionsOf(model, k, PlannerOptions{}));
        }
    }

    // `runnerUp`, when given, gets the added time of the next cheapest plan the searches
    // found that fits.
    std::optional<CheckpointSchedule> cheapestWithin(std::int64_t budget, std::optional<std::int64_t> *runnerUp = nullptr)
    {
        std::optional<CheckpointSchedule> best;
        std::optional<std::int64_t> second;
        best = cheapestPerLayer(m_model, m_layerOptions, budget, m_options, &second);
        // Past maxStates the states are thinned, and more choices per layer thin them more:
        // the plan without policies or offload stands where it comes out cheaper.
        if (!m_plainOptions.empty()) {
            auto plain = cheapestPerLayer(m_model, m_plainOptions, budget, m_options, nullptr);
            if (plain && (!best || predict(m_model, *plain).addedTimeNs < predict(m_model, *best).addedTimeNs)) {
                if (best)
                    second = predict(m_model, *best).addedTimeNs;
                best = std::move(plain);
            }
        }
        if (!m_levels.empty()) {
            std::optional<std::int64_t> other;
            auto schedule =
                cheapestSchedule(budget, best ? std::optional(predict(m_model, *best).addedTimeNs) : std::nullopt, &other);
            if (schedule && (!best || *schedule != *best)) {
                const std::int64_t added = predict(m_model, *schedule).addedTimeNs;
                if (!best || added < predict(m_model, *best).addedTimeNs) {
                    if (best)
                        second = predict(m_model, *best).addedTimeNs;
                    if (other && (!second || *other < *second))
                        second = other;
                    best = std::move(schedule);
                } else if (!second || added < *second) {
                    second = added;
                }
            }
        }
        if (runnerUp)
            *runnerUp = second;
        return best;
    }

    // The lowest peak any schedule reaches. Bisected with the coarsest slots between the
    // lowest budget the search rounded up finds anything for (below it nothing fits) and
    // the lowest one rounded down fits (a plan fits it); where those differ, again between
    // them with finer slots.
    std::int64_t lowestPeak()
    {
        const std::int64_t measured = predict(m_model, CheckpointSchedule{}).peakBytes;
        // Before the chain's first layer nothing is freed: no peak goes below that.
        const std::int64_t before =
            std::max(m_model.forwardBeforePartsBytes(0), m_model.gapPeakBytes.empty() ? INT64_MIN : m_model.gapPeakBytes[0]);
        std::int64_t low = std::min(std::max<std::int64_t>(0, before), measured), high = measured;
        const auto perLayer = [&](std::int64_t budget) { return anyFitsPerLayer(m_model, m_layerOptions, budget); };
        if (m_levels.empty())
            return smallestBudget(low, high, perLayer);
        for (std::size_t level = 0; low < high && (level < m_levels.size() || refine()); ++level) {
            Level &at = *m_levels[level];
            high = smallestBudget(low, high, [&](std::int64_t budget) {
                if (perLayer(budget) || at.down.cheapestWithin(budget))
                    return true;
                const auto relaxed = at.up.cheapestWithin(budget);
                return relaxed && predict(m_model, *relaxed).peakBytes <= budget;
            });
            low =
                smallestBudget(low, high, [&](std::int64_t budget) { return perLayer(budget) || at.up.cheapestWithin(budget); });
        }
        return high;
    }

private:
    struct Level
    {
        ScheduleSearch down, up;
    };

    // Searches slots eight times finer than the finest so far; false past finestSlots.
    bool refine()
    {
        const std::size_t slots = m_levels.empty() ? m_options.memorySlots : m_levels.back()->down.slots() * 8;
        if (!m_levels.empty() && slots > m_options.finestSlots)
            return false;
        m_levels.push_back(std::make_unique<Level>(Level{ScheduleSearch(m_model, slots, ScheduleSearch::Rounding::Down),
                                                         ScheduleSearch(m_model, slots, ScheduleSearch::Rounding::Up)}));
        return true;
    }

    // The schedule search's cheapest for the budget, refined until the one rounded up fits
    // or the one rounded down adds no more time; `enough`: a plan found elsewhere that
    // adds this, which no schedule needs to beat to be settled.
    std::optional<CheckpointSchedule> cheapestSchedule(std::int64_t budget, std::optional<std::int64_t> enough,
                                                       std::optional<std::int64_t> *runnerUp)
    {
        std::optional<CheckpointSchedule> found;
        for (std::size_t level = 0; level < m_levels.size() || refine(); ++level) {
            Level &at = *m_levels[level];
            std::optional<std::int64_t> second;
            auto safe = at.down.cheapestWithin(budget, &second);
            if (safe && (!found || predict(m_model, *safe).addedTimeNs < predict(m_model, *found).addedTimeNs)) {
                found = std::move(safe);
                if (runnerUp)
                    *runnerUp = second;
            }
            const auto relaxed = at.up.cheapestWithin(budget);
            if (!relaxed)
                break; // nothing fits
            const Prediction bound = predict(m_model, *relaxed);
            if (bound.peakBytes <= budget) {
                if (!found || bound.addedTimeNs < predict(m_model, *found).addedTimeNs)
                    found = *relaxed;
                break;
            }
            // Settled: what is found, or found elsewhere, adds no more than any that fits.
            const std::int64_t best =
                std::min(found ? predict(m_model, *found).addedTimeNs : INT64_MAX, enough.value_or(INT64_MAX));
            if (best <= bound.addedTimeNs)
                break;
        }
        return found;
    }

    const CostModel &m_model;
    const PlannerOptions &m_options;
    std::vector<std::unique_ptr<Level>> m_levels;
    std::vector<std::vector<LayerOption>> m_layerOptions;
    std::vector<std::vector<LayerOption>> m_plainOptions; // without per-op policies and offload, when they are weighed
};

Plan makePlan(const CostModel &model, CheckpointSchedule schedule, bool feasible)
{
    Plan plan;
    plan.prediction = predict(model, schedule);
    plan.checkpoint = toggledPositions(schedule, model.layers.size());
    plan.schedule = std::move(schedule);
    plan.feasible = feasible;
    return plan;
}

} // namespace

std::int64_t budgetMargin(const CostModel &model, std::int64_t budgetBytes)
{
    if (!model.backwardEstimated)
        return 0;
    return static_cast<std::int64_t>(std::ceil(0.025 * static_cast<double>(std::max<std::int64_t>(0, budgetBytes))));
}

Plan planForBudget(const CostModel &model, std::int64_t budgetBytes, const PlannerOptions &options)
{
    const std::int64_t margin = options.keepMargin ? budgetMargin(model, budgetBytes) : 0;
    Search search(model, options);
    Plan plan;
    std::optional<std::int64_t> runnerUp;
    if (auto schedule = search.cheapestWithin(budgetBytes - margin, &runnerUp)) {
        plan = makePlan(model, std::move(*schedule), true);
        plan.runnerUpAddedNs = runnerUp;
    } else {
        // Counted in slots, the search can miss by less than a slot what the lowest plan
        // it finds shows to fit.
        plan = makePlan(model, *search.cheapestWithin(search.lowestPeak()), false);
        plan.feasible = plan.prediction.peakBytes <= budgetBytes - margin;
    }
    plan.marginBytes = margin;
    return plan;
}

Plan lowestPeakPlan(const CostModel &model, const PlannerOptions &options)
{
    Search search(model, options);
    return makePlan(model, *search.cheapestWithin(search.lowestPeak()), true);
}

Plan planForOverhead(const CostModel &model, double fraction, const PlannerOptions &options)
{
    const auto allowed = static_cast<std::int64_t>(std::floor(std::max(0.0, fraction) * static_cast<double>(model.stepTimeNs)));
    Search search(model, options);
    const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
    const std::int64_t lowest = search.lowestPeak();
    const auto accept = [&](std::int64_t b) {
        const auto schedule = search.cheapestWithin(b);
        return schedule && predict(model, *schedule).addedTimeNs <= allowed;
    };
    // To a ten-thousandth of the measured peak: a dozen programmes, not forty.
    const std::int64_t step = std::max<std::int64_t>(1, measured / 10'000);
    std::int64_t low = lowest, high = measured;
    if (accept(lowest))
        high = lowest;
    while (high - low > step) {
        const std::int64_t middle = low + (high - low) / 2;
        (accept(middle) ? high : low) = middle;
    }
    return makePlan(model, *search.cheapestWithin(high), true);
}

std::vector<std::string> chainPaths(const CostModel &model)
{
    std::vector<std::string> chain;
    for (const ChainLayer &layer : model.layers)
        chain.push_back(layer.path);
    return chain;
}

LayerParts chainParts(const CostModel &model)
{
    LayerParts parts;
    for (const ChainLayer &layer : model.layers) {
        parts.emplace_back();
        for (const ChainPart &part : layer.parts)
            parts.back().push_back(part.path);
    }
    return parts;
}

Plan planForStrategy(const CostModel &model, const CheckpointStrategy &strategy)
{
    const std::vector<std::string> chain = chainPaths(model);
    return makePlan(model, strategy.schedule(chain, chain, chainParts(model)), true);
}

CheckpointStrategy strategyOf(const CostModel &model, const Plan &plan)
{
    return CheckpointStrategy::of(plan.schedule, chainPaths(model), chainParts(model));
}

std::vector<std::string> toggles(const CostModel &model, const Plan &plan)
{
    if (plan.schedule.empty())
        return {};
    return strategyOf(model, plan).unitTexts();
}

Plan planForStrategy(const CostModel &model, const std::string &strategy)
{
    return planForStrategy(model, CheckpointStrategy::parse(strategy));
}

std::vector<std::string> checkpointedPaths(const CostModel &model, const std::vector<bool> &checkpoint)
{
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < checkpoint.size() && i < model.layers.size(); ++i) {
        if (checkpoint[i])
            paths.push_back(model.layers[i].path);
    }
    return paths;
}

std::vector<std::string> checkpointedPaths(const CostModel &model, const CheckpointSchedule &schedule)
{
    std::vector<std::string> paths;
    for (const CheckpointUnit &unit : schedule) {
        for (std::size_t k = unit.first; k <= unit.last && k < model.layers.size(); ++k) {
            if (!unit.isPart())
                paths.push_back(model.layers[k].path);
            else if (unit.part < model.layers[k].parts.size())
                paths.push_back(model.layers[k].parts[unit.part].path);
        }
    }
    return paths;
}

Plan planForToggles(const CostModel &model, const std::vector<std::string> &units)
{
    return planForStrategy(model, CheckpointStrategy::ofUnitTexts(units));
}

std::vector<Plan> paretoSweep(const CostModel &model, std::size_t budgets, const PlannerOptions &options)
{
    Search search(model, options);
    const std::int64_t measured = predict(model, CheckpointSchedule{}).peakBytes;
    const std::int64_t lowest = search.lowestPeak();
    std::vector<Plan> plans;
    budgets = std::max<std::size_t>(budgets, 2);
    for (std::size_t i = 0; i < budgets; ++i) {
        const std::int64_t budget =
            lowest + static_cast<std::int64_t>(static_cast<long double>(measured - lowest) * i / (budgets - 1));
        Plan plan = makePlan(model, *search.cheapestWithin(budget), true);
        if (!plans.empty() && plans.back().schedule == plan.schedule)
            continue;
        // Keep only plans no earlier one beats on both peak and time.
        if (!plans.empty() && plans.back().prediction.addedTimeNs <= plan.prediction.addedTimeNs
            && plans.back().prediction.peakBytes <= plan.prediction.peakBytes)
            continue;
        plans.push_back(std::move(plan));
    }
    return plans;
}

} // namespace peaklens
