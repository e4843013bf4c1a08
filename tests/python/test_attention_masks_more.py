"""A float key_padding_mask computed in forward (issue 15,
capture_computed_weights._mha): `(x[..., 0] > t).float() * -1e9`,
`torch.where(pad, -inf, 0.)`, a per-key bias, in
F.multi_head_attention_forward, nn.MultiheadAttention and
nn.TransformerEncoderLayer.

torch 1.13's formula adds a float key_padding_mask [N, S] to the scores as
[N h, 1, S] (every query, every head of its element), or-s its nonzeros
into a bool attn_mask, and its inference fast path (eval, no grad:
nn.MultiheadAttention batch first, even heads, no attn_mask, self-attention;
the encoder layer's own fast path) reads it as a bool of its nonzeros.
ptec follows each: the masking part (a fill <= -1e4 of a bool) is the
softmax of the kept positions, the rest an int8 add before it (the one
additive step of _mha, shared with float attn_masks). Beside a float
attn_mask both are added (torch 2.x; torch 1.13 ignores the key padding
mask there, docs/aot.md): the oracle there is torch given the sum as one
attn_mask.

Oracle: torch on the same inputs (float32, no grad), the program within
its bound in output steps (measured figures beside each case), the host
runtime's bytes equal to the reference interpreter's; the inputs mask no
whole row. Refused in one line: a float mask holding NaN or +inf."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec import fp32_residuals
from ptec.ir import origin

E, H, L = 8, 2, 5
torch.manual_seed(21)
MHA = nn.MultiheadAttention(E, H).eval()
W_IN, B_IN = MHA.in_proj_weight.detach().clone(), MHA.in_proj_bias.detach().clone()
W_OUT, B_OUT = MHA.out_proj.weight.detach().clone(), MHA.out_proj.bias.detach().clone()


def _fp32_residual(res, fallback):
    """A residual add ptec.fp32_residuals computes in fp32 (read only by an
    fp32 LayerNorm): an fp32 step on purpose."""
    return any(fallback.startswith(origin(n) + ":") for n in res.graph.nodes
               if n.attrs.get("fp32") == fp32_residuals.REASON)


def _padding(x, kind):
    """A float key padding mask [N, L] computed from x [L, N, E]."""
    pad = x[:, :, 0].t() > 0.5         # (a moved bool, `(x[:, :, 0] > 0.5).t()`, too: test_moved_bool_masks.py)
    if kind == "mul":
        return pad.float() * -1e9
    if kind == "where":
        return torch.where(pad, float("-inf"), 0.0)
    if kind == "bias":                  # a per-key bias, no masking
        return x[:, :, 1].t() * 0.75
    if kind == "where bias":            # masked keys and a bias on the others
        return torch.where(pad, float("-inf"), x[:, :, 1].t() * 0.75)
    if kind == "bool":
        return pad
    if kind == "zeros":
        return torch.zeros(pad.shape)
    return pad.float()                  # 0 / 1 values: a bias of +1 (added) or masked (read as a bool)


class Functional(nn.Module):
    """F.multi_head_attention_forward on x [L, N, E] with a computed float key_padding_mask."""

    def __init__(self, kind, attn=None):
        super().__init__()
        self.kind, self.attn = kind, attn
        self.register_buffer("causal", torch.triu(torch.ones(L, L, dtype=torch.bool), 1))

    def masks(self, x):
        kpm = _padding(x, self.kind)
        if self.attn == "causal":
            return kpm, self.causal
        if self.attn == "float":        # a computed float attn_mask too
            return kpm, x[:, 0, 2:2 + L] * 0.5
        if self.attn == "alibi":        # a constant causal ALiBi made in forward, filled with -1e9
            i = torch.arange(float(L))
            return kpm, (-(i[None] - i[:, None]).abs() * 0.5).masked_fill(self.causal, -1e9)
        return kpm, None

    def forward(self, x):
        kpm, am = self.masks(x)
        return F.multi_head_attention_forward(x, x, x, E, H, W_IN, B_IN, None, None, False, 0.0, W_OUT, B_OUT,
                                              training=False, key_padding_mask=kpm, attn_mask=am,
                                              need_weights=False)[0]


class SumOracle(Functional):
    """torch given a float attn_mask and a float key_padding_mask as their sum (torch 2.x's merge)."""

    def forward(self, x):
        kpm, am = self.masks(x)
        n = x.shape[1]
        merged = am.unsqueeze(0) + kpm.reshape(n, 1, 1, L).expand(n, H, 1, L).reshape(n * H, 1, L)
        return F.multi_head_attention_forward(x, x, x, E, H, W_IN, B_IN, None, None, False, 0.0, W_OUT, B_OUT,
                                              training=False, attn_mask=merged, need_weights=False)[0]


class Module(nn.Module):
    """nn.MultiheadAttention(x, x, x, key_padding_mask=float) on x [L, N, E]."""

    def __init__(self, kind, batch_first):
        super().__init__()
        self.kind, self.batch_first = kind, batch_first
        self.m = nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.m.load_state_dict(MHA.state_dict())

    def forward(self, x):
        kpm = _padding(x, self.kind)
        v = x.transpose(0, 1) if self.batch_first else x
        y = self.m(v, v, v, key_padding_mask=kpm, need_weights=False)[0]
        return y.transpose(0, 1) if self.batch_first else y


class Weights(Module):
    """The per-head attention weights [N, h, L, S] (sequence first: torch's formula adds the mask)."""

    def forward(self, x):
        return self.m(x, x, x, key_padding_mask=_padding(x, self.kind), average_attn_weights=False)[1]


class Unbatched(Module):
    """Unbatched [L, E] (x's first element): a key padding mask [S], added (torch's fast path takes batches)."""

    def forward(self, x):
        v = x[:, 0]
        return self.m(v, v, v, key_padding_mask=_padding(x, self.kind)[0], need_weights=False)[0]


class Layer(nn.Module):
    """nn.TransformerEncoderLayer(x, src_key_padding_mask=float) on x [L, N, E]."""

    def __init__(self, kind, batch_first, layers=0):
        super().__init__()
        self.kind, self.batch_first = kind, batch_first
        torch.manual_seed(4)
        self.layer = nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=batch_first).eval()
        if layers:          # nn.TransformerEncoder (no nested tensors: each layer's own path)
            self.layer = nn.TransformerEncoder(self.layer, layers, enable_nested_tensor=False).eval()

    def forward(self, x):
        kpm = _padding(x, self.kind)
        v = x.transpose(0, 1) if self.batch_first else x
        y = self.layer(v, src_key_padding_mask=kpm)
        return y.transpose(0, 1) if self.batch_first else y


CASES = {   # name: (model, oracle or None (the model), input batch, bound in output steps)
    "F: pad.float() * -1e9": (lambda: Functional("mul"), None, 2, 3.5),  # 2.14
    "F: where(pad, -inf, 0)": (lambda: Functional("where"), None, 2, 3.5),  # 2.14
    "F: a per-key bias": (lambda: Functional("bias"), None, 2, 4.5),  # 3.95
    "F: where(pad, -inf, bias)": (lambda: Functional("where bias"), None, 2, 3.5),  # 2.11
    "F: 0/1 beside a bool attn_mask (its nonzeros mask)": (lambda: Functional("ones", "causal"), None, 2, 3.5),  # 2.18
    "F: beside a computed float attn_mask (both added)": (lambda: Functional("where bias", "float"),  # 2.14
                                                          lambda: SumOracle("where bias", "float"), 2, 3.5),
    # (a constant -1e9 fill beside a computed key_padding_mask masks, as -inf: capture_attention_bias.split_additive)
    "F: bool beside a constant ALiBi with -1e9 above the diagonal": (lambda: Functional("bool", "alibi"), None, 2,
                                                                    3.5),  # 2.18
    "F: beside a constant ALiBi with -1e9 (both added)": (lambda: Functional("where bias", "alibi"),
                                                          lambda: SumOracle("where bias", "alibi"), 2, 3.5),  # 3.18
    "nn.MultiheadAttention: 0/1 added (sequence first)": (lambda: Module("ones", False), None, 2, 3.5),  # 2.76
    "nn.MultiheadAttention: 0/1 read as a bool (fast path)": (lambda: Module("ones", True), None, 2, 3.5),  # 2.14
    "nn.MultiheadAttention: pad.float() * -1e9 (fast path)": (lambda: Module("mul", True), None, 1, 3.5),  # 1.82
    "nn.MultiheadAttention: the weights per head, where(pad, -inf, bias)": (
        lambda: Weights("where bias", False), None, 2, 3.5),  # 2.34
    "nn.MultiheadAttention unbatched: a per-key bias": (lambda: Unbatched("bias", True), None, 1, 3.5),  # 2.72
    "nn.TransformerEncoderLayer: pad.float() * -1e9": (lambda: Layer("mul", False), None, 2, 3.5),  # 1.85
    "nn.TransformerEncoderLayer: 0/1 added (sequence first)": (lambda: Layer("ones", False), None, 2, 3.5),  # 2.56
    "nn.TransformerEncoderLayer: 0/1 read as a bool (fast path)": (lambda: Layer("ones", True), None, 2, 3.5),  # 1.85
    "nn.TransformerEncoder: 0/1 added (sequence first)": (lambda: Layer("ones", False, 2), None, 2, 3.5),  # 2.40
    "nn.TransformerEncoder: 0/1 read as a bool (fast path)": (lambda: Layer("ones", True, 2), None, 2, 3.5),  # 2.02
}


def _inputs(batch, n=6):
    g = torch.Generator().manual_seed(9)
    out = []
    while len(out) < n:
        x = torch.rand(L, batch, E, generator=g) * 2 - 1
        kept = x[:, :, 0] <= 0.5
        if bool((kept.sum(0) >= 2).all() & kept[0].all()):      # no whole row masked (the causal one's: key 0)
            out.append((x,))
    return out


def worst_steps(model, reference, cal, tmp_path, name):
    """model compiled on cal, its first four inputs run on the host (bytes
    equal to the reference interpreter's): the worst distance from
    reference's output in output steps, checked to span at least 16 steps.
    Only an encoder layer's LayerNorm and permutes may run in fp32
    (docs/aot.md)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal)
    assert not [f for f in res.lowered.fallbacks if "LayerNorm" not in f and "permute" not in f
                and not _fp32_residual(res, f)], res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, span = 0.0, []
    for (x,) in cal[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = reference(x).numpy()
        assert np.isfinite(want).all()
        worst = max(worst, float(np.abs(got - want).max() / step))
        span.append(np.ptp(want) / step)
    print(f"{name}: {worst:.2f} output steps")
    assert min(span) >= 16
    return worst


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_within_its_bound(name, tmp_path):
    make, oracle, batch, bound = CASES[name]
    model = make().eval()
    worst = worst_steps(model, model if oracle is None else oracle().eval(), _inputs(batch), tmp_path, name)
    assert worst <= bound + 1e-3, worst


def test_the_paths_differ():
    """The cases above tell the readings apart: added, read as a bool, ignored."""
    x = _inputs(2, 1)[0][0]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float((Module("ones", False)(x) - Module("ones", True)(x)).abs().max()) > 0.05
        assert float((Layer("ones", False)(x) - Layer("ones", True)(x)).abs().max()) > 0.05
        assert float((Layer("ones", False, 2)(x) - Layer("ones", True, 2)(x)).abs().max()) > 0.05
        assert float((Functional("where bias")(x) - Functional("where")(x)).abs().max()) > 0.05
        # beside a float attn_mask torch 1.13 fails or ignores the key padding mask (masked_fill of a float mask)
        with_padding, alone = SumOracle("where bias", "float")(x), SumOracle("zeros", "float")(x)
        assert float((with_padding - alone).abs().max()) > 0.05


@pytest.mark.parametrize("kind", ["mul", "nn.TransformerEncoderLayer"])
def test_a_sequence_padded_whole(kind, tmp_path):
    """pad.float() * -1e9 padding every key of one sequence: torch's scores
    there are all the fill (float32 rounds scores - 1e9), its softmax 1/S:
    ptec's too (the finite fill's softmax of the kept positions)."""
    model = (Functional("mul") if kind == "mul" else Layer("mul", False)).eval()
    cal = _inputs(2)
    padded = []
    for (x,) in cal[:3]:
        x = x.clone()
        x[:, 1, 0] = 0.75               # sequence 1 padded whole
        padded.append((x,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal + padded)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for (x,) in padded:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = model(x).numpy()
        assert np.isfinite(want).all() and np.ptp(want[:, 1]) / step >= 8
        worst = max(worst, float(np.abs(got - want).max() / step))
    print(f"{kind}: {worst:.2f} output steps")
    assert worst <= 6.0, worst


class NanMask(nn.Module):
    """nn.MultiheadAttention with a constant float attn_mask holding NaN or +inf."""

    def __init__(self, value):
        super().__init__()
        self.m = nn.MultiheadAttention(E, H).eval()
        bias = torch.randn(L, L) * 0.5
        bias[1, 2] = value
        self.register_buffer("bias", bias)

    def forward(self, x):
        return self.m(x, x, x, attn_mask=self.bias, need_weights=False)[0]


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_mask_with_nan_or_inf_is_refused_in_one_line(value):
    """torch's rows there are NaN (NaN + score, or inf - inf in the softmax);
    int8 values have no NaN: refused in one line naming the module."""
    x = _inputs(1, 1)[0][0]
    with torch.no_grad():
        assert torch.isnan(NanMask(value).eval()(x)[1]).all()
    with pytest.raises((CompileError, CaptureError)) as e:
        compile_model(NanMask(value).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "nn.MultiheadAttention" in message and "no NaN" in message, message


class Nested(nn.Module):
    """nn.TransformerEncoder on torch's nested fast path (batch first, even heads, no mask) given a float
    key padding mask: torch reads its nonzeros as padding (logical_not keeps), zeros at the padded positions."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(4)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=True),
                                         2).eval()

    def forward(self, x):          # x [N, L, E]
        pad = (x[:, :, 0] > 0.7).float().cumsum(-1) > 0      # left aligned: padded from the first x > 0.7 on
        return self.enc(x, src_key_padding_mask=pad.float() * 2.0)


def test_nested_encoder_with_a_float_padding_mask(tmp_path):
    g = torch.Generator().manual_seed(3)
    cal = []
    while len(cal) < 6:
        x = torch.rand(2, L, E, generator=g) * 2 - 1
        x[:, 0, 0] = 0.0        # the first key kept
        x[0, :, 0] = 0.0        # sequence 0 kept whole (torch's output keeps the input's length)
        cal.append((x,))
    model = Nested().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, padded = 0.0, 0
    for (x,) in cal[:4]:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = model(x).numpy()
        assert np.ptp(want) / step >= 16
        padded += int((want[1] == 0).all(-1).sum())        # padded positions: zeros
        worst = max(worst, float(np.abs(got - want).max() / step))
    print(f"nested encoder: {worst:.2f} output steps, {padded} padded positions")
    assert padded >= 2
    assert worst <= 3.0, worst          # 2.18


class InputPadding(nn.Module):
    """nn.MultiheadAttention given its float key padding mask as a model input (0 / fill values)."""

    def __init__(self, batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.m = nn.MultiheadAttention(E, H, batch_first=batch_first).eval()
        self.m.load_state_dict(MHA.state_dict())

    def forward(self, x, pad):          # x [1, L, E], pad [1, L]
        v = x if self.batch_first else x.transpose(0, 1)
        y = self.m(v, v, v, key_padding_mask=pad, need_weights=False)[0]
        return y if self.batch_first else y.transpose(0, 1)


@pytest.mark.parametrize("fill", [-1e9, -1e4])
@pytest.mark.parametrize("batch_first", [False, True])
def test_a_float_padding_mask_given_as_an_input(fill, batch_first, tmp_path):
    """No pattern to read: the example's values <= -1e4 tell the mask (m <= -1e4 masks, the rest
    is zeros), which an int8 add of -1e9 would lose (80 output steps)."""
    from test_io_forms import check
    g = torch.Generator().manual_seed(4)
    pads = [torch.tensor([[0, 0, 0, fill, fill]]), torch.tensor([[0, 0, 0, 0, fill]]), torch.zeros(1, 5)]
    samples = [(torch.rand(1, L, E, generator=g) * 6 - 3, pads[k % 3].float()) for k in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(InputPadding(batch_first), samples, tmp_path, bound=4.0)       # 3.58


class InputMasks(nn.Module):
    """nn.MultiheadAttention (not batch first: torch's formula) given a float mask as a model input:
    key_padding_mask [N, S] or attn_mask [L, S] of 0 / fill values."""

    def __init__(self, which):
        super().__init__()
        self.which = which
        self.m = nn.MultiheadAttention(E, H).eval()
        self.m.load_state_dict(MHA.state_dict())

    def forward(self, x, mask):         # x [L, N, E]
        kw = {"key_padding_mask": mask} if self.which == "kpm" else {"attn_mask": mask}
        return self.m(x, x, x, need_weights=False, **kw)[0]


@pytest.mark.parametrize("which", ["kpm", "attn_mask"])
def test_a_float_input_mask_masking_whole_rows(which, tmp_path):
    """A 0 / -1e9 float mask given as a model input (no pattern to read) that masks a whole row at run
    time: torch adds -1e9 (float32 rounds score - 1e9 to -1e9), its softmax there 1/S; ptec assumes the
    example's one masking value as the fill (a model input's value at run time is unknown), so its row
    is 1/S too (a -inf fill would give a row of zeros: 100+ output steps off)."""
    g = torch.Generator().manual_seed(7)
    n = 2
    if which == "kpm":
        cal_mask = torch.zeros(n, L)
        cal_mask[0, 3:] = -1e9
        whole = torch.zeros(n, L)
        whole[1, :] = -1e9                  # batch element 1 padded whole
    else:
        cal_mask = torch.triu(torch.full((L, L), -1e9), 1)          # causal
        whole = cal_mask.clone()
        whole[2, :] = -1e9                  # query 2 sees nothing
    cal = [(torch.rand(L, n, E, generator=g) * 6 - 3, cal_mask) for _ in range(6)]
    model = InputMasks(which).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0], cal_mask], cal)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, masked_row = 0.0, 0.0
    for x, _ in cal[:3]:
        for mask in (cal_mask, whole):
            got = host_runtime.run(prog, res.data, [x.numpy(), mask.numpy()], workdir=str(tmp_path))[0]
            with torch.no_grad():
                want = model(x, mask).numpy()
            assert np.isfinite(want).all() and np.isfinite(got).all()
            worst = max(worst, float(np.abs(got - want).max() / step))
            if mask is whole:
                row = want[:, 1] if which == "kpm" else want[2]
                masked_row = max(masked_row, float(np.abs(row).max() / step))
    print(f"{which}: {worst:.2f} output steps (whole-masked rows up to {masked_row:.1f} steps from 0)")
    assert masked_row >= 8              # a zero row would be far off
    assert worst <= 4.0, worst
