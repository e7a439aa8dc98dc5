#include "predictor.h"

#include <algorithm>

namespace peaklens {

namespace {

bool isOn(const std::vector<bool> &checkpoint, std::size_t i)
{
    return i < checkpoint.size() && checkpoint[i];
}

// freed[p]: bytes freed by checkpoints while layers 0..p-1 hold their activations.
std::vector<std::int64_t> freedBySegment(const CostModel &model, const std::vector<bool> &checkpoint)
{
    std::vector<std::int64_t> freed(model.layers.size() + 1, 0);
    for (std::size_t i = 0; i < model.layers.size(); ++i)
        freed[i + 1] = freed[i] + (isOn(checkpoint, i) ? model.layers[i].savingBytes : 0);
    return freed;
}

} // namespace

Prediction predict(const CostModel &model, const std::vector<bool> &checkpoint)
{
    const std::vector<std::int64_t> freed = freedBySegment(model, checkpoint);
    Prediction prediction;
    prediction.peakBytes = INT64_MIN;
    for (std::size_t p = 0; p < model.segmentPeakBytes.size(); ++p) {
        if (model.segmentPeakBytes[p] == INT64_MIN)
            continue;
        const CurvePoint &point = model.curve[model.segmentPeakPoint[p]];
        const std::int64_t bytes = model.segmentPeakBytes[p] - freed[p];
        if (bytes > prediction.peakBytes || (bytes == prediction.peakBytes && point.timeNs < prediction.peakTimeNs)) {
            prediction.peakBytes = bytes;
            prediction.peakTimeNs = point.timeNs;
            prediction.peakPhase = point.phase;
        }
    }
    // A checkpointed layer's recompute, and its backward with what the recompute made again.
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
        if (!isOn(checkpoint, i))
            continue;
        const ChainLayer &layer = model.layers[i];
        prediction.addedTimeNs += layer.recomputeNs;
        for (const auto &[bytes, timeNs] : {std::pair(layer.recomputePeakBytes, layer.recomputePeakTimeNs),
                                            std::pair(layer.backwardPeakBytes, layer.backwardPeakTimeNs)}) {
            if (bytes - freed[i] > prediction.peakBytes) {
                prediction.peakBytes = bytes - freed[i];
                prediction.peakTimeNs = timeNs;
                prediction.peakPhase = Phase::Backward;
                prediction.peakInRecomputeOf = i;
            }
        }
    }
    prediction.stepTimeNs = model.stepTimeNs + prediction.addedTimeNs;
    return prediction;
}

std::vector<PredictedPoint> predictCurve(const CostModel &model, const std::vector<bool> &checkpoint)
{
    const std::vector<std::int64_t> freed = freedBySegment(model, checkpoint);
    // Recompute spikes, in time order: one per pass of each checkpointed layer.
    std::vector<std::pair<std::int64_t, std::size_t>> spikes;
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
        if (isOn(checkpoint, i)) {
            for (std::int64_t begin : model.layers[i].backwardBeginsNs)
                spikes.emplace_back(begin, i);
        }
    }
    std::sort(spikes.begin(), spikes.end());
    std::vector<PredictedPoint> curve;
    curve.reserve(model.curve.size() + spikes.size());
    auto spike = spikes.begin();
    for (const CurvePoint &point : model.curve) {
        for (; spike != spikes.end() && spike->first <= point.timeNs; ++spike)
            curve.push_back({spike->first, model.layers[spike->second].recomputePeakBytes - freed[spike->second]});
        std::int64_t bytes = point.bytes - freed[point.segment];
        if (point.backwardOf != kNoChainLayer && isOn(checkpoint, point.backwardOf))
            bytes += point.heldBytes;
        curve.push_back({point.timeNs, bytes});
    }
    return curve;
}

} // namespace peaklens
