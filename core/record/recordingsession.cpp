// SPDX-License-Identifier: Apache-2.0
#include "core/record/recordingsession.h"

#include "core/import/annotationranges.h"
#include "core/trace/frameclassifier.h"
#include "core/trace/metadata.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace peaklens::record {

namespace {

constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();
// API records come in the same flush as the memory records they explain, or the next.
constexpr std::uint32_t kBatchesToWait = 2;
// Closed ranges are kept this long behind the newest record for records that come late.
constexpr std::int64_t kScopeRetentionNs = 60'000'000'000;
constexpr std::size_t kScopesKept = 4096;
// Far more modules than any model has: beyond it, names are junk and name no layer.
constexpr std::size_t kLayerLimit = std::size_t(1) << 20;

} // namespace

RecordingSession::RecordingSession(TraceWriter &writer, Options options, std::string_view source)
    : m_writer(writer)
    , m_options(std::move(options))
{
    m_writer.writeMeta(metakey::SourceFormat, source);
    m_writer.writeMeta(metakey::Categories, "lifetime");
    m_writer.writeMeta(metakey::AllocatorView, m_options.segmentsOnly ? "segments" : "tensors");
}

std::int64_t RecordingSession::relative(std::int64_t timeNs)
{
    const std::int64_t t = timeNs - m_options.originNs;
    m_lastNs = std::max(m_lastNs, t);
    return t;
}

std::uint32_t RecordingSession::lane(DeviceType type, std::uint32_t device, std::uint32_t stream)
{
    const Lane key{Device{type, static_cast<std::int16_t>(device)}, stream};
    auto [it, added] = m_lanes.try_emplace(key, static_cast<std::uint32_t>(m_lanes.size()));
    if (added)
        m_writer.writeLane(it->second, key);
    return it->second;
}

std::uint32_t RecordingSession::layer(std::string_view path)
{
    if (auto it = m_layers.find(path); it != m_layers.end())
        return it->second.id;
    if (m_layers.size() >= kLayerLimit)
        return kNoLayer;
    const auto dot = path.rfind('.');
    const std::uint32_t parent = dot == std::string_view::npos ? kNoLayer : layer(path.substr(0, dot));
    const auto id = static_cast<std::uint32_t>(m_layers.size());
    m_layers.emplace(std::string(path), LayerEntry{id, parent});
    m_writer.writeLayer(id, Layer{std::string(path), {}, parent, 0});
    return id;
}

void RecordingSession::applyManifest(const Manifest &manifest)
{
    for (const ManifestModule &module : manifest.modules) {
        const std::uint32_t id = layer(module.path);
        if (id == kNoLayer)
            continue;
        m_writer.writeLayer(id,
                            Layer{module.path, module.type, m_layers.find(module.path)->second.parent, module.parameterBytes});
    }
    std::string toggles;
    for (const std::string &name : manifest.checkpoint)
        toggles += (toggles.empty() ? "" : ",") + name;
    m_writer.writeMeta(metakey::Checkpoint, toggles);
    if (!manifest.torchVersion.empty())
        m_writer.writeMeta(metakey::TorchVersion, manifest.torchVersion);
}

void RecordingSession::pushRange(std::uint32_t thread, std::int64_t timeNs, std::string_view name)
{
    ThreadScopes &scopes = m_threads[thread];
    const AnnotationScope parsed = parseAnnotation(name);
    Scope scope;
    scope.beginNs = relative(timeNs);
    scope.endNs = kOpen;
    scope.parent = scopes.open.empty() ? kNoScope : scopes.open.back();
    scope.step = m_currentStep.value_or(kNoStep);
    scope.stepNumber = parsed.step;
    if (parsed.step)
        m_currentStep = parsed.step;
    // Ranges named otherwise (a library's own NVTX ranges), or with a path no trace can
    // hold, only nest.
    scope.attributable = parsed.phase != Phase::Other && (parsed.path.empty() || isLayerPath(parsed.path));
    if (scope.attributable) {
        scope.phase = parsed.phase;
        scope.layer = parsed.path.empty() ? kNoLayer : layer(parsed.path);
    }
    scopes.open.push_back(scopes.firstSequence + scopes.history.size());
    scopes.history.push_back(scope);
}

void RecordingSession::popRange(std::uint32_t thread, std::int64_t timeNs)
{
    auto it = m_threads.find(thread);
    if (it == m_threads.end() || it->second.open.empty())
        return; // a pop without its push (pushed before the collector started)
    ThreadScopes &scopes = it->second;
    Scope &scope = scopes.history[scopes.open.back() - scopes.firstSequence];
    scopes.open.pop_back();
    scope.endNs = std::max(scope.beginNs, relative(timeNs));
    closeScope(thread, scope);
}

void RecordingSession::closeScope(std::uint32_t thread, Scope &scope)
{
    if (scope.stepNumber) {
        m_writer.writeStep(Step{*scope.stepNumber, scope.beginNs, scope.endNs});
        if (m_currentStep == scope.stepNumber)
            m_currentStep.reset();
    }
    if (scope.attributable)
        m_writer.writeRange(Range{scope.layer, scope.phase, scope.step, scope.beginNs, scope.endNs, thread});
}

std::pair<std::uint32_t, Phase> RecordingSession::scopeAt(std::uint32_t thread, std::int64_t timeNs) const
{
    auto it = m_threads.find(thread);
    if (it == m_threads.end())
        return {kNoLayer, Phase::Other};
    const ThreadScopes &scopes = it->second;
    auto after = std::upper_bound(scopes.history.begin(), scopes.history.end(), timeNs,
                                  [](std::int64_t t, const Scope &scope) { return t < scope.beginNs; });
    if (after == scopes.history.begin())
        return {kNoLayer, Phase::Other};
    // The last range begun by then, or one of its enclosing ranges, is the innermost.
    std::uint64_t sequence = scopes.firstSequence + static_cast<std::uint64_t>(after - scopes.history.begin()) - 1;
    while (sequence != kNoScope && sequence >= scopes.firstSequence) {
        const Scope &scope = scopes.history[sequence - scopes.firstSequence];
        if (scope.endNs > timeNs && scope.attributable)
            return {scope.layer, scope.phase};
        sequence = scope.parent;
    }
    return {kNoLayer, Phase::Other};
}

void RecordingSession::add(ActivityRecord record)
{
    if (auto *memory = std::get_if<MemoryRecord>(&record)) {
        if (memory->thread)
            writeMemory(*memory, memory->thread);
        else
            m_pending.push_back({*memory, 0});
    } else if (auto *api = std::get_if<ApiRecord>(&record)) {
        m_threadOfCall[api->correlation] = {api->thread, m_batch};
    } else if (auto *pool = std::get_if<PoolRecord>(&record)) {
        writePool(*pool);
    } else if (auto *kernel = std::get_if<KernelRecord>(&record)) {
        writeKernel(*kernel);
    } else if (auto *marker = std::get_if<MarkerRecord>(&record)) {
        addMarker(*marker);
    }
}

void RecordingSession::endBatch()
{
    std::erase_if(m_pending, [this](PendingMemory &pending) {
        auto call = m_threadOfCall.find(pending.record.correlation);
        if (call != m_threadOfCall.end()) {
            writeMemory(pending.record, call->second.first);
            return true;
        }
        if (++pending.batches < kBatchesToWait)
            return false;
        writeMemory(pending.record, std::nullopt);
        return true;
    });
    std::erase_if(m_threadOfCall, [this](const auto &call) { return call.second.second + kBatchesToWait <= m_batch; });
    ++m_batch;
    dropOldScopes();
    m_writer.commitIfDue();
}

void RecordingSession::finish()
{
    for (PendingMemory &pending : m_pending) {
        auto call = m_threadOfCall.find(pending.record.correlation);
        writeMemory(pending.record, call == m_threadOfCall.end() ? std::nullopt : std::optional(call->second.first));
    }
    m_pending.clear();
    for (auto &[thread, scopes] : m_threads) {
        while (!scopes.open.empty()) {
            Scope &scope = scopes.history[scopes.open.back() - scopes.firstSequence];
            scopes.open.pop_back();
            scope.endNs = std::max(scope.beginNs, m_lastNs);
            closeScope(thread, scope);
        }
    }
    if (!m_deviceMemoryWritten) {
        if (const auto bytes = agreedDeviceMemory())
            m_writer.writeMeta(metakey::DeviceMemory, std::to_string(*bytes));
    }
    m_writer.commit();
}

void RecordingSession::writeMemory(const MemoryRecord &record, std::optional<std::uint32_t> thread)
{
    const std::int64_t t = relative(record.timeNs);
    // A release may come without its size; the allocation had it.
    const std::uint64_t block = record.address ^ (std::uint64_t(record.device) << 56);
    const std::uint32_t laneId = lane(record.deviceType, record.device, record.stream);
    std::int64_t bytes = record.bytes;
    if (record.allocation) {
        const auto [live, fresh] = m_liveBytes.try_emplace(block, bytes);
        if (!fresh) {
            // The address is handed out again while a block there still lives: that block
            // was freed where the backend does not hear (a collective's thread frees what
            // the training thread made), so it ends now rather than counting forever.
            if (!m_options.segmentsOnly) {
                m_writer.writeEvent(MemoryEvent{t, -live->second, record.address, laneId, kNoLayer, StackTable::kEmptyStack,
                                                Category::Unknown, Phase::Other});
                ++m_writtenEvents;
            }
            live->second = bytes;
        }
    } else if (auto live = m_liveBytes.find(block); live != m_liveBytes.end()) {
        bytes = bytes > 0 ? bytes : live->second;
        m_liveBytes.erase(live);
    }
    const std::int64_t delta = record.allocation ? bytes : -bytes;
    if (record.deviceType == DeviceType::Cuda)
        noteMemoryDevice(record.device);
    if (m_options.segmentsOnly) {
        m_writer.writeReserved(ReservedEvent{t, delta, record.address, laneId});
        return;
    }
    const auto [layerId, phase] = thread ? scopeAt(*thread, t) : std::pair(kNoLayer, Phase::Other);
    const std::uint32_t stack = record.allocation ? operatorStack(record.node, record.op) : StackTable::kEmptyStack;
    m_writer.writeEvent(MemoryEvent{t, delta, record.address, laneId, layerId, stack, Category::Unknown, phase});
    ++m_writtenEvents;
}

// The operator's frames (frameclassifier.h's operatorFrames).
std::uint32_t RecordingSession::operatorStack(std::string_view node, std::string_view op)
{
    if (op.empty())
        return StackTable::kEmptyStack;
    const auto key = std::pair(node.data(), op.data());
    if (const auto known = m_operatorStacks.find(key); known != m_operatorStacks.end())
        return known->second;
    std::uint32_t stack = StackTable::kEmptyStack;
    for (const Frame &frame : operatorFrames(node, op))
        stack = writtenStack(stack, frame);
    m_operatorStacks.emplace(key, stack);
    return stack;
}

std::uint32_t RecordingSession::writtenStack(std::uint32_t parent, const Frame &frame)
{
    const std::size_t frames = m_stacks.frames().size();
    const std::uint32_t frameId = m_stacks.internFrame(frame);
    if (frameId == frames)
        m_writer.writeFrame(frameId, frame);
    const std::size_t nodes = m_stacks.nodes().size();
    const std::uint32_t stack = m_stacks.internStack(parent, frameId);
    if (stack == nodes)
        m_writer.writeStack(stack, m_stacks.nodes()[stack]);
    return stack;
}

void RecordingSession::writePool(const PoolRecord &record)
{
    std::int64_t &bytes = m_poolBytes[{record.device, record.address}];
    const std::int64_t delta = record.bytes - bytes;
    bytes = record.bytes;
    if (delta != 0) {
        m_writer.writeReserved(
            ReservedEvent{relative(record.timeNs), delta, record.address, lane(DeviceType::Cuda, record.device, 0)});
        noteMemoryDevice(record.device);
    }
}

void RecordingSession::writeKernel(const KernelRecord &record)
{
    auto [name, added] = m_kernelNames.try_emplace(record.name, static_cast<std::uint32_t>(m_kernelNames.size()));
    if (added)
        m_writer.writeKernelName(name->second, record.name);
    const std::int64_t begin = relative(record.beginNs);
    m_writer.writeKernel(Kernel{name->second, lane(DeviceType::Cuda, record.device, record.stream), begin,
                                std::max(begin, relative(record.endNs))});
}

void RecordingSession::addMarker(const MarkerRecord &record)
{
    switch (record.kind) {
    case MarkerRecord::Kind::Start:
        m_markerThreads[record.id] = record.thread;
        pushRange(record.thread, record.timeNs, record.name);
        break;
    case MarkerRecord::Kind::End:
        if (auto it = m_markerThreads.find(record.id); it != m_markerThreads.end()) {
            popRange(it->second, record.timeNs);
            m_markerThreads.erase(it);
        }
        break;
    case MarkerRecord::Kind::Instant:
        break;
    }
}

void RecordingSession::dropOldScopes()
{
    for (auto &[thread, scopes] : m_threads) {
        while (scopes.history.size() > kScopesKept && scopes.history.front().endNs != kOpen
               && scopes.history.front().endNs + kScopeRetentionNs < m_lastNs) {
            scopes.history.pop_front();
            ++scopes.firstSequence;
        }
    }
}

// When every device the process sees has the same total, any device that holds memory
// agrees with it: device.memory is written with the first record, so a run followed live
// is warned against it from its first commit. Devices of different sizes wait for the end
// (finish), when the ones that hold memory are known: a key once written cannot be taken
// back, and a killed run then has none.
void RecordingSession::noteMemoryDevice(std::uint32_t device)
{
    if (!m_memoryDevices.insert(device).second || m_deviceMemoryWritten)
        return;
    if (!m_deviceTotals)
        m_deviceTotals = m_options.deviceTotals ? m_options.deviceTotals() : std::vector<std::optional<std::int64_t>>();
    const auto &totals = *m_deviceTotals;
    const bool allAgree = !totals.empty() && std::all_of(totals.begin(), totals.end(), [&](const auto &total) {
        return total && *total > 0 && total == totals.front();
    });
    if (allAgree && device < totals.size()) {
        m_writer.writeMeta(metakey::DeviceMemory, std::to_string(*totals.front()));
        m_deviceMemoryWritten = true;
    }
}

// The total of the devices that hold memory, when the driver knew each and they agree.
std::optional<std::int64_t> RecordingSession::agreedDeviceMemory() const
{
    if (!m_deviceTotals || m_memoryDevices.empty())
        return std::nullopt;
    std::optional<std::int64_t> agreed;
    for (const std::uint32_t device : m_memoryDevices) {
        if (device >= m_deviceTotals->size())
            return std::nullopt;
        const std::optional<std::int64_t> total = (*m_deviceTotals)[device];
        if (!total || *total <= 0 || (agreed && agreed != total))
            return std::nullopt;
        agreed = total;
    }
    return agreed;
}

} // namespace peaklens::record
