"""Numbers read out of the input's values, forward(**kw), and record outputs
(probe3 items 1, 13, 14): each model is compiled, run on the host
(ptec-run) on inputs other than the example and compared with torch float
in output steps.

- `t.item()` / `t.tolist()` of a value computed from the input is that
  tensor (capture_item), so it is computed per input: before, the example's
  number was frozen into the program (17-120 steps off, no note);
- `torch.tensor(x.tolist())`, `torch.tensor([a.item(), b.item()])`: the
  traced values as a tensor;
- where the number must be a Python number (a shape, int(), Python control,
  a fill value, a layer's slope) the refusal is one line, "depends on the
  input's values"; so is math.sqrt(x.max()) (capture_shape_numbers), which
  froze the example's value too;
- forward(self, x, **kw) traces with kw empty (capture_call_forms);
- a namedtuple, typing.NamedTuple or dataclass output is flattened in field
  order with a note naming the fields (capture_outputs);
- the CLI's `input_shape` given several shapes: one input each."""
import collections
import dataclasses
import math
import os
import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import Call, cli_refusal
from ptec import host_runtime
from ptec.capture import CaptureError, UnsupportedOperator
from ptec.compiler import compile_model
from ptec.pte import parse_program

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if dataclasses.is_dataclass(v):
        v = [getattr(v, f.name) for f in dataclasses.fields(v)]
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _tensors(x)]
    return []


def _samples(shape, n=8, seed=0):
    """Inputs whose maximum, mean and sign vary a lot from one to the next."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (i + 1) - 0.3 * i,) for i in range(n)]


def steps_from_torch(model, samples, tmp_path, log=None):
    """Compile on samples (the first is the example), run each on the host;
    the worst |ptec - torch| over all outputs in their output steps."""
    model = model.eval()
    res = compile_model(model, list(samples[0]), samples, **({"log": log} if log else {}))
    prog = parse_program(res.data)
    worst = 0.0
    for inputs in samples:
        with torch.no_grad():
            want = _tensors(model(*inputs))
        got = host_runtime.run(prog, res.data, [t.numpy() for t in inputs], workdir=str(tmp_path))
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert np.asarray(g).shape == tuple(w.shape)
            step = res.graph.node(res.graph.outputs[k]).qparams[0]
            worst = max(worst, float(np.abs(np.asarray(g, np.float64) - w.double().numpy()).max() / step))
    return res, worst


# --- item() and tolist() of values of the input: computed per input -----------------

ITEM_FORMS = {          # name: (forward, bound in output steps; measured in the comment)
    "div_max_item": (lambda x: x / x.max().item(), 2.5),                 # 1.95 (frozen: 120)
    "sub_mean_item": (lambda x: x - x.mean().item(), 1.5),               # 0.62 (frozen: 17)
    "mul_max_item": (lambda x: x * x.max().item(), 1.5),                 # 0.33
    "mul_sum_tolist": (lambda x: x * x.sum().tolist(), 1.5),             # 0.79
    "tolist_row_element": (lambda x: x * x.sum(1).tolist()[0], 1.5),      # 0.67
    "where_item_gt": (lambda x: torch.where(torch.tensor(x.max().item() > 1.5), x, -x), 1.5),   # 0.49
    "clamp_max_item": (lambda x: x.clamp(max=x.mean().item()), 1.5),     # 1.19
    "tensor_of_tolist": (lambda x: x * torch.tensor(x.tolist()).max(), 1.5),   # 0.33
    "tensor_of_items": (lambda x: x * torch.tensor([x.max().item(), x.min().item()]).sum(), 1.5),   # 0.85
}


@pytest.mark.parametrize("name", sorted(ITEM_FORMS))
def test_item_of_input_values_is_computed_per_input(name, tmp_path):
    fn, bound = ITEM_FORMS[name]
    _, worst = steps_from_torch(Call(fn), _samples((2, 4)), tmp_path)
    assert worst <= bound, f"{worst:.2f} output steps from torch (bound {bound})"


class ParameterItem(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        return x * self.w.item()        # a constant: the same number on every run


def test_item_of_a_parameter_stays_a_constant(tmp_path):
    _, worst = steps_from_torch(ParameterItem(), _samples((2, 4)), tmp_path)
    assert worst <= 1.0                 # 0.49


@pytest.mark.parametrize("fn,what", [
    (lambda x: x[:, :int(x.argmax().item())], "int() on the result of Tensor.argmax"),
    (lambda x: x if x.max().item() > 0 else -x, "Python control"),
    (lambda x: x + torch.zeros(x.argmax().item()).sum(), "a number read with Tensor.item()"),
    (lambda x: x + torch.full_like(x, x.mean().item()), "a number read with Tensor.item()"),
    (lambda x: F.leaky_relu(x, x.mean().item()), "leaky_relu (torch.leaky_relu) is given a number read with"),
    (lambda x: x[:, x.sum(0).argmax().item():], "getitem (operator.getitem) in Call: it is given a number read with"),
    (lambda x: x.roll(x.sum(0).argmax().item(), 1), "roll (Tensor.roll) in Call: it is given a number read with"),
    (lambda x: x * math.sqrt(x.max()), "sqrt (math.sqrt) makes a Python number of a tensor computed from the input"),
])
def test_item_as_a_python_number_is_refused_in_one_line(fn, what):
    with pytest.raises((CaptureError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [torch.rand(2, 4)], _samples((2, 4), 2))
    text = str(e.value)
    assert "\n" not in text and what in text and "depends on the input's values" in text, text


def test_tensor_of_traced_values_beside_other_things_is_refused_in_one_line():
    with pytest.raises(CaptureError) as e:
        compile_model(Call(lambda x: x * torch.tensor([x.sum().item(), "a"])).eval(), [torch.rand(2, 4)],
                      _samples((2, 4), 2))
    text = str(e.value)
    assert "\n" not in text and "torch.tensor(...) of traced values beside a str" in text and "x.clone()" in text


def test_item_refusal_through_the_cli(tmp_path):
    line = cli_refusal(tmp_path, "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return x + torch.zeros(x.argmax().item()).sum()\n"
                       "def model():\n"
                       "    return M(), (torch.rand(2, 4),)\n")
    assert "depends on the input's values" in line and "Tensor.item()" in line


# --- forward(self, x, **kw) ----------------------------------------------------------

class KeywordsForward(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(8, 4)

    def forward(self, x, **kw):
        return self.lin(x) * kw.get("scale", 2.0)


def test_forward_with_keyword_arguments_runs_with_none_given(tmp_path):
    _, worst = steps_from_torch(KeywordsForward(), [(torch.randn(2, 8, generator=torch.Generator().manual_seed(i)),)
                                                    for i in range(6)], tmp_path)
    assert worst <= 1.5                 # 1.19 (a Linear's output times 2)


# --- namedtuple / NamedTuple / dataclass outputs -----------------------------------

Det = collections.namedtuple("Det", ["boxes", "scores"])


class TypedDet(NamedTuple):
    boxes: torch.Tensor
    scores: torch.Tensor


@dataclasses.dataclass
class DataDet:
    boxes: torch.Tensor
    scores: torch.Tensor
    count: int = 3


class Detector(nn.Module):
    def __init__(self, record, nested=False):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(8, 5)
        self.record, self.nested = record, nested

    def forward(self, x):
        y = self.lin(x)
        out = self.record(y[:, :4], torch.sigmoid(y[:, 4]))
        return {"det": out, "raw": y} if self.nested else out


@pytest.mark.parametrize("record,kind", [(Det, "namedtuple"), (TypedDet, "namedtuple"), (DataDet, "dataclass")])
@pytest.mark.parametrize("nested", [False, True])
def test_record_outputs_are_flattened_in_field_order(record, kind, nested, tmp_path):
    lines = []
    samples = [(torch.randn(3, 8, generator=torch.Generator().manual_seed(i)),) for i in range(6)]
    res, worst = steps_from_torch(Detector(record, nested), samples, tmp_path, log=lines.append)
    assert worst <= 1.5                 # 1.36, as the same outputs returned as a plain tuple
    assert len(res.lowered.outputs) == (3 if nested else 2)     # shapes checked in order by steps_from_torch
    noted = [ln for ln in lines if f"a {kind} {record.__name__}" in ln]
    assert len(noted) == 1 and "(boxes, scores" in noted[0], lines


# --- the CLI's input_shape with several shapes ----------------------------------------

TWO_INPUTS = """import torch, torch.nn as nn
class Net(nn.Module):
    input_shape = {shape}
    def __init__(s):
        super().__init__()
        s.l = nn.Linear(4, 2)
    def forward(s, a, b):
        return s.l(a) + s.l(b)
def model():
    return Net().eval()
"""


def test_cli_input_shape_lists_one_shape_per_input(tmp_path):
    (tmp_path / "models.py").write_text(TWO_INPUTS.format(shape="[(1, 4), (1, 4)]"))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/models.py:model", "-o",
                        str(tmp_path / "m.pte")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    prog = parse_program((tmp_path / "m.pte").read_bytes())
    assert len(prog.plan().inputs) == 2


def test_cli_input_shape_of_another_form_is_refused_in_one_line(tmp_path):
    line = cli_refusal(tmp_path, TWO_INPUTS.format(shape="[(1, 4), 'x']").replace(
        "def model():\n    return Net().eval()", "def model():\n    return Net().eval()"))
    assert "input_shape" in line and "Traceback" not in line and "--debug" not in line, line
