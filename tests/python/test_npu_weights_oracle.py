"""person_detect weight oracle (spec §8.2 "oracle 0", models/ethos-u/README.md "How tests use
these files" item 1): every CONV/DEPTHWISE op in person_detect_vela.tflite's command stream,
decoded by ptec's NPU model (mlw stream, brick order, scale records; region-1 copies made by
the stream's own DMAs), must hold exactly person_detect.tflite's weights and biases, and the
(scale, shift) pairs Vela derives from its quantization (spec §4.3), slice by slice.

The C side only dumps (tests/c/npu/npu_weights_dump.c runs the stream on the model with an
observer); the expected values come from the original .tflite through the package's reader
and the formula of spec §4.3 written here. No arithmetic of the NPU is involved.
"""
import math
import os
import struct
import subprocess

import numpy as np
import pytest

from conftest import ROOT, SHARED
from ptec.tflite.reader import read_model

DUMP = os.path.join(ROOT, "build", "host", "tests", "c", "npu", "npu_weights_dump")
TFLM = os.path.join(SHARED, "models", "ethos-u", "tflm")
ORIGINAL = os.path.join(TFLM, "person_detect.tflite")
VELA = os.path.join(TFLM, "person_detect_vela.tflite")
ACCELERATOR = "ethos-u55-256"  # the models README: vela --accelerator-config=ethos-u55-256

HEADER = struct.Struct("<14I")
RECORD = np.dtype([("bias", "<i8"), ("scale", "<u4"), ("shift", "<u4")])
KIND_CONV, KIND_DEPTHWISE = 2, 3


def quantise_scale(scale):
    """Vela's (scale, shift) for a double scale (spec §4.3): frexp; the significand times 2^31
    rounded away from zero; shift = 31 - exponent; (0, 16) when the shift leaves 0..63."""
    significand, exponent = math.frexp(scale)
    magnitude = math.floor(abs(significand) * (1 << 31) + 0.5)
    shift = 31 - exponent
    if not 0 <= shift < 64:
        return 0, 16
    return int(math.copysign(magnitude, significand)), shift


def vela_parts(path):
    """COP1 payload, flash (region 0) and scratch size of the one ethos-u operator."""
    g = read_model(path).subgraphs[0]
    (op,) = g.operators
    assert op.name == "ethos-u"
    cop, flash, scratch = (g.tensors[i] for i in op.inputs[:3])
    return cop.array().tobytes(), flash.array().tobytes(), scratch.numel


def run_dump(tmp_path, cop, flash, scratch_bytes):
    assert os.path.exists(DUMP), "build the host preset first (make host)"
    paths = {name: os.path.join(str(tmp_path), name) for name in ("cop.bin", "flash.bin", "ops.bin")}
    with open(paths["cop.bin"], "wb") as f:
        f.write(cop)
    with open(paths["flash.bin"], "wb") as f:
        f.write(flash)
    proc = subprocess.run([DUMP, ACCELERATOR, paths["cop.bin"], paths["flash.bin"], str(scratch_bytes),
                           paths["ops.bin"]], capture_output=True, text=True)
    ops = read_dump(paths["ops.bin"]) if os.path.exists(paths["ops.bin"]) else []
    return proc, ops


def read_dump(path):
    with open(path, "rb") as f:
        data = f.read()
    ops, pos = [], 0
    while pos < len(data):
        (word, kind, ofm_depth, kh, kw, dense_ic, ifm_depth, sx, sy, pkf, weight_region, scale_mode,
         weight_base, weight_length) = HEADER.unpack_from(data, pos)
        pos += HEADER.size
        n = ofm_depth * kh * kw * dense_ic
        weights = np.frombuffer(data, "<i2", n, pos).reshape(ofm_depth, kh, kw, dense_ic)
        pos += 2 * n
        records = np.frombuffer(data, RECORD, ofm_depth, pos)
        pos += RECORD.itemsize * ofm_depth
        ops.append(dict(word=word, kind=kind, depth=ofm_depth, kernel=(kh, kw), ifm_depth=ifm_depth,
                        stride=(sy, sx), weight_region=weight_region, scale_mode=scale_mode,
                        weight_base=weight_base, weight_length=weight_length, weights=weights,
                        records=records))
    assert pos == len(data), "truncated dump"
    return ops


def expected_layers(path):
    """Per CONV_2D/DEPTHWISE_CONV_2D of the original model, in order: its kind, the weights as
    the NPU holds them (w - zp, [ofm][ky][kx][ic], ic 1 for depthwise), biases, (scale, shift)."""
    g = read_model(path).subgraphs[0]
    layers = []
    for op in g.operators:
        if op.name not in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            continue
        ifm, w, b = (g.tensors[i] for i in op.inputs[:3])
        ofm = g.tensors[op.outputs[0]]
        zp = np.asarray(w.quantization.zero_point, np.int16)
        if zp.size > 1:  # per channel, along the quantized dimension
            shape = [1] * len(w.shape)
            shape[w.quantization.quantized_dimension] = zp.size
            zp = zp.reshape(shape)
        values = w.array().astype(np.int16) - zp
        if op.name == "CONV_2D":
            dense = values  # OHWI
        else:
            dense = values[0].transpose(2, 0, 1)[..., None]  # [1,kh,kw,O] -> [O,kh,kw,1]
        s_in, s_out = float(ifm.quantization.scale[0]), float(ofm.quantization.scale[0])
        s_w = [float(s) for s in w.quantization.scale]
        if len(s_w) == 1:
            s_w = s_w * dense.shape[0]
        scales = [quantise_scale((s_in * s) / s_out) for s in s_w]
        layers.append(dict(index=op.index, name=op.name, options=op.options, ifm_shape=ifm.shape,
                           weights=dense, bias=b.array().astype(np.int64), scales=scales,
                           weight_count=values.size))
    return layers


def as_npu_conv_on_pairs(layer):
    """The first layer, a depthwise conv with multiplier 8 on one channel and stride x 2, runs
    as a CONV on the input viewed as W/2 x 2 channels (spec §8.2): tap kx becomes (kx // 2,
    channel kx % 2); taps past the kernel are 0."""
    dense = layer["weights"]  # [O, kh, kw, 1]
    o, kh, kw, _ = dense.shape
    pairs = np.zeros((o, kh, (kw + 1) // 2, 2), np.int16)
    for kx in range(kw):
        pairs[:, :, kx // 2, kx % 2] = dense[:, :, kx, 0]
    return pairs


def compare(ops, layers):
    """Walks the NPU ops in stream order, each an OFM-depth slice of the next layer. Returns
    (mismatch messages, weights compared, records compared)."""
    problems, n_weights, n_records = [], 0, 0
    it = iter(ops)
    for li, layer in enumerate(layers):
        full = layer["weights"].shape[0]
        want_weights = layer["weights"]
        want_kind = KIND_CONV if layer["name"] == "CONV_2D" else KIND_DEPTHWISE
        if li == 0 and layer["name"] == "DEPTHWISE_CONV_2D" and layer["ifm_shape"][-1] == 1:
            want_weights, want_kind = as_npu_conv_on_pairs(layer), KIND_CONV
        offset = 0
        while offset < full:
            op = next(it, None)
            if op is None:
                problems.append(f"layer {layer['index']}: no NPU op for channels {offset}..")
                return problems, n_weights, n_records
            where = f"layer {layer['index']} ({layer['name']}) NPU op at word {op['word']}"
            depth = op["depth"]
            if op["kind"] != want_kind or offset + depth > full:
                problems.append(f"{where}: kind {op['kind']} depth {depth} at {offset} of {full}")
                return problems, n_weights, n_records
            got, want = op["weights"], want_weights[offset:offset + depth]
            if got.shape != want.shape:
                problems.append(f"{where}: weights shape {got.shape}, want {want.shape}")
            elif not np.array_equal(got, want):
                bad = np.argwhere(got != want)[0]
                problems.append(f"{where}: weight {tuple(bad)} is {got[tuple(bad)]}, "
                                f"want {want[tuple(bad)]}")
            if op["scale_mode"] != 0:
                problems.append(f"{where}: global scale mode, want per-channel records")
            for c in range(depth):
                rec, ch = op["records"][c], offset + c
                want_scale = layer["scales"][ch]
                if (int(rec["bias"]), int(rec["scale"]), int(rec["shift"])) != \
                        (int(layer["bias"][ch]), *want_scale):
                    problems.append(f"{where}: channel {ch} record (bias {rec['bias']}, scale "
                                    f"{rec['scale']}, shift {rec['shift']}), want (bias "
                                    f"{layer['bias'][ch]}, {want_scale})")
                    break
            n_weights += want.size
            n_records += depth
            offset += depth
    extra = list(it)
    if extra:
        problems.append(f"{len(extra)} NPU ops beyond the model's layers (first at word {extra[0]['word']})")
    return problems, n_weights, n_records


@pytest.fixture(scope="module")
def models():
    for path in (ORIGINAL, VELA):
        if not os.path.exists(path):
            pytest.skip(f"{path} not found (set PTEC_SHARED)")
    return vela_parts(VELA), expected_layers(ORIGINAL)


def test_every_weight_stream_and_scale_record_matches_person_detect(models, tmp_path):
    (cop, flash, scratch), layers = models
    proc, ops = run_dump(tmp_path, cop, flash, scratch)
    assert proc.returncode == 0, proc.stderr
    # spec §8.2: 32 CONV + 23 DEPTHWISE NPU ops; one reads its weights from region 0 in
    # place, the others from region-1 copies the stream DMA'd
    assert len(ops) == 55
    assert sum(op["kind"] == KIND_CONV for op in ops) == 32
    assert sum(op["weight_region"] == 1 for op in ops) == 54
    assert ops[0]["word"] == 82 and ops[-1]["word"] == 1615
    problems, n_weights, n_records = compare(ops, layers)
    assert not problems, "\n".join(problems[:10])
    # all of the original's weights (the first layer's 72 as 96 with its zero taps) and records
    assert sum(layer["weight_count"] for layer in layers) == 207968
    assert n_weights == 207968 + (96 - 72)
    assert n_records == 2738


def test_the_comparison_catches_one_changed_weight(models, tmp_path):
    """The oracle can fail: one weight changed in the expected model, and one bit flipped
    in the middle of the region-0 weight stream, are each reported."""
    (cop, flash, scratch), layers = models
    proc, ops = run_dump(tmp_path, cop, flash, scratch)
    assert proc.returncode == 0, proc.stderr
    layers[5]["weights"] = layers[5]["weights"].copy()
    layers[5]["weights"][3, 1, 1, 0] += 1
    problems, _, _ = compare(ops, layers)
    assert len(problems) == 1 and "weight (3, 1, 1, 0)" in problems[0]

    last = ops[-1]
    assert last["weight_region"] == 0
    flipped = bytearray(flash)
    flipped[last["weight_base"] + last["weight_length"] // 2] ^= 0x10
    proc, ops = run_dump(tmp_path, cop, bytes(flipped), scratch)
    problems, _, _ = compare(ops, expected_layers(ORIGINAL))
    assert proc.returncode != 0 or problems
