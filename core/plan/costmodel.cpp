// SPDX-License-Identifier: Apache-2.0
#include "costmodel.h"

#include "chainwalk.h"
#include "modeltimes.h"

#include "core/analysis/lanedevices.h"
#include "core/analysis/peakfinder.h"
#include "core/error.h"
#include "core/trace/metadata.h"

#include <algorithm>

namespace peaklens {

std::int64_t ChainLayer::partSavingBytes(std::uint64_t chosen) const
{
    std::int64_t bytes = 0;
    for (std::size_t c = 0; c < parts.size(); ++c)
        bytes += (chosen >> c & 1u) ? parts[c].savingBytes : 0;
    return bytes;
}

std::int64_t CostModel::keptElsewhereSaving(std::size_t k, KeptForm form, bool beforeAsMeasured) const
{
    const ChainLayer &layer = layers[k];
    // Its input, the layer before's output, where it keeps that for backward: moved with
    // it, unless the layer before keeps the original on the device for its own backward.
    const std::int64_t input = k > 0 && layers[k - 1].outputKept ? layers[k - 1].outputBytes : 0;
    const bool inputHeld = input > 0 && beforeAsMeasured && layers[k - 1].outputSavedByItself;
    if (form == KeptForm::Host)
        return layer.savingBytes + (inputHeld ? 0 : input);
    // In bfloat16, half of each stays; a tensor the original of which stays too (its input
    // held before it, its own output, which the next layer keeps) gains a half-size copy.
    const std::int64_t output = layer.outputSavedByItself && layer.outputKept ? layer.outputBytes : 0;
    return (layer.savingBytes + (inputHeld ? -input : input) - output) / 2;
}

std::int64_t CostModel::hostRoundTripNs(std::int64_t bytes) const
{
    return static_cast<std::int64_t>(2e9 * static_cast<double>(bytes) / hostBandwidthBytesPerSecond);
}

std::pair<std::int64_t, std::int64_t> ChainLayer::backwardPeakWithParts(std::uint64_t chosen) const
{
    if (chosen == 0 || backwardPieces.empty())
        return {backwardLevelPeakBytes, backwardLevelPeakTimeNs};
    std::pair<std::int64_t, std::int64_t> peak{INT64_MIN, 0};
    for (const BackwardPiece &piece : backwardPieces) {
        std::int64_t bytes = piece.levelPeakBytes;
        if (piece.recomputeOf != SIZE_MAX && !(chosen >> piece.recomputeOf & 1u))
            continue;
        // A chosen part running its backward (at most one: chosen parts do not nest).
        for (const auto &[part, held] : piece.heldPeakBytes) {
            if (chosen >> part & 1u)
                bytes = held;
        }
        if (bytes == INT64_MIN)
            continue;
        bytes -= partSavingBytes(piece.pending & chosen);
        if (bytes > peak.first)
            peak = {bytes, piece.levelPeakTimeNs};
    }
    return peak;
}

std::pair<std::int64_t, std::int64_t> ChainLayer::forwardPeakWithParts(std::uint64_t chosen) const
{
    std::pair<std::int64_t, std::int64_t> peak{INT64_MIN, 0};
    for (const ForwardPiece &piece : forwardPieces) {
        const std::int64_t bytes = piece.peakBytes - partSavingBytes(piece.ended & chosen);
        if (bytes > peak.first)
            peak = {bytes, piece.peakTimeNs};
    }
    return peak;
}

std::int64_t CostModel::forwardBeforePartsBytes(std::size_t p) const
{
    if (p < layers.size() && !layers[p].forwardPieces.empty())
        return layers[p].forwardBeforePartsBytes;
    return p < forwardPeakBytes.size() ? forwardPeakBytes[p] : INT64_MIN;
}

std::int64_t ChainLayer::policyKeptBytes(const std::vector<std::string> &ops) const
{
    return savedBytes(operators, ops);
}

std::int64_t ChainLayer::policyNs(const std::vector<std::string> &ops) const
{
    const std::int64_t spared =
        operators.spanNs > 0
            ? static_cast<std::int64_t>(static_cast<long double>(recomputeNs) * savedNs(operators, ops) / operators.spanNs)
            : 0;
    return static_cast<std::int64_t>(operators.calls) * operators.selectiveCallNs - spared;
}

namespace {

// The model's chain layers and their parts, named, with their spans' times.
void addUnits(const Trace &trace, const ChainUnits &units, CostModel &model)
{
    const std::size_t n = units.passes.front().size();
    model.passes = units.passes.size();
    model.layers.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
        ChainLayer &layer = model.layers[k];
        layer.layer = units.passes.front()[k].layer;
        layer.path = trace.layers[layer.layer].path;
        for (const auto &pass : units.passes) {
            layer.forwardNs += pass[k].forwardEnd - pass[k].forwardBegin;
            layer.backwardNs += pass[k].backwardEnd - pass[k].backwardBegin;
            layer.backwardBeginsNs.push_back(pass[k].backwardBegin);
        }
        for (const std::vector<UnitSpans> &spans : units.parts[k]) {
            ChainPart part;
            part.layer = spans.front().layer;
            part.path = trace.layers[part.layer].path;
            for (const UnitSpans &s : spans) {
                part.forwardNs += s.forwardEnd - s.forwardBegin;
                part.backwardBeginsNs.push_back(s.backwardBegin);
                part.backwardEndsNs.push_back(s.backwardEnd);
                part.forwardEndsNs.push_back(s.forwardEnd);
            }
            part.recomputeNs = part.forwardNs;
            layer.parts.push_back(std::move(part));
        }
    }
}

// Per unit, its passes combined so that no prediction rests on the most favourable one:
// the highest of each figure, the lowest saving.
void combinePasses(const ChainMeasures &measures, CostModel &model)
{
    for (std::size_t k = 0; k < model.layers.size(); ++k) {
        ChainLayer &layer = model.layers[k];
        layer.savingBytes = layer.keptBytes = INT64_MAX;
        layer.outputKept = !measures.layers.empty();
        layer.levelBeforeRecomputeBytes = INT64_MIN;
        layer.recomputePeakBytes = layer.backwardPeakBytes = INT64_MIN;
        for (const auto &pass : measures.layers) {
            const UnitMeasure &p = pass[k];
            layer.retainedBytes = std::max(layer.retainedBytes, p.retained);
            layer.outputBytes = std::max(layer.outputBytes, p.output);
            if (p.saving < layer.savingBytes)
                layer.kept = {p.keptEvents, p.outputEvent};
            layer.savingBytes = std::min(layer.savingBytes, p.saving);
            layer.regeneratedBytes = std::max(layer.regeneratedBytes, p.regenerated);
            layer.forwardRiseBytes = std::max(layer.forwardRiseBytes, p.forwardRise);
            layer.levelAtBackwardBytes = std::max(layer.levelAtBackwardBytes, p.levelAtBackward);
            layer.keptBytes = std::min(layer.keptBytes, p.kept);
            layer.outputKept = layer.outputKept && p.outputKept;
            layer.outputSavedByItself = layer.outputSavedByItself || p.outputEvent != SIZE_MAX;
            layer.levelBeforeRecomputeBytes = std::max(layer.levelBeforeRecomputeBytes, p.levelAtBackward - p.alive);
            // A recompute starts from the level without any of its blocks (the next layer
            // has released the output by then) and climbs by the forward's rise.
            const std::int64_t recompute = p.levelAtBackward - p.alive + p.forwardRise;
            if (recompute > layer.recomputePeakBytes) {
                layer.recomputePeakBytes = recompute;
                layer.recomputePeakTimeNs = p.backwardBeginNs;
            }
            layer.heldInBackwardBytes = std::max(layer.heldInBackwardBytes, p.mostHeld);
            if (p.backwardPeak > layer.backwardPeakBytes) {
                layer.backwardPeakBytes = p.backwardPeak;
                layer.backwardPeakTimeNs = p.backwardPeakTimeNs;
            }
        }
        for (std::size_t c = 0; c < layer.parts.size(); ++c) {
            ChainPart &part = layer.parts[c];
            part.savingBytes = INT64_MAX;
            for (const UnitMeasure &p : measures.parts[k][c]) {
                if (p.saving < part.savingBytes)
                    part.kept = {p.keptEvents, p.outputEvent};
                part.savingBytes = std::min(part.savingBytes, p.saving);
                part.heldInBackwardBytes = std::max(part.heldInBackwardBytes, p.mostHeld);
            }
        }
    }
}

// Per chain layer, its operators' outputs and times in the pass its kept blocks come from (the first
// with the least saving).
void addOperatorProfiles(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, const ChainMeasures &measures,
                         CostModel &model)
{
    for (std::size_t k = 0; k < model.layers.size() && !measures.layers.empty(); ++k) {
        const UnitMeasure *least = &measures.layers.front()[k];
        for (const auto &pass : measures.layers)
            least = pass[k].saving < least->saving ? &pass[k] : least;
        model.layers[k].operators = operatorProfile(trace, lanes, device, least->forwardBeginEvent, least->forwardEndEvent,
                                                    least->forwardBeginNs, least->forwardEndNs, least->forwardOutputEvent);
        if (!trace.metaValue(metakey::ReplaySpec).empty())
            model.layers[k].operators.selectiveCallNs = kReplaySelectiveCallNs;
    }
}

// Per segment, the highest measured point before and after the backward reaches it, and
// per chain layer the highest during its backward.
void findSegmentPeaks(CostModel &model)
{
    const std::size_t n = model.layers.size();
    model.forwardPeakBytes.assign(n + 1, INT64_MIN);
    model.gapPeakBytes.assign(n + 1, INT64_MIN);
    model.forwardPeakPoint.assign(n + 1, 0);
    model.gapPeakPoint.assign(n + 1, 0);
    model.offloadedForwardPeakBytes = model.forwardPeakBytes;
    model.offloadedForwardPeakPoint = model.forwardPeakPoint;
    for (std::size_t p = 0; p < model.curve.size(); ++p) {
        const CurvePoint &point = model.curve[p];
        if (point.backwardOf != kNoChainLayer) {
            ChainLayer &layer = model.layers[point.backwardOf];
            if (point.bytes > layer.backwardLevelPeakBytes) {
                layer.backwardLevelPeakBytes = point.bytes;
                layer.backwardLevelPeakTimeNs = point.timeNs;
            }
            if (point.bytesOffloaded() > layer.offloadedBackwardPeakBytes) {
                layer.offloadedBackwardPeakBytes = point.bytesOffloaded();
                layer.offloadedBackwardPeakTimeNs = point.timeNs;
            }
        } else {
            auto &peaks = point.backwardSide ? model.gapPeakBytes : model.forwardPeakBytes;
            if (point.bytes > peaks[point.segment]) {
                peaks[point.segment] = point.bytes;
                (point.backwardSide ? model.gapPeakPoint : model.forwardPeakPoint)[point.segment] = p;
            }
            if (!point.backwardSide && point.bytesOffloaded() > model.offloadedForwardPeakBytes[point.segment]) {
                model.offloadedForwardPeakBytes[point.segment] = point.bytesOffloaded();
                model.offloadedForwardPeakPoint[point.segment] = p;
            }
        }
        model.measuredPeakBytes = std::max(model.measuredPeakBytes, point.bytes);
    }
}

// Each chain layer's segment forward cut where its parts' forwards end (ChainLayer::
// forwardPieces): a part ended in this pass when its forward ended since the segment's
// forward stretch began.
void cutForwardAtParts(CostModel &model)
{
    std::size_t stretchSegment = SIZE_MAX;
    bool stretchBackwardSide = false;
    std::int64_t stretchBegin = 0;
    for (CurvePoint &point : model.curve) {
        if (point.segment != stretchSegment || point.backwardSide != stretchBackwardSide) {
            stretchSegment = point.segment;
            stretchBackwardSide = point.backwardSide;
            stretchBegin = point.timeNs;
        }
        if (point.backwardSide || point.backwardOf != kNoChainLayer || point.segment >= model.layers.size())
            continue;
        ChainLayer &layer = model.layers[point.segment];
        if (layer.parts.empty())
            continue;
        for (std::size_t c = 0; c < layer.parts.size(); ++c) {
            const auto &ends = layer.parts[c].forwardEndsNs;
            if (std::any_of(ends.begin(), ends.end(),
                            [&](std::int64_t end) { return end >= stretchBegin && end <= point.timeNs; }))
                point.partsEnded |= std::uint64_t(1) << c;
        }
        if (point.partsEnded == 0) {
            if (point.bytes > layer.forwardBeforePartsBytes) {
                layer.forwardBeforePartsBytes = point.bytes;
                layer.forwardBeforePartsTimeNs = point.timeNs;
            }
            continue;
        }
        auto piece = std::find_if(layer.forwardPieces.begin(), layer.forwardPieces.end(),
                                  [&](const ForwardPiece &p) { return p.ended == point.partsEnded; });
        if (piece == layer.forwardPieces.end())
            piece = layer.forwardPieces.insert(layer.forwardPieces.end(), ForwardPiece{point.partsEnded});
        if (point.bytes > piece->peakBytes) {
            piece->peakBytes = point.bytes;
            piece->peakTimeNs = point.timeNs;
        }
    }
}

} // namespace

CostModel buildCostModel(const Trace &trace, const ChainSelection &selection)
{
    return buildCostModel(trace, selection, findPeaks(trace));
}

CostModel buildCostModel(const Trace &trace, const ChainSelection &selection, const PeakReport &peaks)
{
    if (!peaks.primary)
        throw Error("The trace allocates no memory, so there is nothing to plan.");
    CostModel model;
    const DevicePeak &peak = peaks.devices[*peaks.primary];
    model.device = peak.device;

    // The step that holds the peak; without steps, the whole trace.
    const MemoryEvents &events = trace.events;
    std::int64_t begin = INT64_MIN, end = INT64_MAX;
    if (auto index = trace.stepAt(peak.timeNs)) {
        model.step = trace.steps[*index].number;
        begin = trace.steps[*index].beginNs;
        end = trace.steps[*index].endNs;
    }
    const LaneDevices lanes(trace);
    const std::uint32_t device = *lanes.indexOf(model.device);
    const ChainUnits units = chooseChain(trace, selection, lanes, device, begin, end, model.step);
    model.backwardEstimated = units.backwardEstimated;
    addUnits(trace, units, model);

    model.stepBeginNs = begin != INT64_MIN ? begin : events.empty() ? 0 : events.timeNs(0);
    const std::int64_t stepEnd = end != INT64_MAX ? end : events.empty() ? 0 : events.timeNs(events.size() - 1);
    model.stepTimeNs = stepEnd - model.stepBeginNs;
    const ChainMeasures measures = walkChain(trace, lanes, device, begin, end == INT64_MAX ? stepEnd + 1 : stepEnd, units, model);
    combinePasses(measures, model);
    addOperatorProfiles(trace, lanes, device, measures, model);
    findSegmentPeaks(model);
    cutForwardAtParts(model);
    useStepTimes(trace, model);
    return model;
}

} // namespace peaklens
