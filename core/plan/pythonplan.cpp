// SPDX-License-Identifier: Apache-2.0
#include "pythonplan.h"

#include "core/trace/visibletext.h"

#include <cstdio>

namespace peaklens {

namespace {

// The code point of the well-formed UTF-8 sequence of `length` bytes at `bytes`.
char32_t codePoint(std::string_view bytes, std::size_t length)
{
    const auto byte = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(bytes[i])); };
    if (length == 1)
        return byte(0);
    char32_t value = byte(0) & (0x7Fu >> length);
    for (std::size_t i = 1; i < length; ++i)
        value = value << 6 | (byte(i) & 0x3Fu);
    return value;
}

// Comment lines: every line of `text` behind "# ", shown as visibleText shows it, so no
// name from the trace can end a comment or hide what follows.
std::string commentLines(std::string_view text)
{
    std::string out;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string line = visibleText(text.substr(0, end));
        out += line.empty() ? "#\n" : "# " + line + "\n";
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    return out;
}

struct PlannedModule
{
    std::string path;
    std::int64_t parameterBytes = 0; // as traced; 0: not known
};

void addModule(const Trace &trace, std::uint32_t layer, const std::string &path, std::vector<PlannedModule> &modules)
{
    for (const PlannedModule &module : modules) {
        if (module.path == path)
            return; // an inner unit beginning where its segment does
    }
    modules.push_back({path, layer < trace.layers.size() ? trace.layers[layer].parameterBytes : 0});
}

// The modules a unit names (a segment: its first and last layer, and its inner units'),
// to check the model against; whether it is one module checkpointed on its own.
bool addUnitModules(const Trace &trace, const CostModel &model, const CheckpointUnit &unit, std::vector<PlannedModule> &modules)
{
    const ChainLayer &first = model.layers[unit.first];
    if (unit.isPart()) {
        const ChainPart &part = first.parts[unit.part];
        addModule(trace, part.layer, part.path, modules);
        return true;
    }
    addModule(trace, first.layer, first.path, modules);
    if (unit.first != unit.last)
        addModule(trace, model.layers[unit.last].layer, model.layers[unit.last].path, modules);
    for (const CheckpointUnit &inner : unit.inner)
        addUnitModules(trace, model, inner, modules);
    return unit.first == unit.last && unit.inner.empty();
}

constexpr std::string_view kStandaloneImports = R"py(
import functools

import torch
import torch.utils.checkpoint

)py";

constexpr std::string_view kStandaloneApply = R"py(

def apply(model):
    """Checkpoints the planned modules of ``model`` in place and returns it."""
    for path, traced_bytes in MODULES.items():
        module = _module(model, path, traced_bytes)
        if path in KEPT:
            _keep_forward(module, model, KEPT[path])
        else:
            _checkpoint_forward(module, SAVED.get(path, ()))
    return model


def _checkpoint_forward(module, saved):
    """Wraps ``module.forward`` in a non-reentrant checkpoint while gradients are on; with
    ``saved``, a selective one that keeps those operators' outputs."""
    original = module.forward
    options = {"context_fn": _selective(saved)} if saved else {}

    @functools.wraps(original)
    def checkpointed(*args, **kwargs):
        if not torch.is_grad_enabled():
            return original(*args, **kwargs)
        return torch.utils.checkpoint.checkpoint(original, *args, use_reentrant=False, **options, **kwargs)

    module.forward = checkpointed


def _selective(saved):
    """A checkpoint's context_fn: PyTorch's selective activation checkpointing, saving the
    outputs of the operators named (aten.addmm.default) and recomputing the rest."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    ops = set()
    for name in saved:
        space, op, overload = name.split(".")
        try:
            ops.add(getattr(getattr(getattr(torch.ops, space), op), overload))
        except (AttributeError, RuntimeError):
            raise ValueError(f"{name} is not an operator of PyTorch {torch.__version__}") from None

    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE

    return functools.partial(create_selective_checkpoint_contexts, policy)


def _keep_forward(module, model, form):
    """Runs ``module.forward``, while gradients are on, keeping the tensors it saves for
    backward (but the model's parameters and buffers) in ``form``, each tensor packed once:
    "bf16", its floating-point ones in bfloat16, given back in their own dtype when the
    backward uses them; "offload", copies in host memory (pinned, from a GPU), brought back
    to their device when the backward uses them."""
    original = module.forward

    def copy(tensor):
        if form == "bf16":
            return tensor.dtype, tensor.to(torch.bfloat16)
        if tensor.device.type == "cpu":  # host memory already: a copy outside PyTorch's allocator
            host = torch.frombuffer(bytearray(tensor.numel() * tensor.element_size()), dtype=tensor.dtype)
            return tensor.device, host.view(tensor.shape).copy_(tensor)
        host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
        return tensor.device, host.copy_(tensor, non_blocking=True)

    def unpack(saved):
        if not isinstance(saved, tuple):
            return saved
        how, tensor = saved
        if isinstance(how, torch.dtype):
            return tensor.to(how)
        return tensor.clone() if how.type == "cpu" else tensor.to(how, non_blocking=True)

    @functools.wraps(original)
    def kept_forward(*args, **kwargs):
        if not torch.is_grad_enabled():
            return original(*args, **kwargs)
        from torch.utils.weak import WeakIdKeyDictionary

        kept = {tensor.untyped_storage().data_ptr() for tensor in (*model.parameters(), *model.buffers())}
        packed = WeakIdKeyDictionary()  # per tensor saved, while it lives: its version and copy

        def pack(tensor):
            if (tensor.untyped_storage().data_ptr() in kept or tensor.numel() == 0
                    or form == "bf16" and (not tensor.is_floating_point()
                                           or tensor.dtype in (torch.bfloat16, torch.float16))):
                return tensor
            known = packed.get(tensor)
            if known is None or known[0] != tensor._version:
                known = (tensor._version, copy(tensor.detach()))
                packed[tensor] = known
            return known[1]

        try:
            with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                return original(*args, **kwargs)
        finally:
            packed.clear()

    module.forward = kept_forward
)py";

constexpr std::string_view kHelperApply = R"py(

def apply(model):
    """Checkpoints the planned units of ``model`` through the PeakLens helper and returns
    it. A script that calls ``peaklens.instrument`` itself passes ``checkpoint=STRATEGY``
    to it instead."""
    for path, traced_bytes in MODULES.items():
        _module(model, path, traced_bytes)
    try:
        import peaklens
    except ImportError:
        raise ImportError("this plan runs checkpoint segments through the PeakLens helper: "
                          "pip install its package (plugins/python in PeakLens)") from None
    return peaklens.instrument(model, checkpoint=STRATEGY)
)py";

constexpr std::string_view kModuleCheck = R"py(

def _module(model, path, traced_bytes):
    """The module at ``path``, checked against the traced model's parameter bytes."""
    try:
        module = model.get_submodule(path)
    except AttributeError:
        raise ValueError(f"the plan checkpoints {path}, which this model does not have") from None
    found = sum(p.numel() * p.element_size() for p in module.parameters())
    if traced_bytes is not None and found != traced_bytes:
        raise ValueError(f"{path} holds {found} bytes of parameters here and held {traced_bytes} when traced: "
                         "the plan was made for another model")
    return module
)py";

} // namespace

std::string pythonString(std::string_view text)
{
    std::string out = "\"";
    char escape[16];
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = utf8SequenceAt(text, at);
        if (length == 0) {
            out += "\\ufffd";
            ++at;
            continue;
        }
        const char32_t point = codePoint(text.substr(at), length);
        at += length;
        if (point == U'\\' || point == U'"') {
            out += '\\';
            out += static_cast<char>(point);
        } else if (point >= 0x20 && point < 0x7F) {
            out += static_cast<char>(point);
        } else {
            if (point < 0x100)
                std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(point));
            else if (point < 0x10000)
                std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(point));
            else
                std::snprintf(escape, sizeof escape, "\\U%08x", static_cast<unsigned>(point));
            out += escape;
        }
    }
    return out + "\"";
}

std::string pythonPlan(const Trace &trace, const CostModel &model, const Plan &plan, std::string_view description)
{
    std::vector<PlannedModule> modules;
    bool standalone = true;
    for (const CheckpointUnit &unit : plan.schedule)
        standalone = addUnitModules(trace, model, unit, modules) && standalone;

    std::string out = "# Activation checkpoints planned by PeakLens (peaklens-cli plan --emit python).\n#\n";
    out += commentLines(description);
    out += "#\n# Apply the plan to the model before any wrapper (DistributedDataParallel, FSDP,\n"
           "# torch.compile); saved as plan.py beside the script:\n#\n"
           "#     import plan\n#     model = plan.apply(model)\n#\n"
           "# apply() raises ValueError naming the module when the model is not the one traced.\n";
    out += standalone ? kStandaloneImports : std::string_view("\n");
    out += "# The plan in PeakLens's grammar (docs/planning.md), as PEAKLENS_CHECKPOINT takes it.\n";
    out += "STRATEGY = " + pythonString(strategyOf(model, plan).toString()) + "\n\n";
    out += standalone ? "# Each module is checkpointed on its own: its forward keeps only its input and its\n"
                        "# backward runs it again. With its parameter bytes as traced (None: not known).\n"
                      : "# The modules the plan's units name, with their parameter bytes as traced (None: not\n"
                        "# known): a segment runs its layers from the first to the last as one checkpoint.\n";
    out += modules.empty() ? "MODULES = {}\n" : "MODULES = {\n";
    for (const PlannedModule &module : modules)
        out += "    " + pythonString(module.path) + ": "
               + (module.parameterBytes > 0 ? std::to_string(module.parameterBytes) : std::string("None")) + ",\n";
    if (!modules.empty())
        out += "}\n";
    if (standalone) {
        out += "\n# Per module checkpointed selectively: the operators whose outputs its forward keeps;\n"
               "# the rest of it is recomputed.\n";
        std::string saved;
        for (const CheckpointUnit &unit : plan.schedule) {
            if (unit.saved.empty())
                continue;
            saved += "    " + pythonString(model.layers[unit.first].path) + ": [";
            for (std::size_t i = 0; i < unit.saved.size(); ++i)
                saved += (i ? ", " : "") + pythonString(unit.saved[i]);
            saved += "],\n";
        }
        out += saved.empty() ? "SAVED = {}\n" : "SAVED = {\n" + saved + "}\n";
        out += "\n# The modules run plainly that keep what they save for backward elsewhere: in bfloat16\n"
               "# (lossy), or in host memory (offload).\n";
        std::string kept;
        for (const CheckpointUnit &unit : plan.schedule) {
            if (unit.runsPlainly())
                kept +=
                    "    " + pythonString(model.layers[unit.first].path) + ": " + pythonString(keptFormName(unit.kept)) + ",\n";
        }
        out += kept.empty() ? "KEPT = {}\n" : "KEPT = {\n" + kept + "}\n";
    }
    out += standalone ? kStandaloneApply : kHelperApply;
    out += kModuleCheck;
    return out;
}

} // namespace peaklens
