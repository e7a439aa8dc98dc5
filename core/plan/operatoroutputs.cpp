// SPDX-License-Identifier: Apache-2.0
#include "operatoroutputs.h"

#include "checkpointstrategy.h"

#include "core/analysis/lanedevices.h"
#include "core/trace/frameclassifier.h"
#include "core/trace/trace.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace peaklens {

std::string allocatingOperator(const StackTable &stacks, std::uint32_t stack)
{
    std::string factory;
    for (const std::uint32_t frame : stacks.framesOf(stack)) {
        auto op = operatorName(stacks.frames()[frame]);
        if (!op)
            continue;
        if (!isFactoryOperator(*op))
            return std::move(*op);
        if (factory.empty())
            factory = std::move(*op);
    }
    return factory;
}

OperatorProfile operatorProfile(const Trace &trace, const LaneDevices &lanes, std::uint32_t device, std::size_t begin,
                                std::size_t end, std::int64_t beginNs, std::int64_t endNs, std::size_t output)
{
    const MemoryEvents &events = trace.events;
    end = std::min(end, events.size());
    std::unordered_map<std::uint32_t, std::string> opOfStack;
    const auto opOf = [&](std::uint32_t stack) -> const std::string & {
        auto found = opOfStack.find(stack);
        if (found == opOfStack.end()) {
            std::string op = operatorOverload(allocatingOperator(trace.stacks, stack));
            // A block no policy keeps belongs to no operator here, nor does its time.
            found = opOfStack.emplace(stack, keptByPolicies(op) ? std::move(op) : std::string()).first;
        }
        return found->second;
    };
    struct Open
    {
        std::size_t event;
        const std::string *op;
        std::uint64_t turn; // how many times the allocating operator had changed when it was made
    };
    std::unordered_map<std::uint64_t, Open> live;
    std::map<std::string, OperatorOutputs> byOp;
    const auto count = [&](const Open &block) {
        if (block.op->empty() || block.event == output)
            return;
        OperatorOutputs &outputs = byOp[*block.op];
        outputs.bytes += events.deltaBytes(block.event);
        outputs.events.push_back(block.event);
    };
    OperatorProfile profile;
    std::uint64_t turns = 0;
    const std::string *running = nullptr; // the operator of the latest allocation
    std::int64_t runningSinceNs = 0;
    const auto stopRunning = [&](std::int64_t timeNs) {
        if (running && !running->empty())
            byOp[*running].ns += std::max<std::int64_t>(0, timeNs - runningSinceNs);
    };
    for (std::size_t i = begin; i < end; ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != device)
            continue;
        if (events.deltaBytes(i) > 0) {
            const std::string &op = opOf(events.stack(i));
            if (!running || *running != op) {
                turns += running ? 1 : 0;
                stopRunning(events.timeNs(i));
                running = &op;
                runningSinceNs = events.timeNs(i);
                ++profile.calls;
                if (!op.empty())
                    ++byOp[op].calls;
            }
            live.insert_or_assign(events.addr(i), Open{i, &op, turns});
        } else if (const auto found = live.find(events.addr(i)); found != live.end()) {
            if (found->second.turn != turns)
                count(found->second);
            live.erase(found);
        }
    }
    stopRunning(endNs);
    for (const auto &[addr, block] : live)
        count(block);
    profile.spanNs = std::max<std::int64_t>(0, endNs - beginNs);
    profile.outputs.reserve(byOp.size());
    for (auto &[op, outputs] : byOp) {
        outputs.op = op;
        std::sort(outputs.events.begin(), outputs.events.end());
        profile.outputs.push_back(std::move(outputs));
    }
    return profile;
}

std::vector<std::vector<std::string>> leadingPolicies(const OperatorProfile &profile, std::size_t most)
{
    std::vector<const OperatorOutputs *> ranked;
    for (const OperatorOutputs &outputs : profile.outputs) {
        if (outputs.ns > 0)
            ranked.push_back(&outputs);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const OperatorOutputs *a, const OperatorOutputs *b) {
        return static_cast<long double>(a->ns) * static_cast<long double>(b->bytes)
               > static_cast<long double>(b->ns) * static_cast<long double>(a->bytes);
    });
    ranked.resize(std::min(ranked.size(), most));
    std::vector<std::vector<std::string>> policies;
    std::vector<std::string> saved;
    for (const OperatorOutputs *outputs : ranked) {
        saved.insert(std::upper_bound(saved.begin(), saved.end(), outputs->op), outputs->op);
        policies.push_back(saved);
    }
    return policies;
}

namespace {

template<typename Figure>
std::int64_t sumOver(const OperatorProfile &profile, const std::vector<std::string> &ops, Figure figure)
{
    std::int64_t sum = 0;
    for (const OperatorOutputs &entry : profile.outputs)
        sum += std::binary_search(ops.begin(), ops.end(), entry.op) ? figure(entry) : 0;
    return sum;
}

} // namespace

std::int64_t savedBytes(const OperatorProfile &profile, const std::vector<std::string> &ops)
{
    return sumOver(profile, ops, [](const OperatorOutputs &entry) { return entry.bytes; });
}

std::int64_t savedNs(const OperatorProfile &profile, const std::vector<std::string> &ops)
{
    return sumOver(profile, ops, [](const OperatorOutputs &entry) { return entry.ns; });
}

} // namespace peaklens
