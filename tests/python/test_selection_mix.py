"""Layers mixing a selection x[mask]'s elements along its first dim (issue
15): scans, softmax, var / std, positions (argmax, sort indices), median,
flip and elements or slices by position (capture_selection_mix), compiled
over x with static shapes.

Oracles: PyTorch on the input, elements kept an input step away from the
thresholds (test_selection_rows._inputs) so the selection is torch's; the
host runtime gives the numpy reference interpreter's bytes; the emulated
boards print them. A position is checked by the selection's value there:
ptec orders x's int8 codes, so two values within one input step may tie
where torch's floats do not. Where torch raises (an empty or short
selection) the documented answer is checked."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call
from test_masked_select import _no_kernel_reads_a_bound_dynamic_tensor
from test_selection_rows import _compiled, _inputs, keep

# call -> (fn, bound in output steps); the measured worst as a comment where it is loose
VALUES = {
    "torch.cumsum(x[x > 0], 0)": (lambda x: torch.cumsum(x[x > 0], 0), 1.0),        # 0.65
    "keep(x).cumsum(0)": (lambda x: keep(x).cumsum(0), 1.0),                        # 0.93
    "x[x > 0].cummax(0)[0]": (lambda x: x[x > 0].cummax(0)[0], 0.5),
    "x[x > 0].cummin(0)[0]": (lambda x: torch.cummin(x[x > 0], 0)[0], 1.5),         # 1.00: -max(-x)
    "keep(x).cummax(0)[0]": (lambda x: keep(x).cummax(0)[0], 0.5),
    # a chain of int8 muls, one per row of x (torch.cumprod(torch.sigmoid(x.flatten()), 0): 13.6)
    "torch.cumprod(torch.sigmoid(x[x > 0]), 0)": (lambda x: torch.cumprod(torch.sigmoid(x[x > 0]), 0), 2.0),  # 1.63
    "torch.cumprod(torch.sigmoid(keep(x)), 0)": (lambda x: torch.cumprod(torch.sigmoid(keep(x)), 0), 1.5),  # 1.39
    # exp and a division on int8 grids: 4.4 steps of an output spanning [0, 0.23], 0.004 (one step of
    # the softmax kernel's fixed 1/256 grid)
    "torch.softmax(x[x > 0], 0)": (lambda x: torch.softmax(x[x > 0], 0), 5.0),     # 4.38
    "torch.softmax(keep(x), 0)": (lambda x: torch.softmax(keep(x), 0), 3.5),       # 3.10
    "torch.log_softmax(x[x > 0], 0)": (lambda x: torch.log_softmax(x[x > 0], 0), 2.0),   # 1.56
    "torch.log_softmax(keep(x), 0)": (lambda x: torch.log_softmax(keep(x), 0), 2.0),     # 1.79
    # var / std: 0.012 and 0.015 absolute, as x.flatten().var() / std() (0.020, 0.016)
    "x[x > 0].std()": (lambda x: x[x > 0].std(), 5.0),                              # 4.48
    "x[x > 0].var(unbiased=False)": (lambda x: x[x > 0].var(unbiased=False), 5.0),  # 4.24
    # std over 0 to 8 rows: a column of two or three close values has a std of a few int8 steps of
    # its squares, which rounding takes to 0 (as for any int8 std: test_selection_rows' std(1))
    "keep(x).std(0)": (lambda x: keep(x).std(0), 18.0),                             # 16.8
    "keep(x).var(0, unbiased=False)": (lambda x: keep(x).var(0, unbiased=False), 5.0),   # 4.51
    "keep(x).std()": (lambda x: keep(x).std(), 4.0),                                # 3.54
    "torch.var(x[x > 0], 0, keepdim=True)": (lambda x: torch.var(x[x > 0], 0, keepdim=True), 5.5),   # 5.07
    "x[x > 0].median()": (lambda x: x[x > 0].median(), 1.5),                        # 1.40
    # where(M, X, fill) and where(at, sorted, fill) each on a grid of their own, then x's
    "keep(x).median(0)[0]": (lambda x: keep(x).median(0)[0], 1.5),                 # 1.39
    "keep(x).median(0, keepdim=True)[0]": (lambda x: keep(x).median(0, keepdim=True)[0], 1.5),   # 1.39
    "x[x > 0].flip(0)": (lambda x: x[x > 0].flip(0), 0.5),
    "keep(x).flip(0)": (lambda x: keep(x).flip(0), 0.5),
    # by position, as written (the selection made compact at the front or the end)
    "x[x > 0][0]": (lambda x: x[x > 0][0], 0.5),
    "x[x > 0][-1]": (lambda x: x[x > 0][-1], 0.5),
    "x[x > 0][2]": (lambda x: x[x > 0][2], 0.5),
    "keep(x)[0]": (lambda x: keep(x)[0], 0.5),
    "keep(x)[-1]": (lambda x: keep(x)[-1], 0.5),
    "x[x > 0][:3]": (lambda x: x[x > 0][:3], 0.5),
    "x[x > 0][-3:]": (lambda x: x[x > 0][-3:], 0.5),
    "x[x > 0][:-1]": (lambda x: x[x > 0][:-1], 0.5),
    "x[x > 0][1:]": (lambda x: x[x > 0][1:], 0.5),
    "keep(x)[:2]": (lambda x: keep(x)[:2], 0.5),
}


def _fill_value(name, x, got):
    """Where torch raises: a median over no rows, an element past the
    selection: x's smallest value."""
    assert "median(0" in name or name.endswith(("[0]", "[-1]", "[2]")), \
        f"{name}: torch raised where ptec documents no fill"
    return np.full(got.shape, float(x.min()), np.float32)


def _run(res, x, tmp_path):
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    return got


@pytest.mark.parametrize("name", sorted(VALUES))
def test_mixing_layers_run_within_their_bound(name, tmp_path):
    fn, bound = VALUES[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    if any(n.op == "masked_select" for n in res.graph.nodes):
        _no_kernel_reads_a_bound_dynamic_tensor(prog)
    # int8 throughout but for the last division of var / std / a median (fp32: 0 / 0 is NaN, as torch)
    assert all(f.endswith(("aten::div.out", "aten::view_copy.out")) for f in res.lowered.fallbacks), \
        res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, spread, lengths = 0.0, [], set()
    for x in _inputs(8, 2):
        got = _run(res, x, tmp_path)
        try:
            with torch.no_grad():
                want = fn(x).numpy()
        except (RuntimeError, IndexError):
            want = _fill_value(name, x, got)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        lengths.add(got.shape)
        # NaN where torch's is (a std of no value, or of one with the correction 1)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (name, got, want)
        if np.isfinite(want).any():
            worst = max(worst, float(np.abs(got - want)[np.isfinite(want)].max()) / step)
            spread.append(want[np.isfinite(want)])
    values = np.concatenate(spread)
    print(f"{name}: worst {worst:.2f} output steps, outputs spanning {(values.max() - values.min()) / step:.0f}")
    assert values.max() - values.min() >= 16 * step
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


# call -> fn; the values at its positions compared
POSITIONS = {
    "x[x > 0].argmax(0)": lambda x: x[x > 0].argmax(0),
    "x[x > 0].argmin(0)": lambda x: x[x > 0].argmin(0),
    "x[x > 0].argsort()": lambda x: x[x > 0].argsort(),
    "x[x > 0].sort(descending=True)[1]": lambda x: x[x > 0].sort(descending=True)[1],
    "x[x > 0].topk(3)[1]": lambda x: x[x > 0].topk(3)[1],
    "x[x > 0].kthvalue(2)[1]": lambda x: x[x > 0].kthvalue(2)[1],
    "torch.max(keep(x), 0)[1]": lambda x: torch.max(keep(x), 0)[1],
    "x[x > 0].cummax(0)[1]": lambda x: x[x > 0].cummax(0)[1],
    "torch.cummin(x[x > 0], 0)[1]": lambda x: torch.cummin(x[x > 0], 0)[1],
    "x[x > 0].argmax(0, keepdim=True)": lambda x: x[x > 0].argmax(0, keepdim=True),
    "keep(x).argsort(0)": lambda x: keep(x).argsort(0),
    "keep(x).kthvalue(2, 0)[1]": lambda x: keep(x).kthvalue(2, 0)[1],
    "keep(x).cummax(0)[1]": lambda x: keep(x).cummax(0)[1],
    "keep(x).argmin(0)": lambda x: keep(x).argmin(0),
    "x[x > 0].median(0)[1]": lambda x: x[x > 0].median(0)[1],
    "keep(x).median(0)[1]": lambda x: keep(x).median(0)[1],
    "keep(x).median(0, keepdim=True)[1]": lambda x: keep(x).median(0, keepdim=True)[1],
}


def _selected(name, x):
    return keep(x) if "keep(x)" in name else x[x > 0]


def _at(table, positions):
    """table's values at positions along dim 0 (each column its own)."""
    t = torch.as_tensor(table)
    p = torch.as_tensor(positions).long()
    return t[p.reshape(-1)] if t.dim() == 1 else torch.gather(t, 0, p.reshape(-1, t.shape[1]))


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_positions_in_a_selection_pick_torchs_values(name, tmp_path):
    """int64 positions in the selection (not in x): the selection's values
    there are torch's within one input step (the grid ptec orders on),
    every position inside the selection; where torch raises the fill's
    positions (0 for argmax or a median of nothing, past the count for topk
    and kthvalue)."""
    fn = POSITIONS[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    if any(n.op == "masked_select" for n in res.graph.nodes):
        _no_kernel_reads_a_bound_dynamic_tensor(prog)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    checked = set()
    for x in _inputs(8, 2):
        got = _run(res, x, tmp_path)
        assert got.dtype == np.int64
        s = _selected(name, x)
        try:
            want = fn(x).numpy()
        except (RuntimeError, IndexError):
            n = s.shape[0]
            if "argm" in name or "max(" in name or "median" in name:
                assert (got == 0).all(), (name, got)
            elif "kthvalue" in name and got.ndim:     # past the length, per column
                assert (got >= n).all(), (name, got)
            elif "kthvalue" in name:        # past the selection's length: a fill's position
                assert got >= n, (name, got)
            else:               # topk of a selection shorter than k: its own positions first, then fills
                assert sorted(got[:n].tolist()) == list(range(n)) and (got[n:] >= n).all(), (name, got)
            checked.add("fill")
            continue
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert ((got >= 0) & (got < max(s.shape[0], 1))).all(), (name, got)
        columns = got.reshape(got.shape[0] if got.ndim else 1, -1) if got.size else got.reshape(0, 1)
        if "argsort" in name or "sort(" in name:        # each column a permutation of the selection's rows
            assert (np.sort(columns, 0) == np.arange(s.shape[0])[:, None]).all(), (name, got)
        if "cumm" in name:                              # a running extreme's position is at or before its row
            assert (columns <= np.arange(columns.shape[0])[:, None]).all(), (name, got)
        if got.size:
            gap = np.abs(_at(s, got).numpy() - _at(s, want).numpy()).max()
            assert gap <= step + 1e-6, (name, got, want, gap / step)
            checked.add(got.shape)
    assert len(checked) >= 2, checked


def test_lengths_follow_the_run():
    """A scan, a softmax, a flip and a sort's positions of a selection give
    as many rows as torch, from none to all."""
    for fn in (lambda x: torch.cumsum(x[x > 0], 0), lambda x: torch.softmax(keep(x), 0),
               lambda x: x[x > 0].flip(0), lambda x: x[x > 0].argsort()):
        res = _compiled(fn)
        prog = parse_program(res.data)
        lengths = {run_program(prog, [x.numpy()])[0].shape[0] for x in _inputs(8, 3)}
        assert lengths == {fn(x).shape[0] for x in _inputs(8, 3)} and len(lengths) >= 4, lengths


def test_an_empty_or_short_selection_gives_torchs_nan_or_the_documented_fill():
    """std of no value and of one (correction 1), var of none, the median
    of none: NaN as torch; var(unbiased=False) of one value 0; a median
    over no rows x's smallest value (torch raises); a softmax of none
    nothing."""
    none = -torch.linspace(0.7, 2.5, 32).reshape(1, 4, 8)
    one = torch.where(torch.arange(32).reshape(1, 4, 8) == 5, torch.tensor(1.3), none)
    for fn in (lambda x: x[x > 0].std(), lambda x: x[x > 0].var(), lambda x: keep(x).std(0)):
        res = _compiled(fn)
        for x in (none, one):
            got = run_program(parse_program(res.data), [x.numpy()])[0]
            assert np.isnan(got).all() and np.isnan(fn(x).numpy()).all(), got
    res = _compiled(lambda x: x[x > 0].var(unbiased=False))
    assert run_program(parse_program(res.data), [one.numpy()])[0] == 0.0
    res = _compiled(lambda x: keep(x).median(0)[0])
    got = run_program(parse_program(res.data), [none.numpy()])[0]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert np.abs(got - float(none.min())).max() <= 1.5 * step + 1e-6, got    # the wheres' grids, as the bound
    res = _compiled(lambda x: x[x > 0].median())
    assert np.isnan(run_program(parse_program(res.data), [none.numpy()])[0])
    res = _compiled(lambda x: torch.softmax(x[x > 0], 0))
    assert run_program(parse_program(res.data), [none.numpy()])[0].shape == (0,)


@pytest.mark.parametrize("count", [1, 2])
def test_an_index_is_the_written_one_whatever_the_examples_count(count, tmp_path):
    """The trace writes s[-1] as s[count - 1] of its example's count, and
    s[:3] of an example of 3 or fewer selected values as the whole of it:
    compiled from an example selecting 1 or 2 values, the program gives
    torch's element or slice of every run's selection."""
    example = torch.where(torch.arange(32).reshape(1, 4, 8) < count, 1.0, -1.0)
    calibration = [(x,) for x in _inputs(24, 1, top=1.0)]
    for fn in (lambda x: x[x > 0][0], lambda x: x[x > 0][-1], lambda x: x[x > 0][:3], lambda x: x[x > 0][-2:],
               lambda x: keep(x)[:3]):
        res = compile_model(Call(fn).eval(), [example], calibration)
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        for x in _inputs(8, 2)[:-2]:        # (the last two: none and all selected)
            got, want = _run(res, x, tmp_path), fn(x).numpy()
            assert got.shape == want.shape and np.abs(got - want).max() <= 0.5 * step + 1e-6, (got, want)


@pytest.mark.parametrize("call,why", [
    ("x[x > 0].squeeze()", "rank"),
    # (as a program output it runs, and its readers: test_selection_row_output.py; [3, n] is refused)
    ("x[x > 0].unsqueeze(0) + torch.ones(3, 1)", "unsqueeze"),
])
def test_other_mixing_layers_are_refused_by_name(call, why):
    x = _inputs(1, 6)[0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: eval(call, {"torch": torch, "x": x})).eval(), [x], [(x,)])   # noqa: S307
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and why in message, message


def test_squeeze_names_the_rank_that_depends_on_the_count():
    x = _inputs(1, 6)[0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: x[x > 0].squeeze()).eval(), [x], [(x,)])
    assert "squeeze" in str(e.value) and "rank" in str(e.value), str(e.value)


BOARD_CALLS = {
    "softmax and cumsum": lambda x: torch.cumsum(torch.softmax(x[x > 0], 0), 0),
    "argsort": lambda x: x[x > 0].argsort(),
    "a median's index": lambda x: keep(x).median(0)[1],
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, target, tmp_path):
    res = _compiled(BOARD_CALLS[name])
    board_matches_reference(res.data, _inputs(1, 5)[0].numpy(), target, tmp_path)
