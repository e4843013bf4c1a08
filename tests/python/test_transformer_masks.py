"""Masked attention on the int8 path (issue 15): nn.MultiheadAttention's
attn_mask and key_padding_mask, nn.TransformerEncoderLayer's src_mask and
src_key_padding_mask, nn.TransformerEncoder's mask and src_key_padding_mask,
constants at trace time. The stand-ins fold them into one boolean mask and
the scores' softmax becomes ptec::quantized_softmax_masked (masked
positions are -infinity: probability exactly 0). Checks: the stand-in
equals PyTorch in float; the compiled program runs on the C runtime with
the bytes of the numpy int8 reference, on the host and on the M55 and M33
boards; its result is close to PyTorch's float one (cosine >= 0.99) at the
positions where PyTorch's output is defined (unpadded tokens; a fully
masked query row is NaN in PyTorch and all-zero probabilities in ptec,
docs/kernels.md). What stays refused is refused in one line naming the
module."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.capture_modules import CaptureModuleError, SelfAttention, attention_mask, with_traceable_modules
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.pte.upstream_rules import upstream_needs
from ptec import fp32_residuals
from ptec.ir import origin

T = 16          # tokens
PAD = 5         # padded keys at the end of the key padding cases


def _fp32_residual(res, fallback):
    """A residual add ptec.fp32_residuals computes in fp32 (read only by an
    fp32 LayerNorm): an fp32 step on purpose."""
    return any(fallback.startswith(origin(n) + ":") for n in res.graph.nodes
               if n.attrs.get("fp32") == fp32_residuals.REASON)


def layer(norm_first=False, batch_first=True):
    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=batch_first, norm_first=norm_first)


def causal_bool():
    return torch.triu(torch.ones(T, T, dtype=torch.bool), 1)


def padding(first_key=False):
    kpm = torch.zeros(1, T, dtype=torch.bool)
    kpm[0, T - PAD:] = True
    if first_key:
        kpm[0, 0] = True
    return kpm


class Tagger(nn.Module):
    """A per-token classifier around a masked body: [1, T, 10] -> [1, T, 4]."""

    def __init__(self, body, call, batch_first=True):
        super().__init__()
        self.embed = nn.Linear(10, 32)
        self.body = body
        self.head = nn.Linear(32, 4)
        self.call, self.batch_first = call, batch_first

    def forward(self, x):
        h = self.embed(x)
        if not self.batch_first:
            h = h.transpose(0, 1)
        h = self.call(self, h)
        if not self.batch_first:
            h = h.transpose(0, 1)
        return self.head(h)


def causal_encoder():
    """A causal 2-layer pre-norm encoder; the mask a bool buffer."""
    m = Tagger(nn.TransformerEncoder(layer(True), 2, norm=nn.LayerNorm(32)),
               lambda self, h: self.body(h, mask=self.causal))
    m.register_buffer("causal", causal_bool())
    return m


def causal_float_made_in_forward():
    """A causal post-norm layer, its 0/-inf float mask made in forward from
    no input (torch.fx records the ops; capture takes the value)."""
    return Tagger(layer(False), lambda self, h: self.body(
        h, src_mask=torch.triu(torch.full((T, T), float("-inf")), 1)))


def key_padding_layer():
    m = Tagger(layer(False), lambda self, h: self.body(h, src_key_padding_mask=self.kpm))
    m.register_buffer("kpm", padding())
    return m


def key_padding_encoder_seq_first():
    m = Tagger(nn.TransformerEncoder(layer(False, batch_first=False), 2),
               lambda self, h: self.body(h, src_key_padding_mask=self.kpm), batch_first=False)
    m.register_buffer("kpm", padding())
    return m


class HeadMasked(nn.Module):
    """nn.MultiheadAttention with a per-head float (0/-inf) attn_mask
    [heads, L, S] and a key padding mask, plus the residual."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)
        g = torch.Generator().manual_seed(3)
        keep = torch.rand(4, T, T, generator=g) < 0.7
        keep[:, torch.arange(T), torch.arange(T)] = True         # every query sees itself
        self.register_buffer("mask", torch.zeros(4, T, T).masked_fill(~keep, float("-inf")))
        self.register_buffer("kpm", padding())

    def forward(self, h):
        out, _ = self.mha(h, h, h, attn_mask=self.mask, key_padding_mask=self.kpm)
        return h + out


def causal_and_padded_first_key():
    """Query 0 may only see key 0, which is padded: a fully masked row."""
    m = Tagger(layer(False), lambda self, h: self.body(h, src_mask=self.causal, src_key_padding_mask=self.kpm))
    m.register_buffer("causal", causal_bool())
    m.register_buffer("kpm", padding(first_key=True))
    return m


CASES = {
    "causal_encoder": (causal_encoder, slice(0, T)),
    "causal_float_in_forward": (causal_float_made_in_forward, slice(0, T)),
    "key_padding_layer": (key_padding_layer, slice(0, T - PAD)),
    "key_padding_encoder_seq_first": (key_padding_encoder_seq_first, slice(0, T - PAD)),
    "mha_head_mask_and_padding": (lambda: Tagger(HeadMasked(), lambda self, h: self.body(h)), slice(0, T - PAD)),
    "fully_masked_row": (causal_and_padded_first_key, slice(1, T - PAD)),
}


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, T, 10, generator=g),) for _ in range(16)]


def _model(case):
    torch.manual_seed(0)
    return CASES[case][0]().eval()


def _masked_softmax_calls(prog):
    return [op for op in prog.execution_plan[0].operators if op.name == "ptec::quantized_softmax_masked"]


@pytest.mark.parametrize("case", list(CASES))
def test_masked_attention_compiles_and_matches(case, tmp_path):
    model, rows = _model(case), CASES[case][1]
    calib = _calib()
    x = calib[5][0]
    with torch.no_grad():
        ref = model(x)
        mine = with_traceable_modules(model, [x])(x)
    # the stand-in computes PyTorch's function where PyTorch's is defined
    assert torch.allclose(mine[:, rows], ref[:, rows], atol=1e-5)
    assert torch.isfinite(mine).all()
    res = compile_model(model, [x], calib)
    assert all("LayerNorm" in f or "permute_copy" in f or _fp32_residual(res, f) for f in res.lowered.fallbacks), \
        res.lowered.fallbacks
    prog = parse_program(res.data)
    assert _masked_softmax_calls(prog), "no masked softmax in the program"
    assert "runs on ptec's runtime only" in upstream_needs(prog)[0]
    assert "ptec::quantized_softmax_masked" in upstream_needs(prog)[0]
    # a calibration input and a fresh one from the same distribution
    fresh = torch.randn(1, T, 10, generator=torch.Generator().manual_seed(99))
    for xi in (x, fresh):
        with torch.no_grad():
            ref = model(xi)
        want = run_program(prog, [xi.numpy()])[0]
        got = host_runtime.run(prog, res.data, [xi.numpy()], workdir=str(tmp_path))[0]
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        r = ref[:, rows].numpy().ravel().astype(np.float64)
        g = np.asarray(got, np.float64)[:, rows].ravel()
        cosine = float(g @ r / np.linalg.norm(g) / np.linalg.norm(r))
        assert cosine >= 0.99, cosine


@pytest.mark.parametrize("case", ["causal_encoder", "key_padding_layer"])
def test_masked_attention_all_int8_with_int8_layernorm(case, tmp_path):
    """With --int8-layernorm nothing stays fp32."""
    model, rows = _model(case), CASES[case][1]
    calib = _calib()
    x = calib[3][0]
    res = compile_model(model, [x], calib, int8_layernorm=True)
    assert res.lowered.fallbacks == []
    prog = parse_program(res.data)
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(run_program(prog, [x.numpy()])[0]).tobytes()
    with torch.no_grad():
        r = model(x)[:, rows].numpy().ravel().astype(np.float64)
    g = np.asarray(got, np.float64)[:, rows].ravel()
    assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.99


def test_one_layer_called_twice_with_different_masks(tmp_path):
    """Masks made in forward reach the stand-in traced; each call gets the
    value of the same call in the example run (causal, then key padding)."""
    def call(self, h):
        h = self.body(h, src_mask=torch.triu(torch.ones(T, T, dtype=torch.bool), 1))
        kpm = torch.zeros(1, T, dtype=torch.bool)
        kpm[0, T - PAD:] = True
        return self.body(h, src_key_padding_mask=kpm)
    torch.manual_seed(0)
    model = Tagger(layer(False), call).eval()
    calib = _calib()
    x = calib[5][0]
    res = compile_model(model, [x], calib)
    prog = parse_program(res.data)
    assert len(_masked_softmax_calls(prog)) == 1     # one operator, called twice
    calls = [i for i in prog.execution_plan[0].chains[0].instructions
             if prog.execution_plan[0].operators[i.instr_args.op_index].name == "ptec::quantized_softmax_masked"]
    assert len(calls) == 2
    plan = prog.execution_plan[0]
    masks = [np.frombuffer(prog.constant_bytes(plan.values[c.instr_args.args[1]].val), np.uint8).reshape(T, T)
             for c in calls]
    assert np.array_equal(masks[0], np.triu(np.ones((T, T), np.uint8), 1))
    assert np.array_equal(masks[1], np.repeat(padding().numpy().astype(np.uint8), T, 0))
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(run_program(prog, [x.numpy()])[0]).tobytes()
    with torch.no_grad():
        r = model(x)[:, :T - PAD].numpy().ravel().astype(np.float64)
    g = np.asarray(got, np.float64)[:, :T - PAD].ravel()
    assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.99


def test_an_all_false_mask_is_plain_attention():
    """Nothing masked: the plain softmax (upstream's cortex_m::softmax)."""
    model = Tagger(layer(False), lambda self, h: self.body(h, src_mask=torch.zeros(T, T, dtype=torch.bool)))
    model.eval()
    calib = _calib()
    prog = parse_program(compile_model(model, [calib[0][0]], calib).data)
    assert not _masked_softmax_calls(prog)


def test_masking_changes_the_result():
    """The mask reaches the program: the causal and the unmasked layers differ."""
    calib = _calib()
    torch.manual_seed(0)
    masked = causal_float_made_in_forward().eval()
    torch.manual_seed(0)
    plain = Tagger(layer(False), lambda self, h: self.body(h)).eval()
    x = calib[5][0].numpy()
    outs = [run_program(parse_program(compile_model(m, [calib[0][0]], calib).data), [x])[0]
            for m in (masked, plain)]
    assert outs[0].tobytes() != outs[1].tobytes()
    # causal: the first token's output depends on the first token only
    x2 = x.copy()
    x2[0, 1:] = 0.0
    prog = parse_program(compile_model(masked, [calib[0][0]], calib).data)
    a, b = run_program(prog, [x])[0], run_program(prog, [x2])[0]
    assert a[0, 0].tobytes() == b[0, 0].tobytes()
    assert a[0, 1:].tobytes() != b[0, 1:].tobytes()


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("case", ["causal_encoder", "key_padding_layer", "mha_head_mask_and_padding",
                                  "fully_masked_row"])
def test_masked_attention_on_the_boards(case, target, tmp_path):
    model = _model(case)
    calib = _calib()
    data = compile_model(model, [calib[0][0]], calib, target=target).data
    board_matches_reference(data, calib[7][0].numpy(), target, tmp_path)


def _refused(model, match):
    x = torch.randn(1, T, 10)
    with pytest.raises(CaptureError, match=match) as e:
        compile_model(model.eval(), [x], [(x,)])
    assert "\n" not in str(e.value)
    return str(e.value)


def test_a_float_mask_with_nan_is_refused_in_one_line():
    # (a general float mask is a bias added to the scores: capture_attention_bias, test_sequence_forms.py)
    m = Tagger(layer(False), lambda self, h: self.body(h, src_mask=self.bias))
    bias = torch.randn(T, T) * 0.5
    bias[0, 1] = float("nan")
    m.register_buffer("bias", bias)
    msg = _refused(m, "NaN or \\+inf")
    assert msg.startswith("body (nn.TransformerEncoderLayer)"), msg


def test_a_constant_float_padding_mask_with_nan_is_refused_in_one_line():
    # (a bool mask from the input runs: capture_encoder_masks, test_sequence_forms.py; a float one computed in
    # forward too: test_attention_masks_more.py; a constant one with values other than 0 and -inf, a 0.5 or a
    # per-key bias, too: test_constant_float_padding.py)
    m = Tagger(layer(False), lambda self, h: self.body(h, src_key_padding_mask=self.pad))
    pad = torch.zeros(1, T)
    pad[0, 2] = float("nan")
    m.register_buffer("pad", pad)
    msg = _refused(m, "float key padding mask with NaN or \\+inf")
    assert msg.startswith("body (nn.TransformerEncoderLayer)"), msg


def test_a_mask_torch_refuses_is_reported_in_one_line():
    m = Tagger(nn.TransformerEncoder(layer(False), 1), lambda self, h: self.body(h, mask=self.mask))
    m.register_buffer("mask", torch.zeros(2, T, T, dtype=torch.bool))
    _refused(m, "the model fails on its example inputs")


def test_mask_shapes_the_stand_in_does_not_take_are_refused_in_one_line():
    for attn, kpm, match in ((torch.zeros(2, T, T, dtype=torch.bool), None, "attention mask of shape"),
                             (None, torch.zeros(2, T, dtype=torch.bool), "key padding mask of shape"),
                             (torch.zeros(T, T, dtype=torch.int32), None, "dtype torch.int32")):
        with pytest.raises(CaptureModuleError, match=match) as e:
            attention_mask(attn, kpm, False, 4, T, "body (nn.TransformerEncoderLayer)")
        assert "\n" not in str(e.value) and str(e.value).startswith("body (nn.TransformerEncoderLayer)")


def test_is_causal_in_the_stand_in():
    """torch 2.x's is_causal hint (1.13's modules have no such argument):
    with the causal mask it is that mask; without the mask, or with another
    mask, it is refused in one line."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(32, 4, batch_first=True).eval()
    attn = SelfAttention(mha)
    x = torch.randn(1, T, 32)
    with torch.no_grad():
        want = mha(x, x, x, attn_mask=causal_bool())[0]
        got = attn(x, x, x, attn_mask=causal_bool(), is_causal=True)[0]
    assert torch.allclose(got, want, atol=1e-5)
    for mask, match in ((None, "without the mask"), (padding().expand(T, T), "not the causal one")):
        with pytest.raises(CaptureModuleError, match=match) as e:
            attn(x, x, x, attn_mask=mask, is_causal=True)
        assert "\n" not in str(e.value)
