"""What the two kinds of fp32 input chains share: a function of a program
input whose int8 grid loses what the function needs (input_compression: a
log / dB / root of an input spanning decades; periodic_inputs: sin / cos of
an angle spanning many periods) runs in fp32 from the exact value, through
the chain of constant steps between them, on the function's own float32
kernel (aten::log.out, sin.out, ...: ir.FLOAT_MATH), and is quantized after
it on its own calibrated grid.

Each family decides which functions and chains qualify; here: the steps a
chain may pass through (constant_step), the measure (what the input's int8
grid costs, in steps of the function output's int8 grid, against LIMIT),
the kernel each function needs (a runtime lacking it keeps the int8 table,
with a warning: lacking) and the switch itself (run_in_fp32: the steps and
the function marked fp32, the compile note)."""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Sequence

import numpy as np
import torch

from .ir import FLOAT_MATH, Graph, Node, origin
from .quantize import affine_qparams

# output steps the input's int8 grid may cost before the chain runs in fp32
# (an int8 table of a smooth function is about one step off by itself)
LIMIT = 2.0
CONST_BINARY = ("add", "sub", "mul", "div")
POW = "aten::pow.Tensor_Tensor_out"               # a root x ** e, e < 1 (no one-input kernel)


def computed(g: Graph, n: Node) -> List[str]:
    """n's inputs that are not constants."""
    return [i for i in n.inputs if g.node(i).op != "constant"]


def constant_step(g: Graph, n: Node, also: Sequence[str] = ()) -> bool:
    """n reads one computed value and changes it by constants only: a
    reshape, permute, add / sub / mul / div by a constant, a linear by a
    constant weight or a matmul by a constant; also: the family's own further ops (clamp, neg)."""
    if len(computed(g, n)) != 1:
        return False
    if n.op in ("reshape", "permute") or n.op in CONST_BINARY or n.op in also:
        return True
    if n.op == "linear":
        return n.attrs.get("weight") is not None
    return n.op == "matmul" and len(n.inputs) == 2


def on_int8_grid(x: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    """x rounded to the int8 grid calibrated on [lo, hi] (and saturated there)."""
    scale, zp = affine_qparams(lo, hi)
    return (torch.clamp(torch.round(x / scale) + zp, -128, 127) - zp) * scale


def steps_lost(exact: Iterable, rounded: Iterable) -> float:
    """The largest difference between the function of the exact inputs and
    of the rounded ones, in steps of the exact results' int8 grid."""
    exact = [np.asarray(e, np.float64) for e in exact]
    rounded = [np.asarray(r, np.float64) for r in rounded]
    step = affine_qparams(min(float(e.min()) for e in exact), max(float(e.max()) for e in exact))[0]
    err = max(float(np.nan_to_num(np.abs(e - r), nan=0.0, posinf=0.0, neginf=0.0).max())
              for e, r in zip(exact, rounded))
    return err / step


def kernel(c: Node) -> str:
    """The float32 kernel elementwise node c runs on once in fp32."""
    fn = c.attrs["fn"]
    return POW if fn == "pow" else f"aten::{FLOAT_MATH[fn]}.out"


def lacking(c: Node, missing: Callable[[List[str]], List[str]]) -> Optional[str]:
    """The warning's tail when the runtime lacks c's fp32 kernel, else None."""
    gone = missing([kernel(c)])
    return f"; its fp32 form needs {gone[0]}, which the runtime's kernels lack" if gone else None


def run_in_fp32(g: Graph, c: Node, steps: List[Node], reason: str, log: Callable[[str], None],
                step_form: Callable[[Graph, Node], None] = lambda g, n: None) -> None:
    """The chain's steps and the function c itself marked fp32 (the reason is
    the compile note), each step put in a form with an fp32 kernel by
    step_form; c keeps its function (its aten::<fn>.out kernel: the
    lowering clamps an internal one into its domain, the user's call keeps
    torch's NaN / -inf, which the output's quantize saturates), x ** e
    becomes pow by a constant exponent. Before calibration: the new steps
    are observed like the rest."""
    for n in steps:
        n.attrs.setdefault("fp32", reason)        # a lead shared by sin and cos keeps the first note
        step_form(g, n)
    if c.attrs["fn"] == "pow":
        e = Node(f"{c.name}__exponent", "constant", [],
                 {"value": np.asarray(c.attrs["exponent"], np.float32), "source": c.attrs.get("source", c.name)}, [])
        g.nodes.insert(g.nodes.index(c), e)
        c.op, c.inputs = "binary_math", [c.inputs[0], e.name]
        c.attrs.pop("exponent")
    c.attrs["fp32"] = reason
    log(f"{origin(c)}: {reason}" + (" (with " + ", ".join(origin(n) for n in steps) + ")" if steps else ""))
