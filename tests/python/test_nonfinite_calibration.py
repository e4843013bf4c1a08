"""Values that are NaN or infinite on the calibration inputs (a log of a
negative, a division by zero): no int8 grid holds them, and the compiled
program used to give a number torch never gives (x / 0.0 ran as 1e-8 for
inf, log(x - 5) as 0 for NaN) without a word. Such a value is now refused
in one line naming its layer when it would be int8 and its NaN or inf
change the outputs (calibration evaluates the rest of the model again with
them replaced by finite values: a program output's always do; a value of
only infinities is refused whatever follows). A NaN that a later where
drops (log where x > 0, nan_to_num) keeps running, as torch's answer has
none.

Oracle: PyTorch's float model on the same inputs."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.pte import parse_program
from model_checks import Call


def _calibration(n=6, seed=3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 4, 8, generator=g) * 4 - 2,) for _ in range(n)]


REFUSED = {
    "x / 0.0": (lambda x: x / 0.0, "truediv"),
    "log of a negative": (lambda x: torch.log(x - 5.0), "log"),
    "log where some are negative, returned": (lambda x: torch.log(x), "log"),
    "x / 0.0 clamped (only infinities in int8)": (lambda x: (x / 0.0).clamp(max=1.0), "truediv"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_value_int8_cannot_hold_is_refused_in_one_line(name):
    fn, layer = REFUSED[name]
    cal = _calibration()
    with torch.no_grad():
        assert not torch.isfinite(fn(cal[0][0])).all()          # torch's answer holds NaN or inf
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [cal[0][0]], cal)
    message = str(e.value)
    assert "\n" not in message and layer in message and "calibration inputs" in message, message


def test_a_nan_a_where_drops_still_runs(tmp_path):
    """log(x) is NaN where x < 0 and the where keeps 0 there: torch's
    answer is finite, and so is the program's, within its bound."""
    fn = lambda x: torch.where(x > 0.5, torch.log(x), torch.zeros(1))   # noqa: E731
    cal = _calibration()
    res = compile_model(Call(fn).eval(), [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in _calibration(3, seed=9):
        x = torch.where((x - 0.5).abs() < 0.05, x + 0.1, x)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = fn(x).numpy()
        assert np.isnan(torch.log(x).numpy()).any() and np.isfinite(want).all()
        print(f"worst {np.abs(got - want).max() / step:.2f} output steps")
        # log's slope is 2 at 0.5: the input's rounding times 2 (measured 4.08)
        assert np.isfinite(got).all() and np.abs(got - want).max() <= 5.0 * step


def test_an_infinity_that_changes_the_answer_is_refused_inside():
    """masked_fill with -inf then a clamp: torch gives -1 where x < 0; an
    int8 -inf is the grid's lowest code (0 here), so the program gave 0 (a
    helper found it). The -inf elements change the outputs: refused."""
    fn = lambda x: x.masked_fill(x < 0, float("-inf")).clamp(min=-1.0)    # noqa: E731
    cal = _calibration()
    with torch.no_grad():
        assert torch.isfinite(fn(cal[0][0])).all()
    with pytest.raises(CompileError) as e:
        compile_model(Call(fn).eval(), [cal[0][0]], cal)
    assert "\n" not in str(e.value) and "masked_fill" in str(e.value) and "infinite" in str(e.value)
