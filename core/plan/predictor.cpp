// SPDX-License-Identifier: Apache-2.0
#include "predictor.h"

#include <algorithm>

namespace peaklens {

namespace {

// A unit of the schedule, with the index of the unit that holds it.
struct FlatUnit
{
    std::size_t first, last;
    std::size_t parent;             // index into the flat list; SIZE_MAX at the top level
    std::int64_t childrenFreed = 0; // what its inner units free, once it is recomputed
    std::int64_t policyKept = 0;    // what its per-op policy keeps through the forward
    // What its policy changes in its recompute's time: its saved operators' share of the
    // forward spared, the policy's dispatch over every operator call added.
    std::int64_t policyNs = 0;
};

void flatten(const CostModel &model, const std::vector<CheckpointUnit> &units, std::size_t parent, std::vector<FlatUnit> &out)
{
    for (const CheckpointUnit &unit : units) {
        if (unit.first > unit.last || unit.last >= model.layers.size() || unit.isPart() || unit.runsPlainly())
            continue;
        FlatUnit flat{unit.first, unit.last, parent};
        if (!unit.saved.empty()) {
            flat.policyKept = model.layers[unit.last].policyKeptBytes(unit.saved);
            flat.policyNs = model.layers[unit.last].policyNs(unit.saved);
        }
        out.push_back(flat);
        flatten(model, unit.inner, out.size() - 1, out);
    }
}

// What a unit frees while none of its layers is needed: all its layers keep, but the
// last one's output, which the layer after it keeps either way, and what its policy keeps.
std::int64_t unitSaving(const CostModel &model, const FlatUnit &unit)
{
    std::int64_t bytes = model.layers[unit.last].savingBytes - unit.policyKept;
    for (std::size_t k = unit.first; k < unit.last; ++k)
        bytes += model.layers[k].keptBytes;
    return bytes;
}

// While a unit's layers run their forward without keeping anything, at segment p (layers
// before p done): a layer frees what its backward would need, and once the next layer has
// run, its output too, unless it is the unit's last; but what its policy keeps. Adds, for
// p in [offset, offset + size), to `at` (that p only) and `from` (that p onwards, as
// differences).
void addForwardSavings(const CostModel &model, const FlatUnit &unit, std::size_t offset, std::vector<std::int64_t> &at,
                       std::vector<std::int64_t> &from)
{
    const auto add = [&](std::vector<std::int64_t> &to, std::size_t p, std::int64_t bytes) {
        if (p >= offset && p - offset < to.size())
            to[p - offset] += bytes;
    };
    for (std::size_t k = unit.first; k <= unit.last; ++k) {
        const ChainLayer &layer = model.layers[k];
        if (k == unit.last) {
            add(from, k + 1, layer.savingBytes - unit.policyKept);
        } else {
            add(at, k + 1, layer.savingBytes);
            add(from, k + 2, layer.keptBytes);
        }
    }
}

// Running sums of `from` plus `at`.
std::vector<std::int64_t> summed(const std::vector<std::int64_t> &at, const std::vector<std::int64_t> &from)
{
    std::vector<std::int64_t> out(at.size());
    std::int64_t running = 0;
    for (std::size_t p = 0; p < at.size(); ++p) {
        running += from[p];
        out[p] = running + at[p];
    }
    return out;
}

void addOver(std::vector<std::int64_t> &differences, std::size_t begin, std::size_t end, std::int64_t bytes)
{
    if (begin >= end)
        return;
    differences[begin] += bytes;
    differences[end] -= bytes;
}

std::vector<std::int64_t> runningSum(std::vector<std::int64_t> differences)
{
    for (std::size_t p = 1; p < differences.size(); ++p)
        differences[p] += differences[p - 1];
    return differences;
}

struct Spike
{
    std::size_t last;
    std::int64_t bytes;
};

// What a schedule changes in the measured step: per segment p = 0..N the bytes freed
// before the backward reaches p (forwardFreed) and after (backwardFreed, the units not
// yet recomputed); per chain layer k what units still running their backward hold
// beyond the measured one, in its backward (heldInBackward, plus endingAt[k] times its
// own held bytes) and after it (heldInGap, by p); and each unit's recompute spike.
struct Effect
{
    std::vector<std::int64_t> forwardFreed, backwardFreed, heldInBackward, heldInGap;
    std::vector<std::uint32_t> endingAt;
    std::vector<std::uint64_t> parts; // per chain layer not checkpointed whole: its parts checkpointed
    std::vector<KeptForm> kept;       // per chain layer: where it keeps what it saves for backward
    std::vector<Spike> spikes;
    std::int64_t addedNs = 0;
    std::int64_t addedSpreadNs = 0; // the spreads of the recomputes addedNs counts, added up
};

Effect effectOf(const CostModel &model, const CheckpointSchedule &schedule)
{
    const std::size_t n = model.layers.size();
    std::vector<FlatUnit> units;
    flatten(model, schedule, SIZE_MAX, units);
    Effect effect;
    std::vector<std::int64_t> at(n + 1, 0), from(n + 1, 0), freed(n + 2, 0), held(n + 2, 0), gap(n + 2, 0);
    effect.endingAt.assign(n, 0);
    effect.kept.assign(n, KeptForm::AsMade);
    // A part frees what it keeps from the end of its layer's forward on, until the
    // backward reaches that layer (whose backward, cut at the parts, predict() reads).
    effect.parts = partMasks(schedule, n);
    for (std::size_t k = 0; k < n; ++k) {
        const ChainLayer &layer = model.layers[k];
        if (effect.parts[k] == 0)
            continue;
        const std::int64_t saving = layer.partSavingBytes(effect.parts[k]);
        from[k + 1] += saving;
        addOver(freed, k + 1, n + 1, saving);
        for (std::size_t c = 0; c < layer.parts.size(); ++c) {
            if (effect.parts[k] >> c & 1u) {
                effect.addedNs += layer.parts[c].recomputeNs;
                effect.addedSpreadNs += layer.parts[c].recomputeSpreadNs;
            }
        }
    }
    // A layer run plainly, keeping what it saves elsewhere, frees it from the end of its
    // forward on until the backward reaches it: its saving and its input, the layer
    // before's output, where that was kept for backward (a block that begins with a
    // normalization saves it), unless the layer before, run as measured, keeps that on the
    // device for its own backward too (a block ending in a ReLU saves the ReLU's result).
    // In bfloat16 half of it stays (allocator traces know no dtypes: the blocks are taken
    // for 32-bit floats), and a tensor whose original stays gains a half-size copy; in
    // host memory none, it crosses to the host in the forward and back in the backward,
    // and its own forward and backward hold only what the operator or node running uses
    // (CurvePoint::bytesOffloaded, which predict() reads).
    std::vector<bool> asMeasured(n, true);
    for (const CheckpointUnit &unit : schedule) {
        for (std::size_t k = unit.first; k <= unit.last && k < n; ++k)
            asMeasured[k] = false;
    }
    for (const CheckpointUnit &unit : schedule) {
        if (!unit.runsPlainly() || unit.first >= n)
            continue;
        const std::size_t k = unit.first;
        effect.kept[k] = unit.kept;
        const bool beforeAsMeasured = k == 0 || asMeasured[k - 1];
        const std::int64_t saving = model.keptElsewhereSaving(k, unit.kept, beforeAsMeasured);
        from[k + 1] += saving;
        addOver(freed, k + 1, n + 1, saving);
        // What it copies out and back: its input too, where another keeps the original.
        if (unit.kept == KeptForm::Host)
            effect.addedNs += model.hostRoundTripNs(model.keptElsewhereSaving(k, KeptForm::Host, false));
    }
    for (FlatUnit &unit : units) {
        const std::int64_t saving = unitSaving(model, unit);
        if (unit.parent == SIZE_MAX) {
            addForwardSavings(model, unit, 0, at, from);
            addOver(freed, unit.last + 1, n + 1, saving);
        } else {
            addOver(freed, unit.last + 1, units[unit.parent].last + 1, saving);
            units[unit.parent].childrenFreed += saving;
        }
        const std::int64_t mostHeld = model.layers[unit.last].heldInBackwardBytes;
        addOver(held, unit.first, unit.last, mostHeld);
        addOver(gap, unit.first + 1, unit.last + 1, mostHeld);
        ++effect.endingAt[unit.last];
        for (std::size_t k = unit.first; k <= unit.last; ++k) {
            effect.addedNs += model.layers[k].recomputeNs;
            effect.addedSpreadNs += model.layers[k].recomputeSpreadNs;
        }
        effect.addedNs += unit.policyNs;
    }
    effect.forwardFreed = summed(at, from);
    effect.backwardFreed = runningSum(freed);
    effect.heldInBackward = runningSum(held);
    effect.heldInGap = runningSum(gap);

    // A recompute starts from the level without the unit's layers (their blocks still
    // live in the measured step taken out), with the outer units' savings and holds, and
    // climbs through its layers' forwards, its inner units keeping only what they keep.
    for (std::size_t u = 0; u < units.size(); ++u) {
        const FlatUnit &unit = units[u];
        const std::size_t b = unit.last;
        const std::int64_t outer = effect.backwardFreed[b] - unit.childrenFreed - effect.heldInBackward[b];
        if (unit.first == b && unit.childrenFreed == 0) {
            effect.spikes.push_back({b, model.layers[b].recomputePeakBytes - outer});
            continue;
        }
        const std::size_t size = b - unit.first + 2;
        std::vector<std::int64_t> innerAt(size, 0), innerFrom(size, 0);
        for (std::size_t c = u + 1; c < units.size() && units[c].first <= b; ++c) {
            if (units[c].parent == u)
                addForwardSavings(model, units[c], unit.first, innerAt, innerFrom);
        }
        const std::vector<std::int64_t> innerFreed = summed(innerAt, innerFrom);
        std::int64_t kept = 0, rise = INT64_MIN;
        for (std::size_t k = unit.first; k <= b; ++k) {
            const ChainLayer &layer = model.layers[k];
            std::int64_t level = kept - innerFreed[k - unit.first] + layer.forwardRiseBytes;
            if (k > unit.first) // the input the layer reads, whether or not the measured step kept it
                level += model.layers[k - 1].retainedBytes - model.layers[k - 1].keptBytes;
            rise = std::max(rise, level);
            if (k < b)
                kept += layer.keptBytes;
        }
        effect.spikes.push_back({b, model.layers[b].levelBeforeRecomputeBytes - kept + rise - outer});
    }
    return effect;
}

class PeakTracker
{
public:
    void consider(std::int64_t bytes, std::int64_t timeNs, Phase phase, std::optional<std::size_t> recomputeOf = {})
    {
        if (bytes > m_prediction.peakBytes
            || (bytes == m_prediction.peakBytes && !recomputeOf && timeNs < m_prediction.peakTimeNs)) {
            m_prediction.peakBytes = bytes;
            m_prediction.peakTimeNs = timeNs;
            m_prediction.peakPhase = phase;
            m_prediction.peakInRecomputeOf = recomputeOf;
        }
    }
    Prediction &prediction() { return m_prediction; }

private:
    Prediction m_prediction{INT64_MIN};
};

// The highest point of chain layer k's backward, before what other layers free, and when.
std::pair<std::int64_t, std::int64_t> backwardLevel(const ChainLayer &layer, std::uint32_t endingHere, std::uint64_t parts)
{
    if (endingHere == 0)
        return layer.backwardPeakWithParts(parts);
    return {layer.backwardPeakBytes + static_cast<std::int64_t>(endingHere - 1) * layer.heldInBackwardBytes,
            layer.backwardPeakTimeNs};
}

// In a chain layer's backward at `timeNs`, what its chosen parts change: less what those
// whose backward has not begun free, plus the most a running one's checkpoint holds.
std::int64_t partsInBackward(const ChainLayer &layer, std::uint64_t parts, std::int64_t timeNs)
{
    std::int64_t bytes = 0;
    if (parts == 0)
        return bytes;
    const auto pass = static_cast<std::size_t>(
        std::upper_bound(layer.backwardBeginsNs.begin(), layer.backwardBeginsNs.end(), timeNs) - layer.backwardBeginsNs.begin());
    if (pass == 0)
        return bytes;
    for (std::size_t c = 0; c < layer.parts.size(); ++c) {
        const ChainPart &part = layer.parts[c];
        if (!(parts >> c & 1u) || pass > part.backwardBeginsNs.size())
            continue;
        if (timeNs < part.backwardBeginsNs[pass - 1])
            bytes -= part.savingBytes;
        else if (timeNs < part.backwardEndsNs[pass - 1])
            bytes += part.heldInBackwardBytes;
    }
    return bytes;
}

} // namespace

Prediction predict(const CostModel &model, const CheckpointSchedule &schedule)
{
    const Effect effect = effectOf(model, schedule);
    PeakTracker tracker;
    for (std::size_t p = 0; p < model.forwardPeakBytes.size(); ++p) {
        if (p < model.layers.size() && effect.parts[p] != 0 && !model.layers[p].forwardPieces.empty()) {
            // Layer p's parts checkpointed: its forward after each one's own forward has
            // ended is lower by what it frees.
            const ChainLayer &layer = model.layers[p];
            const auto [bytes, timeNs] = layer.forwardPeakWithParts(effect.parts[p]);
            tracker.consider(bytes - effect.forwardFreed[p], timeNs, Phase::Forward);
            if (layer.forwardBeforePartsBytes != INT64_MIN)
                tracker.consider(layer.forwardBeforePartsBytes - effect.forwardFreed[p], layer.forwardBeforePartsTimeNs,
                                 Phase::Forward);
        } else if (model.forwardPeakBytes[p] != INT64_MIN) {
            // A model without the walk's offloaded peaks (built by hand) keeps the measured one.
            const bool offloaded =
                p < effect.kept.size() && effect.kept[p] == KeptForm::Host && p < model.offloadedForwardPeakBytes.size();
            const std::size_t at = offloaded ? model.offloadedForwardPeakPoint[p] : model.forwardPeakPoint[p];
            const std::int64_t bytes = offloaded ? model.offloadedForwardPeakBytes[p] : model.forwardPeakBytes[p];
            tracker.consider(bytes - effect.forwardFreed[p], model.curve[at].timeNs, model.curve[at].phase);
        }
        if (p < model.gapPeakBytes.size() && model.gapPeakBytes[p] != INT64_MIN) {
            const CurvePoint &point = model.curve[model.gapPeakPoint[p]];
            tracker.consider(model.gapPeakBytes[p] - effect.backwardFreed[p] + effect.heldInGap[p], point.timeNs, point.phase);
        }
    }
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        const ChainLayer &layer = model.layers[k];
        const bool offloaded = effect.kept[k] == KeptForm::Host && layer.offloadedBackwardPeakBytes != INT64_MIN;
        const auto [level, timeNs] = offloaded ? std::pair(layer.offloadedBackwardPeakBytes, layer.offloadedBackwardPeakTimeNs)
                                               : backwardLevel(layer, effect.endingAt[k], effect.parts[k]);
        if (level == INT64_MIN)
            continue;
        const bool recomputes = effect.endingAt[k] > 0 || effect.parts[k] != 0;
        tracker.consider(level - effect.backwardFreed[k] + effect.heldInBackward[k], timeNs, Phase::Backward,
                         recomputes ? std::optional<std::size_t>(k) : std::nullopt);
    }
    for (const Spike &spike : effect.spikes)
        tracker.consider(spike.bytes, model.layers[spike.last].recomputePeakTimeNs, Phase::Backward, spike.last);
    Prediction prediction = tracker.prediction();
    prediction.addedTimeNs = effect.addedNs;
    prediction.addedTimeSpreadNs = effect.addedSpreadNs;
    prediction.stepTimeNs = model.stepTimeNs + prediction.addedTimeNs;
    return prediction;
}

Prediction predict(const CostModel &model, const std::vector<bool> &checkpoint)
{
    return predict(model, singleLayerUnits(checkpoint));
}

std::vector<SeriesPoint> predictCurve(const CostModel &model, const CheckpointSchedule &schedule)
{
    const Effect effect = effectOf(model, schedule);
    // Recompute spikes, in time order: one per pass of each unit.
    std::vector<std::pair<std::int64_t, std::int64_t>> spikes;
    for (const Spike &spike : effect.spikes) {
        for (std::int64_t begin : model.layers[spike.last].backwardBeginsNs)
            spikes.emplace_back(begin, spike.bytes);
    }
    // Parts' recomputes: at each pass's start of their backward, the highest of their
    // recompute pieces with the other chosen parts still pending.
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        const ChainLayer &layer = model.layers[k];
        for (const BackwardPiece &piece : layer.backwardPieces) {
            if (piece.recomputeOf == SIZE_MAX || !(effect.parts[k] >> piece.recomputeOf & 1u))
                continue;
            const std::int64_t bytes = piece.heldPeakBytes.front().second - layer.partSavingBytes(piece.pending & effect.parts[k])
                                       - effect.backwardFreed[k] + effect.heldInBackward[k];
            spikes.emplace_back(piece.levelPeakTimeNs, bytes);
        }
    }
    std::sort(spikes.begin(), spikes.end());
    std::vector<SeriesPoint> curve;
    curve.reserve(model.curve.size() + spikes.size());
    auto spike = spikes.begin();
    for (const CurvePoint &point : model.curve) {
        for (; spike != spikes.end() && spike->first <= point.timeNs; ++spike)
            curve.push_back({spike->first, spike->second});
        std::int64_t bytes = point.bytes;
        if (!point.backwardSide)
            bytes = (point.segment < effect.kept.size() && effect.kept[point.segment] == KeptForm::Host ? point.bytesOffloaded()
                                                                                                        : point.bytes)
                    - effect.forwardFreed[point.segment]
                    + (point.segment < model.layers.size()
                           ? model.layers[point.segment].partSavingBytes(point.partsEnded & effect.parts[point.segment])
                           : 0);
        else if (point.backwardOf == kNoChainLayer)
            bytes += effect.heldInGap[point.segment] - effect.backwardFreed[point.segment];
        else
            bytes = (effect.kept[point.backwardOf] == KeptForm::Host ? point.bytesOffloaded() : point.bytes)
                    + effect.heldInBackward[point.backwardOf] + effect.endingAt[point.backwardOf] * point.heldBytes
                    - effect.backwardFreed[point.segment]
                    + partsInBackward(model.layers[point.backwardOf], effect.parts[point.backwardOf], point.timeNs);
        curve.push_back({point.timeNs, bytes});
    }
    return curve;
}

std::vector<SeriesPoint> predictCurve(const CostModel &model, const std::vector<bool> &checkpoint)
{
    return predictCurve(model, singleLayerUnits(checkpoint));
}

} // namespace peaklens
