"""Views as constant gathers from their base (capture_strided; issue 15):
`y.as_strided(size, stride, offset)` and `torch.as_strided`, read alone or
after a write into y, written into, a piece of `torch.broadcast_tensors`
read after a write into its base, and writes into views covering an
element twice (overlapping unfold windows, overlapping as_strided rows,
fill_ / zero_ of an expanded view).

torch float is the oracle: each form's captured graph against torch on a
copy of the input (torch runs an overlapping write element by element, so
an element covered k times takes the op k times), and some forms on the
host runtime within a bound in output steps. Where torch itself refuses
the write (its element-wise ops on an expanded view), capture refuses in
one line quoting torch; the overlapping writes ptec does not follow (a
tensor operand, whose copies torch writes in its own order) are refused
in one line naming the write, and so are writes reading, through an
operand in the written memory, an element they write elsewhere (torch's
element order decides: `y[..., 1:].add_(y[..., :-1])` is a running sum
for a short row, pairwise sums for a long one)."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import cli_refusal
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from test_function_coverage import inputs
from test_module_coverage import worst_steps
from model_checks import Call as OnInput
from model_checks import Conv

S = (2, 3, 5, 6)        # y = conv(x): [2, 4, 5, 6], 240 elements


def _flat(*ts):
    return torch.cat([t.reshape(1, -1) for t in ts], 1)


def _strided_read_after(y):
    v = y.as_strided((2, 3, 7), (120, 1, 9), 5)
    y[:, 1].relu_()                 # v covers some of y[:, 1]: torch's v reads the write
    return v


def _strided_written(y):
    v = y.as_strided((2, 4, 3), (120, 30, 7), 2)       # no element twice
    v.clamp_(-0.3, 0.3)
    v.mul_(-2.0)
    return y


def _strided_written_then_read(y):
    a = y[:, 2]
    v = torch.as_strided(y, (6, 8), (17, 3), 1)
    v.add_(0.5)
    return _flat(a, v, y)


def _strided_of_a_view(y):
    z = y[1].transpose(1, 2)            # as_strided counts in y's storage elements, from z's offset
    v = z.as_strided((4, 4), (31, 2))
    y.sub_(0.25)
    return v * 2.0


def _broadcast_pieces(y):
    b = torch.broadcast_tensors(y[:, :1], y)
    y.relu_()
    return b[0] + b[1]                  # both pieces read after the write


def _broadcast_piece_taken_before(y):
    b = torch.broadcast_tensors(y[:, 1:2, :1], y[:1])
    p = b[0]
    y[:, 1].mul_(-1.0)
    return p - b[1]


def _expanded_read_after(y):
    e = y[:, 2:3].expand(2, 4, 5, 6)
    y[:, 2].clamp_(-0.2, 0.2)
    return e


def _unfold_added(y):
    w = y.unfold(3, 3, 2)               # windows share columns 2 and 4: added twice
    w.add_(0.5)
    return y


def _unfold_scaled(y):
    w = y.unfold(3, 4, 1)               # columns covered 1 to 4 times
    w.mul_(0.75)
    return _flat(y, w)


def _unfold_relu_read_after(y):
    w = y.unfold(2, 2, 1)
    F.relu(w, inplace=True)
    y.add_(1.0)
    return _flat(w, y)


def _unfold_augmented(y):
    w = y.unfold(3, 3, 1)
    w -= 0.25
    return y


def _strided_rows_overlapping(y):
    v = y.as_strided((4, 10), (5, 1), 3)        # row r covers r*5 .. r*5+9: each next row half over it
    v.add_(1.0)
    return y


def _expanded_filled(y):
    y[:, :1].expand(2, 3, 5, 6).fill_(0.5)      # torch fills the expanded view's one element per copy
    return y


def _expanded_zeroed(y):
    e = y[:, 3:, :2].expand(2, 2, 2, 6)
    e.zero_()
    return _flat(y, e)


def _disjoint_operand(y):
    y[:, :2].add_(y[:, 2:])     # reads elements it does not write
    y.mul_(y)                   # each element reads itself
    y[..., :3] += y[..., 3:]
    return y


class ReluModule(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.conv(x)
        self.relu(y.unfold(3, 2, 1))
        return y


# each reads values through views torch lays out by storage offset and strides
FORMS = {
    "y.as_strided read alone": lambda y: y.as_strided((3, 5), (2, 7)),
    "torch.as_strided with an offset": lambda y: torch.as_strided(y, (2, 3, 4), (60, 13, 1), 7),
    "as_strided covering elements twice": lambda y: y.as_strided((6, 6), (1, 1), 3),
    "as_strided of a slice": lambda y: y[:, 1:].as_strided((3, 3), (2, 1), 2) * 2.0,
    "as_strided of a transpose": lambda y: y.transpose(2, 3).as_strided((4, 3), (1, 8)),
    "as_strided read after a write": _strided_read_after,
    "as_strided written": _strided_written,
    "torch.as_strided written, a view before read after": _strided_written_then_read,
    "as_strided of a view, read after a write": _strided_of_a_view,
    "broadcast_tensors pieces read after a write": _broadcast_pieces,
    "a broadcast_tensors piece taken before the write": _broadcast_piece_taken_before,
    "an expanded view read after a write": _expanded_read_after,
    "overlapping unfold windows add_": _unfold_added,
    "overlapping unfold windows mul_, read after": _unfold_scaled,
    "F.relu(inplace) of overlapping windows, read after another write": _unfold_relu_read_after,
    "w -= 0.25 on overlapping windows": _unfold_augmented,
    "overlapping as_strided rows add_": _strided_rows_overlapping,
    "an expanded view fill_": _expanded_filled,
    "an expanded view zero_": _expanded_zeroed,
    "operands in the written memory, no element read after its write": _disjoint_operand,
    "masked_fill_ by an element of y": lambda y: (y.masked_fill_(y > 0.2, y[0, 0, 0, 0]), y)[1],
}
ON_INPUT = {"x.as_strided of the input": lambda x: x.as_strided((5, 4), (3, 11), 1) + 0.0}
MODULES = {"nn.ReLU(inplace=True) on overlapping windows": ReluModule}


def _model(name):
    if name in ON_INPUT:
        return OnInput(ON_INPUT[name])
    return MODULES[name]() if name in MODULES else Conv(FORMS[name])


def _torch(model, x):
    with torch.no_grad():
        return model(x.clone())


@pytest.mark.parametrize("name", sorted(FORMS) + sorted(ON_INPUT) + sorted(MODULES))
def test_captured_graph_is_torchs(name):
    model = _model(name).eval()
    x = torch.randn(S, generator=torch.Generator().manual_seed(len(name)))
    kept = x.clone()
    g = capture(model, [x])
    assert torch.equal(x, kept), "capture wrote the caller's example input"
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    want = _torch(model, x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
    assert not torch.allclose(want, _torch(_model(name).eval(), x * 0.5)), "an output that does not vary"


def test_an_element_covered_k_times_takes_the_op_k_times():
    """torch's answer for an overlapping add_: 0.5 per window covering."""
    model = Conv(_unfold_added).eval()
    x = torch.randn(S)
    y = model.conv(x).detach()
    covered = torch.tensor([1.0, 1.0, 2.0, 1.0, 1.0, 0.0])      # unfold(3, 3, 2) of 6 columns: 2 windows
    want = y + 0.5 * covered
    assert torch.allclose(_torch(model, x), want, atol=1e-6)
    assert torch.allclose(evaluate(capture(model, [x]), [x])[0], want, atol=1e-5)


class OnACopy(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return _torch(self.model, x)


@pytest.mark.parametrize("name,bound", [
    ("y.as_strided read alone", 1.0),                                 # measured 0.85
    ("as_strided read after a write", 1.5),                           # measured 1.20
    ("torch.as_strided written, a view before read after", 1.5),      # measured 1.25
    ("broadcast_tensors pieces read after a write", 2.0),             # measured 1.59
    ("overlapping unfold windows mul_, read after", 1.5),             # measured 1.34
    ("overlapping as_strided rows add_", 1.5),                        # measured 1.41
])
def test_runs_on_the_host_within_its_bound(name, bound, tmp_path):
    model = _model(name).eval()
    calibration = inputs(S, -2.0, 2.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert worst_steps(OnACopy(model), res, calibration[:4], tmp_path) <= bound


def _other_dtype_read(y):
    i = y.view(torch.int32)
    y.relu_()
    return i.float()


def _divided_by_a_column(y):
    y /= y[..., :1]             # torch: column 0 becomes 1 first, and the others are divided by it, or not
    return y


def _shifted_by_assignment(y):
    y[..., 1:] = y[..., :-1]
    return y


def _shift_added(y):
    y[..., 1:] += y[..., :-1]   # torch: y[..., 1:].add_(y[..., :-1]), a running sum for a short row
    return y


# (model, words its one-line refusal holds)
REFUSED = {
    "an expanded view add_ (torch refuses)": (
        Conv(lambda y: (y[:, :1].expand(2, 4, 5, 6).add_(1.0), y)[1]),
        ["add_ (Tensor.add_)", "expand (Tensor.expand)", "torch itself refuses",
         "more than one element of the written-to tensor refers to a single memory location"]),
    "F.relu(inplace) of an expanded view (torch refuses)": (
        Conv(lambda y: (F.relu(y[:, 1:2].expand(2, 3, 5, 6), inplace=True), y)[1]),
        ["relu", "torch itself refuses", "unsupported operation"]),
    "overlapping windows times a tensor": (
        Conv(lambda y: (y.unfold(3, 3, 2).mul_(torch.linspace(0.5, 1.5, 3)), y)[1]),
        ["mul_ (Tensor.mul_)", "unfold (Tensor.unfold)", "twice", "not of each element alone"]),
    "overlapping windows copy_": (
        Conv(lambda y: (y.unfold(3, 3, 1).copy_(y[:, :, :, None, :3] * 2.0), y)[1]),
        ["copy_ (Tensor.copy_)", "twice"]),
    "overlapping windows cumsum_ (not of each element)": (
        Conv(lambda y: (y.unfold(3, 3, 1).cumsum_(-1), y)[1]),
        ["cumsum_ (Tensor.cumsum_)", "twice", "not of each element alone"]),
    "a view of another dtype read after the write": (Conv(_other_dtype_read), ["view (Tensor.view)"]),
    # torch runs these element by element in its order: an operand element read before or after its write
    "add_ of the next column": (Conv(lambda y: (y[..., 1:].add_(y[..., :-1]), y)[1]),
                                ["add_ (Tensor.add_)", "while reading", "its own order"]),
    "y /= its first column": (Conv(_divided_by_a_column), ["(/=)", "while reading", "its own order"]),
    "y[..., 1:] = y[..., :-1]": (Conv(_shifted_by_assignment), ["[...] =", "while reading", "its own order"]),
    "y[..., 1:] += y[..., :-1]": (Conv(_shift_added), ["[...] =", "while reading", "its own order"]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line(name):
    model, words = REFUSED[name]
    x = torch.randn(S)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(model.eval(), [x], [(x,), (x * 0.5,)])
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    for w in words:
        assert w in message, message


def test_cli_refuses_torchs_own_refusal_with_exit_2(tmp_path):
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        y = x * 2\n"
                       "        y[:, :1].expand(2, 4, 8).relu_()\n"
                       "        return y\n"
                       "def model():\n"
                       "    return M(), (torch.randn(2, 4, 8),)\n")
    assert "relu_ (Tensor.relu_)" in line and "torch itself refuses" in line, line
