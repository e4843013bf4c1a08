"""vela_bin_stream writer/reader and the Vela .tflite import (ethos-u-delegate.md §2).
Oracles: upstream's own blob in ethos_u_minimal_example.pte (bytes and framing), the raw
bytes of the .tflite files (file offsets from models/ethos-u/README.md), and the README's
shapes, sizes and offsets. The blob is re-parsed here by a few lines of test code that do
not use ptec's reader."""
import os
import random
import struct
import subprocess
import sys
from collections import Counter

import pytest

from conftest import ROOT, SHARED, UPSTREAM
from ptec.backends.ethos_u.blob import (BLOCK_ORDER, IoEntry, VelaBlob, VelaBlobError,
                                        read_blob, write_blob)
from ptec.pte.reader import parse_program, read_program
from ptec.pte.schema import DataLocation
from ptec.backends.ethos_u.vela_import import import_vela_model
from ptec.tflite import TFLiteError, import_tflite, parse_model, read_model

MODELS = os.path.join(SHARED, "models", "ethos-u")
PERSON = os.path.join(MODELS, "tflm", "person_detect.tflite")
PERSON_VELA = os.path.join(MODELS, "tflm", "person_detect_vela.tflite")
KWS = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")
MINIMAL = os.path.join(UPSTREAM, "ethos_u_minimal_example.pte")


def _raw(path):
    with open(path, "rb") as f:
        return f.read()


def _blocks(blob):
    """Test-local framing parser: [(name, header offset, size, external, reserved, payload)]."""
    out, pos = [], 0
    while pos < len(blob):
        name = blob[pos:pos + 16].rstrip(b"\0").decode()
        size, ext = struct.unpack_from("<IB", blob, pos + 16)
        out.append((name, pos, size, ext, blob[pos + 21:pos + 32], blob[pos + 32:pos + 32 + size]))
        pos += 32 + (size + 15) // 16 * 16
    assert pos == len(blob)
    return out


def _io(payload):
    n = struct.unpack_from("<i", payload)[0]
    return [struct.unpack_from("<9i", payload, 4 + 36 * i) for i in range(n)]


def _upstream_blob():
    return read_program(MINIMAL).backend_delegate_data[0].data


def _delegate(pte):
    prog = parse_program(pte)
    plan = prog.execution_plan[0]
    assert len(plan.delegates) == 1
    d = plan.delegates[0]
    assert d.processed.location == DataLocation.SEGMENT     # upstream's default
    return prog, plan, d, prog.segment_data[d.processed.index]


def test_writer_reproduces_upstream_blob_bytes():
    up = _upstream_blob()
    parsed = read_blob(up)
    assert parsed.scratch_size == 144
    assert [e.offset for e in parsed.inputs] == [64, 16] and parsed.outputs[0].offset == 0
    assert write_blob(parsed) == up


def test_framing_matches_upstream_sample():
    up = _blocks(_upstream_blob())
    ours = _blocks(_delegate(import_tflite(PERSON_VELA))[3])
    assert [b[0] for b in ours] == [b[0] for b in up] == list(BLOCK_ORDER)
    for blocks in (up, ours):
        assert all(b[1] % 16 == 0 and b[3] == 0 and b[4] == bytes(11) for b in blocks)
        assert blocks[0][2] == 0 and blocks[-1][2] == 0 and blocks[3][2] == 4


def test_person_detect_vela_import():
    raw = _raw(PERSON_VELA)
    prog, plan, d, blob = _delegate(import_tflite(PERSON_VELA))
    assert d.id == "EthosUBackend"
    upstream_keys = [c.key for c in read_program(MINIMAL).execution_plan[0].delegates[0].compile_specs]
    assert [c.key for c in d.compile_specs] == upstream_keys
    specs = {c.key: c.value for c in d.compile_specs}
    assert specs["target"] == b"ethos-u55-256" and specs["output_format"] == b"vela"
    b = {name: payload for name, _, _, _, _, payload in _blocks(blob)}
    assert b["cmd_data"] == raw[260784:260784 + 8168]
    assert b["weight_data"] == raw[272:272 + 260480]
    assert struct.unpack("<I", b["scratch_size"])[0] == 74464
    assert _io(b["inputs"]) == [(1, 1, 1, 96, 96, 1, 1, 0, 1)]
    assert _io(b["outputs"]) == [(1, 1, 1, 1, 1, 2, 1, 0, 1)]
    # program I/O: the int8 model input and output; the NHWC input as [N,C,H,W]
    # channels-last like the int8 importer (docs/tflite-import.md), i.e. the same bytes
    vals = plan.values
    assert [vals[i].val.sizes for i in plan.inputs] == [[1, 1, 96, 96]]
    assert list(vals[plan.inputs[0]].val.dim_order) == [0, 2, 3, 1]
    assert [vals[i].val.sizes for i in plan.outputs] == [[1, 2]]
    assert list(vals[plan.outputs[0]].val.dim_order) == [0, 1]
    assert [int(vals[i].val.scalar_type) for i in plan.inputs + plan.outputs] == [1, 1]  # CHAR
    ins = plan.chains[0].instructions
    assert len(ins) == 1 and ins[0].instr_args.args == plan.inputs + plan.outputs


def test_kws_u65_import():
    prog, plan, d, blob = _delegate(import_tflite(KWS))
    specs = {c.key: c.value for c in d.compile_specs}
    assert specs["target"] == b"ethos-u65-256"
    b = {name: payload for name, _, _, _, _, payload in _blocks(blob)}
    assert len(b["cmd_data"]) == 3348 and len(b["weight_data"]) == 72320
    assert struct.unpack("<I", b["scratch_size"])[0] == 46720
    assert _io(b["inputs"]) == [(1, 1, 1, 1, 1, 490, 1, 0, 1)]
    assert _io(b["outputs"]) == [(1, 1, 1, 1, 1, 12, 1, 0, 1)]
    assert [plan.values[i].val.sizes for i in plan.inputs + plan.outputs] == [[1, 490], [1, 12]]


def _good():
    return VelaBlob(b"COP1" + bytes(12), b"\1" * 5, 64, [IoEntry((1,) * 6, 1, 0)],
                    [IoEntry((1, 1, 1, 1, 1, 2), 1, 16)])


def _patch(blob, pos, fmt, value):
    b = bytearray(blob)
    struct.pack_into(fmt, b, pos, value)
    return bytes(b)


@pytest.mark.parametrize("mutate,match", [
    (lambda b: b[:-32], "vela_end_stream"),                          # end marker missing
    (lambda b: b + bytes(32), "does not end the blob"),              # trailing block
    (lambda b: _patch(b, 16 + 32, "<I", 10 ** 6), "run past"),      # cmd_data lies
    (lambda b: _patch(b, 32, "<4s", b"oops"), "unknown block"),
    (lambda b: _patch(b, 64, "<4s", b"COPX"), "COP1"),
    (lambda b: _patch(b, 0, "<16s", b"cmd_data"), "first block"),
    (lambda b: b[:-1], "multiple of 16"),
])
def test_hostile_blobs(mutate, match):
    good = write_blob(_good())
    assert read_blob(good).outputs[0].offset == 16
    with pytest.raises(VelaBlobError, match=match):
        read_blob(mutate(good))


def test_io_table_count_lies():
    good = write_blob(_good())
    pos = next(p for n, p, *_ in _blocks(good) if n == "inputs")
    with pytest.raises(VelaBlobError, match="count"):
        read_blob(_patch(good, pos + 32, "<i", 2))


def test_writer_refuses_io_outside_scratch():
    bad = _good()
    bad.outputs[0].offset = 63
    with pytest.raises(VelaBlobError, match="outside"):
        write_blob(bad)


def test_non_vela_model_without_int8_importer(monkeypatch):
    import ptec.tflite as tfl
    monkeypatch.setattr(tfl.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TFLiteError, match="unsupported operator DEPTHWISE_CONV_2D"):
        import_tflite(PERSON)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-m", "ptec", *args], capture_output=True,
                          text=True, env=env)


def test_cli_import_tflite(tmp_path):
    out = tmp_path / "pd.pte"
    r = _cli("import-tflite", PERSON_VELA, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == import_tflite(PERSON_VELA)


@pytest.mark.parametrize("source", ["missing.tflite", "truncated", "pte"])
def test_cli_import_errors(tmp_path, source):
    src = {"missing.tflite": str(tmp_path / "missing.tflite"),
           "pte": MINIMAL}.get(source)
    if source == "truncated":
        src = str(tmp_path / "t.tflite")
        with open(src, "wb") as f:
            f.write(_raw(PERSON_VELA)[:5000])
    out = tmp_path / "o.pte"
    r = _cli("import-tflite", src, "-o", str(out))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not out.exists() and os.listdir(tmp_path) in ([], ["t.tflite"])


def test_vela_and_int8_imports_take_the_same_tensors():
    """person_detect_vela.tflite is person_detect.tflite compiled by Vela: both imports must
    give programs with the same input and output tensors (sizes, dim order, dtype)."""
    def io(pte):
        plan = parse_program(pte).execution_plan[0]
        return [(v.sizes, list(v.dim_order), int(v.scalar_type))
                for v in (plan.values[i].val for i in plan.inputs + plan.outputs)]
    assert io(import_tflite(PERSON_VELA)) == io(import_tflite(PERSON))


def _edited(path, edit):
    m = read_model(path)
    edit(m)
    return m


@pytest.mark.parametrize("edit,match", [
    (lambda m: m.metadata.pop("OfflineMemoryAllocation"), "no OfflineMemoryAllocation"),
    (lambda m: setattr(m.subgraphs[0].tensors[5], "type", "FLOAT32"), "FLOAT32"),
    (lambda m: setattr(m.subgraphs[0].tensors[5], "shape", [1] * 7), "more than 6"),
    (lambda m: m.metadata.update(OfflineMemoryAllocation=struct.pack(
        "<9i", 0, 1, 6, 0, -1, -1, 0, 0, 74464 - 9215)), "outside the scratch area"),
    (lambda m: m.metadata.update(OfflineMemoryAllocation=struct.pack(
        "<9i", 0, 1, 6, 0, -1, -1, 0, 0, -1)), "no offline arena offset"),
    (lambda m: m.subgraphs[0].operators[0].inputs.pop(), "is not the network's"),
    (lambda m: setattr(m.subgraphs[0].tensors[1], "data", b"COP1" + bytes(4)),
     "ethos-u command stream"),
])
def test_vela_import_refusals(edit, match):
    with pytest.raises(TFLiteError, match=match):
        import_vela_model(_edited(PERSON_VELA, edit))


def test_mutated_vela_files_fail_cleanly():
    """Seeded byte edits of a Vela model: parse and import either succeed or raise
    TFLiteError, nothing else."""
    raw = _raw(KWS)
    rng = random.Random(7)
    outcomes = Counter()
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 4)):     # mostly the tables before and after the data
            pos = rng.choice([rng.randrange(0, 400), rng.randrange(len(b) - 3000, len(b))])
            b[pos] = rng.randrange(256)
        try:
            import_vela_model(parse_model(bytes(b)))
            outcomes["ok"] += 1
        except TFLiteError:
            outcomes["refused"] += 1
    assert outcomes["ok"] and outcomes["refused"]


def _cop_with_stream(stream):
    words = [0x31504F43, 0x00100001, 0x3008, 0x10060000, 5, 5, 5,
             0x0002 | len(stream) << 16] + stream
    return struct.pack("<%dI" % len(words), *words)


def test_fast_scratch_bytes():
    from ptec.backends.ethos_u.vela_import import fast_scratch_bytes
    assert fast_scratch_bytes(read_model(PERSON_VELA)) == 0
    assert fast_scratch_bytes(read_model(KWS)) == 0
    # a stream whose pool reads region 2: Vela's fast-scratch tensor (74,464 B) is needed
    m = _edited(PERSON_VELA, lambda m: setattr(m.subgraphs[0].tensors[1], "data", _cop_with_stream(
        [0x010F | 2 << 16, 0x0005 | 1 << 16, 0xFFFF << 16])))
    assert fast_scratch_bytes(m) == 74464


def test_cli_notes_the_fast_scratch(tmp_path, monkeypatch, capsys):
    import ptec.backends.ethos_u.vela_import as vi
    from ptec.cli import main
    monkeypatch.setattr(vi, "fast_scratch_bytes", lambda model: 4096)
    assert main(["import-tflite", PERSON_VELA, "-o", str(tmp_path / "x.pte")]) == 0
    assert "PTEC_ETHOSU_FAST_SCRATCH_BYTES >= 4096" in capsys.readouterr().out


def test_fast_scratch_of_an_undecodable_stream_is_refused():
    from ptec.backends.ethos_u.vela_import import fast_scratch_bytes
    m = _edited(PERSON_VELA, lambda m: setattr(m.subgraphs[0].tensors[1], "data",
                                                _cop_with_stream([0x4000 | 0x020])))
    with pytest.raises(TFLiteError, match="payload"):
        fast_scratch_bytes(m)
