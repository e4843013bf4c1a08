"""The LDL^T factorisation of a symmetric matrix (issue 15):
torch.linalg.ldl_factor(A) and torch.linalg.ldl_factor_ex(A) (LD, pivots,
and _ex's info) of a real A [..., n, n] (any n >= 1, its lower triangle
read as torch's, hermitian either way: a real A's Hermitian and symmetric
factorisations are one), and torch.linalg.ldl_solve(LD, pivots, B) of the
LD and pivots of one such call of the program.

Each result is one node on A viewed as [B, n, n] (fp32, attrs["fp32"]),
lowered to ptec::linalg_ldl_factor.out (op_linalg_ldl_factor.c: LAPACK
sytf2's Bunch-Kaufman partial pivoting in fp32, 1x1 and 2x2 blocks, so
torch's pivots wherever no comparison is tied to rounding): `linalg_ldl`
(LD [B, n, n], zeros above the diagonal as torch's) or `linalg_ldl_int`
(which 1: the pivots [B, n], int32, 1-based, a 2x2 block's two negative;
which 2: info [B], int32), the int32 values carried as float32 like an
index and viewed to torch's shape by an integer view. A singular A still
factors (info names its first zero column) where torch.linalg.ldl_factor
raises; ldl_factor_ex gives the same.

ldl_solve: A X = B by ptec::linalg_solve.out (LU with partial pivoting)
on the symmetric matrix the factorisation read (A's lower triangle and
its transpose), the factorisation's own results dropped when only the
solve reads them (capture_matrix_functions.without_unread_factors): the
same X up to rounding (both backward stable), not LD's substitutions.

Refused in one line naming the call: out=, an LD and pivots not made by
one ldl_factor call of the program, B broadcast over some of A's batch
dims, a non-square, empty or unknown-shape A, a complex A."""
from __future__ import annotations

from operator import getitem
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape, torch_functions
from .capture_matrix_functions import _Fp32, _Refused, _square, _system

_FACTOR = {"ldl_factor": torch_functions("linalg.ldl_factor"), "ldl_factor_ex": torch_functions("linalg.ldl_factor_ex")}
_SOLVE = torch_functions("linalg.ldl_solve")
_NAMES = {"ldl_factor": ("A", "hermitian"), "ldl_factor_ex": ("A", "hermitian", "check_errors"),
          "ldl_solve": ("LD", "pivots", "B", "hermitian")}
# result index or name -> ptec::linalg_ldl_factor.out's which
_WHICH = {0: 0, "LD": 0, 1: 1, "pivots": 1, 2: 2, "info": 2}


def _family(fn) -> Optional[str]:
    if fn.op != "call_function":
        return None
    for name, functions in _FACTOR.items():
        if any(fn.target is f for f in functions):
            return name
    return "ldl_solve" if any(fn.target is f for f in _SOLVE) else None


def _bind(fn, family: str):
    what = f"torch.linalg.{family}"
    names = _NAMES[family]
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names) - {"out"} or fn.kwargs.get("out") is not None:
        raise _Refused(f"{what}: ptec computes it without out= and with torch's argument names")
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    for flag in ("hermitian", "check_errors"):
        if not isinstance(got.get(flag, False), bool):
            raise _Refused(f"{what}: {flag} is True or False")
    return got


def _real(A, what: str):
    meta = A.meta.get("tensor_meta") if isinstance(A, torch.fx.Node) else None
    dtype = getattr(meta, "dtype", None)
    if dtype is not None and not dtype.is_floating_point:
        raise _Refused(f"{what}: ptec factors a real floating-point A (got {dtype})")


def _element(s: _Fp32, family: str, got, index, out) -> List:
    """LD (which 0), the pivots (1) or info (2) of A [..., n, n] viewed as
    [B, n, n], made torch's shape `out`."""
    what = f"torch.linalg.{family}"
    which = _WHICH.get(index)
    if which is None or (which == 2 and family != "ldl_factor_ex"):
        raise _Refused(f"{what}()[{index!r}]: ptec computes LD and pivots" +
                       (" and info" if family == "ldl_factor_ex" else ""))
    A = got.get("A")
    _real(A, what)
    shape, n = _square(A, what)
    batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    mats = s("reshape", [A.name], target_shape=[batch, n, n])
    if which == 0:
        s("reshape", [s("linalg_ldl", [mats])], target_shape=list(out))
        return s.done()
    ints = s("linalg_ldl_int", [mats], which=which)
    if list(out) != ([batch, n] if which == 1 else [batch]):
        s.int8("int_math", [ints], kind="view", dtype="int32", shape=list(out))
    return s.done()


def _factored(LD, pivots):
    """(A, the ldl_factor call's arguments) of the LD and pivots of one
    ldl_factor / ldl_factor_ex call of the program; else refused."""
    calls = []
    for value, index in ((LD, 0), (pivots, 1)):
        if not (isinstance(value, torch.fx.Node) and value.op == "call_function" and value.target is getitem
                and len(value.args) == 2 and isinstance(value.args[0], torch.fx.Node)
                and _WHICH.get(value.args[1]) == index and _family(value.args[0]) in _FACTOR):
            raise _Refused("torch.linalg.ldl_solve: ptec takes the LD and pivots of one torch.linalg.ldl_factor "
                           "(ldl_factor_ex) call of the program")
        calls.append(value.args[0])
    if calls[0] is not calls[1]:
        raise _Refused("torch.linalg.ldl_solve: ptec takes the LD and pivots of one torch.linalg.ldl_factor call, "
                       "not of two")
    return _bind(calls[0], _family(calls[0])).get("A")


def _solve(s: _Fp32, got, out) -> List:
    """ldl_solve: X of S X = B, S = A's lower triangle and its transpose
    (the matrix ldl_factor read), by ptec::linalg_solve.out."""
    what = "torch.linalg.ldl_solve"
    A = _factored(got.get("LD"), got.get("pivots"))
    _real(A, what)
    mats, rhs = _system(s, what, A, got.get("B"), out, vector_ok=False)
    n = _meta_shape(A)[-1]
    low = s("mul", [mats, s.const(np.tril(np.ones((n, n), np.float32))[None])])
    strict = s("mul", [mats, s.const(np.tril(np.ones((n, n), np.float32), -1)[None])])
    sym = s("add", [low, s("permute", [strict], dims=[0, 2, 1])])
    s("reshape", [s("linalg_solve", [sym, rhs])], target_shape=list(out))
    return s.done()


def _refused_node(fn, ins, why: str, item=None, index=None):
    from .capture import _element_of, _function_node       # capture imports this module
    node = _function_node(fn, ins)
    if item is not None:
        node = _element_of(item.name, node, index)
    node.attrs["source"] = f"{fn.name} (torch.linalg.{_family(fn)})"
    node.attrs["why"] = why
    return node


def ldl_nodes(fn, ins, by_name):
    """ldl_factor / ldl_factor_ex: a function (getitem fx node, index) ->
    the nodes of that result; ldl_solve: its nodes; a form not covered: the
    unsupported node with its reason (attrs["why"]); any other call: None."""
    family = _family(fn)
    if family is None:
        return None
    if family == "ldl_solve":
        out = _meta_shape(fn)
        try:
            if out is None:
                raise _Refused("torch.linalg.ldl_solve: its traced shape is unknown")
            s = _Fp32(fn.name)
            s.by_name = by_name
            return _solve(s, _bind(fn, family), out)
        except _Refused as why:
            return [_refused_node(fn, ins, str(why))]

    def element(item: torch.fx.Node, index):
        out = _meta_shape(item)
        try:
            if out is None:
                raise _Refused(f"torch.linalg.{family}: its traced shape is unknown")
            made = _element(_Fp32(item.name), family, _bind(fn, family), index, out)
            for n in made:
                n.attrs["drop_unread"] = True      # (read by ldl_solve only: dropped)
            return made
        except _Refused as why:
            return [_refused_node(fn, ins, str(why), item, index)]
    return element
