"""Other spellings of ops ptec runs (issue 15), as the same IR nodes:

* arithmetic: torch.add / torch.sub / x.add / x.sub / torch.subtract with
  alpha= (a + alpha * b: b times the constant alpha first), torch.rsub
  (other - alpha * x), x.true_divide, torch.divide / x.divide,
  torch.multiply / x.multiply of float values;
* division with rounding_mode: by a number, one LUT of x (floordiv, or
  truncdiv for 'trunc'); by a tensor (and torch.floor_divide / `//` of two
  float tensors), the quotient's div then a floor or trunc LUT;
* x.bool() / x.to(torch.bool) of a float: the test x != 0 (a compare node);
* x.new_tensor(data) / x.new_zeros / x.new_ones / x.new_full: a constant of
  the traced dtype and shape;
* torch.atleast_1d / 2d / 3d and torch.ravel / x.ravel() of one tensor: a reshape;
  torch.narrow_copy: a slice; torch.concat / torch.concatenate: a join
  (its tensors are in a list, which the generic refusal cannot evaluate).

One table, _RESPELL, maps further names and argument forms of calls that
run (x.greater, the *_copy ops, torch.max_pool2d / torch.kl_div and the
other aten names of F.* calls, torch.linalg.matmul / diagonal, torch.vander,
roll without dims, sum_to_size, irfft of a real input, take / index_fill of
a computed index, ...) to the form that runs; capture's tracer calls
respelled() before it records a call, so the form is traced on the same
proxies (its stand-ins and rewrites apply). Each entry: a name, the torch
schema (parameters in order with defaults; None: the raw args), and a
builder of the form (steps, or _Made of a value made on the proxies), or
None when the arguments do not fit (the call is then left as it is).

A reduction with a dtype= keyword that is not float (capture_plumbing drops
a float32 / float64 one) is refused in one line saying why. Each function
returns None for a call it does not cover (integer operands are
capture_int_math's), which then stays an unsupported node refused by name."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch
import torch.fx
import torch.nn.functional as F

from .capture_calls import _meta_shape, _scalar_arg
from .capture_plumbing import _DTYPE_KEYWORD, FLOATS, _dtype
from .capture_rewrites import _Steps as Steps
from .ir import Node

_ARITHMETIC = {torch.add: "add", "add": "add", torch.sub: "sub", "sub": "sub",
               torch.subtract: "sub", "subtract": "sub", torch.rsub: "rsub", "rsub": "rsub",
               torch.mul: "mul", "mul": "mul", torch.multiply: "mul", "multiply": "mul",
               torch.div: "div", "div": "div", torch.divide: "div", "divide": "div",
               torch.true_divide: "div", "true_divide": "div",
               torch.floor_divide: "floor_divide", "floor_divide": "floor_divide",
               operator.floordiv: "floor_divide"}
_ATLEAST = {torch.atleast_1d: 1, torch.atleast_2d: 2, torch.atleast_3d: 3}
_NEW = {"new_tensor", "new_zeros", "new_ones", "new_full"}
# torch.cat itself is capture's; torch.concatenate is torch 2.x's
_CONCAT = {getattr(torch, n): n for n in ("concat", "concatenate") if hasattr(torch, n)}
# the calls capture already reads without keywords (x + y, torch.div(x, y)): left to it
_PLAIN = {torch.add, "add", torch.sub, "sub", torch.mul, "mul", torch.div, "div", torch.true_divide}
_NUMPY = {torch.float32: np.float32, torch.float64: np.float32, torch.int64: np.int64,
          torch.int32: np.int32, torch.int16: np.int16, torch.int8: np.int8, torch.uint8: np.uint8,
          torch.bool: np.bool_}


def _lookup(table, target):
    """table's entry for target (a set: target itself), else None."""
    try:
        if isinstance(table, (set, frozenset)):
            return target if target in table else None
        return table.get(target)
    except TypeError:                 # an unhashable target is none of these
        return None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Steps(Steps):
    """capture_rewrites' step builder, with numbers as 0-d constants."""

    def operand(self, v) -> str:
        """A tensor's name, or a number as a 0-d constant."""
        return v.name if isinstance(v, torch.fx.Node) else self.const(v)


def _arithmetic_nodes(fn, by_name) -> Optional[List[Node]]:
    kind = _lookup(_ARITHMETIC, fn.target)
    if kind is None or len(fn.args) != 2 or not isinstance(fn.args[0], torch.fx.Node) \
            or (not fn.kwargs and _lookup(_PLAIN, fn.target) is not None):
        return None
    a, b = fn.args
    alpha = fn.kwargs.get("alpha", 1)
    mode = fn.kwargs.get("rounding_mode")
    allowed = {"add": {"alpha"}, "sub": {"alpha"}, "rsub": {"alpha"}, "div": {"rounding_mode"}}.get(kind, set())
    if set(fn.kwargs) - allowed or not _number(alpha) or mode not in (None, "floor", "trunc"):
        return None
    if kind == "floor_divide":
        kind, mode = "div", "floor"
    if any(_dtype(v) not in FLOATS or v.name not in by_name for v in (a, b) if isinstance(v, torch.fx.Node)) \
            or not (isinstance(b, torch.fx.Node) or _number(b)):
        return None                   # integers: capture_int_math's; other dtypes stay refused
    if kind == "div" and mode is not None and not isinstance(b, torch.fx.Node):
        if b == 0:
            return None
        fn_name = "floordiv" if mode == "floor" else "truncdiv"
        return [Node(fn.name, "elementwise", [a.name], dict(fn=fn_name, divisor=float(b)))]
    s = _Steps(fn.name)
    if kind == "rsub":                # other - alpha * x
        a, b = b, a
        kind = "sub"
    if kind in ("add", "sub") and alpha != 1:
        b = b * alpha if _number(b) else s("mul", [b.name, s.operand(float(alpha))])
    left, right = s.operand(a), b if isinstance(b, str) else s.operand(b)
    out = s(kind, [left, right])
    if mode is not None:
        s("elementwise", [out], fn="floor" if mode == "floor" else "trunc")
    return s.done()


def _bool_node(fn) -> Optional[Node]:
    """x.bool(), x.to(torch.bool), x.type(torch.bool) of a float value: x != 0;
    torch.logical_not(x) / x.logical_not() of one: x == 0."""
    if not fn.args or _dtype(fn.args[0]) not in FLOATS:
        return None
    if fn.target in (torch.logical_not, "logical_not") and len(fn.args) == 1 and not fn.kwargs:
        return Node(fn.name, "compare", [fn.args[0].name], dict(kind="eq", scalar=0.0))
    if fn.op != "call_method":
        return None
    rest = list(fn.args[1:]) + list(fn.kwargs.values())
    if (fn.target == "bool" and not rest) or (fn.target in ("to", "type") and rest == [torch.bool]
                                              and set(fn.kwargs) <= {"dtype"}):
        return Node(fn.name, "compare", [fn.args[0].name], dict(kind="ne", scalar=0.0))
    return None


def _new_constant(fn) -> Optional[Node]:
    """x.new_tensor(data) and x.new_zeros / new_ones / new_full(size): a
    constant with the traced dtype and shape (data of numbers only)."""
    first = {"new_tensor": "data"}.get(fn.target, "size")
    if fn.op != "call_method" or fn.target not in _NEW or (len(fn.args) < 2 and first not in fn.kwargs):
        return None
    if set(fn.kwargs) - {"dtype", "device", "requires_grad", first, "fill_value"}:
        return None
    dtype, shape = _dtype(fn), _meta_shape(fn)
    if dtype not in _NUMPY or shape is None:
        return None
    found = []
    torch.fx.node.map_arg((fn.args[1:], fn.kwargs), found.append)
    if found:
        return None                   # data or size computed in the forward
    if fn.target == "new_tensor":
        value = torch.as_tensor(fn.args[1] if len(fn.args) > 1 else fn.kwargs["data"], dtype=dtype)
    elif fn.target == "new_full":
        fill = _scalar_arg(fn, 2, "fill_value")
        if not isinstance(fill, (int, float, bool)):
            return None
        value = torch.full(shape, fill, dtype=dtype)
    else:
        value = (torch.zeros if fn.target == "new_zeros" else torch.ones)(shape, dtype=dtype)
    if list(value.shape) != shape:
        return None
    return Node(fn.name, "constant", [], dict(value=value.numpy().astype(_NUMPY[dtype])))


def _view_nodes(fn) -> Optional[List[Node]]:
    """atleast_Nd and ravel as a reshape to the traced shape; narrow_copy as
    a slice; concat / concatenate as a join of their list of tensors."""
    t = fn.target
    one = len(fn.args) == 1 and isinstance(fn.args[0], torch.fx.Node) and not fn.kwargs
    if fn.op != "call_function":
        if t == "narrow_copy":
            return _narrow(fn)
        if t == "ravel" and one and _meta_shape(fn) is not None:
            return [Node(fn.name, "reshape", [fn.args[0].name], dict(target_shape=_meta_shape(fn)))]
        return None
    if _lookup(_CONCAT, t) is not None:
        seq = fn.args[0] if fn.args else fn.kwargs.get("tensors")
        dim = _scalar_arg(fn, 1, "dim", fn.kwargs.get("axis", 0))
        if not isinstance(seq, (list, tuple)) or not seq or not all(isinstance(a, torch.fx.Node) for a in seq) \
                or not isinstance(dim, int) or set(fn.kwargs) - {"tensors", "dim", "axis"}:
            return None
        return [Node(fn.name, "cat", [a.name for a in seq], dict(dim=dim))]
    if t is getattr(torch, "narrow_copy", None):
        return _narrow(fn)
    if (_lookup(_ATLEAST, t) is not None or t is torch.ravel) and one and _meta_shape(fn) is not None:
        return [Node(fn.name, "reshape", [fn.args[0].name], dict(target_shape=_meta_shape(fn)))]
    return None


def _narrow(fn) -> Optional[List[Node]]:
    args = dict(zip(("input", "dim", "start", "length"), fn.args))
    args.update(fn.kwargs)
    x, dim, start, length = (args.get(k) for k in ("input", "dim", "start", "length"))
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    if shape is None or len(args) != 4 or not all(isinstance(v, int) for v in (dim, start, length)):
        return None
    dim %= len(shape)
    start %= shape[dim]                # torch counts a negative start from the end
    return [Node(fn.name, "slice", [x.name], dict(dim=dim, start=start, end=start + length))]


def _dtype_refusal(fn, ins: List[str]) -> Optional[List[Node]]:
    """A reduction asked to compute in a dtype that is not float: one
    unsupported node that says so (evaluated as torch does)."""
    dtype = fn.kwargs.get("dtype")
    if _lookup(_DTYPE_KEYWORD, fn.target) is None or dtype is None \
            or _dtype(fn.args[0]) not in FLOATS:
        return None
    template = fn.args

    def run(*xs):
        it = iter(xs)
        args = [next(it) if isinstance(a, torch.fx.Node) else a for a in template]
        if fn.op == "call_method":
            return getattr(args[0], fn.target)(*args[1:], **fn.kwargs)
        return fn.target(*args, **fn.kwargs)
    what = fn.target if isinstance(fn.target, str) else fn.target.__name__
    why = f"dtype={dtype} computes in that dtype, and ptec computes float values in float32 only " \
          f"(drop the dtype, or cast the result)"
    return [Node(fn.name, "unsupported", list(ins), dict(fn=run, what=what, why=why))]


def spelling_nodes(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[List[Node]]:
    """The nodes of a call this module covers, else None."""
    if fn.op not in ("call_function", "call_method") or not fn.args:
        return None
    for make in (lambda: _arithmetic_nodes(fn, by_name), lambda: _view_nodes(fn),
                 lambda: _dtype_refusal(fn, ins)):
        nodes = make()
        if nodes is not None:
            return nodes
    node = _bool_node(fn) or _new_constant(fn)
    return [node] if node is not None else None


# ---------------------------------------------------------------------------
# Other names of calls that run (issue 15): rewritten in the traced fx graph,
# before shape propagation, to the spelling ptec reads. One table: a name,
# its torch schema (parameters in order, then their defaults), and how the
# bound arguments become the running call.
_REQUIRED = object()
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}       # aten's int reduction
# torch 1.13's Python bindings of the aten losses read an omitted int
# reduction as 0 (none: torch.kl_div(x, t) is elementwise), not the schema's 1
_UNREDUCED = 0


def _sig(*required, **defaults):
    return [(n, _REQUIRED) for n in required] + list(defaults.items())


def _pool(pool):
    def make(a):
        stride = a["stride"]
        return pool, (a["self"], a["kernel_size"]), dict(
            stride=None if stride in ([], ()) else stride, padding=a["padding"], dilation=a["dilation"],
            ceil_mode=a["ceil_mode"], return_indices=False)
    return make


def _reduced(names, **fixed):
    """An aten loss with an int reduction as its F.* form's keywords."""
    def make(a):
        if a["reduction"] not in _REDUCTION:
            return None
        kw = {k: a[k] for k in names[1] if k != "reduction"}
        kw.update(fixed, reduction=_REDUCTION[a["reduction"]])
        return names[0], tuple(a[k] for k in names[2]), kw
    return make


def _slice_key(a):
    """slice_copy's (dim, start, end, step) as a getitem key. torch 1.13's
    binding of slice_copy reads an omitted step as an undefined number (its
    result changes from run to run): without a step it is left refused."""
    dim, piece = a["dim"], slice(a["start"], a["end"], a["step"])
    if not isinstance(dim, int):
        return None
    key = (slice(None),) * dim + (piece,) if dim >= 0 else (Ellipsis, piece) + (slice(None),) * (-dim - 1)
    return operator.getitem, (a["self"], key), {}


def _vander(a):
    """torch.vander: linalg.vander's powers, decreasing unless increasing=True."""
    if not isinstance(a["increasing"], bool):
        return None
    kw = {} if a["N"] is None else dict(N=a["N"])
    return [(torch.linalg.vander, (a["x"],), kw)] + ([] if a["increasing"] else [("flip", (-1,), {})])


def _same(target, *order):
    """The call of target with the arguments in order (a string: a method)."""
    return lambda a: (target, tuple(a[k] for k in order), {})


_RESPELL = {
    # Tensor methods whose torch.* (or other method) form runs
    **{(m + tail): ((m + tail), _sig("self", "other"), _same(t + tail, "self", "other"))
       for m, t in (("greater", "gt"), ("less", "lt"), ("less_equal", "le"), ("not_equal", "ne"),
                    ("greater_equal", "ge")) for tail in ("", "_")},
    "msort": ("msort", _sig("self"), _same(torch.msort, "self")),
    "dist": ("dist", _sig("self", "other", p=2), lambda a: (torch.dist, (a["self"], a["other"], a["p"]), {})),
    "diagflat": ("diagflat", _sig("self", offset=0), _same(torch.diagflat, "self", "offset")),
    "unsafe_chunk": ("unsafe_chunk", _sig("self", "chunks", dim=0), _same("chunk", "self", "chunks", "dim")),
    "unsafe_split": ("unsafe_split", _sig("self", "split_size", dim=0), _same("split", "self", "split_size", "dim")),
    "unsafe_split_with_sizes": ("unsafe_split_with_sizes", _sig("self", "split_sizes", dim=0),
                                _same("split", "self", "split_sizes", "dim")),
    # torch.* spellings
    torch.unsafe_chunk: ("torch.unsafe_chunk", _sig("self", "chunks", dim=0),
                         _same(torch.chunk, "self", "chunks", "dim")),
    torch.unsafe_split: ("torch.unsafe_split", _sig("self", "split_size", dim=0),
                         _same(torch.split, "self", "split_size", "dim")),
    torch.linalg.matmul: ("torch.linalg.matmul", _sig("self", "other"), _same(torch.matmul, "self", "other")),
    torch.linalg.diagonal: ("torch.linalg.diagonal", _sig("A", offset=0, dim1=-2, dim2=-1),
                            _same(torch.diagonal, "A", "offset", "dim1", "dim2")),
    torch.vander: ("torch.vander", _sig("x", N=None, increasing=False), _vander),
    torch.max_pool1d: ("torch.max_pool1d", _sig("self", "kernel_size", stride=[], padding=0, dilation=1,
                                                ceil_mode=False), _pool(F.max_pool1d)),
    torch.max_pool2d: ("torch.max_pool2d", _sig("self", "kernel_size", stride=[], padding=0, dilation=1,
                                                ceil_mode=False), _pool(F.max_pool2d)),
    torch.group_norm: ("torch.group_norm", _sig("input", "num_groups", weight=None, bias=None, eps=1e-5,
                                                cudnn_enabled=True),
                       lambda a: (F.group_norm, (a["input"], a["num_groups"]),
                                  dict(weight=a["weight"], bias=a["bias"], eps=a["eps"]))),
    torch.constant_pad_nd: ("torch.constant_pad_nd", _sig("self", "pad", value=0),
                            lambda a: (F.pad, (a["self"], a["pad"]), dict(mode="constant", value=a["value"]))),
    torch.kl_div: ("torch.kl_div", _sig("self", "target", reduction=_UNREDUCED, log_target=False),
                   _reduced((F.kl_div, ("log_target",), ("self", "target")))),
    torch.binary_cross_entropy_with_logits: (
        "torch.binary_cross_entropy_with_logits", _sig("self", "target", weight=None, pos_weight=None, reduction=_UNREDUCED),
        _reduced((F.binary_cross_entropy_with_logits, ("weight", "pos_weight"), ("self", "target")))),
    torch.hinge_embedding_loss: ("torch.hinge_embedding_loss", _sig("self", "target", margin=1.0, reduction=_UNREDUCED),
                                 _reduced((F.hinge_embedding_loss, ("margin",), ("self", "target")))),
    torch.margin_ranking_loss: ("torch.margin_ranking_loss",
                                _sig("input1", "input2", "target", margin=0.0, reduction=_UNREDUCED),
                                _reduced((F.margin_ranking_loss, ("margin",), ("input1", "input2", "target")))),
    torch.triplet_margin_loss: ("torch.triplet_margin_loss",
                                _sig("anchor", "positive", "negative", margin=1.0, p=2.0, eps=1e-6, swap=False,
                                     reduction=_UNREDUCED),
                                _reduced((F.triplet_margin_loss, ("margin", "p", "eps", "swap"),
                                          ("anchor", "positive", "negative")))),
    torch.frobenius_norm: ("torch.frobenius_norm", _sig("self", dim=None, keepdim=False),
                           lambda a: (torch.linalg.vector_norm, (a["self"], 2),
                                      dict(dim=a["dim"], keepdim=a["keepdim"]))),
    # the *_copy ops: the view they copy (ptec's values are copies already)
    torch.permute_copy: ("torch.permute_copy", _sig("self", "dims"), _same(torch.permute, "self", "dims")),
    torch.t_copy: ("torch.t_copy", _sig("self"), _same(torch.t, "self")),
    torch.select_copy: ("torch.select_copy", _sig("self", "dim", "index"),
                        _same(torch.select, "self", "dim", "index")),
    torch.squeeze_copy: ("torch.squeeze_copy", _sig("self", dim=None),
                         lambda a: (torch.squeeze, (a["self"],) + (() if a["dim"] is None else (a["dim"],)), {})),
    torch.unsqueeze_copy: ("torch.unsqueeze_copy", _sig("self", "dim"), _same(torch.unsqueeze, "self", "dim")),
    torch.transpose_copy: ("torch.transpose_copy", _sig("self", "dim0", "dim1"),
                           _same(torch.transpose, "self", "dim0", "dim1")),
    torch.diagonal_copy: ("torch.diagonal_copy", _sig("self", offset=0, dim1=0, dim2=1),
                          _same(torch.diagonal, "self", "offset", "dim1", "dim2")),
    torch.unfold_copy: ("torch.unfold_copy", _sig("self", "dimension", "size", "step"),
                        _same("unfold", "self", "dimension", "size", "step")),
    torch.view_copy: ("torch.view_copy", _sig("self", "size"),
                      lambda a: None if isinstance(a["size"], torch.dtype) else ("reshape", (a["self"], a["size"]), {})),
    torch.expand_copy: ("torch.expand_copy", _sig("self", "size", implicit=False), _same("expand", "self", "size")),
    torch.slice_copy: ("torch.slice_copy", _sig("self", dim=0, start=None, end=None, step=_REQUIRED), _slice_key),
    torch.split_copy: ("torch.split_copy", _sig("self", "split_size", dim=0),
                       _same(torch.split, "self", "split_size", "dim")),
    torch.split_with_sizes_copy: ("torch.split_with_sizes_copy", _sig("self", "split_sizes", dim=0),
                                  _same(torch.split, "self", "split_sizes", "dim")),
    torch.unbind_copy: ("torch.unbind_copy", _sig("self", dim=0), _same(torch.unbind, "self", "dim")),
    torch.as_strided_copy: ("torch.as_strided_copy", _sig("self", "size", "stride", storage_offset=None),
                            _same(torch.as_strided, "self", "size", "stride", "storage_offset")),
    torch.view_as_real_copy: ("torch.view_as_real_copy", _sig("self"), _same(torch.view_as_real, "self")),
    torch.detach_copy: ("torch.detach_copy", _sig("self"), _same(torch.detach, "self")),
    torch.alias_copy: ("torch.alias_copy", _sig("self"), _same(torch.clone, "self")),
    # argument forms of calls that run (capture reads the form they become)
    torch.roll: ("torch.roll", _sig("self", "shifts", dims=None), lambda a: _flat_roll(a)),
    "roll": ("Tensor.roll", _sig("self", "shifts", dims=None), lambda a: _flat_roll(a)),
    "sum_to_size": ("Tensor.sum_to_size", None, lambda a: _sum_to_size(a)),
    torch.linalg.vector_norm: ("torch.linalg.vector_norm", _sig("self", ord=2, dim=None, keepdim=False, dtype=None),
                               lambda a: _count_norm(a)),
    **{f: (name, _sig("self", **{s: None}, dim=d, norm=None), lambda a, f=f, s=s: _real_spectrum(f, s, a))
       for f, name, s, d in ((torch.fft.irfft, "torch.fft.irfft", "n", -1),
                             (torch.fft.irfft2, "torch.fft.irfft2", "s", (-2, -1)),
                             (torch.fft.irfftn, "torch.fft.irfftn", "s", None))},
    "fill_": ("Tensor.fill_", _sig("self", "value"), lambda a: _tensor_fill(a)),
    torch.fill_: ("torch.fill_", _sig("self", "value"), lambda a: _tensor_fill(a)),
    torch.where: ("torch.where", _sig("condition", "self", "other"), lambda a: _wide_where(a)),
    torch.take: ("torch.take", _sig("self", "index"), lambda a: _computed_take(a)),
    "take": ("Tensor.take", _sig("self", "index"), lambda a: _computed_take(a)),
    torch.take_along_dim: ("torch.take_along_dim", _sig("self", "indices", dim=None), lambda a: _flat_take(a)),
    "take_along_dim": ("Tensor.take_along_dim", _sig("self", "indices", dim=None), lambda a: _flat_take(a)),
    **{k: (k if isinstance(k, str) else "torch.index_fill", _sig("self", "dim", "index", "value"),
           lambda a, k=k: _computed_index_fill(a, in_place=(k == "index_fill_")))
       for k in ("index_fill", "index_fill_", torch.index_fill)},
}


class _Made:
    """A builder's result made on the proxies itself (not a list of steps)."""

    def __init__(self, value):
        self.value = value


def _value(v):
    """v's example value while tracing (a proxy's shadow value), v itself
    for a number or tensor, None when not known."""
    if isinstance(v, torch.fx.Proxy):
        tracer = v.tracer
        return tracer.value(v.node) if hasattr(tracer, "known") and tracer.known(v.node) else None
    return v


def _computed(v) -> bool:
    """v is a tensor the program computes (its value follows the input)."""
    return isinstance(v, torch.fx.Proxy) and hasattr(v.tracer, "fixed") and not v.tracer.fixed(v.node)


def _flat_roll(a):
    """torch.roll(x, k) with no dims: the roll of x flattened, reshaped back."""
    shifts = a["shifts"]
    shifts = shifts[0] if isinstance(shifts, (list, tuple)) and len(shifts) == 1 else shifts
    if a["dims"] not in (None, [], ()) or not isinstance(shifts, int):
        return None
    x = a["self"]
    shape = getattr(_value(x), "shape", None)
    rolled = x.flatten().roll(shifts, 0)
    return _Made(rolled.reshape_as(x) if shape is None else rolled.reshape(list(shape)))    # (a complex value's reshape runs)


def _sum_to_size(a):
    """x.sum_to_size(*size): a sum over the leading dims and the dims size
    makes 1, kept, then the reshape to size."""
    args, kwargs = a["args"], a["kwargs"]
    x = args[0] if args else None
    size = list(args[1:]) if len(args) > 2 or (len(args) == 2 and isinstance(args[1], int)) else \
        (args[1] if len(args) == 2 else kwargs.get("size"))
    shape = getattr(_value(x), "shape", None)
    if shape is None or not isinstance(size, (list, tuple, torch.Size)) or set(kwargs) - {"size"} \
            or not all(isinstance(n, int) for n in size) or len(size) > len(shape):
        return None
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1]
    summed = x.sum(dims, keepdim=True) if dims else x
    return _Made(summed.reshape(list(size)))


def _count_norm(a):
    """linalg.vector_norm of ord 0: the count of nonzero elements."""
    x, ord_, dim, keepdim = a["self"], a["ord"], a["dim"], a["keepdim"]
    value = _value(x)
    if ord_ != 0 or isinstance(ord_, bool) or a["dtype"] is not None or value is None or not isinstance(keepdim, bool):
        return None
    dim = tuple(range(value.dim())) if dim is None else dim
    return _Made((x != 0).float().sum(dim, keepdim=keepdim))


_DEFAULTS = {torch.fft.irfft: dict(n=None, dim=-1, norm=None), torch.fft.irfft2: dict(s=None, dim=(-2, -1), norm=None),
             torch.fft.irfftn: dict(s=None, dim=None, norm=None)}


def _real_spectrum(f, size, a):
    """irfft / irfft2 / irfftn of a real input: torch reads it as complex
    with a zero imaginary part, which is what it becomes here."""
    x = a["self"]
    value = _value(x)
    if value is None or not isinstance(value, torch.Tensor) or value.dtype not in FLOATS:
        return None
    given = {k: a[k] for k in (size, "dim", "norm") if a[k] is not _DEFAULTS[f][k]}
    return _Made(f(torch.complex(x, x * 0), **given))


def _tensor_fill(a):
    """x.fill_(v) of a 0-d tensor v the program computes: a copy of v expanded."""
    x, v = a["self"], a["value"]
    if not isinstance(v, torch.fx.Proxy) or getattr(_value(v), "shape", None) != torch.Size([]):
        return None
    return _Made(x.copy_(v.expand_as(x)))


def _wide_where(a):
    """torch.where whose condition has more dims than both values: the
    values expanded to the result's shape first."""
    c, x, y = (_value(a[k]) for k in ("condition", "self", "other"))
    ranks = [v.dim() for v in (x, y) if isinstance(v, torch.Tensor)]
    unknown = any(isinstance(a[k], torch.fx.Proxy) and v is None for k, v in (("self", x), ("other", y)))
    if not isinstance(c, torch.Tensor) or not ranks or unknown or c.dim() <= max(ranks):
        return None
    shape = torch.broadcast_shapes(*(v.shape for v in (c, x, y) if isinstance(v, torch.Tensor)))
    # constant tensors too: a value left at its rank would take this rewrite again, endlessly
    x, y = (a[k].expand(shape) if isinstance(a[k], (torch.fx.Proxy, torch.Tensor)) else a[k]
            for k in ("self", "other"))
    return _Made(torch.where(a["condition"], x, y))


def _computed_take(a):
    """torch.take(x, i) of an index the program computes: x flattened, indexed."""
    if not _computed(a["index"]):
        return None
    return _Made(a["self"].flatten()[a["index"]])


def _flat_take(a):
    """take_along_dim with no dim: x and the indices flattened, along dim 0."""
    if a["dim"] is not None:
        return None
    if not _computed(a["indices"]):             # a constant index: torch.take's
        return _Made(torch.take(a["self"], a["indices"].flatten()))
    return _Made(torch.take_along_dim(a["self"].flatten(), a["indices"].flatten(), 0))


def _computed_index_fill(a, in_place: bool):
    """x.index_fill(d, i, v) of an index the program computes: v where the
    position along d is one of i's (a torch.where), else x."""
    x, dim, index, v = a["self"], a["dim"], a["index"], a["value"]
    value = _value(x)
    if not _computed(index) or value is None or not isinstance(dim, int) or not -value.dim() <= dim < value.dim() \
            or not (_number(v) or isinstance(v, torch.fx.Proxy)):
        return None
    dim %= value.dim()
    n = value.shape[dim]
    at = [n if d == dim else 1 for d in range(value.dim())]
    # positions along dim against every index, in a last dim any() folds
    mask = (torch.arange(n).view(at + [1]) == index.reshape([1] * len(at) + [-1])).any(-1)
    filled = torch.where(mask, torch.tensor(float(v)) if _number(v) else v, x)
    return _Made(x.copy_(filled) if in_place else filled)


def _bound(params, args, kwargs) -> Optional[dict]:
    """args / kwargs by parameter name with the defaults filled, or None
    when they do not fit the schema."""
    names = [n for n, _ in params]
    if len(args) > len(names) or set(kwargs) - set(names):
        return None
    bound = dict(zip(names, args))
    if set(bound) & set(kwargs):
        return None
    bound.update(kwargs)
    for n, default in params:
        if n not in bound:
            if default is _REQUIRED:
                return None
            bound[n] = default
    return bound


def respelled(kind, target, args, kwargs):
    """While tracing (capture's tracer, before it records a call): a call
    _RESPELL names, made as the spelling that runs on the same proxies (so
    its own stand-ins and rewrites apply), else None (a call whose arguments
    do not fit its entry is left to the rest of capture)."""
    if kind not in ("call_function", "call_method"):
        return None
    entry = _lookup(_RESPELL, target)
    if entry is None:
        return None
    bound = dict(args=args, kwargs=kwargs) if entry[1] is None else _bound(entry[1], args, kwargs)
    steps = entry[2](bound) if bound is not None else None
    if steps is None:
        return None
    if isinstance(steps, _Made):
        return steps.value
    made = None
    for to, more, kw in (steps if isinstance(steps, list) else [steps]):
        more = ((made,) if made is not None else ()) + tuple(more)
        made = getattr(more[0], to)(*more[1:], **kw) if isinstance(to, str) else to(*more, **kw)
    return made
