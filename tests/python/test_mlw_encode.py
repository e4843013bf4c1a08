"""The mlw weight encoder (python/ptec/backends/ethos_u/mlw_encode.py, spec ethos-u-npu.md
§4.4) against ptec's own decoder: every stream goes through the NPU model's mlw_decode() by
way of tests/c/npu/mlw_decode_dump.c and must give back exactly the values encoded. The
padding rule and the chosen modes are read from the bytes here, not from the encoder.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from ptec.backends.ethos_u import mlw_encode
from ptec.backends.ethos_u.mlw_encode import encode_weights

TOOL = os.path.join(ROOT, "build", "host", "tests", "c", "npu", "mlw_decode_dump")
RNG_SEED = 20240611


@pytest.fixture
def decode(tmp_path):
    """decode(stream) -> (exit code, int16 values or None, stderr) through the C model."""
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing: build it with "
                    "`cmake --build --preset host --target mlw_decode_dump` (or make host)")
    counter = [0]

    def run(stream):
        counter[0] += 1
        src = tmp_path / f"s{counter[0]}.bin"
        dst = tmp_path / f"v{counter[0]}.bin"
        src.write_bytes(stream)
        proc = subprocess.run([TOOL, str(src), str(dst)], capture_output=True, text=True)
        values = np.fromfile(str(dst), "<i2") if proc.returncode == 0 else None
        return proc.returncode, values, proc.stderr

    return run


def first_header(stream):
    """The first slice's (ZDIV, SLICELEN, WDIV, WTRUNC, NEWPAL), LSB-first."""
    bits = int.from_bytes(stream[:3], "little")
    return bits & 7, ((bits >> 3) & 0x7FFF) + 1, (bits >> 18) & 7, (bits >> 21) & 1, (bits >> 22) & 1


def first_palette_fields(stream):
    """The first slice's (DIROFS, PALSIZE field, PALBITS) after the 23 header bits."""
    bits = int.from_bytes(stream[:5], "little")
    return (bits >> 23) & 31, (bits >> 28) & 31, ((bits >> 33) & 7) + 2


def decodes_to(decode, stream, values):
    rc, got, err = decode(stream)
    return rc == 0 and got.size == len(values) and np.array_equal(got, values)


def check_padding(decode, stream, values):
    """End marker, zero bits to the byte boundary, 0xFF bytes to a multiple of 16. The marker's
    byte m - 1 is the end of the shortest prefix that still decodes (the decoder stops at the
    marker and fails on any earlier cut); its top set bit must be the marker's last bit, which
    clearing must break, so the bits above it are padding and zero."""
    assert len(stream) % 16 == 0 and len(stream) > 0
    lo, hi = max(1, len(stream) - 15), len(stream)
    while lo < hi:
        mid = (lo + hi) // 2
        if decodes_to(decode, stream[:mid], values):
            hi = mid
        else:
            lo = mid + 1
    m = lo
    assert decodes_to(decode, stream[:m], values)
    assert set(stream[m:]) <= {0xFF}, "padding after the marker's byte is not 0xFF"
    last = stream[m - 1]
    assert last != 0
    corrupt = bytearray(stream)
    corrupt[m - 1] &= ~(1 << (last.bit_length() - 1)) & 0xFF
    assert not decodes_to(decode, bytes(corrupt), values), "bits after the end marker are not zero"


def round_trip(decode, values, padding=True):
    values = np.asarray(values, np.int64)
    stream = encode_weights(values)
    assert isinstance(stream, bytes) and len(stream) % 16 == 0
    rc, got, err = decode(stream)
    assert rc == 0, err
    assert got.size == values.size
    mismatch = np.flatnonzero(got != values)
    assert mismatch.size == 0, f"first mismatch at {mismatch[:1]}: {got[mismatch[:1]]} != {values[mismatch[:1]]}"
    if padding:
        check_padding(decode, stream, values)
    return stream


def gaussian_int8(n, sigma=20.0, seed=0):
    rng = np.random.default_rng([RNG_SEED, seed])
    return np.clip(np.round(rng.normal(0.0, sigma, n)), -128, 127).astype(np.int64)


@pytest.mark.parametrize("n", [1, 7, 12, 13, 32768, 32769, 100000])
def test_gaussian_int8_round_trip(decode, n):
    round_trip(decode, gaussian_int8(n, seed=n))


@pytest.mark.parametrize("n", [1, 12, 1000, 40000])
def test_all_zeros(decode, n):
    stream = round_trip(decode, np.zeros(n, np.int64))
    if n >= 1000:
        assert len(stream) * 8 / n < 1.0   # zero runs, not a bit per weight


@pytest.mark.parametrize("value", [-77, 1, 255, -255])
def test_single_repeated_value(decode, value):
    # a one-entry palette cannot be stated (PALSIZE 0 means none)
    stream = round_trip(decode, np.full(5000, value))
    assert len(stream) * 8 / 5000 < 1.2


def test_extremes(decode):
    rng = np.random.default_rng(RNG_SEED)
    round_trip(decode, [-255])
    round_trip(decode, [255])
    round_trip(decode, [-255, 255] * 50)
    round_trip(decode, rng.choice([-255, 255], 3001))
    round_trip(decode, rng.choice([-255, 0, 255], 3001))


def test_uniform_int8(decode):
    rng = np.random.default_rng(RNG_SEED)
    round_trip(decode, rng.integers(-128, 128, 70000))


@pytest.mark.parametrize("density", [0.001, 0.01, 0.05])
def test_very_sparse(decode, density):
    rng = np.random.default_rng([RNG_SEED, int(density * 1000)])
    n = 70000
    values = np.where(rng.random(n) < density, rng.integers(-128, 128, n), 0)
    stream = round_trip(decode, values)
    assert first_header(stream)[0] != 6, "sparse weights should use zero runs"
    assert len(stream) * 8 / n < 1.0


def test_uncompressed_mode(decode):
    # uniform over -255..255: v reaches 511, so Golomb-Rice with divisors up to 2^5 costs more
    # than 9-bit fixed-width indices (WDIV 7)
    rng = np.random.default_rng(RNG_SEED)
    values = rng.integers(-255, 256, 40000)
    stream = round_trip(decode, values)
    assert first_header(stream)[2] == 7
    assert first_header(stream)[0] == 6
    assert len(stream) * 8 / values.size < 9.1


def test_empty_stream(decode):
    stream = encode_weights([])
    assert len(stream) == 16
    rc, got, err = decode(stream)
    assert rc == 0 and got.size == 0


def test_decode_errors_reach_the_test(decode):
    """The C tool fails with the decoder's detail, so a bad stream cannot pass as empty."""
    stream = encode_weights(gaussian_int8(100))
    rc, got, err = decode(stream[:5])
    assert rc == 1 and "weight stream ends" in err


MODES = [(zdiv, wdiv, trunc) for zdiv in (6, 0, 1, 2, 3) for wdiv in (0, 1, 2, 3, 4, 5, 7)
         for trunc in ((0, 1) if wdiv != 7 else (0,))]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: "z%d-w%d-t%d" % m)
def test_every_mode_round_trips(decode, mode):
    """Whatever the cost model picks must decode: each (ZDIV, WDIV, WTRUNC) forced in turn,
    on data with zeros, long runs and (unless truncated quotients forbid it) wide values."""
    rng = np.random.default_rng([RNG_SEED, *mode])
    n = 33000   # two slices
    values = np.round(rng.normal(0, 3, n)) * (rng.random(n) < 0.5)
    values[1000:3000] = 0
    values[5000:5100] = rng.integers(-255, 256, 100)
    if mode[2]:
        values = np.clip(values, -1, 1)   # WTRUNC: quotients <= 2 even with divisor 2^0
    values = values.astype(np.int64)
    stream = mlw_encode._encode(values, force=mode)
    assert first_header(stream)[0] == mode[0] and first_header(stream)[2:4] == mode[1:]
    assert decodes_to(decode, stream, values)
    # a zero-run slice may lead with zeros and end on them
    edge = np.array([0, 0, 0, 1, 0, 0] * 7 + [0] * 30)
    assert decodes_to(decode, mlw_encode._encode(edge, force=mode), edge)


@pytest.mark.parametrize("zdiv", [0, 1, 2, 3])
@pytest.mark.parametrize("span, width", [(15, 5), (31, 6), (255, 9)])
def test_fixed_width_with_zero_runs(decode, zdiv, span, width):
    """Fixed-width indices are read 12 to a chunk up to 5 bits and 8 to a chunk above; with
    zero runs the chunk size moves the balance between the lanes, so both sides of 5 bits."""
    rng = np.random.default_rng([RNG_SEED, zdiv, span])
    n = 5000
    values = np.where(rng.random(n) < 0.5, rng.integers(-span, span + 1, n), 0)
    values[:span] = np.arange(1, span + 1)   # every magnitude, so no palette covers them all
    values[span:2 * span] = -np.arange(1, span + 1)
    stream = mlw_encode._encode(values, force=(zdiv, 7, 0))
    assert first_palette_fields(stream)[1:] == (0, width)
    assert decodes_to(decode, stream, values)


def test_gaussian_compresses_below_7_bits(decode):
    values = gaussian_int8(200000, sigma=20.0, seed=7)
    stream = round_trip(decode, values, padding=False)
    bits_per_weight = len(stream) * 8 / values.size
    assert bits_per_weight < 7.0, bits_per_weight


@pytest.mark.parametrize("bad", [256, -256])
def test_out_of_range_refused(bad):
    values = np.zeros(100, np.int64)
    values[42] = bad
    with pytest.raises(ValueError) as err:
        encode_weights(values)
    message = str(err.value)
    assert "\n" not in message and "-255..255" in message and str(bad) in message


@pytest.mark.parametrize("values", [np.zeros((2, 2), np.int64), [0.5, 1.0]])
def test_bad_shape_or_type_refused(values):
    with pytest.raises(ValueError) as err:
        encode_weights(values)
    assert "\n" not in str(err.value)


def test_no_python_loop_per_weight():
    """Speed sanity without a clock: the Python lines the encoder executes (trace events)
    stay well below one per weight, for the plain and the zero-run mode. A loop over weights
    would need at least one."""
    rng = np.random.default_rng(RNG_SEED)
    n = 4 * 32768
    cases = [gaussian_int8(n, seed=3), np.where(rng.random(n) < 0.05, rng.integers(-128, 128, n), 0)]
    for values in cases:
        events = [0]

        def tracer(frame, event, arg):
            events[0] += 1
            return tracer

        previous = sys.gettrace()   # coverage tools trace too
        sys.settrace(tracer)
        try:
            stream = encode_weights(values)
        finally:
            sys.settrace(previous)
        assert len(stream) > 0
        assert events[0] < n / 2, f"{events[0]} trace events for {n} weights"
