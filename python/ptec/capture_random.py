"""Random numbers drawn in a forward (issue 15), as transforms of one
uniform stream drawn on the device by ptec's dropout kernel
(random_layers: ptec::random_dropout.out on PCG32, a new draw on every
execute, restarted at each load). The values follow torch's distribution,
not torch's stream, which no device reproduces.

The uniform: a constant of ones [numel, 8] through random_dropout with
p = 1/2 is 8 fair bits per element (each 0 or 2); a linear makes
u = i / 256 with i = 128 b0 + 64 b1 + ... + b7 (the top bit on two int8
weights of 64, as 128 is no int8 weight; all weights whole codes of their
own scale 2^-9), so the sum is exact and lands on u's grid (scale 1/256,
its known range whatever the calibration draws: quantize's known_range)
with no rounding: 256 distinct, equally likely levels, as an int8 value
holds. u can be 0, as torch.rand; transforms that need (0, 1) take the
level's midpoint (i + 1/2) / 256 in their LUT (ndtri_of_level,
minus_log_of_level: capture_random_integers' MATH_FUNCTIONS).

- torch.rand_like(x), torch.rand(size): u; x.uniform_(a, b) of a fresh
  tensor: a + (b - a) u.
- torch.randn_like(x), torch.randn(size), x.normal_(m, s): the normal's
  inverse CDF of u's midpoint (ndtri, a LUT in int8), times s plus m;
  torch.normal(mean, std) with tensor mean / std likewise.
- x.exponential_(lambd): -log(u) / lambd (u's midpoint).
- x.geometric_(p): max(1, ceil(log(u) / log(1 - p))); x.log_normal_(m, s):
  exp(m + s ndtri(u)) (u's midpoint, one LUT each); x.bernoulli_(p): u < p
  (p a number or a float tensor of the output's shape).
- torch.bernoulli(p): (u < p) as float.
- F.gumbel_softmax(x, tau, hard, dim): g = -log(-log(u)), softmax((x + g)
  / tau); hard=True the one-hot of its argmax (torch's value
  y_hard - y_soft + y_soft is that one-hot up to float rounding).
- F.alpha_dropout / feature_alpha_dropout with training=True: torch's
  keep mask (u >= p, per element or per channel of [N, C, ...]) and its
  affine a * (x * keep + alpha' * (keep - 1)) + alpha' * a * p
  (alpha' = 1.7580993408473766, a = 1 / sqrt((alpha'^2 p + 1)(1 - p))).

torch.rand / randn / randint / randperm / normal with no tensor argument,
rand_like / randn_like / randint_like / bernoulli / multinomial / poisson
of a constant tensor (also the methods probs.multinomial(k), p.bernoulli()),
the fills of a tensor made in the forward, and F.dropout / dropout1d-3d /
alpha_dropout / feature_alpha_dropout / gumbel_softmax / rrelu /
fractional_max_pool2d-3d of a constant (their training=True default),
would be run once by torch.fx while tracing and frozen into a constant:
`recording_random_calls` makes the tracer record them as calls instead
(also with a traced size, torch.rand(x.shape), which torch.rand itself
cannot take while tracing). A fill's tensor (torch.empty_like(x),
x.new_empty(...), a clone) is never read, so it becomes a constant that
capture drops.
The integer draws (randint, randint_like, random_, randperm,
multinomial, poisson) are capture_random_integers'. A generator argument
(generator=g, or torch.poisson(rates, g)) picks torch's stream, which
these draws never follow: it is dropped while tracing (so the compile never
advances it) and the call's compile note says so.
- x.cauchy_(median, sigma) of a fresh tensor, as a program output:
  median + sigma tan(pi (u' - 1/2)) of u's midpoint, a constant fp32
  table of its 256 values looked up by the level (_cauchy); read by
  another layer it is refused (an int8 grid wide enough for its tails
  leaves its bulk a few steps).
"""
from __future__ import annotations

import contextlib
import math
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .capture_calls import refuse_call, _meta_shape
from .capture_random_integers import INTEGER_CALLS, integer_draw, levels_of
from .capture_rewrites import _Steps
from .ir import Node, UnsupportedOperator
from .random_layers import node_seed

BITS = 8
ALPHA = 1.7580993408473766          # torch's alpha dropout constant (selu's scale times its alpha)

# calls fx would run while tracing when no argument is traced: recorded instead
# (and the draws of a constant tensor: torch.multinomial(torch.tensor([...]), k) would be frozen the same way)
_CONSTRUCTORS = ("rand", "randn", "randint", "randperm", "normal", "rand_like", "randn_like", "randint_like",
                 "bernoulli", "multinomial", "poisson")
_FILLS = ("uniform_", "normal_", "exponential_", "bernoulli_", "random_", "geometric_", "log_normal_", "cauchy_")
# out-of-place methods that draw (probs.multinomial(k), p.bernoulli()): recorded like the constructors
_DRAWING_METHODS = ("bernoulli", "multinomial")
# functions that draw with training=True or without samples (F.dropout's default): F.dropout(torch.ones(4))
# would be one frozen mask. Recorded as fx records them of a traced tensor (the node's target torch's function:
# fx's own record, through torch's __torch_function__, would name this wrapper)
_DRAWING_FUNCTIONS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
                      "gumbel_softmax", "rrelu", "fractional_max_pool2d", "fractional_max_pool3d")
CAUCHY_FP32 = "Cauchy values, looked up in fp32 (an int8 grid wide enough for their tails leaves their bulk a few steps)"


@contextlib.contextmanager
def recording_random_calls(tracer):
    """While tracing: torch.rand(2, 3) and the other constructors, and
    t.uniform_() of a tensor that is not traced, become graph calls (fx
    would run them once and keep the draw as a constant). After
    torch.manual_seed in forward such a draw is the same on every call in
    torch: the traced draw, a constant."""
    saved, filled, seeded = {}, [], []

    def seeding(original):
        def manual_seed(*args, **kwargs):
            if not getattr(tracer, "_evaluating", False):
                seeded.append(True)
            return original(*args, **kwargs)
        return manual_seed

    def recorder(kind, target, original):
        def call(*args, **kwargs):
            args, kwargs, generator = _without_generator(args, kwargs)     # the user's generator never advances
            if getattr(tracer, "_evaluating", False):
                return original(*args, **kwargs)        # the tracer's own run of a call (capture_tracer)
            if kind == "call_method" and isinstance(args[0], torch.fx.Proxy):
                return _noted(original(*args, **kwargs), generator)     # a traced tensor's fill: fx records it
            if kind == "call_method" and target in _FILLS and _made_parameter(tracer, args[0]):
                # the initial weights of a module made in forward (nn.Linear(4, 4)(x)): drawn as torch does
                # (capture_module_forms judges whether torch's output is the same on every call)
                from .capture_module_forms import drawn_in_forward
                drawn_in_forward(tracer)
                return original(*args, **kwargs)
            if seeded and not _traced_arguments(args, kwargs):
                # after torch.manual_seed(s) in forward a draw of no traced value is the same on every call:
                # torch's, a constant
                return original(*args, **kwargs)
            if kind == "call_method" and target in _FILLS:
                filled.append(args[0])          # a tensor made in forward, filled in place
            elif not args and "size" in kwargs:
                kwargs = dict(kwargs)
                args = (kwargs.pop("size"),)            # torch.rand(size=s): as torch.rand(s)
            # a size from a traced shape (torch.rand(x.shape)) is recorded too: torch.rand takes no proxy
            proxy = _noted(tracer.create_proxy(kind, target, args, kwargs), generator)
            if target is saved.get((torch, "poisson")) and args:
                _note_rates(tracer, proxy, args[0])
            return proxy
        return call

    def create_proxy(kind, target, args, kwargs, *rest, **kw):
        # every recorded call, also x.normal_(generator=g) of a traced x, which fx records without torch
        args, kwargs, generator = _without_generator(args, kwargs)
        return _noted(create(kind, target, args, kwargs, *rest, **kw), generator)

    create = tracer.create_proxy
    tracer.create_proxy = create_proxy

    try:
        for owner in (torch, torch.random):
            saved[(owner, "manual_seed")] = owner.manual_seed
            owner.manual_seed = seeding(owner.manual_seed)
        for name in _CONSTRUCTORS:
            saved[(torch, name)] = getattr(torch, name)
            setattr(torch, name, recorder("call_function", saved[(torch, name)], saved[(torch, name)]))
        for name in _FILLS + _DRAWING_METHODS:
            saved[(torch.Tensor, name)] = getattr(torch.Tensor, name)
            setattr(torch.Tensor, name, recorder("call_method", name, saved[(torch.Tensor, name)]))
        for name in _DRAWING_FUNCTIONS:
            if hasattr(F, name):            # dropout1d: torch >= 1.12
                saved[(F, name)] = getattr(F, name)
                setattr(F, name, recorder("call_function", saved[(F, name)], saved[(F, name)]))
        yield
    finally:
        del tracer.create_proxy          # the class's again
        for (owner, name), value in saved.items():
            setattr(owner, name, value)
    _refuse_filled_reads(tracer, filled)


def _traced_arguments(args, kwargs) -> bool:
    from torch.utils._pytree import tree_flatten
    return any(isinstance(v, torch.fx.Proxy) for v in tree_flatten((args, kwargs))[0])


def _made_parameter(tracer, t) -> bool:
    """t is a parameter that is not one of the model's (made in forward)."""
    root = getattr(tracer, "root", None)
    return isinstance(t, torch.nn.Parameter) and root is not None and not any(t is p for p in root.parameters())


def _note_rates(tracer, proxy, rates) -> None:
    """torch.poisson's largest rate on the example (the shadow value of a
    traced rate, or the constant), for capture_random_integers.poisson_parts."""
    value = rates
    if isinstance(rates, torch.fx.Proxy):
        value = tracer.value(rates.node) if hasattr(tracer, "known") and tracer.known(rates.node) else None
    if isinstance(value, torch.Tensor) and value.numel() and value.is_floating_point():
        proxy.node.meta["ptec_rate_max"] = float(value.max())


def _noted(proxy, generator: bool):
    """The call's proxy, marked when a generator argument was dropped."""
    if generator and isinstance(proxy, torch.fx.Proxy):
        proxy.node.meta["ptec_generator"] = True
    return proxy


def _without_generator(args, kwargs):
    """(args, kwargs, whether a torch.Generator was among them) without it:
    a generator= argument picks torch's stream, which ptec's draws never
    follow anyway (torch's distribution, ptec's stream): dropped, and the
    compile notes it (random_layers.note)."""
    generator = any(isinstance(v, torch.Generator) for v in list(args) + list(kwargs.values()))
    if generator:
        args = tuple(a for a in args if not isinstance(a, torch.Generator))       # torch.poisson(rates, g)
        kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, torch.Generator)}
    return args, kwargs, generator


def _refuse_filled_reads(tracer, filled) -> None:
    """`t.uniform_()` then `x + t`: the traced fill's result is a call, but t
    itself stays the tensor fx saw while tracing (one frozen value): refused."""
    for n in tracer.graph.nodes:
        if n.op != "get_attr" or not n.target.startswith("_tensor_constant"):
            continue
        value = getattr(tracer.root, n.target, None)
        if any(value is t for t in filled) and any(u.op != "call_method" or u.target not in _FILLS
                                                   for u in n.users):
            raise UnsupportedOperator("a tensor filled in place by uniform_ / normal_ / exponential_ is read "
                                      "after the fill: use the fill's result (t = torch.empty(...).uniform_())")


_FUNCTIONS = {torch.rand: "rand", torch.rand_like: "rand_like", torch.randn: "randn",
              torch.randn_like: "randn_like", torch.normal: "normal", torch.bernoulli: "bernoulli",
              torch.randint: "randint", torch.randint_like: "randint_like", torch.randperm: "randperm",
              torch.multinomial: "multinomial", torch.poisson: "poisson", F.gumbel_softmax: "gumbel_softmax",
              F.alpha_dropout: "alpha_dropout", F.feature_alpha_dropout: "feature_alpha_dropout"}
_METHODS = ("bernoulli", "multinomial") + _FILLS


def _name_of(fn) -> Optional[str]:
    if fn.op == "call_method":
        return fn.target if fn.target in _METHODS else None
    try:
        return _FUNCTIONS.get(fn.target) if fn.op == "call_function" else None
    except TypeError:         # an unhashable target is none of these
        return None


class _Draws(_Steps):
    """Steps named after the call (capture_rewrites' builder), and the
    uniform stream's nodes."""

    def uniform(self, shape) -> str:
        """u of `shape`: each element one of i / 256, i in 0..255, equally likely."""
        n = int(np.prod(shape)) if len(shape) else 1
        ones = self("constant", [], value=np.ones((n, BITS), np.float32))
        bits = self("random_dropout", [ones], p=0.5, mask_dims=2, seed=0, uniform=True)     # 0 or 2 each
        bits_node = self.nodes[-1]
        bits_node.attrs["seed"] = node_seed(bits_node.name)
        if getattr(self, "generator", False):
            bits_node.attrs["generator_ignored"] = True         # the compile note says so
        # i = 128 b0 + 64 b1 + ... + b7 with int8 weights 64 64 32 ... 1 64 on [b0..b7, b0] (the top bit
        # twice: 128 is no int8 weight), on their own scale 2^-9 so each is a whole code: the sum is exact
        # and lands on u's grid (scale 1/256) without rounding, so the 256 levels stay distinct
        both = self("cat", [bits, self("slice", [bits], dim=1, start=0, end=1)], dim=1)
        weight = np.array([[2.0 ** -3] + [2.0 ** -(k + 2) for k in range(1, BITS)] + [2.0 ** -3]], np.float32)
        u = self("linear", [both], weight=weight, bias=None, weight_scale=2.0 ** -(BITS + 1),
                 known_range=(0.0, 1.0 - 2.0 ** -BITS))     # u's grid, however few draws calibrate
        return self("reshape", [u], target_shape=[int(v) for v in shape])

    def affine(self, src: str, scale: float, shift: float) -> str:
        if scale != 1.0:
            src = self("mul", [src, self.const(scale)])
        if shift != 0.0:
            src = self("add", [src, self.const(shift)])
        return src

    def math(self, src: str, fn_name: str, **attrs) -> str:
        return self("elementwise", [src], fn="math", name=fn_name, **attrs)

    def minus_log(self, src: str) -> str:
        return self("mul", [self("elementwise", [src], fn="log"), self.const(-1.0)])

    def minus_log_of_level(self, u: str) -> str:
        """-log of u's level midpoint (i + 1/2) / 256: finite, as u can be 0."""
        return self.math(u, "minus_log_of_level")


def _arg(fn, i: int, key: str, default=None):
    if len(fn.args) > i:
        return fn.args[i]
    return fn.kwargs.get(key, default)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _float_out(fn) -> bool:
    meta = fn.meta.get("tensor_meta")
    return getattr(meta, "dtype", None) == torch.float32


def _normal(d: _Draws, shape) -> str:
    return d.math(d.uniform(shape), "ndtri_of_level")


def _operand(d: _Draws, fn, v, shape, by_name) -> Optional[str]:
    """A number as a constant; a traced value of the output's shape as it is."""
    if _number(v):
        return d.const(np.full(shape, float(v), np.float32))
    if isinstance(v, torch.fx.Node) and by_name.get(v.name) is not None and _meta_shape(v) == list(shape):
        return v.name
    return None


def _torch_normal(d: _Draws, fn, shape, by_name) -> Optional[str]:
    """torch.normal(mean, std[, size]): mean + std * z, each operand a number or of the output's shape."""
    mean, std = _arg(fn, 0, "mean", 0.0), _arg(fn, 1, "std", 1.0)
    z = _normal(d, shape)
    m, s = _operand(d, fn, mean, shape, by_name), _operand(d, fn, std, shape, by_name)
    if m is None or s is None:
        refuse_call(fn, "ptec runs torch.normal with mean and std numbers or tensors of the output's shape")
    return d("add", [d("mul", [z, s]), m])


def _gumbel_softmax(d: _Draws, fn, ins, shape) -> str:
    tau, hard, dim = _arg(fn, 1, "tau", 1.0), _arg(fn, 2, "hard", False), _arg(fn, 4, "dim", -1)
    if not _number(tau) or tau <= 0 or not isinstance(hard, bool) or not isinstance(dim, int) \
            or not -len(shape) <= dim < len(shape):
        refuse_call(fn, "ptec runs F.gumbel_softmax with a positive number tau, a bool hard and an int dim")
    dim %= len(shape)
    g = d.minus_log(d.minus_log_of_level(d.uniform(shape)))    # -log(-log(u)): Gumbel(0, 1)
    y = d.affine(d("add", [ins[0], g]), 1.0 / float(tau), 0.0)
    if not hard:
        return d("softmax", [y], dim=dim)
    # the one-hot of the argmax along dim (the argmax of (x + g) / tau: softmax keeps the order)
    at = d("index_to_float", [d("argmax", [y], dim=dim, keepdim=True, smallest=False)])
    # compared with the positions along dim, broadcast (as F.one_hot of an argmax: capture_index_uses)
    positions = np.arange(shape[dim], dtype=np.float32).reshape([-1 if k == dim else 1 for k in range(len(shape))])
    hit = d("compare", [at, d.const(positions)], kind="eq")
    return d("bool_to", [hit], dtype="float32")


def _alpha_dropout(d: _Draws, fn, ins, shape, feature: bool) -> Optional[str]:
    p, training = _arg(fn, 1, "p", 0.5), _arg(fn, 2, "training", False)
    if training is not True:
        return None                           # the eval form: capture's identity
    if not _number(p) or not 0.0 <= p < 1.0:
        refuse_call(fn, f"p {p!r}: ptec runs alpha dropout with a number p in [0, 1) (p = 1 gives all zeros)")
    if feature and len(shape) < 3:
        refuse_call(fn, "ptec runs F.feature_alpha_dropout on batched [N, C, ...] input")
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1.0) * (1.0 - p))
    mask_shape = list(shape[:2]) + [1] * (len(shape) - 2) if feature else list(shape)
    u = d.uniform(mask_shape)
    for k in range(2, len(shape)) if feature else ():
        u = d("cat", [u] * shape[k], dim=k) if shape[k] > 1 else u       # one draw per channel
    keep = d("compare", [u], kind="ge", scalar=float(p))
    kept = d.affine(ins[0], a, ALPHA * a * p)
    return d("where", [keep, kept, d.const(np.full(shape, ALPHA * a * (p - 1.0), np.float32))])


def _cauchy(d: _Draws, fn, shape) -> str:
    """t.cauchy_(median, sigma): median + sigma tan(pi (u' - 1/2)) of the
    level's midpoint u' = (i + 1/2) / 256, one of 256 values, computed at
    compile time (float64, rounded once to fp32) and looked up by the level
    i (int64) in that fp32 table (the portable aten::embedding.out): the
    values reach the program's fp32 output as they are. Only as a program
    output: a layer reading them would put them on an int8 grid."""
    median, sigma = _arg(fn, 1, "median", 0.0), _arg(fn, 2, "sigma", 1.0)
    if not (_number(median) and _number(sigma)) or sigma <= 0:
        refuse_call(fn, "ptec runs cauchy_ with numbers median, sigma > 0")
    if not fn.users or any(u.op != "output" for u in fn.users):
        refuse_call(fn, "Cauchy values read by another layer: ptec draws cauchy_ as an fp32 program output only "
                    "(an int8 grid wide enough for their tails leaves their bulk a few steps)")
    n = int(np.prod(shape)) if len(shape) else 1
    mid = (np.arange(256, dtype=np.float64) + 0.5) / 256.0
    table = (float(median) + float(sigma) * np.tan(np.pi * (mid - 0.5))).astype(np.float32).reshape(256, 1)
    rows = d("embedding", [levels_of(d, [n])], weight=table, fp32=CAUCHY_FP32)
    return d("reshape", [rows], target_shape=[int(v) for v in shape], fp32=CAUCHY_FP32)


def _overwritten(node: Optional[Node], shape) -> None:
    """The tensor a fill overwrites, read by nothing else (torch.empty_like(x),
    x.new_empty(...), a clone): its contents are never read, so it stands as
    a constant of zeros, which capture drops as unused (an empty_like would
    otherwise be refused for its undefined contents)."""
    if node is not None and node.op not in ("input", "state", "state_write", "constant"):
        node.op, node.inputs = "constant", []
        node.attrs = dict(value=np.zeros(shape, np.float32), source=node.attrs.get("source"))


def random_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of a random call, None for a call that is not one."""
    name = _name_of(fn)
    if name is None or fn.op not in ("call_function", "call_method"):
        return None
    shape = _meta_shape(fn)
    known = ("rand", "rand_like", "randn", "randn_like", "normal", "bernoulli", "uniform_", "normal_",
             "exponential_", "cauchy_", "geometric_", "log_normal_", "bernoulli_", "gumbel_softmax", "alpha_dropout",
             "feature_alpha_dropout") + INTEGER_CALLS
    if name not in known or shape is None:
        return None
    if name not in INTEGER_CALLS and not _float_out(fn):
        refuse_call(fn, "ptec draws float32 random values only")
    if name in _FILLS:
        target = fn.args[0]
        if isinstance(target, torch.fx.Node) and len(target.users) > 1:
            refuse_call(fn, f"the tensor that {name} fills is read elsewhere; use the call's result")
        _overwritten(by_name.get(getattr(target, "name", None)), shape)
    d = _Draws(fn.name)
    d.generator = bool(fn.meta.get("ptec_generator")) or fn.kwargs.get("generator") is not None
    if name in INTEGER_CALLS:
        integer_draw(d, fn, name, ins, by_name, shape)        # capture_random_integers
        return d.done()
    if name in ("rand", "rand_like"):
        d.uniform(shape)
    elif name == "uniform_":
        lo, hi = _arg(fn, 1, "from", 0.0), _arg(fn, 2, "to", 1.0)
        if not (_number(lo) and _number(hi)):
            refuse_call(fn, "ptec runs uniform_ with numbers from, to")
        d.affine(d.uniform(shape), float(hi) - float(lo), float(lo))
    elif name in ("randn", "randn_like"):
        _normal(d, shape)
    elif name == "normal_":
        mean, std = _arg(fn, 1, "mean", 0.0), _arg(fn, 2, "std", 1.0)
        if not (_number(mean) and _number(std)):
            refuse_call(fn, "ptec runs normal_ with numbers mean, std")
        d.affine(_normal(d, shape), float(std), float(mean))
    elif name == "exponential_":
        lambd = _arg(fn, 1, "lambd", 1.0)
        if not _number(lambd) or lambd <= 0:
            refuse_call(fn, "ptec runs exponential_ with a positive number lambd")
        d.affine(d.minus_log_of_level(d.uniform(shape)), 1.0 / float(lambd), 0.0)
    elif name == "normal":
        _torch_normal(d, fn, shape, by_name)
    elif name == "cauchy_":
        _cauchy(d, fn, shape)
    elif name == "geometric_":
        p = _arg(fn, 1, "p")
        if not _number(p) or not 0 < p <= 1:
            refuse_call(fn, "ptec runs geometric_ with a number p in (0, 1]")
        d.math(d.uniform(shape), "geometric", p=float(p))
    elif name == "log_normal_":
        mean, std = _arg(fn, 1, "mean", 1.0), _arg(fn, 2, "std", 2.0)
        if not (_number(mean) and _number(std)) or std <= 0:
            refuse_call(fn, "ptec runs log_normal_ with numbers mean, std > 0")
        d.math(d.uniform(shape), "log_normal", mean=float(mean), std=float(std))
    elif name in ("bernoulli", "bernoulli_"):
        p = _arg(fn, 1, "p", None if name == "bernoulli" else 0.5)
        if p is None:
            probs = _operand(d, fn, fn.args[0], shape, by_name)
            if probs is None:
                refuse_call(fn, "ptec runs torch.bernoulli of a float tensor of probabilities")
            below = d("compare", [d.uniform(shape), probs], kind="lt")
        elif _number(p):
            below = d("compare", [d.uniform(shape)], kind="lt", scalar=float(p))
        elif name == "bernoulli_" and _operand(d, fn, p, shape, by_name) is not None:
            below = d("compare", [d.uniform(shape), p.name], kind="lt")
        else:
            refuse_call(fn, f"ptec runs {'torch.bernoulli(x, p)' if name == 'bernoulli' else 'bernoulli_(p)'} "
                        "with a number p" + (" or a float tensor of the output's shape" if name != "bernoulli" else ""))
        d("bool_to", [below], dtype="float32")
    elif name == "gumbel_softmax":
        _gumbel_softmax(d, fn, ins, shape)
    else:
        if _alpha_dropout(d, fn, ins, shape, name == "feature_alpha_dropout") is None:
            return None
    return d.done()
