"""The upstream Ethos-U minimal example against the TOSA definition of its graph.

The C tests (ethos_u.delegate_npu_model, npu.test_npu_minimal_example) check every one of
the 65,536 int8 input pairs of `ethos_u_minimal_example.pte`, run on the NPU model, against
the closed form `((q0 + q1 + 257) >> 1) - 128` (spec ethos-u-npu.md §8.1). This test closes
the chain: it computes the graph upstream lowered to Vela, a TOSA-1.0 INT quantized ADD,
from the TOSA definitions (RESCALE with apply_scale_32, ADD on int32, RESCALE back with the
output zero point and an int8 clamp), with the rescale factors derived from the program's
quantization (inputs scale 1/255, output 2/255, zero points -128) the way TFLite-style
lowerings do (inputs to a common scale 2·max(s_in) / 2^20), and requires the closed form for
every pair. It shares nothing with the NPU model, the delegate or the Vela decoder.
"""
import math

import numpy as np

S_IN, S_OUT, ZP = 1.0 / 255.0, 2.0 / 255.0, -128
LEFT_SHIFT = 20


def tosa_scale_32(ratio):
    """(multiplier, shift) for a positive real factor, as TOSA's reference computes them:
    multiplier a 31-bit significand rounded to nearest, shift in 2..62."""
    m, e = math.frexp(ratio)                 # ratio = m * 2^e, m in [0.5, 1)
    multiplier = round(m * (1 << 31))
    if multiplier == 1 << 31:
        multiplier //= 2
        e += 1
    shift = 31 - e
    assert 2 <= shift <= 62, (ratio, shift)
    return multiplier, shift


def apply_scale_32(value, multiplier, shift):
    """TOSA apply_scale_32 with double_round = false (round half up), on int64 arrays."""
    value = value.astype(object)             # exact: the product needs more than 64 bits
    rounded = (value * multiplier + (1 << (shift - 1))) >> shift
    return np.array(rounded, dtype=np.int64)


def tosa_add_int8(q0, q1):
    common = 2.0 * S_IN / (1 << LEFT_SHIFT)
    m_in, s_in = tosa_scale_32(S_IN / common)
    m_out, s_out = tosa_scale_32(common / S_OUT)
    a = apply_scale_32(q0.astype(np.int64) - ZP, m_in, s_in)   # RESCALE int8 -> int32
    b = apply_scale_32(q1.astype(np.int64) - ZP, m_in, s_in)
    total = a + b                                               # ADD on int32
    assert np.all(np.abs(total) < 1 << 31)
    out = apply_scale_32(total, m_out, s_out) + ZP              # RESCALE int32 -> int8
    return np.clip(out, -128, 127)


def test_rescale_factors_are_the_streams():
    # Spec §8.1 decodes the stream's scales: inputs x 2^30 >> 11, the sum x 2^30 >> 50.
    common = 2.0 * S_IN / (1 << LEFT_SHIFT)
    assert tosa_scale_32(S_IN / common) == (1 << 30, 11)
    assert tosa_scale_32(common / S_OUT) == (1 << 30, 50)


def test_every_int8_pair_matches_the_closed_form_the_c_tests_check():
    q0, q1 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    q0, q1 = q0.ravel(), q1.ravel()
    tosa = tosa_add_int8(q0, q1)
    closed = ((q0 + q1 + 257) >> 1) - 128
    assert tosa.shape == (65536,)
    assert np.array_equal(tosa, closed), np.flatnonzero(tosa != closed)[:8]
    # The float add of the dequantized inputs, quantized half up, agrees too (§8.1).
    real = (q0 - ZP) * S_IN + (q1 - ZP) * S_IN
    half_up = np.floor(real / S_OUT + 0.5 + 1e-9).astype(np.int64) + ZP
    assert np.array_equal(np.clip(half_up, -128, 127), closed)


def test_the_check_can_fail():
    # The same chain with the output RESCALE truncating (no rounding term) is off by one
    # on every pair whose sum is odd (half the pairs), so the comparison above can tell them apart.
    q0, q1 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    q0, q1 = q0.ravel(), q1.ravel()
    closed = ((q0 + q1 + 257) >> 1) - 128
    total = (q0.astype(np.int64) - ZP + q1 - ZP) << 19
    truncated = np.clip((total >> 20) + ZP, -128, 127)
    differ = np.count_nonzero(truncated != closed)
    assert differ == np.count_nonzero((q0 + q1) % 2 == 1) == 32768, differ
