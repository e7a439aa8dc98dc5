// SPDX-License-Identifier: Apache-2.0
// Fuzzes memory snapshots saved as JSON.
#include "core/import/pickle/jsondocument.h"
#include "core/import/torchsnapshot.h"
#include "fuzzinput.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const peaklens::FileBytes bytes = fuzzBytes(data, size);
    peaklens::pickle::Document document;
    try {
        peaklens::pickle::parseJsonDocument(bytes, document, "fuzz.json");
        peaklens::importTorchSnapshot(document, "fuzz.json");
    } catch (const peaklens::Error &) {
    }
    return 0;
}
