// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a caller follows a long job (reading, importing, analysing a trace): a progress
// callback and a cancel flag. The job calls tick() every so often; it reports progress
// and throws Cancelled when asked.

#include "error.h"

#include <atomic>
#include <functional>
#include <string>

namespace peaklens {

class Cancelled : public Error
{
public:
    using Error::Error;
};

struct Progress
{
    std::function<void(double fraction)> report; // 0..1
    const std::atomic<bool> *cancel = nullptr;

    void tick(double fraction) const
    {
        throwIfCancelled();
        if (report)
            report(fraction);
    }

    // The same for a share of the work: its 0..1 is `from`..`to` of this one's. The part
    // calls back into this object, which must outlive it.
    Progress part(double from, double to) const
    {
        Progress part{nullptr, cancel};
        if (report)
            part.report = [this, from, to](double fraction) { report(from + fraction * (to - from)); };
        return part;
    }

    // For code that cannot throw where it looks (an SQLite progress handler).
    bool isCancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }

    void throwIfCancelled() const
    {
        if (isCancelled())
            throw Cancelled("It was cancelled.");
    }
};

} // namespace peaklens
