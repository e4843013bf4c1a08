"""The portable backend: the fp32 fallback that takes every node no other
backend took, on ATen kernels (src/kernels/portable). No blob. Whether the
runtime has the kernel a node needs is checked by the compiler driver, which
then reports why each such node was not lowered to int8."""
from __future__ import annotations

import numpy as np

from .. import KernelBackend
from ...ir import origin
from ...pte.schema import ScalarType
from .lowering import (BINARY, aten_key, lower_batched_nms, lower_fp32, lower_fp32_rows, lower_frexp, lower_nms,
                       lower_view_dtype)


class PortableBackend(KernelBackend):
    name = "portable"
    produces_float = True

    def claim(self, n, ctx):
        return None

    def lower_node(self, n, ctx):
        if n.op == "embedding" and len(n.inputs) == 1:
            # rows of a constant fp32 table (capture_random's cauchy_) by int64 ids, kept as they are
            return lower_fp32_rows(n, ctx.get(n.inputs[0]), ctx.b, ctx.fallbacks)
        if n.op == "embedding":
            # rows of a float table the program holds (capture_nms_rows: boxes[idx] before nms) by int64 ids
            return lower_fp32_rows(n, ctx.get(n.inputs[0]), ctx.b, ctx.fallbacks, ctx.f(n.inputs[1]))
        if n.op in ("frexp_mantissa", "frexp_exponent"):
            # torch.frexp's two elements share one call (capture_float_bits), made by the first lowered
            key = (n.inputs[0], "frexp")
            if key not in ctx.ordered:
                ctx.ordered[key] = lower_frexp(ctx.f(n.inputs[0]), n.shape, ctx.b)
            ctx.fallbacks.append(f"{origin(n)}: aten::frexp.Tensor_out")
            return ctx.ordered[key][0 if n.op == "frexp_mantissa" else 1]
        if n.op == "nms":
            # torchvision's nms keep flags over the sort's int64 order (capture_nms)
            # a computed threshold (a third input) as its fp32 value (ptec::nms.Tensor_out)
            thr = ctx.f(n.inputs[2]) if len(n.inputs) > 2 else None
            return lower_nms(n, ctx.f(n.inputs[0]), ctx.get(n.inputs[1]), ctx.b, ctx.fallbacks, thr)
        if n.op == "batched_nms":
            # torchvision's batched_nms past 1,000 boxes (capture_nms): the classes as held when int64 / int32 /
            # float32 (exact), else as fp32 values
            held = ctx.get(n.inputs[3])
            idxs = held if held.dtype in (ScalarType.LONG, ScalarType.INT, ScalarType.FLOAT) else ctx.f(n.inputs[3])
            thr = ctx.f(n.inputs[4]) if len(n.inputs) > 4 else None
            return lower_batched_nms(n, ctx.f(n.inputs[0]), ctx.f(n.inputs[1]), ctx.get(n.inputs[2]), idxs, ctx.b,
                                     ctx.fallbacks, thr)
        if n.op == "where":
            # a where marked fp32 (nonfinite_in_fp32): float32 values chosen by the bool condition
            from ..cortex_m.lowering_bool import fp32_where
            ctx.fallbacks.append(f"{origin(n)}: aten::where.self_out")
            return fp32_where(ctx, n)
        if n.op == "view_dtype":
            # x.view(dtype): an int value's own integers, a float value's fp32 bytes (capture_dtype_view)
            x = ctx.f(n.inputs[0]) if n.attrs["src"] == "float32" else ctx.get(n.inputs[0])
            return lower_view_dtype(n, x, ctx.b, ctx.fallbacks)
        if aten_key(n) in BINARY:
            # constants are stored in the layout the call needs (lowering.py)
            consts = [np.asarray(ctx.g.node(i).attrs["value"], np.float32)
                      if ctx.g.node(i).op == "constant" else None for i in n.inputs]
            ins = [ctx.f(i) if c is None else None for i, c in zip(n.inputs, consts)]
            return lower_fp32(n, ins, ctx.b, ctx.fallbacks, consts)
        return lower_fp32(n, [ctx.f(i) for i in n.inputs], ctx.b, ctx.fallbacks)
