"""torch.unique / unique_consecutive with return_counts=True and with dim=
(ptec.capture_unique_counts, issue 15): the counts (int64, as many as the
unique values: a length following the values) are torch's exactly, the
inverse too, the values within half an output step; unique slices along a
dim in torch's lexicographic order. What stays out is refused in one line."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call


def grid_inputs(seed, levels, n=6, shape=(1, 4, 8)):
    """Values on a grid over [-3, 3] (int8 codes far apart), in runs; the
    number of distinct values and their counts vary from input to input."""
    g = torch.Generator().manual_seed(seed)
    xs = [(torch.randint(-1 - i % levels, 2 + i % levels, shape, generator=g) * (3.0 / levels),)
          for i in range(n)]
    xs[0] = (torch.linspace(-3, 3, 2 * levels + 1).repeat_interleave(3).repeat(8)[:int(np.prod(shape))]
             .reshape(shape),)
    return xs


def row_inputs(seed, shape, n=6):
    """x of `shape` (dims of 1, then the slices' dim) whose slices are drawn from a few rows of a
    grid, so slices repeat, and their number and order vary: the rows
    differ in a late column too (the lexicographic order's later keys)."""
    g = torch.Generator().manual_seed(seed)
    lead = next(i for i, d in enumerate(shape) if d != 1)
    width = int(np.prod(shape[lead + 1:]))
    pool = torch.randint(-2, 3, (5, width), generator=g) * 1.0
    pool[1] = pool[0]
    pool[1, -1] = pool[0, -1] + 1.0                  # equal up to the last column
    xs = []
    for i in range(n):
        picks = torch.randint(0, 1 + i % 5, (shape[lead],), generator=g)
        xs.append((pool[picks].reshape(shape).clone(),))
    xs.append((torch.full(shape, 1.0),))             # one slice
    return xs


def slice_inputs(seed, shape, d, n=6):
    """x of `shape` whose slices along d (any dims before it) are drawn from
    a few slices of a grid, two equal but in their last element, so slices
    repeat and their number and order vary."""
    g = torch.Generator().manual_seed(seed)
    rest = list(shape[:d]) + list(shape[d + 1:])
    pool = torch.randint(-2, 3, [5] + rest, generator=g) * 1.0
    pool[1] = pool[0]
    pool[1].view(-1)[-1] = pool[0].reshape(-1)[-1] + 1.0
    xs = []
    for i in range(n):
        picks = torch.randint(0, 1 + i % 5, (shape[d],), generator=g)
        xs.append((pool[picks].movedim(0, d).contiguous(),))
    xs.append((torch.full(shape, 1.0),))
    return xs


def check(fn, cal, tmp_path, extra=(), inverse_alone=False):
    """Runs the program on cal and extra inputs: int64 results equal to
    torch's, float ones within half an output step; returns the lengths."""
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    steps = [res.graph.node(o).qparams[0] if res.graph.node(o).qparams else None for o in res.graph.outputs]
    lengths = set()
    for (x,) in list(cal) + list(extra):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = run_program(prog, [x.numpy()])
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want], "ptec-run differs from the reference"
        ref = fn(x)
        ref = list(ref) if isinstance(ref, tuple) else [ref]
        assert len(got) == len(ref)
        for g, r, step in zip(got, ref, steps):
            r = r.numpy()
            assert g.shape == r.shape, (g.shape, r.shape)
            if r.dtype == np.int64:
                assert g.dtype == np.int64 and np.array_equal(g, r), (g, r)
            else:
                assert g.dtype == np.float32
                assert np.abs(g - r).max(initial=0.0) <= 0.5 * step + 1e-6, (g, r, step)
        # how many unique values (slices): the largest group of the inverse (x's shape or length) + 1,
        # else the last result's length (counts, values)
        last = ref[-1]
        inverse = last.dtype == torch.int64 and (last.shape == x.shape or last.shape[0] != ref[0].shape[0]
                                                 or len(ref) == 1 and inverse_alone)
        lengths.add((int(last.max()) + 1,) if inverse else tuple(last.shape))
    return lengths


@pytest.mark.parametrize("fn,levels", [
    (lambda x: torch.unique(x, return_counts=True), 6),
    (lambda x: x.unique(sorted=True, return_counts=True), 2),
    (lambda x: torch.unique(x, return_inverse=True, return_counts=True), 3),
    (lambda x: torch.unique(x, return_counts=True)[1], 6),
    (lambda x: torch.unique_consecutive(x, return_counts=True), 2),
    (lambda x: x.unique_consecutive(return_inverse=True, return_counts=True), 1),
    (lambda x: torch.unique_consecutive(x, return_counts=True)[1], 1),
], ids=["torch.unique", "x.unique(sorted)", "inverse and counts", "counts alone", "torch.unique_consecutive",
        "x.unique_consecutive inverse and counts", "consecutive counts alone"])
def test_counts_are_torchs(fn, levels, tmp_path):
    lengths = check(fn, grid_inputs(levels, levels), tmp_path, [(torch.full((1, 4, 8), 1.5),)])
    assert (1,) in lengths and len(lengths) >= 3, lengths


def test_counts_of_many_elements(tmp_path):
    """No count arithmetic on an int8 grid: 512 elements, counts up to 512."""
    fn = lambda x: torch.unique(x.repeat(1, 2, 8), return_counts=True)[1]         # noqa: E731
    lengths = check(fn, grid_inputs(3, 3), tmp_path, [(torch.full((1, 4, 8), -0.5),)])
    assert (1,) in lengths and len(lengths) >= 3, lengths


def test_float_counts(tmp_path):
    """`.float()` of the counts (the refused-operators row this replaced):
    the cast moves before the pick; whole numbers within half an output step."""
    fn = lambda x: torch.unique(x.round(), return_counts=True)[1].float()          # noqa: E731
    cal = grid_inputs(5, 3)
    lengths = check(fn, cal, tmp_path)
    assert len(lengths) >= 3, lengths


@pytest.mark.parametrize("fn,shape", [
    (lambda x: torch.unique(x, dim=1), (1, 7, 3)),
    (lambda x: torch.unique(x, dim=0), (7, 4)),
    (lambda x: x.unique(dim=-2, return_inverse=True, return_counts=True), (1, 7, 3)),
    (lambda x: torch.unique(x, dim=0, return_counts=True)[1], (7, 4)),
    (lambda x: torch.unique(x, dim=1, return_inverse=True)[1], (1, 7, 3)),
    (lambda x: torch.unique(x, dim=1), (1, 7, 2, 2)),
    (lambda x: torch.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True), (7, 4)),
    (lambda x: x.unique_consecutive(dim=1), (1, 7, 3)),
    (lambda x: torch.unique(x, dim=-1, return_inverse=True), (1, 9)),
    # the count behind a dim above 1 (x[:, :, m]: capture_unique_counts._behind)
    (lambda x: torch.unique(x, dim=2), (1, 3, 7)),
    (lambda x: torch.unique(x, dim=1, return_inverse=True, return_counts=True), (2, 7, 3)),
    (lambda x: torch.unique_consecutive(x, dim=2), (1, 2, 7, 2)),
    (lambda x: torch.unique(x, dim=2), (1, 1, 7, 3)),
    (lambda x: x.unique(dim=-1, return_counts=True), (2, 2, 7)),
], ids=["dim=1", "dim=0", "dim=-2 inverse and counts", "dim=0 counts alone", "dim=1 inverse alone",
        "dim=1 of slices [2, 2]", "consecutive dim=0 inverse and counts", "x.unique_consecutive(dim=1)",
        "dim=-1 of [1, 9] inverse", "dim=2 of [1, 3, 7]", "dim=1 of [2, 7, 3] inverse and counts",
        "consecutive dim=2 of [1, 2, 7, 2]", "dim=2 of [1, 1, 7, 3]", "dim=-1 of [2, 2, 7] counts"])
def test_unique_slices_are_torchs(fn, shape, request, tmp_path):
    if " of [" in request.node.name and "[1, 9]" not in request.node.name:      # the slices' dim: the one of 7
        cal = slice_inputs(len(shape) * 10 + shape[-1], shape, list(shape).index(7))
    else:
        cal = row_inputs(len(shape) * 10 + shape[-1], shape)
    lengths = check(fn, cal, tmp_path, inverse_alone="inverse alone" in request.node.name)
    assert len(lengths) >= 3, lengths


def test_lexicographic_order_reaches_the_last_column(tmp_path):
    """Slices equal but in their last element: torch sorts them by it."""
    fn = lambda x: torch.unique(x, dim=1, return_inverse=True, return_counts=True)        # noqa: E731
    a = torch.tensor([[1.0, -1.0, 2.0], [1.0, -1.0, 1.0], [-2.0, 3.0, 0.0], [1.0, -1.0, 2.0], [-2.0, 3.0, -1.0]])
    cal = [(a[None],), (a.flip(0)[None],), (a[[1, 1, 4, 4, 4]][None],)] + row_inputs(1, (1, 5, 3))
    check(fn, cal, tmp_path)


@pytest.mark.parametrize("call,why", [
    ("torch.unique(x, sorted=False, return_counts=True)[1]", "sorted=False"),
    # (sums / means / extremes / softmax, scans, flips and views keeping the count a dim of those slices run:
    # test_unique_slices_readers.py; a cumprod stays refused)
    ("torch.unique(x, dim=2).cumprod(2)",
     "it reads unique's slices along a dim behind a dim above 1"),
    ("torch.unique(x[:, :, :0], dim=1)", "dim runs on a float32 tensor of fixed shape, no size 0"),
    ("torch.unique(x[..., :1, :1], return_inverse=True, return_counts=True)[2]", "return_inverse"),
    # (dim 0 of a selection x[m] runs: test_unique_selection_dim.py; its columns, or a view of it, stay refused)
    ("x.reshape(8, 4)[x.reshape(8, 4)[:, 0] > 0].unique_consecutive(return_counts=True, dim=1)[1]", "selection"),
    ("torch.unique(x[x > 0].reshape(-1, 1), dim=0)", "fixed shape"),
    ("x.reshape(8, 4)[x.reshape(8, 4)[:, 0] > 0].unique(dim=1)", "selection"),
])
def test_left_refused_in_one_line(call, why):
    x = grid_inputs(0, 6, n=1)[0][0]
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(eval(f"lambda x: {call}")).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and why in message, message



# (call, calibration inputs, the input the board runs: counts that vary)
BOARD_CALLS = {
    "counts": (lambda x: torch.unique(x, return_counts=True)[1], lambda: grid_inputs(2, 2), 1),
    "slices' counts": (lambda x: torch.unique(x, dim=1, return_inverse=True, return_counts=True)[2],
                       lambda: row_inputs(1, (1, 8, 4)), 3),
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, target, tmp_path):
    from model_checks import board_matches_reference
    fn, make, at = BOARD_CALLS[name]
    cal = make()
    assert len(set(fn(cal[at][0]).tolist())) > 1           # counts that differ
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    board_matches_reference(res.data, cal[at][0].numpy(), target, tmp_path)
