"""F.grid_sample of a volume on aten::grid_sampler_3d.out (src/kernels/portable/op_grid_sampler_3d.c).

The kernel: on the host, the C runtime equals the numpy reference
(ptec.reference.portable.grid_sampler_3d, which follows PyTorch's scalar
CPU code, -100 for a coordinate out of int range included) bit for bit, and
PyTorch's float F.grid_sample within a few units in the last place of the
input's largest value for trilinear (bit for bit here: PyTorch's 3-D kernel
is scalar), exactly for nearest. Halfway nearest positions round to even,
as PyTorch since 2.1 (PR 97000); the torch here may be older and round them
away from zero: the test checks which and asserts the one difference.
Hostile grids (NaN, infinities, coordinates far beyond int32) read nothing
outside the volume and give PyTorch's values. Malformed calls fail with one
line naming the argument.

Models: the grid a program input, a constant, computed in the program, or
the 5-D affine_grid of a computed theta (a volumetric spatial transformer);
grid_sample runs in fp32 between a dequantize and a quantize and compile
reports it as the fp32 layer. Bounds in output steps of PyTorch float. On
the emulated M55 and M33 the program prints the reference interpreter's
bytes."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime, interpreter
from ptec.compiler import compile_model
from ptec.pte import ScalarType, parse_program, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.upstream_rules import upstream_needs
from ptec.reference import portable as P

F32 = ScalarType.FLOAT
MODES, PADS = ["bilinear", "nearest"], ["zeros", "border", "reflection"]
KEY = "aten::grid_sampler_3d.out"
CHANNELS_LAST_3D = [0, 2, 3, 4, 1]


def program(x_shape, g_shape, mode, pad, align, order=None, st=F32, out_shape=None):
    b = ProgramBuilder()
    x, g = b.tensor(st, x_shape, order), b.tensor(st, g_shape)
    y = b.tensor(st, out_shape or [x_shape[0], x_shape[1]] + list(g_shape[1:4]), order)
    b.call(KEY, input=x, grid=g, interpolation_mode=mode, padding_mode=pad, align_corners=align, out=y)
    b.set_io([x, g], [y])
    return b.build()


def run_c_and_reference(x, g, mode, pad, align, order=None):
    prog = program(list(x.shape), list(g.shape), mode, pad, align, order)
    got = host_runtime.run(prog, serialize_program(prog), [x, g])[0]
    with np.errstate(all="ignore"):
        ref = interpreter.run_program(prog, [x, g])[0]
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32)), np.nanmax(np.abs(got.astype(np.float64) - ref))
    return got


def torch_grid_sample(x, g, mode, pad, align):
    return F.grid_sample(torch.from_numpy(x), torch.from_numpy(g), MODES[mode], PADS[pad], align).numpy()


def ulps_of_largest(got, want, x):
    """|got - want| in units in the last place of the input's largest magnitude."""
    return float(np.nanmax(np.abs(got.astype(np.float64) - want)) / np.spacing(np.abs(x).max()))


def halfway(g, x_shape, pad, align):
    """Output positions [N, Do, Ho, Wo] where some axis's source coordinate
    is a whole number plus one half (nearest's ties)."""
    with np.errstate(all="ignore"):
        v = [P._grid_source_3d(g[..., k], x_shape[4 - k], pad, align) for k in range(3)]
    return np.any([np.abs(u - np.floor(u)) == 0.5 for u in v], axis=0)


def torch_rounds_halves_to_even() -> bool:
    """PyTorch 2.1 and later (PR 97000) take a halfway 3-D nearest position
    to even; 1.13 took it away from zero. Position 2.5 on a size-5 axis."""
    x = torch.arange(1.0, 6.0).reshape(1, 1, 1, 1, 5)
    g = torch.tensor([0.2, 0.0, 0.0]).reshape(1, 1, 1, 1, 3)     # ((0.2 + 1) * 5 - 1) / 2 = 2.5
    return F.grid_sample(x, g, "nearest", "zeros", False).item() == 3.0


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", [0, 1, 2])
@pytest.mark.parametrize("mode", [0, 1])
def test_kernel_is_the_reference_and_torch(mode, pad, align):
    rng = np.random.default_rng(10 * mode + 3 * pad + align)
    worst = 0.0
    for order, dhw, out in [(None, (3, 5, 4), (2, 4, 3)), (CHANNELS_LAST_3D, (4, 2, 3), (3, 2, 5)),
                            (None, (1, 1, 4), (2, 3, 2))]:
        x = (rng.standard_normal((2, 3) + dhw) * 20).astype(np.float32)
        g = rng.uniform(-1.4, 1.4, (2,) + out + (3,)).astype(np.float32)
        got = run_c_and_reference(x, g, mode, pad, align, order)
        want = torch_grid_sample(x, g, mode, pad, align)
        assert len(np.unique(got)) >= 8                             # outputs that vary
        if mode == 1:
            assert not halfway(g, x.shape, pad, align).any() and np.array_equal(got, want)
        worst = max(worst, ulps_of_largest(got, want, x))
    assert worst <= 4, f"{worst:.1f} ulps of the largest input from torch"


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", [0, 1, 2])
def test_nearest_rounds_halves_to_even(pad, align):
    # multiples of 1/8 put unnormalized positions on exact halves (sizes 2, 4 and 5)
    x = np.arange(2 * 2 * 4 * 5, dtype=np.float32).reshape(1, 2, 2, 4, 5) + 1.0
    v = np.arange(-1.5, 1.5001, 0.125, dtype=np.float32)
    g = np.stack(np.meshgrid(v, v[::-1], v[::2], indexing="ij"), -1)[None].astype(np.float32)
    got = run_c_and_reference(x, g, 1, pad, align)
    want = torch_grid_sample(x, g, 1, pad, align)
    ties = np.broadcast_to(halfway(g, x.shape, pad, align)[:, None], got.shape)
    assert ties.sum() > 100 and np.array_equal(got[~ties], want[~ties])
    if torch_rounds_halves_to_even():
        assert np.array_equal(got, want)
    else:           # torch before 2.1: halves away from zero, so ties differ where that rounding is odd
        assert not np.array_equal(got[ties], want[ties])
    # to even: with border padding (every tap inside) each halfway axis picks an even index
    if pad == 1:
        idx = (got - 1.0).astype(np.int64) % 40
        met = 0
        for k, i in ((0, idx % 5), (1, idx // 5 % 4), (2, idx // 20)):
            with np.errstate(all="ignore"):
                u = P._grid_source_3d(g[..., k], x.shape[4 - k], pad, align)
            tie = np.broadcast_to((np.abs(u - np.floor(u)) == 0.5)[:, None], got.shape)
            assert (i[tie] % 2 == 0).all()
            met += int(tie.sum())
        assert met > 100


HOSTILE = [float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 3e9, -3e9, 2.0 ** 31, -2.0 ** 31, 1e7 + 0.5,
           -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 0.5, np.float32(np.finfo(np.float32).max),
           np.float32(np.finfo(np.float32).tiny)]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("pad", [0, 1, 2])
@pytest.mark.parametrize("mode", [0, 1])
def test_hostile_positions_read_nothing_outside(mode, pad, align):
    """Every triple of hostile coordinates: the C kernel returns the
    reference's values, and torch's (nearest: away from halfway positions,
    see above). PTEC_RUN may name a sanitizer build: under
    -fsanitize=float-cast-overflow this test fails once the kernel's
    conversion guard is dropped."""
    v = np.array(HOSTILE, np.float32)
    g = np.stack(np.meshgrid(v, v, v, indexing="ij"), -1).reshape(1, len(v), len(v), len(v), 3)
    g = np.ascontiguousarray(g[..., ::-1]).astype(np.float32)
    x = (np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(1, 2, 3, 4, 5) - 60.0) * 0.5
    got = run_c_and_reference(x, g, mode, pad, align)
    want = torch_grid_sample(x, g, mode, pad, align)
    keep = np.ones(got.shape, bool)
    if mode == 1:
        keep = np.broadcast_to(~halfway(g, x.shape, pad, align)[:, None], got.shape)
    assert np.array_equal(np.isnan(got[keep]), np.isnan(want[keep]))
    assert ulps_of_largest(np.nan_to_num(got[keep]), np.nan_to_num(want[keep]), x) <= 4
    assert len(np.unique(got)) > 8


@pytest.mark.parametrize("change,message", [
    (dict(g_shape=[1, 2, 3, 4, 2]), "grid must be [N, D_out, H_out, W_out, 3]"),
    (dict(g_shape=[2, 2, 3, 4, 3]), "grid must be [N, D_out, H_out, W_out, 3]"),
    (dict(out_shape=[1, 2, 2, 3, 5]), "grid must be [N, D_out, H_out, W_out, 3]"),
    (dict(out_shape=[1, 3, 2, 3, 4]), "out must be [N, C, D_out, H_out, W_out]"),
    (dict(mode=2), "interpolation_mode must be 0 or 1"),
    (dict(mode=-1), "interpolation_mode must be 0 or 1"),
    (dict(pad=3), "padding_mode must be 0, 1 or 2"),
    (dict(st=ScalarType.CHAR), "input, grid and out must be 5-D float"),
    (dict(x_shape=[1, 2, 3, 4], g_shape=[1, 3, 4, 3], out_shape=[1, 2, 3, 4]), "input, grid and out must be 5-D"),
    (dict(x_shape=[1, 2, 3, 0, 5]), "empty input or output"),
])
def test_malformed_calls_fail_naming_the_argument(change, message, tmp_path):
    from runtime_util import run_program
    a = dict(x_shape=[1, 2, 3, 4, 5], g_shape=[1, 2, 3, 4, 3], mode=0, pad=0, align=False, st=F32, out_shape=None)
    a.update(change)
    out_shape = a["out_shape"] or [a["x_shape"][0], a["x_shape"][1]] + a["g_shape"][1:4]
    prog = program(a["x_shape"], a["g_shape"], a["mode"], a["pad"], a["align"], None, a["st"], out_shape)
    dtype = np.int8 if a["st"] == ScalarType.CHAR else np.float32
    proc, _ = run_program(prog, [np.zeros(a["x_shape"], dtype), np.zeros(a["g_shape"], dtype)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# -- models ------------------------------------------------------------------------

class Warp3d(nn.Module):
    """An int8 Conv3d's features resampled at a grid the program takes as its second input."""

    def __init__(self, mode, pad, align):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv3d(2, 3, 3, padding=1)
        self.how = (mode, pad, align)

    def forward(self, x, grid):
        return F.grid_sample(torch.relu(self.conv(x)), grid, *self.how)


class Computed3d(nn.Module):
    """A grid computed in int8 from the input (tanh of a permuted slice), and a constant one."""

    def __init__(self, mode, pad, align):
        super().__init__()
        self.how = (mode, pad, align)
        self.register_buffer("fixed", torch.linspace(-1.3, 1.3, 3 * 4 * 3 * 3).reshape(1, 3, 4, 3, 3))

    def forward(self, x):
        grid = torch.tanh(x[:, :3].permute(0, 2, 3, 4, 1)) * 1.2
        return F.grid_sample(x, grid, *self.how) + F.grid_sample(x, self.fixed, *self.how)


class Stn3d(nn.Module):
    """A volumetric spatial transformer: theta [N, 3, 4] computed from the
    input, affine_grid of a 5-D size, grid_sample; plus affine_grid of a
    constant theta (a constant grid)."""

    def __init__(self, mode, pad, align):
        super().__init__()
        torch.manual_seed(0)
        self.loc = nn.Linear(2 * 3 * 4 * 3, 12)
        with torch.no_grad():
            self.loc.weight.mul_(0.05)
            self.loc.bias.copy_(torch.tensor([1.0, 0.1, 0.05, 0.1, -0.1, 0.9, 0.05, -0.05, 0.05, 0.1, 1.1, 0.1]))
        self.register_buffer("theta", torch.tensor([[[0.9, 0.2, 0.0, 0.1], [-0.1, 1.0, 0.1, 0.0],
                                                     [0.0, 0.1, 0.8, -0.2]]]))
        self.how = (mode, pad, align)

    def forward(self, x):
        theta = self.loc(x.flatten(1)).view(-1, 3, 4)
        grid = F.affine_grid(theta, [x.shape[0], 2, 2, 4, 3], align_corners=self.how[2])
        fixed = F.affine_grid(self.theta, [1, 2, 2, 4, 3], align_corners=self.how[2])
        return F.grid_sample(x, grid, *self.how) + F.grid_sample(x, fixed, *self.how)


def steps_from_float(model, res, samples, tmp_path) -> float:
    """ptec-run equals the reference interpreter (within one step: fp32
    kernels' float rounding may cross a quantization edge); the largest
    |ptec - torch float| in output steps."""
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for s in samples:
        arrays = [t.numpy() for t in s]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0]
        assert np.abs(got - interpreter.run_program(prog, arrays)[0]).max() <= step * 1.001
        with torch.no_grad():
            want = model(*s).numpy()
        assert want.max() - want.min() >= 16 * step
        worst = max(worst, float(np.abs(got - want).max() / step))
    return worst


def gen(seed):
    return torch.Generator().manual_seed(seed)


def warp_samples(seed, n=8):
    g = gen(seed)
    return [(torch.rand(1, 2, 3, 4, 5, generator=g) * 4 - 2, torch.rand(1, 2, 3, 4, 3, generator=g) * 2.4 - 1.2)
            for _ in range(n)]


# (mode, padding, align_corners): bound in output steps (measured in the comment)
WARPS = {("bilinear", "zeros", False): 1.5,          # 0.93
         ("bilinear", "reflection", True): 1.5,      # 0.84
         ("nearest", "border", False): 1.5}          # 1.20


@pytest.mark.parametrize("how", sorted(WARPS))
def test_volume_and_grid_inputs(how, tmp_path):
    model = Warp3d(*how).eval()
    calibration = warp_samples(1)
    res = compile_model(model, list(calibration[0]), calibration)
    assert "grid_sample (F.grid_sample): aten::grid_sampler_3d.out" in res.lowered.fallbacks
    assert [i.dtype for i in res.lowered.inputs] == ["float32", "float32"]
    # upstream's portable library has no 3-D sampler: compile says the program runs on ptec only
    assert "ptec's runtime only" in " ".join(upstream_needs(parse_program(res.data)))
    assert steps_from_float(model, res, calibration[:4], tmp_path) <= WARPS[how]


# the computed grid moves with the int8 rounding of the input it is computed from
COMPUTED = {("bilinear", "border", False): 3.0,     # 2.47
            ("bilinear", "zeros", True): 3.0}       # 2.12


@pytest.mark.parametrize("how", sorted(COMPUTED))
def test_computed_and_constant_grids(how, tmp_path):
    model = Computed3d(*how).eval()
    g = gen(2)
    calibration = [(torch.rand(1, 3, 3, 4, 3, generator=g) * 4 - 2,) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert res.lowered.fallbacks.count("grid_sample (F.grid_sample): aten::grid_sampler_3d.out") >= 1
    assert steps_from_float(model, res, calibration[:4], tmp_path) <= COMPUTED[how]


# theta's linear and affine_grid in fp32 (capture_grid.theta_in_fp32); with an int8 affine_grid,
# whose rounding moved positions by a fraction of a voxel, 1.83 and 2.07
STNS = {("bilinear", "zeros", False): 1.2,           # 0.77
        ("bilinear", "border", True): 1.2}           # 0.93


@pytest.mark.parametrize("how", sorted(STNS))
def test_volumetric_spatial_transformer(how, tmp_path):
    model = Stn3d(*how).eval()
    g = gen(3)
    calibration = [(torch.rand(1, 2, 3, 4, 3, generator=g) * 4 - 2,) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    assert res.lowered.fallbacks.count("grid_sample (F.grid_sample): aten::grid_sampler_3d.out") == 1
    assert steps_from_float(model, res, calibration[:4], tmp_path) <= STNS[how]


@pytest.mark.filterwarnings("ignore:Since version 1.3.0")   # torch on a size-1 axis with align_corners
def test_affine_grid_base_is_torchs():
    """The 5-D base grid by the identity-like theta is torch's affine_grid."""
    from ptec.capture_grid import base_grid
    theta = torch.tensor([[[0.9, 0.2, -0.1, 0.1], [-0.1, 1.0, 0.1, 0.0], [0.3, 0.1, 0.8, -0.2]]])
    for align in (False, True):
        for dhw in ([2, 4, 3], [1, 3, 5], [3, 1, 1]):
            want = F.affine_grid(theta, [1, 1] + dhw, align_corners=align).numpy()
            got = (base_grid(dhw, align) @ theta[0].numpy().T).reshape([1] + dhw + [3])
            assert np.abs(got - want).max() <= 1e-6


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_volume_warp_on_boards(target, tmp_path):
    for k, how in enumerate([("bilinear", "reflection", False), ("nearest", "zeros", True)]):
        model = Computed3d(*how).eval()
        g = gen(4)
        calibration = [(torch.rand(1, 3, 3, 4, 3, generator=g) * 4 - 2,) for _ in range(8)]
        res = compile_model(model, [calibration[0][0]], calibration, target=target)
        (tmp_path / str(k)).mkdir()
        board_matches_reference(res.data, calibration[0][0].numpy(), target, tmp_path / str(k))
