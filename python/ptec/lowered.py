"""The lowered program: what the backends' lowerings produce and what the
planner (ptec.plan) and the emitter (ptec.emit) consume.

A Lowered holds a ProgramBuilder with every value, kernel call and delegate
call (no memory offsets yet: planning is the next stage), the program's
inputs and outputs, and where each graph node went (its Placement, with the
reason). Lowerings talk about values through `Act`: a value index plus the
logical (NCHW) sizes and, when quantized, the per-tensor scale and zero
point. 4-D activations are channels-last (cortex-m-ops.md §1.2), others
contiguous; `view` and `clone_dim_order` convert between the two.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from .pte.program_builder import CHANNELS_LAST, ProgramBuilder, contiguous
from .pte.schema import ScalarType


@dataclass
class Act:
    value: int
    sizes: List[int]
    dtype: int = ScalarType.FLOAT
    scale: Optional[float] = None
    zp: Optional[int] = None


def layout(sizes) -> List[int]:
    return CHANNELS_LAST if len(sizes) == 4 else contiguous(len(sizes))


def new_act(b: ProgramBuilder, dtype, sizes, scale=None, zp=None, dim_order=None) -> Act:
    sizes = [int(s) for s in sizes]
    v = b.tensor(dtype, sizes, layout(sizes) if dim_order is None else dim_order)
    return Act(v, sizes, dtype, scale, zp)


def clone_dim_order(b: ProgramBuilder, x: Act, dim_order: Sequence[int]) -> Act:
    out = new_act(b, x.dtype, x.sizes, x.scale, x.zp, dim_order=list(dim_order))
    b.call("dim_order_ops::_clone_dim_order.out", self=x.value, non_blocking=False,
           dim_order=list(dim_order), out=out.value)
    return out


def needs_relayout(sizes) -> bool:
    """A 4-D tensor whose channels-last bytes differ from NCHW order."""
    return len(sizes) == 4 and sizes[1] > 1 and sizes[2] * sizes[3] > 1


def view(b: ProgramBuilder, x: Act, sizes: Sequence[int]) -> Act:
    """Reshape with PyTorch (NCHW, row-major) semantics. When the source or
    the destination is a 4-D channels-last tensor whose bytes differ from
    NCHW order, a dim_order clone converts the layout; otherwise the view is
    a second tensor over the same bytes, with no instruction."""
    sizes = [int(s) for s in sizes]
    if needs_relayout(x.sizes):
        x = clone_dim_order(b, x, [0, 1, 2, 3])
    if needs_relayout(sizes):
        v = b.view(x.value, sizes, [0, 1, 2, 3])
        return clone_dim_order(b, Act(v, sizes, x.dtype, x.scale, x.zp), CHANNELS_LAST)
    v = b.view(x.value, sizes, layout(sizes))
    return Act(v, sizes, x.dtype, x.scale, x.zp)


def raw_view(b: ProgramBuilder, x: Act, sizes, dim_order) -> Act:
    """The same bytes under other sizes and dim order (no instruction)."""
    v = b.view(x.value, [int(s) for s in sizes], list(dim_order))
    return Act(v, [int(s) for s in sizes], x.dtype, x.scale, x.zp)


def as_physical(b: ProgramBuilder, x: Act) -> Act:
    """A 4-D channels-last value as the contiguous [N, H, W, C] tensor over
    its bytes (no instruction). Kernels that index their tensors as
    contiguous compute right on it; dim d of x is dim CHANNELS_LAST.index(d)."""
    return raw_view(b, x, [x.sizes[d] for d in CHANNELS_LAST], [0, 1, 2, 3])


def from_physical(b: ProgramBuilder, y: Act) -> Act:
    """The inverse of as_physical: a contiguous [N, H, W, C] value as the
    channels-last [N, C, H, W] over the same bytes."""
    n, h, w, c = y.sizes
    return raw_view(b, y, [n, c, h, w], CHANNELS_LAST)


@dataclass
class IOInfo:
    name: str
    sizes: List[int]
    dtype: str                       # "float32", "int8", "int64" or "int32" (an index: argmax, x.long()),
                                     # "bool", "float16" / "bfloat16" (an output torch returns as half / bfloat16,
                                     # an input whose example is: capture_input_dtypes),
                                     # "int16" / "uint8" / "int8" / "float64" (an int value's .short() / .byte() /
                                     # .char() / .double(): capture_int_casts; an int8 one has no scale)
    dim_order: List[int]
    scale: Optional[float] = None
    zero_point: Optional[int] = None
    bound: bool = False              # sizes are the most a run gives (a bound-dynamic output: x[x > 0])


@dataclass
class Placement:
    """Where one graph node went and why. backend: "cortex_m", "portable", a
    delegating backend's name, or "none" for inputs, constants and
    identities, which produce no code of their own. reason: why each backend
    asked before this one did not take the node ("backend: why; ..."), or
    partition.FIRST_CHOICE."""
    node: str
    op: str
    backend: str
    reason: str
    source: str = ""        # the PyTorch module path and class (ir.origin)


@dataclass
class Lowered:
    builder: ProgramBuilder
    inputs: List[IOInfo]
    outputs: List[IOInfo]
    target: str
    placements: List[Placement] = field(default_factory=list)
    fallbacks: List[str] = field(default_factory=list)   # "module path (class): op key"
    refusals: List[str] = field(default_factory=list)    # "module path (class): why it is not int8"
    unsupported: List[str] = field(default_factory=list)  # nodes with no kernel at all, by ir.origin

    @property
    def operators(self) -> List[str]:
        return [op.key for op in self.builder.operators]

    @property
    def delegates(self) -> List[str]:
        return [d.id for d in self.builder.delegates]


# A kernel lowering's result for a node whose value is made on first use
# (ctx.deferred), for example a transpose its consumer may absorb.
NOT_YET = Act(-1, [])
