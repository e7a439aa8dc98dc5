// Fuzzes the unpickler and the snapshot interpretation behind it.
#include "core/import/pickle/unpickler.h"
#include "core/import/torchsnapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    peaklens::pickle::Document document;
    document.bytes = peaklens::FileBytes::copyOf(std::string_view(reinterpret_cast<const char *>(data), size), 0);
    try {
        peaklens::pickle::unpickle(document, "fuzz.pickle");
        peaklens::importTorchSnapshot(document, "fuzz.pickle");
    } catch (const peaklens::Error &) {
    }
    return 0;
}
