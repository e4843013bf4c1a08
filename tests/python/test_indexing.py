"""Basic tensor indexing and narrow (issue 15): `qkv[..., :d]`, `x[:, -1]`,
`z[:, 1:5, :, 2:]`, `x[0, :, None]`, `torch.narrow` become slice (and
reshape) nodes, lowered to int8 `slice_copy`; the C runtime's bytes equal
the numpy int8 reference's, and the result is close to PyTorch's float
one. A step (`x[:, ::2]`) is one-wide slices joined by a cat. A constant 1-D
integer index tensor (a buffer, or a tensor made in forward from no input)
is index_select along its dim: slices joined by a cat; 2-D index tensors,
several of them, bool masks, beside ints, slices and None, move x's int8
bytes the same way, by torch's advanced-indexing rules. A bool mask
computed from the input (`x[x > 0]`) runs as a program output, into
element-wise ops and whole-tensor reductions (test_masked_select.py); read
by a layer whose shape follows its length, it is refused in one line
naming the call."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.capture import CaptureError, capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import UnsupportedOperator, evaluate
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(12, 36)
        self.c = nn.Conv2d(4, 6, 3, padding=1)

    def forward(self, x, y):
        qkv = self.qkv(x)                              # [1, 16, 36]
        q, k, v = qkv[..., :12], qkv[..., 12:24], qkv[:, :, 24:]
        a = torch.softmax(q @ k.transpose(-2, -1), -1) @ v
        z = self.c(y)[:, 1:5, :, 2:]
        return a[:, -1], z, torch.narrow(a, 1, 2, 5), z[0, :, None], a.narrow(-1, -4, 4)


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, 16, 12, generator=g), torch.randn(1, 4, 8, 8, generator=g))
            for _ in range(8)]


def test_slices_run_int8_and_match_the_reference(tmp_path):
    torch.manual_seed(0)
    model = Attention().eval()
    calib = _calib()
    res = compile_model(model, list(calib[0]), calib)
    assert not res.lowered.fallbacks and not res.lowered.refusals
    assert sum(p.op == "slice" for p in res.lowered.placements) >= 7
    prog = parse_program(res.data)
    xs = [t.numpy() for t in calib[3]]
    want = run_program(prog, xs)
    got = host_runtime.run(prog, res.data, xs, workdir=str(tmp_path))
    with torch.no_grad():
        ref = [t.numpy() for t in model(*calib[3])]
    assert len(got) == len(ref) == 5
    for w, g, r in zip(want, got, ref):
        assert np.asarray(g).shape == r.shape
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
        cos = float(np.dot(np.ravel(g), r.ravel()) / np.linalg.norm(g) / np.linalg.norm(r))
        assert cos >= 0.99, cos


class Strided(nn.Module):
    def forward(self, x):
        return x[:, ::2] * 2.0


def test_a_step_is_slices_joined(tmp_path):
    g = torch.Generator().manual_seed(3)
    calib = [(torch.randn(1, 8, generator=g),) for _ in range(8)]
    res = compile_model(Strided().eval(), [calib[0][0]], calib)
    assert not res.lowered.fallbacks and "aten::cat.out" in res.lowered.operators
    prog = parse_program(res.data)
    x = calib[3][0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert np.abs(got - x[:, [0, 2, 4, 6]].numpy() * 2.0).max() <= step     # two roundings: x's and the product's



class ConstantIndex(nn.Module):
    """A buffer index (with a negative entry and a repeat) and one made in
    forward, each along a different dim."""

    def __init__(self):
        super().__init__()
        self.register_buffer("index", torch.tensor([2, 0, -1, 0]))

    def forward(self, x):                                  # [1, 5, 6]
        return x[:, self.index] * 1.5, x[..., torch.tensor([5, 1, 2, 3])]


def _index_samples():
    g = torch.Generator().manual_seed(5)
    return [(torch.randn(1, 5, 6, generator=g),) for _ in range(8)]


def test_constant_index_tensor_is_torch_in_float():
    torch.manual_seed(0)
    model = ConstantIndex().eval()
    samples = _index_samples()
    graph = capture(model, samples[0])
    assert not any(n.op == "unsupported" for n in graph.nodes)
    for (x,) in samples[:3]:
        got = evaluate(graph, [x])
        with torch.no_grad():
            want = model(x)
        for a, b in zip(got, want):
            assert torch.equal(a, b)


def test_constant_index_tensor_runs_int8(tmp_path):
    torch.manual_seed(0)
    model = ConstantIndex().eval()
    samples = _index_samples()
    res = compile_model(model, list(samples[0]), samples)
    assert not res.lowered.fallbacks and not res.lowered.refusals and not res.lowered.unsupported
    prog = parse_program(res.data)
    steps = [res.graph.node(o).qparams[0] for o in res.graph.outputs]
    for (x,) in samples[4:7]:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        with torch.no_grad():
            ref = [t.numpy() for t in model(x)]
        for w, g, r, step, bound in zip(want, got, ref, steps, (1.0, 0.5)):
            assert np.asarray(g).shape == r.shape
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
            # x rounded to its grid (the copy moves bytes: half a step); the product rounds once more
            assert np.abs(g - r).max() <= step * bound * 1.001


class Index(nn.Module):
    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, x):
        return eval(self.call, {"torch": torch, "x": x}) * 2.0      # noqa: S307 - the test's own call text


class Copy(nn.Module):
    """x indexed by the call's text, nothing after it: the output is x's
    entries moved, on x's own grid."""

    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, x):
        return eval(self.call, {"torch": torch, "x": x})      # noqa: S307 - the test's own call text


ADVANCED = [
    "x[:, torch.tensor([[0, 1], [2, 0]])]",                     # 2-D
    "x[torch.tensor([0]), torch.tensor([1])]",                  # several
    "x[:, torch.tensor([True, False, True])]",                  # a bool mask
    "x[:, torch.tensor([[True, False, True, True], [False, False, True, False], [True] * 4])]",   # a 2-D mask
    "x[0, :, torch.tensor([0, 1])]",                            # an int first (torch: basic first, unlike numpy)
    "x[torch.tensor([0, 0]), :, torch.tensor([[1], [3]])]",     # not adjacent, broadcast: result dims first
    "x[0, torch.tensor([0, 2]), 1]",
    "x[None, :, torch.tensor([0, 2]), None]",
    "x[..., torch.tensor([[0, 1], [3, 3]])]",
    "x[:, 1:, torch.tensor([3, 2, 1])]",
    "x[torch.tensor([0]), torch.tensor([[2], [1]]), torch.tensor([1, 3])]",
    "x[:, :, torch.tensor(1)]",
    # a 0-d index is an int to torch: applied first, so the other one's dim stays in place (not first)
    "x[torch.tensor(0), :, torch.tensor([0, 1, 2])]",
]


@pytest.mark.parametrize("call", ADVANCED)
def test_advanced_constant_indices_run_int8_and_move_values(call, tmp_path):
    g = torch.Generator().manual_seed(11)
    calib = [(torch.randn(1, 3, 4, generator=g),) for _ in range(8)]
    model = Copy(call).eval()
    res = compile_model(model, [calib[0][0]], calib)
    assert not res.lowered.fallbacks and not res.lowered.refusals and not res.lowered.unsupported
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calib[4:7]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = model(x).numpy()
        assert got.shape == want.shape
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        # bytes moved: x's rounding alone, half a step
        assert np.abs(got - want).max() <= step * 0.5 * 1.001


@pytest.mark.parametrize("call,why", [
    # x[x > 0] runs as a program output, into element-wise ops (test_masked_select.py) and the
    # layers of test_selection_rows.py, test_selection_mix.py and test_selection_more.py; a layer mixing
    # its elements otherwise is refused
    # (unsqueeze(0) and its element-wise readers run: test_selection_row_output.py; a reader
    # broadcasting the varying length against a dim above 1 does not)
    ("x[x > 0][None] + torch.ones(3, 1)", "whose length depends on the values"),
])
def test_other_tensor_indices_are_refused_in_one_line(call, why):
    x = torch.randn(1, 3, 4)
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Index(call).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "getitem (operator.getitem)" in message and why in message, message


def test_an_index_out_of_range_is_refused_in_one_line():
    x = torch.randn(1, 3, 4)
    with pytest.raises(CaptureError) as e:
        compile_model(Index("x[:, torch.tensor([0, -4])]").eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "getitem (operator.getitem): index -4 is out of range" in message, message


@pytest.mark.parametrize("call,why", [
    ("x[:, torch.tensor([False, False, False])]", "selects no entry"),
    ("x[torch.tensor([0, 0]), torch.tensor([1, 2, 0])]", "do not broadcast"),
    ("x[0, 5, torch.tensor([1])]", "index 5 is out of range for dim 1"),
])
def test_an_index_torch_fails_on_or_choosing_nothing_is_refused_in_one_line(call, why):
    x = torch.randn(1, 3, 4)
    with pytest.raises(CaptureError) as e:
        compile_model(Index(call).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and why in message, message
