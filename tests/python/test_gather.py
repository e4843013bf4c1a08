"""torch.gather / Tensor.gather by an index computed in the program (issue
15): `torch.gather(x, -1, y.argmax(-1, keepdim=True))` captures as a
`gather` node and runs as aten::gather.out on x's int8 bytes with argmax's
int64 index, so the picked values stay on x's grid. The C runtime's bytes
equal the numpy reference interpreter's, whose gather is checked against
torch's; the values are torch's within half a step wherever the program's
index is torch's; an index outside self fails the run with an error, on
the host and in the reference; the emulated boards print the reference
bytes. `x[0, ids]`, `x[:, ids]`, `x.index_select(1, ids)` by argmax ids
pick rows of x viewed as a table, with aten::embedding.out."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import evaluate
from ptec.pte import parse_program
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.schema import ScalarType
from ptec.reference import portable as P


class Pick(torch.nn.Module):
    """x's entry where a layer of x is largest (per row), and the min of
    that layer's output along dim 1 by its argmin, as gathers; the index
    too, to compare the program's choice with torch's."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):                        # [1, 4, 8]
        y = self.fc(x)
        index = y.argmax(-1, keepdim=True)
        return torch.gather(x, -1, index), y.gather(1, y.argmin(1, keepdim=True)), index


def samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 4, 8, generator=g),) for _ in range(n)]


def compiled():
    calibration = samples(8, 0)
    return compile_model(Pick().eval(), [calibration[0][0]], calibration)


def test_the_graph_is_torch_in_float():
    model = Pick().eval()
    g = capture(model, samples(1, 1)[0])
    assert [n.op for n in g.nodes].count("gather") == 2
    for (x,) in samples(3, 2):
        with torch.no_grad():
            want = model(x)
        got = evaluate(g, [x])
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_gather_runs_int8_on_the_input_grid(tmp_path):
    res = compiled()
    assert not res.lowered.fallbacks and "aten::gather.out" in res.lowered.operators
    prog = parse_program(res.data)
    model = Pick().eval()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert tuple(res.graph.node(res.graph.outputs[0]).qparams) == tuple(res.graph.node("x").qparams)
    agreed = 0
    for (x,) in samples(6, 3):
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        for w, g in zip(want, got):
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
        with torch.no_grad():
            ref, _, ref_index = (t.numpy() for t in model(x))
        same = got[2] == ref_index               # where the int8 layer's argmax is torch's
        agreed += int(same.sum())
        # bytes moved: x's rounding alone, half a step
        assert np.abs(got[0] - ref)[same].max(initial=0.0) <= 0.5 * step * 1.001
    assert agreed >= 20                          # of 24 rows: the check is not vacuous


def test_the_reference_gather_is_torchs():
    g = torch.Generator().manual_seed(4)
    x = torch.randint(-128, 128, (3, 4, 5), generator=g, dtype=torch.int8)
    for dim in range(3):
        shape = [2, 3, 4]
        shape[dim] = 6
        index = torch.randint(0, x.shape[dim], shape, generator=g)
        assert np.array_equal(P.gather(x.numpy(), dim, index.numpy()), torch.gather(x, dim, index).numpy())


def gather_program():
    """x [2, 3] float picked along dim 1 by an int64 index input [2, 2]."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 3])
    index = b.tensor(ScalarType.LONG, [2, 2])
    y = b.tensor(ScalarType.FLOAT, [2, 2])
    b.call("aten::gather.out", self=x, dim=1, index=index, sparse_grad=False, out=y)
    b.set_io([x, index], [y])
    return b.build()


@pytest.mark.parametrize("bad", [3, -1, 2 ** 40, -(2 ** 63)])
def test_an_index_outside_self_is_an_error(bad, tmp_path):
    from ptec.pte.writer import write_program
    path = tmp_path / "g.pte"
    write_program(gather_program(), str(path))
    data = path.read_bytes()
    prog = parse_program(data)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    index = np.array([[0, 2], [1, bad]], np.int64)
    ok = host_runtime.run(prog, data, [x, np.array([[0, 2], [1, 1]], np.int64)], workdir=str(tmp_path))[0]
    assert ok.tolist() == [[0.0, 2.0], [4.0, 4.0]]
    with pytest.raises(Exception, match="outside self along dim"):
        host_runtime.run(prog, data, [x, index], workdir=str(tmp_path))
    with pytest.raises(ValueError, match="outside"):
        run_program(prog, [x, index])


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_gather_on_boards(target, tmp_path):
    res = compiled()
    for (x,) in samples(2, 7):
        board_matches_reference(res.data, x.numpy(), target, tmp_path)


class Rows(torch.nn.Module):
    """x indexed by argmax indices computed in the program: x[0, ids],
    x[:, ids], x.index_select(1, ids), x[..., ids, :] (ids [6] or [1, 6]),
    and the ids, to compare the program's choice with torch's."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 6)

    def forward(self, x):                        # [1, 6, 8]
        ids = self.fc(x).argmax(-1)              # [1, 6], each in [0, 6)
        flat = self.fc(x[0]).argmax(-1)          # [6]
        return x[0, ids], x[:, flat], x.index_select(1, flat), x[..., ids, :], ids, flat


def test_rows_picked_by_a_computed_index(tmp_path):
    """The table is x viewed as [6, 8], its rows picked by the int64 ids
    with aten::embedding.out: torch's in float; int8 bytes on x's grid,
    within half a step of torch's where the int8 argmax is torch's; the
    emulated M33 prints the reference bytes."""
    g = torch.Generator().manual_seed(12)
    xs = [(torch.randn(1, 6, 8, generator=g),) for _ in range(12)]
    model = Rows().eval()
    graph = capture(model, xs[0])
    assert [n.op for n in graph.nodes].count("embedding") == 4
    with torch.no_grad():
        for got, want in zip(evaluate(graph, [xs[1][0]]), model(xs[1][0])):
            assert torch.equal(got, want.float())
    res = compile_model(model, [xs[0][0]], xs[:8])
    assert not res.lowered.fallbacks and "aten::embedding.out" in res.lowered.operators
    prog = parse_program(res.data)
    step = res.graph.node("x").qparams[0]
    agreed = 0
    for (x,) in xs[8:]:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        for w, h in zip(want, got):
            assert np.asarray(h).tobytes() == np.asarray(w).tobytes()
        with torch.no_grad():
            ref = [t.numpy() for t in model(x)]
        same_ids, same_flat = got[4] == ref[4], got[5] == ref[5]
        agreed += int(same_ids.sum() + same_flat.sum())
        for k, same in ((0, same_ids[0]), (1, same_flat), (2, same_flat), (3, same_ids[0])):
            assert got[k].shape == ref[k].shape
            assert tuple(res.graph.node(res.graph.outputs[k]).qparams) == tuple(res.graph.node("x").qparams)
            err = np.abs(got[k] - ref[k]).reshape(6, 8) if k != 3 else np.abs(got[k] - ref[k])[0, 0]
            assert err[same].max(initial=0.0) <= 0.5 * step * 1.001
    assert agreed >= 40                          # of 48 ids: the check is not vacuous
    board_matches_reference(res.data, xs[9][0].numpy(), "cortex-m33", tmp_path)
