// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which operator each thread is running, for the torch recorder and the replay's:
// RecordFunction callbacks keep, per thread, the ATen operators and autograd nodes entered
// and not yet left, so a block is put down to the operator whose output it is as a per-op
// policy sees it ("aten::addmm", an overload after a dot: "aten::div.Tensor"; the
// outermost operator under autograd, not the kernels it calls) and to the autograd node
// running it ("MmBackward0"). A factory (aten::empty and its kin) called inside such an
// operator allocates on its behalf: that operator is named.

#include <string_view>

namespace peaklens::torchrecord {

struct RunningOperator
{
    std::string_view node; // the innermost autograd node, empty outside backward
    std::string_view op;   // empty outside any operator
};

class OperatorScopes
{
public:
    // Registers the callbacks for every thread (autograd's included); once.
    static void start();
    // On the calling thread. The text lives as long as the process.
    static RunningOperator current();
};

} // namespace peaklens::torchrecord
