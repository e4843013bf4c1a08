"""ptec's float graph: what capture produces and quantize annotates.

A Graph is a topologically ordered list of Nodes. Each node names its inputs
(other nodes), holds its attributes (weights as numpy arrays) and the float
output shape found during capture. `evaluate` runs the graph in PyTorch and
is the float semantics every later stage is checked against.

Ops: input, constant, conv2d, conv_transpose2d, linear, batch_norm, clamp
(relu/relu6/hardtanh), add, sub, mul, div, matmul, minimum, maximum,
avg_pool2d, adaptive_avg_pool2d, max_pool2d, reshape, permute, channel_shuffle, pad, softmax,
the unary activations of UNARY (sigmoid, tanh, silu, gelu, softplus, prelu, hardswish,
hardsigmoid, leaky_relu, elu), mean, cat, identity, argmax, index_to_float, to_index, int_math
(capture_int_math), sort, sort_indices (capture_sort) and embedding
(capture_indices; an input with attrs dtype "int64" holds token ids), flat_index (capture_tensor_index),
bag_positions (embedding_bag), window_max, window_argmax and
max_unpool (pool_indices), random_dropout and
random_fractional_pick (random_layers: new draws on every evaluation), compare, logical,
where and bool_to (capture_bool: bool values, evaluated as torch.bool), masked_select
(capture_masked_select: a value of variable length, its shape the bound),
binary_math (BINARY_MATH: pow, atan2, ... of two tensors), svdvals,
eigvalsh, linalg_det and linalg_solve (the singular values of [B, m, n],
the eigenvalues of symmetric [B, n, n], det / sign / log |det| / log det of
[B, n, n] by `mode`, A^-1 B), linalg_cholesky and linalg_triangular_solve
(L or U of [B, n, n], op(T)^-1 B of a triangle), linalg_eigh_vectors (the
eigenvectors of symmetric [B, n, n], each column's largest component
positive), linalg_svd (U, Vh or the pseudo-inverse of [B, m, n] by `which`),
linalg_qr (Q, R, or geqrf's a or tau of [B, m, n] by `which`, LAPACK's
signs), linalg_cholesky_info (cholesky_ex's int32 info of [B, n, n], carried
as float32 like an index), linalg_eigvals (the
eigenvalues of general [B, n, n] as [B, n, 2] real / imaginary pairs),
linalg_eig_vectors (their eigenvectors as [B, n, n, 2], column j of value j,
unit norm, the largest component real positive), linalg_lu (the packed LU,
P, L or U of [B, m, n] by `which`: LAPACK getrf's pivots) and
linalg_lu_pivots (its int32 pivots, 1-based, carried as float32 like an
index: capture_matrix_functions), linalg_ldl (LD of symmetric [B, n, n]:
Bunch-Kaufman, LAPACK sytrf's pivots) and linalg_ldl_int (its int32 pivots
[B, n] or info [B] by `which`, carried as float32: capture_ldl),
bmm (the fp32 product of [B, n, k] and [B, k, m]: aten::bmm.out),
frexp_mantissa and frexp_exponent (torch.frexp's mantissa, its int32
exponent carried as float32: capture_float_bits),
view_dtype (x.view(dtype): x's bytes as another dtype, capture_dtype_view),
histc (torch.histc's counts in float32: capture_fp32_histc, capture_elementwise_math's many elements),
nms (torchvision's nms: the 0/1 keep flag per sorted position of boxes [K, 4] by order [K],
attrs t: capture_nms, ptec::nms.out),
batched_nms (torchvision's batched_nms past 1,000 boxes: the kept indices of boxes [K, 4] in
its order, then -1, from scores, order and idxs [K], attrs t; int64, carried as float32:
capture_nms, ptec::batched_nms.out), unsupported. Any node may carry a fused
activation `attrs["act"] = (lo, hi)` (None for an open end).

State (--stateful): `state` is a tensor kept from one run to the next
(attrs init: its value after load or reset; bound: a known |value| bound or
None), `state_write(state, value)` stores value into it at the end of the
run (its own value is value's). Evaluating a graph is one run after load.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .inverse_trig import elementwise_functions
from .norm_factors import FUNCTIONS as NORM_FACTORS


@dataclass
class Node:
    name: str
    op: str
    inputs: List[str] = field(default_factory=list)
    attrs: Dict[str, Any] = field(default_factory=dict)
    shape: Optional[List[int]] = None
    qparams: Optional[tuple] = None        # (scale, zero_point) of the int8 output
    # the call as the user wrote it, for refusals (written()); outside attrs, which
    # rewrites compare and copy as the node's meaning, as they do "source"'s
    written: Optional[str] = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        return f"Node({self.name}: {self.op}{tuple(self.inputs)} shape={self.shape})"


@dataclass
class Graph:
    nodes: List[Node]
    inputs: List[str]
    outputs: List[str]
    name: str = "model"
    source: str = "fx"               # which capture front end made it: "fx" or "export"

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def users(self, name: str) -> List[Node]:
        return [n for n in self.nodes if name in n.inputs]

    def by_name(self) -> Dict[str, Node]:
        return {n.name: n for n in self.nodes}

    def replace_uses(self, old: str, new: str) -> None:
        for n in self.nodes:
            n.inputs = [new if i == old else i for i in n.inputs]
        self.outputs = [new if o == old else o for o in self.outputs]

    def remove(self, name: str) -> None:
        self.nodes = [n for n in self.nodes if n.name != name]

    def summary(self) -> str:
        return "\n".join(f"{n.name:>24} = {n.op}({', '.join(n.inputs)}) {n.shape}"
                         + (f" act={n.attrs['act']}" if n.attrs.get("act") else "")
                         for n in self.nodes)


def _t(a) -> Optional[torch.Tensor]:
    return None if a is None else torch.as_tensor(np.asarray(a))


def _apply_act(y: torch.Tensor, act) -> torch.Tensor:
    if act is None:
        return y
    lo, hi = act
    return torch.clamp(y, min=lo, max=hi)


def _gelu(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    return F.gelu(x)


# torch's element-wise math functions of one tensor, by name (the op
# "elementwise"). Outside a function's real domain (sqrt, log, rsqrt of a
# negative, a fractional power of a negative) torch gives NaN; an int8 grid
# around 0 can reach a little below 0 where the float model never does, so
# there the table holds the value at the domain's edge (0 or +-infinity,
# which the table saturates) instead of a NaN no int8 value stands for.
ELEMENTWISE: Dict[str, Callable[..., torch.Tensor]] = {
    "abs": lambda x, a: torch.abs(x),
    "sqrt": lambda x, a: torch.sqrt(torch.clamp(x, min=0.0)),
    "rsqrt": lambda x, a: torch.rsqrt(torch.clamp(x, min=0.0)),
    "exp": lambda x, a: torch.exp(x),
    "exp2": lambda x, a: torch.pow(2.0, x),
    "expm1": lambda x, a: torch.expm1(x),
    "log": lambda x, a: torch.log(torch.clamp(x, min=0.0)),
    "log2": lambda x, a: torch.log2(torch.clamp(x, min=0.0)),
    "log10": lambda x, a: torch.log10(torch.clamp(x, min=0.0)),
    "log1p": lambda x, a: torch.log1p(torch.clamp(x, min=-1.0)),
    "sin": lambda x, a: torch.sin(x),
    "cos": lambda x, a: torch.cos(x),
    "tan": lambda x, a: torch.tan(x),
    "atan": lambda x, a: torch.atan(x),
    "erf": lambda x, a: torch.erf(x),
    "sign": lambda x, a: torch.sign(x),
    "floor": lambda x, a: torch.floor(x),
    "ceil": lambda x, a: torch.ceil(x),
    "round": lambda x, a: torch.round(x, decimals=a["decimals"]) if a.get("decimals") else torch.round(x),
    "trunc": lambda x, a: torch.trunc(x),
    "frac": lambda x, a: torch.frac(x),
    "square": lambda x, a: x * x,
    "rpow": lambda x, a: torch.pow(a["base"], x),                       # c ** x
    "floordiv": lambda x, a: torch.div(x, a["divisor"], rounding_mode="floor"),
    "truncdiv": lambda x, a: torch.div(x, a["divisor"], rounding_mode="trunc"),
    "remainder": lambda x, a: torch.remainder(x, a["divisor"]),
    "fmod": lambda x, a: torch.fmod(x, a["divisor"]),
    # F.normalize's factor from a sum of squares s: 1 / max(sqrt(s), eps)
    "inverse_norm": lambda x, a: 1.0 / torch.clamp(torch.sqrt(torch.clamp(x, min=0.0)), min=a["eps"]),
    "reciprocal": lambda x, a: torch.reciprocal(x),
    "pow": lambda x, a: (torch.pow(x, a["exponent"]) if float(a["exponent"]).is_integer()
                         else torch.pow(torch.clamp(x, min=0.0), a["exponent"])),
    # x.half(), x.bfloat16(): the rounding to that precision, carried as float32 (capture_casts)
    "to_half": lambda x, a: x.to(torch.float16).to(torch.float32),
    "to_bfloat16": lambda x, a: x.to(torch.bfloat16).to(torch.float32),
    # torch.erfc, lgamma, logit, torch.special's, ... by a["name"] (capture_elementwise_math)
    "math": lambda x, a: _math(x, a),
}
ELEMENTWISE.update(elementwise_functions(ELEMENTWISE))      # asin, sinh, ... (inverse_trig)
ELEMENTWISE.update(NORM_FACTORS)                            # |x|^p, F.normalize's and renorm's factors


# ELEMENTWISE's functions with a float32 kernel of their own (aten::<name>.out,
# src/kernels/portable/op_float_unary_math.c) -> that name: an fp32 node of
# one runs on it (backends/portable/lowering.py); torch.arcsin's spellings too
FLOAT_MATH: Dict[str, str] = {fn: fn for fn in (
    "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "abs", "floor", "ceil", "round", "trunc",
    "reciprocal", "sign")}
FLOAT_MATH.update({"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
                   "arctanh": "atanh"})


def float_math_name(n: "Node") -> Optional[str]:
    """The float32 kernel's name (exp, ...) of an elementwise node or a neg,
    None when it has none (round to decimals, pow, the LUT-only functions)."""
    if n.op == "neg":
        return "neg"
    if n.op != "elementwise" or n.attrs.get("decimals"):
        return None
    return FLOAT_MATH.get(n.attrs.get("fn"))


def _math(x: torch.Tensor, a) -> torch.Tensor:
    from .capture_elementwise_math import evaluate_math
    return evaluate_math(x, a)

# torch's float functions of two tensors (the op "binary_math", attrs fn;
# capture_binary_math): no LUT takes two inputs, so they run in fp32 on
# portable kernels. Outside a function's domain torch's NaN is kept.
BINARY_MATH: Dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "pow": torch.pow, "atan2": torch.atan2, "hypot": torch.hypot, "fmod": torch.fmod,
    "remainder": torch.remainder, "copysign": torch.copysign,
    # two independent operands of capture_binary_tables' calls (ptec-only kernels)
    "igamma": torch.igamma, "igammac": torch.igammac, "zeta": torch.special.zeta,
    # the next float32 towards the other (capture_float_bits; ptec-only kernel)
    "nextafter": torch.nextafter,
    # the extreme, the other operand where one is NaN (capture_elementwise_math's fp32 steps; ptec-only kernels)
    "fmin": torch.fmin, "fmax": torch.fmax,
}

# Element-wise functions of one tensor (attrs -> function); lowered as 256-entry LUTs.
UNARY: Dict[str, Callable[..., torch.Tensor]] = {
    "sigmoid": lambda x, a: torch.sigmoid(x),
    "tanh": lambda x, a: torch.tanh(x),
    "silu": lambda x, a: x * torch.sigmoid(x),
    "gelu": lambda x, a: _gelu(x, a.get("approximate", "none")),
    "hardswish": lambda x, a: x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0,
    "hardsigmoid": lambda x, a: torch.clamp(x + 3.0, 0.0, 6.0) / 6.0,
    "leaky_relu": lambda x, a: F.leaky_relu(x, a.get("negative_slope", 0.01)),
    "elu": lambda x, a: F.elu(x, a.get("alpha", 1.0)),
    "softplus": lambda x, a: F.softplus(x, a.get("beta", 1.0), a.get("threshold", 20.0)),
    "prelu": lambda x, a: torch.where(x >= 0, x, x * a["weight"]),
    "hardshrink": lambda x, a: F.hardshrink(x, a.get("lambd", 0.5)),
    "softshrink": lambda x, a: F.softshrink(x, a.get("lambd", 0.5)),
    "softsign": lambda x, a: x / (1.0 + torch.abs(x)),
    "tanhshrink": lambda x, a: x - torch.tanh(x),
    "mish": lambda x, a: x * torch.tanh(F.softplus(x)),
    "selu": lambda x, a: F.selu(x),
    "celu": lambda x, a: F.celu(x, a.get("alpha", 1.0)),
    "logsigmoid": lambda x, a: F.logsigmoid(x),
    "neg": lambda x, a: -x,
    "threshold": lambda x, a: torch.where(x > a["threshold"], x, torch.full_like(x, a["value"])),
    # nn.LPPool2d's two element-wise steps around its average (torch's own order)
    "lp_pow": lambda x, a: x.pow(a["p"]),
    "lp_root": lambda x, a: (torch.sign(x) * torch.relu(torch.abs(x))).mul(a["taps"]).pow(1.0 / a["p"]),
    # torch's element-wise math (capture's ELEMENTWISE): a["fn"] names the function
    "elementwise": lambda x, a: ELEMENTWISE[a["fn"]](x, a),
    # nn.LocalResponseNorm's scale: (k + alpha * mean of squares)^-beta; a
    # mean of squares is never negative (clamped: an int8 grid may reach below 0)
    "lrn_scale": lambda x, a: torch.pow(a["k"] + a["alpha"] * torch.clamp(x, min=0.0), -a["beta"]),
}


def masked_softmax_float(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim with the positions where `mask` (a bool
    tensor broadcast to scores) is True as -infinity. A row with every
    position masked is all zeros (torch gives NaN there; ptec's int8
    kernel gives probability 0 everywhere, docs/kernels.md "masked
    softmax"), so the float graph and the int8 program agree on it."""
    mask = mask.to(torch.bool)
    y = torch.softmax(scores.masked_fill(mask, float("-inf")), -1)
    return torch.where(mask.expand_as(scores).all(-1, keepdim=True), torch.zeros_like(y), y)


def permutation(n: Node, rank: int) -> List[int]:
    """The full permutation of a permute node (a transpose stores its two dims)."""
    if "dims" in n.attrs:
        return [int(d) % rank for d in n.attrs["dims"]]
    d0, d1 = (int(d) % rank for d in n.attrs["transpose"])
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


def lstm_layer(x: torch.Tensor, weight_ih, weight_hh, bias):
    """One nn.LSTM layer from the zero state over x [B, T, I] (gates i, f,
    g, o; bias = b_ih + b_hh): (outputs [B, T, H], cell states [B, T, H])."""
    w_ih, w_hh = _t(weight_ih), _t(weight_hh)
    b = _t(bias) if bias is not None else torch.zeros(w_ih.shape[0])
    hidden = w_hh.shape[1]
    h = torch.zeros(x.shape[0], hidden)
    c = torch.zeros(x.shape[0], hidden)
    outs, cells = [], []
    for t in range(x.shape[1]):
        g = F.linear(x[:, t], w_ih, b) + F.linear(h, w_hh)
        i, f, cand, o = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(cand)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
        cells.append(c)
    return torch.stack(outs, 1), torch.stack(cells, 1)


# evaluate(keep_all=True) also gives each lstm node's cell states under this
# suffix, so that calibration observes the cell's range.
CELL_SUFFIX = "#cell"


def eval_node(n: Node, xs: Sequence[torch.Tensor]) -> torch.Tensor:
    a = n.attrs
    op = n.op
    if op == "lstm":
        y = lstm_layer(xs[0], a["weight_ih"], a["weight_hh"], a.get("bias"))[0]
    elif op == "conv2d":
        y = F.conv2d(xs[0], _t(a["weight"]), _t(a.get("bias")), a["stride"], a["padding"],
                     a["dilation"], a["groups"])
    elif op == "conv_transpose2d":
        y = F.conv_transpose2d(xs[0], _t(a["weight"]), _t(a.get("bias")), a["stride"],
                               a["padding"], a["output_padding"], a["groups"], a["dilation"])
    elif op == "linear":
        y = F.linear(xs[0], _t(a["weight"]), _t(a.get("bias")))
    elif op == "batch_norm":
        y = F.batch_norm(xs[0], _t(a["mean"]), _t(a["var"]), _t(a.get("gamma")),
                         _t(a.get("beta")), False, 0.0, a["eps"])
    elif op == "argmax":
        # the index as float32: the graph's values are float (capture_indices)
        y = (torch.argmin if a["smallest"] else torch.argmax)(xs[0], a["dim"], a["keepdim"]).float()
    elif op == "embedding":
        # the table a constant (attrs weight) or a value of the program (a second input)
        ids = xs[0].long()
        if a.get("fails_past_table"):
            # a run-time check (capture_selection_positional.whole_groups_or_fail): the
            # program fails there; calibration, which sees such inputs too, reads the last row
            ids = ids.clamp(0, len(a["weight"]) - 1)
        y = F.embedding(ids, xs[1] if len(xs) == 2 else _t(a["weight"]))
    elif op in ("sort", "sort_indices"):
        from .capture_sort import eval_order
        y = eval_order(op, a, xs[0])
    elif op in ("window_max", "window_argmax"):
        from .pool_indices import eval_window     # a max pool's listed windows (pool_indices)
        y = eval_window(xs[0], a["windows"], a["out_shape"], op == "window_argmax")
    elif op == "max_unpool":
        from .pool_indices import eval_unpool
        y = eval_unpool(xs[0], xs[1], a["out_shape"])
    elif op in ("random_dropout", "random_fractional_pick"):
        from .random_layers import eval_random
        y = eval_random(n, xs[0])
    elif op == "flat_index":
        # several index tensors as one position in their dims' block (capture_tensor_index), float as argmax's
        from .capture_tensor_index import eval_flat_index
        y = eval_flat_index(xs, a["sizes"])
    elif op == "bag_positions":
        # nn.EmbeddingBag's bags from offsets given at run time (embedding_bag), float as argmax's
        from .embedding_bag import eval_bag_positions
        y = eval_bag_positions(xs[0], a["length"], a["include_last"])
    elif op == "gather":
        # the index computed in the program (argmax's), carried as float
        y = torch.gather(xs[0], a["dim"], xs[1].long())
    elif op == "index_to_float":
        y = xs[0].float()         # an int64 / narrow input's values (an index carried as float32 stays)
    elif op == "compare":
        # bool values stay torch.bool here (capture_bool): the float model's own answer
        y = getattr(torch, a["kind"])(xs[0], a["scalar"] if "scalar" in a else xs[1])
    elif op == "logical":
        y = (torch.logical_not(xs[0]) if a["kind"] == "not"
             else getattr(torch, "logical_" + a["kind"])(xs[0], xs[1]))
    elif op == "where":
        y = torch.where(xs[0].to(torch.bool), xs[1], xs[2])
    elif op == "masked_select":
        # variable length: the node's shape is its bound (infer_shapes)
        y = xs[0][(slice(None),) * int(a.get("at", 0)) + (xs[1].to(torch.bool),)] if a.get("rows") \
            else torch.masked_select(xs[0], xs[1].to(torch.bool))
        if a.get("row"):
            # x[m].unsqueeze(0), x[m][None, None] as one node (capture_selection_row_output; row the ones' count)
            y = y.reshape([1] * int(a["row"]) + list(y.shape))
    elif op == "bool_to":
        y = xs[0].to(getattr(torch, a["dtype"]))
    elif op == "to_index":
        # x.long() / x.int(): truncation toward zero, carried as float32 like argmax's index
        y = torch.trunc(xs[0])
    elif op == "int_math":
        # integer arithmetic on index values (capture_int_math), carried as float32 like argmax's index
        from .capture_int_math import eval_int_math
        y = eval_int_math(a, xs)
    elif op == "histc":
        # torch.histc of every element (aten::histc.out: capture_fp32_histc, capture_elementwise_math)
        y = torch.histc(xs[0].float(), int(a["bins"]), float(a["min"]), float(a["max"]))
    elif op == "nms":
        # torchvision's nms: the 0/1 keep flag per sorted position (capture_nms: ptec::nms.out)
        from .capture_nms import eval_nms
        y = eval_nms(a, xs)
    elif op == "batched_nms":
        # torchvision's batched_nms past 1,000 boxes: its indices, then -1 (capture_nms: ptec::batched_nms.out)
        from .capture_nms import eval_batched_nms
        y = eval_batched_nms(a, xs)
    elif op == "view_dtype":
        # x.view(dtype): x's bytes as another dtype (capture_dtype_view: ptec::view_dtype.out), an int result
        # carried as float32 like every index value
        from .capture_dtype_view import eval_view_dtype
        y = eval_view_dtype(a, xs[0])
    elif op == "svdvals":
        # the singular values of matrices [B, m, n], largest first (capture_matrix_functions:
        # ptec::linalg_svdvals.out)
        y = torch.linalg.svdvals(xs[0])
    elif op == "eigvalsh":
        # the eigenvalues of symmetric [B, n, n], ascending, one triangle read (ptec::linalg_eigvalsh.out)
        y = torch.linalg.eigvalsh(xs[0], UPLO="U" if a["upper"] else "L")
    elif op == "linalg_det":
        # det (mode 0), slogdet's sign (1) and logabsdet (2), logdet (3) of [B, n, n] (ptec::linalg_det.out)
        mode = int(a["mode"])
        y = (torch.linalg.det(xs[0]) if mode == 0 else torch.logdet(xs[0]) if mode == 3
             else torch.linalg.slogdet(xs[0])[mode - 1])
    elif op == "linalg_eigh_vectors":
        # eigh's eigenvectors of symmetric [B, n, n] (ptec::linalg_eigh_vectors.out), each column's first
        # largest-magnitude component made positive as the kernel's
        v = torch.linalg.eigh(xs[0], UPLO="U" if a["upper"] else "L")[1]
        top = v.abs().argmax(dim=-2, keepdim=True)
        y = v * torch.where(v.gather(-2, top) < 0, -1.0, 1.0).to(v.dtype)
    elif op == "linalg_svd":
        # U (which 0), Vh (1) or pinv (2) of [B, m, n] (ptec::linalg_svd.out): torch's singular vectors with the
        # kernel's signs (each u_j's first largest-magnitude component positive, v_j flipped with it)
        from .reference.linalg import svd_signs
        if a["which"] == 2:
            y = torch.linalg.pinv(xs[0], rtol=float(a["rtol"]))
        else:
            u, _, vh = torch.linalg.svd(xs[0], full_matrices=bool(a["full_matrices"]))
            u, vh = svd_signs(u, vh)
            y = u if a["which"] == 0 else vh
    elif op == "linalg_eigvals":
        # the eigenvalues of general [B, n, n] as [B, n, 2] (real, imag) in ptec's order: real part ascending,
        # then imaginary part descending (ptec::linalg_eigvals.out)
        y = torch.view_as_real(torch.linalg.eigvals(xs[0])).to(xs[0].dtype)
        y = y.gather(-2, y[..., 1].sort(dim=-1, descending=True, stable=True)[1][..., None].expand(y.shape))
        y = y.gather(-2, y[..., 0].sort(dim=-1, stable=True)[1][..., None].expand(y.shape))
    elif op == "linalg_qr" and a["which"] in (2, 3):
        # torch.geqrf's a (which 2: R and the reflectors below it) or tau (3) of [B, m, n] (ptec::linalg_qr.out)
        y = torch.geqrf(xs[0])[int(a["which"]) - 2]
    elif op == "linalg_eig_vectors":
        # eig's eigenvectors of general [B, n, n] as [B, n, n, 2] (ptec::linalg_eig_vectors.out): torch's, in
        # ptec's order of the values, each column times conj(v_k) / |v_k| (v_k its first largest-modulus component)
        w, v = torch.linalg.eig(xs[0])
        y = torch.view_as_real(w)
        order = y[..., 1].sort(dim=-1, descending=True, stable=True)[1]
        order = order.gather(-1, y[..., 0].gather(-1, order).sort(dim=-1, stable=True)[1])
        v = v.gather(-1, order[..., None, :].expand(v.shape))
        top = v.gather(-2, v.abs().argmax(dim=-2, keepdim=True))
        v = v * (top.conj() / top.abs())
        y = torch.view_as_real(v).to(xs[0].dtype)
    elif op == "linalg_qr":
        # Q (which 0) or R (1) of [B, m, n] (ptec::linalg_qr.out: Householder, LAPACK's sign convention)
        q, r = torch.linalg.qr(xs[0], mode="complete" if a["complete"] else "reduced")
        y = q if a["which"] == 0 else r
    elif op == "linalg_lu":
        # the packed LU (which 0), P (2), L (3) or U (4) of [B, m, n] (ptec::linalg_lu.out: partial pivoting,
        # getrf's rule); a singular matrix factors as lu_factor_ex's
        y = torch.linalg.lu_factor_ex(xs[0])[0] if a["which"] == 0 else torch.linalg.lu(xs[0])[int(a["which"]) - 2]
    elif op == "linalg_lu_pivots":
        # the pivots [B, k] of the same LU (int32, 1-based), carried as float32 like every index
        y = torch.linalg.lu_factor_ex(xs[0])[1].float()
    elif op == "linalg_ldl":
        # LD of symmetric [B, n, n], its lower triangle read (ptec::linalg_ldl_factor.out: Bunch-Kaufman, sytrf's rule)
        y = torch.linalg.ldl_factor_ex(xs[0])[0]
    elif op == "linalg_ldl_int":
        # the pivots [B, n] (which 1, int32, 1-based, negative for a 2x2 block) or info [B] (which 2) of the same
        # factorisation, carried as float32 like every index
        y = torch.linalg.ldl_factor_ex(xs[0])[int(a["which"])].float()
    elif op == "linalg_cholesky":
        # L (or U) of [B, n, n], one triangle read (ptec::linalg_cholesky.out); NaN where not positive-definite
        ex = getattr(torch.linalg, "cholesky_ex", None)
        y = ex(xs[0], upper=bool(a["upper"]))[0] if ex is not None else torch.linalg.cholesky(xs[0], upper=a["upper"])
    elif op == "linalg_cholesky_info":
        # cholesky_ex's info [B] of [B, n, n] (int32: 0, or the order of the first leading minor not positive-
        # definite; ptec::linalg_cholesky_info.out), carried as float32 like every index
        y = torch.linalg.cholesky_ex(xs[0], upper=bool(a["upper"]))[1].float()
    elif op == "linalg_triangular_solve":
        # op(T)^-1 B of T's upper or lower triangle [B, n, n], B [B or 1, n, k] (ptec::linalg_triangular_solve.out)
        t = xs[0].triu() if a["upper"] else xs[0].tril()
        if a["unitriangular"]:
            t = t - torch.diag_embed(t.diagonal(dim1=-2, dim2=-1)) + torch.eye(t.shape[-1], dtype=t.dtype)
        if a["transpose"]:
            t = t.mT
        y = torch.linalg.solve_triangular(t, xs[1].expand(t.shape[:-2] + xs[1].shape[-2:]),
                                          upper=bool(a["upper"]) != bool(a["transpose"]))
    elif op == "linalg_solve":
        # A^-1 B of A [B, n, n], B [B or 1, n, k] (ptec::linalg_solve.out); a singular A gives inf / NaN
        # as the kernel, where torch.linalg.solve raises
        solve_ex = getattr(torch.linalg, "solve_ex", None)
        y = solve_ex(xs[0], xs[1])[0] if solve_ex is not None else torch.linalg.solve(xs[0], xs[1])
    elif op == "binary_math":
        y = BINARY_MATH[a["fn"]](xs[0], xs[1])
    elif op in ("frexp_mantissa", "frexp_exponent"):
        # torch.frexp's mantissa, or its int32 exponent carried as float32 like an index (capture_float_bits)
        from .capture_float_bits import eval_frexp
        y = eval_frexp(op, xs[0])
    elif op == "slice":
        y = xs[0].narrow(a["dim"], a["start"], a["end"] - a["start"])
    elif op == "pixel_shuffle":
        y = (F.pixel_unshuffle if a["unshuffle"] else F.pixel_shuffle)(xs[0], a["factor"])
    elif op == "upsample_nearest":
        y = F.interpolate(xs[0], size=a["size"], mode="nearest")
    elif op == "upsample_bilinear":
        y = F.interpolate(xs[0], size=a["size"], mode="bilinear", align_corners=a["align_corners"])
    elif op == "roi_align":
        # torchvision's own op (capture_torchvision: the model imported it), as ptec::roi_align.out computes it
        from .capture_torchvision import roi_align_kernel
        y = roi_align_kernel(xs[0], xs[1], a["spatial_scale"], a["pooled_height"], a["pooled_width"],
                             a["sampling_ratio"], a["aligned"], a["position_sensitive"])
    elif op == "grid_sample":
        y = F.grid_sample(xs[0], xs[1], ("bilinear", "nearest", "bicubic")[a["mode"]],
                          ("zeros", "border", "reflection")[a["padding"]], a["align_corners"])
    elif op == "upsample_bicubic":
        y = F.interpolate(xs[0], size=a["size"], mode="bicubic", align_corners=a["align_corners"])
    elif op == "group_norm":
        y = F.group_norm(xs[0], a["groups"], _t(a.get("weight")), _t(a.get("bias")), a["eps"])
    elif op == "svdf":
        from .nn.svdf import svdf
        y = svdf(xs[0], _t(a["weights_feature"]), _t(a["weights_time"]), _t(a.get("bias")), a["rank"])
    elif op == "layer_norm":
        y = F.layer_norm(xs[0], a["normalized_shape"], _t(a.get("weight")), _t(a.get("bias")), a["eps"])
    elif op == "clamp":
        y = torch.clamp(xs[0], min=a["lo"], max=a["hi"])
    elif op == "add":
        y = xs[0] + xs[1]
    elif op == "mul":
        y = xs[0] * xs[1]
        if a.get("select"):       # a where's 0/1 factor (capture_rewrites._select_nodes): 0 drops a NaN / inf
            y = torch.where(xs[1] == 0, torch.zeros_like(y), y)
    elif op == "sub":
        y = xs[0] - xs[1]
    elif op == "div":
        y = xs[0] / xs[1]
    elif op == "matmul" and a.get("pick") and xs[0].dim() == 3 and xs[1].dim() == 3 and xs[0].shape[1] == 1 \
            and xs[0].shape[0] == xs[1].shape[0] and xs[0].shape[2] == xs[1].shape[1]:
        # [rows, 1, n] times a one-hot [rows, n, K] (capture_rewrites.gather_constant): the picked elements,
        # as torch.gather gives them (0 * -inf in the product would be NaN)
        y = torch.gather(xs[0], -1, xs[1].argmax(-2).unsqueeze(-2))
    elif op == "matmul":
        y = torch.matmul(xs[0], xs[1])
    elif op == "bmm":
        # [B, n, k] times [B, k, m] (aten::bmm.out, fp32; no broadcasting)
        y = torch.bmm(xs[0], xs[1])
    elif op == "minimum":
        y = torch.minimum(xs[0], xs[1])
    elif op == "maximum":
        y = torch.maximum(xs[0], xs[1])
    elif op == "permute":
        y = xs[0].permute(permutation(n, xs[0].dim()))
    elif op == "channel_shuffle":
        nb, c, h, w = xs[0].shape
        g = int(a["groups"])
        y = xs[0].reshape(nb, g, c // g, h, w).transpose(1, 2).reshape(nb, c, h, w)
    elif op == "pad":
        mode = a.get("mode", "constant")
        y = (F.pad(xs[0], list(a["pad"]), mode, a.get("value", 0.0)) if mode == "constant"
             else F.pad(xs[0], list(a["pad"]), mode))
    elif op == "avg_pool2d":
        y = F.avg_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], a["ceil_mode"],
                         a["count_include_pad"], a.get("divisor_override"))
    elif op == "adaptive_avg_pool2d":
        y = F.adaptive_avg_pool2d(xs[0], a["output_size"])
    elif op == "max_pool2d":
        y = F.max_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], a["dilation"],
                         a["ceil_mode"])
    elif op == "reshape":
        if "shape" in a:
            # batch may differ; a 0-d result (x.sum(), x.var()) has no batch
            y = xs[0].reshape([-1] + list(a["shape"][1:]) if a["shape"] else [])
        elif "flatten" in a:
            y = torch.flatten(xs[0], *a["flatten"])
        elif "unsqueeze" in a:
            y = xs[0].unsqueeze(a["unsqueeze"])
        elif "squeeze" in a:
            y = xs[0].squeeze() if a["squeeze"] is None else xs[0].squeeze(a["squeeze"])
        else:
            y = xs[0].reshape(a["target_shape"])
    elif op == "softmax":
        y = torch.softmax(xs[0], a["dim"])
    elif op == "log_softmax":
        y = torch.log_softmax(xs[0], a["dim"])
    elif op == "masked_softmax":
        y = masked_softmax_float(xs[0], torch.as_tensor(np.asarray(a["mask"], bool)))
    elif op in UNARY:
        y = UNARY[op](xs[0], a)
        if a.get("torch_nan"):
            y = _torch_nan(y, xs[0], a)
    elif op == "mean":
        y = xs[0].mean(dim=a["dim"], keepdim=a["keepdim"])
    elif op == "cat":
        y = torch.cat(list(xs), dim=a["dim"])
    elif op == "identity":
        y = xs[0]
    elif op == "constant":
        y = _t(a["value"])
    elif op == "state":             # one run after load (or reset): the initial value
        from .capture_integer_states import eval_state
        y = eval_state(a)           # an integer / bool buffer's in its dtype (capture_integer_states)
    elif op == "state_write":       # state <- value at the end of the run; its value is value's
        y = xs[1]
    elif op == "unsupported":
        y = a["fn"](*xs)
    else:
        raise ValueError(f"cannot evaluate op {op}")
    return _apply_act(y, a.get("act"))


@torch.no_grad()
def input_dtype(n: Node) -> torch.dtype:
    """An input's torch dtype: int64 for token ids (capture_indices), else float32."""
    from .capture_input_dtypes import graph_dtype
    return graph_dtype(n.attrs)


def _torch_nan(y: torch.Tensor, x: torch.Tensor, a) -> torch.Tensor:
    """A user's own call of an element-wise function (capture_calls marks it
    attrs["torch_nan"]): NaN where torch gives NaN outside the function's
    domain (sqrt / log of a negative, a fractional power of one), which
    ELEMENTWISE, made for the LUTs, holds at the domain's edge. The graph's
    float evaluation (calibration) then sees the NaN torch gives, and
    lowering refuses what an int8 value cannot hold instead of computing
    a number torch never gave."""
    if a["fn"] != "pow" and not callable(getattr(torch, a["fn"], None)):
        return y
    t = torch.pow(x, a["exponent"]) if a["fn"] == "pow" else getattr(torch, a["fn"])(x)
    return torch.where(torch.isnan(t) & ~torch.isnan(x), t, y)


def evaluate(g: Graph, inputs: Sequence[torch.Tensor], keep_all: bool = False):
    """Run the graph; returns the list of outputs, or (outputs, {name: tensor})."""
    env: Dict[str, torch.Tensor] = {}
    for name, x in zip(g.inputs, inputs):
        env[name] = torch.as_tensor(x, dtype=input_dtype(g.node(name)))
    for n in g.nodes:
        if n.op == "input":
            continue
        if n.op == "lstm" and keep_all:
            a = n.attrs
            env[n.name], env[n.name + CELL_SUFFIX] = lstm_layer(env[n.inputs[0]], a["weight_ih"], a["weight_hh"],
                                                                a.get("bias"))
            continue
        env[n.name] = eval_node(n, [env[i] for i in n.inputs])
    outs = [env[o] for o in g.outputs]
    return (outs, env) if keep_all else outs


def origin(n: Node) -> str:
    """The node as the user wrote it: its PyTorch module path and class
    (`features.3 (nn.GroupNorm)`), or the traced call (`topk (torch.topk)`);
    capture records it in attrs["source"]. Errors and reports name nodes
    with this, never with an internal or made-up operator name."""
    return n.attrs.get("source") or n.name


def written(n: Node) -> str:
    """origin, but an operator call (x[0], a * b, which fx names getitem_1,
    mul_2) as the user wrote it: the indexing or operator and the model's
    source line, when capture recorded them."""
    return n.written or origin(n)


class UnsupportedOperator(ValueError):
    """A node ptec cannot represent: its value is not one tensor."""


def infer_shapes(g: Graph, example_inputs: Sequence[torch.Tensor]) -> None:
    _, env = evaluate(g, example_inputs, keep_all=True)
    for n in g.nodes:
        value = env[n.name]
        if not isinstance(value, torch.Tensor):
            gives = (f"{len(value)} values" if isinstance(value, (tuple, list))
                     else type(value).__name__)
            why = n.attrs.get("why")
            raise UnsupportedOperator(
                f"operator not supported: {origin(n)} returns {gives}, not one "
                + (f"tensor: {why}" if why else "tensor, and ptec has no kernel for it (compute it outside the "
                                              "model, or replace it)"))
        n.shape = list(value.shape)
        if n.op == "masked_select":
            # planned at the most it can select; the real length is the run's
            from .capture_masked_select import bound
            at = int(n.attrs.get("at", 0))     # x[:, :, m]: the mask after `at` whole dims (capture_unique_slices)
            x_shape = list(env[n.inputs[0]].shape)
            n.shape = [1] * int(n.attrs.get("row", 0)) + x_shape[:at] + bound(
                x_shape[at:], env[n.inputs[1]].shape, bool(n.attrs.get("rows")))


def op_counts(g: Graph) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for n in g.nodes:
        out[n.op] = out.get(n.op, 0) + 1
    return out


Fn = Callable[..., torch.Tensor]
