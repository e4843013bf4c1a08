"""The COP1 / command-stream decoder and `ptec inspect` on Ethos-U delegates. The expected
counts, word offsets and geometry are spec ethos-u-npu.md §8.1/§8.2 and the kws README
(decoded independently of this code)."""
import os
import re
import struct
import subprocess
import sys
from collections import Counter

import pytest

from conftest import ROOT, SHARED, UPSTREAM
from ptec.backends.ethos_u.command_stream import (CommandStreamError, decode_stream,
                                                  operation_counts, parse_cop, regions_used,
                                                  stream_stats,
                                                  target_name)
from ptec.pte.reader import read_program
from ptec.tflite import read_model

MODELS = os.path.join(SHARED, "models", "ethos-u")
PERSON_VELA = os.path.join(MODELS, "tflm", "person_detect_vela.tflite")
KWS = os.path.join(MODELS, "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")
MINIMAL = os.path.join(UPSTREAM, "ethos_u_minimal_example.pte")


def _minimal_cop():
    blob = read_program(MINIMAL).backend_delegate_data[0].data
    return blob[64:64 + 908]          # cmd_data payload (spec: block at 32, 908 bytes)


def _person_cop():
    return read_model(PERSON_VELA).subgraphs[0].tensors[1].data


def test_minimal_example_stream():
    data = _minimal_cop()
    assert len(data) == 227 * 4
    cop = parse_cop(data)
    assert (cop.config, cop.id, cop.target) == (0x1807, 0x10066001, "ethos-u55-128")
    assert len(cop.stream) == 219
    cmds = decode_stream(cop.stream)
    assert len(cmds) == 153
    ops = Counter(c.short_name for c in cmds if c.summary)
    assert ops == {"DMA_START": 6, "DMA_WAIT": 5, "KERNEL_WAIT": 2, "ELEMENTWISE": 6, "STOP": 1}
    counts = operation_counts(cmds)
    assert (counts["ELEMENTWISE ADD"], counts["ELEMENTWISE MUL"]) == (3, 3)
    assert cmds[-1].name == "NPU_OP_STOP" and cmds[-1].param == 0xFFFF
    dmas = [c.summary for c in cmds if c.name == "NPU_OP_DMA_START"]
    assert all(re.fullmatch(r"DMA r1@0x[0-9a-f]+ -> r1@0x[0-9a-f]+ len 1", s) for s in dmas)
    st = stream_stats(cmds)      # spec §8.1: six 1-byte DMAs, 6 elementwise ops
    assert (st.commands, st.operations, st.dma_count, st.dma_bytes) == (153, 6, 6, 6)
    muls = [c.summary for c in cmds if c.summary.startswith("ELEMENTWISE MUL")]
    assert [m.split("OFM_SCALE ")[1].split()[0] for m in muls] == ["1>>11", "1>>11", "1>>50"]
    assert all("round NATURAL" in m for m in muls)


# spec §8.2 op map: word offsets of every CONV/DEPTHWISE NPU_OP in the stream
PERSON_CONV_WORDS = [82, 120, 151, 186, 228, 261, 290, 329, 369, 400, 432, 453, 496, 512,
                     553, 575, 596, 630, 654, 670, 703, 725, 746, 775, 798, 830, 852, 873,
                     902, 926, 958, 980, 1001, 1030, 1053, 1085, 1107, 1128, 1157, 1181,
                     1213, 1234, 1255, 1294, 1318, 1359, 1381, 1402, 1432, 1456, 1480, 1508,
                     1529, 1550, 1615]


def test_person_detect_vela_stream():
    cop = parse_cop(_person_cop())
    assert (cop.config, cop.id, cop.target) == (0x3008, 0x10060000, "ethos-u55-256")
    assert len(cop.stream) == 2034
    cmds = decode_stream(cop.stream)
    assert len(cmds) == 1393
    c = operation_counts(cmds)
    assert (c["CONV"], c["DEPTHWISE"], c["POOL"], c["ELEMENTWISE"]) == (32, 23, 3, 29)
    assert (c["DMA_START"], c["DMA_WAIT"], c["KERNEL_WAIT"], c["STOP"]) == (55, 55, 38, 1)
    assert [c[f"POOL {m}"] for m in ("MAX", "AVERAGE", "REDUCE_SUM")] == [1, 1, 1]
    assert [c[f"ELEMENTWISE {m}"] for m in ("MUL", "SUB", "ADD", "SHR", "SHL", "CLZ")] == \
        [12, 7, 5, 2, 2, 1]
    compute = [x for x in cmds if x.short_name in ("CONV", "DEPTHWISE", "POOL", "ELEMENTWISE")]
    assert sum("round DBL" in x.summary for x in compute) == 85
    natural = [x.summary.split(" |")[0] for x in compute if "round NATURAL" in x.summary]
    assert natural == ["ELEMENTWISE SHR"] * 2
    conv_words = [x.offset // 4 for x in cmds if x.short_name in ("CONV", "DEPTHWISE")]
    assert conv_words == PERSON_CONV_WORDS
    first = next(x for x in cmds if x.short_name == "CONV").summary
    assert "ifm 96x48x2 " in first and "kernel 3x2 stride 2x1" in first
    assert "pad t0 l0 b1 r1" in first
    dmas = [x.summary for x in cmds if x.short_name == "DMA_START"]
    assert sum(bool(re.fullmatch(r"DMA r0@0x[0-9a-f]+ -> r1@0x[0-9a-f]+ len \d+", s))
               for s in dmas) == 54
    # the one 1 KiB LUT goes to the last 2 KiB of the 48 KiB SHRAM (spec §4.1)
    assert sum(bool(re.fullmatch(r"DMA r0@0x[0-9a-f]+ -> SHRAM@0xb800 len 1024", s))
               for s in dmas) == 1
    st = stream_stats(cmds)
    lens = [int(s.rsplit(" ", 1)[1]) for s in dmas]
    assert (st.commands, st.operations, st.dma_count) == (1393, 87, 55)
    assert st.dma_bytes == sum(lens) and 1024 in lens


def test_kws_u65_stream():
    cop = parse_cop(read_model(KWS).subgraphs[0].tensors[2].data)
    assert (cop.config, cop.id, cop.target) == (0x10003008, 0x10060000, "ethos-u65-256")
    assert len(cop.stream) == 829
    cmds = decode_stream(cop.stream, cop.product)
    assert cmds[-1].name == "NPU_OP_STOP"
    assert not any(x.name.startswith("UNKNOWN") for x in cmds)


@pytest.mark.parametrize("config,name", [(0x1005, "ethos-u55-32"), (0x1006, "ethos-u55-64"),
                                         (0x1807, "ethos-u55-128"), (0x3008, "ethos-u55-256"),
                                         (0x10003008, "ethos-u65-256"),
                                         (0x10006009, "ethos-u65-512")])
def test_target_names(config, name):
    assert target_name(config) == name


def _cop(*words):
    return struct.pack("<%dI" % len(words), *words)


@pytest.mark.parametrize("data,match", [
    (b"COP1" + b"\0", "whole number"),
    (_cop(0x32504F43), "not COP1"),
    (_cop(0x31504F43, 0x00100001, 0x3008), "truncated"),
    (_cop(0x31504F43, 0x00100001, 0x3008, 0x10060000), "no COMMAND_STREAM"),
    (_cop(0x31504F43, 0x00030002, 0, 0), "3 words"),
    (_cop(0x31504F43, 0x00000009), "unknown COP action 9"),
    (_cop(0x31504F43, 0x00010002, 0), "no OPTIMIZER_CONFIG"),
])
def test_hostile_cop(data, match):
    with pytest.raises(CommandStreamError, match=match):
        parse_cop(data)


def test_unknown_opcodes_are_named_not_fatal():
    cmds = decode_stream([0x0099, 0x4000 | 0x0055, 7, 0xFFFF0000])
    assert [c.name for c in cmds] == ["UNKNOWN_CMD0_0x099", "UNKNOWN_CMD1_0x055", "NPU_OP_STOP"]
    assert cmds[1].payload == 7 and cmds[2].offset == 12


def test_cmd1_without_payload():
    with pytest.raises(CommandStreamError, match="payload"):
        decode_stream([0x4000 | 0x020])


def _inspect(*args):
    """`python3 -m ptec inspect ARGS`: (exit status, stdout, stderr, command listing lines)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "ptec", "inspect", *map(str, args)],
                       capture_output=True, text=True, env=env)
    listing = [ln for ln in r.stdout.splitlines() if re.match(r"\s+\d+ @0x[0-9a-f]{5} ", ln)]
    return r.returncode, r.stdout, r.stderr, listing


def test_inspect_cli_decodes_blob():
    rc, out, err, listing = _inspect("--commands", MINIMAL)
    assert rc == 0, err
    assert "config 0x00001807 = ethos-u55-128" in out
    assert "input  1: shape [1,1,1,1,1,1] elem_size 1 scratch offset 16" in out
    assert len(listing) == 153 and "NPU_OP_STOP" in listing[-1]


@pytest.mark.parametrize("blob", [b"vela_bin_stream" + bytes(17), b"\0" * 64])
def test_inspect_cli_refuses_a_bad_blob(tmp_path, blob):
    from ptec.pte.program_builder import ProgramBuilder
    from ptec.pte.schema import ScalarType
    from ptec.pte.writer import serialize_program
    b = ProgramBuilder()
    x = b.tensor(ScalarType.CHAR, [4])
    y = b.tensor(ScalarType.CHAR, [4])
    b.delegate_call("EthosUBackend", blob, [x, y])
    b.set_io([x], [y])
    path = tmp_path / "bad.pte"
    path.write_bytes(serialize_program(b.build()))
    rc, out, err, listing = _inspect(path)
    assert rc == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "EthosUBackend" in err


def test_inspect_cli_on_tflite(tmp_path):
    rc, out, err, listing = _inspect("--commands", PERSON_VELA)
    assert rc == 0, err
    assert "config 0x00003008 = ethos-u55-256" in out
    assert "OfflineMemoryAllocation (subgraph 0): [0, -1, -1, 0, 0, 0]" in out
    assert len(listing) == 1393
    bad = tmp_path / "cut.tflite"
    with open(PERSON_VELA, "rb") as f:
        bad.write_bytes(f.read()[:4000])
    rc, out, err, listing = _inspect(bad)
    assert rc == 2 and "not a valid .tflite" in err
    assert len(err.strip().splitlines()) == 1


def test_regions_used():
    # spec §4.1: both oracles use only regions 0 and 1 (the LUT DMA goes to SHRAM)
    cop = parse_cop(_person_cop())
    assert regions_used(decode_stream(cop.stream)) == {0, 1}
    cop = parse_cop(_minimal_cop())
    assert regions_used(decode_stream(cop.stream)) == {0, 1}
    # IFM region 2 on a pool; a DMA from region 3 into SHRAM (0x100 = internal)
    stream = [0x010F | 2 << 16, 0x0005 | 1 << 16, 0x0130 | 3 << 16, 0x0131 | 0x100 << 16,
              0x0010, 0x0000 | 0xFFFF << 16]
    assert regions_used(decode_stream(stream)) == {0, 2, 3}
