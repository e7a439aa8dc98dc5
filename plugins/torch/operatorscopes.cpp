// SPDX-License-Identifier: Apache-2.0
#include "operatorscopes.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace peaklens::torchrecord {

namespace {

// Text that outlives every record naming it: a node-based set never moves its strings.
const std::string *interned(std::string text)
{
    static std::mutex mutex;
    static auto *const texts = new std::unordered_set<std::string>; // never destroyed: reports come at exit
    const std::lock_guard lock(mutex);
    return &*texts->insert(std::move(text)).first;
}

struct Entered
{
    enum class Kind : std::uint8_t {
        Operator,
        Composite, // an operator made of others above autograd, which no dispatch mode sees
        Node,      // an autograd node
        Other,     // a scope of PyTorch's own that names no operator (the engine's evaluate_function)
    };
    const std::string *name = nullptr;
    Kind kind = Kind::Other;
};

// What a RecordFunction is, cached per thread. An operator is known by the address of
// its name, which lives in its schema for as long as the operator is registered; a scope
// that names no operator (the engine's own) holds its name itself and is not cached; an
// autograd node's name is copied into each of its scopes, so nodes are known by text.
Entered describe(const at::RecordFunction &fn)
{
    const char *raw = fn.name();
    if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION) {
        thread_local std::unordered_map<std::string_view, const std::string *> nodes;
        auto node = nodes.find(raw);
        if (node == nodes.end()) {
            const std::string *name = interned(raw);
            node = nodes.emplace(*name, name).first;
        }
        return {node->second, Entered::Kind::Node};
    }
    thread_local std::unordered_map<const char *, Entered> operators;
    if (const auto known = operators.find(raw); known != operators.end())
        return known->second;
    const auto op = fn.operator_name();
    if (!op)
        return {};
    std::string text = raw;
    if (!op->overload_name.empty())
        text += "." + op->overload_name;
    const auto handle = c10::Dispatcher::singleton().findOp(*op);
    const bool composite = handle && handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
    const Entered::Kind kind = composite ? Entered::Kind::Composite : Entered::Kind::Operator;
    return operators.emplace(raw, Entered{interned(std::move(text)), kind}).first->second;
}

thread_local std::vector<Entered> entered;

std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction &fn)
{
    entered.push_back(describe(fn));
    return nullptr;
}

void leave(const at::RecordFunction & /*fn*/, at::ObserverContext * /*context*/)
{
    if (!entered.empty())
        entered.pop_back();
}

} // namespace

void OperatorScopes::start()
{
    static std::once_flag started;
    std::call_once(started, [] {
        at::addGlobalCallback(at::RecordFunctionCallback(enter, leave)
                                  .needsInputs(false)
                                  .needsOutputs(false)
                                  .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
    });
}

// The operator named is the one a dispatch mode under autograd sees make the block (what a
// per-op policy, PyTorch's or the replay's, can keep): the outermost operator that is not a
// composite, in the innermost autograd node. An operator called by another such runs inside
// its kernel, below the mode (aten::mkldnn_convolution in aten::convolution), and so does a
// factory called by one; a factory a composite calls is what the mode sees (the mask of
// aten::dropout is aten::empty_like's). A block made under composites alone goes to the
// innermost of them.
RunningOperator OperatorScopes::current()
{
    RunningOperator running;
    const Entered *outermost = nullptr, *composite = nullptr;
    for (auto it = entered.rbegin(); it != entered.rend(); ++it) {
        if (it->kind == Entered::Kind::Node) {
            running.node = *it->name;
            break;
        }
        if (it->kind == Entered::Kind::Operator)
            outermost = &*it;
        else if (it->kind == Entered::Kind::Composite && !composite)
            composite = &*it;
    }
    if (const Entered *op = outermost ? outermost : composite)
        running.op = *op->name;
    return running;
}

} // namespace peaklens::torchrecord
