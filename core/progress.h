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

    // For code that cannot throw where it looks (an SQLite progress handler).
    bool isCancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }

    void throwIfCancelled() const
    {
        if (isCancelled())
            throw Cancelled("It was cancelled.");
    }
};

} // namespace peaklens
