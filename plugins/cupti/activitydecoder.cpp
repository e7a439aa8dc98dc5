// SPDX-License-Identifier: Apache-2.0
#include "activitydecoder.h"

namespace peaklens::cupti {

namespace {

std::int64_t nanoseconds(std::uint64_t timestamp)
{
    return static_cast<std::int64_t>(timestamp & 0x7FFFFFFFFFFFFFFFull);
}

std::int64_t byteCount(std::uint64_t bytes)
{
    return static_cast<std::int64_t>(bytes & 0x7FFFFFFFFFFFFFFFull);
}

std::optional<ActivityRecord> decodeMemory(const CUpti_ActivityMemory4 &memory)
{
    if (memory.memoryKind != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        return std::nullopt;
    const bool allocation = memory.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if (!allocation && memory.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
        return std::nullopt;
    return MemoryRecord{allocation,
                        memory.address,
                        byteCount(memory.bytes),
                        nanoseconds(memory.timestamp),
                        memory.deviceId,
                        memory.streamId,
                        memory.correlationId,
                        memory.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID};
}

std::optional<ActivityRecord> decodePool(const CUpti_ActivityMemoryPool3 &pool)
{
    switch (pool.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
        return PoolRecord{pool.address, byteCount(pool.size), nanoseconds(pool.timestamp), pool.deviceId};
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
        return PoolRecord{pool.address, 0, nanoseconds(pool.timestamp), pool.deviceId};
    default:
        return std::nullopt;
    }
}

std::optional<ActivityRecord> decodeMarker(const CUpti_ActivityMarker2 &marker)
{
    MarkerRecord decoded;
    if (marker.flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
        decoded.kind = MarkerRecord::Kind::Start;
    else if (marker.flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
        decoded.kind = MarkerRecord::Kind::End;
    else if (marker.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
        decoded.kind = MarkerRecord::Kind::Instant;
    else
        return std::nullopt;
    decoded.id = marker.id;
    if (marker.name)
        decoded.name = marker.name;
    if (marker.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
        decoded.thread = marker.objectId.pt.threadId;
    decoded.timeNs = nanoseconds(marker.timestamp);
    return decoded;
}

} // namespace

std::optional<ActivityRecord> decodeActivity(const CUpti_Activity &record)
{
    switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return decodeMemory(reinterpret_cast<const CUpti_ActivityMemory4 &>(record));
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        return decodePool(reinterpret_cast<const CUpti_ActivityMemoryPool3 &>(record));
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto &kernel = reinterpret_cast<const CUpti_ActivityKernel10 &>(record);
        return KernelRecord{kernel.name ? std::string(kernel.name) : std::string("(unnamed kernel)"),
                            nanoseconds(kernel.start),
                            nanoseconds(kernel.end),
                            kernel.deviceId,
                            kernel.streamId,
                            kernel.correlationId};
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto &api = reinterpret_cast<const CUpti_ActivityAPI &>(record);
        return ApiRecord{api.correlationId, api.threadId, nanoseconds(api.start), nanoseconds(api.end)};
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        return decodeMarker(reinterpret_cast<const CUpti_ActivityMarker2 &>(record));
    default:
        return std::nullopt;
    }
}

} // namespace peaklens::cupti
