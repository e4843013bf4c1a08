"""Issue 15's accuracy check on inputs the calibration never saw.

The recurrent and transformer tests check cosine >= 0.99 against PyTorch
float on one calibration input. This file draws 32 fresh inputs from the
same distribution (another seed) and checks every one of them, on a
program calibrated with 64 samples: each cosine >= 0.99, and the median
input's worst output within 2.5 output quantization steps. With 16 calibration samples
one fresh input in 32 can leave the hidden ranges the samples set and fall
to about 0.975 (a GRU's, measured): the ranges are min/max of what the
calibration saw, so calibrate with enough samples to cover the inputs the
model will meet (docs/aot.md, "Calibration data"). The oracle is PyTorch's
float model; the numbers are the program's as the C runtime computes them
(the Python reference interpreter, which the recurrent and transformer
tests hold byte-equal to the runtime; one input is checked here too)."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
import test_recurrent
import test_transformer

CALIBRATION, FRESH = 64, 32

MODELS = {
    "gru_spotter": (test_recurrent.CASES["gru"], (1, test_recurrent.STEPS, test_recurrent.FEATURES), 2.5),
    "lstm_spotter": (test_recurrent.CASES["lstm"], (1, test_recurrent.STEPS, test_recurrent.FEATURES), 2.5),
    "transformer_post_norm": (test_transformer.CASES["post_norm_relu"], (1, 16, 10), 2.5),
    "transformer_pre_norm_gelu": (test_transformer.CASES["pre_norm_gelu"], (1, 16, 10), 2.5),
}


def _draw(seed, count, shape):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) for _ in range(count)]


@pytest.mark.parametrize("name", list(MODELS))
def test_fresh_inputs_match_float(name, tmp_path):
    make, shape, bound = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    calib = [(x,) for x in _draw(0, CALIBRATION, shape)]
    res = compile_model(model, [calib[0][0]], calib)
    prog = parse_program(res.data)
    fresh = _draw(99, FRESH, shape)
    with torch.no_grad():
        refs = [model(x).numpy().astype(np.float64).ravel() for x in fresh]
    gots = [np.asarray(run_program(prog, [x.numpy()])[0], np.float64).ravel() for x in fresh]
    host = host_runtime.run(prog, res.data, [fresh[0].numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(host, np.float64).ravel().tobytes() == gots[0].tobytes()
    # one step of the program's output grid: its spread over the calibration outputs / 255
    with torch.no_grad():
        cal = np.concatenate([model(c[0]).numpy().ravel() for c in calib])
    step = (max(cal.max(), 0) - min(cal.min(), 0)) / 255
    # the outputs vary from input to input by many steps: a bound on a
    # near-constant output would prove nothing
    assert np.std(np.stack(refs), axis=0).max() > 8 * step
    cosines = [float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) for g, r in zip(gots, refs)]
    steps = sorted(float(np.abs(g - r).max()) / step for g, r in zip(gots, refs))
    assert min(cosines) >= 0.99, (name, sorted(cosines)[:3])
    # the typical fresh input is as close as a calibration input; the few
    # that leave the calibrated ranges (a transformer's worst of 32: about
    # 13 steps, measured) are what the cosine above bounds
    assert steps[len(steps) // 2] <= bound, (name, steps)
