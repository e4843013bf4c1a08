"""Fused expansions of --fuse-expansion programs (docs/aot.md): an
inverted-residual block's 1x1 expansion (a ptec::quantized_conv2d with a
[E, 1, 1, Cin] weight, stride 1, no padding, its clamp in its activation
range) and the depthwise convolution right after it (depth multiplier 1)
that alone reads the expansion's out become one
ptec::quantized_expand_depthwise call. Its kernel makes the expanded rows
the next depthwise rows read into the runtime's scratch
(src/kernels/cortex_m/nn/ptec_nn_expand_depthwise_s8.c), so the expanded
tensor, the largest in MobileNet-V2's early blocks, is no longer planned.
The integer math is that of the two calls, so the bytes are the same.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..ops import signature
from .in_place import _ints
from .schema import EValue, KernelCall, Null, TensorList

EXPAND = "ptec::quantized_conv2d.out"
DEPTHWISE = "ptec::quantized_depthwise_conv2d.out"
FUSED = "ptec::quantized_expand_depthwise.out"

# The fused call's arguments: (its name, which call, that call's name).
_FUSED_ARGS = [(n, "dw", n) for n in ("input", "weight", "bias", "stride", "padding", "dilation",
                                      "input_offset", "output_offset", "requantize_multipliers",
                                      "requantize_shifts", "activation_min", "activation_max")]
_FUSED_ARGS[0] = ("input", "ex", "input")
_FUSED_ARGS += [("expand_weight", "ex", "weight"), ("expand_bias", "ex", "bias"),
                ("expand_input_offset", "ex", "input_offset"),
                ("expand_output_offset", "ex", "output_offset"),
                ("expand_multipliers", "ex", "requantize_multipliers"),
                ("expand_shifts", "ex", "requantize_shifts"),
                ("expand_min", "ex", "activation_min"), ("expand_max", "ex", "activation_max"),
                ("out", "dw", "out")]


def _named(builder, call: KernelCall) -> Dict[str, int]:
    key = builder.operators[call.op_index].key
    return dict(zip([n for n, _ in signature(key)], call.args))


def _storages(builder, call) -> List[int]:
    """The storages (views resolved to their base) an instruction names."""
    base = builder._alias_of
    out = []
    for a in getattr(call, "args", None) or []:
        val = builder.values[a].val
        for v in (val.items or []) if isinstance(val, TensorList) else [a]:
            out.append(base.get(v, v))
    return out


def _fusable(builder, ex: Dict[str, int], dw: Dict[str, int]) -> Optional[int]:
    """The expanded tensor when the pair can run as one fused call: the
    expansion's geometry, the depthwise's multiplier and the geometry the
    C kernel takes (every out row reads an input row: padding.h <=
    dilation.h * (KH - 1)), and offsets that agree."""
    values = builder.values
    x, e, w = values[ex["input"]].val, values[ex["out"]].val, values[ex["weight"]].val
    dww, y = values[dw["weight"]].val, values[dw["out"]].val
    if dw["input"] != ex["out"] or len(x.sizes) != 4 or len(e.sizes) != 4 or len(y.sizes) != 4:
        return None
    if len(w.sizes) != 4 or list(w.sizes[1:3]) != [1, 1] or _ints(builder, ex["stride"]) != [1, 1] or \
            _ints(builder, ex["padding"]) != [0, 0]:
        return None
    # NHWC physical channels: the weight's last dim is Cin (groups 1).
    channels = x.sizes[x.dim_order[-1]] if len(x.dim_order) == 4 else None
    if channels != w.sizes[3] or bytes(x.dim_order) != bytes(e.dim_order) or \
            bytes(e.dim_order) != bytes(y.dim_order):
        return None
    dilation, padding = _ints(builder, dw["dilation"]), _ints(builder, dw["padding"])
    if _ints(builder, dw["depth_multiplier"]) != [1] or dilation is None or padding is None or \
            len(dww.sizes) != 4 or padding[0] > dilation[0] * (dww.sizes[1] - 1) or dww.sizes[3] != w.sizes[0]:
        return None
    if _ints(builder, dw["input_offset"]) != [-v for v in _ints(builder, ex["output_offset"]) or []]:
        return None
    return ex["out"]


def fuse_expansions(builder) -> int:
    """Replaces every fusable expansion + depthwise pair whose expanded
    tensor is a planned intermediate (no method input or output, no state,
    no view, no fixed offset) that only those two instructions name by one
    fused call, drops the storages no instruction names any more (the
    expanded tensor, the pair's empty scratch) from the plan and operators
    no call uses from the table. Returns how many pairs were fused."""
    base = builder._alias_of
    io = {base.get(v, v) for v in list(builder.inputs) + list(builder.outputs) + list(builder._states)}
    uses: Dict[int, set] = {}
    for t, ins in enumerate(builder.instructions):
        for s in _storages(builder, ins.instr_args):
            uses.setdefault(s, set()).add(t)
    viewed = set(base.values())
    planned = set(builder._planned)
    fused_at = []
    t = 0
    instructions = builder.instructions
    while t + 1 < len(instructions):
        a, b = instructions[t].instr_args, instructions[t + 1].instr_args
        if not (isinstance(a, KernelCall) and isinstance(b, KernelCall) and
                builder.operators[a.op_index].key == EXPAND and builder.operators[b.op_index].key == DEPTHWISE):
            t += 1
            continue
        ex, dw = _named(builder, a), _named(builder, b)
        e = _fusable(builder, ex, dw)
        if e is None or e not in planned or e in io or e in base or e in viewed or \
                e in builder._fixed_offsets or uses.get(e) != {t, t + 1} or \
                [n for n, v in dw.items() if v == e] != ["input"]:
            t += 1
            continue
        parts = {"ex": ex, "dw": dw}
        args = [parts[which][name] for _, which, name in _FUSED_ARGS]
        args.append(args[-1])                      # the return slot repeats out
        instructions[t].instr_args = KernelCall(builder.operator(FUSED), args)
        fused_at.append(t + 1)
        t += 2
    for t in reversed(fused_at):
        del instructions[t]
        del builder._sources[t]
    if fused_at:
        _drop_unnamed(builder, uses)
    return len(fused_at)


def _drop_unnamed(builder, before: Dict[int, set]) -> None:
    named = set()
    for ins in builder.instructions:
        named.update(_storages(builder, ins.instr_args))
    gone = {v for v in before if v not in named}
    io = set(builder.inputs) | set(builder.outputs) | set(builder._states)
    dropped = {v for v in builder._planned if v in gone and v not in io}
    builder._planned[:] = [v for v in builder._planned if v not in dropped]
    # The runtime refuses a tensor with no memory, named or not: they become
    # Nulls (value indices stay put).
    for v in dropped:
        builder.values[v] = EValue(Null())
    # Operators no call uses any more leave the table (their calls renumbered).
    used = sorted({ins.instr_args.op_index for ins in builder.instructions
                   if isinstance(ins.instr_args, KernelCall)})
    if len(used) == len(builder.operators):
        return
    renumber = {old: new for new, old in enumerate(used)}
    for ins in builder.instructions:
        if isinstance(ins.instr_args, KernelCall):
            ins.instr_args.op_index = renumber[ins.instr_args.op_index]
    builder.operators[:] = [builder.operators[i] for i in used]
    builder._op_index = {op.key: i for i, op in enumerate(builder.operators)}
