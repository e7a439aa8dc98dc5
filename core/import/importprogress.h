#pragma once
// How a caller follows a long import: a progress callback and a cancel flag. Importers
// call tick() every so often; it reports progress and throws ImportCancelled when asked.

#include "core/error.h"

#include <atomic>
#include <functional>
#include <string>

namespace peaklens {

class ImportCancelled : public Error
{
public:
    using Error::Error;
};

struct ImportProgress
{
    std::function<void(double fraction)> report; // 0..1
    const std::atomic<bool> *cancel = nullptr;

    void tick(double fraction) const
    {
        if (cancel && cancel->load(std::memory_order_relaxed))
            throw ImportCancelled("The import was cancelled.");
        if (report)
            report(fraction);
    }
};

} // namespace peaklens
