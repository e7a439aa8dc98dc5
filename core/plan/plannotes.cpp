// SPDX-License-Identifier: Apache-2.0
#include "plannotes.h"

#include "core/trace/units.h"

#include <algorithm>
#include <cmath>

namespace peaklens {

std::string timeOutlierNote(const CostModel &model)
{
    std::string flagged;
    std::size_t count = 0;
    for (const ChainLayer &layer : model.layers) {
        for (const auto &[measured, typical, what] : {std::tuple(layer.outlierForwardNs, layer.forwardNs, "forward"),
                                                      std::tuple(layer.outlierBackwardNs, layer.backwardNs, "backward")}) {
            if (!measured)
                continue;
            const double times = typical > 0 ? static_cast<double>(*measured) / static_cast<double>(typical) : 0.0;
            flagged += std::string(count++ ? "; " : "") + layer.path + "'s " + what + " took " + formatDuration(*measured) + ", "
                       + std::to_string(static_cast<long long>(std::lround(times))) + "× the chain's median of "
                       + formatDuration(typical);
        }
    }
    if (count == 0)
        return {};
    return "Warm-up: " + flagged + (count == 1 ? ". It is" : ". They are")
           + " taken for a first call's set-up, not what a recompute costs, and predicted at the median.";
}

namespace {

// "blocks.1's policy saves aten.mm.default, which its forward never runs: ..."
void addPolicyNotes(const CostModel &model, const CheckpointSchedule &schedule, std::vector<std::string> &notes)
{
    for (const CheckpointUnit &unit : schedule) {
        if (unit.saved.empty() || unit.last >= model.layers.size())
            continue;
        const ChainLayer &layer = model.layers[unit.last];
        if (layer.operators.outputs.empty()) {
            notes.push_back("The trace names no operator in " + layer.path + "'s forward, so its policy is predicted to keep "
                            + "nothing; a recording through PyTorch's allocator (record --backend torch) names them.");
            continue;
        }
        std::string missing, ran;
        std::size_t count = 0;
        for (const std::string &op : unit.saved) {
            const bool runs = std::any_of(layer.operators.outputs.begin(), layer.operators.outputs.end(),
                                          [&](const OperatorOutputs &outputs) { return outputs.op == op; });
            if (!runs)
                missing += (count++ ? ", " : "") + op;
        }
        if (count == 0)
            continue;
        for (const OperatorOutputs &outputs : layer.operators.outputs)
            ran += (ran.empty() ? "" : ", ") + outputs.op;
        std::string note = layer.path;
        note.append("'s policy saves ")
            .append(missing)
            .append(count == 1 ? ", which its forward never runs: it saves nothing of it"
                               : ", none of which its forward runs: it saves nothing of them")
            .append(". Its forward runs ")
            .append(ran)
            .append(".");
        notes.push_back(std::move(note));
    }
}

} // namespace

std::vector<std::string> planNotes(const CostModel &model, const CheckpointSchedule &schedule, const Prediction &prediction)
{
    std::vector<std::string> notes;
    if (prediction.peakInRecomputeOf)
        notes.push_back("The peak is the recompute of " + model.layers[*prediction.peakInRecomputeOf].path + ".");
    else if (prediction.peakPhase == Phase::Optimizer)
        notes.push_back("The peak is in the optimizer, after the saved activations are freed: checkpointing cannot lower it.");
    if (std::string outliers = timeOutlierNote(model); !outliers.empty())
        notes.push_back(std::move(outliers));
    if (model.backwardEstimated)
        notes.push_back(
            "The trace times no layer's backward; each was estimated from when the blocks its forward saved were freed.");
    // The costs added up disagree among their rounds (or steps) by more than a quarter.
    if (prediction.addedTimeNs > 0 && 4 * prediction.addedTimeSpreadNs > prediction.addedTimeNs)
        notes.push_back(std::string("The added time is uncertain: the ")
                        + (model.recomputeMeasured ? "calibration rounds" : "steps") + " it is measured from disagree by up to ±"
                        + formatDuration(prediction.addedTimeSpreadNs) + "; rerun the plan to measure it.");
    addPolicyNotes(model, schedule, notes);
    return notes;
}

} // namespace peaklens
