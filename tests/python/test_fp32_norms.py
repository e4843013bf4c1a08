"""Vector norms of a negative order in fp32 (ptec.capture_fp32_norms,
issue 15): torch.linalg.vector_norm / torch.linalg.norm with a finite
ord < 0. Oracle: torch in float64 on the values the program's steps read
(the float input itself, or the dequantized int8 value before it)."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs

CASES = {
    "vector_norm(x, -1, dim=-1)": lambda x: torch.linalg.vector_norm(x, -1, dim=-1),
    "vector_norm(x, -1.5, dim=1, keepdim=True)": lambda x: torch.linalg.vector_norm(x, -1.5, dim=1, keepdim=True),
    "vector_norm(x, -2) whole": lambda x: torch.linalg.vector_norm(x, -2),
    "vector_norm(x, ord=-0.5, dim=(0, 2))": lambda x: torch.linalg.vector_norm(x, ord=-0.5, dim=(0, 2)),
    "linalg.norm(x, -1, 1)": lambda x: torch.linalg.norm(x, -1, 1),
    "linalg.norm(x, ord=-3, dim=-1, keepdim=True)": lambda x: torch.linalg.norm(x, ord=-3, dim=-1, keepdim=True),
    "Tensor.norm(-1, dim=-1)": lambda x: x.norm(-1, dim=-1),
    "torch.norm(x, -1.5, 2, keepdim=True)": lambda x: torch.norm(x, -1.5, 2, keepdim=True),
    "Tensor.norm(p=-2, dim=(1, 2))": lambda x: x.norm(p=-2, dim=(1, 2)),
}


def _compile(fn, lo, hi, shape=(2, 4, 8)):
    calibration = inputs(shape, lo, hi)
    model = Call(fn).eval()
    return model, calibration, compile_model(model, [calibration[0][0]], calibration)


def _run(res, x, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0],
                      np.float64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fp32_within_rounding_of_float64(name, tmp_path):
    """Input values of both signs, from 0.01 to 3 in size: the norm within 2e-6 relative of float64."""
    fn = CASES[name]
    model, calibration, res = _compile(fn, -3.0, 3.0)
    assert any("aten::pow.Tensor_Tensor_out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    wants = []
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        want = fn(x.double()).numpy()
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max(), (got, want)
        wants.append(want)
    assert np.max(wants) > 1.5 * np.min(wants)          # values that vary: a wrong sum or power shows


def test_zero_element_gives_zero_as_torch(tmp_path):
    """An element 0: |0|^p is inf, the sum inf, its 1/p power 0 -- torch's value, row by row."""
    fn = CASES["vector_norm(x, -1, dim=-1)"]
    _, _, res = _compile(fn, 0.5, 3.0)
    x = inputs((2, 4, 8), 0.5, 3.0, seed=3)[0][0]
    x[0, 1, 5] = 0.0
    x[1, 3, 0] = 0.0
    got, want = _run(res, x, tmp_path), fn(x.double()).numpy()
    assert got[0, 1] == 0.0 and got[1, 3] == 0.0 and want[0, 1] == 0.0
    mask = want != 0
    assert np.abs(got[mask] - want[mask]).max() <= 2e-6 * want.max()


def test_after_an_int8_step_is_torch_of_the_dequantized_value(tmp_path):
    """sigmoid (an int8 LUT) then the norm: within 2e-6 relative of float64 torch's norm of the
    sigmoid's int8 output as the program dequantizes it (its grid from the compiled graph)."""
    fn = lambda x: torch.linalg.vector_norm(torch.sigmoid(x), -1.5, dim=-1)    # noqa: E731
    model, calibration, res = _compile(fn, -3.0, 3.0)
    sig = next(n for n in res.graph.nodes if n.op == "sigmoid")
    s, z = sig.qparams
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        xs = res.graph.node(res.graph.inputs[0]).qparams
        xq = (torch.clamp(torch.round(x.double() / xs[0]) + xs[1], -128, 127) - xs[1]) * xs[0]
        y = torch.sigmoid(xq)
        yq = (torch.clamp(torch.round(y / s) + z, -128, 127) - z) * s
        want = torch.linalg.vector_norm(yq, -1.5, dim=-1).numpy()
        assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max(), (got, want)


def test_positive_order_keeps_its_int8_path():
    _, _, res = _compile(lambda x: torch.linalg.vector_norm(x, 2, dim=-1), -3.0, 3.0)
    assert not res.lowered.fallbacks


def test_a_dtype_is_refused_in_one_line():
    with pytest.raises(CompileError) as e:
        _compile(lambda x: torch.linalg.vector_norm(x, -1, dim=-1, dtype=torch.float64).float(), -3.0, 3.0)
    msg = str(e.value)
    assert "\n" not in msg and "vector_norm" in msg, msg
