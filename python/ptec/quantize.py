"""Stage 2: post-training static int8 quantization of a ptec float Graph.

prepare()   folds batch-norm into the preceding conv/linear, drops identities
            and fuses relu/relu6/hardtanh/clamp into the producing conv,
            linear, add or max-pool (the clamp becomes that op's activation
            range, cortex-m-ops.md §1.6).
calibrate() runs the prepared float graph on calibration inputs and records
            every tensor's range: min/max, or a percentile of the values.
quantize()  chooses int8 per-tensor affine qparams for activations, symmetric
            per-output-channel int8 weights for convolutions, symmetric
            per-tensor weights for linear (its requantization is per tensor,
            §3.8), int32 biases with scale s_in*s_w and zero point 0. Ops that
            move bytes without arithmetic (max/avg pool, reshape) keep their
            input's qparams; softmax output is fixed at 1/256, -128 (§3.15).
The result is the same Graph type with `qparams` on every node and the
integer weights in conv/linear attrs. Nothing is modified in place.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import quant_math as qm
from .ir import CELL_SUFFIX, permutation, Graph, Node, eval_node, evaluate
from .capture_buffer_state import STATE, streamed
from .capture_state_precision import layer_states, replays
from .running_means import running_means_as_linear
from .soft_argmax import soft_argmax_in_fp32
from .capture_grid import theta_in_fp32
from .capture_masking_readers import own_grid
from .capture_steep_gates import GATE_FP32
from .exact_sums import sums_as_linear
from .constant_scales import fold_constant_scales

FUSABLE_PRODUCERS = ("conv2d", "conv_transpose2d", "linear", "add", "max_pool2d", "svdf")
PASS_THROUGH = ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "reshape", "identity", "channel_shuffle", "upsample_nearest", "slice",
                "pixel_shuffle",
                "clamp", "mean", "permute", "sort", "window_max", "max_unpool", "random_fractional_pick", "gather",
                "masked_select")
# Ops whose output qparams can be changed freely by a consumer that needs them
# (minimum/maximum want their inputs on their own grid): the new range only
# clamps the producer's output, which min/max commute with.
FREE_QPARAMS = ("conv2d", "conv_transpose2d", "linear", "add", "mul", "div", "matmul",
                "sigmoid", "tanh", "silu", "gelu", "hardswish", "hardsigmoid", "leaky_relu",
                "elu", "softplus", "prelu", "hardshrink", "softshrink", "softsign", "tanhshrink",
                "mish", "selu", "celu", "logsigmoid", "lrn_scale", "neg", "threshold", "lp_pow", "lp_root",
                "elementwise")


@dataclass
class QuantConfig:
    observer: str = "minmax"          # or "percentile"
    percentile: float = 99.99
    samples_per_tensor: int = 4096    # values kept per tensor and input for percentile


def _combine_act(a, b):
    if a is None:
        return b
    lo = a[0] if b[0] is None else (b[0] if a[0] is None else max(a[0], b[0]))
    hi = a[1] if b[1] is None else (b[1] if a[1] is None else min(a[1], b[1]))
    return (lo, hi)


def _through_unit_squeeze(g: Graph, n):
    """The 2-D node behind the squeeze(2) a 1-D layer ends with (capture's
    _one_d_nodes), when that squeeze is its only user and no output: a
    per-channel batch-norm or an activation after the squeeze acts on the
    2-D node's output alike. Otherwise n itself."""
    if n.op == "reshape" and len(g.users(n.name)) == 1 and n.name not in g.outputs:
        prod = g.node(n.inputs[0])
        unit_height = (prod.shape is not None and n.shape is not None and len(prod.shape) == 4
                       and prod.shape[2] == 1 and list(n.shape) == list(prod.shape[:2]) + list(prod.shape[3:]))
        if (unit_height and prod.op in FUSABLE_PRODUCERS and len(g.users(prod.name)) == 1
                and prod.name not in g.outputs):
            return prod
    return n


def _depth_planes(g: Graph, n):
    """The conv2d (conv_transpose2d) nodes behind an nn.Conv3d
    (nn.ConvTranspose3d) stand-in (python/ptec/conv3d.py, conv_transpose3d.py):
    n is the cat along dim 2 of unsqueeze(2)s (reshapes [N, O, H, W] ->
    [N, O, 1, H, W]) of such convs (or one such
    unsqueeze), each the only user of its conv and none an output. An
    activation after n acts on each plane's conv alike. Else None."""
    if n.name in g.outputs or len(g.users(n.name)) != 1:
        return None
    planes = [n] if n.op == "reshape" else (
        [g.node(i) for i in n.inputs] if n.op == "cat" and n.attrs.get("dim") == 2 else [])
    convs = []
    for p in planes:
        if p.op != "reshape" or len(g.users(p.name)) != 1 or p.name in g.outputs:
            return None
        conv = g.node(p.inputs[0])
        if (conv.op not in ("conv2d", "conv_transpose2d") or len(g.users(conv.name)) != 1 or conv.name in g.outputs
                or conv.shape is None or p.shape is None
                or list(p.shape) != list(conv.shape[:2]) + [1] + list(conv.shape[2:])):
            return None
        convs.append(conv)
    return convs or None


def _collapse_channel_shuffles(g: Graph) -> None:
    """reshape [N,C,H,W] -> [N,g,C/g,H,W], transpose(1, 2), reshape back:
    ShuffleNet's channel shuffle, one `channel_shuffle` node (a permutation
    of each pixel's channels, which the backends do without a rank-5 copy)."""
    for r2 in list(g.nodes):
        if r2.op != "reshape" or not r2.shape or len(r2.shape) != 4:
            continue
        p = g.node(r2.inputs[0])
        if p.op != "permute" or not p.shape or len(p.shape) != 5:
            continue
        r1 = g.node(p.inputs[0])
        if r1.op != "reshape" or not r1.shape or len(r1.shape) != 5:
            continue
        x = g.node(r1.inputs[0])
        nb, gr, cg, h, w = r1.shape
        if (list(x.shape or []) != list(r2.shape) or list(r2.shape) != [nb, gr * cg, h, w]
                or permutation(p, 5) != [0, 2, 1, 3, 4]
                or any(len(g.users(v.name)) != 1 or v.name in g.outputs for v in (r1, p))):
            continue
        source = r1.attrs.get("source")
        r2.op, r2.inputs = "channel_shuffle", [x.name]
        r2.attrs = {"groups": gr, **({"source": f"channel shuffle at {source}"} if source else {})}
        g.remove(p.name)
        g.remove(r1.name)


def _fold_batch_norm(prod, a) -> None:
    """Fold an eval batch-norm's per-channel affine map (attrs a) into the
    conv2d / linear / conv_transpose2d prod before it."""
    scale = (a["gamma"] if a["gamma"] is not None else 1.0) / np.sqrt(a["var"] + a["eps"])
    shift = (a["beta"] if a["beta"] is not None else 0.0) - a["mean"] * scale
    w = prod.attrs["weight"].astype(np.float64)
    axis = 1 if prod.op == "conv_transpose2d" else 0   # the output-channel axis
    b = prod.attrs.get("bias")
    b = np.zeros(w.shape[axis]) if b is None else b.astype(np.float64)
    shape = [1] * w.ndim
    shape[axis] = -1
    prod.attrs["weight"] = (w * scale.reshape(shape)).astype(np.float32)
    prod.attrs["bias"] = (b * scale + shift).astype(np.float32)


def _lone_batch_norm(g: Graph, n) -> None:
    """A batch-norm with no layer to fold into is a per-channel affine map:
    a 1x1 depthwise conv. On [N, C, D, H, W] (nn.BatchNorm3d) the conv runs
    on the [N, C, D*H, W] view, on [N, C, L] and [N, C] (nn.BatchNorm1d) on
    [N, C, L, 1] and [N, C, 1, 1], and n becomes the reshape back."""
    a = n.attrs
    c = n.shape[1]
    scale = (a["gamma"] if a["gamma"] is not None else 1.0) / np.sqrt(a["var"] + a["eps"])
    shift = (a["beta"] if a["beta"] is not None else 0.0) - a["mean"] * scale
    conv = dict(weight=scale.reshape(c, 1, 1, 1).astype(np.float32), bias=shift.astype(np.float32),
                stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=c)
    if len(n.shape) == 4:
        n.op, n.attrs = "conv2d", dict(conv, **({"source": a["source"]} if "source" in a else {}))
        return
    nb = n.shape[0]
    flat = [nb, c, n.shape[2] * n.shape[3], n.shape[4]] if len(n.shape) == 5 else \
        [nb, c, int(np.prod(n.shape[2:])), 1]
    source = {"source": a["source"]} if "source" in a else {}
    view = Node(f"{n.name}_as_4d", "reshape", list(n.inputs), dict(shape=flat, **source), shape=flat)
    affine = Node(f"{n.name}_affine", "conv2d", [view.name], dict(conv, **source), shape=flat)
    at = g.nodes.index(n)
    g.nodes[at:at] = [view, affine]
    n.op, n.inputs, n.attrs = "reshape", [affine.name], dict(shape=list(n.shape), **source)


def prepare(graph: Graph) -> Graph:
    g = copy.deepcopy(graph)
    # identities
    for n in list(g.nodes):
        if n.op == "identity" and not n.attrs.get("act") and not n.attrs.get("out_dtype"):   # (a float64 output's mark)
            g.replace_uses(n.name, n.inputs[0])
            g.remove(n.name)
    sums_as_linear(g)             # mean * c as one exact int32 accumulation (ptec.exact_sums)
    running_means_as_linear(g)    # x.cumsum(-1) / arange(1, n + 1): one averaging linear (ptec.running_means)
    soft_argmax_in_fp32(g)        # (softmax(h * beta) * grid).sum(): its expectation in fp32 (ptec.soft_argmax)
    theta_in_fp32(g)              # a spatial transformer's theta layer in fp32, as its affine_grid (capture_grid)
    _collapse_channel_shuffles(g)
    # batch-norm folding
    for n in list(g.nodes):
        if n.op != "batch_norm":
            continue
        prod = _through_unit_squeeze(g, g.node(n.inputs[0]))
        planes = _depth_planes(g, g.node(n.inputs[0])) if len(n.shape or []) == 5 else None
        if (prod.op in ("conv2d", "linear", "conv_transpose2d") and not prod.attrs.get("act")
                and len(g.users(prod.name)) == 1 and prod.name not in g.outputs
                and (prod.op != "conv_transpose2d" or prod.attrs["groups"] == 1)):
            _fold_batch_norm(prod, n.attrs)
            g.replace_uses(n.name, n.inputs[0])
            g.remove(n.name)
        elif planes and not any(conv.attrs.get("act") for conv in planes):
            # after an nn.Conv3d stand-in: the same affine map on each depth's conv
            for conv in planes:
                _fold_batch_norm(conv, n.attrs)
            g.replace_uses(n.name, n.inputs[0])
            g.remove(n.name)
        elif n.shape is not None and len(n.shape) in (2, 3, 4, 5):
            _lone_batch_norm(g, n)
    fold_constant_scales(g)       # fc(x) / T: 1 / T in the layer's weights (ptec.constant_scales)
    # activation fusion
    for n in list(g.nodes):
        if n.op != "clamp":
            continue
        prod = _through_unit_squeeze(g, g.node(n.inputs[0]))
        if (prod.op in FUSABLE_PRODUCERS and len(g.users(prod.name)) == 1
                and prod.name not in g.outputs):
            prod.attrs["act"] = _combine_act(prod.attrs.get("act"), (n.attrs["lo"], n.attrs["hi"]))
            g.replace_uses(n.name, n.inputs[0])
            g.remove(n.name)
        elif _depth_planes(g, g.node(n.inputs[0])):
            for conv in _depth_planes(g, g.node(n.inputs[0])):
                conv.attrs["act"] = _combine_act(conv.attrs.get("act"), (n.attrs["lo"], n.attrs["hi"]))
            g.replace_uses(n.name, n.inputs[0])
            g.remove(n.name)
    return g


# --------------------------------------------------------------------------
# Calibration

class RangeObserver:
    def __init__(self, config: QuantConfig, seed: int = 0):
        self.config = config
        self.lo: Dict[str, float] = {}
        self.hi: Dict[str, float] = {}
        self.samples: Dict[str, List[np.ndarray]] = {}
        self.rng = np.random.default_rng(seed)
        self.nan: set = set()          # values with a NaN in some sample
        self.finite: set = set()       # values with a finite element in some sample
        self.infinite: set = set()     # values with an inf in some sample
        self.reaches: set = set()      # values whose NaN / inf change the outputs (calibrate)
        self.dtypes: Dict[str, torch.dtype] = {}   # each value's torch dtype (exact_sums.narrow_sums_as_linear)
        # values read only through a constant mask (one holding a 0): {name: kept positions, flat} and the kept
        # elements' range beside the whole one (ptec.masked_products)
        self.kept: Dict[str, np.ndarray] = {}
        self.kept_lo: Dict[str, float] = {}
        self.kept_hi: Dict[str, float] = {}
        self.kept_samples: Dict[str, List[np.ndarray]] = {}

    def observe(self, name: str, t: torch.Tensor) -> None:
        self.dtypes[name] = t.dtype
        v = t.detach().reshape(-1).numpy()
        keep = self.kept.get(name)
        if keep is not None and keep.size == v.size:
            self._observe_kept(name, v[keep])
        if v.dtype.kind == "f":
            ok = np.isfinite(v)
            if ok.any():
                self.finite.add(name)
            if not ok.all():
                # NaN and inf (an fp32 layer's): no int8 grid holds them (none finite: as 0, which every
                # grid holds); nonfinite() tells lowering, which refuses such a value in int8
                if np.isnan(v).any():
                    self.nan.add(name)
                if np.isinf(v).any():
                    self.infinite.add(name)
                v = v[ok] if ok.any() else np.zeros(1, v.dtype)
        if v.size == 0:
            return
        self.lo[name] = min(self.lo.get(name, np.inf), float(v.min()))
        self.hi[name] = max(self.hi.get(name, -np.inf), float(v.max()))
        if self.config.observer == "percentile":
            k = self.config.samples_per_tensor
            sel = v if v.size <= k else v[self.rng.choice(v.size, size=k, replace=False)]
            self.samples.setdefault(name, []).append(sel.astype(np.float32))

    def _observe_kept(self, name: str, v: np.ndarray) -> None:
        v = v[np.isfinite(v)]
        if v.size == 0:
            return
        self.kept_lo[name] = min(self.kept_lo.get(name, np.inf), float(v.min()))
        self.kept_hi[name] = max(self.kept_hi.get(name, -np.inf), float(v.max()))
        if self.config.observer == "percentile":
            k = self.config.samples_per_tensor
            sel = v if v.size <= k else v[self.rng.choice(v.size, size=k, replace=False)]
            self.kept_samples.setdefault(name, []).append(sel.astype(np.float32))

    def restrict(self, name: str) -> None:
        """The value's range from here on: its kept positions' (ptec.masked_products)."""
        self.lo[name], self.hi[name] = self.kept_lo[name], self.kept_hi[name]
        if name in self.samples:
            self.samples[name] = self.kept_samples.get(name, [np.zeros(1, np.float32)])

    def nonfinite(self, name: str) -> Optional[str]:
        """What no int8 grid can hold in this value's calibration samples:
        only infinite values (x / 0); a NaN (log of a negative) or an inf
        among numbers that changes the outputs; the same that a later where
        drops ("... dropped later": log where x > 0, nan_to_num); None when
        every sample was finite. Lowering refuses the first two wherever
        the value is int8 (an int8 code holds no NaN or inf)."""
        if name in self.infinite and name not in self.finite:
            return "only infinite values"
        if name in self.reaches:
            return "NaN" if name in self.nan else "infinite values"
        if name in self.nan:
            return "NaN dropped later"
        return "infinite values dropped later" if name in self.infinite else None

    def range(self, name: str) -> Tuple[float, float]:
        if name not in self.lo:
            return 0.0, 0.0         # no element in any sample (torch.diff(x, 9), x[..., :0]): any grid holds none
        lo, hi = self.lo[name], self.hi[name]
        if self.config.observer == "percentile" and name in self.samples:
            allv = np.concatenate(self.samples[name])
            p = self.config.percentile
            lo = max(lo, float(np.percentile(allv, 100.0 - p)))
            hi = min(hi, float(np.percentile(allv, p)))
        return lo, hi


# ops whose value is not a function of their inputs alone: a second evaluation differs anyway
_DRAWS = {"random_dropout", "random_fractional_pick"}


def _nonfinite_test(n: Node, name: str) -> bool:
    """n asks whether value `name` is NaN (name != name) or infinite (name
    == +-inf): capture_elementwise_math's isnan / isinf, run on the value
    before any int8 copy of it."""
    if n.op != "compare":
        return False
    return n.inputs == [name, name] or (n.inputs == [name] and math.isinf(float(n.attrs.get("scalar", 0.0))))


def _nonfinite_reaches_outputs(g: Graph, env: Dict[str, torch.Tensor], name: str) -> bool:
    """Whether the NaN / inf elements of value `name` change the outputs:
    the graph after it evaluated again with them replaced by finite values
    at either end of its finite range (what its int8 codes would hold), and
    NaN by 0 too (the quantize kernel's code for NaN: the zero point, as a
    computed torch.isin test value could then match an element 0), as a
    where dropping them (log where x > 0, nan_to_num) does not."""
    v = env[name]
    finite = v[torch.isfinite(v)]
    # (none finite in this sample, as 0 / 0 of an empty selection's mean: any two numbers will do)
    lo, hi = (float(finite.min()), float(finite.max())) if finite.numel() else (-1.0, 1.0)
    at = [n.name for n in g.nodes].index(name)
    if any(n.op in _DRAWS for n in g.nodes[at + 1:]):
        return False         # (no way to tell: a second run draws anew)
    for nan in (lo, hi, 0.0) if torch.isnan(v).any() else (lo, hi):
        trial = dict(env)
        trial[name] = torch.nan_to_num(v, nan=nan, posinf=hi, neginf=lo)
        for n in g.nodes[at + 1:]:
            if n.op != "input" and any(i in trial and trial[i] is not env[i] for i in n.inputs):
                # a test for NaN / inf (x != x, x == inf: nan_to_num's, fmax's) reads the value as it is
                trial[n.name] = eval_node(n, [env[i] if i == name and _nonfinite_test(n, name) else trial[i]
                                              for i in n.inputs])
        for o in g.outputs:
            a, b = env[o], trial[o]
            if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
                return True
            if a.is_floating_point() and not torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True):
                return True
            if not a.is_floating_point() and not torch.equal(a, b):
                return True
    return False


def calibrate(g: Graph, calibration: Iterable[Sequence[torch.Tensor]],
              config: QuantConfig = QuantConfig(),
              progress: Optional[Callable[[int], None]] = None,
              watch: Optional[Callable[[Graph, RangeObserver], None]] = None) -> RangeObserver:
    """watch(g, observer): told before the first sample (ptec.masked_products)."""
    obs = RangeObserver(config)
    if watch is not None:
        watch(g, obs)
    nodes = {n.name for n in g.nodes}
    # a written buffer's state streams through the samples as torch's calls would (capture_buffer_state)
    carried = {n.name: n for n in g.nodes if n.op == "state" and n.attrs.get(STATE)}
    written = {s: v for s, v in streamed(g).items() if s in carried}
    replay = replays(g, written)
    # a --stateful layer's state too: its program only runs streams (capture_state_precision)
    layers = layer_states(g)
    carried.update({s: g.node(s) for s in layers})
    written.update(layers)
    initial = {k: n.attrs["init"] for k, n in carried.items()}
    try:
        if replay:     # a ring buffer's windows of the samples' frames, full ones (capture_state_precision)
            calibration = list(calibration)
            _observe_samples(g, calibration, obs, nodes, None, carried, written)
        _observe_samples(g, calibration, obs, nodes, progress, carried, written)
    finally:
        for k, n in carried.items():
            n.attrs["init"] = initial[k]
    if not obs.lo:
        raise ValueError("no calibration data")
    return obs


def _observe_samples(g: Graph, calibration, obs: RangeObserver, nodes, progress, carried, written) -> None:
    for i, inputs in enumerate(calibration):
        _, env = evaluate(g, inputs, keep_all=True)
        for k, v in written.items():        # the next sample's run reads what this one wrote
            carried[k].attrs["init"] = env[v].detach().numpy().copy()
        for name, t in env.items():
            obs.observe(name, t)
            if name not in obs.reaches and name in nodes and isinstance(t, torch.Tensor) \
                    and t.is_floating_point() and not torch.isfinite(t).all() \
                    and _nonfinite_reaches_outputs(g, env, name):
                obs.reaches.add(name)
        for n in g.nodes:
            if n.op == "svdf":      # the feature filter's outputs: the state's range
                obs.observe(svdf_state_name(n), torch.nn.functional.linear(
                    env[n.inputs[0]], torch.as_tensor(n.attrs["weights_feature"])))
        if progress:
            progress(i + 1)


def svdf_state_name(n) -> str:
    return f"{n.name}:state"


def quantize_svdf(n, s_in: float, observer: RangeObserver) -> None:
    """ptec.nn.SVDF (docs/kernels.md "SVDF"): per-tensor symmetric int8
    weights_feature and weights_time, an int8 state with zero point 0 whose
    scale covers the feature filter's calibrated outputs, and an int32 bias
    on the time filter's accumulator grid, s_state * s_time."""
    a = n.attrs
    s_f = float(symmetric_weight_scales(a["weights_feature"], per_channel=False)[0])
    s_t = float(symmetric_weight_scales(a["weights_time"], per_channel=False)[0])
    lo, hi = observer.range(svdf_state_name(n))
    s_state = float(np.float32(max(abs(lo), abs(hi), 1e-8) / 127.0))
    a["weights_feature_q"] = quantize_weights(a["weights_feature"], np.array([s_f]))
    a["weights_time_q"] = quantize_weights(a["weights_time"], np.array([s_t]))
    a["feature_scale"], a["time_scale"], a["state_scale"] = s_f, s_t, s_state
    a["bias_q"] = quantize_bias(a.get("bias"), s_state * s_t, np.ones(1))


def affine_qparams(lo: float, hi: float) -> Tuple[float, int]:
    """int8 per-tensor affine qparams whose grid contains 0 exactly."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        # always 0 on the calibration inputs (a where with a constant all-False mask, zeros_like):
        # any grid holds 0 exactly; a unit one keeps the requantization ratios of its readers
        # sane (a width of 1e-8 made 2^-34 multipliers no kernel takes)
        hi = 1.0
    elif hi - lo < 1e-8:
        hi = lo + 1e-8
    scale = (hi - lo) / 255.0
    zp = int(round(qm.QMIN - lo / scale))
    return float(np.float32(scale)), max(qm.QMIN, min(qm.QMAX, zp))


# element-wise functions whose values are whole numbers
WHOLE_VALUED = ("floor", "ceil", "trunc", "sign")


def _whole_numbers_for_ids(g: Graph, n: Node) -> bool:
    """A whole-valued function (torch.floor(x), x.round()) read only by
    x.long() / x.int() (to_index): ids, which truncation of a value a little
    below its whole number would move by one; or by comparisons
    (`x.round() == 1`, torch.isin), which hold for a whole number only if the
    grid has it exactly."""
    whole = n.op == "elementwise" and (n.attrs.get("fn") in WHOLE_VALUED or n.attrs.get("whole_valued")
                                       or (n.attrs.get("fn") == "round" and not n.attrs.get("decimals")))
    return whole and _read_only_as_whole_numbers(g, n)


def _read_only_as_whole_numbers(g: Graph, n: Node) -> bool:
    """n is read only by to_index / compare, directly or through views
    (reshape, slice: on n's own grid, PASS_THROUGH), as torch.isin's
    comparison of computed values reads them, and is no program output."""
    users = g.users(n.name)
    return bool(users) and n.name not in g.outputs and all(
        u.op in ("to_index", "compare") or (u.op in ("reshape", "slice") and _read_only_as_whole_numbers(g, u))
        for u in users)


def whole_number_qparams(lo: float, hi: float) -> Tuple[float, int]:
    """int8 qparams on which every whole number of [lo, hi] is exact: a
    power-of-two scale (so (q - zp) * scale is exact in float32) of at most
    1 when the span fits 255 steps (else the smallest power of two that
    covers it, whose grid holds the even, or fourfold, ... numbers)."""
    lo, hi = min(np.floor(lo), 0.0), max(np.ceil(hi), 0.0)
    span = max(hi - lo, 1.0)
    scale = 2.0 ** -np.floor(np.log2(255.0 / span))
    zp = int(qm.QMIN - np.floor(lo / scale))
    return float(scale), max(qm.QMIN, min(qm.QMAX, zp))


def symmetric_weight_scales(w: np.ndarray, per_channel: bool, bits: int = 8) -> np.ndarray:
    """Scales that map each channel's (or the tensor's) largest |w| to the
    largest symmetric code: 127 for int8, 7 for int4."""
    if per_channel:
        m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1).astype(np.float64)
    else:
        m = np.full(w.shape[0], np.abs(w).max(), np.float64)
    scales = m / float(weight_code_max(bits))
    scales[scales == 0] = 1.0
    return scales.astype(np.float32).astype(np.float64)


def weight_code_max(bits: int) -> int:
    return (1 << (bits - 1)) - 1


def quantize_weights(w: np.ndarray, scales: np.ndarray, bits: int = 8) -> np.ndarray:
    s = scales.reshape((-1,) + (1,) * (w.ndim - 1))
    top = weight_code_max(bits)
    return np.clip(np.round(w / s), -top, top).astype(np.int8)


def takes_w4(g: Graph, n) -> bool:
    """Layers `--w4` stores with 4-bit weights: linear and the convolutions
    the cortex_m lowering makes quantized_conv2d (groups 1) or
    quantized_depthwise_conv2d (groups = Cin, one image, kernels.is_depthwise,
    a one-channel input's included): CMSIS-NN's s4 kernels. Other grouped
    convolutions keep 8 bits. Not a layer whose weights are a resize's own
    (attrs["resize_weights"]: capture's linear interpolation), which 4 bits
    would move off torch's sample positions."""
    if n.attrs.get("resize_weights"):
        return False
    if n.op == "linear":
        return True
    if n.op != "conv2d":
        return False
    groups = int(n.attrs["groups"])
    if groups == 1:
        return True
    from .backends.cortex_m.kernels import is_depthwise     # the lowering's own test
    x = g.node(n.inputs[0]).shape
    return x is not None and len(x) == 4 and is_depthwise(int(x[0]), int(x[1]), int(n.attrs["weight"].shape[0]),
                                                         groups)


# The largest int32 bias a layer's grids may give: half of int32, so that the
# kernels' sums of it with the input offset times the weights' sums (at most
# 255 * 127 * 33,000) stay in int32 too.
BIAS_LIMIT = 2.0 ** 30


def bias_fitting_scales(scales: np.ndarray, b: Optional[np.ndarray], s_in: float, per_channel: bool) -> np.ndarray:
    """The weights' scales, widened where the bias on the int32 grid
    s_in * scale would pass BIAS_LIMIT: a layer whose bias dwarfs its
    weights (a linear summed whole, `lin(x).sum(-1)`, whose rows cancel and
    whose biases add) keeps its bias exactly and its weights on a coarser
    grid, instead of a bias clipped to int32 (a silently wrong output).
    A per-tensor grid (a linear's) stays one scale."""
    if b is None or not s_in > 0:
        return scales
    need = np.abs(np.asarray(b, np.float64)).reshape(-1) / (float(s_in) * BIAS_LIMIT)
    if not per_channel or need.size != scales.size:
        need = np.full(scales.shape, need.max(initial=0.0))
    return np.maximum(scales, need.reshape(scales.shape)).astype(np.float32).astype(np.float64)


def quantize_bias(b: Optional[np.ndarray], s_in: float, w_scales: np.ndarray) -> Optional[np.ndarray]:
    if b is None:
        return None
    q = np.round(b.astype(np.float64) / (s_in * w_scales))
    return np.clip(q, -2 ** 31, 2 ** 31 - 1).astype(np.int32)


def _behind_views(g: Graph, n) -> List:
    """n, then the nodes behind it through reshapes (views: each keeps its
    input's grid) up to the first that is not one: the producer whose grid
    a cat input really has (the Conv3d stand-in's planes are unsqueezed
    convs), when each is read by the next alone."""
    chain = [n]
    while chain[-1].op == "reshape" and chain[-1].inputs:
        p = g.node(chain[-1].inputs[0])
        # only a producer the view alone reads: its grid concerns no one else
        if p.op in ("input", "constant", "state") or len(g.users(p.name)) != 1 or p.name in g.outputs:
            break
        chain.append(p)
    return chain


def _pieces_of_one_value(g: Graph, n) -> bool:
    """Every input of n is, through pass-through ops (slices, reshapes,
    pools: each keeps its input's grid), a piece of one value: so on one
    grid, which n then keeps (quantize)."""
    roots = set()
    for i in n.inputs:
        p = g.node(i)
        while p.op in PASS_THROUGH and p.inputs:
            p = g.node(p.inputs[0])
        roots.add(p.name)
    return len(roots) == 1


def _shared_cat_qparams(g: Graph, observer: RangeObserver) -> Dict[str, Tuple[float, int]]:
    """cat copies int8 bytes unchanged only if its inputs and its output share
    one scale and zero point (upstream's SharedQuantizationSpec). The shared
    qparams come from the output's range, which covers every input's; an
    input that is a view of a producer (through reshapes) shares them with
    that producer. A cat whose inputs have qparams fixed by something else
    (softmax's, a pass-through op's copy of its own input's, another cat's,
    a min/max of pieces of one value, which keeps that value's) is left out:
    quantize gives it its inputs' grid when they share one, else its own
    (its inputs then requantized, or the cat lowered in fp32)."""
    forced: Dict[str, Tuple[float, int]] = {}
    for n in g.nodes:
        if n.op != "cat" or n.attrs.get("act") or len(set(n.inputs)) != len(n.inputs):
            continue
        chains = [_behind_views(g, g.node(i)) for i in n.inputs]
        if n.name in forced or any(c[-1].op in PASS_THROUGH or c[-1].op in ("softmax", "masked_softmax")
                                   or (c[-1].op in ("minimum", "maximum") and _pieces_of_one_value(g, c[-1]))
                                   or any(v.name in forced for v in c) for c in chains):
            continue
        qp = affine_qparams(*observer.range(n.name))
        for name in [v.name for c in chains for v in c] + [n.name]:
            forced[name] = qp
    return forced


class StateGridError(ValueError):
    """A state whose int8 grid and the grid of the value written into it
    cannot be made one (one line, for the user)."""


def quantize(prepared: Graph, observer: RangeObserver, w4: bool = False,
             int8_layernorm: bool = False, a16=None) -> Graph:
    """w4: linear and conv layers get 4-bit weights (takes_w4; their nodes
    carry attrs["weight_bits"] = 4). int8_layernorm: layer norms are marked
    for ptec's own int8 kernel (attrs["int8_kernel"]); otherwise they stay
    fp32, as upstream runs them. a16: None, True (every layer that has an
    int16 kernel) or module paths: see mark_a16.

    A state and the value written into it share one grid (the write copies
    bytes). When that value's grid is fixed by something else (a slice of
    a cat, `cache <- cat([cache, x])[..., -k:]`, keeps the cat's; a cat
    input shares the cat's; a softmax's is 1/256), the state takes it: a
    second pass gives the state that grid (its readers then read it so),
    until the two agree."""
    grids: Dict[str, Tuple[float, int]] = {}
    for _ in range(4):
        g = _quantize_once(prepared, observer, w4, int8_layernorm, a16, grids)
        moved = {}
        for n in g.nodes:
            if n.op == "state_write":
                state = g.node(n.inputs[0])
                value = g.node(n.inputs[1]).qparams
                if value is not None and tuple(value) != tuple(state.qparams) and not state.attrs.get("dtype") \
                        and not state.attrs.get("fp32_state"):    # (nor a float32 one: capture_state_precision)
                    moved[state.name] = tuple(value)    # (an integer / bool state has no int8 grid)
                n.qparams = value
        if not moved:
            return g
        for name, qp in moved.items():
            _check_init_on_grid(g, g.node(name), qp)
        grids.update(moved)
    name = next(iter(moved))
    raise StateGridError(f"{_state_label(g.node(name))}: the value written into it and its readers need "
                         "different int8 grids; ptec keeps a state on the grid of the value written into it")


def _state_label(n) -> str:
    """How a refusal names a state: the model's buffer (a forward that
    writes its own tensor) or the --stateful layer's state."""
    return f"buffer {n.attrs[STATE]}" if n.attrs.get(STATE) else f"--stateful: state {n.name}"


def _check_init_on_grid(g: Graph, n, qp: Tuple[float, int]) -> None:
    """A state taking the grid of the value written into it must hold its
    initial value on it (the runtime stores the initial value in int8)."""
    s, z = qp
    init = np.asarray(n.attrs["init"], np.float64)
    lo, hi = (-128 - z) * s, (127 - z) * s
    if init.size and (float(init.min()) < lo - s / 2 or float(init.max()) > hi + s / 2):
        raise StateGridError(f"{_state_label(n)}: its initial value [{float(init.min()):g}, {float(init.max()):g}] "
                             f"is outside the int8 grid of the value written into it [{lo:g}, {hi:g}]: "
                             "ptec keeps a state on that grid")


def _quantize_once(prepared: Graph, observer: RangeObserver, w4: bool, int8_layernorm: bool, a16,
                   grids: Dict[str, Tuple[float, int]]) -> Graph:
    """One pass of quantize; grids: states given the grid of the value
    written into them (quantize)."""
    g = copy.deepcopy(prepared)
    shared = _shared_cat_qparams(g, observer)
    written = _state_values(g)
    for n in g.nodes:
        if observer.nonfinite(n.name):
            n.attrs["nonfinite"] = observer.nonfinite(n.name)
        if n.op == "state":
            n.qparams = grids.get(n.name) or _state_qparams(g, n, written, observer)
        elif n.op == "state_write":
            n.qparams = g.node(n.inputs[0]).qparams
        elif n.name in written and not (n.name in shared or n.op in PASS_THROUGH or n.op == "softmax"):
            # The copy into the state moves bytes: the value is computed on
            # the state's grid. (A value whose grid something else fixes
            # keeps it, and the state takes it: quantize.)
            n.qparams = g.node(written[n.name]).qparams
        elif n.name in shared:
            n.qparams = shared[n.name]
        elif n.op == "embedding" and len(n.inputs) == 2:
            # rows of a table computed in the program: copies of its bytes, on its grid
            n.qparams = g.node(n.inputs[1]).qparams
        elif n.op == "embedding":
            # rows of the table: its own range, so every row is on the grid
            w = np.asarray(n.attrs["weight"], np.float64)
            n.qparams = affine_qparams(float(w.min()), float(w.max()))
        elif n.op == "elementwise" and n.attrs.get("fn") in ("to_half", "to_bfloat16") and \
                g.node(n.inputs[0]).qparams is not None:
            # x.half(): the rounding to half precision on its input's own grid, which it
            # (nearly always) leaves in place: no second int8 rounding onto a grid of its own
            n.qparams = g.node(n.inputs[0]).qparams
        elif n.op == "bool_to" and n.attrs.get("dtype") == "float32":
            # a bool as 0/1: the grid holds both, whichever the calibration saw (a
            # mask never true there, as torch.isin of computed values or x.any() can
            # be, would otherwise get a grid on which 1 is no code)
            n.qparams = affine_qparams(0.0, 1.0)
        elif _whole_numbers_for_ids(g, n):
            lo, hi = observer.range(n.name)
            known = n.attrs.get("whole_range")       # a draw's whole numbers (capture_random_integers)
            if known:
                lo, hi = min(lo, known[0]), max(hi, known[1])
            n.qparams = whole_number_qparams(lo, hi)
        elif n.op in ("softmax", "masked_softmax"):
            n.qparams = (qm.SOFTMAX_OUTPUT_SCALE, qm.SOFTMAX_OUTPUT_ZERO_POINT)
        elif n.op == "random_dropout" and g.node(n.inputs[0]).qparams:
            # the input's grid scaled by 1 / (1 - p): a kept element keeps its
            # code (it means x / (1 - p)), a dropped one is the zero point
            s_in, z_in = g.node(n.inputs[0]).qparams
            n.qparams = (float(s_in) / (1.0 - n.attrs["p"]), z_in)
        elif (n.op in ("cat", "minimum", "maximum") and not n.attrs.get("act")
              and len(set(n.inputs)) > 1          # copies of one value (expand): its own observed grid
              and all(g.node(i).qparams for i in n.inputs)
              and len({tuple(g.node(i).qparams) for i in n.inputs}) == 1):
            # inputs already on one grid (pieces of one tensor: slices, pools):
            # the result is on it too, a copy of bytes or a choice of one (exact)
            n.qparams = g.node(n.inputs[0]).qparams
        elif n.op in PASS_THROUGH and n.inputs and not own_grid(n) \
                and n.attrs.get("fp32") != GATE_FP32:     # (capture_masking_readers, capture_steep_gates: own range)
            src = g.node(n.inputs[0])
            n.qparams = src.qparams if src.qparams is not None else affine_qparams(
                *observer.range(n.name))
        elif n.attrs.get("known_range"):
            # a value whose range is known beforehand (a uniform draw, capture_random):
            # its grid covers it even when the calibration's few draws fall short
            lo, hi = observer.range(n.name)
            known = n.attrs["known_range"]
            n.qparams = affine_qparams(min(lo, known[0]), max(hi, known[1]))
        else:
            n.qparams = affine_qparams(*observer.range(n.name))
        if n.op in ("conv2d", "linear"):
            s_in = g.node(n.inputs[0]).qparams[0]
            w = n.attrs["weight"]
            bits = 4 if w4 and takes_w4(g, n) else 8
            scales = symmetric_weight_scales(w, per_channel=(n.op == "conv2d"), bits=bits)
            if n.attrs.get("weight_scale") is not None:
                # the layer's own scale, on which each of its weights is a whole code
                scales = np.full_like(scales, float(np.float32(n.attrs["weight_scale"])))
            else:
                scales = bias_fitting_scales(scales, n.attrs.get("bias"), s_in, per_channel=(n.op == "conv2d"))
            n.attrs["weight_q"] = quantize_weights(w, scales, bits)
            n.attrs["weight_scales"] = scales
            n.attrs["weight_bits"] = bits
            n.attrs["bias_q"] = quantize_bias(n.attrs.get("bias"), s_in, scales)
        elif n.op == "conv_transpose2d":
            # weight [Cin, Cout/groups, KH, KW]: per output channel = axis 1 (§5)
            s_in = g.node(n.inputs[0]).qparams[0]
            w_oi = np.ascontiguousarray(n.attrs["weight"].transpose(1, 0, 2, 3))
            groups = n.attrs["groups"]
            scales = symmetric_weight_scales(w_oi, per_channel=(groups == 1))
            n.attrs["weight_q"] = np.ascontiguousarray(
                quantize_weights(w_oi, scales).transpose(1, 0, 2, 3))
            # grouped (not lowered to int8): one scale, repeated per output channel
            scales = np.resize(scales, n.shape[1]) if groups != 1 else scales
            n.attrs["weight_scales"] = scales
            n.attrs["bias_q"] = quantize_bias(n.attrs.get("bias"), s_in, scales)
        elif n.op == "pad":
            n.qparams = _pad_qparams(g, n, observer)
        elif n.op == "lstm":
            _quantize_lstm(n, observer)
        elif n.op == "svdf":
            quantize_svdf(n, g.node(n.inputs[0]).qparams[0], observer)
        elif n.op == "layer_norm" and int8_layernorm:
            n.attrs["int8_kernel"] = True
        elif n.op == "matmul" and _rows_are_probabilities(g, n.inputs[0]) and not n.attrs.get("own_context_grid"):
            # softmax(..) @ v: every output is a convex combination of v's
            # values, so v's range bounds it for any input, not only the
            # calibration inputs (attention outputs are otherwise clipped).
            n.qparams = g.node(n.inputs[1]).qparams
    _share_min_max_qparams(g)
    if a16:
        mark_a16(g, observer, None if a16 is True else list(a16))
    return g


# Ops with a 16-bit-activation kernel (ptec::*_a16, docs/kernels.md); a
# reshape between two of them stays int16.
A16_OPS = ("conv2d", "linear", "add", "mul", "avg_pool2d", "adaptive_avg_pool2d", "mean", "max_pool2d",
           "softmax", "clamp", "reshape", "lstm")
# Data moves that keep an int16 value int16 (lowering_a16: a transpose of a
# seq-first nn.LSTM's output, a conv's reflect / replicate / circular pad);
# not layers of their own, so --a16's refusal does not list them.
A16_MOVES = ("permute", "slice", "pad", "cat")


class A16SelectionError(ValueError):
    """--a16 named a layer the model does not have."""


def module_path(n) -> str:
    """The module path of a node (`features.3`), from its source."""
    source = n.attrs.get("source") or n.name
    return source.split(" ")[0]


def mark_a16(g: Graph, observer: RangeObserver, paths: Optional[List[str]] = None) -> List[str]:
    """int16 activations with 8-bit weights (`--a16`). Every node gets
    attrs["scale16"], its symmetric int16 grid (the observed range's
    largest magnitude at 32767; a pass-through op keeps its input's, a
    softmax's output is 1/32768), since any value may feed an int16 layer.
    The nodes `paths` selects (all when None: a node whose module path is a
    path or lies below one, or whose graph name is one) and that have an
    int16 kernel get attrs["a16"]; their int8 qparams stay, for int8
    consumers and for the forms that have no int16 kernel. Returns the
    names of the marked nodes."""
    for n in g.nodes:
        if n.op == "constant":
            continue
        src = g.node(n.inputs[0]) if n.inputs else None
        if n.op == "softmax":
            n.attrs["scale16"] = qm.SOFTMAX16_OUTPUT_SCALE
        elif n.op in PASS_THROUGH and src is not None and "scale16" in src.attrs:
            n.attrs["scale16"] = src.attrs["scale16"]
        elif n.name in observer.lo:
            lo, hi = observer.range(n.name)
            n.attrs["scale16"] = float(np.float32(max(abs(lo), abs(hi), 1e-8) / 32767.0))

    def chosen(n) -> bool:
        if paths is None:
            return True
        p = module_path(n)
        return any(p == q or p.startswith(q + ".") or n.name == q for q in paths)
    if paths is not None:
        unknown = [q for q in paths if not any(module_path(n) == q or module_path(n).startswith(q + ".")
                                               or n.name == q for n in g.nodes)]
        if unknown:
            layers = list(dict.fromkeys(module_path(n) for n in g.nodes if n.op in A16_OPS))
            raise A16SelectionError(f"16-bit activations for {', '.join(unknown)}: the model has no such layer "
                                    f"(its layers: {', '.join(layers[:12])}{', ...' if len(layers) > 12 else ''})")
    marked = []
    for n in g.nodes:
        if n.op in A16_OPS + A16_MOVES and "scale16" in n.attrs and chosen(n):
            n.attrs["a16"] = True
            marked.append(n.name)
    return marked


def _state_values(g: Graph) -> Dict[str, str]:
    """{value written into a state: that state} (state_write nodes)."""
    written: Dict[str, str] = {}
    for n in g.nodes:
        if n.op == "state_write":
            state, value = n.inputs
            while g.node(value).op in ("reshape", "identity") and n.attrs.get(STATE):
                value = g.node(value).inputs[0]     # a written buffer: the bytes of what the reshapes read
            shared = value in written or g.node(value).op in ("state", "input", "constant")
            if shared and g.node(state).attrs.get("dtype"):
                continue        # an integer / bool buffer: the value copied as it is, no grid to share
            if shared:
                raise StateGridError(f"{_state_label(g.node(state))} must be written with a value "
                                     "computed in the run, one state per value")
            written[value] = state
    return written


def _state_qparams(g: Graph, n, written: Dict[str, str], observer: RangeObserver) -> Tuple[float, int]:
    """A state's int8 grid: [-bound, bound] when the layer knows one (a GRU's
    hidden state), else the range calibration saw of the value written into
    it, which also covers its initial value."""
    bound = n.attrs.get("bound")
    if bound is not None:
        return affine_qparams(-float(bound), float(bound))
    values = [v for v, s in written.items() if s == n.name]
    if not values and n.attrs.get("dtype"):
        return affine_qparams(*observer.range(n.name))      # (unused: an integer / bool state has no grid)
    if not values:
        raise StateGridError(f"{_state_label(n)} is never written")
    lo, hi = observer.range(values[0])
    init = np.asarray(n.attrs["init"], np.float64)
    return affine_qparams(min(lo, float(init.min())), max(hi, float(init.max())))


def lstm_cell_scale_power(max_abs_cell: float) -> int:
    """The cell state's scale 2^p (a power of two, as CMSIS-NN and TFLite
    require): the smallest p whose int16 range, 2^(p + 15), covers the
    observed |c|, at least 1.0 (p >= -15) and at most 2^17 (p <= 2)."""
    need = max(float(max_abs_cell), 1.0)
    return int(min(max(math.ceil(math.log2(need)) - 15, -15), 2))


def _quantize_lstm(n, observer: RangeObserver) -> None:
    """An nn.LSTM layer for ptec::quantized_lstm (docs/kernels.md "LSTM"):
    each gate's input and hidden weights int8 with one symmetric scale per
    gate and side (CMSIS-NN's per-tensor weights), the cell scale from the
    calibrated cell range. The lowering rounds the bias in the input
    product's scale, which needs the input's grid."""
    hidden = n.attrs["hidden"]
    lo, hi = observer.range(n.name + CELL_SUFFIX)
    n.attrs["cell_scale_power"] = lstm_cell_scale_power(max(abs(lo), abs(hi)))
    for side in ("ih", "hh"):
        w = np.asarray(n.attrs["weight_" + side], np.float64)
        scales = np.array([symmetric_weight_scales(w[k * hidden:(k + 1) * hidden], False)[0] for k in range(4)])
        n.attrs["weight_scales_" + side] = scales
        n.attrs["weight_q_" + side] = np.concatenate(
            [quantize_weights(w[k * hidden:(k + 1) * hidden], np.full(hidden, scales[k])) for k in range(4)])


def _rows_are_probabilities(g: Graph, name: str) -> bool:
    n = g.node(name)
    # a masked softmax's rows sum to 1 too, or are all 0 (fully masked): 0 is in v's range
    return (n.op in ("softmax", "masked_softmax") and n.shape is not None
            and n.attrs["dim"] % len(n.shape) == len(n.shape) - 1)


def _pad_qparams(g: Graph, n, observer: RangeObserver) -> Tuple[float, int]:
    """Reflect and replicate pads copy input values, so they keep the
    input's grid. A constant pad keeps it when the pad value lies on it
    (zero always does), so the op moves bytes only; otherwise the output's
    observed range, which contains the pad value."""
    src = g.node(n.inputs[0]).qparams
    if n.attrs.get("mode", "constant") != "constant":
        return src  # reflect and replicate copy input values: the input's grid
    v = float(n.attrs.get("value", 0.0))
    q = qm.quantize_value(v, src[0], src[1])
    if abs((q - src[1]) * src[0] - v) <= 1e-6 * max(1.0, abs(v)):
        return src
    return affine_qparams(*observer.range(n.name))


def _share_min_max_qparams(g: Graph) -> None:
    """cortex_m::minimum/maximum compare raw int8 bytes, so both inputs must
    be on the output's grid. A producer used only by the min/max whose
    qparams are free takes the output's; other inputs are requantized when
    lowered."""
    for n in g.nodes:
        if n.op not in ("minimum", "maximum"):
            continue
        for i in n.inputs:
            p = g.node(i)
            if (p.op in FREE_QPARAMS and i not in g.outputs
                    and [u.name for u in g.users(i)] == [n.name]):
                p.qparams = n.qparams


def quantize_graph(graph: Graph, calibration: Sequence[Sequence[torch.Tensor]],
                   config: QuantConfig = QuantConfig(), progress=None, w4: bool = False) -> Graph:
    prepared = prepare(graph)
    return quantize(prepared, calibrate(prepared, calibration, config, progress), w4)


@torch.no_grad()
def simulate(q: Graph, inputs: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    """Float evaluation with int8 fake quantization of every activation and
    weight: an estimate of the int8 program's accuracy without the runtime."""
    def fq(t: torch.Tensor, qp) -> torch.Tensor:
        s, z = qp
        return (torch.clamp(torch.round(t / s) + z, qm.QMIN, qm.QMAX) - z) * s
    env: Dict[str, torch.Tensor] = {}
    from .ir import input_dtype
    for name, x in zip(q.inputs, inputs):
        t = torch.as_tensor(x, dtype=input_dtype(q.node(name)))
        env[name] = t if t.dtype != torch.float32 else fq(t, q.node(name).qparams)
    from .ir import eval_node
    for n in q.nodes:
        if n.op == "input":
            continue
        m = n
        if n.op in ("conv2d", "linear", "conv_transpose2d"):
            m = copy.copy(n)
            m.attrs = dict(n.attrs)
            s = n.attrs["weight_scales"].reshape((-1,) + (1,) * (n.attrs["weight"].ndim - 1))
            if n.op == "conv_transpose2d":
                s = s.reshape(1, -1, 1, 1)
            m.attrs["weight"] = (n.attrs["weight_q"].astype(np.float32) * s).astype(np.float32)
            if n.attrs.get("bias_q") is not None:
                s_in = q.node(n.inputs[0]).qparams[0]
                m.attrs["bias"] = (n.attrs["bias_q"].astype(np.float64)
                                   * s_in * n.attrs["weight_scales"]).astype(np.float32)
        y = eval_node(m, [env[i] for i in n.inputs])
        # bool and integer values (comparisons, indices) are exact, never rounded
        env[n.name] = fq(y, n.qparams) if n.qparams and y.is_floating_point() else y
    return [env[o] for o in q.outputs]
