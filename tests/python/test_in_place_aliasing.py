"""In-place writes and the values sharing their memory (capture_in_place;
issue 15): nn.ReLU(inplace=True) and the other inplace layers, F.relu(y,
inplace=True), F.relu_, torch.sigmoid_, y.relu_(), y.masked_fill_, y += z.

torch's in-place call writes y's bytes, and every later reader of y sees
the written value: capture once dropped `inplace` and ran the call out of
place, so `self.relu(y); return y + 1` gave y + 1 with no error. Each
model here is checked against torch on the same input: in float (the
capture's graph, an exact rewrite), and on the host runtime within a bound
in output steps; the writes ptec cannot model (a value sharing the memory
that is no chain of views, read later) are refused (a write into a tensor
made in forward by torch.zeros runs: test_trace_fidelity.py) in one line naming the call; a write into a parameter, buffer
or tensor attribute is a state kept across executes, as torch keeps it
(capture_buffer_state). A write into a view of a value read afterwards, or a view made
before a write read after it, is written back (capture_view_writes; its
chains in test_view_writes.py). A model writing its input is run by torch
on a copy (torch writes the caller's tensor)."""
import hashlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import cli_refusal
from test_buffer_state import streams_like_torch
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.ir import UnsupportedOperator, evaluate
from test_function_coverage import inputs
from test_module_coverage import worst_steps
from model_checks import Call as OnInput
from model_checks import Conv as Calls       # fn(y) on y = conv(x): a functional or method spelling

S = (1, 3, 6, 6)


class Discarded(nn.Module):
    """`y = conv(x); act(y); return y + 1`: the layer's result is dropped,
    its write into y is what the model reads."""

    def __init__(self, act):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = act

    def forward(self, x):
        y = self.conv(x)
        self.act(y)
        return y + 1


LAYERS = {
    "ReLU": nn.ReLU(inplace=True), "ReLU6": nn.ReLU6(inplace=True), "LeakyReLU": nn.LeakyReLU(0.2, inplace=True),
    "Hardtanh": nn.Hardtanh(-0.5, 0.5, inplace=True), "ELU": nn.ELU(inplace=True), "SELU": nn.SELU(inplace=True),
    "CELU": nn.CELU(0.5, inplace=True), "SiLU": nn.SiLU(inplace=True), "Mish": nn.Mish(inplace=True),
    "Hardswish": nn.Hardswish(inplace=True), "Hardsigmoid": nn.Hardsigmoid(inplace=True),
    "Threshold": nn.Threshold(0.1, -2.0, inplace=True), "RReLU": nn.RReLU(0.1, 0.3, inplace=True),
    "Dropout": nn.Dropout(0.5, inplace=True), "Dropout2d": nn.Dropout2d(0.5, inplace=True),
}


def _later_reader(y):
    z = F.relu(y, inplace=True)
    return y * 2 + z


def _read_before_and_after(y):
    a = y * 2                   # y before the write
    y.sigmoid_()
    return a + y


def _augmented(y):
    y += 1.0
    y *= 2
    y -= y.mean()
    return y


def _alias_kept(y):
    a = y                       # the same tensor: += writes it too
    y += 0.5
    return a * y


def _view_written(y):
    v = y[:, :2]                # a view nothing else reads after the write
    v.clamp_(-0.5, 0.5)
    return v * 3


def _after_a_view(y):
    v = y.view(1, -1)           # read before the write only
    s = v.sum(-1, keepdim=True)
    y.relu_()
    return y - s.view(1, 1, 1, 1) * 0.01


def _accumulated(y):
    a = torch.zeros_like(y)
    a += y
    a.mul_(3)
    return a - y


def _masked(y):
    y.masked_fill_(y > 0.5, 0.25)
    return y + y.exp_()


# (id, call of y = conv(x)): each writes y in place, and the result reads y after
SPELLINGS = {
    "F.relu(inplace=True), y read later": _later_reader,
    "F.relu_": lambda y: F.relu_(y) + y, "torch.relu_": lambda y: (torch.relu_(y), y * 3)[1],
    "F.leaky_relu(inplace)": lambda y: (F.leaky_relu(y, 0.2, True), y - 1)[1],
    "F.hardtanh_": lambda y: (F.hardtanh_(y, -0.5, 0.5), y * 2)[1], "F.elu_": lambda y: (F.elu_(y), y + 1)[1],
    "F.relu6(inplace)": lambda y: (F.relu6(y, inplace=True), y)[1],
    "F.selu / celu / silu (inplace)": lambda y: (F.selu(y, True), F.celu(y, 0.5, True), F.silu(y, True), y)[3],
    "F.mish / hardswish / hardsigmoid (inplace)": lambda y: (F.mish(y, True), F.hardswish(y, True),
                                                            F.hardsigmoid(y, True), y)[3],
    "F.threshold(inplace)": lambda y: (F.threshold(y, 0.1, -1.0, True), y)[1],
    "F.rrelu(inplace)": lambda y: (F.rrelu(y, 0.1, 0.3, inplace=True), y)[1],
    "F.dropout(eval, inplace) then relu_": lambda y: (F.relu_(F.dropout(y, 0.5, False, True)), y)[1],
    # their torch twins (torch.rrelu, ...) ptec does not read: F's (F.rrelu, ...)
    "F.rrelu_, threshold_, celu_, selu_": lambda y: (F.rrelu_(y, 0.1, 0.3), F.threshold_(y, 0.2, -1.0),
                                                     F.celu_(y, 0.7), F.selu_(y), y)[4],
    "torch.dropout_ (eval)": lambda y: (torch.dropout_(y, 0.5, False), y * 2)[1],
    "torch.sigmoid_": lambda y: (torch.sigmoid_(y), y - 0.5)[1],
    "Tensor.relu_, sigmoid_, exp_": lambda y: y.relu_().sigmoid_() + y.exp_(),
    "Tensor.masked_fill_, exp_": _masked, "Tensor.clamp_": lambda y: (y.clamp_(-0.5, 1.0), y * y)[1],
    "Tensor.add_(z)": lambda y: (y.add_(y.flip(-1)), y)[1], "+=, *=, -=": _augmented, "alias of y, +=": _alias_kept,
    "read before and after": _read_before_and_after, "a view written, read alone": _view_written,
    "torch.clamp(out=z), z read after": lambda y: (lambda z: (torch.clamp(y, -0.5, 0.5, out=z), z + y)[1])(y * 2),
    "torch.add(out=y), its result too": lambda y: (lambda r: r * y)(torch.add(y, 1.0, out=y)),
    "a view read before the write": _after_a_view, "y.detach() written, y read after": lambda y: (
        y.detach().relu_(), y * 2)[1], "zeros_like(y) accumulated": _accumulated,
    # refused before capture_view_writes: a view read after the write, a write through a view
    "a view of y read after y.relu_()": lambda y: _view_read_later(y),
    "y[:, :2].relu_(), y read after": lambda y: _through_a_view(y),
    "F.relu(y[:, :2], inplace=True), y read after": lambda y: (F.relu(y[:, :2], inplace=True), y)[1],
    "y += 1 with a view of y read after": lambda y: _augmented_alias(y),
    # refused before capture_strided: an as_strided view read after the write (a gather at its positions)
    "an as_strided view of y read after y.relu_()": lambda y: _strided_read_later(y),
    "y += 1 with an as_strided view read after": lambda y: _strided_augmented(y),
}
# (id, call of the model's input x): torch allows writing it when no gradient is kept
INPUT = {
    "x.relu_()": lambda x: (x.relu_(), x * 2)[1], "torch.sigmoid_(x)": lambda x: (torch.sigmoid_(x), x + 1)[1],
    "x += 1": lambda x: _augmented(x),
    "x[:, :2] written, read alone": _view_written,
    "x through a view, x read after": lambda x: _through_a_view(x),
}


class WritesThroughDropout(nn.Module):
    """nn.Dropout in eval returns its input itself: z is y."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        y = x * 2
        z = self.drop(y)
        z.relu_()
        return y + 1


class ReluOnInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        self.relu(x)
        return x - 0.5


class LayerThroughAView(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)

    def forward(self, y):
        self.relu(y[0])
        return y * 2


def _models():
    models = {f"nn.{k}(inplace=True), discarded": Discarded(m) for k, m in LAYERS.items()}
    models.update({k: Calls(fn) for k, fn in SPELLINGS.items()})
    models.update({f"input: {k}": OnInput(fn) for k, fn in INPUT.items()})
    models["input: nn.ReLU(inplace=True), discarded"] = ReluOnInput()
    models["nn.Dropout's result (y itself) written, y read after"] = WritesThroughDropout()
    models["nn.ReLU(inplace) on y[0], y read after"] = LayerThroughAView()
    return models


MODELS = _models()


def _torch(model, x):
    with torch.no_grad():
        return model(x.clone())         # a copy: the model may write its input


@pytest.mark.parametrize("name", sorted(MODELS))
def test_equals_torch_in_float(name):
    model = MODELS[name].eval()
    x = torch.randn(S, generator=torch.Generator().manual_seed(len(name))) * 2.0
    kept = x.clone()
    g = capture(model, [x])
    assert torch.equal(x, kept), "capture wrote the caller's example input"
    assert not [n.name for n in g.nodes if n.op == "unsupported"]
    want = _torch(model, x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5), (got - want).abs().max()


class Writes(nn.Module):
    """On the host: a discarded inplace layer, a later reader of an
    inplace functional call, += on a conv output, the input written in
    place and a view written in place."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.act = nn.Hardtanh(-1.0, 1.0, inplace=True)
        self.skip = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        x.relu_()                           # the input
        y = self.conv(x)
        self.act(y)                         # result dropped
        z = F.leaky_relu(y, 0.1, inplace=True)
        y += self.skip(x)                   # z too: the same tensor
        w = y * 2
        v = z[:, 2:]
        v.mul_(0.5)                         # a view of y, which is not read after
        return torch.cat([w, v], 1)


@pytest.mark.parametrize("model,bound", [
    (Writes(), 1.5),                        # measured 1.42
    (Discarded(nn.ReLU6(inplace=True)), 1.5),                       # measured 1.20
    (Calls(_later_reader), 1.5),                                    # measured 1.38
])
def test_runs_on_the_host_within_its_bound(model, bound, tmp_path):
    model = model.eval()
    calibration = inputs(S, -2.0, 2.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert not res.lowered.fallbacks, res.lowered.fallbacks

    class OnACopy(nn.Module):               # torch's run on a copy: the calibration stays
        def forward(self, x):
            return _torch(model, x)

    assert worst_steps(OnACopy(), res, calibration[:4], tmp_path) <= bound


class TorchvisionLike(nn.Module):
    """A stem, torchvision's BasicBlock, Bottleneck (out += identity),
    MobileNetV2's InvertedResidual (ReLU6) and Inception's BasicConv2d
    (F.relu(x, inplace=True)): `out = self.relu(out)`, the result used."""

    def __init__(self, inplace):
        super().__init__()
        from torchvision.models.inception import BasicConv2d
        from torchvision.models.mobilenetv2 import InvertedResidual
        from torchvision.models.resnet import BasicBlock, Bottleneck
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=inplace),
                                 BasicBlock(16, 16), Bottleneck(16, 4), InvertedResidual(16, 16, 1, 6),
                                 BasicConv2d(16, 8, kernel_size=1))
        for m in self.modules():
            if hasattr(m, "inplace"):
                m.inplace = inplace

    def forward(self, x):
        return self.net(x)


def test_inplace_layers_compile_to_the_same_bytes_as_out_of_place():
    calibration = inputs((1, 3, 8, 8), -2.0, 2.0, 4)
    digests = [hashlib.sha256(compile_model(TorchvisionLike(inplace).eval(), [calibration[0][0]],
                                            calibration).data).hexdigest() for inplace in (True, False)]
    assert digests[0] == digests[1]


class LSTMThenRelu(nn.Module):
    """The nn.LSTM capture drops dead nodes: not the write of a discarded
    inplace layer."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lstm = nn.LSTM(8, 8, batch_first=True)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.lstm(x)[0] * 2
        self.relu(y)
        return y - 0.25


def test_lstm_model_keeps_a_discarded_write():
    model = LSTMThenRelu().eval()
    x = torch.randn(1, 5, 8)
    g = capture(model, [x])
    assert any(n.op == "lstm" for n in g.nodes)
    assert torch.allclose(evaluate(g, [x])[0], _torch(model, x), atol=1e-5)


def _view_read_later(y):
    v = y.view(1, -1)
    y.relu_()
    return v


def _through_a_view(y):
    y[:, :2].relu_()
    return y


def _augmented_alias(y):
    a = y.flatten()
    y += 1.0
    return a


def _strided_read_later(y):
    v = y.as_strided((2, 3), (1, 2))
    y.relu_()
    return v


def _strided_augmented(y):
    v = y.as_strided((4,), (3,))
    y += 1.0
    return v


def _other_dtype_written(x):
    x.view(torch.int32).bitwise_and_(0x7FFFFFFF)      # |x| by its bits
    return x


class WritesParameter(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(6))

    def forward(self, x):
        with torch.no_grad():
            self.w.add_(1.0)
        return x * self.w


class WritesBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.ones(6))

    def forward(self, x):
        self.count.mul_(2.0)
        return x + self.count


class WritesAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.total = torch.ones(6)          # a plain tensor attribute: `+=` writes it

    def forward(self, x):
        self.total += x[0]
        return x * self.total


def _outs(x):
    v, i = torch.empty(1), torch.empty(1, dtype=torch.long)
    torch.max(x * 2, 1, out=(v, i))
    return v


# (model, error, words its one-line refusal holds)
REFUSED = {
    "a view of the input as another dtype written": (OnInput(_other_dtype_written), UnsupportedOperator,
                                                      ["bitwise_and_ (Tensor.bitwise_and_)", "another dtype"]),
    "out= several tensors": (OnInput(_outs), UnsupportedOperator, ["(torch.max)", "out="]),
}


@pytest.mark.parametrize("cls", [WritesParameter, WritesBuffer, WritesAttribute])
def test_a_write_into_the_models_tensor_is_a_state(cls):
    """A parameter, buffer or tensor attribute written in forward: torch's
    next call reads the written value, and so does ptec's next execute
    (capture_buffer_state; test_buffer_state.py)."""
    g = torch.Generator().manual_seed(3)
    streams_like_torch(cls().eval(), [torch.randn(1, 6, generator=g) for _ in range(6)], 2.0)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_call(name):
    model, error, words = REFUSED[name]
    x = torch.randn(1, 6)
    if isinstance(model, Calls):
        x = torch.randn(S)
    kept = {k: v.clone() for k, v in model.state_dict().items()}
    total = model.total.clone() if isinstance(model, WritesAttribute) else None
    with pytest.raises(error) as e:
        compile_model(model.eval(), [x], [(x,), (x * 0.5,)])
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    for w in words:
        assert w in message, message
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in kept.items()), "the refusal left a buffer written"
    if total is not None:
        assert isinstance(model.total, torch.Tensor) and torch.equal(model.total, total), "the refusal left it written"


def test_cli_refuses_with_exit_2(tmp_path):
    line = cli_refusal(tmp_path,
                       "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def __init__(self):\n"
                       "        super().__init__()\n"
                       "        self.relu = torch.nn.ReLU(inplace=True)\n"
                       "    def forward(self, x):\n"
                       "        y = x * 2\n"
                       "        v = y.view(torch.int32)\n"
                       "        self.relu(y)\n"
                       "        return v.float()\n"
                       "def model():\n"
                       "    return M(), (torch.randn(1, 4, 8),)\n")
    assert "relu (nn.ReLU)" in line and "view (Tensor.view)" in line, line
