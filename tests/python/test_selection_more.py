"""More layers after a selection x[mask] (issue 15): reductions replayed
over x's filled table (norm, nansum, prod, dot, count_nonzero, argmax /
argmin without dim), diff and logcumsumexp of the compact selection,
slices with a step or bounds of both signs, a .float() of positions, a
flatten merging a row selection's first dims, any() / all() of an empty
selection (capture_selection_more).

Oracles: PyTorch on the input, elements kept an input step away from the
thresholds (0, +-0.5, +-1) so the selection is torch's; the host runtime
gives the numpy reference interpreter's bytes. A position is checked by
the selection's value there (ptec orders x's int8 codes: two values
within one input step may tie where torch's floats do not)."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from model_checks import Call
from test_masked_select import _no_kernel_reads_a_bound_dynamic_tensor
from test_selection_rows import _inputs as _row_inputs
from test_selection_rows import keep


def _inputs(n, seed, top=0.85):
    """test_selection_rows' inputs (none and all selected last), each
    element also 0.1 from +-1 (relu(x - 1)'s zeros)."""
    out = []
    for x in _row_inputs(n, seed, top):
        for t in (1.0, -1.0):
            x = torch.where((x - t).abs() < 0.1, x + 0.2 * torch.where(x >= t, 1.0, -1.0), x)
        out.append(x)
    return out


def _compiled(fn):
    calibration = [(x,) for x in _inputs(24, 1, top=1.0)]
    return compile_model(Call(fn).eval(), [calibration[0][0]], calibration)


def cubes(x):
    """b[m] of 3-D rows: x viewed [4, 2, 4], the rows whose first value is positive."""
    b = x.reshape(4, 2, 4)
    return b[b[:, 0, 0] > 0]


def _run(res, x, tmp_path):
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    return got


# call -> (fn, bound in output steps); the measured worst as a comment
VALUES = {
    # a square root of a sum over the selection: steep near a short selection's small sum
    "x[x > 0].norm()": (lambda x: x[x > 0].norm(), 3.0),                            # 2.48
    "torch.linalg.vector_norm(x[x > 0], 1)": (lambda x: torch.linalg.vector_norm(x[x > 0], 1), 1.5),  # 1.08
    "keep(x).norm()": (lambda x: keep(x).norm(), 3.5),                              # 3.22
    "x[x > 0].nansum()": (lambda x: x[x > 0].nansum(), 1.5),                        # 1.08
    "torch.dot(x[x > 0], x[x > 0])": (lambda x: torch.dot(x[x > 0], x[x > 0]), 0.5),    # 0.43
    "x[x > 0] @ (x * 0.5)[x > 0]": (lambda x: x[x > 0] @ (x * 0.5)[x > 0], 0.5),        # 0.43
    # a product of up to 32 values near 1 (halves multiplied: 5 int8 muls)
    "(x[x > 0] * 0.1 + 0.9).prod()": (lambda x: (x[x > 0] * 0.1 + 0.9).prod(), 2.0),      # 1.96
    "torch.diff(x[x > 0])": (lambda x: torch.diff(x[x > 0]), 1.0),                  # 0.90
    "torch.diff(x[x > 0], 2)": (lambda x: torch.diff(x[x > 0], 2), 1.5),            # 1.14
    "torch.diff(keep(x), dim=0)": (lambda x: torch.diff(keep(x), dim=0), 1.0),      # 0.80
    "torch.diff(keep(x))": (lambda x: torch.diff(keep(x)), 1.0),                    # 0.83
    # a chain of softplus steps, one per row of x
    "torch.logcumsumexp(x[x > 0], 0)": (lambda x: torch.logcumsumexp(x[x > 0], 0), 2.5),   # 2.30
    "torch.logcumsumexp(keep(x), 0)": (lambda x: torch.logcumsumexp(keep(x), 0), 2.0),     # 1.51
    # exp and a log on int8 grids; an empty selection gives x's smallest value (torch: -inf)
    "x[x > 0].logsumexp(0)": (lambda x: x[x > 0].logsumexp(0), 2.0),                # 1.75
    "torch.logsumexp(keep(x), 0, keepdim=True)": (lambda x: torch.logsumexp(keep(x), 0, keepdim=True), 2.0),  # 1.51
    # the two sorted rows around q (n - 1) for the run's count n, interpolated; NaN for an empty selection
    "x[x > 0].quantile(0.3)": (lambda x: x[x > 0].quantile(0.3), 2.5),                  # 2.29
    "torch.quantile(x[x > 0], 0.75, interpolation='nearest')":
        (lambda x: torch.quantile(x[x > 0], 0.75, interpolation="nearest"), 2.5),        # 2.38
    "x[x > 0].quantile(0.5, dim=0, keepdim=True)":
        (lambda x: x[x > 0].quantile(0.5, dim=0, keepdim=True), 3.0),                     # 2.59
    "x[x > 0][1:-1]": (lambda x: x[x > 0][1:-1], 0.5),
    "x[x > 0][::2]": (lambda x: x[x > 0][::2], 0.5),
    "x[x > 0][1::3]": (lambda x: x[x > 0][1::3], 0.5),
    "x[x > 0][2:-2:2]": (lambda x: x[x > 0][2:-2:2], 0.5),
    "x[x > 0][-12:6]": (lambda x: x[x > 0][-12:6], 0.5),
    "x[x > 0][:7:3]": (lambda x: x[x > 0][:7:3], 0.5),
    "keep(x)[1:-1]": (lambda x: keep(x)[1:-1], 0.5),
    "keep(x)[::2]": (lambda x: keep(x)[::2], 0.5),
    "cubes(x).flatten(0, 1)": (lambda x: cubes(x).flatten(0, 1), 0.5),
    # readers of readers: each a selection again first (the grids of both in turn; a norm of a few values)
    "torch.diff(x[x > 0][::2])": (lambda x: torch.diff(x[x > 0][::2]), 1.5),                # 1.07
    "x[x > 0][1:-1].norm()": (lambda x: x[x > 0][1:-1].norm(), 5.0),                        # 4.68
    "torch.logcumsumexp(x[x > 0].flip(0), 0)": (lambda x: torch.logcumsumexp(x[x > 0].flip(0), 0), 5.0),   # 4.45
    "cubes(x).flatten(0, 1).sum(1)": (lambda x: cubes(x).flatten(0, 1).sum(1), 1.5),    # 1.02
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_layers_run_within_their_bound(name, tmp_path):
    fn, bound = VALUES[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    if any(n.op == "masked_select" for n in res.graph.nodes):
        _no_kernel_reads_a_bound_dynamic_tensor(prog)
    # int8 throughout but for quantile's last division (fp32: 0 / 0 is NaN for an empty selection)
    # (and logsumexp's add of its max and its log, read only by fp32 steps: ptec.fp32_residuals)
    assert all(f.endswith(("aten::div.out", "aten::view_copy.out", "aten::add.out")) for f in res.lowered.fallbacks) \
        and ("quantile" in name or "logsumexp" in name or not res.lowered.fallbacks), res.lowered.fallbacks
    assert "logsumexp" in name or not any(f.endswith("aten::add.out") for f in res.lowered.fallbacks), \
        res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, spread, lengths = 0.0, [], set()
    for x in _inputs(8, 2):
        got = _run(res, x, tmp_path)
        try:
            with torch.no_grad():
                want = fn(x).numpy()
        except RuntimeError:        # torch.quantile of nothing: ptec's NaN
            assert "quantile" in name and not x[x > 0].numel(), name
            assert np.isnan(got).all() and got.shape == (() if "keepdim" not in name else (1,)), got
            continue
        if "logsumexp" in name and not (keep(x) if "keep" in name else x[x > 0]).numel():
            assert np.isneginf(want).all()         # torch's -inf; ptec's the fill, x's smallest value
            want = np.full(want.shape, float(x.min()), np.float32)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        lengths.add(got.shape)
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
            spread.append(want.reshape(-1))
    values = np.concatenate(spread)
    print(f"{name}: worst {worst:.2f} output steps, outputs spanning {(values.max() - values.min()) / step:.0f}")
    assert values.max() - values.min() >= 16 * step
    if any(n.op == "masked_select" for n in res.graph.nodes):
        assert len(lengths) >= 2, lengths
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_an_empty_selection_gives_torchs_value_over_nothing():
    """norm, nansum and dot exactly 0 (the fill 0, on every affine grid),
    count_nonzero 0; prod 1 within its bound (1 is the fill, on the
    grid of the values multiplied)."""
    none = _inputs(1, 3)[-2]
    assert not (none > 0).any()
    for fn in (lambda x: x[x > 0].norm(), lambda x: x[x > 0].nansum(), lambda x: torch.dot(x[x > 0], x[x > 0]),
               lambda x: torch.count_nonzero(x[x > 0]), lambda x: (x[x > 0] * 0.1 + 0.9).prod()):
        res = _compiled(fn)
        got, want = run_program(parse_program(res.data), [none.numpy()])[0], fn(none).numpy()
        if "prod" in str(res.graph.node(res.graph.outputs[0]).attrs.get("source")):
            step = res.graph.node(res.graph.outputs[0]).qparams[0]
            assert abs(got - want) <= 2.0 * step, (got, want)
        else:
            assert got == want, (got, want)


BOOLS = {
    "torch.count_nonzero(x[x > 0])": lambda x: torch.count_nonzero(x[x > 0]),
    "torch.count_nonzero(torch.relu(x[x > 0] - 1))": lambda x: torch.count_nonzero(torch.relu(x[x > 0] - 1)),
    "keep(x).count_nonzero()": lambda x: keep(x).count_nonzero(),
    "torch.count_nonzero(x[x > 0] > 1)": lambda x: torch.count_nonzero(x[x > 0] > 1),
    "(x[x > 0] > 1).sum()": lambda x: (x[x > 0] > 1).sum(),
    "(keep(x) > 1).sum(0)": lambda x: (keep(x) > 1).sum(0),
    "(x[x > 0] > 1).all()": lambda x: (x[x > 0] > 1).all(),
    "(x[x > 0] < 1).any()": lambda x: (x[x > 0] < 1).any(),
    "(keep(x) < 1).all()": lambda x: (keep(x) < 1).all(),
    "(keep(x) > 1).any()": lambda x: (keep(x) > 1).any(),
}


@pytest.mark.parametrize("name", sorted(BOOLS))
def test_counts_and_truths_are_torchs_exactly(name, tmp_path):
    """int64 counts (of a float selection's nonzeros, of a bool selection's
    Trues) and bools equal torch's on every input, an empty selection's
    all() True and any() False."""
    fn = BOOLS[name]
    res = _compiled(fn)
    seen = set()
    for x in _inputs(8, 2):
        got, want = _run(res, x, tmp_path), fn(x).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape and (got == want).all(), (name, got, want)
        seen.add(got.tobytes())
    assert len(seen) >= 2, seen


POSITIONS = {
    "x[x > 0].argmax()": lambda x: x[x > 0].argmax(),
    "x[x > 0].argmin()": lambda x: x[x > 0].argmin(),
    "keep(x).argmax()": lambda x: keep(x).argmax(),
    "torch.argmin(keep(x))": lambda x: torch.argmin(keep(x)),
}


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_flat_positions_pick_torchs_values(name, tmp_path):
    """int64 flat positions in the selection: its values there are torch's
    within one input step, inside the selection; an empty selection
    (torch raises) gives 0."""
    fn = POSITIONS[name]
    res = _compiled(fn)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    checked = set()
    for x in _inputs(8, 2):
        got = _run(res, x, tmp_path)
        assert got.dtype == np.int64 and got.shape == ()
        s = (keep(x) if "keep" in name else x[x > 0]).reshape(-1)
        if not s.numel():
            assert got == 0
            checked.add("empty")
            continue
        want = fn(x).item()
        assert 0 <= got < s.numel() and abs(float(s[int(got)] - s[want])) <= step + 1e-6, (name, got, want)
        checked.add(int(got))
    assert len(checked) >= 3, checked


@pytest.mark.parametrize("name", ["keep(x).argmax(1)", "keep(x).argmin(-1)", "cubes(x).argmax(2, keepdim=True)"])
def test_positions_within_each_row_of_a_row_selection(name, tmp_path):
    """argmax / argmin over a dim other than 0 of a row selection: int64,
    torch's shape for every run's count, each row's values there torch's
    within one input step."""
    fn = eval("lambda x: " + name, {"keep": keep, "cubes": cubes})      # noqa: S307
    res = _compiled(fn)
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    dim = int(name.split("(")[-1].split(",")[0].rstrip(")"))
    lengths = set()
    for x in _inputs(8, 2):
        got, want = _run(res, x, tmp_path), fn(x)
        assert got.dtype == np.int64 and got.shape == tuple(want.shape), (got.shape, want.shape)
        lengths.add(got.shape[0])
        s = keep(x) if name.startswith("keep") else cubes(x)
        picked = torch.gather(s, dim, torch.as_tensor(got).reshape(want.shape if "keepdim" in name
                                                                        else want.unsqueeze(dim).shape))
        wanted = torch.gather(s, dim, want if "keepdim" in name else want.unsqueeze(dim))
        if picked.numel():
            assert float((picked - wanted).abs().max()) <= step + 1e-6, (name, got, want)
    assert len(lengths) >= 4, lengths


def test_float_positions_are_the_positions(tmp_path):
    """x[m].argsort().float(): the cast moved before the pick, each value a
    position (within half an output step) whose selected value is torch's
    at its position within one input step; every run's count."""
    fn = lambda x: x[x > 0].argsort().float()     # noqa: E731
    res = _compiled(fn)
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    out_step = res.graph.node(res.graph.outputs[0]).qparams[0]
    lengths = set()
    for x in _inputs(8, 2):
        got, want = _run(res, x, tmp_path), fn(x).numpy()
        assert got.dtype == np.float32 and got.shape == want.shape
        lengths.add(got.shape[0])
        at = np.round(got).astype(np.int64)
        assert np.abs(got - at).max(initial=0) <= 0.5 * out_step + 1e-6
        s = x[x > 0]
        if s.numel():
            assert sorted(at.tolist()) == list(range(s.numel()))
            assert np.abs(s[at].numpy() - s[want.astype(np.int64)].numpy()).max() <= in_step + 1e-6
    assert len(lengths) >= 4, lengths


@pytest.mark.parametrize("call,why", [
    ("x[x > 0].squeeze()", "rank"),
    # (as a program output it runs, and its readers: test_selection_row_output.py; [3, n] is refused)
    ("x[x > 0].unsqueeze(0) + torch.ones(3, 1)", "unsqueeze"),
    # (unique / unique_consecutive with counts / inverse, and with dim 0, run: test_unique_selection.py,
    # test_unique_selection_dim.py; the columns of a row selection stay refused)
    ("x[0][x[0, :, 0] > 0].unique_consecutive(dim=1)", "unique_consecutive"),
    ("x[x > 0].norm(p=0)", "norm"),
    ("torch.diff(x[x > 0], append=x[x > 0])", "diff"),
])
def test_other_readers_are_refused_by_name(call, why):
    x = _inputs(1, 6)[0]
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: eval(call, {"torch": torch, "x": x, "keep": keep})).eval(), [x],  # noqa: S307
                      [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and why in message, message


def test_lengths_follow_the_run():
    """A slice with a step, one of bounds of both signs, a diff and a
    flatten of rows give as many rows as torch, from none to all."""
    for fn in (lambda x: x[x > 0][::2], lambda x: x[x > 0][1:-1], lambda x: torch.diff(x[x > 0]),
               lambda x: cubes(x).flatten(0, 1)):
        prog = parse_program(_compiled(fn).data)
        lengths = [run_program(prog, [x.numpy()])[0].shape[0] for x in _inputs(8, 3)]
        assert lengths == [fn(x).shape[0] for x in _inputs(8, 3)] and len(set(lengths)) >= 4, lengths


def _coarse(n, seed):
    """Multiples of 0.25 in [-2, 2] but 0, so values repeat (torch's mode
    counts equal floats, ptec equal int8 codes: the same here); then none
    and all positive."""
    g = torch.Generator().manual_seed(seed)
    xs = []
    for _ in range(n):
        v = torch.randint(1, 9, (1, 4, 8), generator=g).float() * 0.25
        xs.append(v * torch.where(torch.rand(1, 4, 8, generator=g) < 0.4, -1.0, 1.0))
    return xs + [-xs[0].abs(), xs[0].abs()]


@pytest.mark.parametrize("keepdim", [False, True])
def test_mode_is_torchs_most_frequent_value_smallest_on_ties(keepdim, tmp_path):
    """x[x > 0].mode()'s values: torch's (the most frequent, the smallest of
    a tie; chosen exactly over the int8 codes) within one output step (x's
    grid, then the output's); an empty selection (torch raises) x's
    largest value."""
    fn = (lambda x: torch.mode(x[x > 0], 0, keepdim=True).values) if keepdim else (lambda x: x[x > 0].mode()[0])
    calibration = [(x,) for x in _coarse(24, 1)]
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    modes, ties = set(), 0
    for x in _coarse(12, 2):
        got = _run(res, x, tmp_path)
        s = x[x > 0]
        if not s.numel():
            assert abs(float(got.reshape(-1)[0]) - float(x.max())) <= step + 1e-6, got
            continue
        want = fn(x).numpy()
        values, counts = torch.unique(s, return_counts=True)
        ties += int((counts == counts.max()).sum() > 1)
        assert got.shape == want.shape and np.abs(got - want).max() <= step + 1e-6, (got, want)
        modes.add(float(want.reshape(-1)[0]))
    assert len(modes) >= 3 and ties >= 2, (modes, ties)


def test_unique_is_torchs_on_values_a_code_apart(tmp_path):
    """x[x > 0].unique(): torch's sorted distinct values within one output
    step (x's grid, then the output's), as many as torch's (values at least an input step apart:
    ptec compares x's int8 codes), from none to all selected."""
    fn = lambda x: x[x > 0].unique()        # noqa: E731
    calibration = [(x,) for x in _coarse(24, 1)]
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    lengths = set()
    for x in _coarse(8, 2):
        got, want = _run(res, x, tmp_path), fn(x).numpy()
        assert got.shape == want.shape and np.abs(got - want).max(initial=0) <= step + 1e-6, (got, want)
        lengths.add(got.shape[0])
    assert 0 in lengths and len(lengths) >= 3, lengths


BOARD_CALLS = {
    "a diff of a stepped slice": lambda x: torch.diff(x[x > 0][::2]),
    "mode": lambda x: x[x > 0].mode()[0],
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, target, tmp_path):
    x = _inputs(1, 5)[0]
    res = _compiled(BOARD_CALLS[name])
    board_matches_reference(res.data, x.numpy(), target, tmp_path)
