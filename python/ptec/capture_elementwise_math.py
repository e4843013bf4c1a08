"""torch's element-wise math that capture spells in ops ptec already lowers
(issue 15), each an exact rewrite at capture:

* functions of one tensor (torch.erfc, erfinv, lgamma, digamma, sinc,
  logit, deg2rad, rad2deg, i0, x.sgn(), torch.special's one-tensor
  functions and aliases): one `elementwise` node (fn "math", attrs name:
  MATH's entry), a 256-entry LUT on int8 like torch.exp;
* clamp / clip / clamp_min / clamp_max: a clamp node for numbers, a
  maximum then a minimum (torch's order) for tensor bounds;
* torch.lerp, addcmul, addcdiv: sub, mul, div and add of tensors;
* torch.logaddexp(a, b) = max(a, b) + log(1 + exp(-|a - b|)) (the tail a
  LUT of a - b), logaddexp2 likewise in base 2 (two equal infinities,
  which no int8 value is, give NaN where torch gives the infinity);
* torch.xlogy / special.xlog1py: x * log(y), 0 where x == 0 (a where);
  a number operand makes it a LUT of the other;
* torch.fmax / fmin: the maximum / minimum, and the other operand where
  one is NaN (compares and wheres: a value of an fp32 layer can be NaN);
  in a step computed in fp32 on purpose (capture_torchvision's) or of a
  bit-level fp32 result (torch.nextafter, frexp's mantissa) one
  binary_math node (fn fmin / fmax) on aten::fmin.out / fmax.out;
* torch.heaviside, nan_to_num, isnan, isinf, isposinf, isneginf,
  isfinite, signbit, isclose: comparisons (capture_bool's compare,
  logical and where nodes); a NaN / inf test reads an fp32 value as it
  is, and is refused in one line where the tested value held NaN or inf
  on the calibration inputs but exists only as int8 codes (lowering_bool's
  nonfinite_tested: the codes hold none, the test would answer False);
* torch.float_power (torch's result is float64): the power computed in
  float64 and rounded to float32, the float64 value ptec carries as float32
  (capture_plumbing's rule for float64; as a program output it is
  returned as float64, capture_casts);
* torch.bucketize / searchsorted with constant sorted boundaries: the
  bucket as a whole-valued LUT, then x.long()'s to_index (int64 or int32);
* torch.histc with its range given: per bin a LUT of membership summed by
  a linear layer of ones (over more than 254 elements aten::histc.out).

A call this module does not cover (integer operands, computed
boundaries, a sorter, histc without its range, xlogy by a number <= 0)
stays an unsupported node, refused by name."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape
from .capture_rewrites import _Steps
from .ir import Node
from .capture_random_integers import MATH_FUNCTIONS as RANDOM_MATH
from .capture_complex_trig import MATH_FUNCTIONS as COMPLEX_MATH
from .capture_exact_buckets import exact_bucket_nodes

_FLOAT32 = np.finfo(np.float32)


def _logit(x, a):
    # outside [0, 1] torch gives NaN: the table holds the edge's -inf / +inf
    eps = a.get("eps")
    return torch.logit(torch.clamp(x, 0.0, 1.0), eps)


def _bucket(x, a):
    """torch.bucketize(x, boundaries, right): how many boundaries lie below x
    (right: at or below x), as a float whole number."""
    b = torch.as_tensor(np.asarray(a["boundaries"], np.float32))
    return torch.bucketize(x.contiguous(), b, right=bool(a["right"])).to(x.dtype)


def _in_bin(x, a):
    """1 where x counts in torch.histc's bin a["k"] of a["bins"] over
    [min, max], else 0. torch 1.13 takes its edges from linspace(min, max,
    bins + 1) and positions by the first and last of them: (x - e0) /
    (eN - e0) * bins in float32, eN in the last bin, values outside
    [e0, eN] in none. Its vectorized linspace puts eN a float32 step off
    max when bins + 1 is a multiple of 16 (max is then not counted), so
    the edges here are that linspace's own, not min and max; x (a table's
    float64 grid values) in float32 as torch's."""
    edges = torch.linspace(float(a["min"]), float(a["max"]), int(a["bins"]) + 1, dtype=torch.float32)
    lo, hi, v = edges[0], edges[-1], x.to(torch.float32)
    pos = torch.clamp(torch.floor((v - lo) / (hi - lo) * a["bins"]), max=a["bins"] - 1)
    return ((v >= lo) & (v <= hi) & (pos == a["k"])).to(x.dtype)


def _float_power(x, a):
    """torch.float_power(x, c) rounded to float32: the power in float64. A
    fractional power of a negative value is NaN in torch: its table holds
    the value at 0, as ELEMENTWISE's pow."""
    c = a["exponent"]
    base = x.double() if float(c).is_integer() else torch.clamp(x.double(), min=0.0)
    return torch.pow(base, c).to(x.dtype)


def _log_tail(x, a):
    """log_b(1 + b^-|d|): what logaddexp adds to max(a, b) (b = e or 2)."""
    d = -torch.abs(x)
    return torch.log1p(torch.exp(d)) if a["base"] == "e" else torch.log2(1.0 + torch.exp2(d))


def _special(name):
    f = getattr(torch.special, name, None)
    return None if f is None else (lambda x, a: f(x))


# element-wise functions of one tensor by name (ir.ELEMENTWISE's "math"):
# the float semantics, and what the LUT is made of. Outside a function's
# domain, as ELEMENTWISE: the value at its edge where torch gives NaN.
MATH: Dict[str, Callable[..., torch.Tensor]] = {
    "erfc": lambda x, a: torch.erfc(x),
    "erfinv": lambda x, a: torch.erfinv(torch.clamp(x, -1.0, 1.0)),
    "lgamma": lambda x, a: torch.lgamma(x),
    "digamma": lambda x, a: torch.digamma(x),
    "sinc": lambda x, a: torch.sinc(x),
    "deg2rad": lambda x, a: torch.deg2rad(x),
    "rad2deg": lambda x, a: torch.rad2deg(x),
    "i0": lambda x, a: torch.i0(x),
    "logit": _logit,
    "heaviside": lambda x, a: torch.heaviside(x, torch.tensor(a["values"], dtype=x.dtype)),
    "xlogy": lambda x, a: torch.xlogy(x, a["other"]),                 # x * log(c), c > 0
    "xlogy_self": lambda x, a: torch.xlogy(a["coef"], torch.clamp(x, min=0.0)),
    "xlog1py": lambda x, a: torch.special.xlog1py(x, a["other"]),
    "xlog1py_self": lambda x, a: torch.special.xlog1py(a["coef"], torch.clamp(x, min=-1.0)),
    "log1p": lambda x, a: torch.log1p(torch.clamp(x, min=-1.0)),
    "log_tail": _log_tail,
    "float_power": _float_power,
    "rpow64": lambda x, a: torch.pow(a["base"], x.double()).to(x.dtype),
    "bucket": _bucket,
    "in_bin": _in_bin,
    "isclose_allowed": lambda x, a: a["atol"] + (a["rtol"] * x).abs(),
    # the weight of sorted position `at` in quantile's interpolation at q = x (capture_computed_quantile)
    "hat": lambda x, a: torch.clamp(1.0 - torch.abs(x * a["scale"] - a["at"]), min=0.0),
    # any other element-wise torch function of one value, as traced (capture_unary_tables)
    "torch_table": lambda x, a: _torch_table(x, a),
}


def _torch_table(x, a):
    from .capture_unary_tables import evaluate
    return evaluate(a["call"], x.float()).to(x.dtype)
for _name in ("entr", "erfcx", "i0e", "i1", "i1e", "log_ndtr", "ndtr"):
    if _special(_name) is not None:
        MATH[_name] = _special(_name)
if _special("ndtri") is not None:        # domain (0, 1): the edges' -inf / +inf outside
    MATH["ndtri"] = lambda x, a: torch.special.ndtri(torch.clamp(x, 0.0, 1.0))
MATH.update(RANDOM_MATH)                 # functions of a uniform draw (capture_random_integers)
MATH.update(COMPLEX_MATH)                # the LUTs of functions of complex values (capture_complex_trig)


def evaluate_math(x: torch.Tensor, a) -> torch.Tensor:
    return MATH[a["name"]](x, a)


def _callee_names() -> Dict[object, str]:
    """torch's functions by the names this module calls them (torch.special's
    with their "special." prefix)."""
    names: Dict[object, str] = {}
    for prefix, module in (("", torch), ("special.", torch.special)):
        for n in dir(module):
            f = getattr(module, n, None)
            if callable(f) and not isinstance(f, type):
                try:
                    names.setdefault(f, prefix + n)
                except TypeError:
                    pass
    return names


_CALLEES = _callee_names()

# other spellings of one function
ALIASES = {"clip": "clamp", "sgn": "sign", "special.expit": "sigmoid", "special.erf": "erf",
           "special.erfc": "erfc", "special.erfinv": "erfinv", "special.psi": "digamma",
           "special.digamma": "digamma", "special.gammaln": "lgamma", "special.i0": "i0", "special.sinc": "sinc",
           "special.logit": "logit", "special.exp2": "exp2", "special.expm1": "expm1", "special.log1p": "log1p",
           "special.xlogy": "xlogy", "special.xlog1py": "xlog1py", "special.round": "round",
           **{"special." + n: n for n in ("entr", "erfcx", "i0e", "i1", "i1e", "log_ndtr", "ndtr", "ndtri")}}

# parameter names in torch's order (the tensor itself first)
PARAMS = {
    "clamp": ("input", "min", "max"), "clamp_min": ("input", "min"), "clamp_max": ("input", "max"),
    "lerp": ("input", "end", "weight"), "addcmul": ("input", "tensor1", "tensor2", "value"),
    "addcdiv": ("input", "tensor1", "tensor2", "value"), "logaddexp": ("input", "other"),
    "logaddexp2": ("input", "other"), "xlogy": ("input", "other"), "xlog1py": ("input", "other"),
    "fmax": ("input", "other"), "fmin": ("input", "other"), "heaviside": ("input", "values"),
    "float_power": ("input", "exponent"), "nan_to_num": ("input", "nan", "posinf", "neginf"),
    "isnan": ("input",), "isinf": ("input",), "isposinf": ("input",), "isneginf": ("input",),
    "isfinite": ("input",), "signbit": ("input",), "isclose": ("input", "other", "rtol", "atol", "equal_nan"),
    "bucketize": ("input", "boundaries", "out_int32", "right"),
    "searchsorted": ("sorted_sequence", "input", "out_int32", "right", "side", "sorter"),
    "logit": ("input", "eps"), "histc": ("input", "bins", "min", "max"),
    **{n: ("input",) for n in MATH if n in ("erfc", "erfinv", "lgamma", "digamma", "sinc", "deg2rad", "rad2deg",
                                            "i0", "entr", "erfcx", "i0e", "i1", "i1e", "log_ndtr", "ndtr", "ndtri")},
    "sign": ("input",), "sigmoid": ("input",), "erf": ("input",), "exp2": ("input",), "expm1": ("input",),
    "log1p": ("input",), "round": ("input", "decimals"),
}


# functions capture_calls already takes by their own names, reached here by an alias
EXISTING = ("sign", "erf", "exp2", "expm1", "log1p", "round", "sigmoid")


def _call_name(fn) -> Optional[str]:
    name = _call_name_unaliased(fn)
    return None if name is None else ALIASES.get(name, name)


def _call_name_unaliased(fn) -> Optional[str]:
    t = fn.target
    if isinstance(t, str):
        name = t
    else:
        try:
            name = _CALLEES.get(t)
        except TypeError:
            return None
    return name


def _bind(fn, name):
    """{parameter: argument} of the call, or None (an unknown keyword, out=)."""
    params = PARAMS[name]
    if len(fn.args) > len(params) or set(fn.kwargs) - set(params) - {"out"} or fn.kwargs.get("out") is not None:
        return None
    bound = dict(zip(params, fn.args))
    for k, v in fn.kwargs.items():
        if k in bound:
            return None
        if k != "out":
            bound[k] = v
    return bound


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Call:
    """One call's rewrite: its arguments, their values and the steps."""

    def __init__(self, fn, by_name, name):
        self.fn, self.by_name, self.s = fn, by_name, _Steps(fn.name)
        self.name, self.out_shape = name, _meta_shape(fn)

    def value(self, a) -> Optional[str]:
        """The node of tensor argument a (a value or a constant), else None."""
        if isinstance(a, torch.fx.Node) and a.name in self.by_name:
            return a.name
        return None

    def constant(self, a):
        name = self.value(a)
        node = self.by_name.get(name) if name else None
        return np.asarray(node.attrs["value"]) if node is not None and node.op == "constant" else None

    def number(self, a) -> Optional[float]:
        """A Python number, or a one-element float constant, as a float."""
        if _number(a):
            return float(a)
        c = self.constant(a)
        if c is not None and c.size == 1 and c.dtype.kind == "f":
            return float(c.reshape(-1)[0])
        return None

    def full(self, name: str, shape_of) -> str:
        """Tensor `name` copied to the call's output shape where it is
        smaller (int8 add, sub, mul and div take operands of one shape): a
        constant broadcast ahead of time, a value viewed at the output's
        rank and joined with copies of itself."""
        out = self.out_shape
        node = self.by_name[name]
        if out is None:
            return name
        if node.op == "constant":
            value = np.asarray(node.attrs["value"])
            if value.size == 1 or list(value.shape) == list(out):
                return name
            return self.s.const(np.broadcast_to(value, out).copy())
        shape = shape_of
        if shape is None or list(shape) == list(out):
            return name
        if len(shape) < len(out):
            name = self.s("reshape", [name], target_shape=[1] * (len(out) - len(shape)) + list(shape))
            shape = [1] * (len(out) - len(shape)) + list(shape)
        return self.s.widen(name, shape, out)

    def math(self, src: str, fn_name: str, **attrs) -> str:
        return self.s("elementwise", [src], fn="math", name=fn_name, **attrs)

    def compare(self, kind: str, a: str, scalar=None, b: Optional[str] = None) -> str:
        if b is None:
            return self.s("compare", [a], kind=kind, scalar=float(scalar))
        return self.s("compare", [a, b], kind=kind)


def _tensor(call: _Call, a) -> Optional[str]:
    """A float tensor argument computed by the program, widened to the output."""
    name = call.value(a)
    if name is None:
        return None
    return call.full(name, _meta_shape(a))


def _clamp(call: _Call, b) -> Optional[List[Node]]:
    x = call.value(b["input"])
    lo, hi = b.get("min"), b.get("max")
    if x is None or (lo is None and hi is None):
        return None
    s, cur = call.s, x
    for bound, op, side in ((lo, "maximum", "lo"), (hi, "minimum", "hi")):
        if bound is None:
            continue
        number = call.number(bound)
        if number is not None:
            cur = s("clamp", [cur], lo=number if side == "lo" else None, hi=number if side == "hi" else None)
            continue
        t = _tensor(call, bound)
        if t is None:
            return None
        cur = s(op, [cur, t])
    return s.done()


def _lerp(call: _Call, b) -> Optional[List[Node]]:
    x, y, w = _tensor(call, b["input"]), _tensor(call, b.get("end")), b.get("weight")
    if x is None or y is None or w is None:
        return None
    s = call.s
    diff = s("sub", [y, x])
    wn = call.number(w)
    step = s("mul", [diff, s.const(wn)]) if wn is not None else (
        s("mul", [diff, _tensor(call, w)]) if _tensor(call, w) is not None else None)
    if step is None:
        return None
    s("add", [x, step])
    return s.done()


def _addc(call: _Call, b) -> Optional[List[Node]]:
    x, t1, t2 = (_tensor(call, b.get(k)) for k in ("input", "tensor1", "tensor2"))
    value = b.get("value", 1)
    if x is None or t1 is None or t2 is None or not _number(value):
        return None
    s = call.s
    term = s("mul" if call.name == "addcmul" else "div", [t1, t2])
    if value != 1:
        term = s("mul", [term, s.const(float(value))])
    s("add", [x, term])
    return s.done()


def _logaddexp(call: _Call, b) -> Optional[List[Node]]:
    x, y = _tensor(call, b["input"]), _tensor(call, b.get("other"))
    if x is None or y is None:
        return None
    s = call.s
    tail = call.math(s("sub", [x, y]), "log_tail", base="e" if call.name == "logaddexp" else "2")
    s("add", [s("maximum", [x, y]), tail])
    return s.done()


def _xlogy(call: _Call, b) -> Optional[List[Node]]:
    x, y = b["input"], b.get("other")
    kind = call.name
    cx, cy = call.number(x), call.number(y)
    if cx is not None and cy is None and call.value(y) is not None:
        call.math(call.value(y), kind + "_self", coef=cx)            # c * log(y): a LUT of y
        return call.s.done()
    if cy is not None and call.value(x) is not None:
        if not (cy > (0.0 if kind == "xlogy" else -1.0)):
            return None                     # x * log(c) is -inf or NaN for x != 0
        call.math(call.value(x), kind, other=cy)
        return call.s.done()
    xt, yt = _tensor(call, x), _tensor(call, y)
    if xt is None or yt is None:
        return None
    s = call.s
    log = s("elementwise", [yt], fn="log") if kind == "xlogy" else call.math(yt, "log1p")
    # torch's 0 where x == 0 and y is a number (log(0) = -inf: 0 * -inf would be NaN); NaN where y is
    zero = s("logical", [call.compare("eq", xt, 0.0), call.compare("eq", yt, b=yt)], kind="and")
    s("where", [zero, s.const(0.0), s("mul", [xt, log])])
    return s.done()


def _fmax(call: _Call, b) -> Optional[List[Node]]:
    from .capture_float_bits import _bit_level
    x, y = call.value(b["input"]), call.value(b.get("other"))
    held = [call.by_name[v] for v in (x, y) if v is not None]
    if x is not None and y is not None and (call.fn.meta.get("ptec_fp32") or any(_bit_level(n) for n in held)):
        # a step computed in fp32 on purpose (capture_torchvision's), or of a bit-level fp32 result
        # (mark_bit_level_readers then marks it): one binary_math node on aten::fmin.out / fmax.out,
        # which broadcast as torch
        call.s("binary_math", [x, y], fn=call.name)
        return call.s.done()
    x, y = _tensor(call, b["input"]), _tensor(call, b.get("other"))
    if x is None or y is None:
        return None
    s = call.s
    # NaN is the value that is not itself: where one operand is NaN, the
    # other. The tests come first: lowering reads an fp32 value as such
    # until an int8 layer quantizes it (NaN then is no longer there).
    x_nan, y_nan = call.compare("ne", x, b=x), call.compare("ne", y, b=y)
    best = s("maximum" if call.name == "fmax" else "minimum", [x, y])
    s("where", [x_nan, y, s("where", [y_nan, x, best])])
    return s.done()


def _heaviside(call: _Call, b) -> Optional[List[Node]]:
    x, values = call.value(b["input"]), b.get("values")
    if x is None or call.constant(b["input"]) is not None:
        return None
    v = call.number(values)
    if v is not None:
        call.math(x, "heaviside", values=v)
        return call.s.done()
    vt, xt = _tensor(call, values), _tensor(call, b["input"])
    if vt is None:
        return None
    s = call.s
    step = s("bool_to", [call.compare("gt", xt, 0.0)], dtype="float32")
    s("where", [call.compare("eq", xt, 0.0), vt, step])
    return s.done()


def _nan_to_num(call: _Call, b) -> Optional[List[Node]]:
    x = call.value(b["input"])
    values = [b.get("nan", 0.0), b.get("posinf"), b.get("neginf")]
    if x is None or any(v is not None and not _number(v) for v in values):
        return None
    nan, posinf, neginf = (float(v) if v is not None else d for v, d in
                           zip(values, (0.0, float(_FLOAT32.max), float(_FLOAT32.min))))
    if call.by_name[x].op == "elementwise":
        # of an int8 table's value (log(u)): one table of u, nan_to_num(log(u)), whose entries are finite
        # (an int8 log holds no NaN or inf to test); NaN -> nan, +-inf -> posinf / neginf as torch, at the
        # grid's ends when the output's calibrated range does not reach them
        from .capture_unary_tables import guarded_table_nodes
        nodes = guarded_table_nodes(call.fn.name, b["input"], call.by_name, lambda y: torch.nan_to_num(
            y, nan=nan, posinf=posinf, neginf=neginf), "nan_to_num")
        if nodes is not None:
            return nodes
    s = call.s
    # the tests first, while an fp32 x is still fp32 (see _fmax)
    is_nan, is_pos, is_neg = call.compare("ne", x, b=x), call.compare("eq", x, math.inf), \
        call.compare("eq", x, -math.inf)
    cur = s("where", [is_neg, s.const(neginf), x])
    cur = s("where", [is_pos, s.const(posinf), cur])
    s("where", [is_nan, s.const(nan), cur])
    return s.done()


def _classify(call: _Call, b) -> Optional[List[Node]]:
    x = call.value(b["input"])
    if x is None or call.constant(b["input"]) is not None:
        return None
    s, kind = call.s, call.name
    if kind == "isnan":
        call.compare("ne", x, b=x)
    elif kind == "isposinf":
        call.compare("eq", x, math.inf)
    elif kind == "isneginf":
        call.compare("eq", x, -math.inf)
    elif kind == "isinf":
        s("logical", [call.compare("eq", x, math.inf), call.compare("eq", x, -math.inf)], kind="or")
    elif kind == "isfinite":
        # NaN compares false both ways
        s("logical", [call.compare("gt", x, -math.inf), call.compare("lt", x, math.inf)], kind="and")
    else:                                                       # signbit
        call.compare("lt", x, 0.0)
    return s.done()


def _isclose(call: _Call, b) -> Optional[List[Node]]:
    x, y = _tensor(call, b["input"]), _tensor(call, b.get("other"))
    rtol, atol, equal_nan = b.get("rtol", 1e-05), b.get("atol", 1e-08), b.get("equal_nan", False)
    if x is None or y is None or not (_number(rtol) and _number(atol)) or not isinstance(equal_nan, bool) \
            or rtol < 0 or atol < 0:
        return None
    s = call.s
    # torch's own steps: equal, or a finite |x - y| within atol + |rtol * y|
    close = call.compare("eq", x, b=y)
    if equal_nan:
        both_nan = s("logical", [call.compare("ne", x, b=x), call.compare("ne", y, b=y)], kind="and")
        close = s("logical", [close, both_nan], kind="or")
    if rtol or atol:
        error = s("elementwise", [s("sub", [x, y])], fn="abs")
        within = call.compare("le", error, b=call.math(y, "isclose_allowed", rtol=float(rtol), atol=float(atol)))
        finite = call.compare("lt", error, math.inf)
        close = s("logical", [close, s("logical", [finite, within], kind="and")], kind="or")
    if not s.nodes:
        s("identity", [close])
    return s.done()


def _bucketize(call: _Call, b) -> Optional[List[Node]]:
    if call.name == "bucketize":
        x, seq = b["input"], b.get("boundaries")
        right = b.get("right", False)
    else:
        x, seq = b.get("input"), b["sorted_sequence"]
        side = b.get("side")
        right = b.get("right", False) or side == "right"
        if b.get("sorter") is not None or side not in (None, "left", "right") \
                or (side == "left" and b.get("right")):
            return None
    boundaries = call.constant(seq)
    src = call.value(x)
    if (exact := exact_bucket_nodes(call, x, boundaries, right, b.get("out_int32", False))) is not None:
        return exact                # a float value held exactly: compared, not its codes' LUT (capture_exact_buckets)
    if call.name == "searchsorted" and boundaries is not None and boundaries.ndim >= 2 and src is not None:
        return _searchsorted_rows(call, b, src, boundaries, right)
    if boundaries is None or src is None or call.constant(x) is not None or boundaries.ndim != 1 \
            or not isinstance(right, bool) or not isinstance(b.get("out_int32", False), bool) \
            or boundaries.dtype.kind != "f" or (np.diff(boundaries) < 0).any() or np.isnan(boundaries).any():
        return None
    bucket = call.math(src, "bucket", boundaries=[float(v) for v in boundaries], right=right, whole_valued=True)
    call.s("to_index", [bucket], dtype="int32" if b.get("out_int32") else "int64")
    return call.s.done()


# per-row boundary tables of searchsorted: one LUT per row (a program this many tables long at most)
SEARCHSORTED_MAX_ROWS = 64


def _searchsorted_rows(call: _Call, b, src: str, boundaries, right) -> Optional[List[Node]]:
    """searchsorted(s, v) with a constant s of [..., M] and v of [..., K]
    (the leading dims equal, torch's rule): each row of v through its own
    row's bucket LUT (the 1-D case's), the rows joined, whole numbers kept
    exact by a rounding LUT on a grid that holds them, then the index."""
    shape = _meta_shape(b["input"])
    if shape is None or len(shape) != boundaries.ndim or list(shape[:-1]) != list(boundaries.shape[:-1]) \
            or call.constant(b["input"]) is not None or not isinstance(right, bool) \
            or not isinstance(b.get("out_int32", False), bool) or boundaries.dtype.kind != "f" \
            or np.isnan(boundaries).any() or (np.diff(boundaries, axis=-1) < 0).any():
        return None
    table = boundaries.reshape(-1, boundaries.shape[-1])
    rows, k = table.shape[0], int(shape[-1])
    if not 0 < rows <= SEARCHSORTED_MAX_ROWS or k == 0:
        return None
    s = call.s
    flat = s("reshape", [src], target_shape=[rows, k])
    parts = [call.math(s("slice", [flat], dim=0, start=r, end=r + 1), "bucket",
                       boundaries=[float(v) for v in table[r]], right=right, whole_valued=True)
             for r in range(rows)]
    joined = s("cat", parts, dim=0) if rows > 1 else parts[0]
    whole = s("elementwise", [joined], fn="round")        # (its grid: whole numbers, exact through the cat)
    shaped = s("reshape", [whole], target_shape=list(shape))
    s("to_index", [shaped], dtype="int32" if b.get("out_int32") else "int64")
    return s.done()


def _histc(call: _Call, b) -> Optional[List[Node]]:
    """torch.histc(x, bins, min, max) with min < max given: per bin, the
    count of x's values in it: a LUT (1 in the bin, else 0, by torch's
    linspace edges: _in_bin) summed by a linear layer of ones over x viewed
    as [1, numel] (int32 accumulation); the counts joined. Over more than
    HISTC_INT8_COUNTS elements, whose counts no int8 grid holds: one fp32
    `histc` node on aten::histc.out (op_histc.c: torch's edges and float32
    arithmetic on the values the program holds, float32 counts, exact).
    min == max (torch then takes x's own range): None."""
    x = call.value(b["input"])
    bins, lo, hi = b.get("bins", 100), b.get("min", 0), b.get("max", 0)
    shape = _meta_shape(b["input"]) if x else None
    if x is None or shape is None or not isinstance(bins, int) or isinstance(bins, bool) or bins < 1 \
            or not (_number(lo) and _number(hi)) or not lo < hi:
        return None
    s, numel = call.s, int(np.prod(shape))
    if numel > HISTC_INT8_COUNTS:
        # an int8 grid holds no more counts exactly: aten::histc.out in one fp32 step (the program's
        # float output), whatever the bins
        s("histc", [x], bins=int(bins), min=float(lo), max=float(hi), fp32=HISTC_FP32_REASON)
        return s.done()
    flat = s("reshape", [x], target_shape=[1, numel])
    members = [call.math(flat, "in_bin", bins=bins, min=float(lo), max=float(hi), k=k) for k in range(bins)]
    counts = [s("linear", [m], weight=np.ones((1, numel), np.float32), bias=None) for m in members]
    s("reshape", [s("cat", counts, dim=1) if bins > 1 else counts[0]], target_shape=[bins])
    return s.done()


# elements whose histc counts a linear layer sums on the output's int8 grid; beyond, int64 counts
HISTC_INT8_COUNTS = 254
HISTC_FP32_REASON = "histc's counts of more than 254 elements, exact in float32 (an int8 grid holds fewer)"


def _float_power(call: _Call, b) -> Optional[List[Node]]:
    x, e = b["input"], b.get("exponent")
    cx, ce = call.number(x), call.number(e)
    if ce is not None and call.value(x) is not None and cx is None:
        call.math(call.value(x), "float_power", exponent=ce)
    elif cx is not None and call.value(e) is not None and ce is None:
        call.math(call.value(e), "rpow64", base=cx)
    else:
        xt, et = _tensor(call, x), _tensor(call, e)
        if xt is None or et is None:
            return None
        call.s("binary_math", [xt, et], fn="pow")            # fp32: within an output step of float64
    return call.s.done()


def _unary(call: _Call, b) -> Optional[List[Node]]:
    x = call.value(b["input"])
    if x is None or call.constant(b["input"]) is not None:
        return None
    name = call.name
    if name == "sigmoid":
        call.s("sigmoid", [x])
    elif name in EXISTING:
        if name == "round" and b.get("decimals"):
            return None
        call.s("elementwise", [x], fn=name)
    elif name == "logit":
        eps = b.get("eps")
        if eps is not None and not _number(eps):
            return None
        call.math(x, "logit", eps=None if eps is None else float(eps))
    else:
        call.math(x, name)
    return call.s.done()


HANDLERS = {
    "clamp": _clamp, "clamp_min": _clamp, "clamp_max": _clamp, "lerp": _lerp, "addcmul": _addc, "addcdiv": _addc,
    "logaddexp": _logaddexp, "logaddexp2": _logaddexp, "xlogy": _xlogy, "xlog1py": _xlogy, "fmax": _fmax,
    "fmin": _fmax, "heaviside": _heaviside, "nan_to_num": _nan_to_num, "isclose": _isclose,
    "bucketize": _bucketize, "searchsorted": _bucketize, "float_power": _float_power, "histc": _histc,
    **{k: _classify for k in ("isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit")},
}


def elementwise_math_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """The nodes of one of this module's calls, or None."""
    name = _call_name(fn)
    if name is None or name not in PARAMS or (name in EXISTING and _call_name_unaliased(fn) == name):
        return None                 # torch.erf, x.sign(), ...: capture_calls' LUTs already
    b = _bind(fn, name)
    if b is None:
        return None
    first = b.get("input")
    if not isinstance(first, torch.fx.Node) and not (name in ("xlogy", "xlog1py", "float_power") and _number(first)):
        return None                 # a number first: only where torch takes one
    # float tensors only: integer ones are capture_int_math's (i.clamp(0, 5)) or refused by name
    tensors = [a for a in b.values() if isinstance(a, torch.fx.Node)]
    if any(_dtype(a) != torch.float32 for a in tensors):
        return None
    call = _Call(fn, by_name, name)
    return HANDLERS.get(name, _unary)(call, b)


def _dtype(a: torch.fx.Node):
    meta = a.meta.get("tensor_meta")
    return getattr(meta, "dtype", None)
