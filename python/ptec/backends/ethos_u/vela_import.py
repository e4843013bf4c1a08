"""A Vela-compiled `.tflite` as a `.pte` whose one delegate is an upstream-format
EthosUBackend blob (spec ethos-u-delegate.md §1, §2).

Vela leaves one `ethos-u` custom operator whose inputs are, in order: the COP1 command data,
the flash (region 0: weights, scales, LUTs), the scratch area (region 1), the fast scratch
(region 2), then the network's inputs; its outputs are the network's outputs. The model's
"OfflineMemoryAllocation" metadata places every I/O tensor inside the scratch area, which
is where the NPU reads and writes them (models/ethos-u/README.md). The blob keeps exactly
what upstream's writer keeps: cmd_data, weight_data, scratch_size and the I/O tables; like
upstream it does not record the fast-scratch size.

The program: the network's inputs and outputs as tensors of their TFLite type and bytes,
one DelegateCall(inputs..., outputs...), nothing else. A 4-D (NHWC) tensor is written the
way the int8 importer writes it (docs/tflite-import.md, "Layout"): sizes [N, C, H, W] with
the channels-last dim order, i.e. the same bytes; so the two imports of one model take and
give the same tensors.
"""
from __future__ import annotations

from typing import List, Tuple

from ...lowered import layout
from ...pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ...pte.schema import DataLocation, ScalarType
from ...pte.writer import serialize_program
from ...pte.upstream_rules import UpstreamRuleError, require_compatible
from ...tflite.reader import Model, Tensor, TFLiteError
from .blob import IoEntry, VelaBlob, VelaBlobError, shape6, write_blob
from .command_stream import PRODUCTS, CommandStreamError, decode_stream, parse_cop, regions_used

BACKEND_ID = "EthosUBackend"
TOSA_BASE = "TOSA-1.0+INT+int16"      # what upstream's sample carries (models/upstream)

# TFLite type -> (.pte scalar type, element size); the only I/O types upstream's delegate
# accepts (ethos-u-delegate.md §3.2)
IO_TYPES = {"INT8": (ScalarType.CHAR, 1), "UINT8": (ScalarType.BYTE, 1),
            "INT16": (ScalarType.SHORT, 2), "INT32": (ScalarType.INT, 4),
            "BOOL": (ScalarType.BOOL, 1)}


class VelaImportError(TFLiteError):
    """A Vela model this importer cannot turn into a delegate; one line."""


def _io_entry(t: Tensor, alloc: List[int], scratch_offset: int, scratch_size: int,
              what: str) -> IoEntry:
    if t.type not in IO_TYPES:
        raise VelaImportError(f"{what} tensor {t.index} ({t.name!r}) is {t.type}; the "
                              "EthosUBackend delegate takes int8, uint8, int16, int32 or bool")
    offset = alloc[t.index]
    if offset < 0:
        raise VelaImportError(f"{what} tensor {t.index} ({t.name!r}) has no offline arena "
                              "offset, so its place in the scratch area is unknown")
    elem = IO_TYPES[t.type][1]
    try:
        e = IoEntry(shape6(t.shape), elem, offset - scratch_offset)
    except VelaBlobError as err:
        raise VelaImportError(f"{what} tensor {t.index} ({t.name!r}): {err}") from err
    if e.offset < 0 or e.offset + t.numel * elem > scratch_size:
        raise VelaImportError(f"{what} tensor {t.index} ({t.name!r}): arena bytes {offset}.."
                              f"{offset + t.numel * elem} are outside the scratch area "
                              f"{scratch_offset}..{scratch_offset + scratch_size}")
    return e


def vela_blob(model: Model) -> Tuple[VelaBlob, str, List[Tensor], List[Tensor]]:
    """The delegate blob of a Vela model, its target name ("ethos-u55-256"), and the
    network's input and output tensors in subgraph order."""
    if len(model.subgraphs) != 1 or len(model.subgraphs[0].operators) != 1:
        raise VelaImportError("not a Vela model: want one subgraph with one ethos-u operator")
    g = model.subgraphs[0]
    op = g.operators[0]
    if op.custom_code != "ethos-u":
        raise VelaImportError(f"not a Vela model: the operator is {op.name}, not ethos-u")
    if len(op.inputs) < 4 or any(i < 0 for i in op.inputs[:4]):
        raise VelaImportError(f"ethos-u operator has {len(op.inputs)} inputs; want command "
                              "stream, flash, scratch, fast scratch, then the network inputs")
    cmd_t, flash_t, scratch_t = (g.tensors[i] for i in op.inputs[:3])
    if not cmd_t.data:
        raise VelaImportError(f"ethos-u command stream tensor {cmd_t.index} holds no data")
    try:
        cop = parse_cop(cmd_t.data)
        target = cop.target
    except CommandStreamError as e:
        raise VelaImportError(f"ethos-u command stream: {e}") from e
    if cop.product not in PRODUCTS:
        raise VelaImportError(f"unknown NPU product {cop.product}")
    scratch_size = scratch_t.numel * scratch_t.dtype.itemsize

    net_in = [g.tensors[i] for i in g.inputs]
    net_out = [g.tensors[i] for i in g.outputs]
    if sorted(g.inputs) != sorted(op.inputs[4:]) or sorted(g.outputs) != sorted(op.outputs):
        raise VelaImportError(f"the ethos-u operator's I/O (inputs {op.inputs[4:]}, outputs "
                              f"{op.outputs}) is not the network's (inputs {g.inputs}, "
                              f"outputs {g.outputs})")
    alloc = model.offline_memory_allocation(0)
    if alloc is None:
        raise VelaImportError("no OfflineMemoryAllocation metadata, so the I/O tensors' "
                              "places in the scratch area are unknown")
    scratch_offset = alloc[scratch_t.index]
    if scratch_offset < 0:
        raise VelaImportError(f"scratch tensor {scratch_t.index} has no offline arena offset")
    blob = VelaBlob(
        cmd_data=cmd_t.data, weight_data=flash_t.data or b"", scratch_size=scratch_size,
        inputs=[_io_entry(t, alloc, scratch_offset, scratch_size, "input") for t in net_in],
        outputs=[_io_entry(t, alloc, scratch_offset, scratch_size, "output") for t in net_out])
    return blob, target, net_in, net_out


def compile_specs(target: str) -> List[Tuple[str, bytes]]:
    """Upstream's keys in upstream's order (ethos-u-delegate.md §1.1). compile_flags holds
    only what the .tflite tells about Vela's command line: the accelerator."""
    tosa = TOSA_BASE + ("+cf" if "ethos-u85" in target else "+u55")
    return [("tosa_spec", tosa.encode()),
            ("compile_flags", f"--accelerator-config={target}".encode()),
            ("output_format", b"vela"),
            ("target", target.encode())]


FAST_SCRATCH_REGION = 2


def fast_scratch_bytes(model: Model) -> int:
    """The fast scratch (region 2) a Vela model's stream needs: the size of Vela's
    fast-scratch tensor if the stream addresses region 2, else 0. The blob cannot carry it
    (upstream's format has no field), so the importer tells the user; the delegate gets it
    from its build (PTEC_ETHOSU_FAST_SCRATCH_BYTES)."""
    vela_blob(model)                      # the same checks as the import
    g = model.subgraphs[0]
    cmd_t, fast_t = g.tensors[g.operators[0].inputs[0]], g.tensors[g.operators[0].inputs[3]]
    try:
        cop = parse_cop(cmd_t.data)
        used = regions_used(decode_stream(cop.stream, cop.product))
    except CommandStreamError as e:
        raise VelaImportError(f"ethos-u command stream: {e}") from e
    if FAST_SCRATCH_REGION not in used:
        return 0
    return fast_t.numel * fast_t.dtype.itemsize


def program_sizes(shape) -> List[int]:
    """A TFLite shape as ptec sizes: 4-D NHWC becomes the [N, C, H, W] whose channels-last
    dim order (CHANNELS_LAST) lays out exactly the NHWC bytes; other ranks stay."""
    shape = [int(d) for d in shape]
    if len(shape) != 4:
        return shape
    sizes = [0] * 4
    for physical, logical in enumerate(CHANNELS_LAST):
        sizes[logical] = shape[physical]
    return sizes


def import_vela_model(model: Model, location: int = DataLocation.SEGMENT) -> bytes:
    """The .pte bytes: the network's inputs and outputs (TFLite types, bytes as in
    TFLite), one DelegateCall to EthosUBackend."""
    blob, target, net_in, net_out = vela_blob(model)
    try:
        data = write_blob(blob)
    except VelaBlobError as e:
        raise VelaImportError(f"delegate blob: {e}") from e
    b = ProgramBuilder()
    def io(t: Tensor) -> int:
        sizes = program_sizes(t.shape)
        return b.tensor(IO_TYPES[t.type][0], sizes, layout(sizes))
    ins = [io(t) for t in net_in]
    outs = [io(t) for t in net_out]
    b.delegate_call(BACKEND_ID, data, ins + outs, compile_specs(target), location)
    b.set_io(ins, outs)
    program = b.build()
    try:   # the same upstream rules compile and the int8 import apply (no kernel call here today)
        require_compatible(program)
    except UpstreamRuleError as e:
        raise VelaImportError(str(e)) from e
    return serialize_program(program)
