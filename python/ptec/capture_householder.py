"""torch.linalg.householder_product(A, tau) / torch.orgqr (issue 15): the
first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the
i-th column of A below the diagonal with a 1 on it and zeros above
(LAPACK's orgqr convention, real values), for A [..., m, n] and tau
[..., k], k <= n <= m.

In fp32 steps (capture_matrix_functions' _Fp32, for the same reason: int8
products of a product of reflectors would lose it): A viewed as [B, m, n],
V = its first k columns masked below the diagonal plus the unit diagonal
(constants), X = the identity's first n columns, then for i = k - 1 down
to 0: X -= (tau_i v_i) (v_i^T X), each product one aten::bmm.out. Applied
from the last reflector, each step is a rank-1 update of an m x n matrix
(LAPACK's orgqr applies them in the same order, blocked)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_matrix_functions import _Fp32
from .ir import Node

_FUNCTIONS = (torch.linalg.householder_product, torch.orgqr)


def _operands(fn):
    if fn.op == "call_function" and any(fn.target is f for f in _FUNCTIONS):
        names = ("A", "tau") if fn.target is torch.linalg.householder_product else ("input", "tau")
    elif fn.op == "call_method" and fn.target == "orgqr":
        names = ("input", "tau")
    else:
        return None
    if len(fn.args) > 2 or set(fn.kwargs) - set(names):
        return None
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    A, tau = got.get(names[0]), got.get("tau")
    return (A, tau) if isinstance(A, torch.fx.Node) and isinstance(tau, torch.fx.Node) else None


def householder_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a householder_product / orgqr call, else None (then
    refused as before: no kernel)."""
    if fn.op not in ("call_function", "call_method"):
        return None
    try:
        operands = _operands(fn)
    except TypeError:
        return None
    if operands is None:
        return None
    A, tau = operands
    shape, tshape, out = _meta_shape(A), _meta_shape(tau), _meta_shape(fn)
    if shape is None or tshape is None or out is None or len(shape) < 2 or len(tshape) != len(shape) - 1:
        return None
    m, n, k = shape[-2], shape[-1], tshape[-1]
    if not (0 < n <= m and k <= n) or tshape[:-1] != shape[:-2]:
        return None         # torch's own error at its run
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    s = _Fp32(fn.name)
    mats = s("reshape", [A.name], target_shape=[batch, m, n])
    eye = np.eye(m, dtype=np.float32)
    x = s("add", [s("mul", [mats, s.const(0.0)]), s.const(eye[None, :, :n])])
    if k == 0:
        s("reshape", [x], target_shape=list(out))
        return s.done()
    taus = s("reshape", [tau.name], target_shape=[batch, 1, k])
    below = np.tril(np.ones((m, k), np.float32), -1)[None]
    v_all = s("add", [s("mul", [s.pick(mats, n, range(k)), s.const(below)]), s.const(eye[None, :, :k])])
    for i in range(k - 1, -1, -1):
        v = s.pick(v_all, k, [i])                               # [B, m, 1]
        w = s("bmm", [s("permute", [v], dims=[0, 2, 1]), x])    # v^T X: [B, 1, n]
        x = s("sub", [x, s("bmm", [s("mul", [v, s.pick(taus, k, [i])]), w])])
    s("reshape", [x], target_shape=list(out))
    return s.done()
