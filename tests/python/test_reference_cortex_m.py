"""ptec.reference.cortex_m against the spec's worked examples and against
PyTorch's own float operators (exact on small integers), so that the
reference the C kernels are tested with is itself checked."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec.reference import cortex_m as ref

rng = np.random.default_rng(3)
UNIT = (1 << 30, 1)  # multiplier, shift: exactly 1.0


def small(shape, lo=-3, hi=3):
    return rng.integers(lo, hi + 1, size=shape).astype(np.int8)


def nchw(x):
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)).astype(np.float64))


def nhwc(t):
    return t.numpy().transpose(0, 2, 3, 1)


def test_requantize_examples():
    assert ref.requantize(3, 1 << 30, 0) == 2
    assert ref.requantize(-3, 1 << 30, 0) == -1
    assert ref.round_shift(-6, 2) == -2
    assert ref.round_shift(-5, 2) == -1
    assert ref.round_shift(6, 2) == 2
    assert ref.requantize(1, 1 << 30, 31) == -(1 << 30)  # the left shift wraps
    values = np.arange(-1000, 1000)
    assert np.array_equal(ref.requantize(values, *UNIT), values)


def test_quantize_multiplier():
    assert ref.quantize_multiplier(0.0) == (0, 0)
    assert ref.quantize_multiplier(0.75) == (1610612736, 0)
    assert ref.quantize_multiplier(1 - 2.0 ** -40) == (1 << 30, 1)  # rounds up to 2^31
    for scale in rng.uniform(1e-6, 10, size=50):
        m, s = ref.quantize_multiplier(scale)
        assert (1 << 30) <= m < (1 << 31)
        assert abs(m * 2.0 ** (s - 31) - scale) <= scale * 2.0 ** -30


def test_softmax_parameters():
    assert ref.softmax_parameters(1 / 16) == (1 << 30, 23, -248)


def test_softmax_close_to_float():
    x = rng.integers(-128, 128, size=(20, 10)).astype(np.int8)
    scale = 0.05
    m, s, diff_min = ref.softmax_parameters(scale)
    got = ref.softmax(x, -1, 0, -128, m, s, diff_min).astype(np.int64) + 128
    want = torch.softmax(torch.from_numpy(x.astype(np.float64) * scale), -1).numpy() * 256
    assert np.max(np.abs(got - np.minimum(want, 255))) <= 1


def test_masked_softmax_close_to_float():
    """The masked reference against float softmax with masked scores at
    -inf: within one output step where some position is unmasked, exactly
    0 (-128) at masked positions and in fully masked rows."""
    x = rng.integers(-128, 128, size=(3, 20, 10)).astype(np.int8)
    mask = rng.random((20, 10)) < 0.5
    mask[4] = True
    mask[5] = False
    mask[6, 1:] = True
    mask[6, 0] = False
    scale = 0.05
    m, s, diff_min = ref.softmax_parameters(scale)
    got = ref.quantized_softmax_masked(x, mask, m, s, diff_min).astype(np.int64) + 128
    scores = torch.from_numpy(x.astype(np.float64) * scale).masked_fill(torch.from_numpy(mask), float("-inf"))
    want = torch.nan_to_num(torch.softmax(scores, -1), nan=0.0).numpy() * 256
    assert np.max(np.abs(got - np.minimum(want, 255))) <= 1
    assert (got[:, mask] == 0).all() and (got[:, 4] == 0).all()
    assert (got[:, 6, 0] == 255).all()
    assert np.array_equal(got[:, 5] - 128, ref.softmax(x[:, 5], -1, 0, -128, m, s, diff_min))


def test_kernel_sum_form_equals_bias_form():
    x, w = small((3, 20), -128, 127), small((7, 20), -128, 127)
    bias = rng.integers(-10000, 10000, size=7).astype(np.int32)
    m, s = ref.quantize_multiplier(0.002)
    a = ref.quantized_linear(x, w, bias, None, 17, 0, 5, [m], [s], 127, -128)
    ks = ref.kernel_sum_from_bias(w, bias, 17)
    b = ref.quantized_linear(x, w, None, ks, 17, 0, 5, [m], [s], 127, -128)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("groups,stride,padding,dilation", [
    (1, (1, 1), (0, 0), (1, 1)), (2, (2, 1), (1, 2), (1, 1)), (3, (1, 3), (2, 0), (2, 1)),
    (1, (3, 2), (1, 1), (2, 2))])
def test_conv2d_matches_torch(groups, stride, padding, dilation):
    x = small((2, 7, 8, 3 * groups))
    w = small((2 * groups, 3, 2, 3))  # OHWI
    bias = rng.integers(-5, 6, size=2 * groups).astype(np.int32)
    cout = 2 * groups
    got = ref.quantized_conv2d(x, w, bias, stride, padding, dilation, 1, 0, [UNIT[0]] * cout,
                               [UNIT[1]] * cout, -128, 127)
    want = F.conv2d(nchw(x) + 1, torch.from_numpy(w.transpose(0, 3, 1, 2).astype(np.float64)),
                    torch.from_numpy(bias.astype(np.float64)), stride, padding, dilation, groups)
    assert np.array_equal(got, nhwc(want).astype(np.int8))


@pytest.mark.parametrize("dm", [1, 3])
def test_depthwise_matches_torch(dm):
    cin = 4
    x = small((1, 6, 5, cin))
    w = small((1, 3, 3, cin * dm))
    got = ref.quantized_depthwise_conv2d(x, w, None, (2, 1), (1, 1), (1, 1), dm, -2, 0, [UNIT[0]] * cin * dm,
                                         [UNIT[1]] * cin * dm, -128, 127)
    weight = torch.from_numpy(w[0].transpose(2, 0, 1)[:, None].astype(np.float64))  # [Cout, 1, KH, KW]
    want = F.conv2d(nchw(x) - 2, weight, None, (2, 1), (1, 1), 1, cin)
    assert np.array_equal(got, nhwc(want).astype(np.int8))


@pytest.mark.parametrize("stride,padding,output_padding", [((2, 2), (1, 1), (0, 0)), ((2, 3), (1, 2), (1, 0)),
                                                           ((3, 1), (2, 0), (2, 0)), ((1, 1), (0, 0), (0, 0))])
def test_transpose_conv_matches_torch(stride, padding, output_padding):
    """The correct formula of §3.11, including padding % stride != 0."""
    x = small((1, 4, 3, 3), -2, 2)
    w = small((2, 3, 4, 3), -2, 2)  # OHWI; torch wants IOHW
    got = ref.quantized_transpose_conv2d(x, w, None, stride, padding, output_padding, (1, 1), 0, 0,
                                         [UNIT[0]] * 2, [UNIT[1]] * 2, -128, 127)
    want = F.conv_transpose2d(nchw(x), torch.from_numpy(w.transpose(3, 0, 1, 2).astype(np.float64)), None,
                              stride, padding, output_padding)
    assert np.array_equal(got, nhwc(want).astype(np.int8))


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode", [((3, 3), (2, 2), (1, 1), False),
                                                             ((2, 3), (2, 2), (1, 1), True),
                                                             ((7, 5), (7, 5), (0, 0), False)])
def test_pools_match_torch(kernel, stride, padding, ceil_mode):
    x = rng.integers(-128, 128, size=(2, 7, 5, 3)).astype(np.int8)
    got = ref.quantized_avg_pool2d(x, kernel, stride, padding, ceil_mode, 0, 0, 0)
    mean = F.avg_pool2d(nchw(x), kernel, stride, padding, ceil_mode, count_include_pad=False)
    want = np.sign(mean.numpy()) * np.floor(np.abs(mean.numpy()) + 0.5)  # half away from zero
    assert np.array_equal(got, nhwc(torch.from_numpy(want)).astype(np.int8))
    got = ref.quantized_max_pool2d(x, kernel, stride, padding, (1, 1), ceil_mode, 0, 0, -100, 100)
    want = F.max_pool2d(nchw(x), kernel, stride, padding, 1, ceil_mode).clamp(-100, 100)
    assert np.array_equal(got, nhwc(want).astype(np.int8))


def test_quantize_rounds_half_to_even_in_float32():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
    assert ref.quantize_per_tensor(x, 1.0, 0, -128, 127).tolist() == [0, 2, 2, 0, -2]
    assert ref.quantize_per_tensor(np.array([np.nan, np.inf, -np.inf], np.float32), 0.1, 3, -128,
                                   127).tolist() == [3, 127, -128]


def test_div_rounds_half_away_from_zero():
    a = np.array([9, -9, 5], np.int8)
    b = np.array([2, 2, 0], np.int8)
    assert ref.quantized_div(a, 0, b, 0, 0, 1.0).tolist() == [5, -5, 0]


def test_min_max_broadcast_and_transpose_pad():
    a, b = small((3, 4, 3, 1), -128, 127), small((3, 4, 1, 1), -128, 127)
    assert np.array_equal(ref.maximum(a, b), np.maximum(a, b))
    x = small((2, 3), -128, 127)
    assert np.array_equal(ref.transpose(x, [0, 1]), x)
    assert np.array_equal(ref.transpose(x, [1, 0]), x.T)
    padded = ref.pad(x, [0, 0, 1, 0], [0, 0, 0, 2], -7)
    assert padded.shape == (1, 1, 3, 5) and padded[0, 0, 0].tolist() == [-7] * 5
