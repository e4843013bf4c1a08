"""Any element-wise torch function of one float tensor, its other arguments
constants, as a 256-entry table (issue 15): torch.polygamma(n, x),
torch.mvlgamma(x, p), torch.special.zeta(x, q) / zeta(s, x), the Bessel,
Airy and orthogonal-polynomial functions of torch.special (of x with a
constant n), torch.fix, torch.angle of a real value, ...

An int8 value holds at most 256 codes, so such a function of it is exactly
a lookup table: torch's own function evaluated at the input grid's values
(ir.ELEMENTWISE's "math" entry "torch_table", lowered as every other LUT),
the output's grid from calibration as for torch.exp.

The rule for which calls qualify (checked at capture, on torch itself):
a function of torch's (its module torch.*, or a Tensor method not
in place) with exactly one argument a traced float32 value (the rest numbers, bools,
strings, None or one-element constant tensors; no out=), the traced result is float32
of the input's shape, and a probe on a fixed vector of test values finds
the function element-wise and deterministic: the same values called twice,
called per element, on the vector reversed and on it reshaped to 2-D. (A
value at a test point where torch raises, as mvlgamma below its domain, is
left out of the probe.) Softmax, cumsum, sort, random draws and in-place
methods fail it and keep their own path or refusal (names of undefined
contents or draws, empty_like, rand*, bernoulli, ..., are never probed), as do the calls
capture_elementwise_math names and declined (xlogy by a number <= 0).

Non-finite values follow ptec's rules: the float graph evaluates torch's
function as it is (a call that raises on some elements gives NaN there),
so calibration inputs that give NaN or inf which reach the outputs are
refused by lowering (quantize.RangeObserver.nonfinite); at table entries
calibration never reached, torch's inf saturates and its NaN takes the
nearest entry's value (backends.cortex_m.kernels.lut_table): an int8 code
holds no NaN, and only inputs outside every value calibration saw map there.

torch.nextafter and torch.frexp are bit-level functions of fp32 values, never
tables: capture_float_bits runs them on fp32 kernels.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.fx

from .capture_calls import _meta_shape
from .capture_rewrites import _Steps
from .ir import Node

# test values of the probe: both signs, zero, integers and fractions, the
# edges of the domains of the usual special functions
_PROBE = torch.cat([torch.linspace(-4.0, 4.0, 33), torch.tensor([-0.5, 0.25, 0.7, 1.5, 2.5, 5.0, 9.0, -7.5])])

# a guarded table's values at most this large (guarded_table_nodes)
_HUGE = 1e30

# bit-level functions (capture_float_bits), never probed as tables
BIT_LEVEL = ("nextafter", "frexp")


# undefined contents or draws: a probe could find them element-wise by chance (fresh memory, equal draws)
_NEVER = ("empty", "rand", "normal", "bernoulli", "poisson", "multinomial", "dropout", "uniform", "exponential",
          "geometric", "cauchy")


def _name(fn) -> str:
    t = fn.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


def _call(fn, at: int, fixed=None):
    """torch's function of the traced argument at position `at` (a key:
    keyword), the rest as traced (`fixed`: constant tensors by position or
    key, in place of their nodes)."""
    args, kwargs = list(fn.args), dict(fn.kwargs)
    for k, v in (fixed or {}).items():
        if isinstance(k, str):
            kwargs[k] = v
        else:
            args[k] = v
    target, method = fn.target, fn.op == "call_method"

    def call(x):
        if isinstance(at, str):
            kw = dict(kwargs, **{at: x})
            a = args
        else:
            kw, a = kwargs, args[:at] + [x] + args[at + 1:]
        if method:
            return getattr(a[0], target)(*a[1:], **kw)
        return target(*a, **kw)
    return call


def evaluate(call, x: torch.Tensor) -> torch.Tensor:
    """call(x), and where torch raises for the whole tensor (mvlgamma below
    its domain), element by element with NaN where it raises."""
    try:
        return call(x)
    except (RuntimeError, ValueError):
        flat = x.reshape(-1)
        out = torch.empty_like(flat)
        for i in range(flat.numel()):
            try:
                out[i] = call(flat[i:i + 1]).reshape(-1)[0]
            except (RuntimeError, ValueError):
                out[i] = float("nan")
        return out.reshape(x.shape)


def _same(a, b) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
        and a.dtype == b.dtype and torch.allclose(a, b, rtol=1e-6, atol=0.0, equal_nan=True)


def is_elementwise(call) -> bool:
    """The probe: call is a deterministic element-wise function of a float32 tensor."""
    v = _PROBE.clone()
    with torch.no_grad():
        ok = []
        for i in range(v.numel()):
            try:
                y = call(v[i:i + 1])
            except Exception:          # noqa: BLE001 - any failure: not this path
                continue
            if not isinstance(y, torch.Tensor) or y.shape != (1,) or y.dtype != torch.float32:
                return False
            ok.append(i)
        if len(ok) < 8:
            return False
        v = v[ok]
        singles = torch.cat([call(v[i:i + 1]) for i in range(v.numel())])
        try:
            whole = call(v.clone())
            again = call(v.clone())
            flipped = call(v.flip(0)).flip(0)
            even = v[: v.numel() // 2 * 2]
            square = call(even.reshape(2, -1)).reshape(-1)
        except Exception:          # noqa: BLE001 - any failure: not this path
            return False
        return _same(whole, singles) and _same(again, whole) and _same(flipped, whole) \
            and _same(square, whole[: even.numel()])


def _torchs(fn) -> bool:
    """A function of torch's (torch, torch.special, torch.nn.functional) or a Tensor method."""
    if fn.op == "call_method":
        return isinstance(fn.target, str) and hasattr(torch.Tensor, fn.target)
    return (getattr(fn.target, "__module__", None) or "").startswith("torch")


def _one_number(a, by_name):
    """A one-element constant tensor argument (torch.special.gammainc(x,
    torch.tensor(2.0))) as a tensor of its traced dtype and shape, else None."""
    node, meta = by_name.get(a.name), a.meta.get("tensor_meta")
    if node is None or node.op != "constant" or meta is None:
        return None
    value = np.asarray(node.attrs["value"])
    if value.size != 1 or meta.dtype not in (torch.float32, torch.float64, torch.int64, torch.int32):
        return None
    return torch.as_tensor(value.reshape(-1)[0].item(), dtype=meta.dtype).reshape(tuple(meta.shape))


def _plain(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def guarded_table_nodes(name: str, fn: torch.fx.Node, by_name, guard, what: str) -> Optional[List[Node]]:
    """guard(f(u)) as one `elementwise` LUT node of u, for fn = f(u) a torch
    element-wise call of one traced float32 tensor u (guard element-wise:
    nan_to_num of a log, whose NaN / inf an int8 log could not hold for its
    test; the table's entries hold guard's finite values), else None."""
    if not isinstance(fn, torch.fx.Node):
        return None
    inner = unary_table_nodes(fn, None, by_name)
    if inner is None or len(inner) != 1:
        return None
    f, u = inner[0].attrs["call"], inner[0].inputs[0]

    def call(t):
        return guard(f(t))
    if not is_elementwise(call):
        return None
    with torch.no_grad():
        reached = call(torch.cat([_PROBE, torch.tensor([0.0, 1e-30, -1e-30])]))
    if not torch.isfinite(reached).all() or float(reached.abs().max()) >= _HUGE:
        return None       # (nan_to_num's default +-inf -> float32's max: no int8 grid holds it beside the rest)
    s = _Steps(name)
    s("elementwise", [u], fn="math", name="torch_table", call=call, what=f"{_name(fn)} then {what}")
    return s.done()


def unary_table_nodes(fn: torch.fx.Node, ins, by_name) -> Optional[List[Node]]:
    """One `elementwise` LUT node for a qualifying call, else None."""
    if fn.op not in ("call_function", "call_method") or fn.kwargs.get("out") is not None \
            or (fn.op == "call_method" and str(fn.target).endswith("_")) or not _torchs(fn):
        return None
    if _name(fn) in BIT_LEVEL or any(w in _name(fn) for w in _NEVER):
        return None
    nodes = [(i, a) for i, a in enumerate(fn.args) if isinstance(a, torch.fx.Node)] + \
        [(k, a) for k, a in fn.kwargs.items() if isinstance(a, torch.fx.Node)]
    others = [a for a in fn.args if not isinstance(a, torch.fx.Node)] + \
        [a for a in fn.kwargs.values() if not isinstance(a, torch.fx.Node)]
    fixed = {k: _one_number(a, by_name) for k, a in nodes}
    traced = [(k, a) for k, a in nodes if fixed[k] is None]
    fixed = {k: v for k, v in fixed.items() if v is not None}
    if len(traced) != 1 or not all(_plain(a) for a in others):
        return None
    at, x = traced[0]
    src = by_name.get(x.name)
    meta, out = x.meta.get("tensor_meta"), fn.meta.get("tensor_meta")
    if src is None or src.op == "constant" or getattr(meta, "dtype", None) != torch.float32 \
            or getattr(out, "dtype", None) != torch.float32 or _meta_shape(fn) != _meta_shape(x):
        return None
    from .capture_elementwise_math import PARAMS, _call_name
    if _call_name(fn) in PARAMS:
        return None             # that module's call, which it declined on purpose (xlogy by a number <= 0)
    call = _call(fn, at, fixed)
    if not is_elementwise(call):
        return None
    s = _Steps(fn.name)
    s("elementwise", [x.name], fn="math", name="torch_table", call=call, what=_name(fn))
    return s.done()
