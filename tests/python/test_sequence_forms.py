"""Sequence and transformer forms a real model uses (issue 15, "audio,
sequence and transformer models compile"), each checked against PyTorch
float on the host runtime:

* nn.MultiheadAttention, nn.TransformerEncoderLayer / DecoderLayer and
  nn.Transformer at batch 1 and 2, batch first or not, with attention masks
  ([L, S] or [batch * heads, L, S], bool or 0/-inf float) and key padding
  masks ([batch, S]), and the attention weights as a model output
  (need_weights, averaged over the heads or per head);
* nn.LSTM / nn.GRU / nn.RNN given an initial state: constants, buffers, or
  an encoder's final state into a decoder (int8 kernel, unrolled, fp32);
* nn.LSTM(proj_size=...): h_t = W_hr (o_t * tanh(c_t));
* nn.utils.rnn.pack_padded_sequence with constant lengths through a
  recurrent layer and pad_packed_sequence back; pad_sequence of computed
  values.

Bounds are in output steps (the output's int8 step) over inputs whose
outputs span many steps; the host runtime must give the numpy reference
interpreter's bytes (within one step where an fp32 kernel runs)."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


def calibration(shape, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * 6.0 - 3.0,) for _ in range(n)]


def steps_from_float(model, shape, tmp_path, n_check=3, int8=False):
    """Compiles model for inputs of `shape`; returns the largest |ptec -
    float| in output steps over each output, after checking the host
    runtime against the reference interpreter, and the compile result.
    int8: the program must have no fp32 kernel."""
    model = model.eval()
    calib = calibration(shape)
    res = compile_model(model, [calib[0][0]], calib)
    if int8:
        assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    worst = []
    for (x,) in calib[:n_check]:
        want = run_program(prog, [x.numpy()])
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        with torch.no_grad():
            ref = model(x)
        ref = ref if isinstance(ref, (tuple, list)) else (ref,)
        assert len(got) == len(ref)
        for k, (g, w, r) in enumerate(zip(got, want, ref)):
            step = res.graph.node(res.graph.outputs[k]).qparams[0]
            g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
            if res.lowered.fallbacks:
                assert np.abs(g - w).max() <= step * 1.001, "ptec-run is not the reference interpreter"
            else:
                assert g.tobytes() == w.tobytes(), "ptec-run differs from the reference interpreter"
            r = r.numpy().astype(np.float64)
            assert g.shape == r.shape, (g.shape, r.shape)
            assert r.max() - r.min() >= 8 * step, f"output {k} spans only {(r.max() - r.min()) / step:.1f} steps"
            if len(worst) <= k:
                worst.append(0.0)
            worst[k] = max(worst[k], float(np.abs(g - r).max() / step))
    return max(worst), res


# ---------------------------------------------------------------------------
# Attention at any batch size

CAUSAL = torch.triu(torch.full((5, 5), float("-inf")), 1)


class Attention(nn.Module):
    """nn.MultiheadAttention(8, 2) called as a model calls it; form: which
    masks and outputs (the masks are constants made in forward or buffers)."""

    def __init__(self, form, batch, batch_first=True):
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
        self.form, self.batch_first = form, batch_first
        g = torch.Generator().manual_seed(1)
        self.register_buffer("mask3", torch.rand(batch * 2, 5, 5, generator=g) > 0.6)
        self.mask3[:, :, 0] = False             # every query keeps a key: no fully masked row
        pad = torch.zeros(batch, 5, dtype=torch.bool)
        pad[-1, 3:] = True                       # the last sequence is 3 long
        self.register_buffer("pad", pad)

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        f = self.form
        if f == "causal_float":
            return self.m(x, x, x, attn_mask=torch.triu(torch.full((5, 5), float("-inf")), 1))[0]
        if f == "causal_bool":
            return self.m(x, x, x, attn_mask=torch.ones(5, 5, dtype=torch.bool).triu(1), need_weights=False)[0]
        if f == "mask3":
            return self.m(x, x, x, attn_mask=self.mask3)[0]
        if f == "padding_bool":
            return self.m(x, x, x, key_padding_mask=self.pad)[0]
        if f == "padding_float":
            # (torch 1.13 ignores a float key padding mask next to a float attn_mask: a bool one here)
            pad = torch.zeros(self.pad.shape).masked_fill(self.pad, float("-inf"))
            return self.m(x, x, x, key_padding_mask=pad, attn_mask=CAUSAL.isneginf())[0]
        if f == "weights":
            y, w = self.m(x, x, x, key_padding_mask=self.pad)
            return y, w
        if f == "weights_per_head":
            y, w = self.m(x, x, x, attn_mask=CAUSAL, average_attn_weights=False)
            return y, w
        if f == "cross":
            return self.m(x, x * 0.5, x * 0.5)[0]
        if f == "cross_masked":
            return self.m(x, x * 0.5, x * 0.5, key_padding_mask=self.pad, attn_mask=self.mask3)[0]
        return self.m(x, x, x)[0]


ATTENTION_FORMS = ["plain", "causal_float", "causal_bool", "mask3", "padding_bool", "padding_float", "weights",
                   "weights_per_head", "cross", "cross_masked"]


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("form", ATTENTION_FORMS)
def test_multihead_attention_forms(form, batch, tmp_path):
    torch.manual_seed(0)
    model = Attention(form, batch)
    worst, res = steps_from_float(model, (batch, 5, 8), tmp_path)
    assert worst <= (4.5 if form.startswith("weights") else 4.0), f"{form}, batch {batch}: {worst:.2f} steps"
    if not form.startswith("weights"):        # weights not read: not in the program
        assert not res.lowered.fallbacks, res.lowered.fallbacks


@pytest.mark.parametrize("form", ["causal_float", "padding_bool", "weights"])
def test_multihead_attention_sequence_first(form, tmp_path):
    torch.manual_seed(0)
    worst, _ = steps_from_float(Attention(form, 2, batch_first=False), (2, 5, 8), tmp_path)
    assert worst <= 3.5, worst


class Layers(nn.Module):
    def __init__(self, kind, batch, batch_first=True):
        super().__init__()
        self.kind, self.batch_first = kind, batch_first
        kw = dict(dropout=0.0, batch_first=batch_first)
        self.m = {"encoder": lambda: nn.TransformerEncoderLayer(8, 2, 16, **kw),
                  "decoder": lambda: nn.TransformerDecoderLayer(8, 2, 16, **kw),
                  "decoder_memory": lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, **kw), 2),
                  "transformer": lambda: nn.Transformer(8, 2, 1, 1, 16, **kw),
                  "transformer_memory": lambda: nn.Transformer(8, 2, 1, 1, 16, **kw)}[kind]()
        pad = torch.zeros(batch, 5, dtype=torch.bool)
        pad[0, 4:] = True
        self.register_buffer("pad", pad)

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        causal = torch.triu(torch.full((5, 5), float("-inf")), 1)
        if self.kind == "encoder":
            y = self.m(x, src_mask=causal, src_key_padding_mask=self.pad)
        elif self.kind == "decoder":
            y = self.m(x, x * 0.5, tgt_mask=causal, tgt_key_padding_mask=self.pad)
        elif self.kind == "decoder_memory":
            y = self.m(x, x * 0.5, memory_mask=causal.isneginf(), memory_key_padding_mask=self.pad)
        elif self.kind == "transformer_memory":
            y = self.m(x, x, tgt_mask=causal, memory_key_padding_mask=self.pad)
        else:
            y = self.m(x, x, src_key_padding_mask=self.pad, tgt_mask=causal)
        return y if self.batch_first else y.transpose(0, 1)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("kind", ["encoder", "decoder", "decoder_memory", "transformer", "transformer_memory"])
def test_transformer_layers_any_batch(kind, batch, batch_first, tmp_path):
    torch.manual_seed(0)
    worst, _ = steps_from_float(Layers(kind, batch, batch_first), (batch, 5, 8), tmp_path)
    assert worst <= 5.5, f"{kind}, batch {batch}: {worst:.2f} steps"


def test_a_padding_mask_of_another_batch_is_refused():
    class Wrong(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.MultiheadAttention(8, 2, batch_first=True)
            self.register_buffer("pad", torch.zeros(3, 5, dtype=torch.bool))

        def forward(self, x):
            return self.m(x, x, x, key_padding_mask=self.pad)[0]
    x = torch.randn(2, 5, 8)
    with pytest.raises(Exception) as e:
        compile_model(Wrong().eval(), [x], [(x,)])
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------
# Recurrent layers given an initial state, projected LSTMs

RNNS = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}


class GivenState(nn.Module):
    """A recurrent layer started from a state the model holds: zeros made
    in forward, ones * 0.1, or a buffer (random, fixed)."""

    def __init__(self, kind, state, batch, layers=1, bidirectional=False, proj=0, batch_first=True):
        super().__init__()
        extra = dict(proj_size=proj) if proj else {}
        self.rnn = RNNS[kind](6, 8, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                              **extra)
        n, out = layers * (2 if bidirectional else 1), proj or 8
        g = torch.Generator().manual_seed(2)
        self.register_buffer("h0", torch.rand(n, batch, out, generator=g) - 0.5)
        self.register_buffer("c0", torch.rand(n, batch, 8, generator=g) * 2 - 1)
        self.kind, self.state, self.shape, self.batch_first = kind, state, (n, batch, out), batch_first

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        n, b, out = self.shape
        if self.state == "zeros":
            h, c = torch.zeros(n, b, out), torch.zeros(n, b, 8)
        elif self.state == "ones":
            h, c = torch.ones(n, b, out) * 0.1, torch.ones(n, b, 8) * 0.1
        elif self.state == "buffer":
            h, c = self.h0, self.c0
        else:
            h = c = None
        state = None if h is None else ((h, c) if self.kind == "lstm" else h)
        y, _ = self.rnn(x, state) if state is not None else self.rnn(x)
        return y if self.batch_first else y.transpose(0, 1)


class EncoderDecoder(nn.Module):
    """A seq2seq pair: the encoder's final state starts the decoder."""

    def __init__(self, kind, layers=1, proj=0):
        super().__init__()
        extra = dict(proj_size=proj) if proj else {}
        self.enc = RNNS[kind](6, 8, num_layers=layers, batch_first=True, **extra)
        self.dec = RNNS[kind](6, 8, num_layers=layers, batch_first=True, **extra)
        self.kind = kind

    def forward(self, x):
        _, state = self.enc(x)
        y, _ = self.dec(x.flip(1) * 0.5, state)
        return y


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("kind, state", [("lstm", "zeros"), ("lstm", "ones"), ("lstm", "buffer"),
                                         ("gru", "buffer"), ("rnn", "ones")])
def test_recurrent_layer_given_a_state(kind, state, batch, tmp_path):
    torch.manual_seed(0)
    worst, res = steps_from_float(GivenState(kind, state, batch), (batch, 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, f"{kind} from {state}, batch {batch}: {worst:.2f} steps"


@pytest.mark.parametrize("layers, bidirectional, batch_first", [(2, False, True), (1, True, True),
                                                                 (2, True, False)])
def test_lstm_given_a_state_layers_and_directions(layers, bidirectional, batch_first, tmp_path):
    torch.manual_seed(0)
    model = GivenState("lstm", "buffer", 2, layers, bidirectional, batch_first=batch_first)
    worst, _ = steps_from_float(model, (2, 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, worst


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_encoder_state_into_decoder(kind, batch, tmp_path):
    torch.manual_seed(0)
    worst, _ = steps_from_float(EncoderDecoder(kind), (batch, 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, worst


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("layers, bidirectional, state", [(1, False, None), (2, False, None), (1, True, None),
                                                          (1, False, "buffer")])
def test_projected_lstm(layers, bidirectional, state, batch, tmp_path):
    torch.manual_seed(0)
    model = GivenState("lstm", state, batch, layers, bidirectional, proj=3)
    worst, _ = steps_from_float(model, (batch, 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, worst


def test_projected_lstm_encoder_decoder(tmp_path):
    torch.manual_seed(0)
    worst, _ = steps_from_float(EncoderDecoder("lstm", layers=2, proj=3), (2, 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, worst


def test_fp32_path_with_a_given_state(tmp_path):
    """An fp32 kernel in the program (a LayerNorm after the decoder): the
    recurrent steps with a given state stay within the bound too."""
    class Normed(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = EncoderDecoder("lstm")
            self.norm = nn.LayerNorm(8)

        def forward(self, x):
            return self.norm(self.body(x))
    torch.manual_seed(0)
    worst, res = steps_from_float(Normed(), (2, 5, 6), tmp_path)
    assert res.lowered.fallbacks
    assert worst <= 6.0, worst


def test_a_zero_state_keeps_the_lstm_kernel(tmp_path):
    """torch.zeros(..) given as the state is the zero state: the layer stays
    one ptec::quantized_lstm (CMSIS-NN's numerics, int16 cell); a nonzero
    state unrolls it."""
    torch.manual_seed(0)
    _, res = steps_from_float(GivenState("lstm", "zeros", 2), (2, 5, 6), tmp_path)
    ops = [op.name for op in parse_program(res.data).execution_plan[0].operators]
    assert "ptec::quantized_lstm" in ops, ops
    _, res = steps_from_float(GivenState("lstm", "buffer", 2), (2, 5, 6), tmp_path)
    ops = [op.name for op in parse_program(res.data).execution_plan[0].operators]
    assert "ptec::quantized_lstm" not in ops, ops


# ---------------------------------------------------------------------------
# Packed sequences with constant lengths

class Packed(nn.Module):
    """pack_padded_sequence(x, lengths) through a recurrent layer and
    pad_packed_sequence back; returns the padded output and h_n's last
    layer (the state at each sequence's own last step)."""

    def __init__(self, kind, lengths, bidirectional=False, sorted_=True, total_length=None, padding_value=0.0,
                 lengths_as="list"):
        super().__init__()
        self.rnn = RNNS[kind](6, 8, batch_first=True, bidirectional=bidirectional)
        self.kind, self.lengths, self.sorted = kind, lengths, sorted_
        self.total_length, self.padding_value, self.lengths_as = total_length, padding_value, lengths_as
        self.register_buffer("lens", torch.tensor(lengths))

    def forward(self, x):
        lengths = {"list": self.lengths, "buffer": self.lens,
                   "tensor": torch.tensor(self.lengths)}[self.lengths_as]
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=self.sorted)
        out, state = self.rnn(packed)
        y, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, padding_value=self.padding_value,
                                                total_length=self.total_length)
        h = state[0] if self.kind == "lstm" else state
        return y, h[-1]


@pytest.mark.parametrize("kind, lengths, extra", [
    ("lstm", [5, 3], {}),
    ("gru", [5, 3], {}),
    ("rnn", [5, 3], {}),
    ("lstm", [4], {}),                                   # batch 1: the padded steps past 4 dropped
    ("gru", [2, 5], dict(sorted_=False)),
    ("lstm", [5, 3], dict(bidirectional=True)),
    ("gru", [4, 3], dict(total_length=5, lengths_as="buffer")),
    ("lstm", [5, 2], dict(padding_value=-1.0, lengths_as="tensor")),
])
def test_packed_sequences(kind, lengths, extra, tmp_path):
    torch.manual_seed(0)
    model = Packed(kind, lengths, **extra)
    with torch.no_grad():
        y, _ = model(torch.randn(len(lengths), 5, 6))
    for b, n in enumerate(lengths):         # the oracle itself: zero (or padding_value) past each length
        assert bool((y[b, n:] == extra.get("padding_value", 0.0)).all())
    worst, _ = steps_from_float(model, (len(lengths), 5, 6), tmp_path, int8=True)
    assert worst <= 6.0, worst


def test_pad_sequence_of_computed_values(tmp_path):
    class Pad(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 4)

        def forward(self, x):
            a, b = self.fc(x[0]), torch.tanh(x[1, :3]) * 2.0
            return nn.utils.rnn.pad_sequence([a, b[:, :4]], batch_first=True, padding_value=0.5), \
                nn.utils.rnn.pad_sequence([b[:, :4], a])
    torch.manual_seed(0)
    worst, _ = steps_from_float(Pad(), (2, 5, 6), tmp_path, int8=True)
    assert worst <= 1.5, worst


def test_computed_lengths_without_total_length_are_refused(tmp_path):
    """(computed lengths run: test_packed_lengths_of_the_input; torch's padded
    length is then max(lengths), which depends on the input)"""
    from model_checks import cli_refusal
    line = cli_refusal(tmp_path, """
import torch, torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(6, 8, batch_first=True)
    def forward(self, x):
        lengths = (x[:, :, 0] > 0).sum(1)
        y, _ = self.rnn(nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        return nn.utils.rnn.pad_packed_sequence(y, batch_first=True)[0]
def model():
    return M().eval(), (torch.rand(2, 5, 6),)
""")
    assert "pad_packed_sequence of lengths computed from the model's input" in line and "total_length=5" in line, line


def test_batch_two_transformer_layer_on_the_m55(tmp_path):
    """A batch-2 encoder layer with a causal and a key padding mask on the
    emulated Cortex-M55: the reference interpreter's bytes."""
    from model_checks import board_matches_reference
    torch.manual_seed(0)
    model = Layers("encoder", 2).eval()
    calib = calibration((2, 5, 8))
    data = compile_model(model, [calib[0][0]], calib, target="cortex-m55").data
    board_matches_reference(data, calib[5][0].numpy(), "cortex-m55", tmp_path)


def test_unbatched_attention_with_weights(tmp_path):
    """torch's unbatched form: query [L, E], key padding mask [S], weights [L, S]."""
    class Unbatched(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            q = x[0]
            y, w = self.m(q, q, q, attn_mask=CAUSAL.isneginf(), key_padding_mask=torch.arange(5) > 3)
            return y, w
    torch.manual_seed(0)
    worst, _ = steps_from_float(Unbatched(), (1, 5, 8), tmp_path)
    assert worst <= 4.5, worst


# ---------------------------------------------------------------------------
# Forms from the session-18 probe: masks computed from the input in encoder
# layers, float attention biases, lengths of the input, log(softmax), the
# one-hot of an argmax by scatter, max_unpool's default size, and an input
# batch norm over channels of very different scales

def _steps(model, calib, tmp_path, n_check=3, kept=None):
    """Largest |ptec - torch| in output steps over the first output of the
    first n_check samples (multi-input); kept(sample) -> bool [B, T] picks the
    positions compared (None: all). The host runtime must give the
    reference interpreter's bytes (one step where an fp32 kernel runs)."""
    model = model.eval()
    res = compile_model(model, list(calib[0]), calib)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for sample in calib[:n_check]:
        arrays = [t.numpy() for t in sample]
        got = np.asarray(host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0], np.float64)
        want = np.asarray(run_program(prog, arrays)[0], np.float64)
        assert np.abs(got - want).max() <= step * 1.001
        with torch.no_grad():
            ref = model(*sample)
        ref = (ref[0] if isinstance(ref, (tuple, list)) else ref).numpy().astype(np.float64)
        assert got.shape == ref.shape, (got.shape, ref.shape)
        assert ref.max() - ref.min() >= 8 * step
        err = np.abs(got - ref) / step
        if kept is not None:
            err = err[kept(sample).numpy()]
        worst = max(worst, float(err.max()))
    return worst, res


class ComputedPadding(nn.Module):
    """An encoder (layer) whose key padding mask is computed from the input:
    the all-zero rows of x (padding at the end)."""

    def __init__(self, whole, nested=False, batch_first=True, norm_first=False):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
        self.m = nn.TransformerEncoder(layer, 2, enable_nested_tensor=nested) if whole else layer
        self.batch_first = batch_first

    def forward(self, x):
        pad = x.abs().sum(-1) == 0                           # [B, T]
        if not self.batch_first:
            x = x.transpose(0, 1)
        y = self.m(x, src_key_padding_mask=pad)
        return y if self.batch_first else y.transpose(0, 1)


def _padded(n=4, seed=0):
    """[2, 6, 8] samples whose rows past each length are zero; one sequence
    always runs whole (torch's nested fast path keeps all 6 steps then)."""
    out = []
    for i, (x,) in enumerate(calibration((2, 6, 8), n, seed)):
        x[(i + 1) % 2, 2 + i % 4:] = 0
        out.append((x,))
    return out


def _kept(sample):
    return sample[0].abs().sum(-1) != 0


@pytest.mark.parametrize("form", ["layer", "encoder", "encoder_nested", "sequence_first", "norm_first"])
def test_encoder_with_a_padding_mask_computed_from_the_input(form, tmp_path):
    """Kept positions against torch; the nested fast path's padded positions
    are zero in both (torch pads its nested output with zeros)."""
    torch.manual_seed(0)
    model = ComputedPadding(form != "layer", nested=form == "encoder_nested", batch_first=form != "sequence_first",
                            norm_first=form == "norm_first")
    worst, _ = _steps(model, _padded(), tmp_path, n_check=4, kept=None if form == "encoder_nested" else _kept)
    assert worst <= 6.0, f"{form}: {worst:.2f} steps"


def test_encoder_nested_output_shorter_than_the_input_is_refused():
    """torch's nested fast path cuts the output to the longest kept length,
    which depends on the input: refused naming enable_nested_tensor=False."""
    torch.manual_seed(0)
    samples = _padded()
    for (x,) in samples:
        x[:, 5:] = 0
    with pytest.raises(CaptureError, match="enable_nested_tensor=False") as e:
        compile_model(ComputedPadding(True, nested=True).eval(), [samples[0][0]], samples)
    assert "\n" not in str(e.value)


def _alibi(heads, length):
    slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)])
    d = torch.arange(length)[None, :] - torch.arange(length)[:, None]
    return (-slopes[:, None, None] * d.abs()[None].float()).masked_fill(d[None] > 0, float("-inf"))


class FloatBias(nn.Module):
    """A float attention mask with values other than 0 and -inf (a buffer),
    added to the scores as torch does."""

    def __init__(self, form, batch):
        super().__init__()
        self.form = form
        self.a = nn.MultiheadAttention(8, 2, batch_first=True)
        self.l = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        g = torch.Generator().manual_seed(3)
        self.register_buffer("bias", torch.randn(5, 5, generator=g))
        self.register_buffer("alibi", _alibi(2, 5).repeat(batch, 1, 1))
        pad = torch.zeros(batch, 5, dtype=torch.bool)
        pad[-1, 3:] = True
        self.register_buffer("pad", pad)

    def forward(self, x):
        if self.form == "bias":
            return self.a(x, x, x, attn_mask=self.bias, need_weights=False)[0]
        if self.form == "alibi_causal":
            return self.a(x, x, x, attn_mask=self.alibi, need_weights=False)[0]
        if self.form == "bias_and_padding":
            return self.a(x, x, x, attn_mask=self.bias, key_padding_mask=self.pad, need_weights=False)[0]
        if self.form == "weights":
            return self.a(x, x, x, attn_mask=self.bias)
        return self.l(x, src_mask=self.bias)


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("form", ["bias", "alibi_causal", "bias_and_padding", "weights", "encoder"])
def test_float_attention_mask_is_a_bias(form, batch, tmp_path):
    torch.manual_seed(0)
    worst, _ = steps_from_float(FloatBias(form, batch), (batch, 5, 8), tmp_path)
    assert worst <= 4.5, f"{form}, batch {batch}: {worst:.2f} steps"


class PackedLengths(nn.Module):
    """pack_padded_sequence with the lengths a model input (int64)."""

    def __init__(self, cell, bidirectional, read):
        super().__init__()
        self.r = cell(6, 8, batch_first=True, bidirectional=bidirectional)
        self.read = read

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, h = self.r(packed)
        if self.read == "h_n":
            return h[0] if isinstance(h, tuple) else h
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]


LENGTHS = [[7, 4], [3, 7], [5, 5], [2, 6], [7, 1], [4, 7]]


@pytest.mark.parametrize("read", ["h_n", "output"])
@pytest.mark.parametrize("cell,bidirectional", [(nn.GRU, False), (nn.LSTM, False), (nn.LSTM, True), (nn.RNN, True)])
def test_packed_lengths_of_the_input(cell, bidirectional, read, tmp_path):
    """Each sequence stops at its own length (a computed factor per step):
    h_n is its state there, the output zero past it, as torch's."""
    torch.manual_seed(0)
    xs = calibration((2, 7, 6), len(LENGTHS))
    samples = [(x, torch.tensor(n)) for (x,), n in zip(xs, LENGTHS)]
    worst, _ = _steps(PackedLengths(cell, bidirectional, read), samples, tmp_path, n_check=len(samples))
    assert worst <= 5.0, f"{cell.__name__} {read}: {worst:.2f} steps"


class Call1(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("form", ["method", "function", "module", "both_read"])
def test_log_of_softmax_is_log_softmax(form, tmp_path):
    """log(softmax(x)) runs as log_softmax(x): int8 probabilities would lose
    the small ones (22 steps off)."""
    soft = nn.Softmax(-1)
    fn = {"method": lambda x: x.softmax(-1).log(),
          "function": lambda x: torch.log(torch.nn.functional.softmax(x, dim=-1)),
          "module": lambda x: torch.log(soft(x)),
          "both_read": lambda x: (x.softmax(-1).log(), x.softmax(-1) * 2.0)}[form]
    model = Call1(fn)
    model.soft = soft           # the module form's nn.Softmax, installed
    worst, res = steps_from_float(model, (1, 4, 8), tmp_path)
    assert worst <= 1.5, f"{form}: {worst:.2f} steps"          # (both_read: the int8 softmax * 2)
    assert not any(n.op == "elementwise" and n.attrs.get("fn") == "log" for n in res.graph.nodes)


def test_one_hot_of_the_argmax_by_scatter(tmp_path):
    """zeros_like(x).scatter_(-1, x.argmax(-1, keepdim=True), 1.0): exact."""
    for value in (1.0, -2.5):
        fn = (lambda v: lambda x: torch.zeros_like(x).scatter_(-1, x.argmax(-1, keepdim=True), v))(value)
        worst, res = steps_from_float(Call1(fn), (1, 4, 8), tmp_path)
        assert worst <= 0.01, worst
        assert not res.lowered.fallbacks, res.lowered.fallbacks


def test_max_unpool_without_output_size_is_torchs_size(tmp_path):
    """F.max_unpool2d(y, i, 2) after a pool of a 5x7 input: torch's default
    output (in - 1) * stride + kernel = 4x6; an example whose indices fall
    past it fails in torch too, and the message names output_size."""
    import torch.nn.functional as F

    def unpooled(x):
        y, i = F.max_pool2d(x, 2, return_indices=True)
        return F.max_unpool2d(y, i, 2)
    model = Call1(unpooled)
    samples = []
    for (x,) in calibration((1, 1, 5, 7), 24, seed=4):
        try:
            model(x)
            samples.append((x,))
        except RuntimeError:
            bad = x
    assert len(samples) >= 3
    worst, res = _steps(model, samples, tmp_path)
    assert worst <= 0.5, worst
    assert list(res.graph.node(res.graph.outputs[0]).shape) == [1, 1, 4, 6]
    with pytest.raises(CaptureError, match=r"invalid max index.*output_size=x.shape\[2:\]") as e:
        compile_model(model, [bad], [(bad,)])
    assert "\n" not in str(e.value)


def _spread(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(1, 4, generator=g) * torch.tensor([100.0, 0.01, 1.0, 1.0])
             + torch.tensor([1000.0, 0.0, 5.0, 0.0]),) for _ in range(n)]


def test_input_batch_norm_over_channels_of_different_scales(tmp_path):
    """BatchNorm1d first, channels 1000 +- 100 next to 0 +- 0.01: the
    normalization runs in fp32 before quantizing (one int8 grid would lose
    the narrow channel: 60 steps off), and the compile log says so."""
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(4)
    bn.running_mean.copy_(torch.tensor([1000.0, 0.0, 5.0, 0.0]))
    bn.running_var.copy_(torch.tensor([100.0 ** 2, 0.01 ** 2, 1.0, 1.0]))
    model = nn.Sequential(bn, nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    samples = _spread()
    worst, res = _steps(model, samples, tmp_path, n_check=4)
    assert worst <= 2.5, worst
    assert any("nn.BatchNorm1d" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    lines = []
    compile_model(model, [samples[0][0]], samples, log=lines.append)
    assert any("span ranges" in line and "times apart" in line for line in lines), lines


def test_input_batch_norm_over_like_channels_stays_int8(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    worst, res = _steps(model, [(torch.rand(1, 4) * 6 - 3,) for _ in range(8)], tmp_path)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert worst <= 3.0, worst


class PackedConstant(nn.Module):
    """An nn.LSTM over pack_padded_sequence with constant lengths."""

    def __init__(self, read, layers, lengths):
        super().__init__()
        self.r = nn.LSTM(6, 8, num_layers=layers, batch_first=True)
        self.read, self.lengths = read, list(lengths)

    def forward(self, x):
        out, (h, c) = self.r(nn.utils.rnn.pack_padded_sequence(x, self.lengths, batch_first=True,
                                                               enforce_sorted=False))
        if self.read == "h_n":
            return h
        if self.read == "c_n":
            return c
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=7)[0]


@pytest.mark.parametrize("read", ["output", "h_n", "c_n"])
@pytest.mark.parametrize("layers,lengths", [(1, (7, 4)), (2, (4, 7))])
def test_packed_lstm_runs_on_its_kernel(read, layers, lengths, tmp_path):
    """A packed LSTM runs on ptec::quantized_lstm as unpacked (the unrolled
    int8 steps were 5.1 output steps off on [7, 4], the kernel 1.9): the
    padded steps run too (an LSTM is causal), the output is zeroed past each
    length, h_n taken at each one's last step; a model reading c_n unrolls
    what computes c_n (capture_lstm_final_cell keeps a layer's kernel where
    the kernel's out feeds the next layer)."""
    torch.manual_seed(0)
    worst, res = steps_from_float(PackedConstant(read, layers, lengths), (2, 7, 6), tmp_path)
    kernels = sum(n.op == "lstm" for n in res.graph.nodes)
    assert kernels == layers if read != "c_n" else kernels < layers, kernels
    assert worst <= (6.0 if read == "c_n" else 3.0), f"{read}: {worst:.2f} steps"     # (unrolled: as before)
