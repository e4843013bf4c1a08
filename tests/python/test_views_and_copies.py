"""Views, copies and constructors rewritten at capture (ptec.capture_views,
capture_in_place, capture_view_elements; issue 15): each spelling equals
torch in float (an exact rewrite: only float rounding remains), the
in-place ops on a clone keep torch's order of writes and reads, a few run
on the host within their bound of torch, and the forms ptec does not run
are refused in one line naming the call. test_function_coverage.py's RUNS
rows hold one host run of each call."""

import pytest
import torch

from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from model_checks import board_matches_reference, cli_refusal
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3 = (1, 4, 8)


def _write_then_read(x):
    y = x.clone()
    y.mul_(2)
    y.add_(1)
    return y * 3


def _read_between_writes(x):
    y = x.clone()
    y.sub_(0.5)
    z = y.abs()                 # reads the value after sub_, before clamp_
    y.clamp_(-1.0, 1.0)
    return y + z


def _augmented(x):
    y = x.clone()
    y += 1.0
    y *= x
    return y


def _function_form(x):
    return torch.relu_(x.clone()) + torch.sigmoid_(x.clone())


# (id, call of x): each must capture to no unsupported node and equal torch in float
SPELLINGS = {
    "clone": lambda x: x.clone(),
    "torch.clone(memory_format)": lambda x: torch.clone(x, memory_format=torch.preserve_format),
    "clone().add_": lambda x: x.clone().add_(1), "clone().abs_": lambda x: x.clone().abs_(),
    "clone().mul_.clamp_": lambda x: x.clone().mul_(2).clamp_(-1, 1), "clone().relu_": lambda x: x.clone().relu_(),
    "clone().sub_(tensor)": lambda x: x.clone().sub_(x.flip(-1)), "clone().div_": lambda x: x.clone().div_(2),
    "clone().add_(alpha)": lambda x: x.clone().add_(x, alpha=0.5),
    # capture dropped alpha once (x.add(y, alpha=0.5) ran as x + y)
    "add(tensor, alpha)": lambda x: x.add(x.flip(-1), alpha=0.5), "torch.add(x, x, alpha)": lambda x: torch.add(
        x, x, alpha=-2), "torch.sub(number, alpha)": lambda x: torch.sub(x, 1, alpha=2),
    "clone().zero_()": lambda x: x.clone().zero_() + x, "clone().fill_": lambda x: x.clone().fill_(-0.5) * x,
    "clone().index_fill_": lambda x: x.clone().index_fill_(2, torch.tensor([1, 3]), 0.5),
    "clone().masked_fill_(constant)": lambda x: x.clone().masked_fill_(torch.arange(8) > 5, 0.0),
    "write then read": _write_then_read, "read between writes": _read_between_writes, "y += 1; y *= x": _augmented,
    "torch.relu_/sigmoid_ of clones": _function_form,
    # refused once (capture_in_place ran writes on a clone only): a result, the input, written whole
    "in-place op on a result": lambda x: _write_into_a_result(x),
    "in-place op on the input": lambda x: _write_into_the_input(x),
    "detach, positive, data": lambda x: torch.positive(x.detach()) + x.data,
    "clone().requires_grad_(False)": lambda x: x.clone().requires_grad_(False),
    "to(tensor), to(device)": lambda x: x.to(x) * x.to("cpu"),
    "ravel": lambda x: x.ravel(), "torch.ravel": lambda x: torch.ravel(x[0, :2]),
    "atleast_1d(0-d)": lambda x: torch.atleast_1d(x[0, 0, 0]), "atleast_2d(1-D)": lambda x: torch.atleast_2d(x[0, 0]),
    "atleast_3d(2-D)": lambda x: torch.atleast_3d(x[0]), "atleast_3d(3-D)": lambda x: torch.atleast_3d(x),
    "concat": lambda x: torch.concat([x, x * 0.5], 1), "concat(dim=)": lambda x: torch.concat((x, x), dim=-1),
    "new_tensor": lambda x: x.new_tensor([[0.5] * 8] * 4) * x[0],
    "unfold": lambda x: x.unfold(2, 3, 2), "unfold(dim 1, step 1)": lambda x: x.unfold(1, 2, 1),
    "unfold(whole dim)": lambda x: x.unfold(-1, 8, 1), "adjoint": lambda x: x.adjoint(),
    "clone().copy_(broadcast)": lambda x: x.clone().copy_(x[:, :1] * 2),
    "type_as": lambda x: x.type_as(x), "view_as": lambda x: x.view_as(x.reshape(4, 8)),
    "reshape_as": lambda x: x.reshape_as(x.reshape(2, 16)),
    "expand_as": lambda x: x[:, :, :1].expand_as(x),
    "broadcast_to(new dims)": lambda x: torch.broadcast_to(x[0, :1], (3, 4, 8)),
    "broadcast_to(-1)": lambda x: x[:, :1].broadcast_to((2, -1, 4, 8)),
    "x[0].T": lambda x: x[0].T, "x.T (3-D)": lambda x: x.T, "x.mT": lambda x: x.mT, "x.mH": lambda x: x.mH,
    "x[0].H": lambda x: x[0].H, "x[0, 0].T (1-D)": lambda x: x[0, 0].T,
    "movedim": lambda x: x.movedim(1, 2), "movedim(-1, 0)": lambda x: x.movedim(-1, 0),
    "moveaxis(tuples)": lambda x: torch.moveaxis(x, (0, 1), (2, 0)),
    "movedim(kwargs)": lambda x: torch.movedim(x, source=[2], destination=[0]),
    "unflatten": lambda x: x.unflatten(2, (2, 4)), "unflatten(-1)": lambda x: x.unflatten(-1, (2, -1)),
    "select": lambda x: x.select(2, 3), "torch.select(-1)": lambda x: torch.select(x, 1, -1),
    "hstack": lambda x: torch.hstack([x, x]), "hstack(1-D)": lambda x: torch.hstack([x[0, 0], x[0, 1, :3]]),
    "hstack(0-d, 1-D)": lambda x: torch.hstack([x[0, 0, 0], x[0, 1, :3]]),
    "vstack": lambda x: torch.vstack([x, x]), "vstack(1-D, 2-D)": lambda x: torch.vstack([x[0, 0], x[0]]),
    "row_stack": lambda x: torch.row_stack([x[0, 0], x[0, 1]]), "dstack": lambda x: torch.dstack([x, x]),
    "dstack(1-D tuple)": lambda x: torch.dstack((x[0, 0], x[0, 1])),
    "dstack(2-D)": lambda x: torch.dstack([x[0], x[0]]),
    "column_stack(1-D)": lambda x: torch.column_stack([x[0, 0], x[0, 1]]),
    "column_stack(2-D, 1-D)": lambda x: torch.column_stack([x[0, :, :2], x[0, :, 3]]),
    "hsplit[0]": lambda x: torch.hsplit(x, 2)[0], "hsplit[1]": lambda x: x.hsplit(2)[1],
    "hsplit(1-D)": lambda x: torch.hsplit(x[0, 0], 4)[2], "vsplit(indices)": lambda x: torch.vsplit(x[0], [1, 3])[1],
    "dsplit[3]": lambda x: torch.dsplit(x, 4)[3], "tensor_split(3)[1]": lambda x: torch.tensor_split(x, 3, 2)[1],
    "tensor_split(3)[-1]": lambda x: torch.tensor_split(x, 3, 2)[-1],
    "tensor_split(indices)": lambda x: x.tensor_split([1, 5], 2)[1],
    "tensor_split(negative, past the end)": lambda x: x.tensor_split([1, -2, 20], dim=-1)[2],
    "tensor_split(dim 0)": lambda x: x[0].tensor_split(2)[1],
    "split pieces together": lambda x: torch.hsplit(x, 2)[0] * torch.hsplit(x, 2)[1],
    "fliplr": lambda x: torch.fliplr(x), "flipud": lambda x: torch.flipud(x[0]),
    "rot90(1)": lambda x: torch.rot90(x, 1, (1, 2)), "rot90(2)": lambda x: torch.rot90(x, 2, (1, 2)),
    "rot90(3)": lambda x: torch.rot90(x, 3, (1, 2)), "rot90(-1, reversed dims)": lambda x: torch.rot90(x, -1, (2, 1)),
    "rot90(4)": lambda x: torch.rot90(x, 4, (1, 2)), "rot90 default": lambda x: torch.rot90(x[0]),
    "Tensor.rot90(5)": lambda x: x[0].rot90(5), "rot90(negative dims)": lambda x: x.rot90(1, [-1, -2]),
    "tile(int)": lambda x: x.tile(2), "tile(more dims)": lambda x: torch.tile(x, (2, 1, 1, 2)),
    "tile(varargs)": lambda x: x.tile(1, 3), "tile(dims=)": lambda x: torch.tile(x, dims=(2, 1)),
    "repeat_interleave(2, 2)": lambda x: x.repeat_interleave(2, 2),
    "repeat_interleave(3, 1)": lambda x: x.repeat_interleave(3, 1),
    "repeat_interleave(dim None)": lambda x: x.repeat_interleave(2),
    "repeat_interleave(constant repeats)": lambda x: torch.repeat_interleave(x, torch.tensor([1, 2, 0, 1]), 1),
    "repeat_interleave(one repeat, dim=)": lambda x: x.repeat_interleave(torch.tensor([2]), dim=0),
    "repeat_interleave(-1)": lambda x: x.repeat_interleave(2, -1),
    "diagonal": lambda x: torch.diagonal(x[0, :4, :4]), "diagonal(1, 1, 2)": lambda x: x.diagonal(1, 1, 2),
    "diagonal(-2, 2, 1)": lambda x: x.diagonal(-2, 2, 1),
    "diagonal(kwargs)": lambda x: x.diagonal(offset=2, dim1=-1, dim2=-2),
    "diag(2-D)": lambda x: torch.diag(x[0, :4, :4]), "diag(1-D)": lambda x: torch.diag(x[0, 1]),
    "diag(1-D, 2)": lambda x: torch.diag(x[0, 1], 2), "diag(1-D, -1)": lambda x: torch.diag(x[0, 1, :3], -1),
    "diag(2-D, -1)": lambda x: torch.diag(x[0], -1), "diag(2-D, 3)": lambda x: x[0].diag(3),
    "trace": lambda x: torch.trace(x[0, :4, :4]), "trace(non-square)": lambda x: x[0].trace(),
    "diag_embed(1-D)": lambda x: torch.diag_embed(x[0, 0, :4]), "diag_embed": lambda x: torch.diag_embed(x),
    "diag_embed(1)": lambda x: torch.diag_embed(x, 1), "diag_embed(-1, 0, 2)": lambda x: torch.diag_embed(x, -1, 0, 2),
    "diag_embed(dims reversed)": lambda x: x[0].diag_embed(2, dim1=-1, dim2=0),
    "block_diag": lambda x: torch.block_diag(x[0, :2, :2], x[0, 2:, :2]),
    "block_diag(2-D, 1-D, 0-d)": lambda x: torch.block_diag(x[0, :2, :3], x[0, 2, :5], x[0, 3, 7]),
    "block_diag(one)": lambda x: torch.block_diag(x[0]),
    "kron": lambda x: torch.kron(x[0, :2, :2], x[0, 2:, :3]),
    "kron(1-D, 2-D)": lambda x: torch.kron(x[0, 0, :3], x[0, 1:3, :2]),
    "kron(3-D, 2-D)": lambda x: x.kron(x[0, :2, :2]),
    "meshgrid ij[0]": lambda x: torch.meshgrid(x[0, 0, :3], x[0, 1, :2], indexing="ij")[0],
    "meshgrid xy[1]": lambda x: torch.meshgrid(x[0, 0, :3], x[0, 1, :2], indexing="xy")[1],
    "meshgrid xy[0]": lambda x: torch.meshgrid(x[0, 0, :3], x[0, 1, :2], indexing="xy")[0],
    "meshgrid(list of 3, xy)[2]": lambda x: torch.meshgrid([x[0, 0, :3], x[0, 1, :2], x[0, 2, :4]], indexing="xy")[2],
    "meshgrid default[-1]": lambda x: torch.meshgrid(x[0, 0, :3], x[0, 1, :2])[-1],
    "meshgrid both": lambda x: torch.meshgrid(x[0, 0, :3], x[0, 1, :3], indexing="ij")[0]
    * torch.meshgrid(x[0, 0, :3], x[0, 1, :3], indexing="ij")[1],
    "cartesian_prod": lambda x: torch.cartesian_prod(x[0, 0, :3], x[0, 1, :2]),
    "cartesian_prod(3)": lambda x: torch.cartesian_prod(x[0, 0, :3], x[0, 1, :2], x[0, 2, :2]),
    "cartesian_prod(one)": lambda x: torch.cartesian_prod(x[0, 0]),
    "zeros_like": lambda x: torch.zeros_like(x) + x, "ones_like": lambda x: torch.ones_like(x) * x,
    "full_like": lambda x: torch.full_like(x, 2.0) * x, "full_like(dtype float32)": lambda x: torch.full_like(
        x, -1.5, dtype=torch.float32) + x,
    "new_zeros": lambda x: x.new_zeros(4) + x[0, 0, :4], "new_ones(tuple)": lambda x: x.new_ones((4, 8)) - x,
    "new_full": lambda x: x.new_full((8,), 3.0) * x,
    "new_full(kwargs)": lambda x: x.new_full(size=(8,), fill_value=-1.5) + x,
    "index_fill": lambda x: x.index_fill(2, torch.tensor([1, 3]), 0.0),
    "index_fill(negative index, value)": lambda x: x.index_fill(1, torch.tensor([-1]), 2.5),
    "torch.index_fill(0-d index)": lambda x: torch.index_fill(x, 2, torch.tensor(0), -1.0),
    "take": lambda x: torch.take(x, torch.tensor([0, 5, 9])),
    "take(2-D, negative index)": lambda x: x.take(torch.tensor([[31, -1], [2, 3]])),
    "take(0-d index)": lambda x: torch.take(x, torch.tensor(7)),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_spelling_is_torch_in_float(name):
    fn = SPELLINGS[name]
    model = Call(fn).eval()
    x = torch.randn(S3, generator=torch.Generator().manual_seed(len(name))) * 2.0
    g = capture(model, [x])
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    assert len({n.name for n in g.nodes}) == len(g.nodes)
    with torch.no_grad():
        want = fn(x.clone())                # clone: a model writing its input would change x
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5), (got - want).abs().max()


def test_in_place_ops_on_a_clone_are_out_of_place_ops():
    """The writes leave no in-place op in the graph (and read x, not a copy
    of a copy): what runs is the out-of-place op."""
    g = capture(Call(_read_between_writes).eval(), [torch.randn(S3)])
    ops = [n.op for n in g.nodes]
    assert "unsupported" not in ops and "clamp" in ops and "sub" in ops


def _write_into_a_result(x):
    y = x * 2
    y.add_(1)
    return y


def _write_into_the_input(x):
    x.mul_(2)
    return x


# (call of x, words its one-line refusal holds)
REFUSED = {
    "empty_like": (lambda x: torch.empty_like(x) + x, ["empty_like (torch.empty_like)", "undefined"]),
    "new_empty": (lambda x: x.new_empty(4) + x[0, 0, :4], ["new_empty (Tensor.new_empty)", "undefined"]),
    "zeros_like(dtype float64)": (lambda x: torch.zeros_like(x, dtype=torch.float64) + x,
                                  ["zeros_like (torch.zeros_like)", "torch.float64"]),
    # index_fill / take of a computed index run now (capture_spellings; test_spellings.py)
    "tensor_split(empty piece)": (lambda x: x.tensor_split([2, 2], 2)[1],
                                  ["tensor_split (Tensor.tensor_split)[1]", "empty"]),
    "diagonal(past the planes)": (lambda x: x.diagonal(9, 1, 2), ["diagonal (Tensor.diagonal)", "empty"]),
    "repeat_interleave(0)": (lambda x: x.repeat_interleave(0, 1), ["repeat_interleave", "empty"]),
    "tensor_split(tensor of indices)": (lambda x: torch.tensor_split(x, torch.tensor([1, 3]), 2)[0],
                                        ["tensor_split (torch.tensor_split)"]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_call(name):
    fn, words = REFUSED[name]
    x = torch.randn(S3)
    with pytest.raises((RuntimeError, UnsupportedOperator)) as e:
        compile_model(Call(fn).eval(), [x], [(x,), (x * 0.5,)])
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    assert "operator not supported" in message or "lowering failed" in message, message
    for w in words:
        assert w in message, message


def test_cli_refuses_with_exit_2(tmp_path):
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return torch.empty_like(x) + x\n"
                       "def model():\n"
                       "    return M(), (torch.randn(1, 4, 8),)\n")
    assert "empty_like (torch.empty_like)" in line, line


class Together(torch.nn.Module):
    """Several of the rewrites in one model, on the host: the in-place ops
    on a clone, a split piece, rot90, repeat_interleave, a meshgrid
    element, diag_embed, block_diag, a constant and take."""

    def forward(self, x):                                           # x [1, 4, 8]
        y = x.clone()
        y.mul_(0.5).clamp_(-1.0, 1.0)
        a = torch.hsplit(y, 2)[1] + torch.rot90(x[:, :, :2], 1, (1, 2)).repeat_interleave(2, 2)   # [1, 2, 8]
        g = torch.meshgrid(x[0, 0, :2], x[0, 1], indexing="ij")[1][None]                      # [1, 2, 8]
        d = torch.diag_embed(x[0, 2, :2])[None].tile(1, 1, 4)                                 # [1, 2, 8]
        b = torch.block_diag(x[0, 3:, :4], x[0, 3:, 4:])[None] + torch.full_like(g, 0.25)      # [1, 2, 8]
        return torch.cat([a, g, d, b, torch.take(x, torch.tensor([[[0, 9, 18, 27, 31, 4, 5, 6]]]))], 1)


@pytest.mark.parametrize("target", ["host", "cortex-m55", "cortex-m33"])
def test_together(target, tmp_path):
    model = Together().eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration,
                        target="cortex-m55" if target == "host" else target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    if target == "host":
        assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.5           # measured 1.10
    else:
        board_matches_reference(res.data, inputs(S3, -3.0, 3.0, 1, seed=5)[0][0].numpy(), target, tmp_path)
