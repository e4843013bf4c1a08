"""The int8 reference's conv, depthwise and linear against PyTorch with
non-unit, per-channel multipliers and shifts (left and right shifts, scales
that are not powers of two, negative accumulators with ties), an output
offset and a clamp. The expected requantization is written here from
cortex-m-ops.md §1.6 on PyTorch's exact integer accumulator."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec.reference import cortex_m as ref

rng = np.random.default_rng(17)


def spec_requantize(acc: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """§1.6 on int64 numpy: wrap32(v << L), high multiply with ties up, then
    a right shift with ties away from zero."""
    acc = acc.astype(np.int64)
    left = np.maximum(shift, 0).astype(np.int64)
    right = np.maximum(-shift, 0).astype(np.int64)
    a = ((acc << left) + 2 ** 31) % 2 ** 32 - 2 ** 31
    h = (a * multiplier.astype(np.int64) + 2 ** 30) >> 31
    q = h >> right
    remainder = h - (q << right)
    threshold = ((1 << right) - 1) >> 1
    threshold = threshold + (h < 0)
    return q + (remainder > threshold)


# per output channel: 0.75, 0.5 + 2^-9, 2^-1 * 1.25 ..., left and right shifts
MULTIPLIERS = np.array([3 << 29, (1 << 30) + (1 << 21), 1342177280, 1 << 30, 2147483647, 1503238554],
                       np.int64)
SHIFTS = np.array([-3, -1, 0, -6, 2, -4], np.int64)


def nchw(x):
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)).astype(np.float64))


def nhwc(t):
    return np.asarray(t).transpose(0, 2, 3, 1)


def expected(acc_nhwc, cout, out_offset, lo, hi):
    y = spec_requantize(acc_nhwc, MULTIPLIERS[:cout], SHIFTS[:cout]) + out_offset
    return np.clip(y, lo, hi).astype(np.int8)


def test_spec_requantize_negative_ties():
    """§1.6 by hand: -3 * 0.5: h = floor(-1.5 + 0.5) = -1, then -1 / 2 = -0.5 -> -1;
    -6 * 0.5 * 0.5: h = floor(-3 + 0.5) = -3, then -3 / 2 = -1.5 -> -2."""
    m, s = np.array([1 << 30]), np.array([-1])
    assert spec_requantize(np.array([-3, -6, 3, 6, -5]), m, s).tolist() == [-1, -2, 1, 2, -1]
    for v, want in ((-3, -1), (-6, -2), (3, 1), (6, 2), (-5, -1), (-10, -3)):
        assert int(ref.requantize(v, 1 << 30, -1)) == want, v


@pytest.mark.parametrize("stride,padding", [((1, 1), (0, 0)), ((2, 1), (1, 0)), ((1, 2), (0, 1))])
def test_conv2d_non_unit_requantization(stride, padding):
    cout = 6
    x = rng.integers(-128, 128, size=(1, 7, 6, 3)).astype(np.int8)
    w = rng.integers(-127, 128, size=(cout, 3, 2, 3)).astype(np.int8)          # OHWI
    bias = rng.integers(-3000, 3000, size=cout).astype(np.int32)
    acc = F.conv2d(nchw(x) + 5, torch.from_numpy(w.transpose(0, 3, 1, 2).astype(np.float64)),
                   torch.from_numpy(bias.astype(np.float64)), stride, padding).numpy()
    want = expected(nhwc(acc).round().astype(np.int64), cout, -7, -100, 110)
    got = ref.quantized_conv2d(x, w, bias, stride, padding, (1, 1), 5, -7, MULTIPLIERS[:cout].tolist(),
                               SHIFTS[:cout].tolist(), -100, 110)
    assert np.array_equal(got, want)


def test_depthwise_non_unit_requantization():
    cin, dm = 3, 2
    x = rng.integers(-128, 128, size=(1, 6, 5, cin)).astype(np.int8)
    w = rng.integers(-127, 128, size=(1, 3, 2, cin * dm)).astype(np.int8)
    acc = F.conv2d(nchw(x) - 3, torch.from_numpy(w[0].transpose(2, 0, 1)[:, None].astype(np.float64)),
                   None, (2, 1), (1, 0), 1, cin).numpy()
    want = expected(nhwc(acc).round().astype(np.int64), cin * dm, 4, -128, 127)
    got = ref.quantized_depthwise_conv2d(x, w, None, (2, 1), (1, 0), (1, 1), dm, -3, 4,
                                         MULTIPLIERS[:cin * dm].tolist(), SHIFTS[:cin * dm].tolist(),
                                         -128, 127)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("channel", range(len(MULTIPLIERS)))
def test_linear_non_unit_requantization(channel):
    x = rng.integers(-128, 128, size=(4, 16)).astype(np.int8)
    w = rng.integers(-127, 128, size=(5, 16)).astype(np.int8)
    bias = rng.integers(-5000, 5000, size=5).astype(np.int32)
    acc = F.linear(torch.from_numpy(x.astype(np.float64)) + 9, torch.from_numpy(w.astype(np.float64)),
                   torch.from_numpy(bias.astype(np.float64))).numpy().round().astype(np.int64)
    m, s = MULTIPLIERS[channel], SHIFTS[channel]
    want = np.clip(spec_requantize(acc, np.full(5, m), np.full(5, s)) - 11, -128, 127).astype(np.int8)
    got = ref.quantized_linear(x, w, bias, None, 9, 0, -11, [int(m)], [int(s)], 127, -128)
    assert np.array_equal(got, want)
