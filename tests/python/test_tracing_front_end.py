"""The tracing front end (issue 15, python/ptec/capture_tracer.py): Python
control that plain torch.fx cannot follow, now traced because every traced
value of the example is known: iteration over the pieces of chunk / split
/ unbind (zip, enumerate, reversed, list, slices of the tuple, *pieces),
shapes used as sizes of constructors, Python on shapes (if, assert, range,
int, math), flatten / view / permute chains spelled with shapes. Each form
runs on the host runtime within its bound of PyTorch float. What still
cannot be traced (Python control on the input's values, the length of a
selection) is refused in one line naming the module path, the source line
and the fix."""
import math
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from ptec.capture import CaptureError, _symbolic_trace, capture
from ptec.compiler import compile_model
from ptec.ir import evaluate
from test_module_coverage import worst_steps
from model_checks import Call

S3, S4 = (1, 4, 8), (1, 4, 2, 4)


def inputs(shape, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 6 - 3,) for _ in range(n)]


def scaled_chunks(x):
    out = []
    for i, t in enumerate(x.chunk(4, -1)):
        out.append(t * (i + 1) * 0.5)
    return torch.cat(out, -1)


def three_pieces(x):
    a, b, c = x.split([2, 3, 3], -1)
    return torch.cat([c, a * 2, b], -1)


def branch_on_a_shape(x):
    if x.shape[-1] > 4:
        return x * 2
    return x


def asserted_rank(x):
    assert x.dim() == 3
    assert x.shape[0] == 1, "batch 1"
    return x + 1


def summed_over_range(x):
    s = x[:, 0]
    for i in range(1, x.size(1)):
        s = s + x[:, i] * i
    return s


def channel_shuffle(x, groups=2):
    # torchvision's shufflenetv2.channel_shuffle
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(batchsize, -1, height, width)


def rows_of_a_tensor(x):
    return torch.stack([row * (i + 1) for i, row in enumerate(x[0])])


def branch_on_dtype(x):
    return x * 2 if x.dtype == torch.float32 else x


# name: (call of x, input shape, bound in output steps)
FORMS = {
    # iteration over the pieces of chunk / split / unbind
    "stack of sums over x.unbind(1)": (lambda x: torch.stack([t.sum(-1) for t in x.unbind(1)], 1), S3, 1.5),  # 1.21
    "for t in x.chunk(4, -1) (enumerate)": (scaled_chunks, S3, 1.0),                                 # 0.85
    "a, b, c = x.split([2, 3, 3], -1)": (three_pieces, S3, 1.0),                                    # 0.80
    "x.split_with_sizes([3, 5], 2) iterated": (lambda x: torch.cat([t.flip(-1) for t in x.split_with_sizes([3, 5], 2)],
                                                                   -1), S3, 0.5),
    "torch.cat(x.chunk(4, -1)[::-1], -1)": (lambda x: torch.cat(x.chunk(4, -1)[::-1], -1), S3, 0.5),
    "torch.cat(x.chunk(2, -1), 1)": (lambda x: torch.cat(x.chunk(2, -1), 1), S3, 0.5),
    "torch.cat(x.split(1, 1)[1:3], 1)": (lambda x: torch.cat(x.split(1, 1)[1:3], 1), S3, 0.5),
    "x * len(x.chunk(3, -1))": (lambda x: x * len(x.chunk(3, -1)), S3, 0.5),
    "zip(x.unbind(0), y.unbind(0))": (lambda x: torch.stack([a * b for a, b in zip(x[0].unbind(0),
                                                                                  x[0].flip(0).unbind(0))]),
                                      S3, 1.0),                                               # 0.91
    "reversed(x.unbind(2))": (lambda x: torch.stack(list(reversed(x.unbind(2))), -1), S3, 0.5),
    "list(x.split(2, 1))": (lambda x: torch.cat(list(x.split(2, 1)), 2), S3, 0.5),
    # a slice of another tuple value (torch.meshgrid's)
    "torch.cat(torch.meshgrid(a, b)[::-1], 0)": (lambda x: torch.cat(torch.meshgrid(x[0, 0, :3], x[0, 1, :2],
                                                                                 indexing="ij")[::-1], 0), S3,
                                                   1.0),                                                      # 0.74
    "torch.maximum(*x.chunk(2, -1))": (lambda x: torch.maximum(*x.chunk(2, -1)), S3, 0.5),
    "torch.unbind(x, -1) with a negative dim": (lambda x: sum(t * 0.25 for t in torch.unbind(x, -1)), S3, 1.5),  # 1.09
    "for row in x[0]": (rows_of_a_tensor, S3, 1.0),                                                 # 0.88
    # shapes as sizes of constructors: constants of the traced shape
    "torch.zeros(x.shape) + x": (lambda x: torch.zeros(x.shape) + x, S3, 0.5),
    "torch.ones(x.size()) * x": (lambda x: torch.ones(x.size()) * x, S3, 0.5),
    "torch.full(x.shape, 2.0) * x": (lambda x: torch.full(x.shape, 2.0) * x, S3, 0.5),
    "torch.zeros(x.shape[0], 4, 5)": (lambda x: torch.cat([x, torch.zeros(x.shape[0], 4, 5)], -1), S3, 0.5),
    "x * torch.arange(x.shape[-1])": (lambda x: x * torch.arange(x.shape[-1]), S3, 0.5),
    "x @ torch.eye(x.size(2))": (lambda x: x @ torch.eye(x.size(2)), S3, 0.5),
    "x.new_zeros(x.shape) + x": (lambda x: x.new_zeros(x.shape) + x, S3, 0.5),
    "torch.zeros(*x.shape[:2], 3)": (lambda x: torch.cat([x, torch.zeros(*x.shape[:2], 3)], -1), S3, 0.5),
    "torch.empty(x.shape).fill_(1) * x": (lambda x: torch.empty(x.shape).fill_(1) * x, S3, 0.5),
    # Python control on shapes
    "if x.shape[-1] > 4": (branch_on_a_shape, S3, 0.5),
    "assert x.dim() == 3": (asserted_rank, S3, 1.0),                                                # 0.82
    "for i in range(x.size(1))": (summed_over_range, S3, 2.0),                                       # 1.63
    "x.shape[0] == 1 as a bool": (lambda x: x * 2 if x.shape[0] == 1 else x, S3, 0.5),
    "x / math.sqrt(x.size(-1))": (lambda x: x / math.sqrt(x.size(-1)), S3, 0.5),
    "x[..., :int(x.shape[-1] / 2)]": (lambda x: x[..., :int(x.shape[-1] / 2)], S3, 0.5),
    "x[..., x.size(-1) // 2:]": (lambda x: x[..., x.size(-1) // 2:], S3, 0.5),
    "x.dtype == torch.float32 as a bool": (branch_on_dtype, S3, 0.5),
    # flatten variants and view / permute chains spelled with shapes
    "x.view(x.size(0), -1)": (lambda x: x.view(x.size(0), -1), S3, 0.5),
    "torch.flatten(x, start_dim=1, end_dim=-1)": (lambda x: torch.flatten(x, start_dim=1, end_dim=-1), S4, 0.5),
    "x.reshape(*x.shape[:-1], 2, -1).permute(0, 3, 1, 2)": (
        lambda x: x.reshape(*x.shape[:-1], 2, -1).permute(0, 3, 1, 2).reshape(x.shape[0], -1), S3, 0.5),
    "x.transpose(1, 2).contiguous().view(x.size(0), -1)": (
        lambda x: x.transpose(1, 2).contiguous().view(x.size(0), -1), S3, 0.5),
    "x.mT.reshape(x.mT.shape[0], -1)": (lambda x: x.mT.reshape(x.mT.shape[0], -1), S3, 0.5),
    "channel shuffle (torchvision's)": (channel_shuffle, S4, 0.5),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_form_runs_within_its_bound(name, tmp_path):
    fn, shape, bound = FORMS[name]
    model = Call(fn).eval()
    calibration = inputs(shape)
    res = compile_model(model, [calibration[0][0]], calibration)
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    print(f"{name}: worst {worst:.2f} output steps")
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_pieces_nobody_reads_are_not_in_the_graph():
    """x.chunk(4)[0] and len(x.chunk(3)): the pieces (and the call) no one
    reads are dropped after tracing, so nothing refuses them."""
    x = inputs(S3, 1)[0][0]
    g = capture(Call(lambda x: x.chunk(4, -1)[0] * len(x.chunk(3, -1))).eval(), [x])   # 8 = 3 + 3 + 2
    assert [n.op for n in g.nodes if n.op not in ("input", "constant")] == ["slice", "mul"], \
        [(n.name, n.op) for n in g.nodes]
    assert torch.equal(evaluate(g, [x])[0], x[..., :2] * 3)


def test_tracing_writes_neither_the_model_nor_the_example():
    """The shadow values run on clones: an in-place op in forward does not
    change the example input while tracing; a write into a buffer (which
    fx runs on the real buffer) leaves the buffer as it was: capture traces
    a copy of the model, the buffer a state (capture_buffer_state)."""
    class InPlace(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.ones(8))

        def forward(self, x):
            x.mul_(2)
            return x + self.b.add_(1)

    class InPlaceInput(nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    x = inputs(S3, 1)[0][0]
    kept = x.clone()
    gm = _symbolic_trace(InPlaceInput().eval(), [x])
    assert torch.equal(x, kept)
    assert "mul_" in [fn.target for fn in gm.graph.nodes if fn.op == "call_method"]
    model = InPlace().eval()
    g = capture(model, [x], method="fx")
    assert [n.op for n in g.nodes].count("state") == 1
    assert torch.equal(x, kept) and torch.equal(model.b, torch.ones(8))


def test_torchvision_shufflenet_still_captures():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.shufflenet_v2_x0_5().eval()
    x = torch.randn(1, 3, 64, 64)
    g = capture(model, [x], method="fx")
    with torch.no_grad():
        want = model(x)
    assert torch.allclose(evaluate(g, [x])[0], want, atol=1e-4), (evaluate(g, [x])[0] - want).abs().max()


class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


class WhileLoop(nn.Module):
    def forward(self, x):
        while x.abs().max() > 1:
            x = x / 2
        return x


class IntOfData(nn.Module):
    def forward(self, x):
        return x[..., :int(x.max())]


class RangeOfData(nn.Module):
    def forward(self, x):
        s = x
        for _ in range(int(x.sum().abs())):
            s = s * 0.5
        return s


class SelectionLoop(nn.Module):
    def forward(self, x):
        return torch.stack([t * 2 for t in x[x > 0]])


class SelectionSize(nn.Module):
    def forward(self, x):
        return x * 2 if x[x > 0].shape[0] > 3 else x


class DerivedSelectionSize(nn.Module):
    def forward(self, x):
        return x * 2 if (x[x > 0] * 2).sigmoid().shape[0] > 3 else x


class ZerosOfASelection(nn.Module):
    def forward(self, x):
        return torch.zeros(x[x > 0].shape).sum() + x


class MixedClamp(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=x.flip(2), max=1.0)


class Outer(nn.Module):
    """The refused line inside a submodule: the message names its path."""
    def __init__(self, inner):
        super().__init__()
        self.pre = nn.Identity()
        self.blocks = nn.Sequential(nn.ReLU(), inner)

    def forward(self, x):
        return self.blocks(self.pre(x))


# name: (module, words its one-line refusal holds)
REFUSED = {
    "if x.sum() > 0": (Gate, ["module blocks.1 (Gate)", "`if x.sum() > 0:`", "Python control", "torch.where"]),
    "while x.abs().max() > 1": (WhileLoop, ["module blocks.1 (WhileLoop)", "`while x.abs().max() > 1:`",
                                            "torch.where"]),
    "int(x.max())": (IntOfData, ["module blocks.1 (IntOfData)", "int() on the result of Tensor.max",
                                 "input's values", "keep it a tensor"]),
    "range(int(x.sum().abs()))": (RangeOfData, ["module blocks.1 (RangeOfData)", "int()", "input's values"]),
    "for t in x[x > 0]": (SelectionLoop, ["module blocks.1 (SelectionLoop)", "iterating over",
                                          "changes length from run to run"]),
    "x[x > 0].shape[0] > 3": (SelectionSize, ["module blocks.1 (SelectionSize)", "a size of a selection",
                                              "mask.sum()"]),
    "(x[x > 0] * 2).sigmoid().shape[0] > 3": (DerivedSelectionSize, ["module blocks.1 (DerivedSelectionSize)",
                                                                      "a size of a selection", "mask.sum()"]),
    # anything else fx cannot follow: its own error, on one line, where it was raised
    "torch.zeros(x[x > 0].shape)": (ZerosOfASelection, ["module blocks.1 (ZerosOfASelection)",
                                                        "torch.fx could not trace it: zeros()",
                                                        "not a traced value"]),
    "torch.clamp(x, min=tensor, max=1.0)": (MixedClamp, ["module blocks.1 (MixedClamp)", "in torch itself",
                                                          "clamp() received an invalid combination",
                                                          "got (Tensor, max=float, min=Tensor)"]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_module(name):
    cls, words = REFUSED[name]
    calibration = inputs(S3, 2)
    with pytest.raises(CaptureError) as e:
        compile_model(Outer(cls()).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message and "Proxy" not in message, message
    assert "test_tracing_front_end.py:" in message, message     # the model's own line
    for w in words:
        assert w in message, (w, message)


def test_refusal_at_the_top_names_the_models_forward():
    calibration = inputs(S3, 2)
    with pytest.raises(CaptureError) as e:
        compile_model(Gate().eval(), [calibration[0][0]], calibration)
    assert str(e.value).startswith("the model's forward (Gate) at test_tracing_front_end.py:"), str(e.value)


def test_cli_refusal_exits_2_in_one_line(tmp_path):
    src = tmp_path / "gate.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class Gate(nn.Module):\n"
                   "    def forward(self, x):\n"
                   "        return x if x.mean() > 0 else -x\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 4, 8)\n"
                   "    def __init__(self):\n"
                   "        super().__init__()\n"
                   "        self.gate = Gate()\n"
                   "    def forward(self, x):\n"
                   "        return self.gate(x * 2)\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "gate.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "-o", str(out)],
                       env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}, capture_output=True,
                       text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "module gate (Gate) at gate.py:4" in r.stderr and "torch.where" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists(), r.stderr
