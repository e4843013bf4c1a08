"""Max pools' return_indices and max_unpool (issue 15). Each program's host
bytes are the numpy reference interpreter's; its int64 indices are torch's
exactly on inputs whose int8 codes keep the floats' order (whole numbers,
with many ties: torch's first maximum in scan order), its values and
unpooled outputs within half an output step of PyTorch float; an index
outside the unpool's plane fails the run; the emulated boards print the
reference bytes."""
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
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.pte.writer import serialize_program


class Pair(nn.Module):
    """The pool's values and its indices, both returned."""

    def __init__(self, pool):
        super().__init__()
        self.pool = pool

    def forward(self, x):
        v, i = self.pool(x)
        return v, i


def samples_2x3():
    """Fractional samples [2, 3, 3]; sliced, made contiguous again (torch's
    kernel reads _random_samples' storage as contiguous)."""
    g = torch.Generator().manual_seed(9)
    return _Contiguous(torch.rand(2, 3, 3, generator=g))


class _Contiguous:
    def __init__(self, t):
        self.t = t

    def __getitem__(self, index):
        return self.t[index].contiguous()


POOLS = {
    "MaxPool1d": (lambda: nn.MaxPool1d(3, 2, 1, return_indices=True), (2, 3, 11)),
    "MaxPool1d dilated ceil": (lambda: nn.MaxPool1d(2, dilation=2, ceil_mode=True, return_indices=True), (1, 2, 9)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2, return_indices=True), (2, 3, 6, 6)),
    "MaxPool2d padded dilated": (lambda: nn.MaxPool2d((2, 3), (1, 2), 1, dilation=(2, 1), ceil_mode=True,
                                                      return_indices=True), (1, 2, 7, 9)),
    "MaxPool3d": (lambda: nn.MaxPool3d(3, 2, 1, return_indices=True), (1, 2, 5, 5, 5)),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(4, return_indices=True), (2, 3, 10)),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d((3, 4), return_indices=True), (1, 3, 7, 9)),
    "AdaptiveMaxPool3d": (lambda: nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True), (1, 2, 5, 7, 5)),
    "FractionalMaxPool2d per batch": (lambda: nn.FractionalMaxPool2d(2, output_size=3, return_indices=True,
                                                                     _random_samples=samples_2x3()[:, :, :2]),
                                      (2, 3, 7, 7)),
    "FractionalMaxPool3d": (lambda: nn.FractionalMaxPool3d(2, output_size=(2, 3, 3), return_indices=True,
                                                           _random_samples=samples_2x3()[:1, :2]), (1, 2, 5, 6, 7)),
}


def whole_numbers(shape, n, seed):
    """Inputs in {-3, ..., 3}: many equal values in a window, and codes a
    step or more apart (the int8 order is the floats')."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(-3, 4, shape, generator=g).float(),) for _ in range(n)]


def calibration_of(shape, seed):
    """whole_numbers, one of them reaching +-3.5: the input's range then
    holds +-3 inside it (not rounded onto its clamped last code)."""
    calibration = whole_numbers(shape, 8, seed)
    calibration[0][0].view(-1)[:2] = torch.tensor([3.5, -3.5])
    return calibration


def compiled(model, calibration):
    return compile_model(model.eval(), [calibration[0][0]], calibration)


@pytest.mark.parametrize("name", sorted(POOLS))
def test_indices_are_torchs_and_values_within_their_bound(name, tmp_path):
    make, shape = POOLS[name]
    # values: the input's rounding on its own grid (half a step); a
    # fractional pool with shared samples picks windows by a one-hot conv,
    # which rounds once more onto the output's grid
    bound = 1.0 if name == "FractionalMaxPool3d" else 0.5
    model = Pair(make()).eval()
    calibration = calibration_of(shape, 0)
    res = compiled(model, calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert [o.dtype for o in res.lowered.outputs] == ["int8" if res.lowered.outputs[0].dtype == "int8"
                                                      else "float32", "int64"]
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    seen = set()
    for (x,) in whole_numbers(shape, 4, 1):
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
        with torch.no_grad():
            v, i = model(x)
        assert got[1].dtype == np.int64 and np.array_equal(got[1], i.numpy())
        assert np.abs(got[0] - v.numpy()).max() <= bound * step + 1e-6
        seen.update(got[1].reshape(-1).tolist())
    assert len(seen) >= 4, seen                        # the index varies over the inputs


UNPOOLS = {
    "MaxUnpool1d": (lambda: (nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)), (1, 3, 8)),
    "MaxUnpool2d": (lambda: (nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)), (2, 3, 6, 6)),
    "MaxUnpool2d stride": (lambda: (nn.MaxPool2d(3, 2, 1, return_indices=True), nn.MaxUnpool2d(3, 2, 1)),
                           (1, 2, 7, 7)),
    "MaxUnpool3d": (lambda: (nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)), (1, 2, 4, 4, 4)),
}


class Unpooled(nn.Module):
    def __init__(self, pool, unpool):
        super().__init__()
        self.pool, self.unpool = pool, unpool

    def forward(self, x):
        y, i = self.pool(x)               # x's range holds 0 inside: its zero is a middle code
        return self.unpool(y, i, output_size=x.shape[2:])


@pytest.mark.parametrize("name", sorted(UNPOOLS))
def test_unpool_puts_values_at_torchs_positions(name, tmp_path):
    make, shape = UNPOOLS[name]
    model = Unpooled(*make()).eval()
    calibration = calibration_of(shape, 2)
    res = compiled(model, calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in whole_numbers(shape, 4, 3):
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            ref = model(x).numpy()
        assert np.abs(got - ref).max() <= 0.5 * step + 1e-6
        assert np.array_equal(got == 0, ref == 0)      # zero is exact: every element not unpooled


def test_functional_unpool_of_continuous_inputs(tmp_path):
    """F.max_pool2d(return_indices=True) and F.max_unpool2d on uniform
    inputs: within half a step wherever the window's two largest floats are
    a step apart (elsewhere int8 codes may tie where the floats do not)."""
    class Functional(nn.Module):
        def forward(self, x):
            y, i = F.max_pool2d(x, 2, return_indices=True)
            return F.max_unpool2d(y, i, 2)
    model = Functional().eval()
    g = torch.Generator().manual_seed(5)
    calibration = [(torch.rand(1, 4, 6, 6, generator=g) * 6 - 3,) for _ in range(8)]
    res = compiled(model, calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        ref = model(x).numpy()
        windows = np.sort(x.numpy().reshape(1, 4, 3, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 4, 3, 3, 4), -1)
        clear = np.repeat(np.repeat(windows[..., -1] - windows[..., -2] > step, 2, 2), 2, 3)
        assert clear.mean() > 0.8
        assert np.abs(got - ref)[clear].max() <= 0.5 * step + 1e-6


def test_indices_as_float_into_later_layers(tmp_path):
    """`.float()` of a pool's indices (int64 to float32, then int8) feeds an add."""
    class Positions(nn.Module):
        def forward(self, x):
            v, i = F.max_pool1d(x, 4, return_indices=True)
            return v + i.float() * 0.25
    model = Positions().eval()
    calibration = calibration_of((1, 3, 16), 4)
    res = compiled(model, calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        assert np.abs(got - model(x).numpy()).max() <= 1.5 * step


def test_fractional_samples_per_batch_element(tmp_path):
    """Samples that differ between batch elements: each element's own
    regions (window_max), exact on the input's grid."""
    samples = torch.tensor([[[0.2, 0.7], [0.5, 0.5]], [[0.6, 0.1], [0.9, 0.3]]])
    model = nn.Sequential(nn.FractionalMaxPool2d(2, output_size=3, _random_samples=samples)).eval()
    g = torch.Generator().manual_seed(6)
    calibration = [(torch.rand(2, 2, 7, 7, generator=g) * 6 - 3,) for _ in range(8)]
    res = compiled(model, calibration)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        assert np.abs(got - model(x).numpy()).max() <= 0.5 * step + 1e-6
    # the regions really differ: the batch elements' pools of one input differ
    same = calibration[0][0][:1].repeat(2, 1, 1, 1)
    out = host_runtime.run(prog, res.data, [same.numpy()], workdir=str(tmp_path))[0]
    assert not np.array_equal(out[0], out[1])


def unpool_program():
    """ptec::max_unpool.out of program inputs: int8 values [1, 1, 2, 2],
    int64 indices, into a [1, 1, 4, 4] plane (16 positions)."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.CHAR, [1, 1, 2, 2], [0, 1, 2, 3])
    i = b.tensor(ScalarType.LONG, [1, 1, 2, 2], [0, 1, 2, 3])
    y = b.tensor(ScalarType.CHAR, [1, 1, 4, 4], [0, 1, 2, 3])
    b.call("ptec::max_unpool.out", self=x, indices=i, zero_point=-5, out=y)
    b.set_io([x, i], [y])
    return serialize_program(b.build())


@pytest.mark.parametrize("bad", [-1, 16, 2 ** 40, -2 ** 63])
def test_an_index_outside_the_plane_is_an_error(bad, tmp_path):
    data = unpool_program()
    prog = parse_program(data)
    x = np.array([1, 2, 3, 4], np.int8).reshape(1, 1, 2, 2)
    idx = np.array([0, 5, 10, 15], np.int64).reshape(1, 1, 2, 2)
    good = host_runtime.run(prog, data, [x, idx], workdir=str(tmp_path))[0]
    want = np.full(16, -5, np.int8)
    want[[0, 5, 10, 15]] = [1, 2, 3, 4]
    assert good.reshape(-1).tolist() == want.tolist()
    idx.reshape(-1)[2] = bad
    with pytest.raises(Exception, match="outside the output plane"):
        host_runtime.run(prog, data, [x, idx], workdir=str(tmp_path))
    with pytest.raises(ValueError, match="outside the output plane"):
        run_program(prog, [x, idx])


class Net(nn.Module):
    """A conv, its max pool's values and indices, the unpool by them."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2)

    def forward(self, x):
        y, i = self.pool(self.conv(x))
        return self.unpool(y, i)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_unpool_on_boards(target, tmp_path):
    g = torch.Generator().manual_seed(8)
    calibration = [(torch.rand(1, 2, 6, 6, generator=g) * 4 - 2,) for _ in range(8)]
    res = compiled(Net(), calibration)
    assert not res.lowered.fallbacks
    for (x,) in calibration[:2]:
        board_matches_reference(res.data, x.numpy(), target, tmp_path)


@pytest.mark.parametrize("pool, shape", [(lambda: nn.MaxPool2d(2, return_indices=True), (2, 4, 4)),
                                         (lambda: nn.MaxPool1d(2, return_indices=True), (3, 8))])
def test_unbatched_pair_is_torchs(pool, shape, tmp_path):
    """torch's unbatched [C, H, W] / [C, L] form of a pool with indices: the
    batched pool on x.unsqueeze(0), values and int64 indices squeezed
    (capture_unbatched; the indices' view keeps their int64 elements): torch's
    shapes, its indices exactly, values within half an output step."""
    model = Pair(pool()).eval()
    g = torch.Generator().manual_seed(0)
    calibration = [(torch.rand(shape, generator=g) * 6 - 3,) for _ in range(4)]
    res = compile_model(model, [calibration[0][0]], calibration)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:3]:
        values, indices = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))
        want_values, want_indices = model(x)
        assert indices.shape == tuple(want_indices.shape) and indices.dtype == np.int64
        assert np.array_equal(indices, want_indices.numpy())
        assert np.abs(values - want_values.numpy()).max() <= 0.5 * step + 1e-6
