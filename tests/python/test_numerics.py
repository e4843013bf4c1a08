"""Compiled programs run through the numpy reference kernels (ptec.interpreter):
int8 results stay close to PyTorch float, and the digits CNN keeps its accuracy."""
import numpy as np
import pytest

from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.models import ZOO, load_model
from ptec.pte import parse_program, serialize_program
from ptec.pte.builders import ds_cnn_program
from ptec.quantize import simulate


@pytest.fixture(scope="module")
def compiled():
    out = {}
    for name in ZOO:
        m = load_model(name)
        out[name] = (m, compile_model(m.module, m.example_inputs, m.calibration(8)))
    return out


@pytest.mark.parametrize("name", list(ZOO))
def test_int8_program_close_to_float(compiled, name):
    m, res = compiled[name]
    prog = parse_program(res.data)          # what is on disk, not the in-memory object
    for x in m.calibration(3, 11):
        got = run_program(prog, [x[0].numpy()])[0]
        ref = m.module(*x).detach().numpy()
        sim = simulate(res.graph, x)[0].numpy()
        span = np.abs(ref).max() + 1e-6
        assert got.shape == ref.shape
        assert np.abs(got - ref).max() <= 0.06 * span, name
        # the lowered integer program and the fake-quant model agree closely
        assert np.abs(got - sim).max() <= 0.03 * span, name


def test_digits_int8_accuracy(compiled):
    from ptec.models.digits import accuracy, digits_dataset
    m, res = compiled["digits_cnn"]
    _, _, xte, yte = digits_dataset()
    prog = parse_program(res.data)
    int8 = np.array([run_program(prog, [xte[i:i + 1]])[0][0] for i in range(len(xte))])
    acc_int8 = float((int8.argmax(1) == yte).mean())
    acc_float = accuracy(m.module, xte, yte)
    print(f"digits: float {acc_float:.4f}, int8 program {acc_int8:.4f}")
    assert acc_int8 >= acc_float - 0.02


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_ds_cnn_builder_program_runs(target):
    p, _ = ds_cnn_program(seed=2, target=target)
    x = np.random.default_rng(0).normal(size=(1, 1, 49, 10)).astype(np.float32)
    out = run_program(parse_program(serialize_program(p)), [x])[0]
    assert out.shape == (1, 12) and np.isfinite(out).all()


def test_targets_give_identical_integers(compiled):
    """kernel_sum (M55) and bias (M33) forms of linear give the same result."""
    m, _ = compiled["fc_autoencoder"]
    calib = m.calibration(4)
    a = compile_model(m.module, m.example_inputs, calib, target="cortex-m55")
    b = compile_model(m.module, m.example_inputs, calib, target="cortex-m33")
    x = m.calibration(1, 3)[0][0].numpy()
    assert np.array_equal(run_program(a.program, [x])[0], run_program(b.program, [x])[0])
