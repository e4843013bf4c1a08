"""Serialise a schema.Program into .pte bytes with the upstream file layout
(pte-format.md §1): root offset, "ET12", the "eh00" extended header when any
segment holds data, the flatbuffer, then 128-aligned segments."""
from __future__ import annotations

import copy
import struct

from .flatbuffer import encode
from .schema import FILE_IDENTIFIER, DataSegment, Program

EXTENDED_HEADER_MAGIC = b"eh00"
EXTENDED_HEADER_LENGTH = 32
SEGMENT_ALIGNMENT = 128


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def layout_segments(segment_data, alignment: int = SEGMENT_ALIGNMENT):
    """Offsets of each segment relative to segment_base_offset."""
    out, cur = [], 0
    for data in segment_data:
        off = _align(cur, alignment)
        out.append(DataSegment(offset=off, size=len(data)))
        cur = off + len(data)
    return out


def serialize_program(program: Program, segment_alignment: int = SEGMENT_ALIGNMENT) -> bytes:
    from ..requirements_record import refreshed
    prog = copy.copy(refreshed(program))     # a requirements record is the program's own figures
    if prog.segment_data or prog.segments is not None:
        if prog.segments is not None and len(prog.segments) != len(prog.segment_data):
            raise ValueError(f"{len(prog.segments)} segments but {len(prog.segment_data)} "
                             "segment_data entries")
        prog.segments = layout_segments(prog.segment_data, segment_alignment)
    has_header = any(len(d) for d in prog.segment_data)
    prefix = 8 + (_align(EXTENDED_HEADER_LENGTH, 16) if has_header else 0)
    fb = encode(prog, FILE_IDENTIFIER, prefix)
    if not has_header:
        return bytes(fb)
    program_size = len(fb)
    base = _align(program_size, segment_alignment)
    last = prog.segments[-1]
    data_size = last.offset + last.size
    struct.pack_into("<4sIQQQ", fb, 8, EXTENDED_HEADER_MAGIC, EXTENDED_HEADER_LENGTH,
                     program_size, base, data_size)
    out = bytearray(fb)
    out += bytes(base - len(out))
    for seg, data in zip(prog.segments, prog.segment_data):
        out += bytes(base + seg.offset - len(out))
        out += data
    return bytes(out)


def write_program(program: Program, path: str, **kw) -> int:
    data = serialize_program(program, **kw)
    with open(path, "wb") as f:
        f.write(data)
    return len(data)
