"""Linear algebra composed on capture_matrix_functions' fp32 kernels
(issue 15), every step fp32 (its _Fp32) so a matrix input is not rounded to
int8 on the way:

* torch.linalg.tensorinv(A, ind): A viewed as a [p, p] matrix (p the
  product of A.shape[:ind], which torch requires to be that of the rest),
  its inverse by ptec::linalg_solve.out of the identity, viewed as
  A.shape[ind:] + A.shape[:ind] (torch's definition);
* torch.linalg.tensorsolve(A, B, dims): A's dims named moved last (a
  permute), A viewed as [B.numel(), rest], solved by ptec::linalg_solve.out
  for B as a column, viewed as the rest of A's shape (torch's definition);
* torch.linalg.householder_product(A, tau) / torch.orgqr: the
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
from .capture_composed import _bound
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


def _prod(xs) -> int:
    return int(np.prod(xs)) if len(xs) else 1


def _tensorinv(fn) -> Optional[List[Node]]:
    got = _bound(fn, ("A", "ind"))
    A = got.get("A") if got else None
    shape, out = (_meta_shape(A) if isinstance(A, torch.fx.Node) else None), _meta_shape(fn)
    ind = got.get("ind", 2) if got else None
    if shape is None or out is None or not isinstance(ind, int) or not 0 < ind <= len(shape) \
            or _prod(shape[:ind]) != _prod(shape[ind:]) or _prod(shape) == 0:
        return None
    p = _prod(shape[:ind])
    s = _Fp32(fn.name)
    mats = s("reshape", [A.name], target_shape=[1, p, p])
    s("reshape", [s("linalg_solve", [mats, s.const(np.eye(p, dtype=np.float32)[None])])], target_shape=list(out))
    return s.done()


def _tensorsolve(fn) -> Optional[List[Node]]:
    got = _bound(fn, ("A", "B", "dims"))
    if got is None or not isinstance(got.get("A"), torch.fx.Node) or not isinstance(got.get("B"), torch.fx.Node):
        return None
    A, B, dims = got["A"], got["B"], got.get("dims")
    shape, bshape, out = _meta_shape(A), _meta_shape(B), _meta_shape(fn)
    if shape is None or bshape is None or out is None \
            or not (dims is None or all(isinstance(d, int) and not isinstance(d, bool) for d in dims)):
        return None
    s = _Fp32(fn.name)
    cur = A.name
    if dims:
        moved = [d % len(shape) for d in dims]
        order = [i for i in range(len(shape)) if i not in moved] + moved
        cur = s("permute", [cur], dims=order)
        shape = [shape[i] for i in order]
    o, r = _prod(bshape), _prod(shape[len(bshape):])
    if o != r or o == 0:
        return None         # torch's own error at its run
    mats = s("reshape", [cur], target_shape=[1, o, o])
    column = s("reshape", [B.name], target_shape=[1, o, 1])
    s("reshape", [s("linalg_solve", [mats, column])], target_shape=list(out))
    return s.done()


def matrix_composition_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a tensorinv / tensorsolve / householder_product / orgqr
    call, else None (then refused as before: no kernel)."""
    if fn.op not in ("call_function", "call_method"):
        return None
    if fn.op == "call_function" and fn.target is torch.linalg.tensorinv:
        return _tensorinv(fn)
    if fn.op == "call_function" and fn.target is torch.linalg.tensorsolve:
        return _tensorsolve(fn)
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
