// SPDX-License-Identifier: Apache-2.0
#pragma once
// What kind of code a stack frame is: the user's own code, a library, PyTorch, or the
// machinery every stack shares (unwinder, caching allocator, dispatcher, autograd engine,
// CPython interpreter, libc). Allocation sites are named by the first frame of user code.

#include "phase.h"
#include "stacktable.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace peaklens {

enum class FrameKind : std::uint8_t {
    User,        // Python outside PyTorch, site-packages and the standard library
    Library,     // other Python packages and the standard library; native code PeakLens does not know
    Torch,       // PyTorch's Python (torch/..., generated torchinductor code) and its C++ (at::, c10::, torch::)
    Autograd,    // autograd: VariableType, generated backward nodes, the engine
    Dispatcher,  // the operator dispatcher: Register*.cpp, boxing, redispatch, at::_ops
    Allocator,   // the caching allocator, empty_* tensor factories, the unwinder that recorded the stack
    Interpreter, // CPython (_PyEval_*, PyObject_*, ...), PyTorch's Python bindings, unsymbolized frames
    System,      // libc and thread start-up (_start, __libc_start_main, clone, std::)
};
inline constexpr int kFrameKindCount = 8;

std::string_view frameKindName(FrameKind kind);
FrameKind classifyFrame(const Frame &frame);

bool isPythonFrame(const Frame &frame);
// The module-call frames of torch.nn (Module._call_impl, _wrapped_call_impl).
bool isModuleCallFrame(const Frame &frame);
// A Python frame that only passes a call on: torch's own Python around a model (module
// calls, checkpoint, autocast, torch._dynamo, no_grad decorators), library hooks and
// decorators (accelerate's hooks, peft's model wrappers, transformers' utils and its
// checkpointing layer), functools and contextlib. A module call made from one is
// named after the frame that called the wrapper, never after the wrapper.
bool isPassThroughFrame(const Frame &frame);

// The path with '/' between its parts, as Windows recordings write them with '\': the
// rules above match it whichever OS wrote the trace.
std::string portablePath(std::string_view path);

// "aten::bmm" for an operator frame (at::_ops::bmm::call, or Kineto's cpu_op "aten::bmm").
std::optional<std::string> operatorName(const Frame &frame);
// A tensor factory that allocates on behalf of the operator calling it (aten::empty and its
// kin, an overload after a dot): the block is that operator's, where one called it.
bool isFactoryOperator(std::string_view op);
// The frames a recorder writes for a block an operator allocated, outermost first: the
// autograd node running it (as Kineto names the engine's evaluate_function) where there is
// one, then the operator ("aten::addmm", as Kineto names its cpu_op events). None without
// an operator. operatorName and autogradNodeName read them back.
std::vector<Frame> operatorFrames(std::string_view node, std::string_view op);
// "BmmBackward0" for a frame running an autograd node (its apply, or Kineto's
// "autograd::engine::evaluate_function: BmmBackward0").
std::optional<std::string> autogradNodeName(const Frame &frame);

// The phase a frame proves its stack to be in: the autograd engine (backward), an
// optimizer's step (optimizer), a module call or a forward function (forward).
// Phase::Other when it proves none.
Phase phaseHint(const Frame &frame);

// "model.py" for "/home/me/proj/model.py" (and for "D:\\proj\\model.py").
std::string_view fileBaseName(std::string_view path);

} // namespace peaklens
