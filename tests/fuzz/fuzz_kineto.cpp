// SPDX-License-Identifier: Apache-2.0
// Fuzzes the Kineto trace importer, pieces, scanner and all.
#include "core/import/kineto.h"
#include "fuzzinput.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    peaklens::FileBytes bytes = fuzzBytes(data, size);
    try {
        peaklens::importKinetoTrace(bytes, "fuzz.pt.trace.json");
    } catch (const peaklens::Error &) {
    }
    return 0;
}
