"""The requirements record: what ptec_method_requirements() would measure,
written into the program by the AOT so that the runtime reads it instead of
walking the method (issue #16). docs/compatibility.md "The requirements record"
gives the layout; src/runtime/requirements_record.c reads it.

The record is the blob of the named_data entry `ptec.requirements` (one
segment of its own, appended after the program's other segments; upstream
ExecuTorch keeps named data it does not use). Little-endian:

    header  b"PTRQ", u32 version (1), u32 entry size (36), u32 entry count
    entry   u32 fingerprint, u32 method index, u32 kept values,
            u64 metadata bytes, u64 scratch bytes, u64 fast scratch bytes

The fingerprint names the build kind and the kernels the entry is for
(method_fingerprint: the layout's fingerprint continued over the method's
operators' kernels as that build declares them): a runtime uses only the
entry whose fingerprint equals the one it computes for the method and whose
method index is the method asked for. Planned buffers are not recorded: the
runtime reads them from the plan (non_const_buffer_sizes) in a few
instructions. Methods with delegate calls get no entry: a backend's needs
(persistent bytes, fast scratch from PTEC_ETHOSU_FAST_SCRATCH_BYTES) are a
property of the build's backend, not of the layout the fingerprint names.

Standard library only."""
from __future__ import annotations

import copy
import struct
from typing import Dict, List, Optional, Tuple

from .pte.schema import NamedData, Program
from .pte.writer import layout_segments
from .requirements import RequirementsError, build_kind, kept_flags, load_layouts, requirements
from .targets import ISA

KEY = "ptec.requirements"
MAGIC = b"PTRQ"
VERSION = 1
HEADER = struct.Struct("<4sIII")
ENTRY = struct.Struct("<IIIQQQ")

# The layout facts the fingerprint covers, in this order (each a u32). The
# runtime's copy is requirements_record.c's layout_facts(); tools/ptec-layout
# prints the same facts into runtime_layout.json.
SIZES = ("exec_ctx", "value", "kept_word", "tensor", "instr", "delegate_ctx")
CONFIG = ("PTEC_MAX_PLANNED_BUFFERS", "PTEC_DETAIL_LEN", "PTEC_MAX_RANK", "PTEC_MAX_KERNEL_STATE",
          "PTEC_MAX_OP_ARGS")
ISA_CODES = {"SCALAR": 0, "DSP": 1, "MVE": 2}
# Which values a load keeps (requirements_record.c's KEEP_RULE): 2 since
# values named only as arguments a kernel's run never reads are not kept.
KEEP_RULE = 2


def layout_facts(layout: dict) -> List[int]:
    return ([VERSION, layout["pointer"], layout["meta_align"], layout["buffer_align"]]
            + [layout["sizes"][k] for k in SIZES] + [layout["config"][k] for k in CONFIG]
            + [ISA_CODES[layout["isa"]], KEEP_RULE])


def fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def layout_fingerprint(layout: dict) -> int:
    """FNV-1a (32-bit) over layout_facts as little-endian u32s."""
    return fnv1a32(b"".join(struct.pack("<I", v) for v in layout_facts(layout)))


# A kernel word for an operator the build lacks (requirements_record.c's NO_KERNEL).
NO_KERNEL = 0xFFFFFFFF


def kernel_word(layout: dict, name: str) -> int:
    """The kernel's state_size as the build declares it: the state's bytes,
    and its prepared arguments (PTEC_PREPARED_ARGS) in bits 16 to 31."""
    if name not in layout["kernels"]:
        return NO_KERNEL
    return layout["kernels"][name] | layout.get("prepared_args", {}).get(name, 0) << 16


def method_fingerprint(layout: dict, plan) -> int:
    """An entry's key (requirements_record.c's ptec_method_fingerprint):
    layout_facts, then the plan's operator count and each operator's
    kernel_word in the plan's order, FNV-1a over little-endian u32s. A
    runtime whose kernels declare other states or prepared arguments than
    `layout` computes another key, so it measures the method instead."""
    ops = plan.operators or []
    words = layout_facts(layout) + [len(ops)] + [
        kernel_word(layout, (op.name or "") + (f".{op.overload}" if op.overload else "")) for op in ops]
    return fnv1a32(b"".join(struct.pack("<I", v) for v in words))


def _target_of(kind: str) -> str:
    if kind == "lp64-SCALAR":
        return "host"
    return next(core for core, isa in ISA.items() if kind == f"ilp32-{isa}")


def record_entries(program: Program, target: str) -> List[Tuple[int, int, int, int, int, int]]:
    """(fingerprint, method index, kept values, metadata, scratch, fast
    scratch) for each method without delegate calls, on the build kind of
    `target` and on the host's. A method or kind requirements() cannot size
    gets no entry."""
    layouts = load_layouts()
    kinds: List[str] = []
    try:
        kinds.append(build_kind(target))
    except RequirementsError:
        pass
    if "lp64-SCALAR" not in kinds:
        kinds.append("lp64-SCALAR")
    return _entries(program, kinds, layouts)


def _entries(program: Program, kinds: List[str], layouts: Dict[str, dict]) -> List[Tuple[int, int, int, int, int, int]]:
    """record_entries' tuples for these build kinds."""
    out = []
    for index, plan in enumerate(program.execution_plan or []):
        if plan.delegates:
            continue
        for kind in kinds:
            try:
                r = requirements(program, plan.name, _target_of(kind), layout=layouts[kind])
            except RequirementsError:
                continue
            kept = sum(kept_flags(plan, layouts[kind]))
            out.append((method_fingerprint(layouts[kind], plan), index, kept, r.metadata_bytes, r.scratch_bytes,
                        r.fast_scratch_bytes))
    return out


def encode_record(entries) -> bytes:
    return HEADER.pack(MAGIC, VERSION, ENTRY.size, len(entries)) + b"".join(ENTRY.pack(*e) for e in entries)


def decode_record(data: bytes) -> Optional[List[Dict[str, int]]]:
    """The entries of a record, or None when it is not one this version reads."""
    if len(data) < HEADER.size:
        return None
    magic, version, size, count = HEADER.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION or size != ENTRY.size or count > (len(data) - HEADER.size) // size:
        return None
    names = ("fingerprint", "method", "kept_values", "metadata_bytes", "scratch_bytes", "fast_scratch_bytes")
    return [dict(zip(names, ENTRY.unpack_from(data, HEADER.size + i * size))) for i in range(count)]


def record_of(program: Program) -> Optional[bytes]:
    """The record's bytes in a parsed or built program, or None."""
    for nd in program.named_data or []:
        if nd.key == KEY:
            segs = program.segment_data or []
            return segs[nd.segment_index] if 0 <= nd.segment_index < len(segs) else None
    return None


def with_record(program: Program, target: str) -> Program:
    """A copy of `program` carrying its requirements record (the program
    itself when no method gets an entry, or it has a record already)."""
    if any(nd.key == KEY for nd in program.named_data or []):
        return program
    entries = record_entries(program, target)
    if not entries:
        return program
    out = copy.copy(program)
    out.segment_data = list(program.segment_data) + [encode_record(entries)]
    # As the writer lays them out (a built program states its segments).
    out.segments = layout_segments(out.segment_data) if program.segments is not None else None
    out.named_data = list(program.named_data or []) + [NamedData(key=KEY, segment_index=len(out.segment_data) - 1)]
    return out


def refreshed(program: Program) -> Program:
    """`program` with its record (if any) recomputed for the build kinds its
    entries are for: the writer's, so that a program edited after compile
    (a value made bound-dynamic, a constant replaced) never carries figures
    of the program it was. The program itself when it has no record or the
    record is unchanged."""
    data = record_of(program)
    entries = decode_record(data) if data is not None else None
    if entries is None:
        return program
    layouts = load_layouts()
    kinds = _kinds_by_key(program, layouts)
    wanted = list(dict.fromkeys(kinds[(e["fingerprint"], e["method"])] for e in entries
                                if (e["fingerprint"], e["method"]) in kinds))
    new = encode_record(_entries(program, wanted, layouts))
    if new == data:
        return program
    out = copy.copy(program)
    out.segment_data = list(program.segment_data)
    at = next(nd.segment_index for nd in program.named_data if nd.key == KEY)
    out.segment_data[at] = new
    return out


def _kinds_by_key(program: Program, layouts: Dict[str, dict]) -> Dict[Tuple[int, int], str]:
    """(entry key, method index) -> the build kind whose entry it is."""
    return {(method_fingerprint(lay, plan), index): kind for index, plan in enumerate(program.execution_plan or [])
            for kind, lay in layouts.items()}


def describe_record(program: Program) -> List[str]:
    """Lines for `ptec inspect`: each entry with the build kind it is for."""
    data = record_of(program)
    if data is None:
        return []
    entries = decode_record(data)
    if entries is None:
        return [f"requirements record ({KEY}): not one this ptec reads ({len(data)} bytes)"]
    kinds = _kinds_by_key(program, load_layouts())
    names = [p.name for p in program.execution_plan or []]
    out = [f"requirements record ({KEY}): {len(entries)} entries"]
    for e in entries:
        method = names[e["method"]] if e["method"] < len(names) else f"#{e['method']}"
        kind = kinds.get((e["fingerprint"], e["method"]), "%08x (unknown build)" % e["fingerprint"])
        out.append(f"  {kind} {method!r}: "
                   f"metadata {e['metadata_bytes']} B, scratch {e['scratch_bytes']} B, "
                   f"fast scratch {e['fast_scratch_bytes']} B, {e['kept_values']} kept values")
    return out
