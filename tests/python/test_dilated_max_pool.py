"""Dilated max pools, 3-D clamps and BatchNorm1d run in int8 (issue 15).

cortex_m::quantized_max_pool2d has no dilation; the lowering takes the
maximum of strided slices of the -128-padded input instead, which is exact:
a max pool's output is on its input's grid, so the int8 program must give
exactly the max pool of the input as the program rounded it. The oracle
computes that in integers with torch's own pool (its padding never wins),
sharing nothing with the lowering. The new paths together also run on the
emulated boards, byte for byte the numpy reference interpreter's output."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program

POOLS = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}

# (rank of the pooled dims, input shape, kernel, stride, padding, dilation, ceil_mode)
CASES = [
    (2, (1, 3, 9, 10), 3, 1, 0, 2, False),
    (2, (1, 3, 9, 10), (2, 3), (2, 1), 1, (2, 1), True),
    (2, (1, 3, 9, 10), 2, 2, 0, 3, True),
    (2, (1, 3, 9, 10), (3, 2), (1, 3), (1, 0), (3, 2), False),
    (2, (1, 3, 9, 10), 3, 2, 1, 2, True),
    (2, (1, 3, 9, 10), (1, 3), (2, 1), 0, (1, 2), False),
    (1, (1, 3, 13), 3, 2, 1, 2, False),
    (1, (1, 3, 13), 2, 1, 0, 4, True),
    (1, (1, 3, 13), 4, 3, 2, 2, True),
    (3, (1, 2, 5, 7, 7), 2, 1, 0, (1, 2, 2), False),
    (3, (1, 2, 5, 7, 7), (2, 3, 2), (1, 1, 2), (0, 1, 1), (2, 2, 1), True),
]


class Pool(nn.Module):
    def __init__(self, dims, k, s, p, d, ceil, relu):
        super().__init__()
        self.args, self.dims, self.relu = (k, s, p, d, ceil), dims, relu

    def forward(self, x):
        k, s, p, d, ceil = self.args
        y = POOLS[self.dims](x, k, s, p, dilation=d, ceil_mode=ceil)
        return F.relu(y) if self.relu else y      # a clamp the pool takes in (fused)


def inputs(shape, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(shape, generator=g) * 6.0 - 3.0 for _ in range(n)]


def on_grid(x: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """int8 codes of x on (scale, zp), written from the rule (round, saturate)."""
    return np.clip(np.round(x / scale) + zp, -128, 127)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}d-k{c[2]}-s{c[3]}-p{c[4]}-d{c[5]}-ceil{int(c[6])}"
                                             for c in CASES])
def test_dilated_max_pool_is_the_pool_of_the_rounded_input(case, relu, tmp_path):
    dims, shape, k, s, p, d, ceil = case
    model = Pool(dims, k, s, p, d, ceil, relu).eval()
    xs = inputs(shape)
    res = compile_model(model, [xs[0]], [(x,) for x in xs])
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert "cortex_m::maximum.out" in res.lowered.operators and \
        "aten::slice_copy.Tensor_out" in res.lowered.operators, res.lowered.operators
    s_in, z_in = res.graph.node(res.graph.inputs[0]).qparams
    s_out, z_out = res.graph.node(res.graph.outputs[0]).qparams
    assert (s_out, z_out) == (s_in, z_in)             # a max pool keeps its input's grid
    prog = parse_program(res.data)
    for x in xs[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        codes = torch.from_numpy(on_grid(x.numpy(), s_in, z_in) - z_in)    # centred int8 codes, exact in float
        want = POOLS[dims](codes, k, s, p, dilation=d, ceil_mode=ceil)
        want = want.clamp(min=0) if relu else want
        assert got.shape == tuple(want.shape)
        np.testing.assert_array_equal(on_grid(got, s_out, z_out) - z_out, want.numpy())


def test_the_int16_path_leaves_a_dilated_pool_to_int8(tmp_path):
    """--a16 has no dilated int16 pool: the node runs in int8, not fp32."""
    model = Pool(2, 3, 1, 1, 2, False, False).eval()
    xs = inputs((1, 3, 9, 10))
    res = compile_model(model, [xs[0]], [(x,) for x in xs], a16=True)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert "cortex_m::maximum.out" in res.lowered.operators


class NewPaths(nn.Module):
    """The new int8 paths in one model: a lone BatchNorm1d on [N, C, L], a
    dilated max pool with a fused clamp, a padded ceil_mode dilated 2-D
    pool, and stand-alone clamps of a 3-D tensor."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.3, 0.3)

    def forward(self, x):                                            # x [1, 4, 16]
        y = F.relu6(F.max_pool1d(self.bn(x), 3, 1, 1, dilation=2))   # [1, 4, 14]
        z = F.max_pool2d(x.unsqueeze(1), (2, 3), (1, 2), 1, dilation=(2, 2), ceil_mode=True)
        w = F.hardtanh(x, -0.5, 0.8)
        return torch.cat([y.flatten(1), w.flatten(1), z.flatten(1)], 1)


def new_paths_compiled(target):
    torch.manual_seed(0)
    model = NewPaths().eval()
    xs = inputs((1, 4, 16))
    return model, xs, compile_model(model, [xs[0]], [(x,) for x in xs], target=target)


def test_new_paths_together_are_int8_and_near_float(tmp_path):
    model, xs, res = new_paths_compiled("cortex-m55")
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for x in xs[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            assert np.abs(got - model(x).numpy()).max() <= 1.5 * step     # measured 1.48 (the cat requantizes)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_new_paths_on_the_board_equal_the_reference(target, tmp_path):
    _, _, res = new_paths_compiled(target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    board_matches_reference(res.data, inputs((1, 4, 16), 1, seed=7)[0].numpy(), target, tmp_path)


@pytest.mark.parametrize("layer", [nn.ReLU6(), nn.Hardtanh(-0.5, 0.8)], ids=["relu6", "hardtanh"])
def test_a16_clamps_a_3d_tensor_in_int16(layer, tmp_path):
    """--a16 takes a clamp of any rank too (the 1x1 int16 pool of its
    [1, numel, 1, 1] view): no fp32, within half an int8 output step."""
    model = nn.Sequential(layer).eval()
    xs = inputs((1, 3, 8))
    res = compile_model(model, [xs[0]], [(x,) for x in xs], a16=True)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert "ptec::quantized_max_pool2d_a16.out" in res.lowered.operators, res.lowered.operators
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for x in xs[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad():
            assert np.abs(got - model(x).numpy()).max() <= 0.5 * step
