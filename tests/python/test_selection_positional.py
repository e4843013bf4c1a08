"""Layers after a selection x[mask] whose rows depend on the run's count
(issue 15, capture_selection_positional): a slice with a negative start and
a step, views into groups, mode's indices and mode / quantile along a row
selection's dim 0.

Oracles: PyTorch on the input, elements an input step away from the
thresholds so the selection is torch's; the host runtime gives the numpy
reference interpreter's bytes. torch's mode index among tied positions
is its libstdc++ std::sort's, which depends on the selection's count (the
last position on up to 16 values; beyond, where the sort leaves it), and
the selection's rewrite keeps the last position (docs/aot.md), so an index
is checked by the value there (torch's mode) and equals torch's where the
mode occurs once; ptec's rule, the last position, is checked too. Where torch raises (a count that does not fill whole groups,
a mode or quantile of nothing) the documented answer is checked."""
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
from test_selection_more import _coarse, _inputs
from test_selection_rows import keep


def _example(k=24):
    """An input whose first k elements (flat) are positive, the rest
    negative: x[x > 0] holds k values and keep(x) the rows starting below k
    (k = 24: 24 values, 6 rows), so views into groups of 3 or 6 trace."""
    x = _inputs(1, 9)[0].abs()
    return torch.where(torch.arange(32).reshape(1, 4, 8) < k, x, -x)


def _compiled(fn, inputs=None):
    calibration = [(_example(),)] + [(x,) for x in (inputs or _inputs(24, 1, top=1.0))]
    return compile_model(Call(fn).eval(), [_example()], calibration)


def _run(res, x, tmp_path):
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    return got


SLICES = {
    "x[x > 0][-5::2]": (lambda x: x[x > 0][-5::2], 0.5),
    "x[x > 0][-6::3]": (lambda x: x[x > 0][-6::3], 0.5),
    "x[x > 0][-7:-1:2]": (lambda x: x[x > 0][-7:-1:2], 0.5),
    "x[x > 0][-9:5:2]": (lambda x: x[x > 0][-9:5:2], 0.5),
    "keep(x)[-3::2]": (lambda x: keep(x)[-3::2], 0.5),
}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_slices_from_the_end_with_a_step_are_torchs(name, tmp_path):
    """torch's rows (its phase from the count's end), as many, within half
    an output step (x's values: codes copied), for counts 0 to all."""
    fn, bound = SLICES[name]
    res = _compiled(fn)
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, lengths, phases = 0.0, set(), set()
    for x in _inputs(8, 2) + [_example(k) for k in (3, 4, 7, 10)]:
        got, want = _run(res, x, tmp_path), fn(x).numpy()
        assert got.shape == want.shape, (name, got.shape, want.shape)
        lengths.add(got.shape[0])
        phases.add((keep(x) if "keep" in name else x[x > 0]).shape[0] % 2)
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: worst {worst:.2f} output steps, lengths {sorted(lengths)}")
    assert 0 in lengths and len(lengths) >= 3 and phases == {0, 1}, (lengths, phases)
    assert worst <= bound + 1e-3, (name, worst)


GROUPS = {
    "x[x > 0].view(-1, 3)": ((lambda x: x[x > 0].view(-1, 3)), lambda x: x[x > 0], [3]),
    "x[x > 0].view(-1, 2, 3)": ((lambda x: x[x > 0].view(-1, 2, 3)), lambda x: x[x > 0], [2, 3]),
    "keep(x).view(-1, 3)": ((lambda x: keep(x).view(-1, 3)), keep, [3]),
    "keep(x).reshape(-1, 6) * 2": ((lambda x: keep(x).reshape(-1, 6) * 2), lambda x: keep(x) * 2, [6]),
}


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_views_into_groups_are_torchs_or_fail_as_torchs(name, tmp_path):
    """Groups of consecutive selected elements: torch's where the count
    fills whole groups, within half an output step; where it does not
    (torch raises) the execute fails, the host runtime's and ptec-run's
    status InvalidArgument naming the checked lookup, and the numpy
    reference interpreter raises too."""
    fn, _, _ = GROUPS[name]
    res = _compiled(fn)
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, lengths, raised = 0.0, set(), 0
    for x in _inputs(8, 2) + [_example(k) for k in (3, 4, 13, 24)]:
        try:
            want = fn(x).numpy()
        except RuntimeError:
            raised += 1
            with pytest.raises(RuntimeError) as e:
                host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
            assert "execute: InvalidArgument" in str(e.value) and "aten::embedding.out" in str(e.value) \
                and "an index is outside the table" in str(e.value), str(e.value)
            with pytest.raises(ValueError, match="outside the table"):
                run_program(prog, [x.numpy()])
            continue
        got = _run(res, x, tmp_path)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        lengths.add(got.shape[0])
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: worst {worst:.2f} output steps, groups {sorted(lengths)}, torch raised {raised}")
    assert 0 in lengths and len(lengths) >= 3 and raised >= 2, (lengths, raised)
    assert worst <= 0.5 + 1e-3, (name, worst)


def test_ptec_run_exits_non_zero_on_a_partial_group(tmp_path):
    """The ptec-run tool itself: exit 0 and the bytes on whole groups, a
    non-zero exit and the reason's line on stderr on a partial one."""
    import subprocess
    res = _compiled(GROUPS["x[x > 0].view(-1, 3)"][0])
    pte = tmp_path / "m.pte"
    pte.write_bytes(res.data)
    runs = {}
    for k in (12, 13):
        x = tmp_path / f"x{k}.bin"
        x.write_bytes(_example(k).numpy().tobytes())
        out = tmp_path / f"out{k}"
        out.mkdir()
        runs[k] = subprocess.run([host_runtime.ptec_run_path(), str(pte), "--output-dir", str(out), "--input", str(x)],
                                 capture_output=True, text=True)
    assert runs[12].returncode == 0, runs[12].stderr
    assert (tmp_path / "out12" / "output0.bin").stat().st_size == 12 * 4
    assert runs[13].returncode != 0 and "an index is outside the table" in runs[13].stderr, runs[13]


def _distinct(n, seed):
    """Distinct multiples of 0.125 in [-2, 2) (8 codes apart on x's grid):
    every value once, so torch's mode is the smallest selected value, at its
    one position."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randperm(32, generator=g).float() * 0.125 - 2).reshape(1, 4, 8) for _ in range(n)]


def _last(column, value):
    return int((column == value).nonzero()[-1])


@pytest.mark.parametrize("call", ["x[x > 0].mode()[1]", "torch.mode(x[x > 0], 0, keepdim=True).indices"])
def test_mode_index_points_at_torchs_mode(call, tmp_path):
    """int64: inside the selection, the value there torch's mode, torch's
    index where the mode occurs once, else the last occurrence (ptec's
    rule; torch's varies); an empty selection (torch raises) gives L - 1."""
    fn = eval("lambda x: " + call, {"torch": torch})           # noqa: S307
    res = _compiled(fn, _coarse(24, 1))
    once = ties = 0
    for x in _coarse(16, 2) + _distinct(4, 4):
        got = _run(res, x, tmp_path)
        assert got.dtype == np.int64
        s = x[x > 0]
        if not s.numel():
            assert int(got.reshape(-1)[0]) == 31, got
            continue
        value, index = torch.mode(s, 0)
        assert got.shape == tuple(fn(x).shape)
        at = int(got.reshape(-1)[0])
        assert 0 <= at < s.numel() and float(s[at]) == float(value), (call, at, s, value)
        assert at == _last(s, value), (at, s)
        if int((s == value).sum()) == 1:
            once += 1
            assert at == int(index)
        else:
            ties += 1
    assert once >= 2 and ties >= 4, (once, ties)


@pytest.mark.parametrize("keepdim", [False, True])
def test_mode_along_a_row_selection_is_torchs_per_column(keepdim, tmp_path):
    """keep(x).mode(0): each column's values torch's (the smallest most
    frequent) within one output step; the indices point at them, torch's
    where the column's mode occurs once; no rows: each column's largest
    value and index L - 1."""
    values = compile_model(Call(lambda x: torch.mode(keep(x), 0, keepdim)[0]).eval(), [_coarse(1, 1)[0]],
                           [(x,) for x in _coarse(24, 1)])
    indices = compile_model(Call(lambda x: torch.mode(keep(x), 0, keepdim)[1]).eval(), [_coarse(1, 1)[0]],
                            [(x,) for x in _coarse(24, 1)])
    step = values.graph.node(values.graph.outputs[0]).qparams[0]
    once = ties = 0
    for x in _coarse(12, 3) + _distinct(4, 5):
        got_v, got_i = _run(values, x, tmp_path), _run(indices, x, tmp_path)
        b = keep(x)
        shape = (1, 4) if keepdim else (4,)
        assert got_v.shape == shape and got_i.shape == shape and got_i.dtype == np.int64
        if not b.shape[0]:
            top = x.reshape(8, 4).max(0).values.numpy()         # each column's largest value
            assert np.abs(got_v.reshape(-1) - top).max() <= step + 1e-6 and (got_i == 7).all(), got_v
            continue
        want_v, want_i = torch.mode(b, 0)
        assert np.abs(got_v.reshape(-1) - want_v.numpy()).max() <= step + 1e-6, (got_v, want_v)
        for j in range(4):
            at = int(got_i.reshape(-1)[j])
            assert 0 <= at < b.shape[0] and float(b[at, j]) == float(want_v[j]), (j, at, b[:, j], want_v[j])
            assert at == _last(b[:, j], want_v[j])
            if int((b[:, j] == want_v[j]).sum()) == 1:
                once += 1
                assert at == int(want_i[j])
            else:
                ties += 1
    assert once >= 4 and ties >= 4, (once, ties)


QUANTILES = {
    "keep(x).quantile(0.3, dim=0)": (lambda x: keep(x).quantile(0.3, dim=0), 2.5),
    "torch.quantile(keep(x), 0.5, 0, keepdim=True, interpolation='nearest')":
        (lambda x: torch.quantile(keep(x), 0.5, 0, keepdim=True, interpolation="nearest"), 2.5),
    "torch.quantile(keep(x), 0.8, dim=0, interpolation='midpoint')":
        (lambda x: torch.quantile(keep(x), 0.8, dim=0, interpolation="midpoint"), 2.5),
}


@pytest.mark.parametrize("name", sorted(QUANTILES))
def test_quantile_along_a_row_selection(name, tmp_path):
    """Each column's quantile within its bound of torch's; no rows: NaN
    (torch raises)."""
    fn, bound = QUANTILES[name]
    # (a quantile of 1 or 2 rows spans each column's range: calibration sees more runs)
    res = _compiled(fn, _inputs(24, 1, top=1.0) + _inputs(24, 7, top=1.0))
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, spread = 0.0, []
    for x in _inputs(8, 2):
        got = _run(res, x, tmp_path)
        if not keep(x).shape[0]:
            assert np.isnan(got).all() and got.shape == ((1, 4) if "keepdim" in name else (4,)), got
            continue
        want = fn(x).numpy()
        assert got.shape == want.shape
        worst = max(worst, float(np.abs(got - want).max()) / step)
        spread.append(want.reshape(-1))
    values = np.concatenate(spread)
    print(f"{name}: worst {worst:.2f} output steps")
    assert values.max() - values.min() >= 16 * step
    assert worst <= bound + 1e-3, (name, worst)


@pytest.mark.parametrize("call,why", [
    ("x[x > 0].squeeze()", "rank"),
    # (keep(x).unsqueeze(0) * 2 runs: test_selection_row_output) a [2, n, 4] from it does not
    ("keep(x).unsqueeze(0).expand(2, -1, -1)", "unsqueeze"),
])
def test_rank_changes_at_dim_0_stay_refused(call, why):
    x = _example()
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: eval(call, {"torch": torch, "x": x, "keep": keep})).eval(), [x],  # noqa: S307
                      [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and why in message, message


BOARD_CALLS = {
    "a slice from the end with a step": lambda x: x[x > 0][-5::2],
    "mode's index": lambda x: x[x > 0].mode()[1],
}


@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, tmp_path):
    res = _compiled(BOARD_CALLS[name])
    board_matches_reference(res.data, _inputs(1, 5)[0].numpy(), "cortex-m55", tmp_path)
