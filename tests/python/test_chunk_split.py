"""chunk and split (issue 15, item 1: the front end; item 4: slicing on any
dimension): each piece a model takes from `x.chunk(n, dim)` or
`torch.split(x, sizes, dim)` becomes a slice, which runs on the int8 values
(a copy of bytes on the input's grid) through upstream's slice_copy. Over the
last dim of a 3-D tensor (a q/k/v split) and over the channels of a 4-D
one, byte-identical to the reference on the host and on the emulated M55
and M33."""
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference, host_steps_from_float
from ptec.compiler import compile_model


class Pieces(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(12, 24)
        self.conv = nn.Conv2d(4, 6, 3, padding=1)
        self.out = nn.Linear(12 + 16, 5)

    def forward(self, x, img):
        q, k = self.qkv(x).chunk(2, dim=-1)
        head, tail = torch.split(x, [4, 8], dim=-1)
        seq = q * k + torch.cat([tail, head], dim=-1)              # [1, 4, 12]
        a, b, c = self.conv(img).split(2, dim=1)                    # channels of [1, 6, 4, 4]
        mixed = torch.flatten(a * b + c, 1)                         # [1, 32]
        return self.out(torch.cat([seq.mean(dim=1), torch.split(mixed, 16, dim=1)[0]], dim=1))


def samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 4, 12, generator=g), torch.randn(1, 4, 4, 4, generator=g)) for _ in range(n)]


class Single(nn.Module):
    """The pieces' model on its first input only (the board runner feeds one)."""
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(12, 24)

    def forward(self, x):
        q, k = self.qkv(x).chunk(2, dim=-1)
        head, mid, tail = torch.split(x, [4, 4, 4], dim=-1)
        return q * k + torch.cat([tail, mid, head], dim=-1)


@pytest.fixture(scope="module")
def single():
    torch.manual_seed(2)
    model = Single().eval()
    calib = [(s[0],) for s in samples(12, 0)]
    return model, compile_model(model, [calib[0][0]], calib)


def test_pieces_are_int8_slices(single):
    _, res = single
    slices = [p for p in res.lowered.placements if p.op == "slice"]
    assert len(slices) == 5 and {p.backend for p in slices} == {"cortex_m"}, slices
    assert "aten::slice_copy.Tensor_out" in res.lowered.operators
    assert not [p for p in res.lowered.placements if p.op == "unsupported"]


def test_host_equals_reference_and_float(single, tmp_path):
    model, res = single
    worst = host_steps_from_float(model, res, [(s[0],) for s in samples(8, 3)], tmp_path)
    assert worst <= 12.0, worst      # measured 9.18: q * k multiplies two int8 roundings


def test_four_d_channel_split_compiles_and_matches(tmp_path):
    """Slices over the channels of a channels-last activation, with two inputs."""
    from ptec import host_runtime
    from ptec.interpreter import run_program
    from ptec.pte import parse_program
    torch.manual_seed(4)
    model = Pieces().eval()
    res = compile_model(model, list(samples(1, 0)[0]), samples(12, 0))
    assert not [p for p in res.lowered.placements if p.op == "unsupported"]
    prog = parse_program(res.data)
    for x, img in samples(4, 6):
        want = run_program(prog, [x.numpy(), img.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy(), img.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(single, tmp_path, target):
    model, _ = single
    calib = [(s[0],) for s in samples(12, 0)]
    res = compile_model(model, [calib[0][0]], calib, target=target)
    board_matches_reference(res.data, samples(1, 9)[0][0].numpy(), target, tmp_path)


class Unbound(nn.Module):
    """unbind (issue 15, item 1): each element a one-wide slice, then its dim dropped."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 24)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        a, b, c = self.fc(x).reshape(1, 3, 8).unbind(1)
        rows = torch.unbind(x, dim=0)
        return self.out(a * b + c + rows[0])


@pytest.fixture(scope="module")
def unbound():
    torch.manual_seed(4)
    model = Unbound().eval()
    calib = [(torch.randn(1, 8, generator=torch.Generator().manual_seed(s)),) for s in range(12)]
    return model, compile_model(model, [calib[0][0]], calib), calib


def test_unbind_pieces_are_int8_slices(unbound):
    _, res, _ = unbound
    slices = [p for p in res.lowered.placements if p.op == "slice"]
    assert len(slices) == 4 and {p.backend for p in slices} == {"cortex_m"}, res.lowered.placements


def test_unbind_host_equals_reference_and_float(unbound, tmp_path):
    model, res, calib = unbound
    worst = host_steps_from_float(model, res, calib[:6], tmp_path)
    assert worst <= 6.0, worst


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_unbind_boards_equal_reference(unbound, tmp_path, target):
    model, _, calib = unbound
    board_matches_reference(compile_model(model, [calib[0][0]], calib, target=target).data,
                            calib[7][0].numpy(), target, tmp_path)
