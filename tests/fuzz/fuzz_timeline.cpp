// SPDX-License-Identifier: Apache-2.0
// Fuzzes the memory-timeline importer (both forms).
#include "core/import/memorytimeline.h"
#include "fuzzinput.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    try {
        peaklens::importMemoryTimeline(fuzzBytes(data, size), "fuzz.json");
    } catch (const peaklens::Error &) {
    }
    return 0;
}
