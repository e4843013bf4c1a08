"""Advanced indexing by several index tensors computed in the program
(issue 15): `x[i, j]`, `x[:, i, j]`, `x[i, :, j]`, `x[0, i, :, k]`,
`x[None, i]`, `x[i, None, j]`, `x[::2, i]`, `x[i, 1::3]` with i, j, k int64
tensors of any rank from argmax, x.long() of a float value or an int64
input (a constant beside them too). torch's rules: ints, slices (a step:
one-wide slices joined) and None apply first (a 0-d index is an int), the
index tensors broadcast together, and their result dims stand in place of
adjacent indexed dims, else first. The program views the
indexed dims as one (a table [block, rest]), turns the index tensors into
one position in it (ptec::flat_index.out: each index checked at run time,
a negative wrapped as torch's) and copies its rows (aten::embedding.out).

Checks: the float graph is torch; the reference kernel is torch's
indexing; the C runtime's bytes equal the numpy reference interpreter's;
the int8 values are torch's within half a step (bytes of x, on its grid);
an index outside its dim fails the run with an error (host and
reference); the emulated M55 and M33 print the reference bytes."""
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
from ptec.reference import index_blocks as PX

FORMS = {
    "x[i, j]": lambda x, i, j: x[i, j],
    "x[:, i, j]": lambda x, i, j: x[:, i, j],
    "x[i, :, j]": lambda x, i, j: x[i, :, j],
    "x[..., i, j, :]": lambda x, i, j: x[..., i, j, :],
    "x[i, 1:5, j]": lambda x, i, j: x[i, 1:5, j],
    "x[2, i, :, j]": lambda x, i, j: x.reshape(1, 6, 6, 6, 3)[0, i, :, j],
    # None and stepped slices apply first; the index dims stand in place of adjacent indexed dims, else first
    "x[None, i]": lambda x, i, j: x[None, i],
    "x[:, None, i]": lambda x, i, j: x[:, None, i],
    "x[i, None, j]": lambda x, i, j: x[i, None, j],
    "x[::2, i]": lambda x, i, j: x[::2, i],
    "x[i, 1::3]": lambda x, i, j: x[i, 1::3],
    "x[i, None, ::2, j]": lambda x, i, j: x[i, None, ::2, j],
    "x[None, 1:, i, j, ::2]": lambda x, i, j: x[None, 1:, i, j, ::2],
    "x[..., i, ::2, None]": lambda x, i, j: x[..., i, ::2, None],
}


class Picks(torch.nn.Module):
    """x [6, 6, 6, 3] indexed by i, j: argmaxes of slices of x (each [6],
    in [0, 6)) in the form `form`, and the indices."""

    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, x):
        i = x[:, :, 0, 0].argmax(1)
        j = x[:, 0, :, 1].argmax(-1)
        return self.pick(x, i, j) + (i, j)

    def pick(self, x, i, j):
        return (FORMS[self.form](x, i, j),)


class Broadcast(torch.nn.Module):
    """Index tensors of different shapes: [6, 1] (argmax keepdim) and [6]
    broadcast to [6, 6]; x.long() of a float value as a third index; a
    constant index (negatives among them) beside a computed one."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rows", torch.tensor([5, 0, -1, 2, -6, 3]))

    def forward(self, x):
        i = x[:, :, 0, 0].argmax(1, keepdim=True)            # [6, 1]
        j = x[:, 0, :, 1].argmax(-1)                         # [6]
        return self.pick(x, i, j) + (i, j)

    def pick(self, x, i, j):
        k = (x[0, :, 0, 2].abs() * 0 + 1.5).long()           # [6] of 1
        return x[i, :, j], x[i, j, :, k], x[self.rows, j]


def samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(6, 6, 6, 3, generator=g),) for _ in range(n)]


def _check(model, tmp_path, n_out, board=False):
    """The float graph is torch; host bytes are the reference's; each
    output is torch's indexing by the program's own indices (its int8
    argmax may pick another of two values a step apart) within half a
    step, and most of those indices are torch's."""
    xs = samples(12, 3)
    graph = capture(model, xs[0])
    assert not [n for n in graph.nodes if n.op == "unsupported"]
    assert any(n.op == "flat_index" for n in graph.nodes)
    with torch.no_grad():
        for (x,) in xs[:3]:
            for got, want in zip(evaluate(graph, [x]), model(x)):
                assert torch.equal(got, want.float())
    # calibrated on the checked inputs too: no value outside x's grid (a clipped one is no pick's fault)
    res = compile_model(model, [xs[0][0]], xs)
    assert not res.lowered.fallbacks and "ptec::flat_index.out" in res.lowered.operators
    prog = parse_program(res.data)
    step = res.graph.node("x").qparams[0]
    agreed = total = 0
    for (x,) in xs[8:]:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        for w, h in zip(want, got):
            assert np.asarray(h).tobytes() == np.asarray(w).tobytes()
        with torch.no_grad():
            ref = [t.numpy() for t in model.pick(x, *[torch.from_numpy(g.copy()) for g in got[n_out:]])]
            ids = [t.numpy() for t in model(x)[n_out:]]
        for k in range(n_out):
            assert got[k].shape == ref[k].shape
            assert np.ptp(ref[k]) > 16 * step
            assert np.abs(got[k] - ref[k]).max() <= 0.5 * step * 1.001
        agreed += sum(int((g == r).sum()) for g, r in zip(got[n_out:], ids))
        total += sum(r.size for r in ids)
    assert agreed >= 0.75 * total, (agreed, total)
    if board:
        for target in ("cortex-m55", "cortex-m33"):
            board_matches_reference(res.data, xs[9][0].numpy(), target, tmp_path)


@pytest.mark.parametrize("form", list(FORMS))
def test_computed_index_tensors(form, tmp_path):
    _check(Picks(form).eval(), tmp_path, 1, board=form in ("x[i, :, j]", "x[i, None, ::2, j]"))


class HighRank(Picks):
    """Index tensors of rank 4 and 5 (argmaxes over a dim of 6 of x viewed
    at rank 5 and 6), broadcast to [2, 3, 6, 6, 3]: the result's first dims
    (or middle ones, in place of adjacent indexed dims)."""

    def forward(self, x):
        i = x.unsqueeze(1).argmax(0)                          # [1, 6, 6, 3]
        j = x.reshape(2, 3, 1, 6, 6, 3).argmax(3)              # [2, 3, 1, 6, 3]
        return self.pick(x, i, j) + (i, j)


HIGH_RANK = {
    "x[i, j] (rank 4, 5)": lambda x, i, j: x[i, j],
    "x[i, :, j] (rank 4, 5)": lambda x, i, j: x[i, :, j],
    "x[None, i, ::2, j] (rank 4, 5)": lambda x, i, j: x[None, i, ::2, j],
}


@pytest.mark.parametrize("form", list(HIGH_RANK))
def test_index_tensors_of_rank_above_3(form, tmp_path):
    FORMS[form] = HIGH_RANK[form]
    try:
        _check(HighRank(form).eval(), tmp_path, 1, board=form.startswith("x[None"))
    finally:
        del FORMS[form]


class Expr(torch.nn.Module):
    """x[...] by the index expression `form` of int64 program inputs i, j."""

    def __init__(self, form):
        super().__init__()
        self.form = form

    def forward(self, x, i, j):
        return eval(self.form, {"x": x, "i": i, "j": j})      # noqa: S307 - the test's own index text


# x [4, 5, 6, 7]; where torch puts the index dims: in place of adjacent indexed dims (after ints, slices and None
# apply; a 0-d index is an int), else first
MANY = [
    ("x[None, i, j]", (2, 3), (3,)), ("x[i, None, j]", (2, 3), (3,)), ("x[:, None, i, j]", (2, 1), (3,)),
    ("x[i, j, None]", (3,), (2, 1)), ("x[None, :, i, None, j]", (2, 3), (1,)), ("x[..., None, i, j]", (4,), (4,)),
    ("x[i, ..., None, j]", (2, 2), (2,)), ("x[::2, i, j]", (3,), (3,)), ("x[i, 1::3, j]", (2, 1), (1, 3)),
    ("x[i, j, ::2, 1:6:4]", (5,), (1,)), ("x[1::2, i, ::3, j]", (3,), (2, 3)),
    ("x[-1, i, None, 1:4:2, j]", (2, 3), (2, 1)), ("x[i, 0, None, j]", (4, 1), (2,)),
    ("x[None, 2, ::2, i, None, j]", (3,), (3,)), ("x[i, :, j]", (), (2,)), ("x[i, None, j]", (), (2, 3)),
    ("x[j, i, :, j]", (), (3,)), ("x[i, j]", (2, 1, 3, 1), (3, 1)), ("x[i, :, j]", (2, 1, 1, 3, 1), (2, 1, 1, 4)),
    ("x[:, i, :, j]", (2, 2, 1, 1, 2), (2, 1, 2)), ("x[None, i, ::2, j]", (1, 2, 1, 3), (2, 1, 1, 1)),
]


@pytest.mark.parametrize("form,i_shape,j_shape", MANY, ids=[f"{f} {a} {b}" for f, a, b in MANY])
def test_many_forms_are_torchs(form, i_shape, j_shape, tmp_path):
    """The float graph is torch's x[...] (shape and values); the C runtime's
    bytes are the reference's; its values torch's within half a step, for
    indices given at run time other than the example's."""
    g = torch.Generator().manual_seed(len(form) * 31 + len(i_shape) * 7 + len(j_shape))
    model = Expr(form).eval()
    runs = [(torch.randn(4, 5, 6, 7, generator=g), torch.randint(-4, 4, i_shape, generator=g),
             torch.randint(-4, 4, j_shape, generator=g)) for _ in range(4)]
    graph = capture(model, list(runs[0]))
    assert not [n for n in graph.nodes if n.op == "unsupported"]
    with torch.no_grad():
        for args in runs:
            got, want = evaluate(graph, list(args))[0], model(*args)
            assert got.shape == want.shape and torch.equal(got, want)
    res = compile_model(model, list(runs[0]), runs)
    assert not res.lowered.fallbacks and "ptec::flat_index.out" in res.lowered.operators
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for args in runs[1:]:
        arrays = [a.numpy() for a in args]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, arrays)[0].tobytes()
        with torch.no_grad():
            want = model(*args).numpy()
        assert got.shape == want.shape and np.ptp(want) > 16 * step
        assert np.abs(got - want).max() <= 0.5 * step * 1.001


def test_broadcast_and_mixed_index_tensors(tmp_path):
    _check(Broadcast().eval(), tmp_path, 3, board=True)


def test_the_reference_is_torchs_indexing():
    g = torch.Generator().manual_seed(5)
    x = torch.arange(4 * 5 * 6).reshape(4, 5, 6)
    for _ in range(20):
        i = torch.randint(-4, 4, (3, 1), generator=g)
        j = torch.randint(-5, 5, (2,), generator=g)
        flat = PX.flat_index([i.numpy(), j.numpy()], [4, 5], [3, 2])
        assert np.array_equal(x.reshape(20, 6).numpy()[flat], x[i, j].numpy())
    with pytest.raises(ValueError, match="outside"):
        PX.flat_index([np.array([4]), np.array([0])], [4, 5], [1])
    with pytest.raises(ValueError, match="outside"):
        PX.flat_index([np.array([0]), np.array([-6])], [4, 5], [1])


class FromInputs(torch.nn.Module):
    """x[i, :, j] with i and j int64 program inputs: negative wraps, and an
    index outside its dim fails the run."""

    def forward(self, x, i, j):
        return x[i, :, j]


@pytest.mark.parametrize("bad", [6, -7, 2 ** 40, -(2 ** 63)])
def test_an_index_outside_its_dim_is_an_error(bad, tmp_path):
    model = FromInputs().eval()
    x = samples(1, 4)[0][0][:, :, :, 0]                    # [6, 6, 6]
    i, j = torch.tensor([0, -1, 5, -6]), torch.tensor([[3], [-2]])
    res = compile_model(model, [x, i, j], [(x, i, j)])
    assert [v.dtype for v in res.lowered.inputs] == ["float32", "int64", "int64"]
    prog = parse_program(res.data)
    step = res.graph.node("x").qparams[0]
    args = [x.numpy(), i.numpy(), j.numpy()]
    got = host_runtime.run(prog, res.data, args, workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, args)[0].tobytes()
    with torch.no_grad():
        assert np.abs(got - model(x, i, j).numpy()).max() <= 0.5 * step * 1.001   # negatives wrapped as torch
    with pytest.raises(IndexError):
        model(x, torch.tensor([0, bad, 1, 2]), j)                                 # torch fails too
    args[1] = np.array([0, bad, 1, 2], np.int64)
    with pytest.raises(Exception, match="outside its dim"):
        host_runtime.run(prog, res.data, args, workdir=str(tmp_path))
    with pytest.raises(ValueError, match="outside"):
        run_program(prog, args)


class BesideNoneAndAStep(torch.nn.Module):
    """x[None, i, ::2, j] with i a rank-4 int64 program input."""

    def forward(self, x, i, j):
        return x[None, i, ::2, j]


@pytest.mark.parametrize("bad", [6, -7])
def test_an_index_outside_its_dim_is_an_error_beside_none_and_a_step(bad, tmp_path):
    model = BesideNoneAndAStep().eval()
    x = samples(1, 6)[0][0][:, :, :, 0]                    # [6, 6, 6]
    i, j = torch.tensor([[[[0, -1]], [[5, 2]]]]), torch.tensor([-6, 3])
    res = compile_model(model, [x, i, j], [(x, i, j)])
    prog = parse_program(res.data)
    args = [x.numpy(), i.numpy(), j.numpy()]
    got = host_runtime.run(prog, res.data, args, workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, args)[0].tobytes()
    with torch.no_grad():
        assert got.shape == model(x, i, j).shape
    bad_i = i.clone()
    bad_i[0, 1, 0, 0] = bad
    with pytest.raises(IndexError):
        model(x, bad_i, j)                                                         # torch fails too
    args[1] = bad_i.numpy()
    with pytest.raises(Exception, match="outside its dim"):
        host_runtime.run(prog, res.data, args, workdir=str(tmp_path))
    with pytest.raises(ValueError, match="outside"):
        run_program(prog, args)


def test_other_forms_stay_refused_in_one_line():
    class BesideAMask(torch.nn.Module):
        def forward(self, x):
            i = x[:, 0].argmax(-1)
            return x[i, torch.tensor([True, False, True, True, False, True])]
    x = torch.randn(4, 6, 4)
    with pytest.raises(Exception, match=r"^lowering failed: getitem_1 \(operator.getitem\): an index computed in "
                                        r"the program that is not an int64 value of the program, or beside a bool "
                                        r"mask, or choosing nothing; [^\n]*$"):
        compile_model(BesideAMask().eval(), [x], [(x,)])
