// SPDX-License-Identifier: Apache-2.0
// Fuzzes the unpickler and the snapshot reading behind it, as files are read: in one pass,
// or from the whole document where the pass cannot follow the pickle's layout.
#include "core/import/torchsnapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string_view bytes(reinterpret_cast<const char *>(data), size);
    try {
        peaklens::streamTorchSnapshot(peaklens::FileBytes::copyOf(bytes, 0), "fuzz.pickle");
    } catch (const peaklens::Error &) {
    }
    return 0;
}
