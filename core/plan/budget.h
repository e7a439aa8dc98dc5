// SPDX-License-Identifier: Apache-2.0
#pragma once
// A memory budget in the forms users ask for: bytes ("6GiB"), a share of the measured
// peak ("70%"), or a share of the activation memory checkpointing can free (0..1, like
// PyTorch's activation_memory_budget: 1 keeps every activation, 0 frees all it can).

#include "costmodel.h"

#include <cstdint>
#include <string>

namespace peaklens {

struct Budget
{
    enum class Kind { Bytes, PeakShare, ActivationShare };
    Kind kind = Kind::Bytes;
    double value = 0; // bytes, or a share in [0, 1]

    // "6GiB", "512MiB", "70%". Throws Error with a sentence for anything else.
    static Budget parse(const std::string &text);
    // 0..1. Throws Error outside it.
    static Budget activationShare(double share);

    // A memory limit (bytes, a share of the peak), which plans stay a margin below; an
    // activation budget is a trade-off instead, met exactly.
    bool isLimit() const { return kind != Kind::ActivationShare; }

    // The budget in bytes for a step's model: a peak share of its measured peak; an
    // activation share s of the range from the lowest reachable peak L to the measured
    // peak P, L + s (P - L).
    std::int64_t bytes(const CostModel &model) const;
    // With the budget's bytes(): "4.2 GiB", "70 % of the measured peak (4.2 GiB)",
    // "activation budget 0.5 (4.2 GiB)".
    std::string describe(std::int64_t bytes) const;
};

} // namespace peaklens
