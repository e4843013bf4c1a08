"""Plumbing calls in a forward (issue 15): device moves, detach, same-dtype
casts and float dtype keywords change no value and leave no node
(capture_plumbing); float64 is carried as float32, a float64 model output
refused in one line; other spellings of ops ptec runs (alpha=, rsub,
true_divide, rounding_mode, x.bool(), x.new_*, atleast_Nd, ravel,
narrow_copy, concat) are the nodes of the op they spell (capture_spellings).
The captured graph in float is torch's result (the oracle) for every
spelling; tests/python/test_function_coverage.py's RUNS rows run them on the
host within their bounds. Forms ptec does not cover are refused in one line
naming the call."""
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec.capture import CaptureError, capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import evaluate
from test_compiler import ENV
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)

# calls that change nothing: the graph of each is the graph of `x * 2`
NO_OPS = {
    "x.detach()": lambda x: x.detach() * 2,
    "torch.detach(x)": lambda x: torch.detach(x) * 2,
    "x.detach_() of a copy": lambda x: (x * 2).detach_(),
    "x.cpu()": lambda x: x.cpu() * 2,
    "x.to('cpu')": lambda x: x.to("cpu") * 2,
    "x.to(torch.device('cpu'))": lambda x: x.to(torch.device("cpu")) * 2,
    "x.to('cpu', torch.float32)": lambda x: x.to("cpu", torch.float32) * 2,
    "x.to(device=, dtype=, non_blocking=, copy=)": lambda x: x.to(device="cpu", dtype=torch.float32,
                                                                 non_blocking=True, copy=True) * 2,
    "x.to(x)": lambda x: x.to(x) * 2,
    "x.to(x.device)": lambda x: x.to(x.device) * 2,
    "x.to(x.dtype)": lambda x: x.to(x.dtype) * 2,
    "x.to(x.device, x.dtype)": lambda x: x.to(x.device, x.dtype) * 2,
    "x.type(torch.float32)": lambda x: x.type(torch.float32) * 2,
    "x.type_as(x)": lambda x: x.type_as(x) * 2,
    "x.requires_grad_(False)": lambda x: x.requires_grad_(False) * 2,
    "x.data": lambda x: x.data * 2,
    "x.double().float()": lambda x: x.double().float() * 2,
    "x.to(torch.float64).to(torch.float32)": lambda x: x.to(torch.float64).to(torch.float32) * 2,
    "(x * 2).detach() returned": lambda x: (x * 2).detach().cpu(),
}


@pytest.mark.parametrize("name", sorted(NO_OPS))
def test_no_op_leaves_no_node(name):
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    g = capture(Call(NO_OPS[name]).eval(), [x])
    plain = capture(Call(lambda x: x * 2).eval(), [x])
    assert sorted(n.op for n in g.nodes) == sorted(n.op for n in plain.nodes), [(n.name, n.op) for n in g.nodes]
    assert torch.equal(evaluate(g, [x])[0], x * 2)


def test_no_op_of_the_input_returned():
    """forward returning x.detach(): the program's output is its input."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    g = capture(Call(lambda x: x.detach().cpu()).eval(), [x])
    assert [n.op for n in g.nodes] == ["input"] and g.outputs == g.inputs
    assert torch.equal(evaluate(g, [x])[0], x)


def test_a_cast_that_changes_the_dtype_stays():
    """Only same-dtype casts (and float32 <-> float64) are taken out: .half()
    keeps its rounding and .long() its truncation."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0] * 10
    for fn in (lambda x: x.to("cpu", torch.float16).float() * 2, lambda x: x.to(x.device, torch.long).float() * 2):
        model = Call(fn).eval()
        g = capture(model, [x])
        assert not [n.name for n in g.nodes if n.op == "unsupported"]
        assert torch.equal(evaluate(g, [x])[0], model(x))
        assert not torch.equal(model(x), x * 2)


def maybe(name):
    """torch.<name> where this torch has it (torch.concatenate: torch 2.1+)."""
    return getattr(torch, name, None)


FORMS = {
    # float64 chains run in float32, cast back with .float()
    "x.double() chain .float()": lambda x: (x.double() * 0.5 + 1.0).exp().sum(-1).float(),
    "x.to(torch.float64) chain .float()": lambda x: torch.tanh(x.to(torch.float64)).to(torch.float32),
    "x.sum(dtype=torch.float64).float()": lambda x: x.sum(-1, dtype=torch.float64).float(),
    # float dtype keywords
    "x.sum(-1, dtype=float32)": lambda x: x.sum(-1, dtype=torch.float32),
    "x.sum(dtype=float32) (whole)": lambda x: x.sum(dtype=torch.float32),
    "torch.sum(x, (1, 2), keepdim, dtype)": lambda x: torch.sum(x, (1, 2), True, dtype=torch.float32),
    "x.mean(-1, dtype=float32)": lambda x: x.mean(-1, dtype=torch.float32),
    "x.mean((0, 2), dtype=float32)": lambda x: x.mean((0, 2), dtype=torch.float32),
    "torch.cumsum(x, 2, dtype=float32)": lambda x: torch.cumsum(x, 2, dtype=torch.float32),
    "x.cumsum(-2, dtype=float32)": lambda x: x.cumsum(-2, dtype=torch.float32),
    "F.softmax(x, -1, dtype=float32)": lambda x: F.softmax(x, -1, dtype=torch.float32),
    "F.log_softmax(x, 1, dtype=float32)": lambda x: F.log_softmax(x, 1, dtype=torch.float32),
    "x.softmax(1, dtype=float32)": lambda x: x.softmax(1, dtype=torch.float32),
    "x.prod(-1, dtype=float32)": lambda x: x.prod(-1, dtype=torch.float32),
    # arithmetic spellings
    "x.true_divide(3)": lambda x: x.true_divide(3),
    "x.true_divide(y)": lambda x: x.true_divide(x.flip(-1).abs() + 1.0),
    "torch.true_divide(x, 3)": lambda x: torch.true_divide(x, 3),
    "torch.divide(x, 2.5)": lambda x: torch.divide(x, 2.5),
    "x.divide(y)": lambda x: x.divide(x.flip(1).abs() + 1.0),
    "torch.multiply(x, y), x.multiply(3)": lambda x: torch.multiply(x, x.flip(-1)) + x.multiply(3),
    "torch.subtract(x, 0.5), x.subtract(y, alpha)": lambda x: torch.subtract(x, 0.5) + x.subtract(x.flip(1), alpha=3),
    "torch.add(x, y, alpha=2)": lambda x: torch.add(x, x.flip(-1), alpha=2),
    "x.add(y, alpha=0.5)": lambda x: x.add(x.flip(-1), alpha=0.5),
    "torch.add(x, 1.5, alpha=-2)": lambda x: torch.add(x, 1.5, alpha=-2),
    "torch.sub(x, y, alpha=2)": lambda x: torch.sub(x, x.flip(1), alpha=2),
    "x.sub(0.25, alpha=4)": lambda x: x.sub(0.25, alpha=4),
    "torch.add(x, y, alpha=1)": lambda x: torch.add(x, x.flip(-1), alpha=1),
    "torch.rsub(x, 1.0)": lambda x: torch.rsub(x, 1.0),
    "torch.rsub(x, 2.0, alpha=0.5)": lambda x: torch.rsub(x, 2.0, alpha=0.5),
    "torch.rsub(x, y, alpha=-1.5)": lambda x: torch.rsub(x, x.flip(-1), alpha=-1.5),
    "x.div(0.7, rounding_mode='floor')": lambda x: x.div(0.7, rounding_mode="floor"),
    "x.div(-0.7, rounding_mode='floor')": lambda x: x.div(-0.7, rounding_mode="floor"),
    "torch.div(x, 0.7, rounding_mode='trunc')": lambda x: torch.div(x, 0.7, rounding_mode="trunc"),
    "torch.div(x, -3, rounding_mode='trunc')": lambda x: torch.div(x, -3, rounding_mode="trunc"),
    "torch.div(x, y, rounding_mode=None)": lambda x: torch.div(x, x.flip(-1).abs() + 1.0, rounding_mode=None),
    "torch.div(x, y, rounding_mode='floor')": lambda x: torch.div(x, x.flip(-1) + 3.5, rounding_mode="floor"),
    "x.div(y, rounding_mode='trunc')": lambda x: x.div(x.flip(-1) - 3.5, rounding_mode="trunc"),
    "torch.floor_divide(x, 0.7)": lambda x: torch.floor_divide(x, 0.7),
    "torch.floor_divide(x, y)": lambda x: torch.floor_divide(x, x.abs() + 0.5),
    "x // y": lambda x: x // (x.flip(1) - 3.5),
    # bool, constants
    "x.bool() (exact zeros)": lambda x: F.relu(x).bool().float(),
    "x.to(torch.bool)": lambda x: torch.where((x.floor()).to(torch.bool), x, -x),
    "x.new_tensor(list)": lambda x: x + x.new_tensor([0.5, -1.0, 0.0, 1.5, 2.0, -2.0, 1.0, 3]),
    "x.new_tensor(ints) is float": lambda x: x * x.new_tensor([[1], [2], [3], [4]]),
    "x.new_zeros / new_ones / new_full": lambda x: x + x.new_zeros(8) - x.new_ones((4, 1)) + x.new_full((1, 1, 8), -0.5),
    # views and joins
    "torch.atleast_1d(0-d)": lambda x: torch.atleast_1d(x[0, 1, 2]) * 2,
    "torch.atleast_2d(1-D)": lambda x: torch.atleast_2d(x[0, 1]),
    "torch.atleast_2d(3-D)": lambda x: torch.atleast_2d(x),
    "torch.atleast_3d(1-D)": lambda x: torch.atleast_3d(x[0, 1]),
    "torch.atleast_3d(2-D)": lambda x: torch.atleast_3d(x[0]),
    "torch.ravel(x), x.ravel()": lambda x: torch.ravel(x) + x.transpose(1, 2).ravel(),
    "torch.narrow_copy(x, 2, 1, 3)": lambda x: torch.narrow_copy(x, 2, 1, 3),
    "x.narrow_copy(-1, -3, 2)": lambda x: x.narrow_copy(-1, -3, 2),
    "torch.concat([x, y], 1)": lambda x: torch.concat([x, x * 0.5], 1),
    "torch.concat((x, y), dim=-1)": lambda x: torch.concat((x, x.flip(-1)), dim=-1),
    "torch.concat of a constant": lambda x: torch.concat([x, torch.ones(1, 2, 8)], 1),
    "torch.swapdims": lambda x: torch.swapdims(x, 0, 2),
}
if maybe("concatenate") is not None:
    FORMS["torch.concatenate((x, y), axis=1)"] = lambda x: torch.concatenate((x, x * 2), axis=1)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_spelling_is_torch_in_float(name):
    """The captured graph, evaluated in float, is torch's result (step
    functions: exactly, the inputs kept off their edges)."""
    model = Call(FORMS[name]).eval()
    x = torch.randn(S3, generator=torch.Generator().manual_seed(len(name))) * 1.5
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = model(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape and got.dtype == torch.float32
    assert torch.isfinite(want.double()).all()
    assert torch.allclose(got.double(), want.double(), rtol=1e-5, atol=1e-5), (got - want).abs().max()


def test_alpha_scales_the_other_operand():
    """torch.add(x, y, alpha=2) once captured as x + y (alpha dropped): the
    graph must hold alpha's mul."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    g = capture(Call(lambda x: torch.add(x, x * 0.5, alpha=2)).eval(), [x])
    assert torch.allclose(evaluate(g, [x])[0], x * 2, atol=1e-6)


def test_rounding_modes_at_exact_multiples():
    """x exactly a multiple of the divisor, and just either side of it: floor
    and trunc as torch (negative values: floor goes down, trunc to 0)."""
    x = torch.tensor([[-1.5, -1.4999, -1.5001, -0.75, 0.0, 0.75, 1.4999, 1.5, 1.5001, 2.25]])
    for mode in ("floor", "trunc"):
        model = Call(lambda x, mode=mode: x.div(0.75, rounding_mode=mode)).eval()
        g = capture(model, [x])
        assert torch.equal(evaluate(g, [x])[0], model(x)), mode


def test_new_tensor_of_longs_keeps_its_dtype():
    """x.new_tensor(ids, dtype=torch.long) is an index constant, not a float."""
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    model = Call(lambda x: x.index_select(-1, x.new_tensor([3, 0, 7], dtype=torch.long))).eval()
    g = capture(model, [x])
    assert torch.equal(evaluate(g, [x])[0], model(x))


def compile_refusal(fn, error=CompileError):
    calibration = inputs(S3, -3.0, 3.0, 2)
    with pytest.raises(error) as e:
        compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


REFUSED = {
    # (into int32 / int64 they run: the cast, then the integer reduction, capture_dtype_forms)
    "x.sum(-1, dtype=torch.int16)": (lambda x: x.sum(-1, dtype=torch.int16).float(),
                                     "(Tensor.sum): dtype=torch.int16 computes in that dtype"),
    "torch.cumsum(x, 2, dtype=torch.uint8)": (lambda x: torch.cumsum(x, 2, dtype=torch.uint8).float(),
                                              "(torch.cumsum): dtype=torch.uint8 computes in that dtype"),
    "x.new_empty(4, 8)": (lambda x: x.new_empty(4, 8) * 0 + x, "ptec has no kernel for new_empty"),
    "x.new_tensor(x) (data computed)": (lambda x: x.new_tensor(x) * 2, "ptec has no kernel for new_tensor"),
    # (a float value's x.short() runs: test_casts_and_fills.py)
    "x.short() << x.short()": (lambda x: (x.short() << x.short()).float(),
                               "a shift of an int16 / uint8 / int8 value by a tensor"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_call(name):
    fn, words = REFUSED[name]
    assert words in compile_refusal(fn)


def test_float64_output_is_a_double_output():
    """A float64 output of float math runs: the float32 chain returned as Double (test_float64_outputs.py)."""
    calibration = inputs(S3, -3.0, 3.0, 2)
    for fn in (lambda x: x.double() * 2, lambda x: x.sum(-1, dtype=torch.float64)):
        res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
        assert [o.dtype for o in res.lowered.outputs] == ["float64"]


def test_len_is_the_traced_length_and_of_a_selection_refused_in_one_line():
    """len(x) is x.shape[0], which tracing knows (capture_tracer); the
    length of a selection changes from run to run."""
    x = inputs((3, 4, 8), -3.0, 3.0, 1)[0][0]
    for fn in (lambda x: x * len(x), lambda x: x * x.shape[0]):
        g = capture(Call(fn).eval(), [x])
        assert torch.allclose(evaluate(g, [x])[0], x * 3)
    message = compile_refusal(lambda x: x * len(x[x > 0]), CaptureError)
    assert "len() of the result of operator.getitem" in message and "mask.sum()" in message, message


def test_squeeze_of_a_dims_tuple():
    """x.squeeze((0, 1)): torch 2.0+ takes a tuple of dims (a reshape);
    torch 1.13 does not, and the model's own error is one line."""
    fn = lambda x: x.unsqueeze(0).squeeze((0, 1))          # noqa: E731
    x = inputs(S3, -3.0, 3.0, 1)[0][0]
    try:
        want = fn(x)
    except TypeError:
        assert "squeeze()" in compile_refusal(fn, CaptureError)
        return
    assert torch.equal(evaluate(capture(Call(fn).eval(), [x]), [x])[0], want)


def test_cli_refusal_exits_2_in_one_line(tmp_path):
    src = tmp_path / "double.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 4, 8)\n"
                   "    def forward(self, x):\n"
                   "        return x.detach().cpu().new_empty(4, 8) * 0 + x\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "double.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "-o", str(out)],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "new_empty" in r.stderr and "Traceback" not in r.stderr and not out.exists(), r.stderr


class Plumbing(torch.nn.Module):
    """The plumbing of a model exported from training code, in one forward."""

    def forward(self, x):                                                     # x [1, 4, 8]
        x = x.detach().to(x.device, non_blocking=True).contiguous()
        a = torch.add(x, x.flip(-1), alpha=0.5).true_divide(2)                # [1, 4, 8]
        b = torch.rsub(x.double() * 0.5, 1.0).float()                         # [1, 4, 8]
        c = x.sum(-1, keepdim=True, dtype=torch.float32).type_as(x)           # [1, 4, 1]
        d = torch.atleast_3d(torch.ravel(x)[:4]).reshape(1, 4, 1)             # [1, 4, 1]
        e = torch.where(F.relu(x).bool(), x, x.new_full((1, 4, 8), -0.5))      # [1, 4, 8]
        f = torch.narrow_copy(x.div(0.5, rounding_mode="floor"), 2, 0, 2)     # [1, 4, 2]
        return torch.concat([a, b, c, d, e, f], dim=-1)                       # [1, 4, 28]


@pytest.mark.parametrize("target", ["host", "cortex-m55"])
def test_together_on_host_and_board(target, tmp_path):
    model = Plumbing().eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration,
                        target="cortex-m55" if target == "host" else target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        # measured 1.21: these inputs keep the floor off its edges (a jump of 1.0 would be about 21 steps)
        worst = worst_steps(model, res, calibration[:4], tmp_path)
        print(f"worst {worst:.2f} output steps")
        assert worst <= 2.0
    else:
        board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
