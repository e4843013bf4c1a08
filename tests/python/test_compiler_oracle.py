"""The compiler checked against a second computation (oracle_quant, written
from cortex-m-ops.md): for every zoo model and for small models covering
4-D constants, LUTs, pads, asymmetric pools and convolutions, each integer
parameter in the .pte on disk -- per-channel multipliers and shifts,
activation ranges, zero-point signs, kernel sums, weight and constant
layouts, LUTs, pad values, pool geometry -- must equal the one recomputed
from the float model's quantization parameters. The C runtime and the int8
reference both consume the .pte, so they cannot see a wrong value the
compiler wrote; this test can."""
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn as nn

import oracle_quant as oq
from ptec.compiler import compile_model
from ptec.models import ZOO, load_model
from ptec.pte import parse_program
from ptec.pte.schema import ScalarType

LUT_OPS = ("sigmoid", "tanh", "silu", "gelu", "hardswish", "hardsigmoid", "leaky_relu", "elu")


def _qp(g, name):
    s, z = g.node(name).qparams
    return float(s), int(z)


def _number(g, name):
    n = g.node(name)
    return n.op == "constant" and np.asarray(n.attrs["value"]).size == 1


def _assert_clamp(args, n, scale, zp):
    """§1.6: the fused activation of node n as int8 bounds on the output grid."""
    assert (args["activation_min"], args["activation_max"]) == oq.clamp_range(
        n.attrs.get("act"), scale, zp), n.name


def _by_kind(calls, keys):
    return [args for key, args in calls if key in keys]


def _check_per_channel_requantization(g, n, args, cout):
    """§1.5 per output channel, §1.4 offsets, §1.6 the fused clamp."""
    s_in, z_in = _qp(g, n.inputs[0])
    s_out, z_out = _qp(g, n.name)
    want = [oq.requantization(s_in * float(sw) / s_out) for sw in np.broadcast_to(
        n.attrs["weight_scales"], (cout,))]
    assert args["requantize_multipliers"].physical.tolist() == [m for m, _ in want], n.name
    assert args["requantize_shifts"].physical.tolist() == [s for _, s in want], n.name
    assert args["input_offset"] == -z_in and args["output_offset"] == z_out, n.name
    _assert_clamp(args, n, s_out, z_out)


def _check_conv(g, n, args, target):
    w = n.attrs["weight_q"]
    cout = w.shape[0]
    _check_per_channel_requantization(g, n, args, cout)
    assert args["stride"] == list(n.attrs["stride"]) and args["padding"] == list(n.attrs["padding"])
    assert args["dilation"] == list(n.attrs["dilation"]), n.name
    weight = args["weight"].physical
    if "depth_multiplier" in args:                # §3.10: [1, KH, KW, Cout]
        assert np.array_equal(weight, w.transpose(1, 2, 3, 0)), n.name
        bias = n.attrs["bias_q"] if n.attrs["bias_q"] is not None else np.zeros(cout, np.int32)
    else:                                         # §3.9: OHWI
        assert np.array_equal(weight, w.transpose(0, 2, 3, 1)), n.name
        bias = n.attrs["bias_q"]
    if bias is None:
        assert args["bias"] is None
    else:
        assert np.array_equal(args["bias"].physical, bias), n.name


def _check_linear(g, n, args, target):
    s_in, z_in = _qp(g, n.inputs[0])
    s_out, z_out = _qp(g, n.name)
    w = n.attrs["weight_q"]
    m, s = oq.requantization(s_in * float(n.attrs["weight_scales"][0]) / s_out)
    assert args["requantize_multipliers"] == [m] and args["requantize_shifts"] == [s], n.name
    assert args["input_offset"] == -z_in and args["filter_offset"] == 0, n.name
    assert args["output_offset"] == z_out
    _assert_clamp(args, n, s_out, z_out)
    assert np.array_equal(args["weights"].physical, w), n.name
    bias = (np.zeros(w.shape[0], np.int64) if n.attrs["bias_q"] is None
            else n.attrs["bias_q"].astype(np.int64))
    if target == "cortex-m55":                    # §3.8: kernel_sum = bias - zp_in * sum(row)
        want = bias + (-z_in) * w.astype(np.int64).sum(axis=1)
        assert args["bias"] is None
        assert args["kernel_sum"].physical.reshape(-1).tolist() == want.tolist(), n.name
    else:
        assert args["kernel_sum"] is None
        assert args["bias"].physical.tolist() == bias.tolist(), n.name


def _check_add(g, n, args, target):
    (s1, z1), (s2, z2) = _qp(g, n.inputs[0]), _qp(g, n.inputs[1])
    s_out, z_out = _qp(g, n.name)
    twice_max = 2.0 * max(s1, s2)
    assert (args["self_multiplier"], args["self_shift"]) == oq.multiplier_and_shift(s1 / twice_max)
    assert (args["other_multiplier"], args["other_shift"]) == oq.multiplier_and_shift(
        s2 / twice_max)
    assert (args["output_multiplier"], args["output_shift"]) == oq.multiplier_and_shift(
        twice_max / (s_out * 2.0 ** 20))
    assert (args["self_zero_point"], args["other_zero_point"]) == (z1, z2), n.name   # +zp
    assert args["output_zero_point"] == z_out
    _assert_clamp(args, n, s_out, z_out)


def _check_mul(g, n, args, target):
    (s1, z1), (s2, z2) = _qp(g, n.inputs[0]), _qp(g, n.inputs[1])
    s_out, z_out = _qp(g, n.name)
    assert (args["output_multiplier"], args["output_shift"]) == oq.multiplier_and_shift(
        s1 * s2 / s_out), n.name
    assert (args["self_zero_point"], args["other_zero_point"], args["output_zero_point"]) == (
        z1, z2, z_out), n.name


def _check_softmax(g, n, args, target):
    s_in, z_in = _qp(g, n.inputs[0])
    m, s, diff_min = oq.softmax_parameters(s_in)
    assert (args["input_multiplier"], args["input_shift"], args["diff_min"]) == (m, s, diff_min)
    assert args["output_zero_point"] == -128


NUMBER_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _is_number_op(g, n):
    """x (op) c with a number c: a function of one int8 tensor, a LUT (§3.6)."""
    return n.op in NUMBER_OPS and sum(_number(g, i) for i in n.inputs) == 1


def _lut_function(g, n):
    if n.op in LUT_OPS:
        return n.inputs[0], oq.torch_function(n)
    a, b = n.inputs
    x = b if _number(g, a) else a
    c = float(np.asarray(g.node(a if x == b else b).attrs["value"]).reshape(-1)[0])
    lo, hi = n.attrs.get("act") or (None, None)
    op = NUMBER_OPS[n.op]

    def f(v):
        y = op(c, v) if x == b else op(v, c)
        return np.clip(y, -np.inf if lo is None else lo, np.inf if hi is None else hi)
    return x, f


def _expected_luts(g):
    """(what, input node, float function, output node) of every LUT call, in
    program order: element-wise functions, number operands, and the identity
    tables that move a min/max operand onto the output's grid (cortex_m
    minimum/maximum compare raw bytes)."""
    out = []
    for n in g.nodes:
        if n.op in LUT_OPS or _is_number_op(g, n):
            x, fn = _lut_function(g, n)
            out.append((n.name, x, fn, n.name))
        elif n.op in ("minimum", "maximum"):
            for i in n.inputs:
                if g.node(i).op != "constant" and _qp(g, i) != _qp(g, n.name):
                    out.append((f"{n.name} operand {i}", i, lambda v: v, n.name))
    return out


def _check_luts(g, calls):
    expected = _expected_luts(g)
    found = _by_kind(calls, ("cortex_m::quantized_activation.out",))
    assert len(found) == len(expected), (len(found), [e[0] for e in expected])
    for (what, x, fn, y), args in zip(expected, found):
        want = oq.lut_table(fn, *_qp(g, x), *_qp(g, y))
        assert np.array_equal(args["lut"].physical, want), what
    return len(found)


def _check_max_pool(g, n, args, target):
    s_in, z_in = _qp(g, n.inputs[0])
    assert args["kernel_size"] == list(n.attrs["kernel"]), n.name
    assert args["stride"] == list(n.attrs["stride"]), n.name
    assert args["padding"] == list(n.attrs["padding"]), n.name
    assert args["input_zero_point"] == args["output_zero_point"] == z_in
    _assert_clamp(args, n, s_in, z_in)


def _check_batch_matmul(g, n, args, target):
    (sa, za), (sb, zb) = _qp(g, n.inputs[0]), _qp(g, n.inputs[1])
    s_out, z_out = _qp(g, n.name)
    assert (args["output_multiplier"], args["output_shift"]) == oq.requantization(
        sa * sb / s_out), n.name
    assert (args["lhs_zero_point"], args["rhs_zero_point"]) == (-za, -zb), n.name   # offsets
    assert args["output_zero_point"] == z_out
    for operand, name in (("lhs", n.inputs[0]), ("rhs_transposed", n.inputs[1])):
        if g.node(name).op != "constant":
            continue
        value = np.asarray(g.node(name).attrs["value"], np.float32)
        bsz, rows, k = args[operand].sizes
        value = value.reshape(bsz, k, rows).transpose(0, 2, 1) if operand != "lhs" \
            else value.reshape(bsz, rows, k)
        want = oq.int8_code_of_tensor(value, *_qp(g, name))
        assert np.array_equal(args[operand].physical, want), (n.name, operand)


def _check_transpose_conv(g, n, args, target):
    """§3.11: per-output-channel (M, S), offsets, OHWI weights from torch's IOHW."""
    w = n.attrs["weight_q"]                       # [Cin, Cout, KH, KW]
    cout = w.shape[1]
    _check_per_channel_requantization(g, n, args, cout)
    a = n.attrs
    assert args["stride"] == list(a["stride"]) and args["padding"] == list(a["padding"]), n.name
    assert args["output_padding"] == list(a.get("output_padding", [0, 0])), n.name
    assert args["dilation"] == [1, 1], n.name
    ohwi = np.stack([w[:, o] for o in range(cout)]).transpose(0, 2, 3, 1)
    assert np.array_equal(args["weight"].physical, ohwi), n.name
    h, wd = g.node(n.inputs[0]).shape[2:]
    assert [oq.transpose_conv_size(i, k, s, p, op) for i, k, s, p, op in zip(
        (h, wd), w.shape[2:], a["stride"], a["padding"], a.get("output_padding", [0, 0]))] \
        == list(n.shape[2:]), n.name
    if a["bias_q"] is None:
        assert args["bias"] is None
    else:
        assert args["bias"].physical.tolist() == np.asarray(a["bias_q"]).tolist(), n.name


def _check_div(g, n, args, target):
    """§3.5: raw zero points and the effective scale s1 / (s2 * s_out), to the double."""
    (s1, z1), (s2, z2) = _qp(g, n.inputs[0]), _qp(g, n.inputs[1])
    s_out, z_out = _qp(g, n.name)
    assert (args["self_zero_point"], args["other_zero_point"], args["output_zero_point"]) == (
        z1, z2, z_out), n.name
    exact = Fraction(s1) / (Fraction(s2) * Fraction(s_out))
    assert abs(Fraction(args["output_scale"]) - exact) <= exact * Fraction(1, 2 ** 51), n.name


def _expected_pools_and_pads(g):
    """(avg-pool calls, pad calls) the graph asks for, in program order. An
    avg-pool counting its padding (§3.13) becomes a pad with the input's zero
    point and an unpadded pool; a ceil-mode max-pool's extra windows become a
    bottom/right pad of -128; a constant_pad_nd pads with its value's code.
    An avg-pool entry is (kernel, stride, padding, ceil_mode, zero point), or
    ("mean", input sizes, dims, output sizes) for a mean lowered to a pool."""
    pools, pads = [], []
    for n in g.nodes:
        a = n.attrs
        if n.op == "pad":
            s, z = _qp(g, n.name)
            pre, post = oq.physical_pads(a["pad"], len(n.shape), len(n.shape) == 4)
            pads.append((n.name, pre, post, oq.code_of(float(a.get("value", 0.0)), s, z)))
        elif n.op == "avg_pool2d":
            z_in = _qp(g, n.inputs[0])[1]
            kernel, padding = list(a["kernel"]), list(a["padding"])
            stride = kernel if not a["stride"] else list(a["stride"])
            if a["count_include_pad"] and any(padding):
                pads.append((n.name, [0, padding[0], padding[1], 0],
                             [0, padding[0], padding[1], 0], z_in))
                padding = [0, 0]
            pools.append((n.name, (kernel, stride, padding, bool(a["ceil_mode"]), z_in)))
        elif n.op == "adaptive_avg_pool2d":
            h, w = g.node(n.inputs[0]).shape[2:]
            k = [h // a["output_size"][0], w // a["output_size"][1]]
            pools.append((n.name, (k, k, [0, 0], False, _qp(g, n.inputs[0])[1])))
        elif n.op == "mean":
            pools.append((n.name, ("mean", list(g.node(n.inputs[0]).shape), list(a["dim"]),
                                   list(n.shape))))
        elif n.op == "max_pool2d" and a["ceil_mode"]:
            sizes = g.node(n.inputs[0]).shape[2:]
            extra = [(o - 1) * s + k - (i + 2 * p) for o, s, k, i, p in zip(
                n.shape[2:], a["stride"], a["kernel"], sizes, a["padding"])]
            if max(extra) > 0:
                pads.append((n.name, [0, 0, 0, 0], [0, max(extra[0], 0), max(extra[1], 0), 0],
                             oq.INT8_MIN))
    return pools, pads


def _check_pools_and_pads(g, calls):
    pools, pads = _expected_pools_and_pads(g)
    found = _by_kind(calls, ("cortex_m::quantized_avg_pool2d.out",))
    assert len(found) == len(pools), (len(found), [p[0] for p in pools])
    for (name, want), args in zip(pools, found):
        if want[0] == "mean":
            mismatch = oq.mean_as_pool_mismatch(*want[1:], args)
            assert not mismatch, f"{name}: {mismatch}"
            continue
        kernel, stride, padding, ceil_mode, zp = want
        assert args["kernel_size"] == kernel and args["stride"] == stride, name
        assert args["padding"] == padding and args["ceil_mode"] == ceil_mode, name
        assert args["zero_point"] == zp, name
    found = _by_kind(calls, ("cortex_m::pad.out",))
    assert len(found) == len(pads), (len(found), [p[0] for p in pads])
    for (name, pre, post, value), args in zip(pads, found):
        assert (args["pre_pad"], args["post_pad"]) == (pre, post), name
        assert args["pad_value"] == value, name
    return len(pools) + len(pads)


def _check_io_conversions(g, res, calls):
    """§3.1/§3.2: the float boundary converts on the grid of the value it
    carries: each program input's quantize and each output's dequantize use
    that node's (scale, zero point), int8 range and dtype CHAR."""
    grids = {_qp(g, n.name) for n in g.nodes}
    checked = 0
    for key, names in (("cortex_m::quantize_per_tensor.out",
                        [n.name for n in g.nodes if n.op == "input"]),
                       ("cortex_m::dequantize_per_tensor.out", list(g.outputs))):
        found = _by_kind(calls, (key,))
        for args in found:
            assert (args["quant_min"], args["quant_max"]) == (oq.INT8_MIN, oq.INT8_MAX), key
            assert args["dtype"] == int(ScalarType.CHAR), key
            assert (args["scale"], args["zero_point"]) in grids, key
        if not res.lowered.fallbacks:
            want = sorted(_qp(g, name) for name in names)
            assert sorted((a["scale"], a["zero_point"]) for a in found) == want, key
        checked += len(found)
    return checked


CHECKS = [  # (node ops, call keys, check)
    (("conv2d",), ("cortex_m::quantized_conv2d.out", "cortex_m::quantized_depthwise_conv2d.out"),
     _check_conv),
    (("linear",), ("cortex_m::quantized_linear.out",), _check_linear),
    (("add",), ("cortex_m::quantized_add.out",), _check_add),
    (("mul",), ("cortex_m::quantized_mul.out",), _check_mul),
    (("softmax",), ("cortex_m::softmax.out",), _check_softmax),
    (("max_pool2d",), ("cortex_m::quantized_max_pool2d.out",), _check_max_pool),
    (("matmul",), ("cortex_m::quantized_batch_matmul.out",), _check_batch_matmul),
    (("conv_transpose2d",), ("cortex_m::quantized_transpose_conv2d.out",),
     _check_transpose_conv),
    (("div",), ("cortex_m::quantized_div.out",), _check_div),
]


def check_program(res, target):
    """Every parameter of every call whose node kind maps one to one onto a
    call kind. Returns the number of calls checked."""
    g = res.graph
    calls = oq.kernel_calls(parse_program(res.data))
    checked = 0
    for ops, keys, check in CHECKS:
        nodes = [n for n in g.nodes if n.op in ops and not _is_number_op(g, n)]
        found = _by_kind(calls, keys)
        assert len(found) == len(nodes), (keys, len(found), [n.name for n in nodes])
        for n, args in zip(nodes, found):
            check(g, n, args, target)
            checked += 1
    checked += _check_luts(g, calls)
    checked += _check_pools_and_pads(g, calls)
    checked += _check_io_conversions(g, res, calls)
    _check_constants(g, calls)
    return checked


def _check_constants(g, calls):
    """§1.2: a 4-D int8 constant operand of min/max/add/mul is stored
    channels-last, its bytes the quantized value transposed to NHWC."""
    consts = {}
    for n in g.nodes:
        if n.op == "constant" and np.asarray(n.attrs["value"]).ndim == 4:
            consts[n.name] = n
    for key, args in calls:
        if key not in ("cortex_m::minimum.out", "cortex_m::maximum.out",
                       "cortex_m::quantized_add.out", "cortex_m::quantized_mul.out"):
            continue
        for operand in ("self", "other"):
            c = args[operand]
            if not isinstance(c, oq.Const) or len(c.sizes) != 4:
                continue
            matches = [n for n in consts.values()
                       if list(np.asarray(n.attrs["value"]).shape) == c.sizes]
            assert matches, (key, c.sizes)
            assert c.dim_order == oq.NHWC, (key, c.dim_order)
            found = False
            for n in matches:
                for user in g.users(n.name):
                    want = oq.int8_code_of_tensor(n.attrs["value"], *_qp(g, user.name)
                                                  if user.op in ("minimum", "maximum")
                                                  else _qp(g, n.name))
                    found |= np.array_equal(c.physical, want.transpose(oq.NHWC))
            assert found, f"{key} {operand}: constant bytes are not the NHWC quantized value"


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_parameters_match_the_spec(name):
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(8))
    assert check_program(res, "cortex-m55") > 0


def test_linear_bias_form_on_m33():
    m = load_model("fc_autoencoder")
    res = compile_model(m.module, m.example_inputs, m.calibration(4), target="cortex-m33")
    # 10 linear layers, one quantize, one dequantize
    assert check_program(res, "cortex-m33") == 10 + 2


class FourDConstants(nn.Module):
    """Full 4-D constants (C > 1, H*W > 1) in min, max, add, mul and matmul."""
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.register_buffer("lo", torch.randn(1, 3, 4, 5, generator=g))
        self.register_buffer("hi", torch.randn(1, 3, 4, 5, generator=g) + 1.5)
        self.register_buffer("offset", torch.randn(1, 3, 4, 5, generator=g))
        self.register_buffer("gain", torch.rand(1, 3, 4, 5, generator=g) + 0.5)
        self.register_buffer("rhs", torch.randn(1, 3, 5, 6, generator=g))

    def forward(self, x):
        y = torch.minimum(torch.maximum(x, self.lo), self.hi)
        y = (y + self.offset) * self.gain
        return torch.matmul(y, self.rhs)


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        return torch.sigmoid(h) + torch.tanh(h) * nn.functional.gelu(h)


class AsymmetricGeometry(nn.Module):
    """Every pool and conv path with asymmetric stride and padding, (1, 0) included."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, (3, 2), stride=(2, 1), padding=(1, 0))
        self.depthwise = nn.Conv2d(8, 8, 3, stride=(1, 2), padding=(0, 1), groups=8)
        self.max_pool = nn.MaxPool2d((3, 2), stride=(1, 2), padding=(1, 0))
        self.avg_pool = nn.AvgPool2d((2, 3), stride=(2, 1), padding=(0, 1))

    def forward(self, x):
        y = torch.relu(self.depthwise(torch.relu(self.conv(x))))
        return self.avg_pool(self.max_pool(y))


class Clamped(nn.Module):
    """A fused clamp whose bounds are not on the grid's zero: act_min > -128."""
    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(3, 4, 1)
        self.clamp = nn.Hardtanh(-0.5, 1.0)
        self.second = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.second(self.clamp(self.first(x)))


class PadsAndAvgPools(nn.Module):
    """constant_pad_nd with a non-zero value and asymmetric, h != w pads; an
    avg-pool counting its padding (a pad of zp_in in front), one that does
    not, and one in ceil mode; a ceil-mode max-pool (a -128 pad)."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.counted = nn.AvgPool2d((3, 2), stride=(1, 2), padding=(1, 0))
        self.uncounted = nn.AvgPool2d((2, 3), stride=(2, 1), padding=(0, 1),
                                      count_include_pad=False)
        self.ceil = nn.AvgPool2d(2, stride=2, ceil_mode=True)
        self.max_ceil = nn.MaxPool2d(2, stride=2, ceil_mode=True)

    def forward(self, x):
        y = nn.functional.pad(torch.relu(self.conv(x)), (1, 0, 2, 1), value=0.75)
        return self.max_ceil(self.ceil(self.uncounted(self.counted(y))))


class TransposeConvAndDiv(nn.Module):
    """A transpose conv with per-channel scales, asymmetric stride and padding
    (output_padding stays 0: §3.11's quantizer takes no other); a quotient
    of two tensors; float in and out."""
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, (3, 2), stride=(2, 1), padding=(1, 0))
        self.gate = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        y = torch.relu(self.up(x))
        return y / (torch.sigmoid(self.gate(y)) + 0.5)


class Means(nn.Module):
    """Every mean cortex_m lowers to a whole-window average pool: over H and W
    of a 4-D tensor (with and without keepdim), over the middle or the last
    dim of a 3-D tensor with a batch of 2, over the last dim of a 2-D one;
    H != W and T != D, so a swapped window or view shows."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = torch.relu(self.conv(x))                  # [1, 4, 5, 6]
        pooled = y.mean([2, 3])                       # [1, 4]
        rows = y.reshape(2, 4, 15)
        return (y.mean([2, 3], keepdim=True), pooled, rows.mean(1), rows.mean(-1),
                pooled.mean(-1, keepdim=True))


SMALL = {
    "clamped": (Clamped, (1, 3, 4, 4)),
    "four_d_constants": (FourDConstants, (1, 3, 4, 5)),
    "activations": (Activations, (1, 8)),
    "asymmetric_geometry": (AsymmetricGeometry, (1, 3, 11, 9)),
    "pads_and_avg_pools": (PadsAndAvgPools, (1, 3, 9, 8)),
    "transpose_conv_and_div": (TransposeConvAndDiv, (1, 4, 5, 6)),
    "means": (Means, (1, 3, 5, 6)),
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", list(SMALL))
def test_small_models_parameters_match_the_spec(name, target):
    make, shape = SMALL[name]
    torch.manual_seed(0)
    model = make().eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(shape, generator=g),) for _ in range(8)]
    res = compile_model(model, list(calib[0]), calib, target=target)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    assert check_program(res, target) > 0


def test_oracle_multiplier_examples_from_the_spec():
    """§1.5 by hand: 0.75 = 0.75 * 2^0 -> M = 0.75 * 2^31; ties go to even."""
    assert oq.multiplier_and_shift(0.75) == (3 << 29, 0)
    assert oq.multiplier_and_shift(1.0) == (1 << 30, 1)
    assert oq.multiplier_and_shift(2.0 ** -40) == (1 << 30, -39)
    assert oq.requantization(2.0 ** -40) == (0, 0)
    half_lsb = (0.5 + 2.0 ** -32)          # m * 2^31 = 2^30 + 0.5: rounds to even 2^30
    assert oq.multiplier_and_shift(half_lsb) == (1 << 30, 0)
    assert oq.clamp_range((0.0, None), 0.1, -5) == (-5, 127)
    assert oq.clamp_range((0.0, 6.0), 0.05, -128) == (-128, -8)


def _pool_call(src_sizes, kernel, stride, padding, out_sizes, ceil_mode=False):
    return {"input": oq.Activation(0, list(src_sizes), oq.NHWC), "kernel_size": list(kernel),
            "stride": list(stride), "padding": list(padding), "ceil_mode": ceil_mode,
            "out": oq.Activation(1, list(out_sizes), oq.NHWC)}


def test_oracle_mean_as_pool_rejects_wrong_geometry():
    """The mean check passes the pools the spec allows and names the fault
    of each deliberately wrong window, stride, divisor or view."""
    ok = oq.mean_as_pool_mismatch
    # mean over H, W of [1, 4, 5, 6]: a 5x6 window
    assert ok([1, 4, 5, 6], [2, 3], [1, 4], _pool_call([1, 4, 5, 6], [5, 6], [5, 6], [0, 0],
                                                        [1, 4, 1, 1])) == ""
    # §3.13 leaves padding out of the sum and the count: a padded 7x6 window is the same mean
    assert ok([1, 4, 5, 6], [2, 3], [1, 4], _pool_call([1, 4, 5, 6], [7, 6], [7, 6], [1, 0],
                                                        [1, 4, 1, 1])) == ""
    assert "divides by 25" in ok([1, 4, 5, 6], [2, 3], [1, 4], _pool_call(
        [1, 4, 5, 6], [5, 5], [5, 5], [0, 0], [1, 4, 1, 1]))          # one column short
    assert "divides by 12" in ok([1, 4, 5, 6], [2, 3], [1, 4], _pool_call(
        [1, 4, 5, 6], [2, 6], [5, 6], [0, 0], [1, 4, 1, 1]))          # two rows, stride 5
    assert "pool output" in ok([1, 4, 5, 6], [2, 3], [1, 4], _pool_call(
        [1, 4, 5, 6], [6, 5], [6, 5], [0, 0], [1, 4, 1, 1]))          # h, w swapped
    # mean over T of [2, 4, 15]: the bytes of [2, 15, 4, 1] channels-last, a 4x1 window
    assert ok([2, 4, 15], [1], [2, 15], _pool_call([2, 15, 4, 1], [4, 1], [4, 1], [0, 0],
                                                    [2, 15, 1, 1])) == ""
    assert "do not view" in ok([2, 4, 15], [1], [2, 15], _pool_call(
        [2, 4, 15, 1], [15, 1], [15, 1], [0, 0], [2, 4, 1, 1]))       # T and D swapped
    # mean over the last dim of [2, 4, 15]: rows of a [1, 1, 8, 15] image, a 1x15 window
    assert ok([2, 4, 15], [-1], [2, 4], _pool_call([1, 1, 8, 15], [1, 15], [1, 15], [0, 0],
                                                    [1, 1, 8, 1])) == ""
    assert "averages input bytes" in ok([2, 4, 15], [-1], [2, 4], _pool_call(
        [1, 1, 15, 8], [15, 1], [15, 1], [0, 0], [1, 1, 1, 8]))       # columns, not rows
