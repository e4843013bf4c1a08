"""ptec-written programs on ptec's C runtime (build/host/tools/ptec-run):
the runtime must load them and give exactly the numpy reference's bytes.
A missing host build, or a program whose operators the build lacks, fails."""
import subprocess

import numpy as np
import pytest

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.models import ZOO, load_model
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.program_builder import ProgramBuilder

@pytest.fixture(scope="module")
def runtime_ops():
    try:
        ptec_run = host_runtime.ptec_run_path()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    out = subprocess.run([ptec_run, "--list-ops"], capture_output=True, text=True).stdout
    return {line.strip() for line in out.splitlines() if "::" in line}


def run_on_runtime(tmp_path, program, inputs, runtime_ops):
    missing = sorted({op.key for op in program.plan().operators} - runtime_ops)
    assert not missing, "runtime build lacks " + ", ".join(missing)
    return host_runtime.run(program, serialize_program(program), inputs, workdir=str(tmp_path))


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
    # Inside the int8 range, within half a step of the input; outside it,
    # clamped to the range's end. Both cases occur with this seed.
    lo, hi = (-128 + 7) * 0.05, (127 + 7) * 0.05
    inside = (xin >= lo) & (xin <= hi)
    assert 0 < inside.sum() < xin.size
    assert np.abs(got - xin)[inside].max() <= 0.05 / 2 + 1e-6
    assert np.abs(got - np.clip(xin, lo, hi))[~inside].max() <= 1e-6


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


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_lowering_paths_on_runtime(tmp_path, runtime_ops, target):
    import torch
    from test_lowering_paths import KitchenSink
    torch.manual_seed(0)
    m = KitchenSink().eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(8)]
    res = compile_model(m, [calib[0][0]], calib, target=target)
    prog = parse_program(res.data)
    x = torch.randn(1, 3, 8, 8, generator=g).numpy()
    got = run_on_runtime(tmp_path, prog, [x], runtime_ops)[0]
    assert np.array_equal(got, run_program(prog, [x])[0])


def test_int8_io_on_runtime(tmp_path, runtime_ops):
    m = load_model("digits_cnn")
    res = compile_model(m.module, m.example_inputs, m.calibration(8), int8_io=True)
    io = res.lowered.inputs[0]
    x = m.calibration(1, 5)[0][0].numpy()
    q = np.clip(np.round(x / io.scale) + io.zero_point, -128, 127).astype(np.int8)
    got = run_on_runtime(tmp_path, res.program, [q], runtime_ops)[0]
    assert got.dtype == np.int8
    assert np.array_equal(got, run_program(res.program, [q])[0])


def test_digits_accuracy_on_runtime(tmp_path, runtime_ops):
    """The int8 digits CNN on the C runtime: same bytes as the reference for a
    slice of the held-out set, and the same predictions as PyTorch float."""
    from ptec.models.digits import digits_dataset
    m = load_model("digits_cnn")
    res = compile_model(m.module, m.example_inputs, m.calibration(32))
    _, _, xte, yte = digits_dataset()
    agree = 0
    n = 40
    for i in range(n):
        x = xte[i:i + 1]
        got = run_on_runtime(tmp_path, res.program, [x], runtime_ops)[0]
        assert np.array_equal(got, run_program(res.program, [x])[0])
        agree += int(got.argmax() == m.module(__import__("torch").from_numpy(x)).argmax())
    assert agree >= n - 2


@pytest.mark.parametrize("case", ["two_in_two_out", "batch2"])
def test_more_lowering_paths_on_runtime(tmp_path, runtime_ops, case):
    import torch
    from test_lowering_paths import Batch2, TwoInTwoOut
    torch.manual_seed(0)
    model, shapes = ((TwoInTwoOut(), [(1, 4, 8, 8), (1, 4, 8, 8)]) if case == "two_in_two_out"
                     else (Batch2(), [(2, 3, 6, 6)]))
    g = torch.Generator().manual_seed(3)
    calib = [tuple(torch.randn(s, generator=g) for s in shapes) for _ in range(8)]
    res = compile_model(model.eval(), list(calib[0]), calib, target="cortex-m33")
    x = [torch.randn(s, generator=g).numpy() for s in shapes]
    got = run_on_runtime(tmp_path, res.program, x, runtime_ops)
    want = run_program(res.program, x)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("sizes", [[1, 1, 5, 3], [2, 4, 1, 1]])
def test_pad_of_identity_order_tensor_that_counts_as_channels_last(tmp_path, runtime_ops, sizes):
    """C == 1 or H == W == 1 with an identity dim order: the kernel pads NHWC
    slots, and the reference interpreter must agree with it byte for byte."""
    from ptec.backends.cortex_m.kernels import I8
    b = ProgramBuilder()
    x = b.tensor(I8, sizes)
    pre, post = [1, 2, 0, 1], [0, 1, 3, 2]
    n, c, h, w = sizes
    out_sizes = [n + pre[0] + post[0], c + pre[3] + post[3], h + pre[1] + post[1], w + pre[2] + post[2]]
    y = b.tensor(I8, out_sizes, [0, 2, 3, 1])
    b.call("cortex_m::pad.out", input=x, pre_pad=pre, post_pad=post, pad_value=-5, out=y)
    b.set_io([x], [y])
    prog = b.build()
    xin = np.arange(np.prod(sizes), dtype=np.int8).reshape(sizes)
    got = run_on_runtime(tmp_path, prog, [xin], runtime_ops)[0]
    assert np.array_equal(got, run_program(prog, [xin])[0])


def test_repeat_gives_the_same_output_when_the_plan_reuses_the_input(tmp_path, runtime_ops):
    """The DS-CNN's float input and float output share arena offset 0: each
    run must start from the given input again, not from what the last run
    left there."""
    prog, _ = ds_cnn_program(seed=4, target="cortex-m33")
    plan = prog.plan()
    inp, out = plan.values[plan.inputs[0]].val, plan.values[plan.outputs[0]].val
    assert inp.allocation_info.memory_offset_low == out.allocation_info.memory_offset_low
    path = tmp_path / "ds.pte"
    path.write_bytes(serialize_program(prog))
    outs = []
    for repeat in ("1", "3"):
        d = tmp_path / f"out{repeat}"
        r = subprocess.run([host_runtime.ptec_run_path(), str(path), "--input", "ones", "--repeat", repeat,
                            "--output-dir", str(d)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs.append((d / "output0.bin").read_bytes())
    assert outs[0] == outs[1]
