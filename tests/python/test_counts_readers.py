"""Integer readers of unique's counts (ptec.capture_counts_readers, issue
15): counts * 2, counts // 2, counts > 1, counts.sum() / max() / argmax(),
counts.cumsum(0) and values[counts.argmax()] (the most frequent value) are
torch's exactly (the value within half an output step: a code taken);
and a cast of a view of a computed bool (`(x > 0).reshape(4, -1).long()`),
which shape inference ran as a float op on the bool."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call
from test_unique_counts import grid_inputs, row_inputs


def run_all(fn, cal, tmp_path, bound=0.5):
    """The program on cal: ptec-run's bytes are the reference's, int / bool
    results torch's exactly, float ones within `bound` output steps; the
    set of results (as tuples) seen, to check they vary."""
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    steps = [res.graph.node(o).qparams[0] if res.graph.node(o).qparams else None for o in res.graph.outputs]
    seen = set()
    for (x,) in cal:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        want = run_program(prog, [x.numpy()])
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want], "ptec-run differs from the reference"
        with torch.no_grad():
            ref = fn(x)
        ref = list(ref) if isinstance(ref, tuple) else [ref]
        assert len(got) == len(ref)
        for g, r, step in zip(got, ref, steps):
            r = r.numpy()
            assert g.shape == r.shape and g.dtype == r.dtype, (g.shape, r.shape, g.dtype, r.dtype)
            if r.dtype == np.float32:
                assert np.abs(g - r).max(initial=0.0) <= bound * step + 1e-6, (g, r, step)
            else:
                assert np.array_equal(g, r), (g, r)
            seen.add((r.shape, tuple(np.ravel(r).tolist())))
    return seen


def counts(x):
    return torch.unique(x, return_counts=True)[1]


def consecutive(x):
    return torch.unique_consecutive(x, return_counts=True)[1]


READERS = {
    "counts * 2": lambda x: counts(x) * 2,
    "counts - 1 + counts.sum()": lambda x: (counts(x) - 1, counts(x).sum()),
    "counts // 2": lambda x: counts(x) // 2,
    "counts % 3": lambda x: counts(x) % 3,
    "counts > 1": lambda x: counts(x) > 1,
    "counts.sum() - counts.max()": lambda x: counts(x).sum() - counts(x).max(),
    "(counts // 2).sum()": lambda x: (counts(x) // 2).sum(),
    "counts / 2": lambda x: counts(x) / 2,
    "counts.int() * 3": lambda x: counts(x).int() * 3,
    "counts.max()": lambda x: counts(x).max(),
    "counts.min()": lambda x: counts(x).min(),
    "(counts - 9).max()": lambda x: (counts(x) - 9).max(),
    "counts.argmax()": lambda x: counts(x).argmax(),
    "counts.argmin(0)": lambda x: counts(x).argmin(0),
    "counts.cumsum(0)": lambda x: counts(x).cumsum(0),
    "(counts > 2).sum()": lambda x: (counts(x) > 2).sum(),
    "(counts > 7).any()": lambda x: (counts(x) > 7).any(),
    "(counts > 3).all()": lambda x: (counts(x) > 3).all(),
    "(counts * 2).float()": lambda x: (counts(x) * 2).float(),
    "consecutive counts.max()": lambda x: consecutive(x).max(),
    "consecutive counts.cumsum(0) - 1": lambda x: consecutive(x).cumsum(0) - 1,
    "torch.clamp(counts, max=3)": lambda x: torch.clamp(counts(x), max=3),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_counts_readers_are_torchs(name, tmp_path):
    seen = run_all(READERS[name], grid_inputs(3, 3) + [(torch.full((1, 4, 8), 1.0),)], tmp_path)
    assert len(seen) >= (2 if "any" in name or "all" in name else 3), seen


def mode(x):
    values, c = torch.unique(x, return_counts=True)
    return values[c.argmax()]


def consecutive_mode(x):
    values, c = torch.unique_consecutive(x, return_counts=True)
    return values[c.argmax()], c.max()


def inverse_mode(x):
    values, inverse, c = x.unique(return_inverse=True, return_counts=True)
    return values[c.argmax()], inverse


def frequent(x):
    values, c = torch.unique(x, return_counts=True)
    return values[c > 4], c[c > 4]


def frequent_ids(x):
    values, c = torch.unique((x * 4 / 3).round().long(), return_counts=True)     # the grid's steps as ints
    return values[c >= 4]


@pytest.mark.parametrize("fn", [mode, consecutive_mode, inverse_mode, frequent, frequent_ids])
def test_most_frequent_value(fn, tmp_path):
    """values[counts.argmax()]: the first most frequent (sorted) value, as
    torch; values[counts > 4]: the values seen more than 4 times."""
    seen = run_all(fn, grid_inputs(4, 4) + [(torch.full((1, 4, 8), -1.5),)], tmp_path)
    assert len({s for s in seen if s[0] == () or fn in (frequent, frequent_ids)}) >= 3, seen


def test_slices_counts_readers(tmp_path):
    """The counts of unique(dim=1): the same prefix pick."""
    fn = lambda x: (lambda c: (c.argmax(), c * 3, c.cumsum(0)))(torch.unique(x, dim=1, return_counts=True)[1])  # noqa
    seen = run_all(fn, row_inputs(13, (1, 7, 3)), tmp_path)
    assert len(seen) >= 3, seen


@pytest.mark.parametrize("call,why", [
    ("torch.unique(x, return_counts=True)[1] * torch.unique(x, return_counts=True)[1]",
     "(operator.mul): it reads unique's int64 counts"),
    ("torch.unique(x, return_counts=True)[1].sum(0, keepdim=True)", "(Tensor.sum): it reads"),
    ("torch.unique(x, return_counts=True)[1].sort()[0]", "(Tensor.sort): it reads"),
    ("torch.unique(x.round(), return_counts=True)[0][torch.unique(x, return_counts=True)[1].argmax()]",
     "getitem"),
])
def test_other_readers_refused_in_one_line(call, why):
    x = grid_inputs(0, 6, n=1)[0][0]
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(eval(f"lambda x: {call}")).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and why in message, message


@pytest.mark.parametrize("call", [
    "(x > 0).permute(0, 2, 1).float().sum(1)",
    "(x > 0)[:, :2].float().sum(2)",
    "(x > 0).transpose(1, 2).long()",
])
def test_cast_of_a_moved_bool_runs(call, tmp_path):
    """A cast of a permuted / sliced bool: the bool cast first, then moved
    (capture_bool_moves; test_bool_moves.py), torch's within one output step."""
    assert len(run_all(eval(f"lambda x: {call}"), grid_inputs(0, 6), tmp_path, bound=1.0)) >= 2


@pytest.mark.parametrize("fn", [
    lambda x: (x > 0).reshape(4, -1).float().sum(1),
    lambda x: (x > 0).reshape(4, -1).long(),
    lambda x: (x > 0).reshape(4, -1).float().mean(1),
    lambda x: (x > 0).reshape(4, -1).float() * 3,
    lambda x: (x > 0).reshape(2, -1).to(torch.float32).amax(0),
    lambda x: (x > 0).flatten().long(),
    lambda x: (x > 0).squeeze(0).float().mean(1),
], ids=["float sum", "long", "float mean", "float * 3", "to float32 amax", "flatten long", "squeeze float mean"])
def test_cast_of_a_viewed_bool(fn, tmp_path):
    """A cast of a view of a computed bool is the bool's cast: 0 / 1 as
    torch; a float reader within one output step (int8: sum is the mean's
    output times the count)."""
    g = torch.Generator().manual_seed(5)
    cal = [(torch.randn(1, 4, 8, generator=g) * 2,) for _ in range(5)]
    seen = run_all(fn, cal, tmp_path, bound=1.0)
    assert len(seen) >= 3, seen
