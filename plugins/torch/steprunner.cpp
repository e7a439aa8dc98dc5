// SPDX-License-Identifier: Apache-2.0
#include "steprunner.h"

#include "autocastscope.h"
#include "memoryrecorder.h"
#include "savedtensorpacking.h"

#include "core/trace/tracebuilder.h"

#include <torch/cuda.h>

#include <algorithm>

namespace peaklens::replay {

void synchronize(const torch::Device &device)
{
    if (device.is_cuda())
        torch::cuda::synchronize(device.index());
}

// The ranges of one run: forward ranges are opened and closed around each stage, backward
// ranges move from stage to stage as the gradient reaches each stage's output. A part's
// ranges nest inside its stage's: pushed and popped.
class RangeRecorder
{
public:
    explicit RangeRecorder(std::int64_t step)
        : m_step(step)
    {
    }

    // Closes what is open and opens a stage's range. The ranges of its parts already
    // pushed (a part whose output is the stage's own gets its gradient first) stay open,
    // inside it.
    void open(std::uint32_t layer, Phase phase)
    {
        std::vector<Open> parts;
        while (!m_open.empty() && m_open.back().parent == layer && m_open.back().range.phase == phase) {
            parts.push_back(m_open.back());
            m_open.pop_back();
        }
        // What was open ends where the stage's backward began: with its first part's.
        const std::int64_t begin = parts.empty() ? MemoryRecorder::instance().nowNs() : parts.back().range.beginNs;
        close(0, begin);
        m_open.push_back({Range{layer, phase, m_step, begin, 0, 0}, kNoLayer});
        m_open.insert(m_open.end(), parts.rbegin(), parts.rend());
        setScope();
    }

    // Opens the range of a part of stage `parent`, inside what is open.
    void push(std::uint32_t layer, Phase phase, std::uint32_t parent)
    {
        m_open.push_back({Range{layer, phase, m_step, MemoryRecorder::instance().nowNs(), 0, 0}, parent});
        setScope();
    }

    // Closes the innermost open range of `layer`. A part pushed after it stays open: parts
    // are siblings, and the gradient that ends one part's backward (its input's) begins
    // the backward of the part that made that input, whose hook runs first.
    void pop(std::uint32_t layer)
    {
        const auto found =
            std::find_if(m_open.rbegin(), m_open.rend(), [&](const Open &open) { return open.range.layer == layer; });
        if (found == m_open.rend())
            return;
        const auto at = std::prev(found.base());
        Range range = at->range;
        range.endNs = std::max(MemoryRecorder::instance().nowNs(), range.beginNs);
        m_ranges.push_back(range);
        m_open.erase(at);
        if (!m_open.empty())
            setScope();
    }

    void closeOpen() { close(0, MemoryRecorder::instance().nowNs()); }

    std::vector<Range> take()
    {
        closeOpen();
        return std::move(m_ranges);
    }

private:
    struct Open
    {
        Range range;
        std::uint32_t parent; // the stage of a part's range
    };

    void setScope() const
    {
        MemoryRecorder::instance().setScope({m_open.back().range.layer, m_open.back().range.phase, Category::Temporary});
    }

    // Closes the open ranges from `depth` in, innermost first, at `endNs`.
    void close(std::size_t depth, std::int64_t endNs)
    {
        while (m_open.size() > depth) {
            m_open.back().range.endNs = std::max(endNs, m_open.back().range.beginNs);
            m_ranges.push_back(m_open.back().range);
            m_open.pop_back();
        }
    }

    std::int64_t m_step;
    std::vector<Open> m_open; // outermost first
    std::vector<Range> m_ranges;
};

LayerIds registerLayers(TraceBuilder &builder, const ReplayModel &model)
{
    LayerIds ids;
    const auto [container, containerKind] = model.chainContainer();
    std::int64_t chainBytes = 0;
    for (const Stage &stage : model.stages()) {
        const std::uint32_t id = builder.layer(stage.path);
        builder.setLayerInfo(id, stage.kind, stage.parameterBytes());
        ids.stages.push_back(id);
        ids.parts.emplace_back();
        for (const Stage &part : stage.parts) {
            ids.parts.back().push_back(builder.layer(part.path));
            builder.setLayerInfo(ids.parts.back().back(), part.kind, part.parameterBytes());
        }
        if (stage.chain)
            chainBytes += stage.parameterBytes();
    }
    if (!container.empty())
        builder.setLayerInfo(builder.layer(container), containerKind, chainBytes);
    ids.loss = builder.layer("loss");
    builder.setLayerInfo(ids.loss, model.lossKind(), 0);
    return ids;
}

StepRunner::StepRunner(ReplayModel &model, const CheckpointSchedule &schedule, const LayerIds &ids, const RunOptions &options,
                       const torch::Device &device)
    : m_model(model)
    , m_ids(ids)
    , m_options(options)
    , m_device(device)
{
    // A unit's stages are marked on the step's ranges as they run.
    m_marks.forwardBegins = [this](std::size_t stage) {
        if (auto current = m_current.lock())
            current->open(m_ids.stages[stage], Phase::Forward);
    };
    m_marks.forwardEnds = [this] {
        if (auto current = m_current.lock())
            current->closeOpen();
    };
    m_marks.backwardBegins = [this](std::size_t stage) {
        if (auto current = m_current.lock())
            current->open(m_ids.stages[stage], Phase::Backward);
    };
    // A part's ranges are pushed around it by runPart; its checkpoint marks nothing.
    m_partMarks.forwardBegins = [](std::size_t) {};
    m_partMarks.forwardEnds = [] {};
    m_partMarks.backwardBegins = [](std::size_t) {};
    m_partUnits.resize(model.stages().size());
    for (std::size_t i = 0; i < model.stages().size(); ++i)
        m_partUnits[i].resize(model.stages()[i].parts.size());
    for (const CheckpointUnit &unit : schedule) {
        if (unit.isPart())
            m_partUnits[unit.first][unit.part] = CheckpointUnit{unit.part, unit.part, {}};
        else
            m_wholeUnits.push_back(unit);
    }
}

void StepRunner::run(std::int64_t step, const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer,
                     std::vector<Range> &ranges)
{
    MemoryRecorder &recorder = MemoryRecorder::instance();
    auto record = std::make_shared<RangeRecorder>(step);
    m_current = record;
    recorder.setScope({kNoLayer, Phase::Other, Category::Temporary});
    for (torch::Tensor &parameter : m_model.parameters())
        parameter.mutable_grad() = torch::Tensor(); // zero_grad(set_to_none=True)

    for (const Batch &batch : batches) {
        std::size_t since = recorder.eventCount();
        torch::Tensor loss = forward(batch, *record);
        recorder.promoteLive(since, Category::Temporary, Category::Activation);

        since = recorder.eventCount();
        record->open(m_ids.loss, Phase::Backward);
        loss.backward();
        record->closeOpen();
        recorder.promoteLive(since, Category::Temporary, Category::Gradient);
    }

    const std::size_t since = recorder.eventCount();
    record->open(kNoLayer, Phase::Optimizer);
    optimizer.step();
    record->closeOpen();
    recorder.promoteLive(since, Category::Temporary, Category::OptimizerState);
    recorder.setScope({kNoLayer, Phase::Other, Category::Temporary});
    synchronize(m_device);
    auto stepRanges = record->take();
    ranges.insert(ranges.end(), stepRanges.begin(), stepRanges.end());
}

void StepRunner::abandon(std::vector<Range> &ranges)
{
    if (auto record = m_current.lock()) {
        auto stepRanges = record->take();
        ranges.insert(ranges.end(), stepRanges.begin(), stepRanges.end());
    }
}

torch::Tensor StepRunner::forward(const Batch &batch, RangeRecorder &record)
{
    std::optional<AutocastScope> autocast;
    if (m_options.bf16)
        autocast.emplace(AutocastState{!m_device.is_cuda(), m_device.is_cuda(), at::kBFloat16, at::kBFloat16});
    torch::Tensor x = batch.input;
    const auto &stages = m_model.stages();
    auto unit = m_wholeUnits.begin();
    for (std::size_t i = 0; i < stages.size(); ++i) {
        if (unit != m_wholeUnits.end() && unit->first == i && !unit->runsPlainly()) {
            x = runCheckpointed(stages, *unit, x, m_marks);
            i = unit->last;
            ++unit;
        } else {
            // A unit kept elsewhere runs its stages plainly, packing what they save.
            std::optional<SavedTensorPacking> packing;
            const bool kept = unit != m_wholeUnits.end() && unit->first <= i;
            if (kept)
                packing.emplace(unit->kept, m_model.state());
            record.open(m_ids.stages[i], Phase::Forward);
            x = stages[i].parts.empty() ? stages[i].forward(x)
                                        : stages[i].compose(x, [&](std::size_t part, const torch::Tensor &in) {
                                              return runPart(i, part, in, record);
                                          });
            record.closeOpen();
            if (kept && unit->last == i)
                ++unit;
        }
        if (x.requires_grad()) {
            // The gradient of a stage's output arriving is where that stage's backward begins.
            std::weak_ptr<RangeRecorder> weak = m_current;
            const std::uint32_t layer = m_ids.stages[i];
            x.register_hook([weak, layer](const torch::Tensor &) {
                if (auto current = weak.lock())
                    current->open(layer, Phase::Backward);
            });
        }
    }
    record.open(m_ids.loss, Phase::Forward);
    torch::Tensor loss = m_model.loss(x, batch.target);
    if (m_options.microBatches > 1)
        loss = loss / static_cast<double>(m_options.microBatches);
    record.closeOpen();
    return loss;
}

torch::Tensor StepRunner::runPart(std::size_t stage, std::size_t part, const torch::Tensor &input, RangeRecorder &record)
{
    const std::uint32_t layer = m_ids.parts[stage][part];
    const std::optional<CheckpointUnit> &unit = m_partUnits[stage][part];
    const std::uint32_t parent = m_ids.stages[stage];
    record.push(layer, Phase::Forward, parent);
    torch::Tensor output = unit ? runCheckpointed(m_model.stages()[stage].parts, *unit, input, m_partMarks)
                                : m_model.stages()[stage].parts[part].forward(input);
    record.pop(layer);
    std::weak_ptr<RangeRecorder> weak = m_current;
    if (output.requires_grad()) {
        output.register_hook([weak, layer, parent](const torch::Tensor &) {
            if (auto current = weak.lock())
                current->push(layer, Phase::Backward, parent);
        });
    }
    if (input.requires_grad()) {
        input.register_hook([weak, layer](const torch::Tensor &) {
            if (auto current = weak.lock())
                current->pop(layer);
        });
    }
    return output;
}

} // namespace peaklens::replay
