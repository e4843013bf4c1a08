"""Index calls (issue 15): uses of a computed index (gather / take_along_dim
/ F.one_hot of an argsort or argmax), the scatter family with constant
indices (capture_scatter), and the results whose length follows the values
(torch.nonzero / argwhere / unique / unique_consecutive: capture_nonzero).

Oracles: PyTorch on the same inputs. In float (the captured graph's own
evaluation) the rewrites are torch's values; on the host runtime the int8
program is within a few output steps of them (test_function_coverage's
RUNS rows), and the int64 results (one_hot, nonzero) are torch's exactly,
their lengths included."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import ROOT
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator, evaluate
from ptec.pte import parse_program
from model_checks import Call


def samples(n=6, seed=0, shape=(1, 4, 8)):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 6 - 3,) for _ in range(n)]


I = torch.tensor([[[7, 0, 3, 3, 1, 6, 2, 5]]]).repeat(1, 4, 1)      # position 3 twice, 4 never
PERM = torch.tensor([[[3, 1, 0, 2, 7, 6, 5, 4]]]).repeat(1, 4, 1)

# each: the captured graph evaluated in float is torch's value
FLOAT_EQUAL = {
    # the bug: the example run gave these index arguments float32 (the graph's carrier), which torch refuses
    "x.gather(2, x.argsort(2))": lambda x: x.gather(2, x.argsort(2)),
    "torch.gather(x, 1, topk indices)": lambda x: torch.gather(x, 1, x.topk(2, 1)[1]),
    "take_along_dim(argmax keepdim)": lambda x: torch.take_along_dim(x, x.argmax(2, keepdim=True), 2),
    "take_along_dim(x[:, :1], argsort) (x broadcast)": lambda x: x[:, :1].take_along_dim(x.argsort(2), dim=-1),
    "F.one_hot(argmax, 8)": lambda x: F.one_hot(x.argmax(-1), 8),
    "F.one_hot(x.max(1)[1], 6).float()": lambda x: F.one_hot(x.max(1)[1], num_classes=6).float(),
    "scatter": lambda x: torch.scatter(x, 2, PERM[..., :5], x * 0.5),
    "Tensor.scatter(kwargs, negative dim)": lambda x: x.scatter(dim=-1, index=PERM[:, :2], src=-x),
    "scatter(value)": lambda x: x.scatter(1, torch.tensor([[[0, 1], [2, 3]]]), 1.5),
    "scatter(reduce=add) dup": lambda x: x.scatter(2, I, x, reduce="add"),
    "scatter(reduce=multiply) dup": lambda x: x.scatter(2, I, x, reduce="multiply"),
    "scatter(value, reduce=add) dup": lambda x: x.scatter(2, I, 0.25, reduce="add"),
    "scatter_add into zeros": lambda x: torch.zeros(1, 4, 8).scatter_add(2, I, x),
    "torch.scatter_add of a smaller src": lambda x: torch.scatter_add(x, 1, torch.tensor([[[3, 0], [3, 1]]]),
                                                                      x[:, :2, :2] * 2),
    **{f"scatter_reduce {r} include_self={inc}": (lambda x, r=r, inc=inc: x.scatter_reduce(2, I, x * 0.5 + 1, r,
                                                                                           include_self=inc))
       for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)},
    "scatter of an empty index": lambda x: x.scatter(2, torch.zeros(1, 4, 0, dtype=torch.long), x),
    "scatter_reduce amin, three writes to one position": lambda x: x.scatter_reduce(
        2, torch.tensor([[[3, 3, 0, 3, 1, 2, 4, 5]]]).repeat(1, 4, 1), -x, "amin", include_self=False),
    "scatter_reduce prod, three writes to one position": lambda x: x.scatter_reduce(
        1, torch.tensor([[[2, 0], [2, 2], [0, 2], [2, 1]]]), x[..., :2] + 2, "prod"),
    # by an index computed in the program: a one-hot matmul (capture_scatter_computed)
    "scatter(argsort) into zeros": lambda x: torch.zeros(1, 4, 8).scatter(2, x.argsort(2), x),
    "scatter(topk indices) into x": lambda x: x.scatter(-1, x.topk(3, -1)[1], -x[..., :3]),
    "scatter(argmax keepdim, value-like src)": lambda x: x.scatter(2, x.argmax(2, keepdim=True), x[..., 1:2] * 3),
    "torch.scatter_add(argsort descending)": lambda x: torch.scatter_add(x, 2, x.argsort(2, descending=True), x * 0.5),
    "index_add": lambda x: torch.zeros(1, 4, 8).index_add(2, torch.tensor([0, 1]), x[..., :2]),
    "index_add(alpha, dup, negative dim)": lambda x: x.index_add(-2, torch.tensor([0, 2, 0]), x[:, 1:], alpha=-2),
    "torch.index_add": lambda x: torch.index_add(x, 1, torch.tensor([3]), x[:, :1]),
    "index_copy": lambda x: x.index_copy(2, torch.tensor([7, 1, 3]), x[..., :3] * -1),
    "masked_scatter (mask broadcast)": lambda x: x.masked_scatter(torch.arange(8) % 3 == 0, x * 2),
    "masked_scatter (mask of x's shape)": lambda x: torch.masked_scatter(x, torch.eye(4, 8).bool()[None], x[:, 3:]),
    "index_put": lambda x: x.index_put((torch.tensor([0]), torch.tensor([1]), torch.tensor([2])), torch.tensor(5.0)),
    "index_put(negative, rows)": lambda x: x.index_put((torch.tensor([0, 0]), torch.tensor([-1, 1])), x[0, :2] * 3),
    "index_put(accumulate, dup)": lambda x: x.index_put((torch.tensor([0, 0]), torch.tensor([1, 1])), x[0, 2:4],
                                                        accumulate=True),
    "index_put(accumulate, broadcast value twice)": lambda x: x.index_put(
        (torch.tensor([0, 0]), torch.tensor([2, 2]), torch.tensor([5, 5])), x[0, 0, :1], accumulate=True),
    # self viewed flat; negative positions from the end
    "put": lambda x: x.put(torch.tensor([0, 5, -1, 17]), x[0, 1, :4] * 2),
    "torch.put(accumulate, dup, 2-D index)": lambda x: torch.put(x, torch.tensor([[3, 3], [30, -2]]), x[0, :2, 6:],
                                                                  accumulate=True),
    "x.clone().put_(constant source)": lambda x: x.clone().put_(torch.tensor([1, 2]), torch.tensor([9.0, -1.0])),
    "put_ then read": lambda x: (lambda y: (y.put_(torch.tensor([4, 9]), x[0, 3, :2] - 1), y * 0.5)[1])(x * 2),
}


@pytest.mark.parametrize("name", sorted(FLOAT_EQUAL))
def test_capture_is_torch_in_float(name):
    fn = FLOAT_EQUAL[name]
    for (x,) in samples(3):
        g = capture(Call(fn).eval(), [x])
        assert not [n for n in g.nodes if n.op == "unsupported"], g.summary()
        got = evaluate(g, [x])[0]
        want = fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
        assert torch.allclose(got.double(), want.double(), atol=1e-5), name


def test_an_unrun_call_gets_index_values_in_torchs_dtype():
    """The example run carries index values as float32: a call capture
    leaves unsupported gets them as torch's int64 again, so it is refused by
    name at lowering rather than failing capture on a float index."""
    # (take_along_dim with no dim, once this case, runs now: capture_spellings)
    fn = lambda x: x.index_reduce(2, x[0, 0, :3].argsort(), x[..., :3], "amax")      # noqa: E731 - not run
    x = samples(1)[0][0]
    g = capture(Call(fn).eval(), [x])
    assert torch.equal(evaluate(g, [x])[0], fn(x))
    with pytest.raises(CompileError, match=r"index_reduce") as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    assert "example inputs" not in str(e.value) and "\n" not in str(e.value)


def distinct(shape=(1, 4, 8), n=6, seed=1):
    """Inputs whose values are far apart (no two within 3 int8 steps of a
    [-3, 3] grid): argmax and argsort of the int8 codes are torch's."""
    g = torch.Generator().manual_seed(seed)
    numel = int(np.prod(shape))
    return [((torch.randperm(numel, generator=g).float() / (numel - 1) * 5.6 - 2.8).reshape(shape),)
            for _ in range(n)]


@pytest.mark.parametrize("fn", [lambda x: F.one_hot(x.argmax(-1), 8), lambda x: F.one_hot(x.argsort(1), 5),
                                lambda x: x.gather(2, x.argsort(2, descending=True)),
                                lambda x: torch.take_along_dim(x, x.argmin(1, keepdim=True), 1),
                                lambda x: torch.zeros(1, 4, 8).scatter(2, x.argsort(2), x)],
                         ids=["one_hot(argmax)", "one_hot(argsort, 5)", "gather(argsort)", "take_along_dim(argmin)",
                              "scatter(argsort)"])
def test_computed_index_uses_run_as_torch(fn, tmp_path):
    cal = distinct()
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == np.int64:
            assert np.array_equal(got, want)
        else:        # picked int8 bytes of x: half an input step
            assert np.abs(got - want).max() <= step[0] * 0.5 + 1e-6


REFUSED = {
    # (along another dim than the last it runs: test_scatter_computed_dims.py; an argsort over another dim
    # than the written one may write a position twice)
    "scatter by an argsort over another dim than the written one": (
        lambda x: torch.zeros(1, 4, 8).scatter(2, x.argsort(1), x),
        r"scatter \(Tensor.scatter\): its index is computed in the program: its positions are distinct along "
        r"the dim the argsort ran over \(1\), not along the written dim 2"),
    "scatter by a computed index over more positions": (
        lambda x: x[..., :4].scatter(2, x.argmax(2, keepdim=True), x[..., :1]), r"more positions than .* \(4\)"),
    "scatter writing one position twice": (lambda x: x.scatter(2, I, x), r"more than once.*unspecified"),
    "index_copy writing one position twice": (lambda x: x.index_copy(1, torch.tensor([1, 1]), x[:, :2]),
                                              r"index_copy.*more than once"),
    "scatter index out of its dim": (lambda x: x.scatter(2, I + 1, x), r"outside 0\.\.7"),
    "put writing one position twice": (lambda x: x.put(torch.tensor([3, -29]), x[0, 0, :2]), r"put.*more than once"),
    "put index out of range": (lambda x: x.put(torch.tensor([32]), x[0, 0, :1]), r"put.*outside -32\.\.31"),
    "put by a computed index": (lambda x: x.put(x[0, 0].argsort()[:2], x[0, 0, :2]), r"put.*index is computed"),
    "scatter_reduce unknown reduce": (lambda x: x.scatter_reduce(2, I, x, "max"), r"reduce='max' is not one of"),
    # a computed mask runs on at most 256 elements (capture_masked_scatter; test_random_and_leftovers.py)
    "masked_scatter by a computed mask over 288 elements": (lambda x: x.repeat(1, 1, 9).masked_scatter(
        x.repeat(1, 1, 9) > 0, x.repeat(1, 1, 9) * 2), r"its mask is computed.*at most 256"),
    "masked_scatter with too small a source": (lambda x: x.masked_scatter(torch.ones(8).bool(), x[0, 0, :3]),
                                               r"source has 3 elements, fewer than the mask's 32"),
    "F.one_hot without num_classes": (lambda x: F.one_hot(x.argmax(-1)), r"one_hot.*give num_classes"),
    # (F.one_hot of ids that may fall outside 0..C-1 runs as a checked lookup: test_io_forms.py)
    # as_tuple=True runs with its elements program outputs (capture_coordinate_tuple)
    "nonzero(as_tuple=True) element read": (lambda x: torch.nonzero(x > 0, as_tuple=True)[0] + 1,
                                            r"nonzero.*program outputs"),
    # (return_counts and dim run: capture_unique_counts, test_unique_counts.py)
    # (unique of a selection with return_counts / return_inverse runs: capture_unique_selection,
    # test_unique_selection.py)
    # (a sum / mean / max / softmax of unique(dim)'s slices runs, and so do their scans, flips and views:
    # test_unique_slices_readers.py, the UNIQUE_COUNTS rows; a cumprod stays refused)
    "a reader of unique(dim) behind a dim above 1": (lambda x: torch.unique(x, dim=2).cumprod(1),
                                                     r"reads unique's slices along a dim behind a dim above 1"),
    "unique(sorted=False)": (lambda x: torch.unique(x, sorted=False), r"sorted=False"),
    # (unique_consecutive of a selection with counts / inverse runs too, and with dim 0: test_unique_selection_dim.py;
    # the columns of a row selection stay refused)
    "unique_consecutive(return_counts, dim=1) of a row selection": (
        lambda x: torch.unique_consecutive(x[0][x[0, :, 0] > 0], return_counts=True, dim=1)[1],
        r"unique_consecutive.*on a selection.*with dim 0"),
    "a layer after nonzero": (lambda x: torch.nonzero(x > 0).sum(), r"nonzero.*length"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_other_forms_are_refused_in_one_line(name):
    fn, words = REFUSED[name]
    x = samples(1)[0][0]
    with pytest.raises((UnsupportedOperator, CompileError)) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and message.startswith("operator not supported"), message
    assert __import__("re").search(words, message), message


def test_refusal_through_the_cli_exits_2(tmp_path):
    (tmp_path / "m.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.zeros(1, 4, 8).scatter(2, x.argsort(1), x)\n"
        "def make():\n"
        "    m = M()\n"
        "    m.input_shape = (1, 4, 8)\n"
        "    return m\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/m.py:make", "--calib", "2", "-o",
                        str(tmp_path / "m.pte")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "scatter (Tensor.scatter): its index is computed in the program" in r.stderr


def test_the_pick_matrix_has_a_size_limit():
    x = torch.randn(1, 64, 64)
    fn = lambda x: x.scatter_add(2, torch.arange(64).flip(0).repeat(1, 64, 1), x * 2)     # noqa: E731
    with pytest.raises(UnsupportedOperator, match=r"pick matrix would have 16777216 entries"):
        compile_model(Call(fn).eval(), [x], [(x,)])
    # a plain write that large is a gather of runs (test_index_forms.py), refused past 1024 runs
    fn = lambda x: x.scatter(2, torch.arange(64).flip(0).repeat(1, 64, 1), x * 2)     # noqa: E731
    with pytest.raises(UnsupportedOperator, match=r"its writes fall in 4096 separate runs"):
        compile_model(Call(fn).eval(), [x], [(x,)])


SELECTIONS = {
    "torch.nonzero(x > 0.5)": lambda x: torch.nonzero(x > 0.5),
    "torch.argwhere(x > 0.5)": lambda x: torch.argwhere(x > 0.5),
    "(x > 0.5).nonzero(as_tuple=False)": lambda x: (x > 0.5).nonzero(as_tuple=False),
    "torch.nonzero(relu(x - 0.5)) (a float: != 0)": lambda x: torch.nonzero(torch.relu(x - 0.5)),
    "nonzero of a 2-D mask": lambda x: torch.nonzero(x[0] > 0.5),
    "nonzero of a 4-D mask": lambda x: torch.nonzero(x.reshape(1, 2, 2, 8) > 0.5),
}


def away_from(threshold, x, step):
    return torch.where((x - threshold).abs() < 2 * step, x + 4 * step, x)


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_nonzero_is_torchs_coordinates(name, tmp_path):
    fn = SELECTIONS[name]
    cal = samples(6, 2)
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks and res.lowered.outputs[0].dtype == "int64"
    prog = parse_program(res.data)
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    counts = set()
    for (x,) in cal[:3] + [(torch.full((1, 4, 8), -2.0),), (torch.full((1, 4, 8), 2.0),)]:
        x = away_from(0.5, x, in_step)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x).numpy()
        assert got.dtype == np.int64 and got.shape == want.shape and np.array_equal(got, want), (got, want)
        counts.add(len(want))
    assert 0 in counts and 32 in counts and len(counts) >= 3, counts


UNIQUES = {
    "torch.unique(x)": lambda x: torch.unique(x),
    "x.unique(sorted=True)": lambda x: x.unique(sorted=True),
    "torch.unique of a 4-D value": lambda x: torch.unique(x.reshape(1, 2, 2, 8) * 2),
}


@pytest.mark.parametrize("name", sorted(UNIQUES))
def test_unique_is_torchs_on_values_a_grid_apart(name, tmp_path):
    """Values at least a few int8 steps apart (a half grid over [-3, 3]):
    the program's distinct codes are torch's distinct values, so the count
    is torch's and each value within half an output step."""
    fn = UNIQUES[name]
    g = torch.Generator().manual_seed(6)
    grid = lambda n: (torch.randint(-6, 7, (1, 4, 8), generator=g) * 0.5).clamp(-3, 3)[:n]  # noqa: E731
    cal = [(grid(1),) for _ in range(6)]
    cal[0] = (torch.linspace(-3, 3, 13).repeat(3)[:32].reshape(1, 4, 8),)     # every value of the grid
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    counts = set()
    for (x,) in cal + [(torch.full((1, 4, 8), 1.5),)]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x).numpy()
        assert got.shape == want.shape, (got, want)
        assert np.abs(got - want).max() <= 0.5 * step + 1e-6
        counts.add(len(want))
    assert 1 in counts and 13 in counts and len(counts) >= 3, counts


@pytest.mark.parametrize("fn", [lambda x: torch.unique_consecutive(x), lambda x: x[0, 1].unique_consecutive()],
                         ids=["torch.unique_consecutive(x)", "1-D x.unique_consecutive()"])
def test_unique_consecutive_is_torchs_on_values_a_grid_apart(fn, tmp_path):
    """Runs of equal values on a half grid: each run's value once, in order
    (the values' order kept: no sort), as torch's; the count varies."""
    g = torch.Generator().manual_seed(3)
    runs = lambda: (torch.randint(-2, 3, (1, 4, 8), generator=g) * 1.5).clamp(-3, 3)    # noqa: E731
    cal = [(runs(),) for _ in range(6)]
    cal[0] = (torch.linspace(-3, 3, 5).repeat_interleave(7)[:32].reshape(1, 4, 8),)   # every value, in runs
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    counts = set()
    for (x,) in cal + [(torch.full((1, 4, 8), 1.5),)]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        want = fn(x).numpy()
        assert got.shape == want.shape, (got, want)
        assert np.abs(got - want).max() <= 0.5 * step + 1e-6
        counts.add(len(want))
    assert 1 in counts and len(counts) >= 3, counts


def test_unique_of_one_element():
    fn = lambda x: torch.unique(x[0, 0, :1])      # noqa: E731
    x = samples(1)[0][0]
    g = capture(Call(fn).eval(), [x])
    assert torch.equal(evaluate(g, [x])[0], fn(x))


@pytest.mark.parametrize("name,fn", [("nonzero", lambda x: torch.nonzero(x > 0.5)),
                                     ("scatter_reduce amax", lambda x: x.scatter_reduce(2, I, x * 2, "amax"))])
def test_board_prints_the_reference_bytes(name, fn, tmp_path):
    """The emulated M55 runs the int64 rows selection (its length the
    run's) and the pick matmuls as the reference interpreter does."""
    from model_checks import board_matches_reference
    cal = samples(4, 3)
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    board_matches_reference(res.data, cal[1][0].numpy(), "cortex-m55", tmp_path)


def test_item_assignment_runs_as_its_functional_form():
    """x[idx] = v with constant index tensors runs (capture_item_assignment)
    as its functional form index_put does, which runs too."""
    class SetItem(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            y[0, torch.tensor([1, 3]), torch.tensor([2, 5])] = 5.0
            return y

    x = samples(1)[0][0]
    want = x * 2
    want[0, torch.tensor([1, 3]), torch.tensor([2, 5])] = 5.0
    assert torch.allclose(evaluate(capture(SetItem().eval(), [x]), [x])[0], want)
    # the form it names runs, as torch's x[idx] = v
    fn = lambda x: (x * 2).index_put((torch.tensor([0, 0]), torch.tensor([1, 3]), torch.tensor([2, 5])),  # noqa: E731
                                     torch.tensor(5.0))
    want = x * 2
    want[0, torch.tensor([1, 3]), torch.tensor([2, 5])] = 5.0
    g = capture(Call(fn).eval(), [x])
    assert torch.allclose(evaluate(g, [x])[0], want)
