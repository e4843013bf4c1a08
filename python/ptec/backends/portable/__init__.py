"""The portable backend: the fp32 fallback that takes every node no other
backend took, on ATen kernels (src/kernels/portable). No blob. Whether the
runtime has the kernel a node needs is checked by the compiler driver, which
then reports why each such node was not lowered to int8."""
from __future__ import annotations

from .. import KernelBackend
from .lowering import lower_fp32


class PortableBackend(KernelBackend):
    name = "portable"
    produces_float = True

    def claim(self, n, ctx):
        return None

    def lower_node(self, n, ctx):
        return lower_fp32(n, [ctx.f(i) for i in n.inputs], ctx.b, ctx.fallbacks)
