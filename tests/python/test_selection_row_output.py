"""A 1-D selection given leading dims of 1 as a program output (issue 15,
capture_selection_row_output): `x[m].unsqueeze(0)`, `x[m][None]`,
`x[m].view(1, -1)`, `x[m].reshape(1, -1)`, `x[m][None, None]`:
aten::masked_select into a [1, ..., 1, bound] bound-dynamic out, the
kernel setting [1, ..., 1, count]; and the readers of such a view
(capture_selection_lead: `s[None] * 2`, `s[None].sum(1)`,
`s[None].cumsum(1)`, `s[None].softmax(0)`, ...), lifted to readers of the
selection; a row selection's [1, n, C] (`keep(x)[None]`) and its readers
(`keep(x)[None] * 2`, `.sum(1)`, `.softmax(-1)`, ...), lifted likewise.

Oracles: PyTorch on the input (its shape [1, n] and values), elements an
input step away from the threshold so the count is torch's; the host
runtime's output (its sizes read from what the runtime reports, ptec-run's
.npy) gives the numpy reference interpreter's bytes and shape. What still
cannot run is refused in one line naming the call."""
import subprocess

import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from ptec.pte.schema import TensorShapeDynamism
from ptec.pte.upstream_rules import ptec_only_operators
from model_checks import Call
from test_masked_select import _no_kernel_reads_a_bound_dynamic_tensor, code_inputs
from test_selection_more import _inputs
from test_selection_positional import _example
from test_selection_rows import keep

# call -> bound in output steps (a copy: half a step; a moved sigmoid its own rounding)
CALLS = {
    "x[x > 0].unsqueeze(0)": (lambda x: x[x > 0].unsqueeze(0), 0.5),
    "x[x > 0][None]": (lambda x: x[x > 0][None], 0.5),
    "x[x > 0][None, :]": (lambda x: x[x > 0][None, :], 0.5),
    "x[x > 0].view(1, -1)": (lambda x: x[x > 0].view(1, -1), 0.5),
    "x[x > 0.5].reshape(1, -1)": (lambda x: x[x > 0.5].reshape(1, -1), 0.5),
    "x[x > 0].unsqueeze(-2)": (lambda x: x[x > 0].unsqueeze(-2), 0.5),
    "torch.masked_select(x, x < 0).unsqueeze(0)": (lambda x: torch.masked_select(x, x < 0).unsqueeze(0), 0.5),
    "torch.sigmoid(x[x > 0] * 2).unsqueeze(0)": (lambda x: torch.sigmoid(x[x > 0] * 2).unsqueeze(0), 2.8),
    # readers of the [1, n] (capture_selection_lead): the selection's own readers, then the view
    "x[x > 0].unsqueeze(0) * 2": (lambda x: x[x > 0].unsqueeze(0) * 2, 0.5),
    "torch.sigmoid(x[x > 0][None])": (lambda x: torch.sigmoid(x[x > 0][None]), 1.2),
    "x[x > 0][None] + b": (lambda x: x[x > 0][None] + torch.full((1, 1), 0.5), 0.6),
    "x[x > 0][None] - x[x > 0][None] * 0.5": (lambda x: x[x > 0][None] - x[x > 0][None] * 0.5, 0.5),
    # (the 1-D selection's softmax: its sum's int8 range spans one element's 1 and many small)
    "x[x > 0][None].softmax(-1)": (lambda x: x[x > 0][None].softmax(-1), 12.0),
    "x[x > 0][None].log_softmax(1)": (lambda x: x[x > 0][None].log_softmax(1), 8.5),
    "x[x > 0][None].cumsum(1)": (lambda x: x[x > 0][None].cumsum(1), 1.0),
    "x[x > 0][None].sort(1)[0]": (lambda x: x[x > 0][None].sort(1)[0], 1.2),
    "x[x > 0][None].flip(1)": (lambda x: x[x > 0][None].flip(1), 0.5),
    "x[x > 0][None].cumsum(0)": (lambda x: x[x > 0][None].cumsum(0), 0.5),
    "x[x > 0][None].softmax(0)": (lambda x: x[x > 0][None].softmax(0), 1.0),
}
# rank 3 and more: every dim but the last 1 (the kernel's [1, ..., 1, bound] out)
DEEPER = {
    "x[x > 0][None, None]": (lambda x: x[x > 0][None, None], 0.5),
    "x[x > 0].unsqueeze(0).unsqueeze(0)": (lambda x: x[x > 0].unsqueeze(0).unsqueeze(0), 0.5),
    "x[x > 0].view(1, 1, -1)": (lambda x: x[x > 0].view(1, 1, -1), 0.5),
    "x[x > 0][None][None] * 2": (lambda x: x[x > 0][None][None] * 2, 0.5),
    "x[x > 0].view(1, 1, 1, -1)": (lambda x: x[x > 0].view(1, 1, 1, -1), 0.5),
    "torch.sigmoid(x[x > 0][None]).unsqueeze(0)": (lambda x: torch.sigmoid(x[x > 0][None]).unsqueeze(0), 1.2),
}
# readers giving a value of fixed shape: reductions over the varying dim are the selection's
FIXED = {
    "x[x > 0][None].sum(1)": (lambda x: x[x > 0][None].sum(1), 1.5),
    "x[x > 0][None].sum(1, keepdim=True)": (lambda x: x[x > 0][None].sum(1, keepdim=True), 1.5),
    "x[x > 0][None].sum()": (lambda x: x[x > 0][None].sum(), 1.5),
    "(x[x > 0][None] * 2).amax(1)": (lambda x: (x[x > 0][None] * 2).amax(1), 1.0),
    "torch.max(x[x > 0][None], -1)[0]": (lambda x: torch.max(x[x > 0][None], -1)[0], 1.0),
}
# [n, 1] and [n, 1, 1]: the varying dim first, a view keeping the selection's rows
FIRST = {
    "x[x > 0].unsqueeze(1)": (lambda x: x[x > 0].unsqueeze(1), 0.5),
    "x[x > 0][:, None]": (lambda x: x[x > 0][:, None], 0.5),
    "x[x > 0][None].T": (lambda x: x[x > 0][None].T, 0.5),
    "x[x > 0][:, None, None]": (lambda x: x[x > 0][:, None, None], 0.5),
}


def _compiled(fn, int8_io=False):
    # counts from none to all: a softmax over one element is 1, over many small
    calibration = [(_example(k),) for k in (24, 1, 2, 5)] + [(x,) for x in _inputs(24, 1, top=1.0)]
    return compile_model(Call(fn).eval(), [_example()], calibration, int8_io=int8_io)


def _out_tensor(prog):
    plan = prog.plan()
    return plan.values[plan.outputs[0]].val


def _against_torch(name, fn, bound, res, prog, tmp_path, at):
    """torch's shape and values for counts 0 to all (none, one, all among
    them), within the bound; the host runtime's shape and bytes the
    reference interpreter's. at: the varying dim (None: a fixed shape)."""
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, lengths = 0.0, set()
    for x in _inputs(8, 2) + [_example(k) for k in (0, 1, 13, 32)]:
        try:
            want = fn(x).numpy()
        except (RuntimeError, IndexError):      # torch's max of nothing: ptec gives the fill (docs/aot.md)
            continue
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        ref = run_program(prog, [x.numpy()])[0]
        assert got.shape == want.shape == ref.shape, (name, got.shape, ref.shape, want.shape)
        assert got.tobytes() == ref.tobytes()
        lengths.add(got.shape[at] if at is not None else int((x > 0).sum()))
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: worst {worst:.2f} output steps, lengths {sorted(lengths)}")
    assert min(lengths) <= 1 and max(lengths) >= 24 and len(lengths) >= 5, lengths
    assert worst <= bound + 1e-3, (name, worst)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_leading_one_is_torchs_shape_and_values(name, tmp_path):
    """torch's [1, n] for counts 0 to all, within the bound, the host
    runtime's shape and bytes the reference interpreter's."""
    fn, bound = CALLS[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    _no_kernel_reads_a_bound_dynamic_tensor(prog)
    out = _out_tensor(prog)
    assert out.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND and list(out.sizes) == [1, 32]
    # the one form upstream's kernel refuses (it resizes out to 1-D): compile reports ptec only
    assert "aten::masked_select.out into a [1, bound] out" in ptec_only_operators(prog)
    _against_torch(name, fn, bound, res, prog, tmp_path, 1)


@pytest.mark.parametrize("name", sorted(DEEPER))
def test_leading_ones_of_rank_3_and_4(name, tmp_path):
    """[1, 1, n], [1, 1, 1, n]: one selection into [1, ..., 1, bound]."""
    fn, bound = DEEPER[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    _no_kernel_reads_a_bound_dynamic_tensor(prog)
    out = _out_tensor(prog)
    rank = fn(_example()).dim()
    assert out.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND and list(out.sizes) == [1] * (rank - 1) + [32]
    assert ptec_only_operators(prog) == ["aten::masked_select.out into a [1, bound] out"]
    _against_torch(name, fn, bound, res, prog, tmp_path, rank - 1)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_reductions_of_the_view_are_the_selections(name, tmp_path):
    """A reduction over the varying dim of [1, n] is one of the selection
    (computed over x): a fixed shape, no bound-dynamic tensor at all."""
    fn, bound = FIXED[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    plan = prog.plan()
    assert not any(getattr(v.val, "shape_dynamism", None) == TensorShapeDynamism.DYNAMIC_BOUND for v in plan.values)
    _against_torch(name, fn, bound, res, prog, tmp_path, None)


@pytest.mark.parametrize("name", sorted(FIRST))
def test_the_varying_dim_first_keeps_the_rows(name, tmp_path):
    """[n, 1]: a view keeping the selection's rows, which upstream's kernels
    run (no ptec-only form)."""
    fn, bound = FIRST[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    _no_kernel_reads_a_bound_dynamic_tensor(prog)
    assert ptec_only_operators(prog) == []
    _against_torch(name, fn, bound, res, prog, tmp_path, 0)


def test_int8_codes_exactly_and_a_stream_of_counts_on_one_load(tmp_path):
    """--int8-io: torch's selection of the codes, exactly, as [1, n]; and
    several executes on one loaded method (ptec-run --steps) each report
    their own sizes."""
    fn = CALLS["x[x > 0].unsqueeze(0)"][0]
    res = _compiled(fn, int8_io=True)
    prog = parse_program(res.data)
    grid = res.graph.node(res.graph.inputs[0]).qparams
    codes = code_inputs(grid)
    steps = host_runtime.run_stream(prog, res.data, [[q] for q in codes], workdir=str(tmp_path))
    counts = set()
    for q, (got,) in zip(codes, steps):
        values = (torch.as_tensor(q, dtype=torch.int32) - grid[1]).to(torch.float32) * torch.tensor(grid[0])
        want = torch.as_tensor(q)[values > 0].unsqueeze(0).numpy()      # torch's, as the codes it was given
        assert got.dtype == np.int8 and got.shape == want.shape and got.tobytes() == want.tobytes()
        assert got.tobytes() == run_program(prog, [q])[0].tobytes()
        counts.add(want.shape[1])
    assert {0, 32} <= counts and len(counts) >= 4, counts


def test_ptec_run_reports_the_runs_sizes(tmp_path):
    """ptec-run itself: its .npy holds [1, n] and its summary line names
    the run's shape."""
    res = _compiled(CALLS["x[x > 0].unsqueeze(0)"][0])
    (tmp_path / "m.pte").write_bytes(res.data)
    x = _example(13)
    (tmp_path / "x.bin").write_bytes(x.numpy().tobytes())
    r = subprocess.run([host_runtime.ptec_run_path(), str(tmp_path / "m.pte"), "--input", str(tmp_path / "x.bin"),
                        "--output-dir", str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "out" / "output0.npy")
    assert got.shape == (1, 13) and (got == x[x > 0].unsqueeze(0).numpy()).all()
    assert "[1, 13]" in r.stdout or "1, 13" in r.stdout, r.stdout


# a row selection (keep(x): rows of 4 of x viewed [8, 4]) with a dim of 1 in front: aten::index into [1, bound, 4]
ROWS = {
    "keep(x).unsqueeze(0)": (lambda x: keep(x).unsqueeze(0), 0.5),
    "keep(x)[None]": (lambda x: keep(x)[None], 0.5),
    "keep(x).view(1, -1, 4)": (lambda x: keep(x).view(1, -1, 4), 0.5),
    "(keep(x) * 2)[None]": (lambda x: (keep(x) * 2)[None], 0.5),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_row_selection_with_a_one_in_front(name, tmp_path):
    """[1, n, 4]: the rows selection's aten::index.Tensor_out into [1, 8, 4]
    (ptec's kernel sets [1, count, 4]; upstream's resizes out to [count, 4],
    so compile reports the program as ptec's runtime's only)."""
    fn, bound = ROWS[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    _no_kernel_reads_a_bound_dynamic_tensor(prog)
    out = _out_tensor(prog)
    assert out.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND and list(out.sizes) == [1, 8, 4]
    assert ptec_only_operators(prog) == ["aten::index.Tensor_out into a [1, bound, ...] out"]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, lengths = 0.0, set()
    for x in _inputs(8, 2) + [_example(k) for k in (0, 1, 4, 13, 32)]:
        want = fn(x).numpy()
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        ref = run_program(prog, [x.numpy()])[0]
        assert got.shape == want.shape == ref.shape, (name, got.shape, ref.shape, want.shape)
        assert got.tobytes() == ref.tobytes()
        lengths.add(got.shape[1])
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: worst {worst:.2f} output steps, rows {sorted(lengths)}")
    assert {0, 8} <= lengths and len(lengths) >= 4, lengths
    assert worst <= bound + 1e-3, (name, worst)


# readers of a row selection's [1, n, 4] (capture_selection_lead): the selection's own readers, then the view
ROW_READERS = {
    "keep(x).unsqueeze(0) * 2": (lambda x: keep(x).unsqueeze(0) * 2, 0.5),                 # 0.50
    "keep(x)[None] * 2": (lambda x: keep(x)[None] * 2, 0.5),                                # 0.50
    "torch.sigmoid(keep(x)[None])": (lambda x: torch.sigmoid(keep(x)[None]), 1.2),          # 1.09
    "keep(x)[None] + torch.ones(4)": (lambda x: keep(x)[None] + torch.ones(4), 0.5),        # 0.50
    "keep(x).unsqueeze(0).softmax(-1)": (lambda x: keep(x).unsqueeze(0).softmax(-1), 1.5),  # 1.23
    # along the varying dim: one row's 1 and many rows' small values share the int8 range
    "keep(x)[None].softmax(1)": (lambda x: keep(x)[None].softmax(1), 14.0),                 # 13.53
    "keep(x)[None].cumsum(1)": (lambda x: keep(x)[None].cumsum(1), 1.0),                    # 0.92
    "keep(x).unsqueeze(0).sum(1)": (lambda x: keep(x).unsqueeze(0).sum(1), 1.0),            # 0.62
    "keep(x)[None].sum(-1)": (lambda x: keep(x)[None].sum(-1), 1.0),                        # 0.99
    "keep(x)[None].sum()": (lambda x: keep(x)[None].sum(), 2.0),                            # 1.54
    "keep(x)[None].amax(1)": (lambda x: keep(x)[None].amax(1), 1.0),
    "keep(x)[None].mean(2)": (lambda x: keep(x)[None].mean(2), 1.0),                        # 0.68
    "keep(x)[None].sum(0)": (lambda x: keep(x)[None].sum(0), 0.5),                          # 0.50
}


@pytest.mark.parametrize("name", sorted(ROW_READERS))
def test_readers_of_a_row_selections_leading_one(name, tmp_path):
    """A reader of keep(x)[None] ([1, n, 4]) runs as the same reader of
    keep(x) (its dims moved past the 1), then the view: torch's shape and
    values for counts none to all, the host runtime's bytes the reference
    interpreter's."""
    fn, bound = ROW_READERS[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, counts = 0.0, set()
    for x in _inputs(8, 2) + [_example(k) for k in (0, 1, 4, 13, 32)]:
        try:
            want = fn(x).numpy()
        except (RuntimeError, IndexError):      # torch's amax of no rows: ptec gives the fill (docs/aot.md)
            continue
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        ref = run_program(prog, [x.numpy()])[0]
        assert got.shape == want.shape == ref.shape, (name, got.shape, ref.shape, want.shape)
        assert got.tobytes() == ref.tobytes()
        counts.add(len(keep(x)))
        if want.size:
            worst = max(worst, float(np.abs(got - want).max()) / step)
    print(f"{name}: worst {worst:.2f} output steps, rows {sorted(counts)}")
    assert ({0, 8} if "amax" not in name else {1, 8}) <= counts and len(counts) >= 4, counts
    assert worst <= bound + 1e-3, (name, worst)


@pytest.mark.parametrize("call,why", [
    # a reader giving the rows beside a dim above 1 in front ([3, n, 4])
    ("keep(x)[None] + torch.ones(3, 1, 1)", "getitem_2"),
    ("x[x > 0].squeeze()", "rank"),
    # the example's count (24) as a literal size: torch raises for any other count
    ("x[x > 0].view(1, 24)", "spell the length -1"),
    ("torch.sigmoid(x[x > 0]).reshape(1, 24)", "spell the length -1"),
    ("x[x > 0].view(24, 1)", "spell the length -1"),
    ("keep(x).view(1, 6, 4)", "spell the length -1"),
    ("x[x > 0][None].view(1, 1, 24)", "getitem_1"),
    # the varying length beside a dim above 1
    ("x[x > 0][None] + torch.ones(3, 1)", "getitem_1"),
    ("x[x > 0][None].expand(2, -1)", "getitem_1"),
])
def test_other_leading_dims_stay_refused(call, why):
    """A reader of a row selection's [1, n, C] giving [k, n, C], squeeze()
    (its rank would follow the count), a size spelled as the example's
    count, a reader giving [k, n]: one line naming the call."""
    x = _example()
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: eval(call, {"torch": torch, "x": x, "keep": keep})).eval(), [x],  # noqa: S307
                      [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and why in message, message


def test_board_prints_the_reference_bytes(tmp_path):
    res = _compiled(CALLS["x[x > 0].unsqueeze(0)"][0])
    board_matches_reference(res.data, _inputs(1, 5)[0].numpy(), "cortex-m55", tmp_path)


def test_board_prints_a_lifted_readers_bytes(tmp_path):
    """The emulated M55 runs a reader of the [1, n] (a cumsum along it,
    lifted to the selection's) and prints the reference bytes."""
    res = _compiled(CALLS["x[x > 0][None].cumsum(1)"][0])
    board_matches_reference(res.data, _inputs(1, 5)[0].numpy(), "cortex-m55", tmp_path)
