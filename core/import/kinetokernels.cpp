// SPDX-License-Identifier: Apache-2.0
#include "kinetokernels.h"

#include "jsonscanner.h"

#include "core/trace/loadbudget.h"
#include "core/trace/units.h"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace peaklens {

namespace {

constexpr std::size_t kChargeStep = 65536;

std::string plural(std::int64_t count, std::string_view one, std::string_view many)
{
    return formatCount(count) + " " + std::string(count == 1 ? one : many);
}

} // namespace

bool KinetoKernels::isGpuActivity(std::string_view category)
{
    return equalsLiteral(category, "kernel") || equalsLiteral(category, "gpu_memcpy") || equalsLiteral(category, "gpu_memset")
           || equalsLiteral(category, "Kernel") || equalsLiteral(category, "Memcpy") || equalsLiteral(category, "Memset");
}

std::optional<std::uint64_t> KinetoKernels::streamOfThread(std::string_view thread)
{
    if (thread.starts_with("stream "))
        thread.remove_prefix(7);
    while (!thread.empty() && thread.back() == ' ')
        thread.remove_suffix(1);
    std::uint64_t stream = 0;
    const auto [end, error] = std::from_chars(thread.data(), thread.data() + thread.size(), stream);
    if (thread.empty() || error != std::errc() || end != thread.data() + thread.size())
        return std::nullopt;
    return stream;
}

std::uint32_t KinetoKernels::nameId(TraceBuilder &builder, std::string_view name)
{
    if (const auto it = m_names.find(name); it != m_names.end())
        return it->second;
    const std::uint32_t id = builder.kernelName(name);
    m_names.emplace(std::string(name), id);
    return id;
}

void KinetoKernels::add(TraceBuilder &builder, std::string_view name, std::int64_t beginNs, std::int64_t endNs,
                        std::optional<std::int64_t> device, std::optional<std::int64_t> stream)
{
    // A negative duration is damage, but one activity says nothing about the rest.
    if (endNs < beginNs) {
        ++m_negativeDuration;
        return;
    }
    if (!device || *device < 0 || *device > INT16_MAX) {
        ++m_noDevice;
        return;
    }
    if (!stream || *stream < 0) {
        ++m_noStream;
        return;
    }
    if (m_records.size() >= m_charged) {
        LoadBudget::charge(kChargeStep * sizeof(Record), "GPU kernels");
        m_charged += kChargeStep;
    }
    m_records.push_back(Record{beginNs, endNs, *device, static_cast<std::uint64_t>(*stream), nameId(builder, name)});
}

void KinetoKernels::finish(TraceBuilder &builder, std::int64_t baseNs, bool rocm)
{
    // ROCm numbers GPUs after the CPU agents (agent 2 is GPU 0 on a two-socket host) and
    // the trace does not say how many CPUs there are; the offset is what carries the
    // lowest GPU of the kernels onto the lowest GPU of the memory events.
    std::int64_t agentOffset = 0;
    if (rocm && !m_records.empty() && !m_memoryDevices.empty()) {
        const auto lowest = std::min_element(m_records.begin(), m_records.end(), [](const Record &a, const Record &b) {
                                return a.device < b.device;
                            })->device;
        agentOffset = std::max<std::int64_t>(0, lowest - *m_memoryDevices.begin());
    }
    std::sort(m_records.begin(), m_records.end(), [](const Record &a, const Record &b) {
        return std::tie(a.beginNs, a.device, a.stream, a.endNs, a.name)
               < std::tie(b.beginNs, b.device, b.stream, b.endNs, b.name);
    });
    for (const Record &record : m_records) {
        const Device device{DeviceType::Cuda, static_cast<std::int16_t>(record.device - agentOffset)};
        builder.addKernel(
            Kernel{record.name, builder.lane(Lane{device, record.stream}), record.beginNs + baseNs, record.endNs + baseNs});
    }
    if (const std::string text = describe(agentOffset); !text.empty())
        builder.setMeta("import.kernels", text);
    m_records.clear();
    m_records.shrink_to_fit();
}

std::string KinetoKernels::describe(std::int64_t agentOffset) const
{
    std::string text;
    const std::int64_t skipped = m_negativeDuration + m_noDevice + m_noStream;
    if (skipped > 0) {
        std::string reasons;
        const auto reason = [&](std::int64_t count, std::string_view why) {
            if (count > 0)
                reasons += (reasons.empty() ? "" : ", ") + formatCount(count) + " " + std::string(why);
        };
        reason(m_negativeDuration, "with a negative duration");
        reason(m_noDevice, "naming no device");
        reason(m_noStream, "naming no stream");
        text = plural(skipped, "GPU kernel or copy was", "GPU kernels and copies were") + " skipped: " + reasons + ".";
    }
    if (agentOffset > 0)
        text += std::string(text.empty() ? "" : " ") + "The kernels name ROCm agents, the CPUs counted first: agent "
                + std::to_string(*m_memoryDevices.begin() + agentOffset)
                + " is shown as cuda:" + std::to_string(*m_memoryDevices.begin()) + ", where its memory events are.";
    return text;
}

} // namespace peaklens
