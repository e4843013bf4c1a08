"""Integer arithmetic on index values (issue 15): `x[i - 1]`, `x[5 - i,
j[:, None]]`, `i * 3 - 7`, `-i`, `torch.clamp(i - 1, 0, 3)`,
`torch.stack([i, 5 - i])`, `torch.cat([i, j])` with i, j int64 (argmax,
an int64 input) or int32 (x.int() of a float value) values of the program:
computed in integers as torch computes them (aten::add.out / sub.out /
mul.out, lt/gt.Scalar_out + where.self_out for clamp, cat.out), never
quantized, and usable wherever an index is: a program output, `.float()`,
embedding ids, a gather index, an index tensor.

Checks: the float graph is torch; the C runtime's bytes equal the numpy
reference interpreter's; every integer output is torch's exactly (torch
run on the program's own indices, since an int8 argmax may pick another of
two values a step apart) and most indices are torch's; picked int8 values
are within half a step of torch's; an index that arithmetic takes out of
range fails the run with an error (host and reference) while a wrapped
int64 product is torch's wrap; the emulated M55 and M33 print the
reference bytes; a Python int outside the dtype stays refused in one line
naming the call (floor division, remainders, casts and int32 / int64 mixes:
test_int_division.py)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import evaluate
from ptec.pte import parse_program

TABLE = torch.linspace(-1, 1, 36).reshape(12, 3)

# pick(x, i, j) -> outputs; x [6, 6, 4], i [6] and j [4] argmaxes in [0, 6)
FORMS = {
    "x[i - 1]": lambda x, i, j: (x[i - 1],),
    "x[1 - i], -i": lambda x, i, j: (x[1 - i], -i),
    "x[5 - i, j[:, None]]": lambda x, i, j: (x[5 - i, j[:, None]],),
    "x[:, clamp(i + 2, max=5)]": lambda x, i, j: (x[:, torch.clamp(i + 2, max=5)],),
    "x[stack([i, 5 - i])]": lambda x, i, j: (x[torch.stack([i, 5 - i])],),
    "x[i * 3 - 2 * i, 2]": lambda x, i, j: (x[i * 3 - 2 * i, 2],),
    "gather(x, 1, 5 - i)": lambda x, i, j: (torch.gather(x[:, :, 0], 1, (5 - i)[:, None]),),
    "x.index_select(0, 5 - i)": lambda x, i, j: (x.index_select(0, 5 - i),),
    "embedding(i * 2 + 1)": lambda x, i, j: (F.embedding(i * 2 + 1, TABLE),),
    # torch.clamp(i, 4, 2): min > max gives max (the lower bound applies first)
    "integer outputs": lambda x, i, j: (i * 3 - 7, torch.clamp(i - 1, 0, 3), torch.clamp(i, 4, 2), torch.cat([i, j]),
                                        torch.stack([i, 5 - i], 1), i[:, None] - j, torch.add(i, j[:1], alpha=-2),
                                        (i - 2).float()),
}


class Picks(torch.nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, x):
        i = x[:, :, 0].argmax(1)
        j = x[:, 0, :].argmax(0)
        return self.pick(x, i, j) + (i, j)

    def pick(self, x, i, j):
        return FORMS[self.form](x, i, j)


class Int32(torch.nn.Module):
    """int32 values (x.int() of a float value): arithmetic with Python ints
    stays int32, as torch; int32 ids of an embedding."""

    def forward(self, x):
        k = (x[:, 0, 0] * 2).int()
        return self.pick(x, k) + (k,)

    def pick(self, x, k):
        return (k * 3 + 1, torch.clamp(k, -1, 2), torch.stack([k, -k]), F.embedding(torch.clamp(k, -1, 2) + 1, TABLE))


def samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(6, 6, 4, generator=g),) for _ in range(n)]


def _check(model, tmp_path, n_idx, board=False):
    """The float graph is torch; host bytes are the reference's; integer
    outputs are torch's on the program's own indices (the last n_idx
    outputs) exactly, int8 ones within half a step; most indices torch's."""
    xs = samples(12, 3)
    graph = capture(model, xs[0])
    assert not [n for n in graph.nodes if n.op == "unsupported"]
    assert any(n.op == "int_math" for n in graph.nodes)
    with torch.no_grad():
        for (x,) in xs[:3]:
            for got, want in zip(evaluate(graph, [x]), model(x)):
                assert torch.equal(got, want.float())
    res = compile_model(model, [xs[0][0]], xs)
    assert not res.lowered.fallbacks
    with torch.no_grad():
        traced = model(xs[0][0])
    # integers stay integers: each integer output in torch's dtype, never quantized
    assert [o.dtype for o in res.lowered.outputs] == [str(t.dtype).replace("torch.", "") for t in traced]
    prog = parse_program(res.data)
    agreed = total = 0
    for (x,) in xs[8:]:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        for w, h in zip(want, got):
            assert np.asarray(h).tobytes() == np.asarray(w).tobytes()
        with torch.no_grad():
            ref = [t.numpy() for t in model.pick(x, *[torch.from_numpy(g.copy()) for g in got[-n_idx:]])]
            ids = [t.numpy() for t in model(x)[-n_idx:]]
        for k, r in enumerate(ref):
            assert got[k].shape == r.shape and got[k].dtype == r.dtype
            if not np.issubdtype(r.dtype, np.floating) or res.graph.node(res.graph.outputs[k]).op == "index_to_float":
                assert np.array_equal(got[k], r), (k, got[k], r)        # integers (and their .float()) exactly
            else:
                step = res.graph.node(res.graph.outputs[k]).qparams[0]
                assert np.ptp(r) > 16 * step
                assert np.abs(got[k] - r).max() <= 0.5 * step * 1.001
        agreed += sum(int((g == r).sum()) for g, r in zip(got[-n_idx:], ids))
        total += sum(r.size for r in ids)
    assert agreed >= 0.75 * total, (agreed, total)
    if board:
        for target in ("cortex-m55", "cortex-m33"):
            board_matches_reference(res.data, xs[9][0].numpy(), target, tmp_path)


@pytest.mark.parametrize("form", list(FORMS))
def test_index_arithmetic(form, tmp_path):
    _check(Picks(form).eval(), tmp_path, 2, board=form == "x[5 - i, j[:, None]]")


def test_int32_arithmetic_stays_int32(tmp_path):
    _check(Int32().eval(), tmp_path, 1, board=True)


class FromIds(torch.nn.Module):
    """Indices from an int64 input, moved by arithmetic: x[ids + 2] (a
    computed index, ptec::flat_index), the embedding rows of ids * 2 + 1."""

    def forward(self, x, ids):
        return x[ids + 2], F.embedding(ids * 2 + 1, TABLE)


@pytest.mark.parametrize("bad, where", [(4, "outside its dim"), (-9, "outside its dim"), (2 ** 62, "outside its dim"),
                                        (-1, "outside the table"), (-8, "outside the table")])
def test_an_index_moved_out_of_range_is_an_error(bad, where, tmp_path):
    model = FromIds().eval()
    x = samples(1, 4)[0][0]
    ids = torch.tensor([0, 3, 1, 2])
    res = compile_model(model, [x, ids], [(x, ids)])
    assert [v.dtype for v in res.lowered.inputs] == ["float32", "int64"]
    prog = parse_program(res.data)
    args = [x.numpy(), ids.numpy()]
    got = host_runtime.run(prog, res.data, args, workdir=str(tmp_path))
    assert [g.tobytes() for g in got] == [w.tobytes() for w in run_program(prog, args)]
    with torch.no_grad():
        for g, w, out in zip(got, model(x, ids), res.graph.outputs):
            assert np.abs(g - w.numpy()).max() <= 0.5 * res.graph.node(out).qparams[0] * 1.001
    moved = torch.tensor([0, bad, 1, 2])
    with pytest.raises((IndexError, RuntimeError)):
        model(x, moved)                                                    # torch fails too
    args[1] = moved.numpy()
    with pytest.raises(Exception, match=where):
        host_runtime.run(prog, res.data, args, workdir=str(tmp_path))
    with pytest.raises(ValueError, match="outside"):
        run_program(prog, args)


class Wrapped(torch.nn.Module):
    """ids * 4 + 1 wraps in int64 as torch's (2^62 * 4 is 0)."""

    def forward(self, ids):
        return F.embedding(ids * 4 + 1, TABLE), ids * 4 + 1


def test_int64_products_wrap_as_torchs(tmp_path):
    model = Wrapped().eval()
    ids = torch.tensor([0, 2 ** 62, -2 ** 62, 2])
    res = compile_model(model, [ids], [(ids,)])
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [ids.numpy()], workdir=str(tmp_path))
    assert [g.tobytes() for g in got] == [w.tobytes() for w in run_program(prog, [ids.numpy()])]
    with torch.no_grad():
        rows, wrapped = model(ids)
    assert wrapped.tolist() == [1, 1, 1, 9]
    assert np.array_equal(got[1], wrapped.numpy())
    assert np.abs(got[0] - rows.numpy()).max() <= 0.5 * res.graph.node(res.graph.outputs[0]).qparams[0] * 1.001
    for target in ("cortex-m55", "cortex-m33"):
        board_matches_reference(res.data, ids.numpy(), target, tmp_path)


REFUSED = {
    "i + 2 ** 40 (int32)": (lambda i, k: k + 2 ** 40, r"add \(operator\.add\): the number 1099511627776 is "
                                                      r"outside int32"),
    "k * 2 ** 33 (int32, torch.mul)": (lambda i, k: torch.mul(k, 2 ** 33), r"mul_1 \(torch\.mul\): the number "
                                                                            r"8589934592 is outside int32"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_other_integer_calls_stay_refused_in_one_line(name):
    fn, why = REFUSED[name]

    class Model(torch.nn.Module):
        def forward(self, x):
            return fn(x.argmax(-1), (x[:, 0] * 2).int())
    x = torch.randn(4, 6)
    with pytest.raises(Exception, match=rf"^lowering failed: {why}[^\n]*$"):
        compile_model(Model().eval(), [x], [(x,)])
