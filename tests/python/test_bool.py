"""Bool tensors (issue 15): comparisons of int8 values, logical ops, where
and masked_fill on a computed condition, bool program outputs and casts.

Every program's host bytes are the numpy reference interpreter's. The
oracle for a comparison is PyTorch's own comparison of the dequantized
values: the inputs are put exactly on their int8 grid (every code, or
every pair of codes), so the values the program compares are the float32
tensors given to torch, and the bool results must be equal, element for
element, including ties and equality. where / masked_fill are within a
bound in output steps of PyTorch float."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call


class Call2(Call):
    def forward(self, x, y):
        return self.fn(x, y)


class Threshold(torch.nn.Module):
    """torch.<kind>(x, c) for a number c the module holds."""

    def __init__(self, kind, c):
        super().__init__()
        self.op, self.c = getattr(torch, kind), c

    def forward(self, x):
        return self.op(x, self.c)


def on_grid(codes, scale, zp):
    """The float32 values the codes stand for: (q - zp) * scale in float32,
    as torch dequantizes (computed here with torch, not ptec)."""
    q = torch.as_tensor(np.array(codes), dtype=torch.int32)
    return (q - zp).to(torch.float32) * torch.tensor(scale, dtype=torch.float32)


def run_both(res, inputs, tmp_path):
    prog = parse_program(res.data)
    arrays = [x.numpy() for x in inputs]
    want = run_program(prog, arrays)
    got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()
    return got


def grid_of(res, k=0):
    return res.graph.node(res.graph.inputs[k]).qparams


ALL_CODES = np.arange(-128, 128).reshape(1, 4, 8, 8)


def compiled_scalar_comparison(fn, int8_io=False):
    g = torch.Generator().manual_seed(1)
    calibration = [(torch.randn(1, 4, 8, 8, generator=g) * 1.5,) for _ in range(6)]
    model = fn if isinstance(fn, torch.nn.Module) else Call(fn)
    return compile_model(model.eval(), [calibration[0][0]], calibration, int8_io=int8_io)


def program_input(codes, grid, int8_io):
    """(what the program is given, the float32 values it stands for): the
    int8 codes themselves (int8_io: the comparison reads int8 codes), or
    their float values (a float input: the comparison reads the floats)."""
    x = on_grid(codes, *grid)
    return (torch.as_tensor(np.asarray(codes), dtype=torch.int8) if int8_io else x), x


def thresholds(scale, zp):
    """Numbers that test the threshold's rounding: grid values themselves
    (equality), values a hair above and below them, half-way points, a
    float64 that rounds to a grid value in float32, values outside the
    grid's range, infinity and NaN."""
    d = on_grid(np.arange(-128, 128), scale, zp).numpy().astype(np.float64)
    picks = [d[0], d[5], d[127 - 0], d[128], d[200], d[255]]
    out = []
    for v in picks:
        out += [v, np.nextafter(np.float32(v), np.float32(np.inf)).item(),
                np.nextafter(np.float32(v), np.float32(-np.inf)).item(), v + scale / 2, v + 1e-12]
    return out + [d[0] - 10 * scale, d[255] + 10 * scale, float("inf"), float("-inf"), float("nan"), 0.0]


@pytest.mark.parametrize("int8_io", [True, False], ids=["int8 input", "float input"])
@pytest.mark.parametrize("kind", ["gt", "ge", "lt", "le", "eq", "ne"])
def test_number_against_int8_is_torchs_answer_on_every_code(kind, int8_io, tmp_path):
    """The threshold translated onto the integer grid at compile time gives
    torch's float32 answer for each of the 256 codes, for numbers on grid
    values, next to them, half-way, outside, infinite and NaN (with int8
    inputs the program compares codes; with float ones, the floats)."""
    op = getattr(torch, kind)
    seen = set()
    for c in thresholds(*grid_of(compiled_scalar_comparison(lambda x: x > 0))):
        res = compiled_scalar_comparison(Threshold(kind, c), int8_io)
        assert [o.dtype for o in res.lowered.outputs] == ["bool"] and not res.lowered.fallbacks
        given, x = program_input(ALL_CODES, grid_of(res), int8_io)
        got = run_both(res, [given], tmp_path)[0]
        want = op(x, c).numpy()
        assert np.array_equal(got, want), (kind, c)
        seen.add((bool(want.any()), bool(want.all())))
    assert (True, False) in seen                 # the threshold falls inside the grid somewhere


def test_number_on_the_left_turns_the_comparison_around(tmp_path):
    res = compiled_scalar_comparison(lambda x: 0.3 < x, int8_io=True)
    given, x = program_input(ALL_CODES, grid_of(res), True)
    assert np.array_equal(run_both(res, [given], tmp_path)[0], (0.3 < x).numpy())


def two_grids(fn, same):
    """fn of two int8 inputs whose grids differ (scales about 1:3), or of
    two halves of one int8 input (one grid)."""
    g = torch.Generator().manual_seed(2)
    if same:
        calibration = [(torch.randn(1, 2, 256, 256, generator=g),) for _ in range(4)]
        model = Call(lambda x: fn(x[:, 0], x[:, 1]))
    else:
        calibration = [(torch.randn(256, 256, generator=g), torch.randn(256, 256, generator=g) * 3.0)
                       for _ in range(4)]
        model = Call2(fn)
    return compile_model(model.eval(), list(calibration[0]), calibration, int8_io=True)


@pytest.mark.parametrize("kind", ["gt", "ge", "lt", "le", "eq", "ne"])
@pytest.mark.parametrize("same", [False, True], ids=["two grids", "one grid"])
def test_two_int8_tensors_compare_as_torch_on_every_pair_of_codes(kind, same, tmp_path):
    """Every pair of codes (256 x 256): on different grids both sides are
    dequantized and compared in float32, on one grid the codes compare;
    either way torch's answer on the dequantized values, equality included."""
    op = getattr(torch, kind)
    res = two_grids(op, same)
    assert not res.lowered.fallbacks
    a_codes, b_codes = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    if same:
        codes = np.stack([a_codes, b_codes])[None]
        x = on_grid(codes, *grid_of(res))
        a, b = x[:, 0], x[:, 1]
        inputs = [torch.as_tensor(codes, dtype=torch.int8)]
    else:
        (sa, za), (sb, zb) = grid_of(res, 0), grid_of(res, 1)
        assert sa != sb
        a, b = on_grid(a_codes, sa, za), on_grid(b_codes, sb, zb)
        inputs = [torch.as_tensor(c, dtype=torch.int8) for c in (a_codes, b_codes)]
    got = run_both(res, inputs, tmp_path)[0]
    want = op(a, b).numpy()
    assert np.array_equal(got, want)
    assert want.any() and not want.all()


LOGICAL = {
    "and": lambda x: (x > 0) & (x < 1.0),
    "or": lambda x: torch.logical_or(x < -1.0, x >= 1.0),
    "xor": lambda x: (x > 0) ^ (x.abs() > 0.5),
    "not": lambda x: ~(x > 0.25),
    "logical_not": lambda x: torch.logical_not(x <= -0.5),
    "float truth": lambda x: torch.logical_and(x, x > -1.0),
    "bool == bool": lambda x: (x > 0) == (x > 0.5),
    "constant mask": lambda x: (x > 0) & (torch.arange(8) > 4),
    "methods": lambda x: x.lt(-0.5) | torch.greater_equal(x, 1.0),
}


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical_ops_of_comparisons_are_torchs(name, tmp_path):
    fn = LOGICAL[name]
    res = compiled_scalar_comparison(fn, int8_io=True)
    assert [o.dtype for o in res.lowered.outputs] == ["bool"] and not res.lowered.fallbacks
    given, x = program_input(ALL_CODES, grid_of(res), True)
    got = run_both(res, [given], tmp_path)[0]
    want = fn(x).numpy()
    assert np.array_equal(got, want) and want.any() and not want.all()


SELECT = {
    "where leaky": lambda x: torch.where(x > 0, x, x * 0.1),
    "where numbers": lambda x: torch.where(x.abs() < 1.0, 0.25, -0.5),
    "where broadcast": lambda x: torch.where(x[:, :1] > 0.0, x, -x),
    "masked_fill": lambda x: x.masked_fill(torch.sigmoid(x) > 0.7, 0.0),
    "masked_fill and": lambda x: x.masked_fill((x > -0.5) & (x < 0.5), 2.0),
    "mask times x": lambda x: (x > 0).float() * x,
}


def select_samples(n, seed, shape=(1, 4, 6, 6)):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g) * 1.5,) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(SELECT))
def test_where_and_masked_fill_are_within_steps_of_torch(name, tmp_path):
    """Away from the condition's edge (inputs more than two input steps from
    it, where int8 rounding cannot flip it) the output is within 1.5 output
    steps of PyTorch float; the condition varies over the inputs."""
    fn = SELECT[name]
    calibration = select_samples(8, 3)
    model = Call(fn).eval()
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    in_step = grid_of(res)[0]
    worst = 0.0
    for (x,) in calibration[:4]:           # inside the calibrated ranges: no clamping
        got = run_both(res, [x], tmp_path)[0]
        ref = fn(x).numpy()
        # inputs within two steps of a threshold may land on its other side
        # (sigmoid(x) > 0.7 where x > log(0.7 / 0.3) = 0.8473)
        edges = {"where leaky": [0.0], "where numbers": [-1.0, 1.0], "masked_fill": [0.8473],
                 "masked_fill and": [-0.5, 0.5], "mask times x": [0.0], "where broadcast": [0.0]}[name]
        decides = x[:, :1].expand_as(x) if name == "where broadcast" else x
        far = np.all([np.abs(decides.numpy() - e) > 2 * in_step for e in edges], axis=0)
        worst = max(worst, float(np.abs(got - ref)[far].max()) / step)
    assert worst <= 1.5, worst


def test_bool_casts(tmp_path):
    """`.long()` and `.int()` of a comparison are program outputs in torch's
    dtype, exact; `.float()` is a float32 0/1, here an int8 output whose
    grid holds 0 and 1 exactly."""
    fn = lambda x: ((x > 0.5).long(), (x < -0.2).int(), (x >= 0).to(torch.float32))   # noqa: E731
    res = compiled_scalar_comparison(fn, int8_io=True)
    assert [o.dtype for o in res.lowered.outputs] == ["int64", "int32", "int8"]
    given, x = program_input(ALL_CODES, grid_of(res), True)
    got = run_both(res, [given], tmp_path)
    out = res.lowered.outputs[2]              # the float 0/1 on its int8 grid: both exact
    got[2] = on_grid(got[2], out.scale, out.zero_point).numpy()
    for g, w in zip(got, fn(x)):
        assert g.dtype == w.numpy().dtype and np.array_equal(g, w.numpy())


def test_integers_of_a_bool_used_as_numbers_run_in_integers(tmp_path):
    """torch adds a `.long()` of a bool in int64: so does the program
    (capture_int_math: the bools' 0 / 1 as int64, aten::add.out on them)."""
    fn = lambda x: ((x > 0).long() + (x < 1).long(), (x > 0.5).int() * 3 - 1)     # noqa: E731
    res = compiled_scalar_comparison(fn)
    assert [o.dtype for o in res.lowered.outputs] == ["int64", "int32"]
    given, x = program_input(ALL_CODES, grid_of(res), False)
    got = run_both(res, [given], tmp_path)
    for g, w in zip(got, fn(x)):
        assert g.dtype == w.numpy().dtype and np.array_equal(g, w.numpy())
    assert set(np.unique(got[0])) == {1, 2} and set(np.unique(got[1])) == {-1, 2}


def test_values_that_decide_the_shape_stay_refused_inside():
    """x[x > 0] runs as a program output, into element-wise ops
    (test_masked_select) and the layers test_selection_rows and
    test_selection_mix list; one that mixes its elements otherwise is
    refused by name."""
    with pytest.raises(Exception, match=r"operator not supported: logcumsumexp .*takes add .*length depends on the "
                       r"values") as e:
        compiled_scalar_comparison(lambda x: torch.logcumsumexp(x[x > 0] + 1.0, 0))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_bool_model_on_boards(target, tmp_path):
    """A small model with comparisons, logical ops, where and a bool output
    prints the reference interpreter's bytes on the emulated boards."""
    fn = lambda x: torch.where((x > 0) & (torch.sigmoid(x) < 0.8), x, x * 0.1) > 0.05   # noqa: E731
    res = compiled_scalar_comparison(fn)
    for (x,) in select_samples(2, 9, (1, 4, 8, 8)):
        board_matches_reference(res.data, x.numpy(), target, tmp_path)
