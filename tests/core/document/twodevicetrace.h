// SPDX-License-Identifier: Apache-2.0
#pragma once
// A trace for the tests of summarizing files: training-shaped steps on two devices.

#include "core/trace/metadata.h"
#include "core/trace/tracebuilder.h"

#include <QRandomGenerator64>

#include <memory>
#include <string>

namespace peaklens::test {

// Training-shaped steps on two devices, several chunks long, a kernel per layer; with
// categories stored, or
// left for the reader to work out from lifetimes as a collector's are.
inline std::shared_ptr<const Trace> twoDeviceTrace(std::size_t steps, bool lifetimes = false)
{
    TraceBuilder builder;
    if (lifetimes)
        builder.setMeta(metakey::Categories, "lifetime");
    const std::uint32_t lanes[] = {builder.lane(Lane{Device{DeviceType::Cuda, 0}, 0}),
                                   builder.lane(Lane{Device{DeviceType::Cuda, 1}, 0}),
                                   builder.lane(Lane{Device{DeviceType::Cuda, 1}, 7})};
    const std::uint32_t gemm = builder.kernelName("gemm");
    std::vector<std::uint32_t> layers;
    for (int l = 0; l < 12; ++l)
        layers.push_back(builder.layer("model.blocks." + std::to_string(l)));
    QRandomGenerator64 random(5);
    std::int64_t t = 1000;
    for (std::size_t step = 0; step < steps; ++step) {
        const std::int64_t stepBegin = t;
        std::vector<MemoryEvent> saved;
        for (std::uint32_t layer : layers) {
            const std::int64_t begin = t;
            for (int i = 0; i < 40; ++i) {
                MemoryEvent event{t += 1 + static_cast<std::int64_t>(random.bounded(500u)),
                                  512 * (1 + static_cast<std::int64_t>(random.bounded(4000u))),
                                  0x7f0000000000 + step * 0x100000000ull + layer * 0x1000000ull + i * 0x10000ull,
                                  lanes[random.bounded(3u)],
                                  layer,
                                  0,
                                  lifetimes ? Category::Unknown : Category::Activation,
                                  Phase::Forward};
                builder.addEvent(event);
                saved.push_back(event);
            }
            builder.addRange(Range{layer, Phase::Forward, static_cast<std::int64_t>(step), begin, t, 0});
            builder.addKernel(Kernel{gemm, lanes[0], begin, t});
        }
        const std::int64_t backward = ++t;
        for (MemoryEvent event : saved) {
            event.timeNs = t += 3;
            event.deltaBytes = -event.deltaBytes;
            event.phase = Phase::Backward;
            builder.addEvent(event);
        }
        builder.addRange(Range{layers.back(), Phase::Backward, static_cast<std::int64_t>(step), backward, t, 0});
        builder.addStep(Step{static_cast<std::int64_t>(step), stepBegin, ++t});
    }
    return builder.finish();
}

} // namespace peaklens::test
