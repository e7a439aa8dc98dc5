# SPDX-License-Identifier: Apache-2.0
"""PeakLens's checkpoint grammar, read exactly as its planner and replay engine read it:
the model's repeated blocks (its chain) and the units a strategy asks for over its layers.
It needs no torch, so a strategy can be checked where PyTorch is not installed."""

import collections
import math
import re

_NUMBERED = re.compile(r"^\d+$")
_DELIMITER = re.compile(r"[,()\[]")
_OP_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_DISPATCHER_OVERLOAD = re.compile(r"^(.+?)_([A-Z][A-Za-z0-9_]*)$")  # mul_Tensor, add__Tensor
# Where a layer run plainly keeps what it saves for backward, as its policy names it.
KEPT_FORMS = ("bf16", "offload")


def checkpoint_chain(model):
    """The paths ``all`` toggles, the model's repeated blocks, chosen as PeakLens's planner
    chooses its chain: among the containers whose children are numbered 0, 1, 2, ... (a
    ModuleList or Sequential), the one whose children are all of one type, then the one
    with the most children, then the deepest."""
    best, best_rank = None, None
    for path, module in model.named_modules():
        children = list(module.named_children())
        if len(children) < 2 or not all(_NUMBERED.match(name) for name, _ in children):
            continue
        one_type = len({type(child) for _, child in children}) == 1
        depth = path.count(".") + 1 if path else 0
        rank = (one_type, len(children), depth)
        if best_rank is None or rank > best_rank:
            best, best_rank = path, rank
    if best is None:
        return []
    container = model.get_submodule(best)
    prefix = best + "." if best else ""
    return [prefix + name for name, _ in container.named_children()]


class Unit(collections.namedtuple("Unit", "first last inner save kept", defaults=((), ""))):
    """A checkpoint unit: the layers ``first..last`` (paths; equal for one layer) run as one
    checkpoint whose recompute checkpoints its ``inner`` units (a tuple of Units) again.
    ``save``: a single layer's per-op policy, the operators (PyTorch overload names,
    ``aten.addmm.default``, sorted) whose outputs its forward keeps instead of recomputing.
    ``kept``: ``"bf16"`` or ``"offload"``: not a checkpoint; a single layer run plainly that
    keeps what it saves for backward in bfloat16 or in host memory."""

    __slots__ = ()

    def __str__(self):
        return write_schedule([self])


class _Item(collections.namedtuple("_Item", "first last inner save kept", defaults=((), ""))):
    """A unit as written: ``last`` is None for a single ``NAME``."""

    __slots__ = ()


_KEYWORDS = ("none", "all", "sqrt")
_RULES = ("every:", "segments:")
_DEEPEST_NESTING = 64  # a schedule deeper than the chain is long means nothing


def _trimmed(text):
    return text.strip(" \t")


def operator_overload(op):
    """An operator as a per-op policy names it, PyTorch's overload name
    ``aten.addmm.default``, from that name or from the name a trace records (``aten::addmm``
    for the default overload, ``aten::mul.Tensor``, and ``aten::mul_Tensor`` as a snapshot's
    dispatcher frames write it: operator names are lower case, overload names begin upper
    case); None for anything else, a name without its overload (``aten.mm``, which matches
    nothing in a PyTorch policy) included."""
    if "::" in op:
        space, _, rest = op.partition("::")
        name, dot, overload = rest.partition(".")
        joined = None if dot else _DISPATCHER_OVERLOAD.match(name)
        if joined:
            name, overload = joined.groups()
        overload = overload if dot or joined else "default"
    else:
        pieces = op.split(".", 2)
        if len(pieces) != 3:
            return None
        space, name, overload = pieces
    if not all(_OP_NAME.match(piece) for piece in (space, name, overload)):
        return None
    return f"{space}.{name}.{overload}"


def _listed(paths):
    """``a, b, c``, shortened past 12 paths."""
    return ", ".join(paths[:12]) + (", ... " + paths[-1] if len(paths) > 12 else "")


class _ListParser:
    """The list form: ITEM,ITEM,... where ITEM is NAME, NAME..NAME or NAME..NAME(ITEM,...)."""

    def __init__(self, text, body):
        self.text, self.body, self.pos = text, body, 0

    def parse(self):
        items = self._list(0)
        if self.pos < len(self.body):
            char = self.body[self.pos]
            self._fail('a ")" closes nothing' if char == ")" else f'unexpected "{char}"')
        return items

    def _fail(self, why):
        raise ValueError(f'"{self.text}" is not a strategy: {why}.')

    def _list(self, depth):
        if depth > _DEEPEST_NESTING:
            self._fail(f"units nest deeper than {_DEEPEST_NESTING} levels")
        items = [self._item(depth)]
        while self.pos < len(self.body) and self.body[self.pos] == ",":
            self.pos += 1
            items.append(self._item(depth))
        return items

    def _name(self, token):
        token = _trimmed(token)
        if not token or token in _KEYWORDS or token.startswith(_RULES):
            self._fail("say none, all, every:K, segments:K or sqrt on its own, or list units as NAME, "
                       "NAME..NAME or NAME..NAME(UNIT,...), separated by commas")
        return token

    def _skip_blanks(self):
        while self.pos < len(self.body) and self.body[self.pos] in " \t":
            self.pos += 1

    def _item(self, depth):
        delimiter = _DELIMITER.search(self.body, self.pos)
        end = delimiter.start() if delimiter else len(self.body)
        token = self.body[self.pos:end]
        self.pos = end
        dots = token.find("..")
        first = self._name(token if dots < 0 else token[:dots])
        last = None if dots < 0 else self._name(token[dots + 2:])
        inner, save = [], ()
        self._skip_blanks()
        if self.pos < len(self.body) and self.body[self.pos] == "[":
            if last is not None:
                self._fail(f"a policy [save:...], [bf16] or [offload] applies to one layer, not to the segment {first}..{last}")
            save = self._policy(first)
            self._skip_blanks()
        if self.pos < len(self.body) and self.body[self.pos] == "(":
            if last is None:
                self._fail(f'only a segment FIRST..LAST has inner units ("{first}(")')
            self.pos += 1
            inner = self._list(depth + 1)
            if self.pos >= len(self.body) or self.body[self.pos] != ")":
                self._fail(f'the "(" after {first}..{last} is not closed')
            self.pos += 1
            self._skip_blanks()
        if save in KEPT_FORMS:
            return _Item(first, last, inner, (), save)
        return _Item(first, last, inner, save)

    def _policy(self, layer):
        """``[save:OP+OP+...]`` after ``layer`` (its operators as overload names, sorted), or
        the form named by ``[bf16]`` or ``[offload]``."""
        close = self.body.find("]", self.pos)
        if close < 0:
            self._fail(f'the "[" after {layer} is not closed')
        inside = _trimmed(self.body[self.pos + 1:close])
        self.pos = close + 1
        if inside in KEPT_FORMS:
            return inside
        if not inside.startswith("save:"):
            self._fail(f"the policy of {layer} is [save:OP+OP...], naming the operators whose outputs it keeps, "
                       "[bf16], keeping what it saves for backward in bfloat16, or [offload], keeping it in host memory")
        ops = []
        for written in inside[len("save:"):].split("+"):
            op = operator_overload(_trimmed(written))
            if op is None:
                self._fail(f'"{_trimmed(written)}" in the policy of {layer} is not an operator overload: '
                           "write it as PyTorch names it, aten.mm.default or aten.mul.Tensor")
            ops.append(op)
        return tuple(sorted(set(ops)))


def _parse(text):
    """A strategy read: ``(rule, k)`` for none, all, every:K, segments:K and sqrt (rule
    None for none), or ``("units", items)``."""
    body = _trimmed(text)
    if body in ("", "none"):
        return None, 0
    if body == "all":
        return "every", 1
    if body == "sqrt":
        return "sqrt", 0
    for rule in _RULES:
        if body.startswith(rule):
            digits = body[len(rule):]
            if not (digits.isascii() and digits.isdigit()) or not 1 <= int(digits) <= 1_000_000:
                raise ValueError(f'"{text}" is not a strategy: {rule}K needs a whole number K of at least 1.')
            return rule[:-1], int(digits)
    return "units", _ListParser(text, body).parse()


class _Resolver:
    """Items placed in ``toggleable`` and checked: ends in order, inner units within their
    unit and ending before it, no overlap among siblings, parts on their own at the top
    level. A part is a module inside a layer of ``chain`` (``blocks.1.attn`` of
    ``blocks.1``): it is checkpointed on its own while the rest of its layer runs plainly,
    so it neither begins, ends nor lies within a segment, and no whole unit holds its layer."""

    def __init__(self, toggleable, chain):
        self.toggleable = toggleable
        self.positions = {}
        for index, path in enumerate(toggleable):
            self.positions.setdefault(path, index)
        self.layers = {path for path in chain if path in self.positions}
        self.parts = {}  # a part's path -> the path of its layer
        for path in self.positions:
            layer = self._layer_holding(path)
            if layer is not None:
                self.parts[path] = layer

    def _layer_holding(self, path):
        """The layer of ``chain`` that ``path`` lies inside, or None."""
        names = path.split(".")
        for count in range(len(names) - 1, 0, -1):
            prefix = ".".join(names[:count])
            if prefix in self.layers:
                return prefix
        return None

    def position(self, path):
        if path not in self.positions:
            layer = self._layer_holding(path)
            if layer is not None:
                parts = [part for part in self.positions if self.parts.get(part) == layer]
                listed = f" ({_listed(parts)})" if parts else ""
                raise ValueError(f'"{path}" is not a module of {layer} that can be checkpointed on its own{listed}.')
            raise ValueError(f'"{path}" is not among the layers that can be checkpointed ({_listed(self.toggleable)}).')
        return self.positions[path]

    def place(self, path):
        """The position of ``path``, or of its layer for a part, and the part's own
        position (None for a layer itself)."""
        position = self.position(path)
        if path in self.parts:
            return self.positions[self.parts[path]], position
        return position, None

    def label(self, first, last):
        return self.toggleable[first] if first == last else self.toggleable[first] + ".." + self.toggleable[last]

    def units(self, items, parent=None):
        """The Units of ``items``, in order; ``parent`` the positions of the unit holding them."""
        placed = []  # (first, last, part, Unit); part None for a unit of whole layers
        for item in items:
            name = item.first if item.last is None else item.first + ".." + item.last
            first, part = self.place(item.first)
            if (item.save or item.kept) and (part is not None or parent):
                where = "an inner unit" if parent else "a module inside a layer"
                raise ValueError(f'"{name}": a policy applies to a layer of the chain on its own, not to {where}.')
            if part is not None:
                if item.last is not None or item.inner or parent:
                    raise ValueError(f'"{name}": {item.first} is a module inside {self.toggleable[first]}; '
                                     "it is checkpointed on its own, not as part of a segment.")
                placed.append((first, first, part, Unit(item.first, item.first, ())))
                continue
            last = first
            if item.last is not None:
                last, last_part = self.place(item.last)
                if last_part is not None:
                    raise ValueError(f'"{name}": {item.last} is a module inside a layer, so it cannot end a segment.')
            if last < first:
                raise ValueError(f'"{name}" is not a segment: {item.last} runs before {item.first}.')
            if parent and (first < parent[0] or last >= parent[1]):
                holder = self.toggleable[parent[0]] + ".." + self.toggleable[parent[1]]
                raise ValueError(f'"{name}" is not an inner unit of {holder}: '
                                 "it must lie within it and end before it ends.")
            inner = tuple(self.units(item.inner, (first, last)))
            placed.append((first, last, None,
                           Unit(self.toggleable[first], self.toggleable[last], inner, item.save, item.kept)))
        # By first layer; a whole unit before the parts of its first layer, which it holds.
        placed.sort(key=lambda entry: (entry[0], entry[2] is not None, entry[1], entry[2] or 0))
        unique = [entry for i, entry in enumerate(placed) if i == 0 or entry != placed[i - 1]]
        whole = None  # the last whole unit so far
        for i, (first, last, part, unit) in enumerate(unique):
            if whole is not None and whole[1] >= first:
                if part is not None:
                    raise ValueError(f"{unit.first} lies inside {self.label(*whole[:2])}, which a unit already holds whole.")
                raise ValueError(f"The units {self.label(*whole[:2])} and {self.label(first, last)} overlap.")
            if part is None:
                whole = first, last
                continue
            for other in unique[i + 1:]:
                if other[0] != first:
                    break
                a, b = unit.first, other[3].first
                if other[2] is not None and (_is_inside(b, a) or _is_inside(a, b)):
                    raise ValueError(f"The units {a} and {b} overlap: one module is inside the other.")
        return [unit for _, _, _, unit in unique]


def _is_inside(path, layer):
    """Whether ``path`` is a sub-layer of ``layer`` (``blocks.0.fc1`` of ``blocks.0``)."""
    return path.startswith(layer + ".")


def checkpoint_schedule(text, chain, toggleable):
    """The Units a checkpoint strategy asks for over ``toggleable`` (layer paths, in the
    order they run): PeakLens's grammar (docs/planning.md), read exactly as its planner and
    replay engine read it. ``none`` or nothing; ``all`` or ``every:K`` (every K-th layer of
    ``chain`` from the first); ``segments:K`` (``chain`` cut into runs of K layers, each one
    unit but the last, as ``torch.utils.checkpoint.checkpoint_sequential`` does); ``sqrt``
    (segments of ceil(sqrt(N)) layers); or units ``NAME``, ``NAME..NAME`` (a segment: those
    layers and all between them, as one checkpoint) and ``NAME..NAME(UNIT,...)`` (a segment
    whose recompute checkpoints its inner units again), separated by commas. A sub-layer of
    a segment's layer (``blocks.0.fc1`` after ``blocks.0``) is part of that layer. A module
    inside a layer of ``chain`` (a part: ``blocks.1.attn``) is a unit of its own, checkpointed
    while the rest of its layer runs plainly: it cannot begin, end or lie within a segment,
    nor lie inside a layer a whole unit holds, nor inside another part. Raises ValueError
    with a sentence for anything else."""
    rule, value = _parse(text)
    if rule == "units":
        return _Resolver(toggleable, chain).units(value)
    n = len(chain)
    if rule == "every":
        items = [_Item(path, None, []) for path in chain[::value]]
    elif rule in ("segments", "sqrt"):
        k = value if rule == "segments" else math.ceil(math.sqrt(max(n, 1)))
        items = [_Item(chain[j], chain[j + k - 1], []) for j in range(0, n - k, k)]
    else:
        items = []
    resolver = _Resolver(toggleable, chain)
    units = resolver.units(items)
    # A rule's segment is the chain's layers from its first to its last, one after another.
    in_chain = set(chain)
    for unit in units:
        layer = unit.first
        for path in toggleable[resolver.position(unit.first):resolver.position(unit.last) + 1]:
            if path in in_chain:
                layer = path
            elif not _is_inside(path, layer):
                raise ValueError(f"{path} runs between the chain's layers {unit.first} and {unit.last}, "
                                 "so they cannot form one segment.")
    return units


def write_schedule(units):
    """Units written in the grammar, canonically: in order, a single layer or part as its
    name, a segment as ``first..last`` with ``(inner,...)``; ``none`` for no units."""
    def written(unit):
        if unit.first == unit.last and not unit.inner:
            policy = f"[{unit.kept}]" if unit.kept else "[save:" + "+".join(unit.save) + "]" if unit.save else ""
            return unit.first + policy
        return unit.first + ".." + unit.last + ("(" + write_schedule(unit.inner) + ")" if unit.inner else "")

    return ",".join(written(unit) for unit in units) or "none"


def held_layers(units, toggleable):
    """The layers the (top-level) ``units`` checkpoint, in ``toggleable`` order; a sub-layer
    of a segment's layer is part of it and not named on its own, a part's unit holds just
    that module, and a layer kept in bfloat16 or host memory is not checkpointed."""
    positions = {}
    for index, path in enumerate(toggleable):
        positions.setdefault(path, index)
    held = []
    for unit in units:
        if unit.kept:
            continue  # run plainly: not a checkpoint
        layer = None
        for path in toggleable[positions[unit.first]:positions[unit.last] + 1]:
            if layer is None or not _is_inside(path, layer):
                held.append(path)
                layer = path
    return held


def resolve_checkpoint(text, chain, toggleable):
    """The layers a checkpoint strategy toggles, in ``toggleable`` order: those its
    top-level units hold (see checkpoint_schedule). Raises ValueError with a sentence for
    anything outside the grammar."""
    return held_layers(checkpoint_schedule(text, chain, toggleable), toggleable)
