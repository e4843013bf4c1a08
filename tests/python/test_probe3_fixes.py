"""Probe 3's crashes and internal failures (/work/notes/repro), each now
torch's answer or a one-line refusal:

- nn.BatchNorm1d / 2d(track_running_stats=False): batch statistics in
  eval too (traced into F.batch_norm(x, None, None, training=True));
  InstanceNorm with track_running_stats=True in eval: its running stats.
- zero-size nn.Linear (nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 10]) has
  Linear(8, 0) -> Linear(0, 10)): the bias rows, the empty layer dropped
  (capture_empty); an empty output refused in one line.
- models torch.ao.quantization prepared / converted: refused in one line
  (give ptec the float model); QuantStub / DeQuantStub alone: identity.
- a lookup table in a buffer indexed by argmax / topk: as a parameter.
- F.cross_entropy / F.nll_loss with ignore_index hit by a computed target.

Oracle: torch float32 on the same inputs; int8 outputs within a bound in
output steps (measured figures beside each), integer outputs exact; the
host runtime's bytes equal to the reference interpreter's."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


def _worst_steps(model, feeds, tmp_path, calib=None):
    """Compile on calib (default: feeds), run each feed on the host; the
    largest |ptec - torch| of the first output in its output steps (0 for
    an exact integer output)."""
    model = model.eval()
    res = compile_model(model, list(feeds[0]), calib or feeds)
    prog = parse_program(res.data)
    out = res.graph.node(res.graph.outputs[0])
    worst = 0.0
    for feed in feeds:
        arrays = [t.numpy() for t in feed]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
        assert [g.tobytes() for g in got] == [np.asarray(w).tobytes() for w in run_program(prog, arrays)]
        with torch.no_grad():
            want = model(*feed)
        want = want[0] if isinstance(want, tuple) else want
        if not want.dtype.is_floating_point:
            assert np.array_equal(got[0], want.numpy())
            continue
        assert np.isfinite(got[0]).all() == np.isfinite(want.numpy()).all()
        worst = max(worst, float(np.abs(got[0] - want.numpy()).max() / out.qparams[0]))
    print(f"worst |ptec - float|: {worst:.2f} output steps")
    return worst


def _feeds(*shapes, n=6, seed=0, make=None):
    g = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(s, generator=g) for s in shapes) if make is None else make(g) for _ in range(n)]


# ---- 1. batch norm without running statistics

class _Norm(nn.Module):
    def __init__(self, norm, conv=False):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(3, 4, 3, padding=1) if conv else None
        self.norm = norm
        with torch.no_grad():
            if getattr(norm, "weight", None) is not None:
                norm.weight.uniform_(0.5, 1.5)
                norm.bias.uniform_(-0.5, 0.5)
            if getattr(norm, "running_mean", None) is not None:
                norm.running_mean.uniform_(-0.3, 0.3)
                norm.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.norm(self.conv(x) if self.conv is not None else x)


@pytest.mark.parametrize("norm,shape,conv,bound", [
    (lambda: nn.BatchNorm1d(4, track_running_stats=False), (5, 4), False, 2.0),                    # 1.45
    (lambda: nn.BatchNorm1d(4, track_running_stats=False, affine=False), (3, 4, 6), False, 1.5),   # 0.85
    (lambda: nn.BatchNorm2d(4, track_running_stats=False), (2, 3, 5, 5), True, 2.5),               # 2.03
    # eval with running stats: torch normalizes by them (a batch norm folded into the layer before)
    (lambda: nn.InstanceNorm1d(4, track_running_stats=True, affine=True), (2, 4, 7), False, 1.5),  # 0.94
    (lambda: nn.InstanceNorm2d(4, track_running_stats=True), (1, 3, 5, 5), True, 2.0),             # 1.57
])
def test_norm_statistics(norm, shape, conv, bound, tmp_path):
    model = _Norm(norm(), conv)
    assert _worst_steps(model, _feeds(shape), tmp_path) <= bound


# ---- 2. zero-size layers

class _AdaptiveLogSoftmax(nn.Module):
    """log_prob of nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 10]): its second tail is Linear(8, 0) -> Linear(0, 10)."""

    def __init__(self, bias=False):
        super().__init__()
        torch.manual_seed(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # torch: initializing zero-element tensors is a no-op
            self.a = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 10], head_bias=bias)

    def forward(self, x):
        return self.a.log_prob(x)


class _ZeroIn(nn.Module):
    """Linear(8, 0) read only by Linear(0, 3) (bias): torch gives the bias on every row."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.empty, self.fill, self.fc = nn.Linear(8, 0), nn.Linear(0, 3), nn.Linear(8, 3)
        with torch.no_grad():
            self.fill.bias.copy_(torch.tensor([0.5, -1.0, 2.0]))

    def forward(self, x):
        return self.fc(x) + self.fill(self.empty(x))


@pytest.mark.parametrize("model,bound", [(_AdaptiveLogSoftmax, 1.5),                 # 1.29
                                         (lambda: _AdaptiveLogSoftmax(True), 1.5),    # 1.18
                                         (_ZeroIn, 1.0)])                             # 0.91
def test_zero_size_linear(model, bound, tmp_path):
    assert _worst_steps(model(), _feeds((3, 8)), tmp_path) <= bound


def test_zero_size_output_refused(tmp_path):
    line = cli_refusal(tmp_path, "import torch, torch.nn as nn\n"
                                 "def model():\n"
                                 "    return nn.Sequential(nn.Linear(8, 4), nn.Linear(4, 0)), (torch.randn(2, 8),)\n")
    assert "1 (nn.Linear)" in line and "empty tensor 2x0" in line, line


def test_new_empty_partly_written_still_refused(tmp_path):
    line = cli_refusal(tmp_path, "import torch\n"
                                 "class M(torch.nn.Module):\n"
                                 "    def forward(self, x):\n"
                                 "        y = x.new_empty(2, 6)\n"
                                 "        y[:, :4] = x\n"
                                 "        return y\n"
                                 "def model():\n"
                                 "    return M(), (torch.randn(2, 4),)\n")
    assert "new_empty" in line and "undefined" in line, line


# ---- 5. cross entropy / nll loss with ignore_index

class _Loss(nn.Module):
    def __init__(self, fn, **kw):
        super().__init__()
        self.fn, self.kw = fn, kw

    def forward(self, y, lab):
        if self.fn is F.nll_loss:
            y = y.log_softmax(1)
        return self.fn(y, lab, **self.kw)


def _labels(shape, classes, ignore, seed):
    def make(g):
        lab = torch.randint(0, classes, shape, generator=g)
        lab[torch.rand(shape, generator=g) < 0.3] = ignore
        lab.view(-1)[0] = 0                     # one kept entry at least: torch's mean of none is NaN
        return torch.randn((shape[0], classes) + tuple(shape[1:]), generator=g), lab
    return _feeds(n=8, seed=seed, make=make)


@pytest.mark.parametrize("fn,kw,shape,bound", [
    (F.cross_entropy, dict(reduction="sum"), (6,), 1.5),                                            # 1.32
    (F.cross_entropy, dict(reduction="mean"), (6,), 1.5),                                           # 1.13
    (F.cross_entropy, dict(reduction="none"), (6,), 1.5),                                           # 1.12
    (F.cross_entropy, dict(reduction="mean", ignore_index=2), (6,), 1.5),                           # 1.19
    # the mean divides by the kept entries' weight sum, a computed value: one more int8 rounding
    (F.cross_entropy, dict(reduction="mean", weight=torch.tensor([0.5, 1.0, 2.0, 1.5])), (6,), 3.5),  # 2.85
    (F.cross_entropy, dict(reduction="mean"), (3, 5), 2.5),                                         # 2.00
    (F.nll_loss, dict(reduction="mean"), (6,), 1.5),                                                # 1.13
    (F.nll_loss, dict(reduction="sum", ignore_index=7), (6,), 1.5),                                 # 1.32
])
def test_ignore_index(fn, kw, shape, bound, tmp_path):
    ignore = kw.get("ignore_index", -100)
    feeds = _labels(shape, 4, ignore, 5)
    assert any((lab == ignore).any() for _, lab in feeds)
    assert _worst_steps(_Loss(fn, **kw), feeds, tmp_path) <= bound


# ---- 4. a buffer (or a constant made in forward) indexed by a computed index

class _Lookup(nn.Module):
    def __init__(self, fn, parameter=False):
        super().__init__()
        self.fn = fn
        g = torch.Generator().manual_seed(4)
        y, t = torch.randn(20, generator=g), torch.randn(20, 3, generator=g)
        if parameter:
            self.y, self.t = nn.Parameter(y), nn.Parameter(t)
        else:
            self.register_buffer("y", y)
            self.register_buffer("t", t)
        self.register_buffer("labels", torch.randint(0, 5, (20,), generator=g))

    def forward(self, x):
        return self.fn(self, x)


LOOKUPS = {     # name: (fn, bound in output steps; integer results exact)
    "y[argmax]": (lambda s, x: s.y[x.argmax(-1)], 0.5),                                         # 0.48
    "y[topk]": (lambda s, x: s.y[x.topk(3, -1).indices], 0.5),                                  # 0.48
    "t[argmax] (rows)": (lambda s, x: s.t[x.argmax(-1)], 0.5),                                  # 0.49
    "t[argmax, 1]": (lambda s, x: s.t[x.argmax(-1), 1], 0.5),                                   # 0.48
    "index_select(y)": (lambda s, x: torch.index_select(s.y, 0, x.argmax(-1)), 0.5),            # 0.48
    "take(y, topk)": (lambda s, x: torch.take(s.y, x.topk(2, -1).indices), 0.5),                # 0.48
    "gather(y.expand, topk)": (lambda s, x: torch.gather(s.y.expand(4, 20), 1, x.topk(2, -1).indices), 0.5),
    "arange made in forward[argmax]": (lambda s, x: (torch.arange(20.) * 0.5)[x.argmax(-1)], 0.5),  # 0.47
    "labels[argmax] (int64)": (lambda s, x: s.labels[x.argmax(-1)], 0),
    "index_select(labels)": (lambda s, x: torch.index_select(s.labels, 0, x.argmax(-1)), 0),
    "take(labels, topk)": (lambda s, x: torch.take(s.labels, x.topk(2, -1).indices), 0),
    "int arange[argmax]": (lambda s, x: (torch.arange(20) * 3)[x.argmax(-1)], 0),
    "kNN vote": (lambda s, x: F.one_hot(s.labels[x.topk(5, -1).indices], 5).float().sum(1).argmax(-1), 0),
}


@pytest.mark.parametrize("name", sorted(LOOKUPS))
@pytest.mark.parametrize("parameter", [False, True])
def test_buffer_lookup(name, parameter, tmp_path):
    fn, bound = LOOKUPS[name]
    assert _worst_steps(_Lookup(fn, parameter), _feeds((4, 20)), tmp_path) <= bound


# ---- 3. models torch.ao.quantization prepared or converted

_QNET = """import copy, torch, torch.nn as nn
import torch.ao.quantization as tq
from torch.ao.quantization.quantize_fx import prepare_fx, convert_fx
engine = "qnnpack" if "qnnpack" in torch.backends.quantized.supported_engines else torch.backends.quantized.engine
torch.backends.quantized.engine = engine
class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.c, self.r, self.fc, self.dq = tq.QuantStub(), nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Linear(64, 3), tq.DeQuantStub()
    def forward(self, x):
        return self.dq(self.fc(self.r(self.c(self.q(x))).flatten(1)))
x = torch.randn(1, 3, 6, 6)
def prepared():
    m = QNet().eval()
    m.qconfig = tq.get_default_qconfig(engine)
    p = tq.prepare(m)
    p(x)
    return p
def fx_prepared():
    p = prepare_fx(QNet().eval(), tq.get_default_qconfig_mapping(engine), (x,))
    p(x)
    return p
def qat():
    m = QNet().train()
    m.qconfig = tq.get_default_qat_qconfig(engine)
    return tq.prepare_qat(m).eval()
"""

AO_FORMS = {
    "prepare": ("prepared(), (x,)", "HistogramObserver"),
    "convert": ("tq.convert(prepared()), (x,)", "module q (torch.ao.nn.quantized.modules.Quantize)"),
    "prepare_fx": ("fx_prepared(), (x,)", "Observer"),
    "convert_fx": ("convert_fx(fx_prepared()), (x,)", "convert_fx"),
    "prepare_qat": ("qat(), (x,)", "FakeQuantize"),
    "quantize_dynamic": ("tq.quantize_dynamic(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)).eval(), "
                         "{nn.Linear}, dtype=torch.qint8), (torch.randn(2, 8),)", "module 0 (torch.ao.nn.quantized.dynamic"),
}


@pytest.mark.parametrize("form", sorted(AO_FORMS))
def test_torch_ao_quantized_refused(form, tmp_path):
    made, named = AO_FORMS[form]
    line = cli_refusal(tmp_path, _QNET + f"def model():\n    return {made}\n")
    assert named in line and "give it the model before torch.ao.quantization's prepare/convert" in line, line


def test_quant_stubs_of_a_float_model_run(tmp_path):
    """QuantStub / DeQuantStub never prepared are identity in forward; fuse_modules' float ConvReLU2d runs too."""
    import torch.ao.quantization as tq

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(6)
            self.q, self.c, self.r, self.fc, self.dq = tq.QuantStub(), nn.Conv2d(3, 4, 3), nn.ReLU(), \
                nn.Linear(64, 3), tq.DeQuantStub()

        def forward(self, x):
            return self.dq(self.fc(self.r(self.c(self.q(x))).flatten(1)))
    assert _worst_steps(Net(), _feeds((2, 3, 6, 6)), tmp_path) <= 2.0                  # 1.66
    fused = tq.fuse_modules(Net().eval(), [["c", "r"]])
    assert _worst_steps(fused, _feeds((2, 3, 6, 6)), tmp_path) <= 2.0                  # 1.66
