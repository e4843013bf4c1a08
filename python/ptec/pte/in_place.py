"""In-place layers of --ptec-runtime-only programs (docs/aot.md): a
depthwise convolution whose out has its input's shape with stride 1 along
H, or a 1x1 convolution with stride 1, no padding and Cout == Cin, gets its
out planned over its input's bytes when the input dies there. ptec's
kernels of those operators (ptec:: names; upstream's never see it) then
compute in place, saving a few rows of the input in the runtime's scratch;
any other overlap of input and out they refuse. The plan then needs one
tensor less at that layer, which is how the DS-CNN goes below the liveness
bound of its out-of-place program.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..ops import signature
from .schema import Int, IntList, KernelCall, OptionalTensorList, TensorList

DEPTHWISE = "ptec::quantized_depthwise_conv2d.out"
CONV = "ptec::quantized_conv2d.out"


def _ints(builder, index: int) -> Optional[List[int]]:
    v = builder.values[index].val
    if isinstance(v, Int):
        return [int(v.int_val)]
    if isinstance(v, IntList):
        return [int(builder.values[i].val.int_val) for i in v.items or []]
    return None


def can_run_in_place(key: str, builder, named: Dict[str, int]) -> bool:
    """Whether ptec's kernel of `key` computes correctly with out over its
    input (the geometry the C kernels check, cortex_m_in_place.c)."""
    x = builder.values[named["input"]].val
    out = builder.values[named["out"]].val
    if list(x.sizes) != list(out.sizes) or bytes(x.dim_order) != bytes(out.dim_order) or \
            x.scalar_type != out.scalar_type or len(x.sizes) != 4:
        return False
    stride, padding = _ints(builder, named["stride"]), _ints(builder, named["padding"])
    if key == DEPTHWISE:
        return _ints(builder, named["depth_multiplier"]) == [1] and stride is not None and stride[0] == 1
    weight = builder.values[named["weight"]].val
    return list(weight.sizes[1:3]) == [1, 1] and stride == [1, 1] and padding == [0, 0]


def alias_in_place(builder) -> int:
    """Plans the out of every layer that can run in place over its input
    when that input is a planned intermediate (no method input or output,
    no state, no fixed offset) that no later instruction reads. Returns how
    many layers now run in place."""
    base = builder._alias_of
    io = {base.get(v, v) for v in list(builder.inputs) + list(builder.outputs) + list(builder._states)}
    planned = set(builder._planned)
    first: Dict[int, int] = {}
    last: Dict[int, int] = {}
    calls = []
    for t, ins in enumerate(builder.instructions):
        args = getattr(ins.instr_args, "args", None) or []
        for a in args:
            val = builder.values[a].val
            listed = isinstance(val, (TensorList, OptionalTensorList))
            for v in [i for i in val.items or [] if i >= 0] if listed else [a]:
                s = base.get(v, v)
                first.setdefault(s, t)
                last[s] = t
        if isinstance(ins.instr_args, KernelCall):
            calls.append((t, ins.instr_args))
    count = 0
    for t, call in calls:
        key = builder.operators[call.op_index].key
        if key not in (DEPTHWISE, CONV):
            continue
        named = dict(zip([n for n, _ in signature(key)], call.args))
        src, out = base.get(named["input"], named["input"]), named["out"]
        if src == out or src not in planned or out not in planned or src in io or out in io or \
                out in base or src in builder._fixed_offsets or out in builder._fixed_offsets:
            continue
        if last.get(src) != t or first.get(out) != t or \
                builder.values[src].val.nbytes != builder.values[out].val.nbytes:
            continue
        others = [a for n, a in named.items() if n not in ("input", "out")]
        if any(base.get(a, a) == src for a in others) or not can_run_in_place(key, builder, named):
            continue
        # out (and every view of it) becomes a view of the input's storage.
        builder._planned.remove(out)
        planned.discard(out)
        for v, b in list(base.items()):
            if b == out:
                base[v] = src
        base[out] = src
        last[src] = last.get(out, t)
        count += 1
    return count
