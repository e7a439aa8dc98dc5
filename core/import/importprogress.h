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
        throwIfCancelled();
        if (report)
            report(fraction);
    }

    // For code that cannot throw where it looks (an SQLite progress handler).
    bool isCancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }

    void throwIfCancelled() const
    {
        if (isCancelled())
            throw ImportCancelled("The import was cancelled.");
    }
};

} // namespace peaklens
