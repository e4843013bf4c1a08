"""The AOT backend seam with a test-only delegating backend: it takes the
tensor + tensor add nodes of a model and writes a small blob for them. The
compiled .pte is read back three ways, none of them the writer: the
package's reader, flatc (the upstream schema compiler) and the C runtime,
which has no such backend linked and must refuse the program naming it.
The blob's location is checked against the raw file bytes (pte-format.md
§1.2, §1.3, §4.8)."""
import os
import struct
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

from flatc_util import flatc_json, have_flatc
from ptec.backends import DelegateBackend, DelegateBlob
from ptec.backends.cortex_m import CortexMBackend
from ptec.backends.portable import PortableBackend
from ptec.compiler import compile_model
from ptec.partition import FIRST_CHOICE
from ptec.pte.program_builder import ProgramBuilder
from ptec.pte.reader import parse_program
from ptec.pte.schema import DataLocation, DelegateCall, KernelCall, ScalarType
from ptec.pte.writer import serialize_program
from runtime_util import PTEC_RUN

BACKEND_ID = "PtecTestAddBackend"


class AddBlobBackend(DelegateBackend):
    """Takes `add` nodes whose operands are two tensors of one shape. Its
    blob: "PTADD" + node count, then per node the int8 grids of the two
    operands and the result (a stand-in for a real command stream)."""
    name = "test_add"
    delegate_id = BACKEND_ID

    def __init__(self, location):
        self.location = location
        self.blobs = []

    def claim(self, n, ctx):
        if n.op != "add":
            return "only add"
        if any(ctx.g.node(i).op == "constant" for i in n.inputs):
            return "a constant operand"
        if len({tuple(ctx.g.node(i).shape) for i in n.inputs}) != 1 or n.attrs.get("act"):
            return "broadcast or fused activation"
        return None

    def write_blob(self, nodes, inputs, outputs, ctx):
        data = b"PTADD" + struct.pack("<I", len(nodes))
        for n in nodes:
            for name in list(n.inputs) + [n.name]:
                s, z = ctx.g.node(name).qparams
                data += struct.pack("<fi", s, z)
        self.blobs.append(data)
        return DelegateBlob(data, [("nodes", str(len(nodes)).encode()), ("grid", b"int8")],
                            self.location)


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 3, padding=1)
        self.b = nn.Conv2d(3, 4, 1)
        self.head = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.head(self.a(x) + self.b(x))


def _compile(location):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(3)
    calib = [(torch.randn(1, 3, 6, 6, generator=g),) for _ in range(8)]
    backend = AddBlobBackend(location)
    res = compile_model(TwoBranches().eval(), list(calib[0]), calib,
                        backends=[backend, CortexMBackend(), PortableBackend()])
    return res, backend


@pytest.fixture(scope="module", params=[DataLocation.SEGMENT, DataLocation.INLINE],
                ids=["segment", "inline"])
def compiled(request, tmp_path_factory):
    res, backend = _compile(request.param)
    path = tmp_path_factory.mktemp("seam") / f"add_delegate_{request.param.name.lower()}.pte"
    path.write_bytes(res.data)
    return request.param, res, backend, str(path)


def test_partition_places_every_node_with_a_reason(compiled):
    _, res, _, _ = compiled
    by_backend = {}
    for p in res.lowered.placements:
        by_backend.setdefault(p.backend, []).append(p.op)
        assert p.reason
    assert by_backend["test_add"] == ["add"]
    assert sorted(by_backend["cortex_m"]) == ["conv2d", "conv2d", "conv2d"]
    conv = next(p for p in res.lowered.placements if p.op == "conv2d")
    assert conv.reason == "test_add: only add"
    add = next(p for p in res.lowered.placements if p.op == "add")
    assert add.reason == FIRST_CHOICE
    assert res.lowered.delegates == [BACKEND_ID]
    assert not res.lowered.fallbacks


def test_reader_sees_the_delegate(compiled):
    location, res, backend, path = compiled
    data = open(path, "rb").read()
    program = parse_program(data)
    plan = program.execution_plan[0]
    (delegate,) = plan.delegates
    assert delegate.id == BACKEND_ID
    assert [(c.key, c.value) for c in delegate.compile_specs] == [("nodes", b"1"),
                                                                  ("grid", b"int8")]
    assert delegate.processed.location == location
    (blob,) = backend.blobs
    if location == DataLocation.SEGMENT:
        assert not program.backend_delegate_data
        assert delegate.processed.index == 1              # after the constant segment
        # the segment's bytes, found from the extended header by hand
        magic, _, program_size, base, data_size = struct.unpack_from("<4sIQQQ", data, 8)
        assert magic == b"eh00" and base % 128 == 0 and base >= program_size
        seg = program.segments[1]
        assert seg.offset % 128 == 0 and seg.size == len(blob)
        assert data[base + seg.offset:base + seg.offset + seg.size] == blob
        assert base + data_size == len(data)
    else:
        assert delegate.processed.index == 0
        assert program.backend_delegate_data[0].data == blob
        assert len(program.segments) == 1                 # only the constant segment
        assert data.index(blob) % 16 == 0                 # force_align 16
    calls = [i.instr_args for i in plan.chains[0].instructions]
    (call,) = [c for c in calls if isinstance(c, DelegateCall)]
    assert call.delegate_index == 0
    # the two conv outputs in, the add's int8 result out, then the head conv reads it
    assert len(call.args) == 3
    for v in call.args:
        t = plan.values[v].val
        assert t.scalar_type == ScalarType.CHAR and list(t.sizes) == [1, 4, 6, 6]
    producers = [c.args[-1] for c in calls if isinstance(c, KernelCall)]
    assert call.args[0] in producers and call.args[1] in producers
    head = calls[calls.index(call) + 1]
    assert isinstance(head, KernelCall) and call.args[2] == head.args[0]


def test_flatc_decodes_the_delegate(compiled):
    if not have_flatc():
        pytest.skip("flatc not installed")
    location, _, backend, path = compiled
    js = flatc_json(path)
    plan = js["execution_plan"][0]
    (delegate,) = plan["delegates"]
    assert delegate["id"] == BACKEND_ID
    assert delegate["processed"]["location"] == location.name
    assert [(c["key"], bytes(c["value"])) for c in delegate["compile_specs"]] == \
        [("nodes", b"1"), ("grid", b"int8")]
    (blob,) = backend.blobs
    if location == DataLocation.INLINE:
        assert bytes(js["backend_delegate_data"][0]["data"]) == blob
    else:
        assert js["segments"][delegate["processed"]["index"]]["size"] == len(blob)
    kinds = [i["instr_args_type"] for i in plan["chains"][0]["instructions"]]
    assert kinds.count("DelegateCall") == 1 and kinds.count("KernelCall") >= 3


def test_c_runtime_names_the_missing_backend(compiled):
    _, _, backend, path = compiled
    if not os.path.exists(PTEC_RUN):
        pytest.skip("ptec-run not built (make host)")
    proc = subprocess.run([PTEC_RUN, path], capture_output=True, text=True)
    assert proc.returncode == 1
    (blob,) = backend.blobs
    assert (f"backend {BACKEND_ID} not available in this build (delegate 0, "
            f"{len(blob)}-byte blob)") in proc.stderr


def test_builder_two_delegates_inline_and_segment():
    """Two delegates in one hand-built program: the inline one indexes
    backend_delegate_data, the segment one the segment after the constants;
    both blobs come back byte for byte and the constants stay in segment 0."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.CHAR, [8])
    y = b.tensor(ScalarType.CHAR, [8])
    z = b.tensor(ScalarType.CHAR, [8])
    c = b.constant(np.arange(8, dtype=np.int8))
    seg_blob, inline_blob = bytes(range(200)), b"inline-blob"
    assert b.delegate_call("SegBackend", seg_blob, [x, c, y], [("k", b"v")]) == 0
    assert b.delegate_call("InlineBackend", inline_blob, [y, z], [],
                           location=DataLocation.INLINE) == 1
    b.set_io([x], [z])
    data = serialize_program(b.build())
    program = parse_program(data)
    d0, d1 = program.execution_plan[0].delegates
    assert (d0.id, d0.processed.location, d0.processed.index) == ("SegBackend", DataLocation.SEGMENT, 1)
    assert (d1.id, d1.processed.location, d1.processed.index) == ("InlineBackend", DataLocation.INLINE, 0)
    assert program.segment_data[1] == seg_blob
    assert program.backend_delegate_data[0].data == inline_blob
    const = program.segment_data[0]
    offsets = program.constant_segment.offsets
    assert const[offsets[1]:offsets[1] + 8] == bytes(range(8))
    calls = [i.instr_args for i in program.execution_plan[0].chains[0].instructions]
    assert [(c.delegate_index, c.args) for c in calls] == [(0, [x, c, y]), (1, [y, z])]
    with pytest.raises(ValueError, match="location"):
        b.delegate_call("X", b"", [], location=7)


class Refused(nn.Module):
    """An average pool with a divisor_override and a mean over channels, both
    refused by cortex_m's partitioner from the graph."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.pool = nn.AvgPool2d(2, divisor_override=3)

    def forward(self, x):
        return self.pool(self.conv(x)).mean(dim=1, keepdim=True)


def test_refusals_of_both_kinds_are_placed_on_portable_with_the_reason():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(5)
    calib = [(torch.randn(1, 2, 8, 8, generator=g),) for _ in range(6)]
    res = compile_model(Refused().eval(), list(calib[0]), calib)
    placed = {p.op: p for p in res.lowered.placements}
    assert placed["conv2d"].backend == "cortex_m" and placed["conv2d"].reason == FIRST_CHOICE
    assert placed["avg_pool2d"].backend == "portable"
    assert placed["avg_pool2d"].reason == ("cortex_m: divisor_override: "
                                           "cortex_m::quantized_avg_pool2d divides by the window")
    assert placed["mean"].backend == "portable"
    assert placed["mean"].reason == "cortex_m: mean over dims [1] of a rank-4 tensor"
    assert sorted(res.lowered.refusals) == sorted(
        f"{p.source}: {p.reason}" for p in res.lowered.placements if p.backend == "portable")
    assert [f.split(": ")[1] for f in res.lowered.fallbacks] == [
        "aten::avg_pool2d.out", "aten::mean.out"]
