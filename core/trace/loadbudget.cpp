#include "loadbudget.h"

#include "core/error.h"
#include "units.h"

#include <algorithm>

namespace peaklens {

namespace {
thread_local LoadBudget::Scope *t_current = nullptr;
}

std::uint64_t LoadBudget::limitFor(std::uint64_t inputBytes)
{
    const std::uint64_t scaled = inputBytes > (UINT64_MAX - kBaseBytes) / kBytesPerInputByte
                                     ? UINT64_MAX - kBaseBytes
                                     : inputBytes * kBytesPerInputByte;
    return kBaseBytes + scaled;
}

LoadBudget::Scope::Scope(std::string path, std::uint64_t inputBytes)
    : m_path(std::move(path))
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
}

void LoadBudget::charge(std::uint64_t bytes, std::string_view what)
{
    Scope *scope = t_current;
    if (!scope)
        return;
    scope->m_used = bytes > UINT64_MAX - scope->m_used ? UINT64_MAX : scope->m_used + bytes;
    if (scope->m_used <= scope->m_limit)
        return;
    const auto shown = [](std::uint64_t value) { return formatBytes(static_cast<std::int64_t>(std::min<std::uint64_t>(value, INT64_MAX))); };
    throw ImportError(scope->m_path, "would take more than " + shown(scope->m_limit) + " of memory to load (building "
                                         + std::string(what) + "), the limit for an input of " + shown(scope->m_inputBytes)
                                         + ": a load may take " + shown(kBaseBytes) + " plus "
                                         + std::to_string(kBytesPerInputByte)
                                         + " bytes per byte of input. The file is damaged or made to exhaust memory.");
}

} // namespace peaklens
