// SPDX-License-Identifier: Apache-2.0
#include "loadbudget.h"

#include "core/error.h"
#include "units.h"

#include <algorithm>

namespace peaklens {

namespace {
thread_local LoadBudget::Scope *t_current = nullptr;

std::string shown(std::uint64_t bytes)
{
    return formatBytes(static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, INT64_MAX)));
}
} // namespace

std::uint64_t LoadBudget::limitFor(std::uint64_t inputBytes)
{
    const std::uint64_t scaled =
        inputBytes > (UINT64_MAX - kBaseBytes) / kBytesPerInputByte ? UINT64_MAX - kBaseBytes : inputBytes * kBytesPerInputByte;
    return kBaseBytes + scaled;
}

std::chrono::seconds LoadBudget::timeLimitFor(std::uint64_t inputBytes)
{
    return std::chrono::seconds(kBaseSeconds + static_cast<std::int64_t>(inputBytes >> 20) * kSecondsPerMiB);
}

LoadBudget::Scope::Scope(std::string path, std::uint64_t inputBytes)
    : m_path(std::move(path))
    , m_start(std::chrono::steady_clock::now())
    , m_outer(t_current)
{
    setInputBytes(inputBytes);
    t_current = this;
}

LoadBudget::Scope::~Scope()
{
    t_current = m_outer;
}

void LoadBudget::Scope::setInputBytes(std::uint64_t inputBytes)
{
    m_inputBytes = inputBytes;
    m_limit = limitFor(inputBytes);
    m_deadline = m_start + timeLimitFor(inputBytes);
}

void LoadBudget::charge(std::uint64_t bytes, std::string_view what)
{
    Scope *scope = t_current;
    if (!scope)
        return;
    checkTime();
    scope->m_used = bytes > UINT64_MAX - scope->m_used ? UINT64_MAX : scope->m_used + bytes;
    if (scope->m_used <= scope->m_limit)
        return;
    throw ImportError(scope->m_path, "would take more than " + shown(scope->m_limit) + " of memory to load (building "
                                         + std::string(what) + "), the limit for an input of " + shown(scope->m_inputBytes)
                                         + ": a load may take " + shown(kBaseBytes) + " plus "
                                         + std::to_string(kBytesPerInputByte)
                                         + " bytes per byte of input. The file is damaged or made to exhaust memory.");
}

void LoadBudget::addInputBytes(std::uint64_t bytes)
{
    if (Scope *scope = t_current)
        scope->setInputBytes(bytes > UINT64_MAX - scope->m_inputBytes ? UINT64_MAX : scope->m_inputBytes + bytes);
}

bool LoadBudget::timeIsUp()
{
    const Scope *scope = t_current;
    return scope && std::chrono::steady_clock::now() > scope->m_deadline;
}

void LoadBudget::checkTime()
{
    if (!timeIsUp())
        return;
    const Scope &scope = *t_current;
    throw ImportError(scope.m_path, "took more than " + std::to_string(timeLimitFor(scope.m_inputBytes).count())
                                        + " seconds to load, the limit for an input of " + shown(scope.m_inputBytes)
                                        + ": a load may take " + std::to_string(kBaseSeconds) + " seconds plus "
                                        + std::to_string(kSecondsPerMiB)
                                        + " per MiB of input. The file is damaged or made to exhaust time.");
}

} // namespace peaklens
