"""torch.isin with test elements computed in the program, or elements a
number (capture_isin): one broadcast `eq` reduced by any.

What a user gets: torch's isin of the values ptec holds, exactly. An int8
value is its grid's rounding of the model's, so where the model's values
are themselves on their grids (whole numbers on a whole-number grid,
int64 indices, slices of one value) the answer is torch's on the float
input, exactly; on arbitrary floats the oracle is torch run on the values
ptec holds (the program's extra outputs), and every element torch finds in
the test values ptec finds too (equal floats round to one code). The
oracle is PyTorch; ptec-run is checked byte for byte against the reference
interpreter on every sample."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference, cli_refusal
from ptec import host_runtime
from ptec.capture_isin import MAX_PAIRS
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator
from ptec.pte import parse_program
from test_elementwise_math import nan_source
from model_checks import Call
from test_function_coverage import inputs

S3 = (1, 4, 8)


def outputs(model, tmp_path, shape=S3, n=8, fallbacks=False):
    """(x, ptec-run's outputs) for n calibration samples in [-3, 3]."""
    calibration = inputs(shape, -3.0, 3.0, n)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert bool(res.lowered.fallbacks) == fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    runs = []
    for (x,) in calibration:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        for g, w in zip(got, want):
            assert np.asarray(g).tobytes() == np.asarray(w).astype(np.asarray(g).dtype).tobytes(), \
                "ptec-run is not the reference interpreter"
        runs.append((x, got))
    return res, runs


# values on their grids: torch's answer on the float input, exactly (0 output steps)
EXACT = {
    "x.round() in x.round()[0, 0] (a 0-d test)": lambda x: torch.isin(x.round(), x.round()[0, 0]),
    "x.round() in (x * 0.5).round()[0, :3], invert (two grids)":
        lambda x: torch.isin(x.round(), (x * 0.5).round()[0, :3], invert=True),
    "x.floor() in x.ceil()[0, 1:3] (a 2-D test)": lambda x: torch.isin(x.floor(), x.ceil()[0, 1:3]),
    "assume_unique (argsorts: unique values)":
        lambda x: torch.isin(x.argsort(-1)[0, 1, :3], x.argsort(-1)[0, 0, :4], assume_unique=True),
    "test_elements= keyword": lambda x: torch.isin(x.round(), test_elements=x.round()[:, 1:3, 5]),
    "argmax in argmax (int64, [1, 4] in [8])": lambda x: torch.isin(x.argmax(-1), x[0].argmax(0)),
    "argmax in argmax, invert": lambda x: torch.isin(x.argmax(-1), x[0].argmax(0), invert=True),
    "x.round() in an argmax (float32 against int64)": lambda x: torch.isin(x.round(), x.argmax(-1)),
    "an argmax in x.round() (int64 against float32), invert":
        lambda x: torch.isin(x[0].argmax(0), x.round()[0, 0], invert=True),
    "constant float elements in x.round()[0, 0]": lambda x: torch.isin(torch.arange(8.0) - 3, x.round()[0, 0]),
    "constant int64 elements in an argmax": lambda x: torch.isin(torch.arange(8).reshape(2, 4), x.argmax(-1)),
    "4-D elements in a 3-D test": lambda x: torch.isin(x.round().reshape(1, 2, 2, 8), x.round()[:, 1:3]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_isin_is_torchs_on_values_on_their_grids(name, tmp_path):
    fn = EXACT[name]
    _, runs = outputs(Call(lambda x: fn(x).float()).eval(), tmp_path)
    seen = set()
    for x, got in runs:
        with torch.no_grad():
            want = fn(x)
        assert want.dtype == torch.bool and got[0].shape == tuple(want.shape)
        assert np.array_equal(got[0], want.float().numpy()), (x, got[0], want)
        seen |= set(want.flatten().tolist())
    assert seen == {False, True}, "the samples should give both answers"


def test_held_values_one_grid(tmp_path):
    """isin(a, a[0, :2]) of arbitrary floats: torch's isin of the int8
    values ptec holds (output 1), exactly; what torch finds on the floats
    ptec finds too, and it finds more where two floats round to one code."""
    fn = lambda x: torch.isin(x * 1.5, (x * 1.5)[0, :2])          # noqa: E731
    _, runs = outputs(Call(lambda x: (fn(x).float(), x * 1.5)).eval(), tmp_path)
    more = 0
    for x, (got, held) in runs:
        held = torch.from_numpy(held.copy())
        assert np.array_equal(got, torch.isin(held, held[0, :2]).float().numpy())
        with torch.no_grad():
            on_floats = fn(x).numpy()
        assert (got[on_floats] == 1.0).all()
        more += int(got.sum() - on_floats.sum())
    assert more > 0, "rounding onto the grid should make some unequal floats equal"


def test_held_values_two_grids(tmp_path):
    """a and b on two grids: equality of the dequantized values, torch's
    isin of the values ptec holds (outputs 1 and 2), invert too."""
    def fn(x):
        a, b = torch.tanh(x) * 2.0, (x[0, 1:3, :3] * 0.75).round() * 0.5
        return torch.isin(a, b).float(), torch.isin(b, a, invert=True).float(), a, b

    _, runs = outputs(Call(lambda x: fn(x)).eval(), tmp_path)
    for x, (found, missing, a, b) in runs:
        a, b = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
        assert np.array_equal(found, torch.isin(a, b).float().numpy())
        assert np.array_equal(missing, torch.isin(b, a, invert=True).float().numpy())


def test_nan(tmp_path):
    """An fp32 layer's NaN (and inf): against constant values (x == v in
    float32) NaN is in nothing, inf in what holds inf, as torch's; test
    values computed in the program are int8 (the broadcast views are int8
    kernels), which hold no NaN: the quantize kernel gives NaN the zero
    point's code, 0.0, which an element 0 would then equal, so a NaN source
    whose 0 changes the calibration's answers is refused in one line."""
    fn = lambda x: torch.isin(nan_source(x), torch.tensor([float("inf"), float("nan"), 1.0]))   # noqa: E731
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(Call(lambda x: fn(x).float()).eval(), [calibration[0][0]], calibration)
    assert any("pow" in f for f in res.lowered.fallbacks)
    x = calibration[1][0].clone()
    x[0, 0, :2] = 0.0                                   # inf there
    x[0, 1, :2] = 1.0                                   # 1 there
    with torch.no_grad():
        p, want = nan_source(x), fn(x)
    assert torch.isnan(p).sum() > 4 and torch.isinf(p).sum() == 2
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.array_equal(got, want.float().numpy())
    assert not want[torch.isnan(p)].any() and want[torch.isinf(p)].all() and want.sum() == 4
    with pytest.raises(CompileError) as e:
        compile_model(Call(lambda x: torch.isin(x.round(), nan_source(x)[0, 1:3]).float()).eval(),
                      [calibration[0][0]], calibration)
    assert "\n" not in str(e.value) and "gives NaN" in str(e.value)


NUMBERS = {
    "1.0 in x.round()[0, 0, :2]": lambda x: torch.isin(1.0, x.round()[0, 0, :2]),
    "3 in an argmax, invert": lambda x: torch.isin(3, x.argmax(-1), invert=True),
    "2.5 in an argmax (never)": lambda x: torch.isin(2.5, x.argmax(-1)) | (x[0, 0, 0] > 0),
}


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_elements_a_number(name, tmp_path):
    fn = NUMBERS[name]
    _, runs = outputs(Call(lambda x: fn(x).float()).eval(), tmp_path, n=12)
    seen = set()
    for x, (got,) in runs:
        with torch.no_grad():
            want = fn(x)
        assert got.shape == () and float(got) == float(want), (x, got, want)
        seen.add(bool(want))
    assert seen == {False, True}


def test_too_many_pairs_is_refused_in_one_line(tmp_path):
    x = torch.rand(1, 64, 64)
    m = MAX_PAIRS // x.numel() + 1                  # 4096 elements against m values: just over MAX_PAIRS
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(lambda x: torch.isin(x, x.reshape(-1)[:m]).float()).eval(), [x], [(x,)])
    assert "\n" not in str(e.value) and "isin (torch.isin)" in str(e.value) \
        and f"{4096 * m} pairs, more than ptec's {MAX_PAIRS}" in str(e.value)
    compile_model(Call(lambda x: torch.isin(x, x.reshape(-1)[:m - 1]).float()).eval(), [x], [(x,)])   # at it: runs
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return torch.isin(x, x[0, :65]).float()\n"
                       "def model():\n"
                       "    return M(), (torch.rand(1, 64, 64),)\n")
    assert "torch.isin" in line and "pairs" in line, line


def test_int32_values_stay_refused_by_name():
    x = torch.rand(1, 4, 8)
    with pytest.raises(CompileError) as e:
        compile_model(Call(lambda x: torch.isin(x.int(), x[0, 0].int()).float()).eval(), [x], [(x,)])
    assert "\n" not in str(e.value) and "isin (torch.isin)" in str(e.value)


def test_on_the_m55(tmp_path):
    model = Call(lambda x: torch.isin(x.round(), x.argmax(-1), invert=True).float()).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration, target="cortex-m55")
    assert not res.lowered.fallbacks
    board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), "cortex-m55", tmp_path)
