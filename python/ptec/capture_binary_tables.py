"""torch.igamma / igammac, torch.special.gammainc / gammaincc and
torch.special.zeta of two traced values (issue 15). With one operand a
constant they are capture_unary_tables' 256-entry table already.

When both operands are element-wise functions of ONE traced value u
(`torch.igamma(x, x * 0.5 + 0.25)`, `zeta(x + 1.5, x * 0 + 1.0)`,
`igamma(x, x)`), the call is an element-wise function of u alone: torch's
f(a(u), b(u)) evaluated at u's 256 int8 codes is one table (the same
`torch_table` LUT, the chain from u to the operands evaluated by torch in
the table, so a and b are not rounded to int8 first). The chain may hold
calls of torch's and Python's arithmetic whose other arguments are numbers
or one-element constants, each of u's shape; the composed function passes
capture_unary_tables' probe (element-wise and deterministic) or the call
is refused.

Two operands that vary independently (a table of every pair of int8 codes
would be 256 x 256 = 64 KB per call) run in fp32: one `binary_math` node
(fn igamma, igammac or zeta; gammainc is igamma, gammaincc igammac), the
int8 operands dequantized before and the result quantized after, on the
ptec-only kernels aten::igamma.out, aten::igammac.out and
aten::special_zeta.out (src/kernels/portable/op_special_gamma.c; broadcast
as torch). Compile reports each as an fp32 layer."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape
from .capture_rewrites import _Steps
from .capture_unary_tables import is_elementwise
from .ir import Node

_CALLS = {torch.igamma: "torch.igamma", torch.igammac: "torch.igammac",
          torch.special.gammainc: "torch.special.gammainc", torch.special.gammaincc: "torch.special.gammaincc",
          torch.special.zeta: "torch.special.zeta"}
_METHODS = {"igamma": "Tensor.igamma", "igammac": "Tensor.igammac"}
# the binary_math function (ir.BINARY_MATH) of each call
_FN = {"torch.igamma": "igamma", "Tensor.igamma": "igamma", "torch.special.gammainc": "igamma",
       "torch.igammac": "igammac", "Tensor.igammac": "igammac", "torch.special.gammaincc": "igammac",
       "torch.special.zeta": "zeta"}
_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.pow,
               operator.abs}


def _what(fn) -> Optional[str]:
    if fn.op == "call_method":
        return _METHODS.get(fn.target) if isinstance(fn.target, str) else None
    if fn.op != "call_function":
        return None
    try:
        return _CALLS.get(fn.target)
    except TypeError:
        return None


def _constant(a, by_name):
    """A number, or a one-element constant tensor's value, else None."""
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return a
    if isinstance(a, torch.fx.Node):
        node = by_name.get(a.name)
        if node is not None and node.op == "constant":
            v = np.asarray(node.attrs["value"])
            if v.size == 1:
                return torch.as_tensor(v.reshape(-1)[0].item(), dtype=torch.float32)
    return None


def _chain(v, u_shape, by_name, nodes, sources):
    """Walk the traced operand v back to its one varying source: the calls
    on the way (nodes) and the sources met (sources); False when a call is
    not one of an element-wise chain (two traced operands from different
    values are still walked: the sources say)."""
    if not isinstance(v, torch.fx.Node) or _constant(v, by_name) is not None:
        return True
    meta = v.meta.get("tensor_meta")
    chainable = v.op in ("call_function", "call_method") and not v.kwargs and meta is not None \
        and getattr(meta, "dtype", None) == torch.float32 \
        and (v.target in _ARITHMETIC if v.op == "call_function" and not _torchs(v) else _torchs(v)) \
        and not (v.op == "call_method" and str(v.target).endswith("_"))
    traced = [a for a in v.args if isinstance(a, torch.fx.Node) and _constant(a, by_name) is None]
    if not chainable or len(traced) != 1 or not all(_plain(a, by_name) for a in v.args):
        sources.add(v)
        return True
    nodes.append(v)
    return _chain(traced[0], u_shape, by_name, nodes, sources)


def _torchs(fn) -> bool:
    if fn.op == "call_method":
        return isinstance(fn.target, str) and hasattr(torch.Tensor, fn.target)
    return (getattr(fn.target, "__module__", None) or "").startswith("torch")


def _plain(a, by_name) -> bool:
    return a is None or isinstance(a, (bool, int, float, str)) or isinstance(a, torch.fx.Node)


def _evaluator(v, u, by_name):
    """A function t -> v's value with u's value t, torch computing each call."""
    def run(t):
        memo = {u: t}

        def value(n):
            if not isinstance(n, torch.fx.Node):
                return n
            if n in memo:
                return memo[n]
            c = _constant(n, by_name)
            if c is not None:
                return c
            args = [value(a) for a in n.args]
            memo[n] = (getattr(args[0], n.target)(*args[1:]) if n.op == "call_method" else n.target(*args))
            return memo[n]
        return value(v)
    return run


def binary_table_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The table of igamma / zeta of two functions of one value; the fp32
    binary_math node for two independent values; else None."""
    what = _what(fn)
    if what is None or fn.kwargs:
        return None
    args = list(fn.args)
    if len(args) != 2 or not all(isinstance(a, torch.fx.Node) for a in args):
        return None
    if any(_constant(a, by_name) is not None for a in args):
        return None         # capture_unary_tables' case
    out = _meta_shape(fn)
    sources, nodes = set(), []
    for a in args:
        _chain(a, out, by_name, nodes, sources)
    u = next(iter(sources)) if len(sources) == 1 else None
    if u is not None and _meta_shape(u) == out and all(_meta_shape(n) == out for n in nodes) \
            and by_name.get(u.name) is not None and by_name[u.name].op != "constant":
        fa, fb = _evaluator(args[0], u, by_name), _evaluator(args[1], u, by_name)
        target = fn.target

        def call(t, _fa=fa, _fb=fb, _method=fn.op == "call_method"):
            a, b = _fa(t), _fb(t)
            return getattr(a, target)(b) if _method else target(a, b)
        if is_elementwise(call):
            s = _Steps(fn.name)
            s("elementwise", [u.name], fn="math", name="torch_table", call=call, what=what)
            return s.done()
    if len(ins) != 2:
        return None
    return [Node(fn.name, "binary_math", list(ins), dict(fn=_FN[what]))]
