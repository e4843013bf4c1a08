"""`type(x)` checks in a forward (probe: trace fidelity).

torch.fx hands the forward Proxies, so `type(x) is torch.Tensor`,
`type(x) == torch.Tensor`, `type(x) in (...)`, `type(x) is not
torch.Tensor`, `type(x).__name__ == 'Tensor'` and `type(self.weight) is
nn.Parameter` saw fx's Proxy, and the program held the branch fx took,
silently (docs/aot.md). Now the model's `type` answers as torch does
while fx traces (ptec.capture_type_checks), a value ptec cannot answer for
is refused in one line, and the model's modules get their globals back.

Oracle: PyTorch float (the model's eager forward), within a bound in
output quantization steps on inputs whose outputs vary; the two branches
of every check differ by far more than the bound (-y against 3 * y, about
a hundred output steps). ptec-run gives the reference interpreter's bytes
(host_steps_from_float)."""
import builtins
import importlib.util
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model
from ptec.pte import parse_program
from ptec.interpreter import run_program

import type_checks_helpers
from layer_fn_model import LayerFn, samples, steps
from test_compiler import ENV

BOUND = 2.0         # output steps




def _wrong_branch_far(fn, flip):
    """The branch fx took (flip: the check's other answer) is far from torch's: the test can fail."""
    m = LayerFn(fn).eval()
    x = samples()[0][0]
    with torch.no_grad():
        y = m.l(x)
        step = float(y.abs().max()) * 2 / 255
        return float((fn(m, x) - flip(y, x)).abs().max()) / step > 20 * BOUND


def _closure(s, x):
    y = s.l(x)

    def pick(v):
        return v * 3 if type(v) is torch.Tensor else -v
    return pick(y)


class _Picker:
    """A plain class of the model's file whose method asks type()."""
    def __call__(self, y):
        return y * 3 if type(y) in (torch.Tensor, list) else -y


# check: model fn; both give 3 * y when torch's answer is taken, -y (or x) when fx's was
CHECKS = {
    "type(y) is torch.Tensor": lambda s, x: s.l(x) * 3 if type(s.l(x)) is torch.Tensor else -s.l(x),
    "type(y) == torch.Tensor": lambda s, x: s.l(x) * 3 if type(s.l(x)) == torch.Tensor else -s.l(x),
    "type(y) in (torch.Tensor, list)": lambda s, x: s.l(x) * 3 if type(s.l(x)) in (torch.Tensor, list) else -s.l(x),
    "type(y) is not torch.Tensor": lambda s, x: -s.l(x) if type(s.l(x)) is not torch.Tensor else s.l(x) * 3,
    "type(y).__name__ == 'Tensor'": lambda s, x: s.l(x) * 3 if type(s.l(x)).__name__ == "Tensor" else -s.l(x),
    "type(x) is torch.Tensor (the input)": lambda s, x: s.l(x) * 3 if type(x) is torch.Tensor else -s.l(x),
    "type(self.weight) is nn.Parameter": lambda s, x: s.l(x) * 3 if type(s.l.weight) is nn.Parameter else -s.l(x),
    "type(x.shape[0]) is int": lambda s, x: s.l(x) * 3 if type(x.shape[0]) is int else -s.l(x),
    "a nested helper (closure)": _closure,
    "a lambda in the forward": lambda s, x: (lambda v: v * 3 if type(v) is torch.Tensor else -v)(s.l(x)),
    "a method of another class": lambda s, x: _Picker()(s.l(x)),
    "another module, from builtins import type": lambda s, x: type_checks_helpers.scaled_if_tensor(s.l(x)),
    "another module, builtins.type(y)": lambda s, x: type_checks_helpers.scaled_if_tensor_spelled_builtins(s.l(x)),
    "another module, from builtins import type as builtin_type":
        lambda s, x: type_checks_helpers.scaled_if_tensor_aliased(s.l(x)),
    "another module, type(y).__name__":
        lambda s, x: s.l(x) * 3 if type_checks_helpers.tensor_name(s.l(x)) == "Tensor" else -s.l(x),
}


@pytest.mark.parametrize("check", list(CHECKS))
def test_type_check_of_a_traced_value_takes_torchs_branch(check, tmp_path):
    fn = CHECKS[check]
    assert _wrong_branch_far(fn, lambda y, x: -y)
    assert steps(LayerFn(fn), tmp_path) <= BOUND


def _cell_or_negated(s, x):
    h = s.l(x)[0]
    return h * 3 if type(s.l) is nn.LSTMCell else -h


def test_type_of_a_replaced_module_is_its_class(tmp_path):
    # ptec traces nn.LSTMCell through a stand-in (capture_modules): type() answers nn.LSTMCell
    assert steps(LayerFn(_cell_or_negated, nn.LSTMCell(5, 8)), tmp_path) <= 3.0


def _non_tensor_checks(s, x):
    cfg = {"k": 1}
    ok = (isinstance(nn.Linear, type) and issubclass(type(nn.Linear), type) and type(cfg) is dict
          and type(s).__name__ == "LayerFn" and type(nn.Linear) is type and type(nn.Linear) == type
          and type(3) is not float and not isinstance(cfg, type)
          and type("C", (), {"v": 2})().v == 2)           # three arguments: a new class
    return s.l(x) * 3 if ok else -s.l(x)


def test_type_of_other_values_keeps_its_answers(tmp_path):
    assert _wrong_branch_far(_non_tensor_checks, lambda y, x: -y)
    assert steps(LayerFn(_non_tensor_checks), tmp_path) <= BOUND


def _globals_now():
    return {m.__name__: [(k, v) for k, v in vars(m).items() if k in ("type", "_builtins", "builtin_type")]
            for m in (sys.modules[__name__], type_checks_helpers)}


def test_globals_are_restored_after_a_compile():
    before = _globals_now()
    assert before[__name__] == [] and before["type_checks_helpers"] == [
        ("_builtins", builtins), ("type", type), ("builtin_type", type)]
    cal = samples()
    compile_model(LayerFn(CHECKS["another module, builtins.type(y)"]).eval(), cal[0], cal)
    after = _globals_now()
    assert after == before and sys.getprofile() is None and "__getattribute__" not in vars(torch.fx.Proxy)
    assert all(a[1] is b[1] for a, b in zip(after["type_checks_helpers"], before["type_checks_helpers"]))
    assert type(nn.Linear) is type and type_checks_helpers.type is type and type_checks_helpers._builtins is builtins


def _unknown(s, x):
    # a method torch's tensors lack: fx records the call, ptec has no example value for it
    z = s.l(x).not_a_tensor_method()
    return s.l(x) * 3 if type(z) is torch.Tensor else -s.l(x)


def test_type_of_a_value_ptec_does_not_know_is_refused_in_one_line():
    before = _globals_now()
    cal = samples()
    with pytest.raises((ValueError, RuntimeError)) as e:
        compile_model(LayerFn(_unknown).eval(), cal[0], cal)
    message = str(e.value)
    assert "type() of a traced value" in message and "test_type_checks.py:" in message, message
    assert "\n" not in message and "Traceback" not in message, message
    assert _globals_now() == before and sys.getprofile() is None


def test_plain_fx_inside_is_refused_too():
    # a tracer without example values (torch.fx's own): every proxy is unknown
    from ptec.capture_type_checks import type_as_torch
    m = LayerFn(CHECKS["type(y) is torch.Tensor"])
    before = _globals_now()
    with pytest.raises(ValueError, match="type\\(\\) of a traced value"):
        with type_as_torch(m):
            torch.fx.Tracer().trace(m)
    assert _globals_now() == before


def _dunder_class(s, x):
    y = s.l(x)
    return y * 3 if y.__class__ is torch.Tensor else -y


def _getattr_class(s, x):
    y = s.l(x)
    return y * 3 if getattr(y, "__class__") is torch.Tensor else -y


@pytest.mark.parametrize("fn,line", [(_dunder_class, "y.__class__ is torch.Tensor"),
                                     (_getattr_class, 'getattr(y, "__class__")')], ids=["y.__class__", "getattr"])
def test_dunder_class_of_a_traced_value_is_refused_in_one_line(fn, line):
    # no proxy can answer it (torch's C argument parser reads __class__ too): refused, naming the line
    before = _globals_now()
    cal = samples()
    with pytest.raises((ValueError, RuntimeError)) as e:
        compile_model(LayerFn(fn).eval(), cal[0], cal)
    message = str(e.value)
    assert "x.__class__ of a traced value" in message and line in message, message
    assert "\n" not in message and "Traceback" not in message, message
    assert _globals_now() == before and "__getattribute__" not in vars(torch.fx.Proxy)


def _dunder_class_of_self(s, x):
    # __class__ of the model (not a traced value) on a line that also calls torch: still compiles
    return torch.relu(s.l(x)) * 3 if s.__class__.__name__ == "LayerFn" else -s.l(x)


def test_dunder_class_of_the_model_still_compiles(tmp_path):
    assert steps(LayerFn(_dunder_class_of_self), tmp_path) <= BOUND


def _raises(s, x):
    if type(s.l(x)) is torch.Tensor:
        raise KeyError("the model's own error")
    return x


def test_globals_are_restored_after_an_error():
    before = _globals_now()
    cal = samples()
    with pytest.raises(Exception, match="the model's own error"):
        compile_model(LayerFn(_raises).eval(), cal[0], cal)
    assert _globals_now() == before and sys.getprofile() is None


def test_only_the_models_own_modules_get_the_name():
    # torch's, the standard library's and other installed packages' code keeps the builtin
    import json
    import numpy
    from ptec.capture_type_checks import _is_model_module
    assert _is_model_module(vars(sys.modules[__name__]), set())
    assert _is_model_module(vars(type_checks_helpers), set())
    for module in (torch, torch.fx.proxy, json, numpy, sys.modules["ptec.capture"]):
        assert not _is_model_module(vars(module), set()), module.__name__
    assert _is_model_module(vars(numpy), {"numpy"})          # an installed model package: its own code
    assert not _is_model_module({"__name__": "made", "type": type}, set())      # exec'd code, no module


MODEL_FILE = """
import torch
import torch.nn as nn


class Checks(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(5, 8)

    def forward(self, x):
        y = self.l(x)
        return y * 3 if type(y) is torch.Tensor else -y

    @staticmethod
    def calibration_data(n, seed=0):
        g = torch.Generator().manual_seed(1)        # the test's samples (layer_fn_model.samples)
        return [(torch.randn(2, 5, generator=g),) for _ in range(n)]


class Dunder(Checks):
    def forward(self, x):
        y = self.l(x)
        return y * 3 if y.__class__ is torch.Tensor else -y


def checks():
    return Checks().eval(), (torch.randn(2, 5),)


def dunder():
    return Dunder().eval(), (torch.randn(2, 5),)
"""


def _cli(tmp_path, factory):
    (tmp_path / "typed.py").write_text(MODEL_FILE)
    return subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/typed.py:{factory}", "--calib", "8",
                           "-o", str(tmp_path / "m.pte")], env=ENV, capture_output=True, text=True, timeout=300)


def test_ptec_compile_of_a_model_file_takes_torchs_branch(tmp_path):
    # `ptec compile file.py:factory` loads the file as a module sys.modules does not hold: its `type` too
    run = _cli(tmp_path, "checks")
    assert run.returncode == 0, run.stderr
    spec = importlib.util.spec_from_file_location("typed_oracle", tmp_path / "typed.py")
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    model = oracle.Checks().eval()
    prog = parse_program((tmp_path / "m.pte").read_bytes())
    with torch.no_grad():
        outs = torch.cat([model(x) for (x,) in samples(8)])
    step = float(outs.max() - outs.min()) / 255          # the output's int8 step over the calibration samples
    worst = 0.0
    for (x,) in samples(4):
        with torch.no_grad():
            want = model(x)
        got = run_program(prog, [x.numpy()])[0]
        worst = max(worst, float(abs(torch.from_numpy(got) - want).max()) / step)
    print(f"worst |ptec - float|: {worst:.2f} output steps")
    assert worst <= BOUND


def test_ptec_compile_of_a_model_file_refuses_dunder_class_in_one_line(tmp_path):
    run = _cli(tmp_path, "dunder")
    assert run.returncode == 2, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert "x.__class__ of a traced value" in last and "typed.py:" in last and "Traceback" not in run.stderr, last
