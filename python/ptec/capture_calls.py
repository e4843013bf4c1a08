"""A forward's calls that capture turns into ops ptec already lowers
(issue 15): torch's element-wise math as one LUT op, sums as means times
the count, amax/amin as max pools on a one-channel view, the 2-norm and
F.normalize, copies (stack, roll, flip, expand, repeat, index_select) as
slices and joins, cumsum as a triangular linear, and functionals that are a
module's forward (F.linear, F.conv2d, F.layer_norm, ...) rebuilt as the
module, so capture lowers them as the module. Each returns None for a call
it does not cover, which then stays an unsupported node, refused by name."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .capture_tensor_index import select_nodes
from .ir import ELEMENTWISE, Node, UnsupportedOperator


def refuse_call(fn: torch.fx.Node, why: str):
    """Raises UnsupportedOperator naming call fn as the trace records it
    (`scatter_ (Tensor.scatter_)`) and why ptec does not run it."""
    from .capture import _source            # capture imports this module
    raise UnsupportedOperator(f"operator not supported: {_source(fn, {})}: {why}")


def call_is(fn: torch.fx.Node, targets) -> bool:
    """fn calls one of targets (functions or method names)."""
    try:
        return fn.target in targets
    except TypeError:         # an unhashable target is none of these
        return False


def torch_functions(*dotted) -> tuple:
    """torch's functions of these dotted names ("linalg.vecdot") that this
    torch has (torch 1.13 lacks some of 2.x's)."""
    found = []
    for name in dotted:
        obj = torch
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            found.append(obj)
    return tuple(found)


def _meta_shape(fn: torch.fx.Node):
    meta = fn.meta.get("tensor_meta")
    return [int(s) for s in meta.shape] if meta is not None and hasattr(meta, "shape") else None


def _scalar_arg(fn, i, key, default=None):
    if len(fn.args) > i:
        return fn.args[i]
    return fn.kwargs.get(key, default)


def _elementwise_name(t) -> Optional[str]:
    """The ELEMENTWISE name of call target t (torch.exp, Tensor.exp's "exp",
    torch.special.expit's kin are not covered), or None."""
    if isinstance(t, str):
        return t if t in ELEMENTWISE and t != "pow" else None
    if t is operator.abs:
        return "abs"
    name = getattr(t, "__name__", None)
    if name in ELEMENTWISE and name != "pow" and getattr(torch, name, None) is t:
        return name
    return None


def _elementwise_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """torch's element-wise math of one tensor (x.exp(), torch.sqrt(x), abs(x),
    x ** c, torch.pow(x, c)): one `elementwise` node, a 256-entry LUT on
    int8 like the activations. None for anything else (a tensor exponent,
    c ** x, an out= argument)."""
    tensors = [a for a in fn.args if isinstance(a, torch.fx.Node)]
    number = (int, float)
    if (fn.target in (operator.pow, torch.pow, "pow") and len(fn.args) == 2 and not fn.kwargs
            and isinstance(fn.args[0], number) and not isinstance(fn.args[0], bool) and fn.args[1] is not None
            and isinstance(fn.args[1], torch.fx.Node)):
        return Node(fn.name, "elementwise", ins[:1], dict(fn="rpow", base=float(fn.args[0])))   # c ** x
    if len(tensors) != 1 or fn.args[0] is not tensors[0] or set(fn.kwargs) - {"exponent", "decimals"}:
        return None
    by_number = {operator.floordiv: "floordiv", torch.floor_divide: "floordiv", "floor_divide": "floordiv",
                 operator.mod: "remainder", torch.remainder: "remainder", "remainder": "remainder",
                 torch.fmod: "fmod", "fmod": "fmod"}
    try:
        kind = by_number.get(fn.target)
    except TypeError:
        kind = None
    if kind is not None and len(fn.args) == 2 and not fn.kwargs:
        c = fn.args[1]
        if isinstance(c, number) and not isinstance(c, bool) and c != 0:
            return Node(fn.name, "elementwise", ins[:1], dict(fn=kind, divisor=float(c)))
        return None
    if fn.target in (torch.round, "round") and len(fn.args) == 1 and set(fn.kwargs) == {"decimals"} \
            and isinstance(fn.kwargs["decimals"], int):
        return Node(fn.name, "elementwise", ins[:1], dict(fn="round", decimals=int(fn.kwargs["decimals"])))
    if "decimals" in fn.kwargs:
        return None
    name = _elementwise_name(fn.target)
    if name is not None and len(fn.args) == 1 and not fn.kwargs:
        return Node(fn.name, "elementwise", ins[:1], dict(fn=name, torch_nan=True))
    if fn.target in (operator.pow, torch.pow, "pow"):
        exponent = _scalar_arg(fn, 1, "exponent")
        if isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
            return Node(fn.name, "elementwise", ins[:1], dict(fn="pow", exponent=float(exponent), torch_nan=True))
    return None


def _sum_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """x.sum(dim) / torch.sum(x, dim, keepdim): the mean over the same dims
    (an int8 average pool on a view, where the mean has one) times the
    number of values summed (a LUT). None without dims or with a dtype."""
    if fn.target not in ("sum", torch.sum) or set(fn.kwargs) - {"dim", "keepdim"} or len(fn.args) > 3:
        return None
    dim, shape = _scalar_arg(fn, 1, "dim"), _meta_shape(fn.args[0])
    if dim is None or shape is None or not isinstance(dim, (int, tuple, list)):
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    count = int(np.prod([shape[int(d)] for d in dims]))
    name = fn.name
    return [Node(f"{name}_mean", "mean", ins[:1], dict(dim=dims, keepdim=bool(_scalar_arg(fn, 2, "keepdim", False)))),
            Node(f"{name}_count", "constant", [], dict(value=np.array(count, np.float32))),
            Node(name, "mul", [f"{name}_mean", f"{name}_count"])]


def _ints(v):
    """v as a list of ints (an int, or a sequence of ints), else None."""
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    if isinstance(v, (tuple, list)) and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        return list(v)
    return None


def _copying_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """Calls that only move or copy values, as slices and joins of the int8
    bytes (`slice`, `cat`, a reshape), which keep the input's grid:
    torch.stack (unsqueeze each, cat), torch.roll (two slices swapped),
    torch.flip (one-wide slices in reverse order, one copy per index of the
    dim), Tensor.expand and Tensor.repeat (copies joined along each dim that
    grows). None for anything else (a roll without dims, a tensor argument)."""
    t, name = fn.target, fn.name
    if t is torch.stack:
        seq, dim = fn.args[0], _scalar_arg(fn, 1, "dim", 0)
        if not isinstance(dim, int) or not all(isinstance(a, torch.fx.Node) for a in seq):
            return None
        parts = [Node(f"{name}_part{i}", "reshape", [a.name], dict(unsqueeze=dim)) for i, a in enumerate(seq)]
        return parts + [Node(name, "cat", [p.name for p in parts], dict(dim=dim))]
    shape = _meta_shape(fn.args[0]) if fn.args and isinstance(fn.args[0], torch.fx.Node) else None
    if shape is None:
        return None
    rank = len(shape)
    nodes: List[Node] = []
    cur = ins[0]

    def step(op, inputs, **attrs):
        nodes.append(Node(f"{name}__{len(nodes)}", op, inputs, attrs))    # "__": fx names a second call x_1
        return nodes[-1].name

    def copies(src, dim, count):
        return step("cat", [src] * count, dim=dim) if count > 1 else src

    if t in (torch.roll, "roll"):
        shifts, dims = _ints(_scalar_arg(fn, 1, "shifts")), _ints(_scalar_arg(fn, 2, "dims"))
        if shifts is None or dims is None or len(shifts) != len(dims):
            return None
        for shift, dim in zip(shifts, dims):
            dim %= rank
            size = shape[dim]
            cut = size - shift % size
            if cut % size:
                tail = step("slice", [cur], dim=dim, start=cut, end=size)
                head = step("slice", [cur], dim=dim, start=0, end=cut)
                cur = step("cat", [tail, head], dim=dim)
    elif t in (torch.flip, "flip"):
        # Tensor.flip also takes the dims as separate arguments: x.flip(1, 2)
        dims = _ints(list(fn.args[1:]) if len(fn.args) > 2 else _scalar_arg(fn, 1, "dims"))
        if dims is None:
            return None
        for dim in dims:
            dim %= rank
            if shape[dim] > 1:
                cur = step("cat", [step("slice", [cur], dim=dim, start=i, end=i + 1)
                                   for i in reversed(range(shape[dim]))], dim=dim)
    elif t in ("expand", "repeat"):
        sizes = fn.args[1:]
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = sizes[0]
        sizes = _ints(list(sizes))
        if sizes is None or fn.kwargs or len(sizes) < rank:
            return None
        new = len(sizes) - rank
        for _ in range(new):
            cur = step("reshape", [cur], unsqueeze=0)
        full = [1] * new + list(shape)
        for dim, want in enumerate(sizes):
            if t == "repeat":
                cur = copies(cur, dim, want)
            elif want != -1 and want != full[dim]:
                if full[dim] != 1:
                    return None
                cur = copies(cur, dim, want)
    else:
        return None
    if not nodes:
        return [Node(name, "identity", [cur])]
    nodes[-1].name = name
    return nodes


def _amax_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """x.amax(dims) / torch.amax, x.amin / torch.amin: _reduce_max_nodes."""
    if fn.target not in ("amax", torch.amax, "amin", torch.amin) or set(fn.kwargs) - {"dim", "keepdim"}:
        return None
    shape, dims = _meta_shape(fn.args[0]), _ints(_scalar_arg(fn, 1, "dim"))
    keepdim = _scalar_arg(fn, 2, "keepdim", False)
    if shape is None or not dims or not isinstance(keepdim, bool):
        return None
    return _reduce_max_nodes(fn.name, ins[0], shape, dims, keepdim, fn.target in ("amin", torch.amin))


def _reduce_max_nodes(name: str, src: str, shape, dims, keepdim: bool, negate: bool) -> List[Node]:
    """The maximum (negate: the minimum, -max(-x)) over dims: per reduced
    dim d, the tensor viewed as [before, 1, size(d), after] (one channel, so
    the view has the bytes of the contiguous tensor) and a max pool of
    kernel [size(d), 1] over it; the maximum of int8 values is one of them,
    so the result keeps the input's grid."""
    nodes: List[Node] = []
    cur = src

    def step(op, inputs, **attrs):
        nodes.append(Node(f"{name}__{len(nodes)}", op, inputs, attrs))    # "__": fx names a second call x_1
        return nodes[-1].name
    if negate:
        cur = step("neg", [cur])
    now = list(shape)
    reduced = {d % len(shape) for d in dims}
    for d in sorted(reduced, reverse=True):
        before, after = int(np.prod(now[:d])), int(np.prod(now[d + 1:]))
        cur = step("reshape", [cur], target_shape=[before, 1, now[d], after])
        cur = step("max_pool2d", [cur], kernel=[now[d], 1], stride=[now[d], 1], padding=[0, 0], dilation=[1, 1],
                   ceil_mode=False)
        now[d] = 1
    cur = step("reshape", [cur], target_shape=now if keepdim else [s for i, s in enumerate(now) if i not in reduced])
    if negate:
        cur = step("neg", [cur])
    nodes[-1].name = name
    # marks the steps as one reduction: of a selection x[mask], whose length
    # varies per run, capture_selection_rows redoes them over x
    nodes[0].attrs["reduce_max"] = (sorted(reduced), keepdim, negate, [n.name for n in nodes])
    return nodes


def _norm_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """The 2-norm over dims (x.norm(dim=d), torch.norm(x, 2, d),
    torch.linalg.vector_norm(x, 2, d)): the square (a LUT), the sum over
    the dims (_sum_nodes: a mean times the count) and the square root (a
    LUT). Other p, no dims or a dtype: None."""
    names = {"norm": ("p", "dim", "keepdim"), torch.norm: ("p", "dim", "keepdim"),
             torch.linalg.vector_norm: ("ord", "dim", "keepdim")}
    keys = names.get(fn.target) if not isinstance(fn.target, str) or fn.target == "norm" else None
    # torch.norm's call is recorded with every argument, out and dtype None
    kwargs = {k: v for k, v in fn.kwargs.items() if not (k in ("out", "dtype") and v is None)}
    if keys is None or not isinstance(fn.args[0], torch.fx.Node) or set(kwargs) - set(keys):
        return None
    bound = dict(zip(keys, fn.args[1:]))
    bound.update(kwargs)
    p, dims, keepdim = bound.get(keys[0], 2), _ints(bound.get("dim")), bound.get("keepdim", False)
    shape = _meta_shape(fn.args[0])
    if p not in (2, 2.0, "fro") or not dims or not isinstance(keepdim, bool) or shape is None:
        return None
    name = fn.name
    count = int(np.prod([shape[d % len(shape)] for d in dims]))
    return [Node(f"{name}_square", "elementwise", ins[:1], dict(fn="square")),
            Node(f"{name}_mean", "mean", [f"{name}_square"], dict(dim=dims, keepdim=keepdim)),
            Node(f"{name}_count", "constant", [], dict(value=np.array(count, np.float32))),
            Node(f"{name}_sum", "mul", [f"{name}_mean", f"{name}_count"]),
            Node(name, "elementwise", [f"{name}_sum"], dict(fn="sqrt"))]


def _cumsum_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """torch.cumsum(x, dim) over the last dim: a linear layer whose weight
    is the lower triangle of ones (output i sums inputs 0..i), so int8 like
    any nn.Linear. Another dim or a dtype: None."""
    if fn.target not in (torch.cumsum, "cumsum") or set(fn.kwargs) - {"dim", "dtype"} \
            or fn.kwargs.get("dtype") is not None:
        return None
    shape, dim = _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "dim")
    if shape is None or not isinstance(dim, int) or dim % len(shape) != len(shape) - 1:
        return None
    n = shape[-1]
    return Node(fn.name, "linear", ins[:1], dict(weight=np.tril(np.ones((n, n), np.float32)), bias=None))


def _index_select_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """torch.index_select(x, dim, index) with a constant index: runs of
    consecutive indices as slices of the int8 bytes, joined along dim."""
    if fn.target not in (torch.index_select, "index_select") or fn.kwargs or len(fn.args) != 3:
        return None
    index, shape, dim = fn.args[2], _meta_shape(fn.args[0]), fn.args[1]
    const = by_name.get(index.name) if isinstance(index, torch.fx.Node) else None
    if const is None or const.op != "constant" or shape is None or not isinstance(dim, int):
        return None
    idx = [int(i) for i in np.asarray(const.attrs["value"]).reshape(-1)]
    dim %= len(shape)
    if not idx or any(not -shape[dim] <= i < shape[dim] for i in idx):
        return None
    return select_nodes(fn.name, ins[0], dim, [i % shape[dim] for i in idx])


def _normalize_nodes(fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """F.normalize(x, p=2, dim): x times 1 / max(||x||, eps) over dim. The
    norm as _norm_nodes (square, sum, sqrt), the clamp and reciprocal as one
    LUT, copied along dim to x's shape (a join of copies), so the product
    is an int8 mul of two tensors of one shape."""
    if fn.target is not F.normalize or len(fn.args) > 4 or fn.kwargs.get("out") is not None \
            or set(fn.kwargs) - {"p", "dim", "eps", "out"}:
        return None
    p, dim = _scalar_arg(fn, 1, "p", 2.0), _scalar_arg(fn, 2, "dim", 1)
    eps, shape = float(_scalar_arg(fn, 3, "eps", 1e-12)), _meta_shape(fn.args[0])
    if p not in (2, 2.0) or not isinstance(dim, int) or shape is None:
        return None
    name, d = fn.name, dim % len(shape)
    return [Node(f"{name}_square", "elementwise", ins[:1], dict(fn="square")),
            Node(f"{name}_mean", "mean", [f"{name}_square"], dict(dim=[d], keepdim=True)),
            Node(f"{name}_count", "constant", [], dict(value=np.array(shape[d], np.float32))),
            Node(f"{name}_sum", "mul", [f"{name}_mean", f"{name}_count"]),
            Node(f"{name}_inv", "elementwise", [f"{name}_sum"], dict(fn="inverse_norm", eps=eps)),
            Node(f"{name}_wide", "cat", [f"{name}_inv"] * shape[d], dict(dim=d)),
            Node(name, "mul", [ins[0], f"{name}_wide"])]


def _values_of(fn: torch.fx.Node):
    """x.max(dim) / torch.min(x, dim, keepdim): (dim, keepdim, negate) of a
    reduction whose values (element 0, .values) ptec computes and whose
    indices it does not; None for anything else."""
    if fn.target not in ("max", "min", torch.max, torch.min) or not isinstance(fn.args[0], torch.fx.Node):
        return None
    dim, keepdim = _scalar_arg(fn, 1, "dim"), _scalar_arg(fn, 2, "keepdim", False)
    if not isinstance(dim, int) or isinstance(dim, bool) or not isinstance(keepdim, bool) \
            or set(fn.kwargs) - {"dim", "keepdim"} or _meta_shape(fn.args[0]) is None:
        return None
    return dim, keepdim, fn.target in ("min", torch.min)


def _conv_module(cls, w: torch.Tensor, b, a) -> nn.Module:
    """nn.Conv1d/2d or nn.ConvTranspose1d/2d holding weight w and bias b
    (the functional's arguments a: stride, padding, dilation, groups)."""
    groups = int(a.get("groups", 1))
    transposed = cls in (nn.ConvTranspose1d, nn.ConvTranspose2d)
    cin, cout = (w.shape[0], w.shape[1] * groups) if transposed else (w.shape[1] * groups, w.shape[0])
    kw = dict(stride=a.get("stride", 1), padding=a.get("padding", 0), dilation=a.get("dilation", 1),
              groups=groups, bias=b is not None)
    if transposed:
        kw["output_padding"] = a.get("output_padding", 0)
    m = cls(int(cin), int(cout), tuple(w.shape[2:]), **kw)
    with torch.no_grad():
        m.weight.copy_(w)
        if b is not None:
            m.bias.copy_(b)
    return m


def _norm_affine(m: nn.Module, weight, bias) -> nn.Module:
    with torch.no_grad():
        if weight is not None:
            m.weight.copy_(weight)
        if bias is not None:
            m.bias.copy_(bias)
    return m


def _batch_norm(a) -> Optional[nn.Module]:
    if a.get("training") or a.get("running_mean") is None:
        return None
    mean = a["running_mean"]
    m = nn.BatchNorm2d(int(mean.numel()), eps=float(a.get("eps", 1e-5)), affine=True)
    with torch.no_grad():
        m.running_mean.copy_(mean)
        m.running_var.copy_(a["running_var"])
    return _norm_affine(m, a.get("weight"), a.get("bias")).eval()


def _instance_norm(a, channels: int) -> Optional[nn.Module]:
    if not a.get("use_input_stats", True):
        # normalized by the given running statistics: batch_norm's eval (torch requires both)
        if a.get("running_mean") is None or a.get("running_var") is None:
            return None
        return _batch_norm({k: v for k, v in a.items() if k != "training"})
    if a.get("running_mean") is not None:
        return None                     # torch updates the running statistics in place
    m = nn.InstanceNorm2d(channels, eps=float(a.get("eps", 1e-5)),
                          affine=a.get("weight") is not None or a.get("bias") is not None)
    if m.affine:
        _norm_affine(m, a.get("weight") if a.get("weight") is not None else torch.ones(channels),
                     a.get("bias") if a.get("bias") is not None else torch.zeros(channels))
    return m


def _fractional(cls, a) -> Optional[nn.Module]:
    if a.get("return_indices"):
        return None
    samples = a.get("_random_samples")
    return cls(a["kernel_size"], a.get("output_size"), a.get("output_ratio"),
               _random_samples=None if samples is None else samples.detach().float())


def _layer_norm(a) -> nn.Module:
    shape = a["normalized_shape"]
    # a bias without a weight (F.layer_norm(x, shape, None, b)): the affine form with weight 1 (exact)
    affine = a.get("weight") is not None or a.get("bias") is not None
    m = nn.LayerNorm(shape, eps=float(a.get("eps", 1e-5)), elementwise_affine=affine)
    return _norm_affine(m, a.get("weight"), a.get("bias")) if affine else m


def _group_norm(a, channels: int) -> Optional[nn.Module]:
    affine = a.get("weight") is not None or a.get("bias") is not None     # a bias alone: weight 1
    m = nn.GroupNorm(int(a["num_groups"]), channels, eps=float(a.get("eps", 1e-5)), affine=affine)
    return _norm_affine(m, a.get("weight"), a.get("bias")) if affine else m


def _prelu(a) -> nn.Module:
    w = a["weight"].reshape(-1)
    m = nn.PReLU(int(w.numel()))
    with torch.no_grad():
        m.weight.copy_(w)
    return m


def _pool_args(a, *names):
    return {k: a[k] for k in names if k in a and a[k] is not None}


# Functionals that are a module's forward: (their parameter names, the module
# from the bound arguments and the input's traced shape, or None where the
# call is not the module's eval forward). Tensor arguments must be constants
# (parameters or buffers); capture then lowers the call as the module.
FUNCTIONAL_MODULES = {
    F.embedding: (("input", "weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"),
                  lambda a, sh: nn.Embedding.from_pretrained(a["weight"], padding_idx=a.get("padding_idx"),
                                                             max_norm=a.get("max_norm"),
                                                             norm_type=a.get("norm_type", 2.0))),
    # offsets and per-sample weights are read from the call (capture._bag_nodes)
    F.embedding_bag: (("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                       "sparse", "per_sample_weights", "include_last_offset", "padding_idx"),
                      lambda a, sh: nn.EmbeddingBag.from_pretrained(
                          a["weight"], mode=a.get("mode", "mean"), padding_idx=a.get("padding_idx"),
                          max_norm=a.get("max_norm"), norm_type=a.get("norm_type", 2.0),
                          include_last_offset=bool(a.get("include_last_offset")))),
    F.glu: (("input", "dim"), lambda a, sh: nn.GLU(a.get("dim", -1))),
    F.softmin: (("input", "dim", "_stacklevel", "dtype"),
                lambda a, sh: nn.Softmin(a.get("dim")) if a.get("dtype") is None else None),
    F.rrelu: (("input", "lower", "upper", "training"),
              lambda a, sh: None if a.get("training") else nn.RReLU(a.get("lower", 1.0 / 8), a.get("upper", 1.0 / 3))),
    F.threshold: (("input", "threshold", "value"), lambda a, sh: nn.Threshold(a["threshold"], a["value"])),
    F.max_pool1d: (("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"),
                   lambda a, sh: None if a.get("return_indices") else nn.MaxPool1d(**_pool_args(
                       a, "kernel_size", "stride", "padding", "dilation", "ceil_mode"))),
    F.avg_pool1d: (("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
                   lambda a, sh: nn.AvgPool1d(**_pool_args(a, "kernel_size", "stride", "padding", "ceil_mode",
                                                           "count_include_pad"))),
    F.adaptive_avg_pool1d: (("input", "output_size"), lambda a, sh: nn.AdaptiveAvgPool1d(a["output_size"])),
    F.adaptive_max_pool1d: (("input", "output_size", "return_indices"),
                            lambda a, sh: None if a.get("return_indices") else nn.AdaptiveMaxPool1d(a["output_size"])),
    F.adaptive_max_pool2d: (("input", "output_size", "return_indices"),
                            lambda a, sh: None if a.get("return_indices") else nn.AdaptiveMaxPool2d(a["output_size"])),
    F.lp_pool1d: (("input", "norm_type", "kernel_size", "stride", "ceil_mode"),
                  lambda a, sh: nn.LPPool1d(**_pool_args(a, "norm_type", "kernel_size", "stride", "ceil_mode"))),
    F.lp_pool2d: (("input", "norm_type", "kernel_size", "stride", "ceil_mode"),
                  lambda a, sh: nn.LPPool2d(**_pool_args(a, "norm_type", "kernel_size", "stride", "ceil_mode"))),
    F.unfold: (("input", "kernel_size", "dilation", "padding", "stride"),
               lambda a, sh: nn.Unfold(**_pool_args(a, "kernel_size", "dilation", "padding", "stride"))),
    F.fold: (("input", "output_size", "kernel_size", "dilation", "padding", "stride"),
             lambda a, sh: nn.Fold(**_pool_args(a, "output_size", "kernel_size", "dilation", "padding", "stride"))),
    torch.channel_shuffle: (("input", "groups"), lambda a, sh: nn.ChannelShuffle(a["groups"])),
    torch.native_channel_shuffle: (("input", "groups"), lambda a, sh: nn.ChannelShuffle(a["groups"])),
    # the module's forward: fixed _random_samples, or none, drawn on the device each call (random_layers)
    F.fractional_max_pool2d: (("input", "kernel_size", "output_size", "output_ratio", "return_indices",
                               "_random_samples"), lambda a, sh: _fractional(nn.FractionalMaxPool2d, a)),
    F.fractional_max_pool3d: (("input", "kernel_size", "output_size", "output_ratio", "return_indices",
                               "_random_samples"), lambda a, sh: _fractional(nn.FractionalMaxPool3d, a)),
    F.prelu: (("input", "weight"), lambda a, sh: _prelu(a)),
    F.linear: (("input", "weight", "bias"), lambda a, sh: _linear_module(a["weight"], a.get("bias"))),
    F.conv1d: (("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
               lambda a, sh: _conv_module(nn.Conv1d, a["weight"], a.get("bias"), a)),
    F.conv2d: (("input", "weight", "bias", "stride", "padding", "dilation", "groups"),
               lambda a, sh: _conv_module(nn.Conv2d, a["weight"], a.get("bias"), a)),
    F.conv_transpose1d: (("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"),
                         lambda a, sh: _conv_module(nn.ConvTranspose1d, a["weight"], a.get("bias"), a)),
    F.conv_transpose2d: (("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"),
                         lambda a, sh: _conv_module(nn.ConvTranspose2d, a["weight"], a.get("bias"), a)),
    F.batch_norm: (("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"),
                   lambda a, sh: _batch_norm(a)),
    F.instance_norm: (("input", "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum",
                       "eps"), lambda a, sh: _instance_norm(a, int(sh[1])) if sh and len(sh) in (3, 4) else None),
    F.layer_norm: (("input", "normalized_shape", "weight", "bias", "eps"), lambda a, sh: _layer_norm(a)),
    F.group_norm: (("input", "num_groups", "weight", "bias", "eps"),
                   lambda a, sh: _group_norm(a, int(sh[1])) if sh and len(sh) in (3, 4) else None),
}
if hasattr(F, "_threshold"):
    FUNCTIONAL_MODULES[F._threshold] = FUNCTIONAL_MODULES[F.threshold]
if getattr(F, "channel_shuffle", torch.channel_shuffle) is not torch.channel_shuffle:
    FUNCTIONAL_MODULES[F.channel_shuffle] = FUNCTIONAL_MODULES[torch.channel_shuffle]


def _linear_module(w: torch.Tensor, b) -> nn.Module:
    m = nn.Linear(int(w.shape[1]), int(w.shape[0]), bias=b is not None)
    with torch.no_grad():
        m.weight.copy_(w)
        if b is not None:
            m.bias.copy_(b)
    return m


# Tensor arguments of a FUNCTIONAL_MODULES call that may be values computed
# in the program (or inputs): the module's capture reads them from the call
VALUE_ARGS = {F.embedding_bag: ("offsets", "per_sample_weights")}


def _functional_module(fn: torch.fx.Node, by_name):
    """(module, names of the constant nodes it took) for a FUNCTIONAL_MODULES
    call whose tensor arguments other than the input are constants, else None."""
    entry = FUNCTIONAL_MODULES.get(fn.target) if fn.op == "call_function" else None
    if entry is None or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    names, make = entry
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names) - {"inplace"}:
        return None
    bound = dict(zip(names, fn.args))
    bound.update((k, v) for k, v in fn.kwargs.items() if k != "inplace")
    taken = []
    for k, v in list(bound.items())[1:]:
        if isinstance(v, torch.fx.Node) and k in VALUE_ARGS.get(fn.target, ()):
            continue                    # read from the call by the module's capture, a value of the program or not
        if isinstance(v, torch.fx.Node):
            const = by_name.get(v.name)
            if const is None or const.op != "constant":
                return None
            bound[k] = torch.as_tensor(np.asarray(const.attrs["value"], np.float32))
            taken.append(v.name)
    try:
        m = make(bound, _meta_shape(fn.args[0]))
    except (TypeError, ValueError, KeyError, RuntimeError):
        return None                     # arguments the module does not take: stays unsupported
    return None if m is None else (m.eval(), taken)
