"""Call forms a forward may use (ptec.capture_call_forms): arguments by
keyword (`torch.cat(tensors=[x, y])`, `torch.add(input=x, other=y)`),
forward parameters the example inputs do not give (bound to their
defaults), `forward(self, *xs)`, the unbound spelling
`torch.Tensor.add(x, 1.5)`, and the recurrent, attention, bag and
transposed-convolution layers as the whole model (their forwards have
such defaulted parameters). Each compiles, ptec-run gives the numpy
reference interpreter's output, and every output is within its bound of
PyTorch float in output steps (bounds: the measured worst, rounded up to a
half step, as in test_module_coverage)."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._pytree import tree_flatten

from model_checks import Call
from test_module_coverage import inputs
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.capture_call_forms import positional_form
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program

S3 = (1, 4, 8)
W = torch.linspace(-0.6, 0.6, 24).reshape(3, 8)


def uniform(shape, n=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(shape, generator=g) * 6.0 - 3.0 for _ in range(n)]


def worst_steps(model, samples, tmp_path):
    """Compiles model on samples (tuples of inputs); the largest |ptec -
    float| over the samples per output, in that output's steps, after
    checking ptec-run against the reference interpreter (byte for byte
    when every kernel is int8, within a step with an fp32 kernel)."""
    model = model.eval()
    res = compile_model(model, list(samples[0]), samples)
    prog = parse_program(res.data)
    worst, low, high = None, np.inf, -np.inf
    for tin in samples[:4]:
        arrays = [t.numpy() for t in tin]
        want = run_program(prog, arrays)
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
        with torch.no_grad():
            refs = [r for r in tree_flatten(model(*[t.clone() for t in tin]))[0]]
        assert len(got) == len(refs)
        worst = worst or [0.0] * len(refs)
        for k, (g, w, r) in enumerate(zip(got, want, refs)):
            step = res.graph.node(res.graph.outputs[k]).qparams[0]
            g = np.asarray(g, np.float64)
            if res.lowered.fallbacks:
                assert np.abs(g - w).max() <= step * 1.001, "ptec-run is not the reference interpreter"
            else:
                assert g.tobytes() == np.asarray(w, np.float64).tobytes(), "ptec-run differs from the reference"
            r = r.detach().double().numpy()
            assert g.shape == r.shape
            worst[k] = max(worst[k], float(np.abs(g - r).max() / step))
            if k == 0:
                low, high = min(low, r.min()), max(high, r.max())
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert high - low >= 16 * step, f"float outputs span only {(high - low) / step:.1f} steps"
    return worst


# first (and other) arguments by keyword: (call of x, bound in output steps)
KEYWORDS = {
    "torch.cat(tensors=, dim=)": (lambda x: torch.cat(tensors=[x, x * 0.5], dim=-1), 1.0),      # 0.75
    "torch.stack(tensors=)": (lambda x: torch.stack(tensors=[x, x * 0.5]), 1.0),               # 0.75
    "torch.add(input=, other=)": (lambda x: torch.add(input=x, other=x * 0.5), 0.5),
    "torch.sum(input=, dim=)": (lambda x: torch.sum(input=x, dim=1), 1.5),                     # 1.07
    "torch.sum(input=) (the overload without dim)": (lambda x: x - torch.sum(input=x) / 32, 1.0),
    "F.linear(input=, weight=)": (lambda x: F.linear(input=x, weight=W), 1.0),
    "torch.matmul(input=, other=)": (lambda x: torch.matmul(input=x, other=x.transpose(1, 2)), 1.5),  # 1.21
    "torch.softmax(input=, dim=)": (lambda x: torch.softmax(input=x, dim=-1), 1.5),            # 1.15
    "F.softmax(input=, dim=)": (lambda x: F.softmax(input=x, dim=-1), 1.5),
    "torch.clamp(input=, min=)": (lambda x: torch.clamp(input=x, min=0.), 0.5),
    "torch.clamp(input=, max=)": (lambda x: torch.clamp(input=x, max=1.), 1.0),                    # 0.68
    "torch.flatten(input=)": (lambda x: torch.flatten(input=x), 0.5),
    "torch.transpose(input=, dim0=, dim1=)": (lambda x: torch.transpose(input=x, dim0=1, dim1=2), 0.5),
    "torch.where(condition=, input=, other=)": (lambda x: torch.where(condition=x > 0, input=x, other=x * 0.1),
                                               1.5),
    "torch.max(input=, dim=).values": (lambda x: torch.max(input=x, dim=-1).values, 0.5),
    "Tensor.reshape(shape=)": (lambda x: x.reshape(shape=(4, 8)), 0.5),
    "Tensor.split(split_size=, dim=)": (lambda x: x.split(split_size=3, dim=-1)[1], 0.5),
    "Tensor.to(dtype=)": (lambda x: x.to(dtype=torch.float32) * 2, 0.5),
    # the unbound spelling of a tensor method (torch.Tensor.<m>(x, ...))
    "torch.Tensor.add(x, 1.5)": (lambda x: torch.Tensor.add(x, 1.5), 1.0),                       # 0.51
    "torch.Tensor.add(x, 1.5, alpha=2)": (lambda x: torch.Tensor.add(x, 1.5, alpha=2), 1.0),
    "torch.Tensor.relu(x)": (lambda x: torch.Tensor.relu(x), 0.5),
    "torch.Tensor.softmax(x, -1)": (lambda x: torch.Tensor.softmax(x, -1), 1.5),
    "torch.Tensor.sum(x, 1)": (lambda x: torch.Tensor.sum(x, 1), 1.5),
    "torch.Tensor.view(x, 4, 8)": (lambda x: torch.Tensor.view(x, 4, 8), 0.5),
    "torch.Tensor.mul(constant, x)": (lambda x: torch.Tensor.mul(torch.linspace(0.5, 1.5, 8), x), 1.0),
}


@pytest.mark.parametrize("call", sorted(KEYWORDS))
def test_call_form_runs_within_its_bound(call, tmp_path):
    fn, bound = KEYWORDS[call]
    worst = worst_steps(Call(fn), [(x,) for x in uniform(S3)], tmp_path)
    assert max(worst) <= bound + 1e-3, f"{call}: {worst} output steps from float (bound {bound})"


def test_tensor_class_is_restored_after_tracing(tmp_path):
    worst_steps(Call(lambda x: torch.Tensor.relu(x)), [(x,) for x in uniform(S3)], tmp_path)
    assert "relu" not in torch.Tensor.__dict__ and "add" not in torch.Tensor.__dict__
    assert torch.overrides.is_tensor_method_or_property(torch.Tensor.add)


def test_positional_form():
    x, y = object(), object()
    # required parameters by keyword: to their slots; ones with a default stay keywords
    assert positional_form("call_function", torch.cat, (), {"tensors": [x], "dim": 1}) == (([x],), {"dim": 1})
    assert positional_form("call_function", torch.add, (), {"input": x, "other": y}) == ((x, y), {})
    assert positional_form("call_method", "reshape", (x,), {"shape": (4, 8)}) == ((x, (4, 8)), {})
    assert positional_form("call_function", torch.clamp, (), {"input": x, "max": 1.0}) == ((x,), {"max": 1.0})
    # overloads that disagree on the slots (to.dtype, to.dtype_layout): left as written
    assert positional_form("call_method", "to", (x,), {"dtype": torch.float32}) == ((x,), {"dtype": torch.float32})
    # no known signature: as written
    assert positional_form("call_function", len, (), {"obj": x}) == ((), {"obj": x})


class Defaults(nn.Module):
    """forward parameters with defaults the example inputs do not give."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask=None, scale: float = 2.0, return_feats=False):
        y = self.fc(x) * scale
        if mask is not None:
            y = y * mask
        return (y, x) if return_feats else y


class KeywordOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, *, scale=0.5, bias=None):
        y = self.fc(x) * scale
        return y if bias is None else y + bias


class VarArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, *xs):
        return self.fc(xs[0]) + xs[1]


class TwoThenVarArgs(nn.Module):
    def forward(self, x, *rest):
        return x * 0.5 + sum(rest)


def pairs(shape, n=6):
    return list(zip(uniform(shape, n), uniform(shape, n, seed=1)))


def triples(shape, n=6):
    return list(zip(uniform(shape, n), uniform(shape, n, seed=1), uniform(shape, n, seed=2)))


def tokens(vocab, shape, n=6):
    g = torch.Generator().manual_seed(0)
    return [(torch.randint(0, vocab, shape, generator=g),) for _ in range(n)]


def encoder_layer():
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


# (model, samples, bound of each output in output steps); the layers as in
# test_module_coverage, there as a submodule, here the model itself, all
# their outputs (GRU: out, h_n; LSTM: out, h_n, c_n; MHA: out, weights)
FORWARDS = {
    "forward(x, mask=None, scale=2.0, return_feats=False) given x": (
        Defaults, lambda: [(x,) for x in uniform((1, 4))], [1.5]),                                    # 1.17
    "forward(x, mask=None, ...) given x and mask": (Defaults, lambda: pairs((1, 4)), [2.0]),
    "forward(x, *, scale=0.5, bias=None) given x": (KeywordOnly, lambda: [(x,) for x in uniform((1, 4))], [1.5]),
    "forward(*xs) given two inputs": (VarArgs, lambda: pairs((1, 4)), [1.5]),
    "forward(x, *rest) given three inputs": (TwoThenVarArgs, lambda: triples((1, 4)), [1.5]),
    "nn.GRU": (lambda: nn.GRU(4, 5, batch_first=True), lambda: inputs((1, 3, 4)), [3.0, 2.0]),        # 2.51 1.59
    "nn.GRU (sequence first)": (lambda: nn.GRU(4, 6), lambda: inputs((5, 1, 4)), [3.0, 3.0]),
    # out and h_n the LSTM kernel's, c_n unrolled alone (capture_lstm_final_cell)
    "nn.LSTM": (lambda: nn.LSTM(4, 5, batch_first=True), lambda: inputs((1, 3, 4)), [1.0, 1.0, 2.0]),  # 0.90 0.90 1.83
    "nn.LSTM (2 layers)": (lambda: nn.LSTM(4, 5, num_layers=2, batch_first=True), lambda: inputs((1, 3, 4)),
                           [1.0, 1.0, 2.0]),                                                       # 0.73 0.90 1.83
    "nn.GRUCell": (lambda: nn.GRUCell(4, 5), lambda: inputs((1, 4)), [1.5]),                           # 1.32
    "nn.LSTMCell": (lambda: nn.LSTMCell(4, 5), lambda: inputs((1, 4)), [1.5, 1.5]),                    # 1.07 1.29
    "nn.EmbeddingBag": (lambda: nn.EmbeddingBag(10, 4), lambda: tokens(10, (2, 5)), [1.0]),
    "nn.TransformerEncoderLayer": (encoder_layer, lambda: inputs((1, 4, 8)), [2.5]),
    "nn.TransformerEncoder": (lambda: nn.TransformerEncoder(encoder_layer(), 1), lambda: inputs((1, 4, 8)), [2.5]),
    "nn.MultiheadAttention(q, k, v)": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                                       lambda: triples((1, 4, 8)), [2.5, 2.5]),
    "nn.ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), lambda: inputs((1, 3, 4, 4)), [1.0]),  # 0.93
}


@pytest.mark.parametrize("case", sorted(FORWARDS))
def test_forward_form_runs_within_its_bound(case, tmp_path):
    make, samples, bounds = FORWARDS[case]
    torch.manual_seed(0)
    worst = worst_steps(make(), samples(), tmp_path)
    assert len(worst) == len(bounds), worst
    assert all(w <= b + 1e-3 for w, b in zip(worst, bounds)), f"{case}: {worst} output steps (bounds {bounds})"


class Required(nn.Module):
    def forward(self, x, mask):
        return x * mask


def test_parameter_no_input_gives_is_refused_in_one_line():
    x = torch.rand(1, 4)
    with pytest.raises(CaptureError) as e:
        compile_model(Required().eval(), [x], [(x,)])
    assert str(e.value) == ("Required.forward takes x, mask, the 1 example input leaves mask without a value: give "
                            "one example input per parameter without a default (or give it a default)")
