"""Fixes from the review of the type() stand-in and nms's computed threshold
(the review of 2026-11-27, findings 1-4).

1. `type` bound before the trace outside the module's globals (a default
   argument, a keyword-only default, a class attribute, an instance
   attribute) answers as torch does, and is put back exactly after; a
   computed getattr(y, "__cl" + "ass__") of a traced value is refused in
   one line (it compiled fx's branch silently).
2. nms's iou_threshold computed in float64 is refused in one line
   (torchvision compares with the double; ptec's kernel reads a float32).
3. nms's computed threshold is computed in fp32 from the program's inputs
   and layers' outputs (it was int8: other pairs suppressed than torch's).
4. Two threads' compiles serialize on one process-wide lock (forced to
   trace at once, they failed with odd errors); a compile inside a trace
   is refused in one line.

Oracles: PyTorch float (the model's eager forward; within a bound in
output steps for a layer's output, exact for nms's indices) and
torchvision's own nms on the program's threshold."""
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.pte import parse_program
from ptec.interpreter import run_program

from model_checks import host_steps_from_float
from nms_models import ComputedThreshold, run_feed

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")

BOUND = 2.0     # output steps; fx's branch (-y against 3 * y) is about a hundred steps away


def _samples(n=8, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 5, generator=g),) for _ in range(n)]


def _helper_default(y, _type=type):
    return y * 3 if _type(y) is torch.Tensor else -y


def _helper_kwdefault(y, *, _type=type):
    return y * 3 if _type(y) is torch.Tensor else -y


class _Base(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(5, 8)


class DefaultArg(_Base):
    def forward(self, x):
        return _helper_default(self.l(x))


class KwDefault(_Base):
    def forward(self, x):
        return _helper_kwdefault(self.l(x))


class ClassAttr(_Base):
    _t = type

    def forward(self, x):
        y = self.l(x)
        return y * 3 if self._t(y) is torch.Tensor else -y


class InstanceAttr(_Base):
    def __init__(self):
        super().__init__()
        self._t = type

    def forward(self, x):
        y = self.l(x)
        return y * 3 if self._t(y) is torch.Tensor else -y


class ListedType(_Base):
    """type in a container of the instance (round 23: it used to take fx's branch, -y, silently)."""
    def __init__(self, form):
        super().__init__()
        self.form = form
        self.fns = {"list": [len, type], "dict": {"t": type}, "tuple": (len, type)}[form]

    def forward(self, x):
        y = self.l(x)
        t = self.fns["t"] if self.form == "dict" else self.fns[1]
        return y * 3 if t(y) is torch.Tensor else -y


def _bindings():
    return (_helper_default.__defaults__, _helper_kwdefault.__kwdefaults__, vars(ClassAttr)["_t"],
            "type" in globals(), "getattr" in globals())


@pytest.mark.parametrize("cls", [DefaultArg, KwDefault, ClassAttr, InstanceAttr, "list", "dict", "tuple"])
def test_type_bound_outside_the_globals_takes_torchs_branch(cls, tmp_path):
    before = _bindings()
    defaults, kwdefaults = _helper_default.__defaults__, _helper_kwdefault.__kwdefaults__
    model = ListedType(cls).eval() if isinstance(cls, str) else cls().eval()
    held = getattr(model, "fns", None)
    items = list(held.values() if isinstance(held, dict) else held or ())
    cal = _samples()
    with torch.no_grad():
        y = model.l(cal[0][0])
        step = float(y.abs().max()) * 2 / 255
        assert float((model(cal[0][0]) + y).abs().max()) / step > 20 * BOUND    # fx's branch is far: can fail
    res = compile_model(model, cal[0], cal)
    got = run_program(parse_program(res.data), [cal[0][0].numpy()])[0]
    assert got.shape == (2, 8)
    assert host_steps_from_float(model, res, cal[:4], tmp_path) <= BOUND
    # put back exactly: the same objects
    after = _bindings()
    assert after == before and _helper_default.__defaults__ is defaults
    assert _helper_kwdefault.__kwdefaults__ is kwdefaults
    assert _helper_default.__defaults__[0] is type and vars(ClassAttr)["_t"] is type
    assert cls is not InstanceAttr or vars(model)["_t"] is type
    if held is not None:                                          # the same container, its items as they were
        assert model.fns is held and list(held.values() if isinstance(held, dict) else held) == items
        assert all(a is b for a, b in zip(held.values() if isinstance(held, dict) else held, items))


class ComputedDunderClass(_Base):
    def forward(self, x):
        y = self.l(x)
        name = "__cl" + "ass__"
        return y * 3 if getattr(y, name) is torch.Tensor else -y


def test_getattr_of_a_computed_dunder_class_is_refused_in_one_line():
    cal = _samples()
    with pytest.raises((ValueError, RuntimeError)) as e:
        compile_model(ComputedDunderClass().eval(), cal[0], cal)
    message = str(e.value)
    assert "x.__class__ of a traced value" in message and "getattr(y, name)" in message, message
    assert "\n" not in message and "Traceback" not in message, message
    assert "getattr" not in globals() and "__getattribute__" not in vars(torch.fx.Proxy)


class ObjectGetattribute(_Base):
    def forward(self, x):
        y = self.l(x)
        return y * 3 if object.__getattribute__(y, "__class__") is torch.Tensor else -y


def test_object_getattribute_of_dunder_class_is_refused_in_one_line():
    """object.__getattribute__(y, "__class__") bypasses every hook of
    __getattribute__: it gave fx's Proxy, so the program held -y silently
    (round 23: the proxy's __class__ property refuses it)."""
    cal = _samples()
    with pytest.raises((ValueError, RuntimeError)) as e:
        compile_model(ObjectGetattribute().eval(), cal[0], cal)
    message = str(e.value)
    assert "x.__class__ of a traced value" in message and "object.__getattribute__(y" in message, message
    assert "\n" not in message and "Traceback" not in message, message
    assert "__getattribute__" not in vars(torch.fx.Proxy) and sys.getprofile() is None


class Float64Threshold(nn.Module):
    def forward(self, boxes, scores, x):
        return tv.nms(boxes, scores, x.double().sum() - 1e-12)


def test_float64_threshold_is_refused_in_one_line():
    # the review's near tie: x the float32 IoU of the two boxes, the double threshold just below it:
    # torchvision suppresses box 1, a float32 threshold (x itself) would keep it
    b = torch.tensor([[0., 0., 10., 10.], [0., 0., 10., 3.]])
    s = torch.tensor([0.9, 0.8])
    x = tv.box_iou(b[:1], b[1:])[0, 0].reshape(1).clone()
    assert Float64Threshold()(b, s, x).tolist() == [0] and tv.nms(b, s, float(x)).tolist() == [0, 1]
    with pytest.raises(Exception) as e:
        compile_model(Float64Threshold().eval(), [b, s, x], [[b, s, x]] * 2)
    message = str(e.value)
    assert type(e.value).__name__ == "UnsupportedOperator", message
    assert "torchvision.ops.nms" in message and "float64" in message and "in float32" in message, message
    assert "\n" not in message, message


def _boxes(g, k=80):
    lo = torch.rand(k, 2, generator=g) * 8.0
    b = torch.cat([lo, lo + torch.rand(k, 2, generator=g) * 5 + 0.25], 1)
    return b, (torch.randint(0, 6, (k,), generator=g).float() / 5)


class ThresholdOfInput(nn.Module):
    """The threshold computed from a feature input with no layer between."""
    def forward(self, boxes, scores, feat):
        t = torch.sigmoid(feat * 1.5).mean() * 0.6 + 0.2
        return tv.nms(boxes, scores, t), t


def _agreement(model, tmp_path, n=40):
    """(feeds whose indices are torch float's, feeds whose indices are torchvision's on the program's threshold)."""
    g = torch.Generator().manual_seed(11)

    def feed():
        b, s = _boxes(g)
        return [b, s, torch.randn(1, 8, generator=g) * 2]
    cal = [feed() for _ in range(16)]
    res = compile_model(model, cal[0], cal)
    same_float = same_own = 0
    lengths = set()
    for _ in range(n):
        f = feed()
        out = run_feed(res, f, tmp_path)
        got, t = np.asarray(out[0]), np.asarray(out[1], dtype=np.float32).reshape(())
        assert got.dtype == np.int64
        with torch.no_grad():
            want = model(*f)[0].numpy()
        lengths.add(len(want))
        same_float += np.array_equal(got, want)
        same_own += np.array_equal(got, tv.nms(f[0], f[1], torch.from_numpy(t.copy())).numpy())
    assert len(lengths) > 3, lengths           # the threshold moves which boxes are kept
    return same_float, same_own


def test_threshold_from_an_input_is_torch_floats_exactly(tmp_path):
    # measured: 40 of 40 feeds (before, int8 sigmoid and mean: 35 of 40)
    same_float, same_own = _agreement(ThresholdOfInput().eval(), tmp_path)
    assert same_float == 40 and same_own == 40


def test_threshold_of_an_int8_layer_is_torch_floats_on_most_feeds(tmp_path):
    # measured: 28 of 40 feeds (fc's output is int8, as every layer's output, and it dominates the
    # threshold's error: 29 of 40 with sigmoid and mean int8 too), torchvision's on the program's own
    # threshold on all 40
    same_float, same_own = _agreement(ComputedThreshold().eval(), tmp_path)
    assert same_float >= 26 and same_own == 40, (same_float, same_own)


class _CompilesWhileTraced(_Base):
    def forward(self, x):
        y = self.l(x)
        if "tracer" in vars(y):           # a proxy (object.__getattribute__(y, "__class__") is refused: round 23)
            cal = _samples(2)
            compile_model(DefaultArg().eval(), cal[0], cal)
        return torch.relu(y)


def test_a_compile_inside_a_trace_is_refused_in_one_line():
    cal = _samples()
    with pytest.raises(Exception) as e:
        compile_model(_CompilesWhileTraced().eval(), cal[0], cal)
    message = str(e.value)
    assert "compile is not reentrant" in message and "\n" not in message, message
    assert "type" not in globals() and "getattr" not in globals()
    assert _helper_default.__defaults__[0] is type
