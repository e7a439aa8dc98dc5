#include "stepstats.h"

#include "lanedevices.h"

namespace peaklens {

std::vector<StepStats> computeStepStats(const Trace &trace, Device device)
{
    std::vector<StepStats> stats;
    stats.reserve(trace.steps.size());
    for (const Step &step : trace.steps)
        stats.push_back(StepStats{step.number, step.beginNs, step.endNs});

    const LaneDevices lanes(trace);
    const auto deviceIndex = lanes.indexOf(device);
    if (!deviceIndex)
        return stats;
    const MemoryEvents &events = trace.events;
    std::int64_t current = 0;
    // Steps are sorted and do not overlap: `step` is the first one not yet over,
    // `started` whether its begin has been passed.
    std::size_t step = 0;
    bool started = false;
    const auto start = [&](StepStats &s) {
        s.startBytes = s.peakAllocatedBytes = current;
        s.peakTimeNs = s.beginNs;
    };
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (lanes.deviceOfLane[events.lane(i)] != *deviceIndex)
            continue;
        const std::int64_t t = events.timeNs(i);
        for (; step < stats.size() && t >= stats[step].endNs; ++step, started = false) {
            if (!started)
                start(stats[step]);
        }
        if (step == stats.size())
            break;
        if (!started && t >= stats[step].beginNs) {
            start(stats[step]);
            started = true;
        }
        current += events.deltaBytes(i);
        if (!started)
            continue;
        StepStats &s = stats[step];
        if (events.deltaBytes(i) > 0) {
            s.allocatedBytes += events.deltaBytes(i);
            ++s.allocations;
        }
        if (current > s.peakAllocatedBytes) {
            s.peakAllocatedBytes = current;
            s.peakTimeNs = t;
            s.peakPhase = events.phase(i);
        }
    }
    for (; step < stats.size(); ++step, started = false) {
        if (!started)
            start(stats[step]);
    }
    return stats;
}

} // namespace peaklens
