// SPDX-License-Identifier: Apache-2.0
#include "replayrunner.h"

#include "calibrationrounds.h"
#include "core/analysis/median.h"
#include "memoryrecorder.h"
#include "steprunner.h"
#include "torchcompat.h"

#include "core/error.h"
#include "core/format/tracewriter.h"
#include "core/plan/checkpointstrategy.h"
#include "core/plan/rerunlaunch.h"
#include "core/trace/frameclassifier.h"
#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/cuda.h>

#ifdef PEAKLENS_REPLAY_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <tuple>
#include <unordered_set>

namespace peaklens::replay {

namespace {

torch::Device chooseDevice(DeviceChoice choice)
{
    const bool cuda = torch::cuda::is_available();
    if (choice == DeviceChoice::Cuda && !cuda)
        throw Error("--device cuda: no CUDA device is available to this LibTorch build; use --device cpu.");
    return choice == DeviceChoice::Cpu || !cuda ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, 0);
}

std::string deviceName(const torch::Device &device)
{
#ifdef PEAKLENS_REPLAY_CUDA
    if (device.is_cuda())
        return at::cuda::getDeviceProperties(device.index())->name;
#endif
    (void)device;
    const int threads = torch::get_num_threads();
    return "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

// What the device can hold: a GPU's memory, or the limit a CPU run fails beyond.
std::int64_t deviceMemory(const torch::Device &device, std::int64_t cpuLimit)
{
#ifdef PEAKLENS_REPLAY_CUDA
    if (device.is_cuda())
        return static_cast<std::int64_t>(at::cuda::getDeviceProperties(device.index())->totalGlobalMem);
#endif
    (void)device;
    return cpuLimit;
}

// Peak of the caching allocator on CUDA (what torch.cuda.max_memory_allocated reports),
// of the counting allocator on CPU.
void resetPeak(const torch::Device &device)
{
    MemoryRecorder::instance().resetPeak();
#ifdef PEAKLENS_REPLAY_CUDA
    if (device.is_cuda())
        compat::resetCudaPeakStats(device.index());
#endif
    (void)device;
}

std::int64_t measuredPeak(const torch::Device &device)
{
#ifdef PEAKLENS_REPLAY_CUDA
    if (device.is_cuda())
        return compat::cudaPeakAllocatedBytes(device.index());
#endif
    (void)device;
    return MemoryRecorder::instance().peakBytes();
}

std::int64_t availableMemoryBytes()
{
    const long pages = sysconf(_SC_AVPHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
        return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(static_cast<double>(pages) * static_cast<double>(pageSize) * 0.9);
}

double milliseconds(std::int64_t ns)
{
    return static_cast<double>(ns) / 1e6;
}

std::string describeWhere(const Trace &trace, const Scope &scope, std::int64_t step)
{
    std::string where =
        scope.phase == Phase::Other ? std::string("outside forward and backward") : std::string(phaseName(scope.phase));
    if (scope.layer != kNoLayer && scope.layer < trace.layers.size())
        where += " of " + trace.layers[scope.layer].path;
    return where + " at step " + std::to_string(step);
}

} // namespace

namespace {

LayerParts partPaths(const std::vector<Stage> &stages)
{
    LayerParts parts;
    for (const Stage &stage : stages) {
        parts.emplace_back();
        for (const Stage &part : stage.parts)
            parts.back().push_back(part.path);
    }
    return parts;
}

} // namespace

CheckpointSchedule resolveCheckpoint(const std::vector<Stage> &stages, const std::string &argument, const std::string &option)
{
    std::vector<std::string> chain, all;
    for (const Stage &stage : stages) {
        all.push_back(stage.path);
        if (stage.chain)
            chain.push_back(stage.path);
    }
    CheckpointSchedule schedule;
    try {
        schedule = CheckpointStrategy::parse(argument).schedule(chain, all, partPaths(stages));
    } catch (const Error &error) {
        throw Error(option + ": " + error.what());
    }
    return schedule;
}

namespace {

// One configuration's figures, its warm-up steps left out.
ReplaySteps stepsOf(const std::vector<std::string> &checkpoint, const std::vector<StepMeasure> &steps,
                    std::optional<std::int64_t> peakAllocatedBytes, std::optional<double> stepTimeMs,
                    const std::optional<ReplayOutOfMemory> &oom)
{
    ReplaySteps figures{checkpoint, peakAllocatedBytes, stepTimeMs, {}, {}, oom};
    for (const StepMeasure &step : steps) {
        if (!step.warmup) {
            figures.stepTimesMs.push_back(step.timeMs);
            figures.stepPeaksBytes.push_back(step.peakAllocatedBytes);
        }
    }
    return figures;
}

} // namespace

ReplayResult replayResultOf(const RunResult &run, const std::optional<GradientCheck> &check, const std::string &tracePath)
{
    ReplayResult result;
    static_cast<ReplaySteps &>(result) = stepsOf(run.checkpoint, run.steps, run.peakAllocatedBytes, run.stepTimeMs, run.oom);
    result.device = run.device;
    result.deviceName = run.deviceName;
    result.dtype = run.dtype;
    if (const auto &baseline = run.baseline)
        result.baseline =
            stepsOf(baseline->checkpoint, baseline->steps, baseline->peakAllocatedBytes, baseline->stepTimeMs, baseline->oom);
    result.modelJson = run.spec.toJson().dump();
    if (check)
        result.gradients = ReplayGradientCheck{check->maxAbsDifference, check->maxRelativeDifference,
                                               check->worstParameter,   check->values,
                                               check->tolerance,        check->agree()};
    result.tracePath = tracePath;
    return result;
}

namespace {

std::optional<double> medianTime(const std::vector<StepMeasure> &steps)
{
    std::vector<double> times;
    for (const StepMeasure &step : steps) {
        if (!step.warmup)
            times.push_back(step.timeMs);
    }
    return times.empty() ? std::nullopt : std::optional<double>(median(times));
}

// Event indexes [first, second) of one step.
using EventSpan = std::pair<std::size_t, std::size_t>;

// Leaves the events of the steps in `hidden` (spans in order) out of a trace that takes
// the recorded events in order, piece by piece. A block such a step allocated is left out,
// and so is its free, wherever that falls; a block of the other steps that it frees (the
// gradients of the step before) is freed where that happened, outside any layer.
class HiddenSteps
{
public:
    explicit HiddenSteps(const std::vector<EventSpan> &hidden)
        : m_hidden(hidden)
    {
    }

    // The event at `index` as the trace keeps it, or nothing. Every span that starts at or
    // before `index` is in `hidden` by the time it is offered.
    std::optional<RecordedEvent> keep(std::size_t index, RecordedEvent event)
    {
        while (m_next < m_hidden.size() && m_hidden[m_next].second <= index)
            ++m_next;
        const bool inHidden = m_next < m_hidden.size() && m_hidden[m_next].first <= index;
        if (event.deltaBytes > 0 && inHidden) {
            m_live.insert(event.addr);
            return std::nullopt;
        }
        if (event.deltaBytes < 0 && m_live.erase(event.addr))
            return std::nullopt;
        if (inHidden) {
            event.scope.layer = kNoLayer;
            event.scope.phase = Phase::Other;
        }
        return event;
    }

private:
    const std::vector<EventSpan> &m_hidden;
    std::size_t m_next = 0;
    std::unordered_set<std::uint64_t> m_live;
};

// One replay from set-up to trace; an out-of-memory failure anywhere ends it as a result.
class Replay
{
public:
    Replay(const ModelSpec &spec, const RunOptions &options)
        : m_spec(spec)
        , m_options(options)
        , m_device(chooseDevice(options.device))
        , m_recorder(MemoryRecorder::instance())
        , m_hidden(m_baselineEvents)
    {
        if (!m_device.is_cuda())
            m_recorder.installCpuAllocator();
        m_recorder.restart(m_device.is_cuda());
        m_cpuLimit = options.memoryLimitBytes ? *options.memoryLimitBytes : availableMemoryBytes();
        m_recorder.setCpuLimit(m_cpuLimit);
        if (m_device.is_cuda())
            m_cudaListener = m_recorder.listenToCuda();
        m_result.spec = spec;
        m_result.device = m_device.str();
        m_result.deviceName = deviceName(m_device);
        m_result.dtype = options.bf16 ? "bf16" : "fp32";
        if (options.baseline)
            m_result.baseline.emplace();
        m_lane = m_builder.lane({{m_device.is_cuda() ? DeviceType::Cuda : DeviceType::Cpu,
                                  static_cast<std::int16_t>(m_device.is_cuda() ? m_device.index() : 0)},
                                 0});
        if (!options.out.empty())
            m_out = std::make_unique<TraceWriter>(options.out);
    }

    RunResult run()
    {
        torch::manual_seed(m_spec.seed);
        std::optional<torch::optim::AdamW> optimizer;
        std::vector<Batch> batches;
        try {
            m_recorder.setScope({kNoLayer, Phase::Other, Category::Parameter});
            m_model = buildModel(m_spec, m_device);
            m_ids = registerLayers(m_builder, *m_model);
            m_schedule = resolveCheckpoint(m_model->stages(), m_options.checkpoint);
            if (m_options.baseline)
                m_baselineSchedule = resolveCheckpoint(m_model->stages(), *m_options.baseline, "--baseline");
            m_recorder.setScope({kNoLayer, Phase::Other, Category::Input});
            for (int i = 0; i < m_options.microBatches; ++i)
                batches.push_back(m_model->makeBatch(m_device));
            optimizer.emplace(m_model->parameters(), torch::optim::AdamWOptions(m_spec.learningRate));
        } catch (const peaklens::Error &) {
            throw;
        } catch (const std::exception &error) {
            failed(error, std::nullopt);
        }
        if (m_model) {
            m_result.checkpoint = unitTexts(m_schedule);
            m_result.schedule = m_schedule;
            if (m_result.baseline)
                m_result.baseline->checkpoint = unitTexts(m_baselineSchedule);
        }
        describe();
        if (!m_result.oom)
            runSteps(batches, *optimizer);
        m_measuredEvents = m_recorder.eventCount();
        m_measuredEndNs = m_recorder.nowNs();
        record();
        if (m_options.keepGradients && m_model) {
            for (const Stage &stage : m_model->stages()) {
                for (std::size_t i = 0; i < stage.parameters.size(); ++i) {
                    const torch::Tensor &grad = stage.parameters[i].grad();
                    m_result.gradients.push_back(grad.defined() ? grad.clone() : torch::Tensor());
                    m_result.gradientNames.push_back(stage.path + "[" + std::to_string(i) + "]");
                }
            }
        }
        if (!m_result.oom && m_options.calibrationSteps > 0)
            calibrate(batches, *optimizer);
        if (!m_checkpointCosts.empty())
            m_builder.setMeta(metakey::CheckpointCosts, m_checkpointCosts);
        if (!m_checkpointCostSpreads.empty())
            m_builder.setMeta(metakey::CheckpointCostSpreads, m_checkpointCostSpreads);
        m_builder.setMeta(metakey::ReplayResult, replayResultOf(m_result).toJson());
        if (m_out) {
            m_out->writeNew(m_builder.current());
            m_out->finish();
        }
        m_result.trace = m_builder.finish();
        notify({{"event", "done"}});
        return std::move(m_result);
    }

private:
    void notify(const nlohmann::json &line) const
    {
        if (m_options.progress)
            m_options.progress(line);
    }

    // The schedule's units as the strategy grammar writes them: passed back, the same schedule.
    std::vector<std::string> unitTexts(const CheckpointSchedule &schedule) const
    {
        if (schedule.empty())
            return {};
        std::vector<std::string> paths;
        for (const Stage &stage : m_model->stages())
            paths.push_back(stage.path);
        return CheckpointStrategy::of(schedule, paths, partPaths(m_model->stages())).unitTexts();
    }

    // Each step with a baseline runs it too, as a pair; progress counts the pairs.
    void runSteps(const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer)
    {
        const int totalSteps = m_options.warmupSteps + m_options.steps;
        notify({{"event", "start"}, {"device", m_result.device}, {"layers", m_model->stages().size()}, {"steps", totalSteps}});
        StepRunner runner(*m_model, m_schedule, m_ids, m_options, m_device);
        std::optional<StepRunner> baseline;
        if (m_result.baseline)
            baseline.emplace(*m_model, m_baselineSchedule, m_ids, m_options, m_device);
        for (int step = 0; step < totalSteps; ++step) {
            if (step == m_options.warmupSteps) {
                // The trace holds the measured steps only, starting from the state warm-up left.
                synchronize(m_device);
                m_recorder.rebase();
                m_ranges.clear();
                m_measuring = true;
            }
            // The two take turns going first, so that what going first or second does to a
            // step (a machine speeding up or slowing down) falls on each half of the pairs.
            const bool baselineFirst = step % 2 == 0;
            if (baseline && baselineFirst)
                runBaselineStep(*baseline, step, batches, optimizer);
            if (!runMeasuredStep(runner, step, batches, optimizer))
                break;
            if (baseline && !baselineFirst)
                runBaselineStep(*baseline, step, batches, optimizer);
            if (m_measuring)
                record();
            const StepMeasure &measure = m_result.steps.back();
            nlohmann::json line = {{"event", "step"},
                                   {"step", step},
                                   {"of", totalSteps},
                                   {"warmup", measure.warmup},
                                   {"peak_allocated_bytes", measure.peakAllocatedBytes},
                                   {"step_time_ms", measure.timeMs}};
            if (baseline && !m_result.baseline->steps.empty() && m_result.baseline->steps.back().number == step) {
                line["baseline_peak_allocated_bytes"] = m_result.baseline->steps.back().peakAllocatedBytes;
                line["baseline_step_time_ms"] = m_result.baseline->steps.back().timeMs;
            }
            notify(line);
        }
        m_result.stepTimeMs = medianTime(m_result.steps);
        if (m_result.baseline)
            m_result.baseline->stepTimeMs = medianTime(m_result.baseline->steps);
    }

    // One step of the schedule the trace records. False when it failed: out of memory.
    bool runMeasuredStep(StepRunner &runner, int step, const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer)
    {
        synchronize(m_device);
        resetPeak(m_device);
        const std::int64_t begin = m_recorder.nowNs();
        try {
            runner.run(step, batches, optimizer, m_ranges);
        } catch (const std::exception &error) {
            runner.abandon(m_ranges);
            failed(error, step);
            m_builder.addStep({step, begin, m_recorder.nowNs()});
            return false;
        }
        const std::int64_t end = m_recorder.nowNs();
        const StepMeasure measure{step, step < m_options.warmupSteps, measuredPeak(m_device), milliseconds(end - begin)};
        m_result.steps.push_back(measure);
        if (!measure.warmup) {
            m_builder.addStep({step, begin, end});
            m_result.peakAllocatedBytes = std::max(m_result.peakAllocatedBytes.value_or(0), measure.peakAllocatedBytes);
        }
        return true;
    }

    // One step of the baseline's schedule, timed and its peak taken as a measured step's, on
    // the same model, batches and optimizer; its ranges are dropped and its allocations left
    // out of the trace. Out of memory ends the baseline's steps, not the run.
    void runBaselineStep(StepRunner &runner, int step, const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer)
    {
        BaselineResult &baseline = *m_result.baseline;
        if (baseline.oom)
            return;
        const bool warmup = step < m_options.warmupSteps;
        synchronize(m_device);
        resetPeak(m_device);
        const std::size_t firstEvent = m_recorder.eventCount();
        const std::int64_t begin = m_recorder.nowNs();
        std::vector<Range> ranges;
        try {
            runner.run(step, batches, optimizer, ranges);
        } catch (const std::exception &error) {
            runner.abandon(ranges);
            baseline.oom = outOfMemoryIn(error, step, "the baseline's step failed").oom;
            notify({{"event", "oom"}, {"baseline", true}, {"message", baseline.oom->message}});
        }
        const std::int64_t end = m_recorder.nowNs();
        if (!warmup) // warm-up events are gone once the measured steps begin
            m_baselineEvents.emplace_back(firstEvent, m_recorder.eventCount());
        if (!baseline.oom) {
            baseline.steps.push_back({step, warmup, measuredPeak(m_device), milliseconds(end - begin)});
            if (!warmup)
                baseline.peakAllocatedBytes =
                    std::max(baseline.peakAllocatedBytes.value_or(0), baseline.steps.back().peakAllocatedBytes);
        }
    }

    // Calibration, after the measured steps and left out of the trace: rounds of a plain
    // step (the schedule as given), a step with every chain stage it leaves plain
    // checkpointed whole, and a step with each of their parts checkpointed on its own. What
    // checkpointing a stage or part adds to a step is the median over the rounds of its
    // forward and backward time there less in the same round's plain step: pairs run side by
    // side, so a machine that drifts between the measured steps and these does not move the
    // costs. The first round warms the new schedules up and is not counted. A schedule that
    // fails is skipped. Where the rounds disagree (a trial's total over its stages strays
    // from the rounds' median by more than a quarter), up to as many rounds again are run.
    // The costs go to the trace's "checkpoint.costs" for the planner, and how far each
    // one's rounds strayed from it to "checkpoint.cost_spreads".
    void calibrate(const std::vector<Batch> &batches, torch::optim::Optimizer &optimizer)
    {
        const auto &stages = m_model->stages();
        const std::vector<bool> toggled = toggledPositions(m_schedule, stages.size());
        const std::vector<std::uint64_t> parted = partMasks(m_schedule, stages.size());
        struct Trial
        {
            CheckpointSchedule schedule;
            std::vector<std::pair<std::uint32_t, std::string>> calibrated; // layer id, path
            std::vector<Range> ranges;
            bool failed = false;
        };
        Trial wholes{m_schedule, {}, {}}, parts{m_schedule, {}, {}};
        for (std::size_t k = 0; k < stages.size(); ++k) {
            if (toggled[k] || parted[k] != 0 || !stages[k].chain)
                continue;
            wholes.schedule.push_back({k, k, {}});
            wholes.calibrated.emplace_back(m_ids.stages[k], stages[k].path);
            for (std::size_t c = 0; c < stages[k].parts.size(); ++c) {
                parts.schedule.push_back({k, k, {}, c});
                parts.calibrated.emplace_back(m_ids.parts[k][c], stages[k].parts[c].path);
            }
        }
        for (Trial *trial : {&wholes, &parts}) {
            std::sort(trial->schedule.begin(), trial->schedule.end(), [](const CheckpointUnit &a, const CheckpointUnit &b) {
                return std::tie(a.first, a.part) < std::tie(b.first, b.part);
            });
            trial->failed = trial->calibrated.empty();
        }
        if (wholes.failed && parts.failed)
            return;

        StepRunner plainRunner(*m_model, m_schedule, m_ids, m_options, m_device);
        StepRunner wholeRunner(*m_model, wholes.schedule, m_ids, m_options, m_device);
        StepRunner partRunner(*m_model, parts.schedule, m_ids, m_options, m_device);
        const std::vector<std::pair<Trial *, StepRunner *>> trials{{&wholes, &wholeRunner}, {&parts, &partRunner}};
        std::vector<Range> plainRanges, warmup;
        std::int64_t stepNumber = m_options.warmupSteps + m_options.steps;
        const auto runRound = [&](bool warm) {
            plainRunner.run(stepNumber, batches, optimizer, warm ? warmup : plainRanges);
            for (auto [trial, runner] : trials) {
                if (trial->failed)
                    continue;
                try {
                    runner->run(stepNumber, batches, optimizer, warm ? warmup : trial->ranges);
                } catch (const std::exception &) {
                    trial->failed = true;
                }
            }
            ++stepNumber;
        };
        // Per trial and calibrated stage, what checkpointing it added in each round.
        const auto addedIn = [&](const Trial &trial) {
            std::vector<std::uint32_t> layers;
            for (const auto &entry : trial.calibrated)
                layers.push_back(entry.first);
            return addedPerRound(plainRanges, trial.ranges, layers);
        };
        const auto disagree = [&] {
            return std::any_of(trials.begin(), trials.end(),
                               [&](const auto &entry) { return !entry.first->failed && roundsDisagree(addedIn(*entry.first)); });
        };
        try {
            for (int round = 0; round <= m_options.calibrationSteps; ++round)
                runRound(round == 0);
            for (int extra = 0; extra < m_options.calibrationSteps && disagree(); ++extra)
                runRound(false);
        } catch (const std::exception &) {
            return;
        }

        nlohmann::json costs = nlohmann::json::object(), spreads = nlohmann::json::object();
        for (auto [trial, runner] : trials) {
            if (trial->failed)
                continue;
            const auto added = addedIn(*trial);
            for (std::size_t k = 0; k < added.size(); ++k) {
                if (const auto cost = calibratedCost(added[k])) {
                    costs[trial->calibrated[k].second] = cost->ns;
                    spreads[trial->calibrated[k].second] = cost->spreadNs;
                }
            }
        }
        m_checkpointCosts = costs.dump();
        m_checkpointCostSpreads = spreads.dump();
    }

    struct OutOfMemoryAt
    {
        ReplayOutOfMemory oom;
        std::int64_t timeNs = 0;
    };

    // Where memory ran out; any other failure is an error starting with `failing`
    // ("the replay failed") and naming where it happened.
    OutOfMemoryAt outOfMemoryIn(const std::exception &error, std::optional<std::int64_t> step, const std::string &failing)
    {
        const auto recorded = m_recorder.takeOutOfMemory();
        const bool outOfMemory = recorded || dynamic_cast<const c10::OutOfMemoryError *>(&error);
        const Scope scope = recorded ? recorded->scope : m_recorder.scope();
        const std::string where =
            step ? describeWhere(m_builder.current(), scope, *step) : std::string("while building the model");
        if (!outOfMemory)
            throw Error(failing + " " + std::string(step ? "in " : "") + where + ": " + errorText(error));
        OutOfMemoryAt at;
        if (scope.layer != kNoLayer)
            at.oom.layer = m_builder.current().layers[scope.layer].path;
        at.oom.phase = scope.phase;
        at.oom.step = step;
        at.oom.requestedBytes = recorded ? recorded->requestedBytes : 0;
        at.oom.message = "out of memory " + std::string(step ? "in " : "") + where;
        at.timeNs = recorded ? recorded->timeNs : m_recorder.nowNs();
        return at;
    }

    // Out of memory becomes the result; anything else is an error naming where it happened.
    void failed(const std::exception &error, std::optional<std::int64_t> step)
    {
        const OutOfMemoryAt at = outOfMemoryIn(error, step, "the replay failed");
        m_builder.addMarker({at.timeNs, m_lane, MarkerKind::OutOfMemory, at.oom.requestedBytes});
        m_result.oom = at.oom;
        notify({{"event", "oom"}, {"message", at.oom.message}});
    }

    // The trace's metadata known before the steps run: what was replayed, how, and on what.
    void describe()
    {
        std::vector<std::string> paths;
        std::string chain;
        if (m_model) {
            for (const Stage &stage : m_model->stages()) {
                paths.push_back(stage.path);
                if (stage.chain)
                    chain += (chain.empty() ? "" : ",") + stage.path;
            }
        }
        const std::string written =
            CheckpointStrategy::of(m_schedule, paths, m_model ? partPaths(m_model->stages()) : LayerParts{}).toString();
        const std::string checkpointList = written == "none" ? std::string() : written;
        m_builder.setMeta(metakey::SourceFormat, "replay");
        m_builder.setMeta(metakey::Description, modelKindName(m_spec.kind) + " training step replayed by peaklens-replay on "
                                                    + m_result.device + ", checkpoint "
                                                    + (checkpointList.empty() ? std::string("none") : checkpointList));
        m_builder.setMeta(metakey::DeviceName, m_result.deviceName);
        m_builder.setMeta(metakey::DeviceMemory, std::to_string(deviceMemory(m_device, m_cpuLimit)));
        m_builder.setMeta(metakey::ReplaySpec, m_spec.toJson().dump());
        m_builder.setMeta(metakey::Checkpoint, checkpointList);
        m_builder.setMeta(metakey::Chain, chain);
        nlohmann::json options{{"steps", m_options.steps},
                               {"warmup", m_options.warmupSteps},
                               {"device", m_result.device},
                               {"dtype", m_result.dtype},
                               {"micro_batches", m_options.microBatches}};
        if (m_options.baseline)
            options["baseline"] = *m_options.baseline;
        m_builder.setMeta(metakey::ReplayOptions, options.dump());
        m_builder.setMeta(metakey::CreatedBy,
                          std::string("peaklens-replay ") + PEAKLENS_VERSION + ", LibTorch " + compat::libtorchVersion());
        m_builder.setMeta(metakey::TorchVersion, compat::libtorchVersion());
    }

    // Moves what was recorded since the last call into the trace, attributed as it
    // happened: the measured steps' events (the baseline's left out), their reserved
    // events and ranges; nothing of calibration, which comes after measuring ended. With
    // --out, streams it there and commits, so that whoever follows the file sees each step
    // as it ends.
    void record()
    {
        const std::size_t first = m_recordedEvents;
        const std::vector<RecordedEvent> events = m_recorder.events(first);
        const std::size_t end = std::min(first + events.size(), std::max(first, m_measuredEvents));
        m_builder.reserveEvents(m_builder.current().events.size() + (end - first));
        for (; m_recordedEvents < end; ++m_recordedEvents) {
            const auto event = m_hidden.keep(m_recordedEvents, events[m_recordedEvents - first]);
            if (event) {
                m_builder.addEvent({event->timeNs, event->deltaBytes, event->addr, m_lane, event->scope.layer,
                                    operatorStack(event->node, event->op), event->scope.category, event->scope.phase});
            }
        }
        for (ReservedEvent reserved : m_recorder.reservedEvents(m_recordedReserved)) {
            ++m_recordedReserved;
            reserved.lane = m_lane;
            if (reserved.timeNs <= m_measuredEndNs)
                m_builder.addReserved(reserved);
        }
        for (; m_recordedRanges < m_ranges.size(); ++m_recordedRanges)
            m_builder.addRange(m_ranges[m_recordedRanges]);
        if (m_out) {
            m_out->writeNew(m_builder.current());
            m_out->commit();
        }
    }

    // The operator's frames (frameclassifier.h) as a stack of the trace.
    std::uint32_t operatorStack(std::string_view node, std::string_view op)
    {
        if (op.empty())
            return StackTable::kEmptyStack;
        const auto key = std::pair(node.data(), op.data());
        if (const auto known = m_operatorStacks.find(key); known != m_operatorStacks.end())
            return known->second;
        return m_operatorStacks.emplace(key, m_builder.stacks().internStack(operatorFrames(node, op))).first->second;
    }

    const ModelSpec &m_spec;
    const RunOptions &m_options;
    torch::Device m_device;
    MemoryRecorder &m_recorder;
    std::unique_ptr<c10::DebugInfoGuard> m_cudaListener;
    std::int64_t m_cpuLimit = 0;
    TraceBuilder m_builder;
    std::unique_ptr<TraceWriter> m_out; // --out, written as the run goes
    std::uint32_t m_lane = 0;
    std::unique_ptr<ReplayModel> m_model;
    LayerIds m_ids;
    CheckpointSchedule m_schedule;
    CheckpointSchedule m_baselineSchedule;
    std::vector<EventSpan> m_baselineEvents; // of its measured steps, left out of the trace
    HiddenSteps m_hidden;
    std::map<std::pair<const char *, const char *>, std::uint32_t> m_operatorStacks;
    std::vector<Range> m_ranges;
    bool m_measuring = false;                                                       // warm-up is over
    std::size_t m_recordedEvents = 0, m_recordedReserved = 0, m_recordedRanges = 0; // in the trace
    std::size_t m_measuredEvents = SIZE_MAX;
    std::int64_t m_measuredEndNs = INT64_MAX;
    std::string m_checkpointCosts; // JSON, after calibration
    std::string m_checkpointCostSpreads;
    RunResult m_result;
};

} // namespace

RunResult runReplay(const ModelSpec &spec, const RunOptions &options)
{
    if (options.steps < 1 || options.warmupSteps < 0 || options.microBatches < 1)
        throw Error("--steps and --micro-batches must be at least 1 and --warmup at least 0.");
    return Replay(spec, options).run();
}

GradientCheck verifyGradients(const ModelSpec &spec, const RunOptions &options)
{
    RunOptions once = options;
    once.steps = 1;
    once.warmupSteps = 0;
    once.keepGradients = true;
    once.progress = nullptr;
    once.baseline.reset();
    once.out.clear();
    const auto gradientsOf = [&](const std::string &checkpoint) {
        once.checkpoint = checkpoint;
        RunResult result = runReplay(spec, once);
        if (result.oom)
            throw Error("the gradient check ran out of memory with --checkpoint " + checkpoint + ": " + result.oom->message);
        return result;
    };
    const RunResult plain = gradientsOf("none");
    const RunResult checkpointed = gradientsOf(options.checkpoint);
    GradientCheck check;
    // Autocast's bfloat16 and a unit keeping what it saves in bfloat16 are lossy.
    const bool lossy = options.bf16 || gradientTolerance(checkpointed.schedule) == kBfloat16GradientTolerance;
    check.tolerance = lossy ? kBfloat16GradientTolerance : 1e-5;
    for (std::size_t i = 0; i < plain.gradients.size() && i < checkpointed.gradients.size(); ++i) {
        const torch::Tensor &a = plain.gradients[i], &b = checkpointed.gradients[i];
        if (a.defined() != b.defined())
            throw Error("with --checkpoint " + options.checkpoint + ", " + plain.gradientNames[i]
                        + (a.defined() ? " gets no gradient" : " gets a gradient it does not get without checkpointing") + ".");
        if (!a.defined())
            continue;
        const double difference = (b.to(torch::kDouble) - a.to(torch::kDouble)).abs().max().item<double>();
        const double scale = a.to(torch::kDouble).abs().max().item<double>();
        const double relative = difference == 0 ? 0 : scale == 0 ? INFINITY : difference / scale;
        check.maxAbsDifference = std::max(check.maxAbsDifference, difference);
        if (relative > check.maxRelativeDifference || check.worstParameter.empty()) {
            check.maxRelativeDifference = std::max(check.maxRelativeDifference, relative);
            check.worstParameter = plain.gradientNames[i];
        }
        check.values += a.numel();
    }
    return check;
}

} // namespace peaklens::replay
