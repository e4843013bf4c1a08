"""nn.MultiheadAttention, nn.TransformerEncoderLayer (post- and pre-norm,
ReLU and GELU, batch-first or not) and nn.TransformerEncoder compile
(issue 15): capture swaps fx's opaque leaves for stand-ins that compute
the same function from the same parameters (ptec.capture_modules). Checks:
the stand-in equals PyTorch's module in float; the compiled program runs
on the C runtime with the bytes of the numpy int8 reference; its result is
close to PyTorch's float one (cosine >= 0.99), and on the M55 and M33
boards with the reference's bytes. LayerNorm runs in fp32
between a dequantize and a quantize, as docs/aot.md says. Masks:
test_transformer_masks.py; a general float mask is refused in one line."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.capture_modules import with_traceable_modules
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec import fp32_residuals
from ptec.ir import origin


def _fp32_residual(res, fallback):
    """A residual add ptec.fp32_residuals computes in fp32 (read only by an
    fp32 LayerNorm): an fp32 step on purpose."""
    return any(fallback.startswith(origin(n) + ":") for n in res.graph.nodes
               if n.attrs.get("fp32") == fp32_residuals.REASON)


class Classifier(nn.Module):
    def __init__(self, body, batch_first=True):
        super().__init__()
        self.embed = nn.Linear(10, 32)
        self.body = body
        self.head = nn.Linear(32, 4)
        self.batch_first = batch_first

    def forward(self, x):
        h = self.embed(x)
        if not self.batch_first:
            h = h.transpose(0, 1)
        h = self.body(h)
        if not self.batch_first:
            h = h.transpose(0, 1)
        return self.head(h.mean(1))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        out, _ = self.mha(x, x, x)
        return x + out


def layer(norm_first, activation="relu", batch_first=True):
    return nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, activation=activation,
                                      batch_first=batch_first, norm_first=norm_first)


CASES = {
    "post_norm_relu": lambda: Classifier(layer(False)),
    "pre_norm_gelu": lambda: Classifier(layer(True, "gelu")),
    "seq_first": lambda: Classifier(layer(False, batch_first=False), batch_first=False),
    "encoder_2_layers": lambda: Classifier(nn.TransformerEncoder(layer(True), 2, norm=nn.LayerNorm(32))),
    "attention": lambda: Classifier(Attention()),
}


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, 16, 10, generator=g),) for _ in range(16)]


@pytest.mark.parametrize("case", list(CASES))
def test_transformer_pieces_compile_and_match(case, tmp_path):
    torch.manual_seed(0)
    model = CASES[case]().eval()
    calib = _calib()
    x = calib[5][0]
    with torch.no_grad():
        ref = model(x)
        assert torch.allclose(with_traceable_modules(model)(x), ref, atol=1e-5)
    res = compile_model(model, [x], calib)
    # LayerNorm in fp32; a transpose right after it stays fp32 too (a cheap op); the residual adds it reads
    assert all("LayerNorm" in f or "permute_copy" in f or _fp32_residual(res, f) for f in res.lowered.fallbacks), \
        res.lowered.fallbacks
    prog = parse_program(res.data)
    want = run_program(prog, [x.numpy()])[0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    r = ref.numpy().ravel()
    g = np.asarray(got, np.float64).ravel()
    cosine = float(g @ r / np.linalg.norm(g) / np.linalg.norm(r))
    assert cosine >= 0.99, cosine


def test_a_float_mask_with_inf_is_refused_in_one_line():
    """Boolean and 0/-inf masks compile (test_transformer_masks.py), a float
    mask with other finite values is a bias (test_sequence_forms.py); +inf
    (torch's softmax gives NaN) does not."""
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, attn_mask=torch.full((4, 4), 0.5).fill_diagonal_(float("inf")))[0]
    x = torch.randn(1, 4, 8)
    with pytest.raises(CaptureError, match="mha \\(nn.MultiheadAttention\\): a float attention mask with NaN") as e:
        compile_model(Masked().eval(), [x], [(x,)])
    assert "\n" not in str(e.value)


def test_the_users_model_is_not_changed():
    model = CASES["post_norm_relu"]().eval()
    with_traceable_modules(model)
    assert isinstance(model.body, nn.TransformerEncoderLayer)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_encoder_layer_on_the_boards(target, tmp_path):
    torch.manual_seed(0)
    model = CASES["pre_norm_gelu"]().eval()
    calib = _calib()
    data = compile_model(model, [calib[0][0]], calib, target=target).data
    board_matches_reference(data, calib[7][0].numpy(), target, tmp_path)
