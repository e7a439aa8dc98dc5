// SPDX-License-Identifier: Apache-2.0
#pragma once
// The process's CPU allocator, wrapping the one c10 had: it hands out c10's blocks and
// reports each one allocated and freed, from whatever thread does it. c10's own CPU
// allocator reports only to the profiler state of the thread that allocates or frees, and
// threads c10 did not start with one (a collective's workers, gloo's) have none. The
// replay engine counts a step's CPU memory through it; the torch backend records a
// script's.

#include "torchcompat.h"

#include "core/trace/units.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace peaklens::replay {

class ReportingCpuAllocator final : public c10::Allocator
{
public:
    struct Reports
    {
        bool (*admit)(std::int64_t bytes) = nullptr; // false: the allocation fails as out of memory
        void (*allocated)(void *pointer, std::int64_t bytes) = nullptr;
        void (*freed)(void *pointer, std::int64_t bytes) = nullptr;
    };

    // Sets one in place of the process's CPU allocator, once: later calls do nothing and
    // return false, as does a process whose CPU allocator hands out blocks a raw deleter
    // cannot free. It lives for the whole process: blocks it handed out may be freed at exit.
    static bool install(const Reports &reports, std::uint8_t priority)
    {
        static std::once_flag once;
        bool installed = false;
        std::call_once(once, [&] {
            c10::Allocator *inner = c10::GetCPUAllocator();
            if (!inner || !inner->raw_deleter())
                return;
            s_instance = new ReportingCpuAllocator(inner, reports);
            c10::SetCPUAllocator(s_instance, priority);
            installed = true;
        });
        return installed;
    }

    // True while this thread runs the wrapped allocator: c10's own report of that block
    // (to the thread's profiler state) is this allocator's too.
    static bool insideWrapped() { return t_inside; }

    c10::DataPtr allocate(std::size_t bytes) PEAKLENS_ALLOCATE_CONST override
    {
        if (m_reports.admit && !m_reports.admit(static_cast<std::int64_t>(bytes)))
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory: tried to allocate ", formatBytes(bytes),
                             " beyond the replay's memory limit.");
        c10::DataPtr block;
        {
            Inside inside;
            block = m_inner->allocate(bytes);
        }
        void *data = block.get();
        if (!data || !m_inner->is_simple_data_ptr(block))
            return block;
        (void)block.release_context(); // freed by deleteBlock from now on
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_sizes[data] = bytes;
        }
        m_reports.allocated(data, static_cast<std::int64_t>(bytes));
        return {data, data, &deleteBlock, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &deleteBlock; }

#if PEAKLENS_ALLOCATOR_HAS_COPY_DATA
    void copy_data(void *destination, const void *source, std::size_t count) const override
    {
        default_copy_data(destination, source, count);
    }
#endif

private:
    struct Inside
    {
        Inside() { t_inside = true; }
        ~Inside() { t_inside = false; }
        Inside(const Inside &) = delete;
        Inside &operator=(const Inside &) = delete;
    };

    ReportingCpuAllocator(c10::Allocator *inner, const Reports &reports)
        : m_inner(inner)
        , m_innerDelete(inner->raw_deleter())
        , m_reports(reports)
    {
    }

    static void deleteBlock(void *data)
    {
        ReportingCpuAllocator &self = *s_instance;
        std::size_t bytes = 0;
        {
            std::lock_guard<std::mutex> lock(self.m_mutex);
            if (auto found = self.m_sizes.find(data); found != self.m_sizes.end()) {
                bytes = found->second;
                self.m_sizes.erase(found);
            }
        }
        if (bytes > 0) // reported before the address can be handed out again
            self.m_reports.freed(data, static_cast<std::int64_t>(bytes));
        Inside inside;
        self.m_innerDelete(data);
    }

    static inline ReportingCpuAllocator *s_instance = nullptr;
    static inline thread_local bool t_inside = false;
    c10::Allocator *m_inner;
    c10::DeleterFnPtr m_innerDelete;
    Reports m_reports;
    mutable std::mutex m_mutex;
    mutable std::unordered_map<void *, std::size_t> m_sizes;
};

} // namespace peaklens::replay
