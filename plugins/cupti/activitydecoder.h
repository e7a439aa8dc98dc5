// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decoding of CUPTI activity records: a pure function of the record's bytes, so it is
// tested with hand-built CUPTI structs and no GPU.

#include "core/record/activityrecords.h"

#include <cupti_activity.h>

#include <optional>

namespace peaklens::cupti {

using record::ActivityRecord;
using record::ApiRecord;
using record::KernelRecord;
using record::MarkerRecord;
using record::MemoryRecord;
using record::PoolRecord;

// The activity kinds the collector enables, in the record versions of this CUPTI.
inline constexpr CUpti_ActivityKind kRecordedKinds[] = {
    CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

// The record as values, or nothing for kinds and operations the session does not use
// (host memory, memory copies, unknown kinds).
std::optional<ActivityRecord> decodeActivity(const CUpti_Activity &record);

} // namespace peaklens::cupti
