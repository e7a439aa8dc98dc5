// SPDX-License-Identifier: Apache-2.0
#include "frameclassifier.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace peaklens {

namespace {

bool contains(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

bool startsWithAny(std::string_view text, std::initializer_list<std::string_view> prefixes)
{
    return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return text.starts_with(p); });
}

bool containsAny(std::string_view text, std::initializer_list<std::string_view> parts)
{
    return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return contains(text, p); });
}

// Kineto writes Python files relative to their sys.path entry ("threading.py",
// "multiprocessing/spawn.py"): the standard library is then known by its module names, as
// it is in a Windows or conda layout (".../Python311/Lib/functools.py").
constexpr std::string_view kStandardModules[] = {
    "abc",       "argparse", "asyncio",   "concurrent",      "contextlib", "copy",     "dataclasses", "enum",   "functools",
    "importlib", "inspect",  "logging",   "multiprocessing", "queue",      "runpy",    "selectors",   "socket", "subprocess",
    "threading", "timeit",   "traceback", "typing",          "unittest",   "warnings", "weakref",
};

bool isStandardModule(std::string_view module)
{
    return std::find(std::begin(kStandardModules), std::end(kStandardModules), module) != std::end(kStandardModules);
}

std::string_view topLevelModule(std::string_view file)
{
    const auto end = file.find_first_of("/.");
    return file.substr(0, end);
}

// "C:/x" and "/x": a path from the root rather than from a sys.path entry.
bool isAbsolute(std::string_view file)
{
    return file.starts_with("/") || (file.size() > 2 && file[1] == ':' && file[2] == '/');
}

// The portable path in lower case: Windows paths differ in case from one install to the
// next ("Lib\site-packages"), and the directory names matched here are all lower case.
std::string matchablePath(std::string_view file)
{
    std::string path = portablePath(file);
    std::transform(path.begin(), path.end(), path.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return path;
}

// The file lies in this package ("accelerate/"), by an absolute or a sys.path-relative path.
bool inPackage(std::string_view file, std::string_view package)
{
    if (file.starts_with(package))
        return true;
    for (auto at = file.find(package); at != std::string_view::npos; at = file.find(package, at + 1)) {
        if (at > 0 && file[at - 1] == '/')
            return true;
    }
    return false;
}

FrameKind classifyPython(std::string_view rawFile)
{
    if (rawFile.starts_with("<"))
        return FrameKind::Interpreter; // <frozen importlib._bootstrap>, <string>
    const std::string file = matchablePath(rawFile);
    if (inPackage(file, "torch/") || containsAny(file, {"torchinductor_", "/torch_compile_debug/"}))
        return FrameKind::Torch;
    if (containsAny(file, {"site-packages/", "dist-packages/", "/lib/python3", "/lib64/python3", "/usr/lib/python"}))
        return FrameKind::Library;
    const std::string_view base = fileBaseName(file);
    const std::string_view directory = std::string_view(file).substr(0, file.size() - base.size());
    if (!isAbsolute(file) ? isStandardModule(topLevelModule(file))
                          : directory.ends_with("/lib/") && isStandardModule(topLevelModule(base)))
        return FrameKind::Library;
    return FrameKind::User;
}

// Demangled template functions start with their return type ("void at::meta::check<...>(...)",
// "at::TensorBase at::detail::_empty_generic<long>(...)"): the name is what follows it.
std::string_view withoutReturnType(std::string_view function)
{
    const auto space = function.find(' ');
    const auto bracket = function.find_first_of("<(");
    if (space == std::string_view::npos || (bracket != std::string_view::npos && bracket < space))
        return function;
    return function.substr(space + 1);
}

FrameKind classifyNative(std::string_view function, std::string_view file)
{
    if (file == kCompileContextFile || file == kUserMetadataFile)
        return FrameKind::System;
    function = withoutReturnType(function);
    if (function == kBeforeTrace || function == kTotalsOnly)
        return FrameKind::System;
    if (function.empty() || function == "??")
        return FrameKind::Interpreter; // unsymbolized: nothing to name it by
    if (containsAny(function, {"torch::unwind::", "CapturedTraceback", "gather_with_cpp"}))
        return FrameKind::Allocator;
    if (containsAny(file, {"CachingAllocator", "CUDAAllocator"}) || containsAny(function, {"CachingAllocator", "CUDAAllocator"})
        || startsWithAny(
            function, {"at::detail::empty_", "at::detail::_empty_", "c10::alloc_cpu", "c10::DefaultCPUAllocator", "c10::cuda::"}))
        return FrameKind::Allocator;
    if (fileBaseName(file).starts_with("python_")) // PyTorch's Python bindings
        return FrameKind::Interpreter;
    if (fileBaseName(file).starts_with("Register") || containsAny(file, {"core/boxing", "Redispatch"})
        || containsAny(function, {"c10::impl::", "c10::Dispatcher", "c10::KernelFunction", "c10::BoxedKernel", "::redispatch(",
                                  "at::_ops::", "ADInplaceOrView"}))
        return FrameKind::Dispatcher;
    if (containsAny(function, {"torch::autograd::", "autograd::engine::"}) || containsAny(file, {"VariableType", "engine.cpp"}))
        return containsAny(function, {"THPVariable", "THPFunction", "THPEngine", "torch::autograd::python::"})
                   ? FrameKind::Interpreter
                   : FrameKind::Autograd;
    if (startsWithAny(function, {"_Py", "Py", "cfunction_", "method_vectorcall", "slot_tp_", "vectorcall", "_PyObject",
                                 "torch::PyWarningHandler", "pybind11::"})
        || containsAny(function, {"THPVariable", "THPFunction", "THPModule"}))
        return FrameKind::Interpreter;
    // CPython's start-up ("run_mod.llvm.4711" as an optimised build names it), and any
    // function whose source is CPython's own (".../python-3.12.2/Objects/abstract.c").
    const std::string source = matchablePath(file);
    if (startsWithAny(function, {"pymain_", "run_mod", "run_eval_code_obj", "builtin_exec", "slot_"})
        || containsAny(source, {"/python-3", "/cpython/", "/python/bytecodes.c", "/python/ceval.c"}))
        return FrameKind::Interpreter;
    // glibc's sources, as its debug information names them ("./csu/../csu/libc-start.c").
    if (containsAny(source, {"sysdeps/"}) || startsWithAny(source, {"./csu/", "./nptl/", "./misc/"}))
        return FrameKind::System;
    // libc and the loader: their internal names begin with "__" (a static build's
    // "__libc_start_call", or whatever a stripped libc's nearest symbol is).
    if (startsWithAny(function, {"_start", "__", "clone", "start_thread", "pthread_", "std::", "execute_native_thread_routine"})
        || function == "main")
        return FrameKind::System;
    if (startsWithAny(function, {"at::", "c10::", "torch::", "caffe2::", "aten::", "autograd::", "<built-in"})
        || file.ends_with(".cu") || contains(file, "cudafe1"))
        return FrameKind::Torch;
    return FrameKind::Library;
}

} // namespace

std::string_view frameKindName(FrameKind kind)
{
    static constexpr std::array<std::string_view, kFrameKindCount> names = {"user",       "library",   "torch",       "autograd",
                                                                            "dispatcher", "allocator", "interpreter", "system"};
    return names[static_cast<std::size_t>(kind)];
}

std::string portablePath(std::string_view path)
{
    std::string portable(path);
    std::replace(portable.begin(), portable.end(), '\\', '/');
    return portable;
}

std::string_view fileBaseName(std::string_view path)
{
    const auto slash = path.find_last_of("/\\");
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool isPythonFrame(const Frame &frame)
{
    const std::string_view file = frame.file;
    return file.ends_with(".py") || (file.starts_with("<") && file.ends_with(">"));
}

bool isModuleCallFrame(const Frame &frame)
{
    return (frame.function == "_call_impl" || frame.function == "_wrapped_call_impl")
           && portablePath(frame.file).ends_with("torch/nn/modules/module.py");
}

bool isPassThroughFrame(const Frame &frame)
{
    if (!isPythonFrame(frame))
        return false;
    const std::string file = matchablePath(frame.file);
    // torch.nn's own layers (Sequential, TransformerEncoder) call their children: those
    // calls are the model's. The rest of torch's Python only passes calls on.
    if (inPackage(file, "torch/"))
        return !inPackage(file, "torch/nn/modules/") || file.ends_with("/module.py");
    if (inPackage(file, "accelerate/") || inPackage(file, "peft/") || inPackage(file, "transformers/utils/")
        || inPackage(file, "transformers/integrations/") || inPackage(file, "deepspeed/")
        || file.ends_with("transformers/modeling_layers.py") || file.ends_with("transformers/modeling_utils.py"))
        return true;
    if (classifyPython(frame.file) != FrameKind::Library)
        return false;
    const std::string_view module = topLevelModule(fileBaseName(file));
    return module == "functools" || module == "contextlib";
}

FrameKind classifyFrame(const Frame &frame)
{
    return isPythonFrame(frame) ? classifyPython(frame.file) : classifyNative(frame.function, frame.file);
}

std::optional<std::string> operatorName(const Frame &frame)
{
    const std::string_view function = frame.function;
    if (function.starts_with("aten::"))
        return std::string(function.substr(0, function.find_first_of(" (")));
    constexpr std::string_view prefix = "at::_ops::";
    if (!function.starts_with(prefix))
        return std::nullopt;
    const std::string_view rest = function.substr(prefix.size());
    const auto end = rest.find("::call(");
    if (end == std::string_view::npos)
        return std::nullopt; // ::redispatch: the dispatcher on its way to a kernel
    return "aten::" + std::string(rest.substr(0, end));
}

bool isFactoryOperator(std::string_view op)
{
    return op.starts_with("aten::empty") || op.starts_with("aten::new_empty");
}

namespace {
constexpr std::string_view kinetoNodePrefix = "autograd::engine::evaluate_function: ";
}

std::vector<Frame> operatorFrames(std::string_view node, std::string_view op)
{
    std::vector<Frame> frames;
    if (op.empty())
        return frames;
    if (!node.empty())
        frames.push_back(Frame{std::string(kinetoNodePrefix) + std::string(node), {}, 0});
    frames.push_back(Frame{std::string(op), {}, 0});
    return frames;
}

std::optional<std::string> autogradNodeName(const Frame &frame)
{
    std::string_view function = frame.function;
    if (function.starts_with(kinetoNodePrefix))
        return std::string(function.substr(kinetoNodePrefix.size()));
    if (!function.starts_with("torch::autograd::"))
        return std::nullopt;
    const auto apply = function.find("::apply(");
    if (apply == std::string_view::npos)
        return std::nullopt;
    function = function.substr(0, apply);
    const auto colons = function.rfind("::");
    const std::string_view name = colons == std::string_view::npos ? function : function.substr(colons + 2);
    if (name.empty() || name == "Node" || name == "Engine")
        return std::nullopt;
    return std::string(name);
}

Phase phaseHint(const Frame &frame)
{
    const std::string_view function = frame.function;
    const std::string portable = portablePath(frame.file);
    const std::string_view file = portable;
    if (isPythonFrame(frame)) {
        if ((file.ends_with("torch/_tensor.py") && function == "backward")
            || (file.ends_with("torch/autograd/__init__.py") && function == "backward")
            || (file.ends_with("torch/autograd/graph.py") && function == "_engine_run_backward"))
            return Phase::Backward;
        if (contains(file, "torch/optim/"))
            return Phase::Optimizer;
        // A module call, or a module's forward itself (some PyTorch builds leave the
        // module-call frames out of the stacks they record).
        if (isModuleCallFrame(frame) || function == "forward")
            return Phase::Forward;
        return Phase::Other;
    }
    if (containsAny(function, {"torch::autograd::Engine::", "autograd::engine::evaluate_function", "run_backward"}))
        return Phase::Backward;
    return Phase::Other;
}

} // namespace peaklens
