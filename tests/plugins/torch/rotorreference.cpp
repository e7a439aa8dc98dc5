// SPDX-License-Identifier: Apache-2.0
#include "rotorreference.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace peaklens::test {

namespace {

constexpr std::int64_t kInfinite = INT64_MAX / 4;

// C(s, t, m): the least time to run the forward and backward of stages s..t with a_{s-1}
// stored and m slots free. Either stage s keeps all its activations (F_all), or stages
// s..j-1 run keeping only a_{j-1} (F_ck at s, F_empty after), then j..t are solved with
// a_{j-1} held, then s..j-1 again from a_{s-1}.
class Rotor
{
public:
    Rotor(const std::vector<RotorStage> &stages, std::int64_t slot)
        : m_n(stages.size())
    {
        const auto slots = [&](std::int64_t bytes) { return (bytes + slot - 1) / slot; }; // rounded up: never optimistic
        for (const RotorStage &s : stages) {
            m_forward.push_back(s.forwardNs);
            m_backward.push_back(s.backwardNs);
            m_output.push_back(slots(s.outputBytes));
            m_all.push_back(slots(s.activationBytes));
            m_forwardOverhead.push_back(slots(s.forwardOverhead));
            m_backwardOverhead.push_back(slots(s.backwardOverhead));
        }
    }

    std::int64_t cost(std::size_t s, std::size_t t, std::int64_t m)
    {
        if (m < 0)
            return kInfinite;
        const auto key = std::make_tuple(s, t, m);
        if (auto found = m_memo.find(key); found != m_memo.end())
            return found->second.first;
        std::int64_t best = kInfinite;
        std::size_t choice = s; // s: F_all at s; j > s: F_ck over s..j-1
        // F_all: stage s keeps everything; its forward and its backward must fit.
        if (m >= m_all[s] + m_forwardOverhead[s] && m >= m_all[s] + m_backwardOverhead[s]) {
            const std::int64_t after = s == t ? 0 : cost(s + 1, t, m - m_all[s]);
            if (after < kInfinite)
                best = m_forward[s] + m_backward[s] + after;
        }
        // F_ck: stages s..j-1 forward keeping only their latest output.
        std::int64_t forward = 0;
        for (std::size_t j = s + 1; j <= t; ++j) {
            const std::size_t k = j - 1;
            forward += m_forward[k];
            if (m < m_output[k] + (k > s ? m_output[k - 1] : 0) + m_forwardOverhead[k])
                break;
            const std::int64_t later = cost(j, t, m - m_output[k]);
            if (later >= kInfinite)
                continue;
            const std::int64_t again = cost(s, k, m);
            if (again < kInfinite && forward + later + again < best) {
                best = forward + later + again;
                choice = j;
            }
        }
        m_memo[key] = {best, choice};
        return best;
    }

    // The units of the solution for s..t: F_ck over s..j-1 is a unit whose inner units
    // are those of C(s, j-1, m).
    void units(std::size_t s, std::size_t t, std::int64_t m, std::vector<CheckpointUnit> &out)
    {
        while (s <= t) {
            const std::size_t choice = m_memo.at(std::make_tuple(s, t, m)).second;
            if (choice == s) {
                m -= m_all[s];
                ++s;
                continue;
            }
            CheckpointUnit unit{s, choice - 1, {}};
            units(s, choice - 1, m, unit.inner);
            // The recursion for the unit starts with its own F_all at s or a smaller F_ck:
            // the inner units are what it checkpoints again.
            out.push_back(std::move(unit));
            m -= m_output[choice - 1];
            s = choice;
        }
    }

    std::int64_t baseline() const
    {
        std::int64_t ns = 0;
        for (std::size_t k = 0; k < m_n; ++k)
            ns += m_forward[k] + m_backward[k];
        return ns;
    }

private:
    std::size_t m_n;
    std::vector<std::int64_t> m_forward, m_backward, m_output, m_all, m_forwardOverhead, m_backwardOverhead;
    std::map<std::tuple<std::size_t, std::size_t, std::int64_t>, std::pair<std::int64_t, std::size_t>> m_memo;
};

} // namespace

std::optional<RotorSolution> rotorOptimum(const std::vector<RotorStage> &stages, std::int64_t memory, int slots)
{
    if (stages.empty() || memory < 0)
        return std::nullopt;
    std::int64_t total = 0;
    for (const RotorStage &s : stages)
        total += s.activationBytes + s.forwardOverhead + s.backwardOverhead;
    const std::int64_t slot = std::max<std::int64_t>(1, total / std::max(slots, 1));
    Rotor rotor(stages, slot);
    const std::int64_t m = memory / slot;
    const std::int64_t time = rotor.cost(0, stages.size() - 1, m);
    if (time >= kInfinite)
        return std::nullopt;
    RotorSolution solution;
    solution.addedNs = time - rotor.baseline();
    rotor.units(0, stages.size() - 1, m, solution.schedule);
    return solution;
}

} // namespace peaklens::test
