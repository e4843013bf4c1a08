"""nn.PixelShuffle and nn.PixelUnshuffle (F.pixel_shuffle / F.pixel_unshuffle),
from the refused list (issue 15): the portable kernels
aten::pixel_shuffle.out and aten::pixel_unshuffle.out move elements of any
dtype and dim order, so a quantized super-resolution net shuffles its int8
values on the input's grid. The numpy reference (a reshape and a transpose)
is checked against torch; the kernels against torch in both dim orders and
dtypes, and refuse bad sizes; a small net runs byte-identical to the
reference on the host and the emulated M55 and M33."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import ScalarType, serialize_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.reference.portable import pixel_shuffle
from runtime_util import run_program

CHANNELS_LAST = [0, 2, 3, 1]


class SuperRes(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.PixelUnshuffle(2)
        self.body = nn.Sequential(nn.Conv2d(12, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 48, 3, padding=1))
        self.up = nn.PixelShuffle(4)

    def forward(self, x):
        return F.pixel_shuffle(self.up(self.body(self.down(x))), 1)


def images(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 3, 8, 8, generator=g) * 2 - 1,) for _ in range(n)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    model = SuperRes().eval()
    return model, compile_model(model, [images(1, 0)[0][0]], images(8, 0))


@pytest.mark.parametrize("shape,r", [((2, 12, 3, 5), 2), ((1, 27, 2, 2), 3), ((1, 4, 1, 1), 1)])
def test_reference_is_torch(shape, r):
    x = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
    y = F.pixel_shuffle(x, r)
    assert np.array_equal(pixel_shuffle(x.numpy(), r), y.numpy())
    assert np.array_equal(pixel_shuffle(y.numpy(), r, unshuffle=True), F.pixel_unshuffle(y, r).numpy())


@pytest.mark.parametrize("unshuffle", [False, True])
@pytest.mark.parametrize("dtype,order", [(np.float32, None), (np.int8, CHANNELS_LAST), (np.int8, None)])
def test_kernels(unshuffle, dtype, order):
    shape = (2, 3, 6, 4) if unshuffle else (2, 12, 3, 2)
    x = (np.random.default_rng(5).standard_normal(shape) * 50).astype(dtype)
    t = torch.from_numpy(x.astype(np.float32))
    want = (F.pixel_unshuffle(t, 2) if unshuffle else F.pixel_shuffle(t, 2)).numpy().astype(dtype)
    st = ScalarType.FLOAT if dtype == np.float32 else ScalarType.CHAR
    b = ProgramBuilder()
    xi, y = b.tensor(st, list(shape), order), b.tensor(st, list(want.shape), order)
    if unshuffle:
        b.call("aten::pixel_unshuffle.out", self=xi, downscale_factor=2, out=y)
    else:
        b.call("aten::pixel_shuffle.out", self=xi, upscale_factor=2, out=y)
    b.set_io([xi], [y])
    prog = b.build()
    got = host_runtime.run(prog, serialize_program(prog), [x])[0]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("factor,out_shape,message", [(3, (1, 1, 4, 4), "the sizes are not"),
                                                      (0, (1, 4, 2, 2), "the factor must be 1 to 256")])
def test_kernel_refuses_bad_arguments(tmp_path, factor, out_shape, message):
    b = ProgramBuilder()
    xi, y = b.tensor(ScalarType.FLOAT, [1, 4, 2, 2]), b.tensor(ScalarType.FLOAT, list(out_shape))
    b.call("aten::pixel_shuffle.out", self=xi, upscale_factor=factor, out=y)
    b.set_io([xi], [y])
    proc, _ = run_program(b.build(), [np.zeros((1, 4, 2, 2), np.float32)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


def test_shuffles_stay_int8(compiled):
    _, res = compiled
    placed = [p.backend for p in res.lowered.placements if p.op == "pixel_shuffle"]
    assert placed == ["cortex_m"] * 3, res.lowered.placements
    assert {"aten::pixel_shuffle.out", "aten::pixel_unshuffle.out"} <= set(res.lowered.operators)


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    worst = host_steps_from_float(model, res, images(6, 4), tmp_path)
    assert worst <= 6.0, worst


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    model, _ = compiled
    board_matches_reference(compile_model(model, [images(1, 0)[0][0]], images(8, 0), target=target).data,
                            images(1, 9)[0][0].numpy(), target, tmp_path)
