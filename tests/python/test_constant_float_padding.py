"""A constant float key_padding_mask with values other than 0 and -inf
(issue 15): a buffer holding 0.5's, -1e9 fills, a per-key bias, or one
made in forward from no input, in nn.MultiheadAttention,
F.multi_head_attention_forward, nn.TransformerEncoderLayer and
nn.TransformerEncoder (capture_attention_bias.padding).

torch 1.13 adds it to the scores as [N h, 1, S] (every query of every
head of its element), or-s its nonzeros into a bool attn_mask, and reads
it as a bool of its nonzeros on its inference fast paths (eval, no grad:
nn.MultiheadAttention batch first with even heads, self-attention, no
attn_mask; the encoder layer's own fast path; the nested encoder). ptec
does each: its values <= -1e4 are the masked softmax's mask, the rest a
constant bias added to the scores (an int8 add), or its nonzeros the
mask. (Beside a float attn_mask torch 1.13 fails: its masked_fill of a
float mask; ptec adds both, torch 2.x's merge.)

Oracle: torch on the same inputs (float32, no grad), the program within
its bound in output steps (measured figures beside each case), the host
runtime's bytes equal to the reference interpreter's. Refused in one
line: NaN / +inf in the mask, a finite fill masking every key of an
element (torch's softmax of equal values there, not a mask)."""
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model

from test_attention_masks_more import B_IN, B_OUT, E, H, L, MHA, W_IN, W_OUT, _inputs, worst_steps


def _pad(kind, n=2):
    """A constant float key padding mask [n, L]."""
    g = torch.Generator().manual_seed(5)
    p = torch.zeros(n, L)
    if kind == "half":          # 0.5 on some keys: +0.5 on their scores, or masked (read as a bool)
        p[:, 2] = 0.5
        p[0, 4] = 0.5
    elif kind == "bias":        # a general per-key bias
        p = torch.rand(n, L, generator=g) * 2 - 1
    elif kind == "fill":        # -1e9 fills (masking) and a bias
        p[:, 3:] = -1e9
        p[0, 1] = 0.7
    elif kind == "nan":
        p[0, 1] = float("nan")
    elif kind == "fill whole":  # element 1 padded whole by a finite fill
        p[1] = -1e9
        p[0, 1] = 0.5
    return p


class Module(nn.Module):
    """nn.MultiheadAttention(x, x, x, key_padding_mask=buffer) on x [L, N, E]."""

    def __init__(self, kind, batch_first, attn=None):
        super().__init__()
        self.batch_first, self.attn = batch_first, attn
        self.m = nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.m.load_state_dict(MHA.state_dict())
        self.register_buffer("pad", _pad(kind))
        self.register_buffer("causal", torch.triu(torch.ones(L, L, dtype=torch.bool), 1))

    def forward(self, x):
        v = x.transpose(0, 1) if self.batch_first else x
        am = self.causal if self.attn == "causal" else None
        y = self.m(v, v, v, key_padding_mask=self.pad, attn_mask=am, need_weights=False)[0]
        return y.transpose(0, 1) if self.batch_first else y


class Weights(Module):
    """The per-head attention weights [N, h, L, S] (sequence first: torch adds the mask)."""

    def forward(self, x):
        return self.m(x, x, x, key_padding_mask=self.pad, average_attn_weights=False)[1]


class Functional(nn.Module):
    """F.multi_head_attention_forward with the mask a buffer, or made in forward from no input."""

    def __init__(self, kind, in_forward=False):
        super().__init__()
        self.kind, self.in_forward = kind, in_forward
        self.register_buffer("pad", _pad(kind))

    def forward(self, x):
        pad = _pad(self.kind) * 1.0 if self.in_forward else self.pad
        return F.multi_head_attention_forward(x, x, x, E, H, W_IN, B_IN, None, None, False, 0.0, W_OUT, B_OUT,
                                              training=False, key_padding_mask=pad, need_weights=False)[0]


class Layer(nn.Module):
    """nn.TransformerEncoderLayer (layers: nn.TransformerEncoder) given src_key_padding_mask=buffer."""

    def __init__(self, kind, batch_first, layers=0, nested=False):
        super().__init__()
        self.batch_first = batch_first
        torch.manual_seed(4)
        self.layer = nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=batch_first).eval()
        if layers:
            self.layer = nn.TransformerEncoder(self.layer, layers, enable_nested_tensor=nested).eval()
        self.register_buffer("pad", _pad(kind))

    def forward(self, x):
        v = x.transpose(0, 1) if self.batch_first else x
        y = self.layer(v, src_key_padding_mask=self.pad)
        return y.transpose(0, 1) if self.batch_first else y


CASES = {   # name: (model, oracle or None (the model), bound in output steps)
    "nn.MultiheadAttention: 0.5 added (sequence first)": (lambda: Module("half", False), None, 3.5),  # 2.35
    "nn.MultiheadAttention: 0.5 read as a bool (fast path)": (lambda: Module("half", True), None, 3.5),  # 2.35
    "nn.MultiheadAttention: a per-key bias": (lambda: Module("bias", False), None, 3.5),  # 2.49
    "nn.MultiheadAttention: -1e9 fills and a bias": (lambda: Module("fill", False), None, 3.5),  # 2.41
    "nn.MultiheadAttention: 0.5 beside a bool attn_mask (its nonzeros mask)": (
        lambda: Module("half", False, "causal"), None, 3.5),  # 2.07
    "nn.MultiheadAttention: the weights per head, -1e9 fills and a bias": (lambda: Weights("fill", False), None,
                                                                          3.5),
    "F: a per-key bias buffer": (lambda: Functional("bias"), None, 3.5),  # 2.49
    "F: 0.5's made in forward": (lambda: Functional("half", True), None, 3.5),  # 2.35
    "nn.TransformerEncoderLayer: 0.5 added (sequence first)": (lambda: Layer("half", False), None, 3.5),  # 2.53
    "nn.TransformerEncoderLayer: 0.5 read as a bool (fast path)": (lambda: Layer("half", True), None, 3.5),  # 1.72
    "nn.TransformerEncoder: a per-key bias (sequence first)": (lambda: Layer("bias", False, 2), None, 3.5),  # 2.47
    "nn.TransformerEncoder: 0.5 read as a bool (fast path)": (lambda: Layer("half", True, 2), None, 3.5),  # 2.60
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_constant_float_padding_within_its_bound(name, tmp_path):
    make, oracle, bound = CASES[name]
    model = make().eval()
    worst = worst_steps(model, model if oracle is None else oracle().eval(), _inputs(2), tmp_path, name)
    assert worst <= bound + 1e-3, worst


def test_the_readings_differ():
    """The cases above tell torch's readings apart: added, read as a bool, masking beside a bool attn_mask."""
    x = _inputs(2, 1)[0][0]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float((Module("half", False)(x) - Module("half", True)(x)).abs().max()) > 0.05
        assert float((Layer("half", False)(x) - Layer("half", True)(x)).abs().max()) > 0.05
        assert float((Layer("half", False, 2)(x) - Layer("half", True, 2)(x)).abs().max()) > 0.05
        assert float((Module("half", False, "causal")(x) - Module("zeros", False, "causal")(x)).abs().max()) > 0.05


@pytest.mark.parametrize("kind, match", [("nan", "NaN or \\+inf"), ("fill whole", "masks every key of an element")])
@pytest.mark.parametrize("model", ["module", "layer", "functional"])
def test_what_stays_refused_is_one_line(kind, match, model):
    x = _inputs(2, 1)[0][0]
    make = {"module": lambda: Module(kind, False), "layer": lambda: Layer(kind, False),
            "functional": lambda: Functional(kind)}[model]
    with pytest.raises((CaptureError, CompileError), match=match) as e:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile_model(make().eval(), [x], [(x,)])
    assert "\n" not in str(e.value)


class Decoder(nn.Module):
    """nn.TransformerDecoderLayer given a constant float tgt_key_padding_mask of 0.5's."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(E, H, 16, dropout=0.0).eval()
        self.register_buffer("pad", _pad("half"))

    def forward(self, x):
        return self.layer(x, x, tgt_key_padding_mask=self.pad)


def test_a_decoder_layer_refuses_it_in_one_line():
    """(its self-attention's fast path and formula are not told apart there: refused, naming the module)"""
    x = _inputs(2, 1)[0][0]
    with pytest.raises(CaptureError, match="nn.TransformerDecoderLayer.*values other than 0 and -inf") as e:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile_model(Decoder().eval(), [x], [(x,)])
    assert "\n" not in str(e.value)
