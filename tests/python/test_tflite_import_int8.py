"""The int8 TFLite importer (ptec.tflite.import_int8, docs/tflite-import.md)
against an independent numpy TFLite reference (tflite_reference.py), run on
the C runtime (ptec-run)."""
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import tflite_reference as R
from conftest import ROOT
from person_detect_oracle import (PERSON_DETECT, TFLM, bmp_pixels_top_down, oracle_inputs,
                                  reference_outputs, tflm_input)
from ptec import host_runtime
from ptec.tflite import reader
from ptec.tflite.import_int8 import UnsupportedTFLite, import_int8

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def load(path):
    return reader.read_model(path)


def run_nhwc(result, inputs):
    """Runs the imported program on NHWC inputs; outputs as TFLite-shaped arrays."""
    ins = [x.transpose(0, 3, 1, 2) if x.ndim == 4 else x for x in inputs]
    outs = host_runtime.run(result.program, result.data, ins)
    return [o.transpose(0, 2, 3, 1) if o.ndim == 4 else o for o in outs]


# -- person_detect ---------------------------------------------------------------

@pytest.fixture(scope="module")
def person_detect():
    model = load(PERSON_DETECT)
    sg = model.subgraphs[0]
    layers = [int(op.outputs[0]) for op in sg.operators]
    return model, import_int8(model, outputs=layers), layers


def _reference_graph(model):
    """The model as the reference interpreter takes it."""
    sg = model.subgraphs[0]
    tensors = []
    for t in sg.tensors:
        q = t.quantization
        tensors.append((list(t.shape), None if t.data is None else t.array(),
                        None if q is None else np.asarray(q.scale, np.float32),
                        None if q is None else np.asarray(q.zero_point, np.int64)))
    ops = [(op.name, list(op.inputs), list(op.outputs), dict(op.options)) for op in sg.operators]
    return tensors, ops


def _inputs():
    rng = np.random.default_rng(20261123)
    named = [("person.bmp raw", bmp_pixels_top_down(os.path.join(TFLM, "person.bmp")).view(np.int8)),
             ("no_person.bmp raw", bmp_pixels_top_down(os.path.join(TFLM, "no_person.bmp")).view(np.int8)),
             ("person.bmp pixel-128", (bmp_pixels_top_down(os.path.join(TFLM, "person.bmp"))
                                       .astype(np.int16) - 128).astype(np.int8))]
    named += [(f"random {k}", rng.integers(-128, 128, (96, 96), dtype=np.int64).astype(np.int8))
              for k in range(3)]
    return named


def test_person_detect_every_layer_matches_the_tflite_reference(person_detect):
    model, result, layers = person_detect
    tensors, ops = _reference_graph(model)
    assert [o[0] for o in ops].count("DEPTHWISE_CONV_2D") == 14 and len(ops) == 31
    for name, x in _inputs():
        x = x.reshape(1, 96, 96, 1)
        env = R.run_person_detect(tensors, ops, x)
        got = run_nhwc(result, [x])
        for k, (t, g) in enumerate(zip(layers, got)):
            ref = env[t]
            g = np.asarray(g).reshape(ref.shape)
            assert np.array_equal(g, ref), (
                f"{name}: layer {k} ({ops[k][0]}) differs in {(g != ref).sum()} of {ref.size} "
                f"bytes, max {np.abs(g.astype(int) - ref.astype(int)).max()}")


def test_person_detect_oracle_inputs_match_the_tflite_reference(person_detect):
    """The NPU oracle's 102 inputs (person_detect_oracle.py): ptec's reference
    bytes equal the numpy TFLite reference's."""
    model, result, layers = person_detect
    tensors, ops = _reference_graph(model)
    named = oracle_inputs()
    assert len(named) == 102
    got = reference_outputs([x for _, x in named])
    for (name, x), g in zip(named, got):
        ref = R.run_person_detect(tensors, ops, x)[layers[-1]].reshape(2)
        assert np.array_equal(g, ref), (name, g, ref)


def test_person_detect_tflm_smoke_check():
    """TFLM's person_detection_test: raw BMP bytes in; person (index 1) wins
    on person.bmp, notperson (index 0) on no_person.bmp."""
    result = import_int8(load(PERSON_DETECT))
    assert result.lowered.inputs[0].sizes == [1, 1, 96, 96]
    scores = {bmp: run_nhwc(result, [tflm_input(bmp)])[0].reshape(2)
              for bmp in ("person.bmp", "no_person.bmp")}
    assert scores["person.bmp"][1] > scores["person.bmp"][0], scores
    assert scores["no_person.bmp"][0] > scores["no_person.bmp"][1], scores


# -- the other operators, on small synthetic models -----------------------------

def F(scale, zp):
    """A (scale, zero point) pair as a .tflite stores it (float32 scale)."""
    return float(np.float32(scale)), int(zp)


class Model:
    """A TFLite model built in memory as the reader's objects."""

    def __init__(self):
        self.tensors, self.ops = [], []

    def t(self, shape, ty="INT8", q=None, data=None):
        qp = None if q is None else reader.Quantization(
            scale=[float(v) for v in np.atleast_1d(q[0])],
            zero_point=[int(v) for v in np.atleast_1d(q[1])])
        i = len(self.tensors)
        self.tensors.append(reader.Tensor(
            index=i, name=f"t{i}", shape=list(shape), type=ty, buffer=0,
            data=None if data is None else np.ascontiguousarray(data).tobytes(), quantization=qp))
        return i

    def op(self, name, ins, outs, **opts):
        self.ops.append(reader.Operator(index=len(self.ops), name=name, builtin=name, version=1,
                                        inputs=list(ins), outputs=list(outs), options=opts))

    def model(self, ins, outs):
        g = reader.SubGraph(index=0, name=None, tensors=self.tensors, inputs=list(ins),
                            outputs=list(outs), operators=self.ops)
        return reader.Model(version=3, description=None, operator_codes=[], subgraphs=[g],
                            buffers=[b""], metadata={})


TARGETS = ["cortex-m55", "cortex-m33"]


def _i8(rng, *shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


def _run(m, ins, outs, xs, target):
    return run_nhwc(import_int8(m.model(ins, outs), target), xs)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("per_channel", [False, True])
def test_fully_connected(target, per_channel):
    rng = np.random.default_rng(1)
    m, qi, qo = Model(), F(0.05, 3), F(0.11, -7)
    x = m.t([1, 2, 2, 6], q=qi)
    ws = (rng.uniform(0.005, 0.02, 5) if per_channel else np.array([0.01])).astype(np.float32)
    w, b = _i8(rng, 5, 24), rng.integers(-500, 500, 5).astype(np.int32)
    wi = m.t([5, 24], q=(ws, np.zeros(ws.size)), data=w)
    bi = m.t([5], "INT32", q=(ws * np.float32(qi[0]), np.zeros(ws.size)), data=b)
    o = m.t([1, 5], q=qo)
    m.op("FULLY_CONNECTED", [x, wi, bi], [o], fused_activation_function="RELU")
    xv = _i8(rng, 1, 2, 2, 6)
    got = _run(m, [x], [o], [xv], target)[0]
    assert np.array_equal(got, R.fully_connected(xv, w, b, qi, qo, ws, "RELU"))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("padding", ["SAME", "VALID"])           # SAME is asymmetric here
@pytest.mark.parametrize("pool", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_pools(target, padding, pool):
    rng = np.random.default_rng(2)
    m, q = Model(), F(0.02, -5)
    x = m.t([1, 7, 8, 3], q=q)
    o = m.t([1, 4, 4, 3] if padding == "SAME" else [1, 3, 3, 3], q=q)
    opts = dict(padding=padding, stride_w=2, stride_h=2, filter_width=3, filter_height=3,
                fused_activation_function="RELU6")
    m.op(pool, [x], [o], **opts)
    xv = _i8(rng, 1, 7, 8, 3)
    got = _run(m, [x], [o], [xv], target)[0]
    if pool == "MAX_POOL_2D":
        ref = R.max_pool(xv, opts, q)
    else:
        ref = np.clip(R.avg_pool(xv, opts), *R.act_range("RELU6", *q))
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("target", TARGETS)
def test_conv_same_stride2_and_depthwise_multiplier(target):
    rng = np.random.default_rng(3)
    qi, qo = F(0.03, -2), F(0.07, 4)
    xv = _i8(rng, 1, 9, 10, 4)
    for depthwise in (False, True):
        m = Model()
        x = m.t([1, 9, 10, 4], q=qi)
        cout = 8 if depthwise else 6
        wshape = [1, 3, 3, cout] if depthwise else [cout, 3, 3, 4]
        ws = rng.uniform(0.005, 0.02, cout).astype(np.float32)
        w, b = _i8(rng, *wshape), rng.integers(-900, 900, cout).astype(np.int32)
        wi = m.t(wshape, q=(ws, np.zeros(cout)), data=w)
        bi = m.t([cout], "INT32", q=(ws * np.float32(qi[0]), np.zeros(cout)), data=b)
        stride = 1 if depthwise else 2
        o = m.t([1, 9, 10, cout] if depthwise else [1, 5, 5, cout], q=qo)
        opts = dict(padding="SAME", stride_w=stride, stride_h=stride, fused_activation_function="RELU",
                    dilation_w_factor=1, dilation_h_factor=1)
        if depthwise:
            opts["depth_multiplier"] = 2
        m.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wi, bi], [o], **opts)
        got = _run(m, [x], [o], [xv], target)[0]
        assert np.array_equal(got, R.conv(xv, w, b, qi, qo, ws, opts, depthwise)), depthwise


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("other_shape", [[1, 4, 5, 6], [6]])
def test_add_mul(target, other_shape):
    rng = np.random.default_rng(4)
    qa, qb, qo = F(0.04, -3), F(0.09, 10), F(0.1, -1)
    av, bv = _i8(rng, 1, 4, 5, 6), _i8(rng, *other_shape)
    for name, act in (("ADD", "RELU"), ("MUL", "RELU6")):
        m = Model()
        a, b, o = m.t([1, 4, 5, 6], q=qa), m.t(other_shape, q=qb), m.t([1, 4, 5, 6], q=qo)
        m.op(name, [a, b], [o], fused_activation_function=act)
        got = _run(m, [a, b], [o], [av, bv], target)[0]
        fn = R.add if name == "ADD" else R.mul
        assert np.array_equal(got, fn(av, np.broadcast_to(bv, av.shape), qa, qb, qo, act)), name


@pytest.mark.parametrize("target", TARGETS)
def test_quantize_requantize_dequantize(target):
    rng = np.random.default_rng(5)
    qa, qo = F(0.04, -3), F(0.1, -1)
    m = Model()
    x, o = m.t([2, 33], q=qa), m.t([2, 33], q=qo)
    m.op("QUANTIZE", [x], [o])
    xv = _i8(rng, 2, 33)
    assert np.array_equal(_run(m, [x], [o], [xv], target)[0], R.requantize(xv, qa, qo))
    m = Model()
    x, q8, back = m.t([2, 33], "FLOAT32"), m.t([2, 33], q=qo), m.t([2, 33], "FLOAT32")
    m.op("QUANTIZE", [x], [q8])
    m.op("DEQUANTIZE", [q8], [back])
    xf = rng.normal(0, 5, (2, 33)).astype(np.float32)
    got_q, got_f = _run(m, [x], [q8, back], [xf], target)
    assert np.array_equal(got_q, R.quantize(xf, qo))
    assert np.array_equal(got_f, R.dequantize(R.quantize(xf, qo), qo))


@pytest.mark.parametrize("target", TARGETS)
def test_pad_concatenation_mean(target):
    rng = np.random.default_rng(6)
    q = F(0.05, 7)
    xv = _i8(rng, 1, 3, 4, 5)
    m = Model()
    x = m.t([1, 3, 4, 5], q=q)
    pads = np.array([[0, 0], [1, 2], [0, 1], [2, 0]], np.int32)
    p, o = m.t([4, 2], "INT32", data=pads), m.t([1, 6, 5, 7], q=q)
    m.op("PAD", [x, p], [o])
    assert np.array_equal(_run(m, [x], [o], [xv], target)[0], np.pad(xv, pads, constant_values=7))
    for axis, yshape in ((3, [1, 3, 4, 2]), (1, [1, 2, 4, 5])):
        m = Model()
        x, y = m.t([1, 3, 4, 5], q=q), m.t(yshape, q=q)
        o = m.t(list(np.concatenate([xv, np.zeros(yshape, np.int8)], axis).shape), q=q)
        m.op("CONCATENATION", [x, y], [o], axis=axis, fused_activation_function="NONE")
        yv = _i8(rng, *yshape)
        got = _run(m, [x, y], [o], [xv, yv], target)[0]
        assert np.array_equal(got, np.concatenate([xv, yv], axis)), axis
    qi, qo = F(0.05, 7), F(0.03, -4)
    m = Model()
    x = m.t([1, 5, 6, 7], q=qi)
    ax, o = m.t([2], "INT32", data=np.array([1, 2], np.int32)), m.t([1, 1, 1, 7], q=qo)
    m.op("MEAN", [x, ax], [o], keep_dims=True)
    xv = _i8(rng, 1, 5, 6, 7)
    assert np.array_equal(_run(m, [x], [o], [xv], target)[0], R.mean_hw(xv, qi, qo))


def test_unsupported_operator_is_refused_by_name_in_the_importer():
    m = Model()
    x, o = m.t([1, 8], q=F(0.1, 0)), m.t([1, 8], q=F(1 / 256, -128))
    m.op("LOGISTIC", [x], [o])
    with pytest.raises(UnsupportedTFLite, match="LOGISTIC"):
        import_int8(m.model([x], [o]))


def _patched_opcode(data: bytes, old: int, new: int) -> bytes:
    """A copy of a .tflite whose OperatorCode `old` says `new` (both the
    int8 deprecated_builtin_code, field 0, and the int32 builtin_code, field 3)."""
    buf = bytearray(data)

    def field(table, fid):
        vtable = table - struct.unpack_from("<i", buf, table)[0]
        vlen, = struct.unpack_from("<H", buf, vtable)
        if 4 + 2 * fid >= vlen:
            return None
        off, = struct.unpack_from("<H", buf, vtable + 4 + 2 * fid)
        return table + off if off else None
    root = struct.unpack_from("<I", buf, 0)[0]
    codes = field(root, 1)
    vec = codes + struct.unpack_from("<I", buf, codes)[0]
    patched = 0
    for k in range(struct.unpack_from("<I", buf, vec)[0]):
        slot = vec + 4 + 4 * k
        code = slot + struct.unpack_from("<I", buf, slot)[0]
        dep, full = field(code, 0), field(code, 3)
        if full is not None and struct.unpack_from("<i", buf, full)[0] == old:
            struct.pack_into("<i", buf, full, new)
            patched += 1
        if dep is not None and struct.unpack_from("<b", buf, dep)[0] == old:
            struct.pack_into("<b", buf, dep, new)
            patched += 1
    assert patched, "opcode not found"
    return bytes(buf)


def test_cli_refuses_an_unsupported_operator_by_name(tmp_path):
    """person_detect with SOFTMAX (25) turned into LOGISTIC (14): one line
    naming LOGISTIC on stderr, exit 2, no output file."""
    with open(PERSON_DETECT, "rb") as f:
        data = _patched_opcode(f.read(), 25, 14)
    src = tmp_path / "logistic.tflite"
    src.write_bytes(data)
    assert [op.name for op in reader.parse_model(data).subgraphs[0].operators][-1] == "LOGISTIC"
    out = tmp_path / "out.pte"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run([PYTHON, "-m", "ptec", "import-tflite", str(src), "-o", str(out)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "LOGISTIC" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists() and os.listdir(tmp_path) == ["logistic.tflite"]


def test_cli_imports_person_detect(tmp_path):
    out = tmp_path / "pd.pte"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc = subprocess.run([PYTHON, "-m", "ptec", "import-tflite", PERSON_DETECT, "-o", str(out)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == import_int8(load(PERSON_DETECT)).data


@pytest.mark.parametrize("target", TARGETS)
def test_person_detect_on_the_board_equals_the_host(tmp_path, target):
    """The imported person_detect in the QEMU runner firmware: the same bytes
    as ptec-run on the host, for TFLM's person.bmp input."""
    elf = os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    result = import_int8(load(PERSON_DETECT), target)
    pte, raw = tmp_path / "pd.pte", tmp_path / "person.bin"
    pte.write_bytes(result.data)
    x = tflm_input("person.bmp")
    raw.write_bytes(x.tobytes())
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target,
                          "--elf", elf, "--model", str(pte), "--input", str(raw),
                          "--timeout", "120"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    host = run_nhwc(result, [x])[0].reshape(2)
    assert f"output 0: int8 [1, 2], 2 bytes = {host[0]} {host[1]}" in run.stdout, run.stdout


@pytest.mark.parametrize("other_shape", [[1, 4, 5, 6], [6], [1, 1, 1, 6]])
def test_add_with_a_constant_operand(other_shape):
    rng = np.random.default_rng(7)
    qa, qb, qo = F(0.04, -3), F(0.09, 10), F(0.1, -1)
    av, bv = _i8(rng, 1, 4, 5, 6), _i8(rng, *other_shape)
    m = Model()
    a, b, o = m.t([1, 4, 5, 6], q=qa), m.t(other_shape, q=qb, data=bv), m.t([1, 4, 5, 6], q=qo)
    m.op("ADD", [b, a], [o], fused_activation_function="NONE")
    got = _run(m, [a], [o], [av], "cortex-m55")[0]
    assert np.array_equal(got, R.add(np.broadcast_to(bv, av.shape), av, qb, qa, qo, "NONE"))


@pytest.mark.parametrize("fn", ["RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("same_grid", [True, False])
def test_relu_ops(fn, same_grid):
    rng = np.random.default_rng(8)
    qi = F(0.05, -20)
    qo = qi if same_grid else F(0.031, 5)
    m = Model()
    x, o = m.t([1, 3, 4, 5], q=qi), m.t([1, 3, 4, 5], q=qo)
    m.op(fn, [x], [o])
    xv = rng.permutation(np.arange(-128, 128, 4 + 1 / 3).astype(np.int8))[:60].reshape(1, 3, 4, 5)
    got = _run(m, [x], [o], [xv], "cortex-m55")[0]
    assert np.array_equal(got, R.relu_x(xv, qi, qo, fn))


@pytest.mark.parametrize("name", ["ADD", "MUL"])
@pytest.mark.parametrize("constant_first", [False, True])
def test_add_mul_with_a_scalar_constant_become_tables(name, constant_first):
    qa, qc, qo = F(0.04, -3), F(0.02, 11), F(0.07, 2)
    m = Model()
    c = m.t([1], q=qc, data=np.array([-77], np.int8))
    a, o = m.t([2, 128], q=qa), m.t([2, 128], q=qo)
    m.op(name, [c, a] if constant_first else [a, c], [o], fused_activation_function="RELU")
    av = np.arange(-128, 128, dtype=np.int64).astype(np.int8).reshape(2, 128)
    result = import_int8(m.model([a], [o]))
    assert result.lowered.operators == ["cortex_m::quantized_activation.out"]
    got = run_nhwc(result, [av])[0]
    fn = R.add if name == "ADD" else R.mul
    cv = np.full(av.shape, -77, np.int8)
    want = fn(cv, av, qc, qa, qo, "RELU") if constant_first else fn(av, cv, qa, qc, qo, "RELU")
    assert np.array_equal(got, want)


def _mutate(g, rng):
    """One random edit of a subgraph: a dimension, an operator input, an
    option, a tensor type, a dropped input or a scale."""
    kind = rng.integers(0, 6)
    op = g.operators[rng.integers(len(g.operators))]
    t = g.tensors[rng.integers(len(g.tensors))]
    if kind == 0 and t.shape:
        t.shape[rng.integers(len(t.shape))] = int(rng.integers(0, 5))
    elif kind == 1 and op.inputs:
        op.inputs[rng.integers(len(op.inputs))] = int(rng.integers(-1, len(g.tensors)))
    elif kind == 2 and op.options:
        key = sorted(op.options)[rng.integers(len(op.options))]
        if not isinstance(op.options[key], str):
            op.options[key] = int(rng.integers(-2, 5))
    elif kind == 3:
        t.type = ["INT8", "INT32", "FLOAT32", "UINT8"][rng.integers(4)]
    elif kind == 4:
        op.inputs = op.inputs[:rng.integers(0, len(op.inputs) + 1)]
    elif t.quantization:
        t.quantization.scale = [float(rng.choice([0.0, 1e-30, 1e30, -1.0, np.nan]))]


def test_edited_models_import_or_fail_with_one_tflite_error():
    """100 seeded edits of person_detect's parsed model: each imports or
    raises TFLiteError (the CLI's one line), never another exception."""
    import copy
    base = load(PERSON_DETECT)
    rng = np.random.default_rng(2026)
    refused = 0
    for k in range(100):
        m = copy.deepcopy(base)
        for _ in range(rng.integers(1, 3)):
            _mutate(m.subgraphs[0], rng)
        try:
            import_int8(m)
        except reader.TFLiteError as e:
            refused += 1
            assert "\n" not in str(e)
    assert refused > 50


def test_reshapes_move_no_bytes():
    """[1,24] -> RESHAPE [1,2,3,4] -> MAX_POOL 1x1 (clamp) -> SQUEEZE-like
    RESHAPE [2,3,4]: the NHWC bytes pass through unchanged; only the pool
    is an instruction."""
    rng = np.random.default_rng(9)
    q = F(0.1, 0)
    m = Model()
    x, y, z, w = m.t([1, 24], q=q), m.t([1, 2, 3, 4], q=q), m.t([1, 2, 3, 4], q=q), m.t([2, 3, 4], q=q)
    m.op("RESHAPE", [x], [y])
    m.op("MAX_POOL_2D", [y], [z], padding="VALID", stride_w=1, stride_h=1, filter_width=1,
         filter_height=1, fused_activation_function="RELU")
    m.op("SQUEEZE", [z], [w])
    xv = _i8(rng, 1, 24)
    result = import_int8(m.model([x], [w]))
    assert len(result.lowered.builder.instructions) == 1
    assert np.array_equal(run_nhwc(result, [xv])[0], np.maximum(xv, 0).reshape(2, 3, 4))


@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_leaky_relu(alpha):
    qi, qo = F(0.05, -20), F(0.04, 7)
    m = Model()
    x, o = m.t([2, 128], q=qi), m.t([2, 128], q=qo)
    m.op("LEAKY_RELU", [x], [o], alpha=float(np.float32(alpha)))
    xv = np.arange(-128, 128, dtype=np.int64).astype(np.int8).reshape(2, 128)
    got = _run(m, [x], [o], [xv], "cortex-m55")[0]
    assert np.array_equal(got, R.leaky_relu(xv, qi, qo, alpha))


@pytest.mark.parametrize("axis,yshape", [(3, [1, 3, 4, 2]), (1, [1, 2, 4, 5]), (2, [1, 3, 2, 5])])
def test_concatenation_is_right_on_upstream_kernels(axis, yshape):
    """Issue 18: upstream's cat indexes its tensors as contiguous whatever their
    dim order, so the importer cats the [N, H, W, C] views of the channels-last
    bytes. The checker accepts the program, and run with upstream's indexing
    (upstream_semantics) it gives numpy's concatenation."""
    from upstream_semantics import run_as_upstream
    from ptec.pte.upstream_rules import check_program
    rng = np.random.default_rng(18)
    q = F(0.05, 7)
    m = Model()
    x, y = m.t([1, 3, 4, 5], q=q), m.t(yshape, q=q)
    xv, yv = _i8(rng, 1, 3, 4, 5), _i8(rng, *yshape)
    want = np.concatenate([xv, yv], axis)
    o = m.t(list(want.shape), q=q)
    m.op("CONCATENATION", [x, y], [o], axis=axis, fused_activation_function="NONE")
    result = import_int8(m.model([x, y], [o]), "cortex-m55")
    assert check_program(result.program) == []
    got = run_as_upstream(result.program, [xv.transpose(0, 3, 1, 2), yv.transpose(0, 3, 1, 2)])[0]
    assert np.array_equal(np.asarray(got).transpose(0, 2, 3, 1), want)


def test_imported_person_detect_passes_the_upstream_rules(person_detect):
    from ptec.pte.upstream_rules import check_program
    model = person_detect[0]
    assert check_program(import_int8(model).program) == []
