// SPDX-License-Identifier: Apache-2.0
// Fuzzes the Python helper's manifest as the collector reads it.
#include "core/record/manifest.h"

#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    try {
        peaklens::record::parseManifest(std::string_view(reinterpret_cast<const char *>(data), size));
    } catch (const peaklens::Error &) {
    }
    return 0;
}
