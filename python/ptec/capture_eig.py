"""Eigenvalues and eigenvectors of a general (non-symmetric) real matrix
(issue 15): torch.linalg.eigvals(A) and torch.linalg.eig(A)'s eigenvalues
(`[0]`, `.eigenvalues`) of a float A [..., n, n] (any n >= 1) as a complex
value, carried as ptec.capture_complex carries one: its [..., n, 2] real and
imaginary parts, so every complex reader (abs, .real, .imag, angle,
view_as_real, arithmetic, sort of the parts, ...) applies to it; eig's
eigenvectors (`[1]`, `.eigenvectors`) likewise as [..., n, n, 2].

One `linalg_eigvals` node on A viewed as [B, n, n] (fp32, attrs["fp32"]),
lowered to ptec::linalg_eigvals.out (power-of-two scaling, Hessenberg
reduction, Francis double-shift QR in fp32: op_linalg_eigvals.c), then a
reshape to [..., n, 2]. ptec's order of the eigenvalues is its own and
documented: real part ascending, then imaginary part descending (a conjugate
pair adjacent, its positive imaginary part first); torch's (LAPACK geev's)
is the order deflation finds them, which torch does not define, so a model
reading them one by one should read an order-free function of them (sorted
magnitudes, sums, a product) or sort them itself.

The eigenvectors: one `linalg_eig_vectors` node on the same [B, n, n] view,
lowered to ptec::linalg_eig_vectors.out (op_linalg_eig_vectors.c: the same
values by the same code, then inverse iteration in complex fp32), then a
reshape to [..., n, n, 2]. Column j belongs to value j of the same call's
eigenvalues (ptec's order, for both). Each vector has unit norm and its
largest-modulus component real, as LAPACK geev's (torch's); ptec makes that
component positive, where LAPACK's sign is its algorithm's (either), so a
column equals torch's (for the same value) up to a sign: .abs(), |v|^2 and
sign-free products match torch's.

Refused in one line naming the call: an `out=` argument, a complex or
integer A, a non-square or empty matrix, a shape the trace does not know."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import refuse_call
from .capture_matrix_functions import FP32_REASON
from .capture_rewrites import _Steps
from .ir import Node

_EIGVALS = tuple(f for f in (getattr(torch.linalg, "eigvals", None),) if f is not None)
_EIG = tuple(f for f in (getattr(torch.linalg, "eig", None),) if f is not None)
_VALUES = (0, "eigenvalues")
_VECTORS = (1, "eigenvectors")


def _is(fn, targets) -> bool:
    try:
        return fn.target in targets
    except TypeError:
        return False


def _values(fn, call, vectors: bool = False) -> List[Node]:
    """The nodes of `call`'s (eigvals or eig) eigenvalues, the last one
    named fn.name: [..., n, 2]; or of eig's eigenvectors: [..., n, n, 2]."""
    what = f"torch.linalg.{call.target.__name__}"
    key = next(iter(call.kwargs), None)
    if len(call.args) + len(call.kwargs) != 1 or key not in (None, "input", "A"):
        refuse_call(fn, f"{what}: ptec takes the matrix alone (no out=)")
    A = call.args[0] if call.args else call.kwargs[key]
    meta = A.meta.get("tensor_meta") if isinstance(A, torch.fx.Node) else None
    shape = [int(d) for d in meta.shape] if meta is not None and hasattr(meta, "shape") else None
    if shape is None or len(shape) < 2:
        refuse_call(fn, f"{what}: ptec computes it for a tensor [..., n, n] of known shape")
    if meta.dtype not in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        refuse_call(fn, f"{what}: ptec computes it for a real floating-point A (got {meta.dtype})")
    n = shape[-1]
    if shape[-2] != n:
        refuse_call(fn, f"{what}: ptec computes it for square matrices (got {shape[-2]}x{n})")
    if n < 1:
        refuse_call(fn, f"{what}: ptec computes it for matrices of at least one row and column")
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    s = _Steps(fn.name)
    mats = s("reshape", [A.name], target_shape=[batch, n, n])
    if vectors:
        vecs = s("linalg_eig_vectors", [mats], fp32=FP32_REASON)
        s("reshape", [vecs], target_shape=shape + [2])
        return s.done()
    vals = s("linalg_eigvals", [mats], fp32=FP32_REASON)
    s("reshape", [vals], target_shape=shape[:-1] + [2])
    return s.done()


def eig_nodes(fn) -> Optional[List[Node]]:
    """torch.linalg.eigvals(A), or an element of torch.linalg.eig(A) (the
    eigenvalues or the eigenvectors), as a complex value's [..., n, 2] or
    [..., n, n, 2] pairs; None for any other call."""
    if _is(fn, _EIGVALS):
        return _values(fn, fn)
    if not _is(fn, (operator.getitem, getattr)) or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node):
        return None
    call = fn.args[0]
    if call.op != "call_function" or not _is(call, _EIG):
        return None
    if fn.args[1] in _VECTORS:
        return _values(fn, call, vectors=True)
    if fn.args[1] in _VALUES:
        return _values(fn, call)
    return None
