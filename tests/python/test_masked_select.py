"""Selection by a bool mask (issue 15): x[x > 0] and torch.masked_select
run as a program output, into a bound-dynamic tensor whose length the
kernel sets at run time.

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

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


class Call(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


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


@pytest.mark.parametrize("fn,consumer", [(lambda x: x[x > 0] * 2.0, "mul"),
                                         (lambda x: torch.relu(x[x > 0]), "relu"),
                                         (lambda x: x[x > 0].sum(), "sum")])
def test_a_consumer_is_refused_by_name(fn, consumer):
    x = torch.randn(1, 4, 8)
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and consumer in message, message
    assert "program output" in message and "aten::" not in message, message


def test_a_mask_of_fewer_dims_stays_refused():
    # x[mask] with a mask over x's leading dims selects rows: not one flat list
    x = torch.linspace(-1, 2, 32).reshape(1, 4, 8)            # rows 1..3 start above 0
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Call(lambda x: x[x[..., 0] > 0]).eval(), [x], [(x,)])
    assert "operator not supported" in str(e.value) and "getitem" in str(e.value)


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


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_board_prints_the_reference_bytes(target, tmp_path):
    res = compiled(lambda x: x[x > 0])
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
