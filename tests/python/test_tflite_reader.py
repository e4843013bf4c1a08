"""ptec.tflite.reader on the real TFLite files in shared/models/ethos-u. Every expected
number comes from shared/models/ethos-u/README.md, spec ethos-u-npu.md §8 or the raw file
bytes, never from the reader."""
import os
import random
import struct

import pytest

from conftest import SHARED
from ptec.tflite import is_vela_model
from ptec.tflite.reader import TFLiteError, parse_model, read_model

MODELS = os.path.join(SHARED, "models", "ethos-u")
PERSON = os.path.join(MODELS, "tflm", "person_detect.tflite")
PERSON_VELA = os.path.join(MODELS, "tflm", "person_detect_vela.tflite")
KWS = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")


def _raw(path):
    with open(path, "rb") as f:
        return f.read()


def test_person_detect_graph():
    m = read_model(PERSON)
    assert m.version == 3 and m.description.startswith("TOCO Converted")
    assert len(m.subgraphs) == 1
    g = m.subgraphs[0]
    assert len(g.tensors) == 89 and len(g.operators) == 31
    names = [op.name for op in g.operators]
    assert names.count("DEPTHWISE_CONV_2D") == 14 and names.count("CONV_2D") == 14
    assert names[27:] == ["AVERAGE_POOL_2D", "CONV_2D", "RESHAPE", "SOFTMAX"]
    assert not is_vela_model(m)


def test_person_detect_io_quantization():
    g = read_model(PERSON).subgraphs[0]
    assert g.inputs == [88] and g.outputs == [87]
    x, y = g.tensors[88], g.tensors[87]
    assert (x.name, x.shape, x.type) == ("input", [1, 96, 96, 1], "INT8")
    assert x.quantization.scale == [pytest.approx(0.007843137718737125, rel=1e-7)]
    assert x.quantization.zero_point == [-1]
    assert (y.name, y.shape, y.type) == ("MobilenetV1/Predictions/Reshape_1", [1, 2], "INT8")
    assert y.quantization.scale == [0.00390625] and y.quantization.zero_point == [-128]
    assert x.data is None and y.data is None


def test_person_detect_options_and_weights():
    g = read_model(PERSON).subgraphs[0]
    first = g.operators[0]
    # README: the first op is a depthwise conv, multiplier 8, 3x3, stride 2, SAME, RELU6
    assert first.options["depth_multiplier"] == 8
    assert (first.options["stride_w"], first.options["stride_h"]) == (2, 2)
    assert first.options["padding"] == "SAME"
    assert first.options["fused_activation_function"] == "RELU6"
    w = g.tensors[first.inputs[1]]
    assert w.shape == [1, 3, 3, 8] and w.type == "INT8"
    q = w.quantization
    assert q.per_channel and len(q.scale) == 8 and q.quantized_dimension == 3
    assert q.zero_point == [0] * 8
    assert w.array().shape == (1, 3, 3, 8)
    b = g.tensors[first.inputs[2]]
    assert b.type == "INT32" and b.array().shape == (8,)
    # the last conv has no activation; pool and softmax options as the README says
    assert g.operators[28].options["fused_activation_function"] == "NONE"
    pool = g.operators[27].options
    assert (pool["filter_width"], pool["filter_height"], pool["padding"]) == (3, 3, "VALID")
    assert g.operators[29].options["new_shape"] == [1, 2]
    assert g.operators[30].options["beta"] == 1.0
    # spec §8.2: 207,968 weights in all conv/depthwise ops
    total = sum(g.tensors[op.inputs[1]].numel for op in g.operators
                if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"))
    assert total == 207968


def test_person_detect_vela():
    raw = _raw(PERSON_VELA)
    m = parse_model(raw)
    assert m.description == "Vela 3.11.0 Optimised"
    assert m.metadata["vela_version"].rstrip(b"\0") == b"3.11.0"
    g = m.subgraphs[0]
    assert len(g.tensors) == 6 and len(g.operators) == 1 and is_vela_model(m)
    op = g.operators[0]
    assert (op.name, op.builtin, op.custom_code) == ("ethos-u", "CUSTOM", "ethos-u")
    assert op.custom_options == bytes([1, 4, 1])
    assert op.inputs == [1, 2, 3, 4, 5] and op.outputs == [0]
    cmd, flash = g.tensors[1], g.tensors[2]
    assert cmd.data == raw[260784:260784 + 8168] and cmd.data[:4] == b"COP1"
    assert flash.data == raw[272:272 + 260480]
    assert g.tensors[3].data is None and g.tensors[3].shape == [74464]
    assert g.tensors[4].data is None and g.tensors[4].shape == [74464]
    assert m.offline_memory_allocation() == [0, -1, -1, 0, 0, 0]
    alloc = struct.unpack("<9i", m.metadata["OfflineMemoryAllocation"])
    assert alloc == (0, 1, 6, 0, -1, -1, 0, 0, 0)
    x, y = g.tensors[5], g.tensors[0]
    assert (x.shape, x.quantization.zero_point) == ([1, 96, 96, 1], [-1])
    assert (y.shape, y.quantization.zero_point) == ([1, 2], [-128])


def test_kws_u65_model():
    m = read_model(KWS)
    g = m.subgraphs[0]
    assert is_vela_model(m) and m.description == "Vela Optimised"
    assert set(m.metadata) == {"min_runtime_version", "OfflineMemoryAllocation"}
    op = g.operators[0]
    sizes = [len(g.tensors[i].data) if g.tensors[i].data else g.tensors[i].numel
             for i in op.inputs[:4]]
    assert sizes == [3348, 72320, 46720, 46720]
    x = g.tensors[op.inputs[4]]
    y = g.tensors[op.outputs[0]]
    assert (x.name, x.shape, x.type) == ("input", [1, 490], "INT8")
    assert (x.quantization.scale, x.quantization.zero_point) == ([1.07421875], [102])
    assert (y.name, y.shape, y.type) == ("Identity", [1, 12], "INT8")
    assert (y.quantization.scale, y.quantization.zero_point) == ([0.00390625], [-128])


@pytest.mark.parametrize("cut", [8, 64, 1000, 100000])
def test_truncated_file_is_a_clean_error(cut):
    with pytest.raises(TFLiteError):
        parse_model(_raw(PERSON)[:cut])


def test_not_a_tflite_file():
    with pytest.raises(TFLiteError, match="not a TFLite model"):
        parse_model(b"\x10\0\0\0ET12" + bytes(32))


def test_mutated_files_parse_or_fail_cleanly():
    """Seeded byte edits in the tables of person_detect.tflite (its first 200 and last
    12,000 bytes): parse_model and every tensor's array() succeed or raise TFLiteError."""
    raw = _raw(PERSON)
    rng = random.Random(5)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 6)):
            b[rng.choice([rng.randrange(0, 200), rng.randrange(len(b) - 12000, len(b))])] = \
                rng.randrange(256)
        try:
            m = parse_model(bytes(b))
            for t in m.subgraphs[0].tensors:
                if t.data is not None:
                    try:
                        t.array()
                    except TFLiteError:
                        pass
            outcomes["ok"] += 1
        except TFLiteError:
            outcomes["refused"] += 1
    assert outcomes["ok"] and outcomes["refused"]
