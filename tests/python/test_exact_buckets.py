"""torch.bucketize / torch.searchsorted with constant boundaries of a float
program input, a view or selection of one (ptec.capture_exact_buckets,
issue 15 R3): the index equals torch's on every element, also on values
within 1e-4 of a boundary, on a boundary and one float32 step either side
of it (the bucket LUT of the input's int8 codes put 8 of 1,536 elements of
randn(64, 3) in a neighbouring bucket). Oracle: torch's own call on the
float input. A value computed in int8 keeps the LUT of its codes."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program
from model_checks import Call, worst_steps_compiled

EDGES = [-1.0, -0.3, 0.3, 1.0]


def _calibration(shape, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g),) for _ in range(n)]


def _near(shape, edges, seed):
    """Values within 1e-4 of a boundary, on one, or one float32 step either side (and a few far)."""
    g = torch.Generator().manual_seed(seed)
    e = torch.tensor(edges, dtype=torch.float32).reshape(-1)
    pick = e[torch.randint(len(e), shape, generator=g)]
    kind = torch.randint(5, shape, generator=g)
    jitter = (torch.rand(shape, generator=g) * 2 - 1) * 1e-4
    up = torch.nextafter(pick, torch.tensor(np.inf, dtype=torch.float32))
    down = torch.nextafter(pick, torch.tensor(-np.inf, dtype=torch.float32))
    far = torch.randn(shape, generator=g) * 2
    return torch.where(kind == 0, pick, torch.where(kind == 1, up, torch.where(kind == 2, down,
                       torch.where(kind == 3, pick + jitter, far))))


def _feeds(shape, edges, n=4):
    return [(x,) for (x,) in _calibration(shape, n, seed=7)] + [(_near(shape, edges, s),) for s in range(n)]


def _assert_exact(model, shape, edges, tmp_path, int32=False):
    calibration = _calibration(shape)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert "compare" in [n.op for n in res.graph.nodes]
    prog = parse_program(res.data)
    seen = set()
    for (x,) in _feeds(shape, edges):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        want = model(x).numpy()
        assert got.dtype == (np.int32 if int32 else np.int64) == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), int((got != want).sum())
        seen.update(np.unique(want).tolist())
    return res, seen


@pytest.mark.parametrize("kw", [dict(), dict(right=True), dict(out_int32=True), dict(right=True, out_int32=True)],
                         ids=["left", "right", "int32", "right-int32"])
def test_bucketize_of_a_float_input_is_torchs(kw, tmp_path):
    b = torch.tensor(EDGES)
    _, seen = _assert_exact(Call(lambda x: torch.bucketize(x, b, **kw)).eval(), (64, 3), EDGES, tmp_path,
                            kw.get("out_int32", False))
    assert seen == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("kw", [dict(), dict(side="right"), dict(side="left"), dict(right=True, out_int32=True)],
                         ids=["default", "side-right", "side-left", "right-int32"])
def test_searchsorted_of_a_float_input_is_torchs(kw, tmp_path):
    s = torch.tensor([-1.5, -0.3, -0.3, 0.0, 0.7])              # a tie: the side decides
    _, seen = _assert_exact(Call(lambda x: torch.searchsorted(s, x, **kw)).eval(), (4, 5, 6), s.tolist(), tmp_path,
                            kw.get("out_int32", False))
    assert len(seen) >= 5


@pytest.mark.parametrize("kw", [dict(), dict(side="right")], ids=["left", "right"])
def test_searchsorted_rows_of_a_float_input_are_torchs(kw, tmp_path):
    table = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, -0.3, 0.3], [-0.5, 0.5, 0.5]])
    _assert_exact(Call(lambda x: torch.searchsorted(table, x, **kw)).eval(), (3, 40), table.tolist(), tmp_path)


@pytest.mark.parametrize("view", [lambda x: x[:, 1], lambda x: x.t(), lambda x: x[:, 1:].flip(1)],
                         ids=["column", "t", "slice-flip"])
def test_bucketize_of_a_view_of_a_float_input_is_torchs(view, tmp_path):
    b = torch.tensor(EDGES)
    _assert_exact(Call(lambda x: torch.bucketize(view(x), b)).eval(), (64, 3), EDGES, tmp_path)


def test_nan_and_infinities_land_where_torch_puts_them(tmp_path):
    b = torch.tensor(EDGES)
    model = Call(lambda x: torch.stack([torch.bucketize(x, b), torch.bucketize(x, b, right=True)])).eval()
    calibration = _calibration((4, 8))
    res = compile_model(model, [calibration[0][0]], calibration)
    x = calibration[1][0].clone()
    x[0, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.array_equal(got, model(x).numpy())


class _Tabular(torch.nn.Module):
    """Feature bins -> Embedding -> Linear (a tabular model's binned features)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("edges", torch.tensor(EDGES))
        self.emb = torch.nn.Embedding(5, 8)
        self.fc = torch.nn.Linear(24, 4)

    def forward(self, x):
        return self.fc(self.emb(torch.bucketize(x, self.edges)).flatten(1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binned_features_into_an_embedding(seed):
    """80 to 101 output steps with the LUT of the input's codes (a wrong bucket picks another row), 1.4 to 1.5."""
    torch.manual_seed(seed)
    cal = [(torch.randn(64, 3),) for _ in range(8)]
    worst, _ = worst_steps_compiled(_Tabular().eval(), cal, cal)
    assert worst <= 2.0, worst


def test_a_value_computed_in_int8_keeps_the_lut(tmp_path):
    """tanh(x)'s int8 codes: the bucket LUT (the answer on the values the program holds), no comparisons."""
    b = torch.tensor([-0.5, 0.0, 0.5])
    calibration = _calibration((4, 8))
    res = compile_model(Call(lambda x: torch.bucketize(torch.tanh(x), b)).eval(), [calibration[0][0]], calibration)
    ops = [n.op for n in res.graph.nodes]
    assert "compare" not in ops and ops.count("elementwise") >= 1


def test_an_fp32_value_is_compared_as_the_program_holds_it(tmp_path):
    """pairwise_distance(p=3) runs in fp32 (capture_fp32_distances): its bucket is torch's of that float32
    value itself, read back as the program's second output (its int8 codes' LUT disagreed on some)."""
    b = torch.tensor([1.0, 2.0, 2.5, 3.0])

    def fn(x):
        d = torch.nn.functional.pairwise_distance(x[0], x[1], p=3)
        return torch.bucketize(d, b), d
    calibration = _calibration((2, 64, 3))
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    for (x,) in calibration:
        got, d = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert d.dtype == np.float32
        assert np.array_equal(got, torch.bucketize(torch.from_numpy(d), b).numpy())
