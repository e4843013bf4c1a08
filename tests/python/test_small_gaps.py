"""Small gaps of issue 15 (helper wt-small): F.pairwise_distance of complex
values with p other than 1 and 2 (capture_fp32_distances keeps only real
operands whole), and the refusals that name their argument. Oracle: torch
in float; bounds in output steps (test_module_coverage.worst_steps)."""
import pytest
import torch
import torch.nn.functional as F

from ptec.compiler import compile_model
from model_checks import Call
from test_module_coverage import worst_steps
from test_function_coverage import inputs

S3, R = (1, 4, 8), (-3.0, 3.0)


def _z(x):
    return torch.complex(x * 0.5, x.flip(-1) * 0.5)


def _w(x):
    return torch.complex(x.flip(1), x) * 0.5


RUNS = {
    # (call of x, bound in output steps): measured 3.01, 3.05, 1.93, 0.37
    "complex p=3": (lambda x: F.pairwise_distance(_z(x), _w(x), p=3), 3.5),
    "complex p=3 eps keepdim": (lambda x: F.pairwise_distance(_z(x), _w(x), 3.0, 1e-3, True), 3.5),
    "complex p=0.5": (lambda x: F.pairwise_distance(_z(x), _w(x), p=0.5), 2.5),
    "real p=3 stays fp32 call": (lambda x: F.pairwise_distance(x, x.flip(2), 3, keepdim=True), 1.0),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_pairwise_distance_within_bound(name, tmp_path):
    fn, bound = RUNS[name]
    model = Call(fn).eval()
    cal = inputs(S3, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


def test_complex_p3_output_varies_and_matches_torch_shape():
    """The oracle's outputs vary over the inputs (the bound above is not vacuous)."""
    cal = inputs(S3, *R)
    outs = [F.pairwise_distance(_z(x), _w(x), p=3) for (x,) in cal[:4]]
    assert outs[0].shape == (1, 4) and float(torch.stack(outs).std()) > 0.1


def test_real_p3_keeps_the_fp32_call():
    """A real p = 3 distance stays one torch.pairwise_distance node (the fp32 hook's)."""
    from ptec.capture_fp32_distances import stays_a_call
    assert stays_a_call(torch.pairwise_distance, 3.0, torch.zeros(2), torch.zeros(2))
    assert not stays_a_call(torch.pairwise_distance, 3.0, torch.zeros(2, dtype=torch.cfloat), torch.zeros(2))


# F.batch_norm(training=True) with running statistics computed in the program: torch writes them in place
# (its output is the batch's normalization), so it runs when nothing reads them after the call.
def _bn_read_before(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    z = rm.reshape(1, 3, 1, 1) * 0.5           # read before the call: the value torch had
    return F.batch_norm(x, rm, rv, training=True) + z


BN_RUNS = {
    # (call of x, input shape, bound in output steps): measured 0.50, 1.66, 1.25
    "computed stats": (lambda x: F.batch_norm(x, x.mean((0, 2, 3)), x.var((0, 2, 3)), training=True),
                       (1, 3, 4, 4), 1.0),
    "computed stats, weight, bias, batch 2": (lambda x: F.batch_norm(
        x, x.mean((0, 2, 3)) * 0, x.var((0, 2, 3)), torch.tensor([1., 2, 3]), torch.tensor([0., 1, 2]),
        training=True, momentum=0.3), (2, 3, 4, 4), 2.0),
    "stats read before the call": (_bn_read_before, (2, 3, 4, 4), 1.5),
}


@pytest.mark.parametrize("name", sorted(BN_RUNS))
def test_batch_norm_computed_stats_within_bound(name, tmp_path):
    fn, shape, bound = BN_RUNS[name]
    model = Call(fn).eval()
    cal = inputs(shape, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


def _bn_read_after(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    y = F.batch_norm(x, rm, rv, training=True)
    return y + rm.reshape(1, 3, 1, 1)           # the updated statistics


def _bn_stats_out(x):
    rm, rv = x.mean((0, 2, 3)), x.var((0, 2, 3))
    return F.batch_norm(x, rm, rv, training=True), rv


def _bn_view_of_input(x):
    return F.batch_norm(x, x[0, :, 0, 0], x[0, :, 1, 1].abs(), training=True)


@pytest.mark.parametrize("fn, words", [
    (_bn_read_after, "reads them after the call"),
    (_bn_stats_out, "output reads them after the call"),
    (_bn_view_of_input, "is a view of its input"),
])
def test_batch_norm_written_stats_read_refused(fn, words):
    from ptec.capture import capture
    x = inputs((2, 3, 4, 4), *R)[0][0]
    with pytest.raises(Exception) as e:
        capture(Call(fn).eval(), [x])
    msg = str(e.value)
    assert "F.batch_norm(training=True)" in msg and words in msg and "\n" not in msg, msg


# F.multi_head_attention_forward / nn.MultiheadAttention: bias_k / bias_v (a row appended to K and V, a column
# that masks nothing to the masks), add_zero_attn (a zero row per head), masks computed in the program (the
# softmax of the kept positions: capture_attention_masks) (capture_computed_weights._mha).
W_IN, B_IN = torch.linspace(-0.5, 0.5, 192).reshape(24, 8), torch.linspace(-0.2, 0.2, 24)
W_OUT = torch.linspace(-0.5, 0.5, 64).reshape(8, 8)
BK, BV = torch.linspace(-1, 1, 8).reshape(1, 1, 8), torch.linspace(1, -0.5, 8).reshape(1, 1, 8)


def _mha(x, bk=None, bv=None, zero=False, **kw):
    t = x.transpose(0, 1)
    return F.multi_head_attention_forward(t, t, t, 8, 2, W_IN, B_IN, bk, bv, zero, 0.0, W_OUT, torch.zeros(8),
                                          training=False, need_weights=False, **kw)[0].transpose(0, 1)


class _Attention(torch.nn.Module):
    def __init__(self, masks=None, **kw):
        super().__init__()
        torch.manual_seed(0)
        self.m, self.masks = torch.nn.MultiheadAttention(8, 2, batch_first=True, **kw), masks

    def forward(self, x):
        kw = {} if self.masks is None else self.masks(x)
        return self.m(x, x, x, need_weights=False, **kw)[0]


class _Separate(torch.nn.Module):      # kdim, vdim other than embed_dim: separate projections
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.m = torch.nn.MultiheadAttention(8, 2, kdim=6, vdim=5)

    def forward(self, x):
        return self.m(x[0].unsqueeze(1), x[0, :, :6].unsqueeze(1), x[0, :, 3:].unsqueeze(1))[0]


MHA_RUNS = {
    # (model, input shape, bound in output steps): measured in the trailing comment
    "bias_k, bias_v": (Call(lambda x: _mha(x, BK, BV)), S3, 2.5),                                   # 2.01
    "add_zero_attn": (Call(lambda x: _mha(x, zero=True)), S3, 3.0),                                  # 2.66
    "computed bool attn_mask": (Call(lambda x: _mha(x, attn_mask=x[0, :, :4] > 0)), S3, 1.0),       # 0.66
    "computed key_padding_mask": (Call(lambda x: _mha(x, key_padding_mask=x[:, :, 0] > 1)), S3, 3.0),  # 2.79
    "computed key_padding_mask, batch 2": (Call(lambda x: _mha(x, key_padding_mask=x[:, :, 0] > 1)), (2, 4, 8),
                                           4.5),                                                    # 3.79
    "computed masks, bias_k, add_zero_attn": (Call(lambda x: _mha(
        x, BK, BV, True, attn_mask=x[0, :, :4] > 0.5, key_padding_mask=x[:, :, 0] > 1)), S3, 2.0),  # 1.31
    "constant causal mask, bias_k, add_zero_attn": (Call(lambda x: _mha(
        x, BK, BV, True, attn_mask=torch.triu(torch.ones(4, 4, dtype=torch.bool), 1))), S3, 3.0),   # 2.58
    "nn.MultiheadAttention(add_bias_kv)": (_Attention(add_bias_kv=True), S3, 3.0),                  # 2.36
    "nn.MultiheadAttention(add_zero_attn)": (_Attention(add_zero_attn=True), S3, 2.5),              # 2.09
    "nn.MultiheadAttention(computed attn_mask)": (_Attention(lambda x: {"attn_mask": x[0, :, :4] > 0}), S3,
                                                  3.5),                                             # 3.25
    "nn.MultiheadAttention(computed key_padding_mask, bias, zero)": (_Attention(
        lambda x: {"key_padding_mask": x[:, :, 0] > 1}, add_bias_kv=True, add_zero_attn=True), S3, 3.0),  # 2.60
    "nn.MultiheadAttention(kdim, vdim)": (_Separate(), S3, 4.5),                                     # 3.88
}


@pytest.mark.parametrize("name", sorted(MHA_RUNS))
def test_attention_forms_within_bound(name, tmp_path):
    model, shape, bound = MHA_RUNS[name]
    model = model.eval()
    cal = inputs(shape, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


def test_bias_kv_changes_torchs_output():
    """The oracle differs with bias_k / add_zero_attn (the forms are not the plain attention's)."""
    x = inputs(S3, *R)[0][0]
    plain = _mha(x)
    assert float((_mha(x, BK, BV) - plain).abs().max()) > 0.05
    assert float((_mha(x, zero=True) - plain).abs().max()) > 0.05


MHA_REFUSED = {
    # (static_k / static_v and a computed float attn_mask run: test_mha_static_and_float_masks.py; a computed
    # float key_padding_mask: test_attention_masks_more.py)
    "bias_k with static_k": (lambda x: F.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), 8, 2, W_IN, B_IN, BK, BV, False, 0.0, W_OUT,
        None, training=False, need_weights=False, static_k=torch.zeros(2, 4, 4), static_v=torch.zeros(2, 4, 4))[0],
        "bias_k with static_k / static_v"),
    "dropout in training": (lambda x: F.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), 8, 2, W_IN, None, None, None, False, 0.5, W_OUT,
        None, training=True, need_weights=False)[0], "dropout_p=0.5 with training=True"),
    "bias_k without bias_v": (lambda x: F.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), 8, 2, W_IN, B_IN, BK, None, False, 0.0, W_OUT,
        None, training=False, need_weights=False)[0], "bias_k without bias_v"),
}


@pytest.mark.parametrize("name", sorted(MHA_REFUSED))
def test_attention_refusals_name_the_argument(name):
    from ptec.capture import capture
    fn, words = MHA_REFUSED[name]
    with pytest.raises(Exception) as e:
        capture(Call(fn).eval(), [inputs(S3, *R)[0][0]])
    msg = str(e.value)
    assert "F.multi_head_attention_forward: " + words in msg and "\n" not in msg, msg


# torch.gradient with coordinates computed in the program (capture_composed._nonuniform): torch's
# non-uniform rule in element-wise ops. The coordinates are the program's own (int8) values, so a step
# h = c[i+1] - c[i] carries the rounding of two values on the coordinates' grid: steps short against
# that grid (x.abs() + 0.5 summed) are the worst (11.92 output steps), wide ones about 3.
GRADIENT_RUNS = {
    "coordinates, last dim": (lambda x: torch.gradient(x, spacing=(x[0, 0].abs().add(2.0).cumsum(-1),),
                                                       dim=-1)[0], 4.5),                             # 3.78
    "coordinates, dim 1, edge_order 2": (lambda x: torch.gradient(x, spacing=(x[0, :, 0].abs().add(2.0).cumsum(-1),),
                                                                  dim=1, edge_order=2)[0], 3.5),    # 3.01
    "short steps": (lambda x: torch.gradient(x, spacing=(x[0, 0].abs().add(0.5).cumsum(-1),), dim=-1)[0],
                    12.5),                                                                           # 11.92
}


@pytest.mark.parametrize("name", sorted(GRADIENT_RUNS))
def test_gradient_computed_coordinates_within_bound(name, tmp_path):
    fn, bound = GRADIENT_RUNS[name]
    model = Call(fn).eval()
    cal = inputs(S3, *R)
    res = compile_model(model, [cal[0][0]], cal)
    worst = worst_steps(model, res, cal[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


@pytest.mark.parametrize("edge", [1, 2])
@pytest.mark.parametrize("dim", [1, 2])
def test_nonuniform_rule_is_torchs(edge, dim):
    """The composition the graph gets, in float64, is torch.gradient's."""
    from ptec.capture_composed import _nonuniform
    g = torch.Generator().manual_seed(3)
    f = torch.randn(2, 5, 7, dtype=torch.float64, generator=g)
    c = (torch.rand(f.shape[dim], dtype=torch.float64, generator=g) + 0.3).cumsum(0)
    want = torch.gradient(f, spacing=(c,), dim=dim, edge_order=edge)[0]
    assert torch.allclose(_nonuniform(f, c, dim, 3, edge), want, rtol=1e-12, atol=1e-12)


def test_gradient_constant_coordinates_keep_the_linear():
    """Constant coordinates keep the one linear (not the composition)."""
    from ptec.capture import capture
    ops = [n.op for n in capture(Call(lambda x: torch.gradient(
        x, spacing=(torch.tensor([0., 1, 1.5, 3, 4, 4.2, 5, 7]),), dim=-1)[0]).eval(), [inputs(S3, *R)[0][0]]).nodes]
    assert "div" not in ops and ("linear" in ops or "quantized_linear" in ops), ops
