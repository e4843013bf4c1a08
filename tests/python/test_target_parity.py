"""The same programs on the host (ptec-run) and on both emulated boards (the
firmware runner in QEMU): outputs must be identical byte for byte. Skipped
unless the host and cortex-m presets are built and qemu-system-arm exists."""
import importlib.util
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.writer import write_program

from runtime_util import PTEC_RUN, ROOT

RUN_QEMU = os.path.join(ROOT, "scripts", "run_qemu.sh")
TARGETS = ["cortex-m55", "cortex-m33"]

_spec = importlib.util.spec_from_file_location(
    "run_and_compare", os.path.join(ROOT, "tests", "target", "run_and_compare.py"))
run_and_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_and_compare)

rng = np.random.default_rng(11)


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


def binary(op, a, b, dtype, alpha=None, orders=(None, None, None), planned=True):
    bld = ProgramBuilder()
    x = bld.tensor(dtype, a.shape, orders[0], planned=planned)
    y = bld.tensor(dtype, b.shape, orders[1], planned=planned)
    z = bld.tensor(dtype, np.broadcast_shapes(a.shape, b.shape), orders[2], planned=planned)
    kwargs = dict(self=x, other=y, out=z)
    if op == "aten::add.out":
        kwargs["alpha"] = alpha
    bld.call(op, **kwargs)
    bld.set_io([x, y], [z])
    return bld.build(), [a, b]


def clone_to_channels_last():
    x = rng.standard_normal((1, 3, 5, 4)).astype(np.float32)
    bld = ProgramBuilder()
    a = bld.tensor(ScalarType.FLOAT, x.shape)
    b = bld.tensor(ScalarType.FLOAT, x.shape, CHANNELS_LAST)
    bld.call("dim_order_ops::_clone_dim_order.out", self=a, non_blocking=False,
             dim_order=CHANNELS_LAST, out=b)
    bld.set_io([a], [b])
    return bld.build(), [x]


def quantize_dequantize():
    scale, zp = 0.0473, -7
    x = np.concatenate([rng.standard_normal(300).astype(np.float32) * 4,
                        (np.arange(-20, 20, dtype=np.float32) + 0.5) * np.float32(scale),
                        np.array([1e9, -1e9, np.inf, -np.inf], np.float32)])
    bld = ProgramBuilder()
    a = bld.tensor(ScalarType.FLOAT, x.shape)
    q = bld.tensor(ScalarType.CHAR, x.shape)
    r = bld.tensor(ScalarType.FLOAT, x.shape)
    qp = dict(scale=scale, zero_point=zp, quant_min=-128, quant_max=127, dtype=int(ScalarType.CHAR))
    bld.call("quantized_decomposed::quantize_per_tensor.out", input=a, out=q, **qp)
    bld.call("quantized_decomposed::dequantize_per_tensor.out", input=q, out_dtype=None, out=r, **qp)
    bld.set_io([a], [q, r])
    return bld.build(), [x]


PROGRAMS = {
    "add_float_broadcast": lambda: binary("aten::add.out", rng.standard_normal((2, 3, 4)).astype(np.float32),
                                          rng.standard_normal((3, 1)).astype(np.float32),
                                          ScalarType.FLOAT, 2.5),
    "mul_int8_wraps": lambda: binary("aten::mul.out", rng.integers(-128, 128, (4, 5), dtype=np.int8),
                                     rng.integers(-128, 128, (5,), dtype=np.int8), ScalarType.CHAR),
    "add_unplanned_io": lambda: binary("aten::add.out", rng.standard_normal((3, 4)).astype(np.float32),
                                       rng.standard_normal((3, 4)).astype(np.float32),
                                       ScalarType.FLOAT, 1, planned=False),
    "clone_to_channels_last": clone_to_channels_last,
    "quantize_dequantize": quantize_dequantize,
}


@pytest.fixture(scope="module")
def available():
    if not os.path.exists(PTEC_RUN):
        pytest.skip("build the host preset first")
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm not installed")
    missing = [t for t in TARGETS if not os.path.exists(runner_elf(t))]
    if missing:
        pytest.skip(f"firmware runner not built for {', '.join(missing)} (make cross)")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_target_matches_host(available, tmp_path, name):
    program, inputs = PROGRAMS[name]()
    pte = tmp_path / f"{name}.pte"
    write_program(program, str(pte))
    raw = tmp_path / "inputs.bin"
    raw.write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in inputs))

    host_args = [PTEC_RUN, str(pte), "--output-dir", str(tmp_path / "host")]
    for i, a in enumerate(inputs):
        path = tmp_path / f"in{i}.npy"
        np.save(path, np.ascontiguousarray(a))
        host_args += ["--input", str(path)]
    host = subprocess.run(host_args, capture_output=True, text=True)
    assert host.returncode == 0, host.stderr
    want = []
    while (tmp_path / "host" / f"output{len(want)}.bin").exists():
        want.append((tmp_path / "host" / f"output{len(want)}.bin").read_bytes())
    assert want

    for target in TARGETS:
        run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model", str(pte),
                              "--input", str(raw), "--timeout", "30"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert run.returncode == 0, f"{target}:\n{run.stdout}"
        got = run_and_compare.firmware_outputs(run.stdout)
        assert got == want, f"{target} differs from the host"


def run_both(tmp_path, pte, inputs, targets):
    """ptec-run's output files, and each target's outputs; asserts equality."""
    raw = tmp_path / "inputs.bin"
    raw.write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in inputs))
    host_args = [PTEC_RUN, str(pte), "--output-dir", str(tmp_path / "host")]
    for i, a in enumerate(inputs):
        path = tmp_path / f"in{i}.npy"
        np.save(path, np.ascontiguousarray(a))
        host_args += ["--input", str(path)]
    host = subprocess.run(host_args, capture_output=True, text=True)
    assert host.returncode == 0, host.stderr
    want = []
    while (tmp_path / "host" / f"output{len(want)}.bin").exists():
        want.append((tmp_path / "host" / f"output{len(want)}.bin").read_bytes())
    assert want
    logs = {}
    for target in targets:
        run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model", str(pte),
                              "--input", str(raw), "--timeout", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert run.returncode == 0, f"{target}:\n{run.stdout}"
        assert run_and_compare.firmware_outputs(run.stdout) == want, f"{target} differs from the host"
        logs[target] = run.stdout
    return logs


@pytest.mark.parametrize("target", TARGETS)
def test_ds_cnn_matches_host(available, tmp_path, target):
    """The int8 cortex_m kernels (MVE on the M55, DSP on the M33) against the
    host's portable reference, on a DS-CNN keyword spotter."""
    from ptec.backends.cortex_m.sample_programs import ds_cnn_program

    program, _ = ds_cnn_program(seed=5, target=target)
    pte = tmp_path / "ds_cnn.pte"
    write_program(program, str(pte))
    x = np.random.default_rng(5).standard_normal((1, 1, 49, 10)).astype(np.float32)
    logs = run_both(tmp_path, pte, [x], [target])
    assert re.search(r"^inference: \d+ instructions", logs[target], re.M)


@pytest.mark.parametrize("model", ["digits_cnn", "fc_autoencoder"])
@pytest.mark.parametrize("target", TARGETS)
def test_compiled_model_matches_host(available, tmp_path, model, target):
    """The whole path: PyTorch model -> ptec compile -> .pte at the board's
    program slot -> firmware runner, against ptec-run on the host."""
    import sys

    pte = tmp_path / f"{model}.pte"
    compile_run = subprocess.run([sys.executable, "-m", "ptec", "compile", model, "--target", target,
                                  "-o", str(pte)], capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    if compile_run.returncode != 0 and "torch" in compile_run.stderr and "No module" in compile_run.stderr:
        pytest.skip("torch not available")
    assert compile_run.returncode == 0, compile_run.stderr
    shapes = {"digits_cnn": (1, 1, 8, 8), "fc_autoencoder": (1, 640)}
    x = np.random.default_rng(3).standard_normal(shapes[model]).astype(np.float32)
    run_both(tmp_path, pte, [x], [target])
