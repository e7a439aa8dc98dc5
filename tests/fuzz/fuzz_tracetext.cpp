// SPDX-License-Identifier: Apache-2.0
// Fuzzes the trace text parser.
#include "core/error.h"
#include "core/trace/tracetext.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    try {
        peaklens::parseTraceText(std::string_view(reinterpret_cast<const char *>(data), size));
    } catch (const peaklens::Error &) {
    }
    return 0;
}
