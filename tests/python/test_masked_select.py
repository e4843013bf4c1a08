"""Selection by a bool mask (issue 15): x[x > 0] and torch.masked_select
run as a program output, into a bound-dynamic tensor whose length the
kernel sets at run time (a mask over x's leading dims keeps its rows:
aten::index); element-wise ops of a selection and whole-tensor
sum / mean / max / min of it are compiled over x (capture_masked_select).

Oracles: PyTorch on the values the program holds. With int8 inputs the
codes are exactly on the grid, so torch's selection of the dequantized
values, quantized back, is the program's output code for code (the count
included). The host runtime gives the numpy reference interpreter's bytes;
the emulated boards print them; the metadata the AOT predicts for a
program with bound-dynamic tensors is what the runtime measures."""
import copy
import os
import re
import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT
from model_checks import board_matches_reference, board_streams_reference
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from ptec.pte.schema import TensorShapeDynamism
from ptec.pte.writer import serialize_program
from ptec.requirements import requirements
from model_checks import Call

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


def compiled(fn, int8_io=False, shape=(1, 4, 8)):
    g = torch.Generator().manual_seed(3)
    calibration = [(torch.randn(shape, generator=g) * 1.5,) for _ in range(6)]
    return compile_model(Call(fn).eval(), [calibration[0][0]], calibration, int8_io=int8_io)


def code_inputs(grid, shape=(1, 4, 8)):
    """int8 codes with different counts above zero: random, none, all, every code."""
    s, z = grid
    rng = np.random.default_rng(5)
    n = int(np.prod(shape))
    sets = [rng.integers(-128, 128, n), np.full(n, min(z, 127)), np.full(n, 127), np.arange(-128, 128)[:n],
            rng.integers(z - 3, z + 4, n)]
    return [np.clip(c, -128, 127).astype(np.int8).reshape(shape) for c in sets]


@pytest.mark.parametrize("which", ["getitem", "masked_select"])
def test_int8_codes_are_torchs_selection(which, tmp_path):
    fn = (lambda x: x[x > 0]) if which == "getitem" else (lambda x: torch.masked_select(x, x.gt(0)))
    res = compiled(fn, int8_io=True)
    prog = parse_program(res.data)
    grid = res.graph.node(res.graph.inputs[0]).qparams
    assert tuple(res.graph.node(res.graph.outputs[0]).qparams) == tuple(grid)
    counts = set()
    for q in code_inputs(grid):
        values = (torch.as_tensor(q, dtype=torch.int32) - grid[1]).to(torch.float32) * torch.tensor(grid[0])
        want = q[(values > 0).numpy()]                   # torch's choice, as the codes it was given
        got = host_runtime.run(prog, res.data, [q], workdir=str(tmp_path))[0]
        assert got.dtype == np.int8 and got.shape == want.shape and got.tobytes() == want.tobytes()
        assert got.tobytes() == run_program(prog, [q])[0].tobytes()
        counts.add(got.size)
    assert {0, q.size} <= counts and len(counts) >= 4, counts


def test_float_io_within_half_a_step(tmp_path):
    """Float in and out: torch's x[x > 0] on inputs with no element within an
    input step of zero (its rounding could cross it): the same count, values
    within half an output step."""
    res = compiled(lambda x: x[x > 0])
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    out_step = res.graph.node(res.graph.outputs[0]).qparams[0]
    g = torch.Generator().manual_seed(9)
    counts = set()
    for x in [torch.randn(1, 4, 8, generator=g) * 1.5 for _ in range(3)] + [-torch.ones(1, 4, 8),
                                                                          torch.ones(1, 4, 8)]:
        x = torch.where(x.abs() < step, torch.full_like(x, 2 * step), x)
        want = x[x > 0].numpy()
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        assert got.shape == want.shape
        assert want.size == 0 or np.abs(got - want).max() <= 0.5 * out_step + 1e-7
        counts.add(got.size)
    assert {0, 32} <= counts and len(counts) >= 3


def test_output_is_bound_dynamic_at_the_broadcast_numel():
    res = compiled(lambda x: x.masked_select(x[:, :1] > 0))      # mask [1,1,8] broadcast with x [1,4,8]
    plan = parse_program(res.data).plan()
    out = plan.values[plan.outputs[0]].val
    assert out.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND and list(out.sizes) == [32]
    assert sum(v.val.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND for v in plan.values
               if hasattr(v.val, "shape_dynamism")) == 1


def _no_kernel_reads_a_bound_dynamic_tensor(prog):
    """Every DYNAMIC_BOUND value is a program output that no kernel call
    takes as an input (only as its out): ptec's kernels check static shapes
    at load."""
    plan = prog.plan()
    ops = plan.operators
    dynamic = {i for i, v in enumerate(plan.values)
               if getattr(v.val, "shape_dynamism", None) == TensorShapeDynamism.DYNAMIC_BOUND}
    assert dynamic and dynamic <= set(plan.outputs)
    for chain in plan.chains:
        for ins in chain.instructions:
            args = list(ins.instr_args.args)
            name = ops[ins.instr_args.op_index].name
            # out and the return slot repeat it (the last two)
            assert not dynamic & set(args[:-2]), f"{name} reads a bound-dynamic tensor"


ELEMENTWISE = {
    "x[x > 0] * 2": lambda x: x[x > 0] * 2.0,
    "torch.relu(x[x > 0.5] - 1)": lambda x: torch.relu(x[x > 0.5] - 1),
    "x[x > 0] + (x * 0.5)[x > 0]": lambda x: x[x > 0] + (x * 0.5)[x > 0],
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_consumers_run_before_the_selection(name, tmp_path):
    """f(x[m]) is compiled as f(x)[m]: the selection stays the program's
    last call, and the count is torch's (inputs an input step away from
    the threshold); the values' bound is test_function_coverage's."""
    fn = ELEMENTWISE[name]
    res = compiled(fn)
    prog = parse_program(res.data)
    _no_kernel_reads_a_bound_dynamic_tensor(prog)
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    threshold = 0.5 if "0.5]" in name else 0.0
    g = torch.Generator().manual_seed(21)
    counts = set()
    for x in [torch.randn(1, 4, 8, generator=g) * 1.5 for _ in range(3)] + [-torch.ones(1, 4, 8)]:
        x = torch.where((x - threshold).abs() < in_step, x + 2 * in_step, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        assert got.shape == tuple(fn(x).shape)
        counts.add(got.size)
    assert 0 in counts and len(counts) >= 3, counts


def _spread_inputs(n, seed):
    """Uniform in [-3, 3] times a scale from 0.3 to 1: whole-tensor
    reductions of these vary over many output steps."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 4, 8, generator=g) * 6 - 3) * float(s) for s in np.linspace(0.3, 1.0, n)]


# whole-tensor reductions of a selection (rewritten over where(mask, x, .)):
# (call, threshold, bound in output steps)
REDUCTIONS = {
    "x[x > 0].sum()": (lambda x: x[x > 0].sum(), 0.0, 1.5),                    # 1.46
    "x[x > 0].mean()": (lambda x: x[x > 0].mean(), 0.0, 2.5),                  # 2.20: sum over count
    "x[x > 0].max()": (lambda x: x[x > 0].max(), 0.0, 0.5),                    # 0.43
    "(x[x > 0.5] * 2).min()": (lambda x: (x[x > 0.5] * 2).min(), 0.5, 3.5),    # 3.06: x * 2 rounded first
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_whole_reductions_of_a_selection_within_their_bound(name, tmp_path):
    fn, threshold, bound = REDUCTIONS[name]
    model = Call(fn).eval()
    calibration = [(x,) for x in _spread_inputs(24, 1)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks
    assert "masked_select" not in [n.op for n in res.graph.nodes]        # no selection is left
    prog = parse_program(res.data)
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, wants = 0.0, []
    for x in _spread_inputs(8, 2):
        x = torch.where((x - threshold).abs() < in_step, x + 2 * in_step, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            want = float(model(x))
        assert got.shape == ()
        worst = max(worst, abs(float(got) - want) / step)
        wants.append(want)
    print(f"{name}: worst {worst:.2f} output steps over outputs spanning {(max(wants) - min(wants)) / step:.0f}")
    assert max(wants) - min(wants) >= 16 * step
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


def test_an_empty_selection_reduces_to_documented_values(tmp_path):
    """torch raises on max/min of nothing and gives NaN for its mean; an
    int8 program has no NaN and no error path there: sum 0, mean 0, max
    x's min and min x's max (each within its output's calibrated range:
    docs/aot.md)."""
    fn = lambda x: torch.stack([x[x > 0].sum(), x[x > 0].mean(), x[x > 0].max(), x[x > 0].min()])  # noqa: E731
    model = Call(fn).eval()
    calibration = [(x,) for x in _spread_inputs(24, 1)]
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    x = -torch.linspace(0.2, 1.5, 32).reshape(1, 4, 8)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    lo, hi = float(x.min()), float(x.max())
    assert abs(got[0]) <= step and abs(got[1]) <= step, got
    assert got[2] <= max(lo, got[2]) + step and got[3] >= min(hi, got[3]) - step, got


@pytest.mark.parametrize("fn,consumer", [
    # two masks that select the same count here (no element is 0) but not always
    (lambda x: x[x > 0] + (x * 0.5)[x >= 0], "add"),
    # (views, sort, cat and sums of a selection run: test_selection_rows.py; scans, softmax, var,
    # positions, median, flip, s[0], s[-1], s[:3]: test_selection_mix.py; logcumsumexp, diff, s[1:-1],
    # s[::2], norms and products, logsumexp, quantile, mode's values, unique: test_selection_more.py;
    # s[-5::2], views into groups, mode's indices, mode / quantile along rows: test_selection_positional.py;
    # unsqueeze(0) as a program output and its readers: test_selection_row_output.py; a reader
    # giving the length beside a dim above 1 stays refused)
    (lambda x: x[x > 0].unsqueeze(0) + torch.ones(3, 1), "unsqueeze")])
def test_a_consumer_that_follows_the_length_is_refused_by_name(fn, consumer):
    x = torch.linspace(-1, 2, 32).reshape(1, 4, 8)
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and consumer in message, message
    assert "program output" in message and "element-wise" in message and "aten::" not in message, message


@pytest.mark.parametrize("shape,mask", [((1, 6, 4), lambda x: x[..., 0] > 0),           # rows of 4
                                        ((2, 3, 4), lambda x: x[..., 0] > 0),           # a [2, 3] mask
                                        ((6, 2, 2), lambda x: x[:, 0, 0] <= 0)])       # blocks of [2, 2]
def test_a_mask_over_leading_dims_keeps_the_rows(shape, mask, tmp_path):
    """x[mask] with a mask of x's leading dims is aten::index with that one
    bool index: torch's rows of the int8 codes, exactly, the count changing
    per input (none, some, all), on one bound-dynamic output planned for
    every row."""
    fn = lambda x: x[mask(x)]             # noqa: E731
    res = compiled(fn, int8_io=True, shape=shape)
    prog = parse_program(res.data)
    plan = prog.plan()
    assert [plan.operators[i.instr_args.op_index].key for i in plan.chains[0].instructions][-1] == \
        "aten::index.Tensor_out"
    out = plan.values[plan.outputs[0]].val
    k = mask(torch.zeros(shape)).dim()
    assert out.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND
    assert list(out.sizes) == [int(np.prod(shape[:k]))] + list(shape[k:])
    grid = res.graph.node(res.graph.inputs[0]).qparams
    counts = set()
    for q in code_inputs(grid, shape):
        values = (torch.as_tensor(q, dtype=torch.int32) - grid[1]).to(torch.float32) * torch.tensor(grid[0])
        want = q[mask(values).numpy()]
        got = host_runtime.run(prog, res.data, [q], workdir=str(tmp_path))[0]
        assert got.dtype == np.int8 and got.shape == want.shape and got.tobytes() == want.tobytes()
        assert got.tobytes() == run_program(prog, [q])[0].tobytes()
        counts.add(got.shape[0])
    assert 0 in counts and len(counts) >= 3, counts


def test_rows_scaled_per_column_move_before_the_selection():
    """boxes[scores > t] * scale with a scale per column: the mul moves
    before the selection (it broadcasts over the rows the same way)."""
    res = compiled(lambda x: x[x[..., 0] > 0] * torch.tensor([1.0, 2.0, 0.5, -1.0]), shape=(1, 6, 4))
    ops = [n.op for n in res.graph.nodes]
    assert ops[-1] == "masked_select" and ops.count("masked_select") == 1 and "mul" in ops
    _no_kernel_reads_a_bound_dynamic_tensor(parse_program(res.data))


def _measured(path, *args):
    run = subprocess.run([PTEC_RUN, path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return run, {k: int(v) for k, v in re.findall(r"^(metadata|scratch|total):\s+(\d+) bytes", run.stdout, re.M)}


def test_requirements_count_the_writable_sizes(tmp_path):
    """Each bound-dynamic tensor adds its sizes twice (current and bound) to
    the metadata: the AOT's figure is what ptec-run measures, exactly enough
    to load (one byte less fails); a rank-3 input marked bound-dynamic too
    (as upstream may write it) adds its 24 bytes."""
    res = compiled(lambda x: x[x > 0])
    prog = parse_program(res.data)
    with_input = copy.deepcopy(prog)
    plan = with_input.plan()
    plan.values[plan.inputs[0]].val.shape_dynamism = TensorShapeDynamism.DYNAMIC_BOUND
    metas = []
    for k, p in enumerate((prog, with_input)):
        path = str(tmp_path / f"m{k}.pte")
        with open(path, "wb") as f:
            f.write(serialize_program(p))
        r = requirements(p, target="host")
        run, measured = _measured(path)
        assert run.returncode == 0, run.stderr
        assert measured == {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes, "total": r.total_bytes}
        regions = [f"metadata={r.metadata_bytes}", f"scratch={r.scratch_bytes}"] + \
            [f"planned{i + 1}={n}" for i, n in enumerate(r.planned_bytes)]
        exact, _ = _measured(path, *[a for reg in regions for a in ("--region", reg)])
        assert exact.returncode == 0, exact.stderr
        less = [f"metadata={r.metadata_bytes - 1}"] + regions[1:]
        short, _ = _measured(path, *[a for reg in less for a in ("--region", reg)])
        assert short.returncode == 1 and "short by 1" in short.stderr, short.stderr
        metas.append(r.metadata_bytes)
    assert metas[1] - metas[0] == 24                          # 2 x 3 sizes of 4 bytes, 8-aligned


BOARD_CALLS = {
    "x[x > 0]": lambda x: x[x > 0],
    # a mask over the leading dims (aten::index), an element-wise op moved before it
    "x[x[..., 0] > 0] * 2": lambda x: x[x[..., 0] > 0] * 2.0,
    # an element-wise chain moved before the selection
    "torch.sigmoid(x[x > 0] * 2 - 1)": lambda x: torch.sigmoid(x[x > 0] * 2 - 1),
    # where, bool_to, div, max pools: every reduction's rewrite
    "reductions": lambda x: x[x > 0].mean() + x[x > 0].max() - x[x > 0.5].min() + x[x > 0].sum() * 0.1,
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, target, tmp_path):
    res = compiled(BOARD_CALLS[name])
    x = (torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(4)) * 1.5).numpy()
    board_matches_reference(res.data, x, target, tmp_path)


def test_board_stream_sets_each_runs_length(tmp_path):
    """One loaded method, inputs with different counts one after another
    (none, some, all): each execute's output has its own length."""
    res = compiled(lambda x: x[x > 0], int8_io=True)
    grid = res.graph.node(res.graph.inputs[0]).qparams
    chunks = [torch.as_tensor(q) for q in code_inputs(grid)]
    board_streams_reference(res.data, chunks, "cortex-m55", tmp_path)


def test_ptec_run_writes_the_runs_shape(tmp_path):
    """ptec-run's output0.npy has the run's length (and its .bin that many
    bytes): torch's selection of the int8 codes' values, here 5 of 32."""
    res = compiled(lambda x: x[x > 0], int8_io=True)
    s, z = res.graph.node(res.graph.inputs[0]).qparams
    q = np.full((1, 4, 8), z, np.int8)
    q[0, 1, 2:7] = np.clip(z + np.arange(1, 6), -128, 127)
    values = (torch.as_tensor(q, dtype=torch.int32) - z).to(torch.float32) * torch.tensor(s)
    want = q[(values > 0).numpy()]
    (tmp_path / "m.pte").write_bytes(res.data)
    np.save(tmp_path / "x.npy", q)
    run = subprocess.run([PTEC_RUN, str(tmp_path / "m.pte"), "--input", str(tmp_path / "x.npy"),
                          "--output-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "output0.npy")
    assert want.size == 5 and got.shape == (5,) and got.tobytes() == want.tobytes()
    assert (tmp_path / "output0.bin").read_bytes() == want.tobytes()
