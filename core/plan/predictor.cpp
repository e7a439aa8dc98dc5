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
        freed[i + 1] = freed[i] + (isOn(checkpoint, i) ? std::max<std::int64_t>(0, model.layers[i].savingBytes()) : 0);
    return freed;
}

std::int64_t recomputePeak(const CostModel &model, const std::vector<std::int64_t> &freed, std::size_t i)
{
    const ChainLayer &layer = model.layers[i];
    return layer.levelAtBackwardBytes - freed[i + 1] + layer.forwardRiseBytes;
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
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
        if (!isOn(checkpoint, i))
            continue;
        prediction.addedTimeNs += model.layers[i].forwardNs;
        const std::int64_t bytes = recomputePeak(model, freed, i);
        if (bytes > prediction.peakBytes) {
            prediction.peakBytes = bytes;
            prediction.peakTimeNs = model.layers[i].backwardBeginNs;
            prediction.peakPhase = Phase::Backward;
            prediction.peakInRecomputeOf = i;
        }
    }
    prediction.stepTimeNs = model.stepTimeNs + prediction.addedTimeNs;
    return prediction;
}

std::vector<PredictedPoint> predictCurve(const CostModel &model, const std::vector<bool> &checkpoint)
{
    const std::vector<std::int64_t> freed = freedBySegment(model, checkpoint);
    std::vector<PredictedPoint> curve;
    curve.reserve(model.curve.size() + 2 * model.layers.size());
    std::size_t next = model.layers.size(); // recomputes run in reverse chain order
    for (const CurvePoint &point : model.curve) {
        while (next > 0 && model.layers[next - 1].backwardBeginNs <= point.timeNs) {
            --next;
            if (isOn(checkpoint, next)) // a spike just as its backward begins
                curve.push_back({model.layers[next].backwardBeginNs, recomputePeak(model, freed, next)});
        }
        curve.push_back({point.timeNs, point.bytes - freed[point.segment]});
    }
    return curve;
}

} // namespace peaklens
