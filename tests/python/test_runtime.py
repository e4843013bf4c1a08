"""ptec-written programs on ptec's C runtime (build/host/tools/ptec-run):
the runtime must load them and give exactly the numpy reference's bytes.
Skipped when the host build is missing; programs whose operators the build
lacks are skipped with the list of missing operators."""
import os
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.models import ZOO, load_model
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program, serialize_program
from ptec.pte.builders import ds_cnn_program
from ptec.pte.program_builder import ProgramBuilder

PTEC_RUN = os.environ.get("PTEC_RUN", os.path.join(ROOT, "build", "host", "tools", "ptec-run",
                                                   "ptec-run"))


@pytest.fixture(scope="module")
def runtime_ops():
    if not os.path.exists(PTEC_RUN):
        pytest.skip("ptec-run not built (cmake --preset host && cmake --build --preset host)")
    out = subprocess.run([PTEC_RUN, "--list-ops"], capture_output=True, text=True).stdout
    return {line.strip() for line in out.splitlines() if "::" in line}


def run_on_runtime(tmp_path, program, inputs, runtime_ops):
    missing = sorted({op.key for op in program.plan().operators} - runtime_ops)
    if missing:
        pytest.skip("runtime build lacks " + ", ".join(missing))
    path = tmp_path / "model.pte"
    path.write_bytes(serialize_program(program))
    plan = program.plan()
    args = [PTEC_RUN, str(path), "--output-dir", str(tmp_path)]
    for i, (idx, x) in enumerate(zip(plan.inputs, inputs)):
        t = plan.values[idx].val
        phys = np.asarray(x).reshape(t.sizes).transpose(list(t.dim_order))
        f = tmp_path / f"in{i}.bin"
        f.write_bytes(np.ascontiguousarray(phys, NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes())
        args += ["--input", str(f)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    outs = []
    for i, idx in enumerate(plan.outputs):
        t = plan.values[idx].val
        raw = np.fromfile(tmp_path / f"output{i}.bin", NUMPY_DTYPE[ScalarType(t.scalar_type)])
        phys = raw.reshape([t.sizes[d] for d in t.dim_order])
        outs.append(phys.transpose(np.argsort(list(t.dim_order))))
    return outs


def test_builder_fp32_program_on_runtime(tmp_path, runtime_ops):
    """Constants in a segment, planned memory, a broadcast mul and an add."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 3])
    t = b.tensor(ScalarType.FLOAT, [2, 3])
    y = b.tensor(ScalarType.FLOAT, [2, 3])
    b.call("aten::mul.out", self=x, other=b.constant(np.array([1.5, -2.0, 0.25], np.float32)),
           out=t)
    b.call("aten::add.out", self=t, other=b.constant(np.full((2, 3), 0.5, np.float32)),
           alpha=2, out=y)
    b.set_io([x], [y])
    prog = b.build()
    xin = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    got = run_on_runtime(tmp_path, prog, [xin], runtime_ops)[0]
    want = xin * np.array([1.5, -2.0, 0.25], np.float32) + 2 * np.float32(0.5)
    assert np.array_equal(got, want)
    assert np.array_equal(got, run_program(prog, [xin])[0])


def test_quantize_roundtrip_program_on_runtime(tmp_path, runtime_ops):
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [1, 2, 3, 4], [0, 2, 3, 1])
    q = b.tensor(ScalarType.CHAR, [1, 2, 3, 4], [0, 2, 3, 1])
    c = b.tensor(ScalarType.CHAR, [1, 2, 3, 4])
    y = b.tensor(ScalarType.FLOAT, [1, 2, 3, 4])
    qp = dict(scale=0.05, zero_point=-7, quant_min=-128, quant_max=127, dtype=ScalarType.CHAR)
    b.call("quantized_decomposed::quantize_per_tensor.out", input=x, out=q, **qp)
    b.call("dim_order_ops::_clone_dim_order.out", self=q, non_blocking=False,
           dim_order=[0, 1, 2, 3], out=c)
    b.call("quantized_decomposed::dequantize_per_tensor.out", input=c, out_dtype=None, out=y, **qp)
    b.set_io([x], [y])
    prog = b.build()
    xin = np.random.default_rng(0).normal(size=(1, 2, 3, 4)).astype(np.float32) * 3
    got = run_on_runtime(tmp_path, prog, [xin], runtime_ops)[0]
    assert np.array_equal(got, run_program(prog, [xin])[0])
    assert np.abs(got - xin).max() <= 0.05 / 2 + 1e-6 or np.abs(xin).max() > 6


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_ds_cnn_builder_program_on_runtime(tmp_path, runtime_ops, target):
    prog, _ = ds_cnn_program(seed=4, target=target)
    x = np.random.default_rng(1).normal(size=(1, 1, 49, 10)).astype(np.float32) * 2
    got = run_on_runtime(tmp_path, prog, [x], runtime_ops)[0]
    assert np.array_equal(got, run_program(prog, [x])[0])


@pytest.mark.parametrize("name", list(ZOO))
def test_compiled_zoo_on_runtime(tmp_path, runtime_ops, name):
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(4))
    prog = parse_program(res.data)
    x = m.calibration(1, 21)[0][0].numpy()
    got = run_on_runtime(tmp_path, prog, [x], runtime_ops)[0]
    assert np.array_equal(got, run_program(prog, [x])[0])
