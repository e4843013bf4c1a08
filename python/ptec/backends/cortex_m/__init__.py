"""The cortex_m backend: int8 graph nodes lowered to cortex_m:: kernel calls
(CMSIS-NN numerics, cortex-m-ops.md), with every requantization parameter,
weight layout and scratch size computed ahead of time for the target ISA.
No blob: its kernels are in the runtime's operator table."""
from __future__ import annotations

from .. import KernelBackend
from .lowering import LOWERINGS
from .lowering_a16 import LOWERINGS_A16
from .partitioner import refusal


class CortexMBackend(KernelBackend):
    name = "cortex_m"

    def claim(self, n, ctx):
        return refusal(n, ctx)

    def lower_node(self, n, ctx):
        if n.attrs.get("a16") and n.op in LOWERINGS_A16:
            out = LOWERINGS_A16[n.op](ctx, n)
            if out is not None:
                return out
        return LOWERINGS[n.op](ctx, n)
