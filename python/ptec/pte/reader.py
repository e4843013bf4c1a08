"""Decode any .pte file into schema dataclasses (pte-format.md §1, §5)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import List

from .flatbuffer import FlatbufferError, decode
from .schema import FILE_IDENTIFIER, Program


class PteError(ValueError):
    pass


@dataclass
class FileHeader:
    has_extended_header: bool
    header_length: int
    program_size: int
    segment_base_offset: int
    segment_data_size: int
    file_size: int


def read_header(data: bytes) -> FileHeader:
    if len(data) < 8:
        raise PteError("file shorter than 8 bytes")
    ident = bytes(data[4:8])
    if ident != FILE_IDENTIFIER:
        if ident[:2] == b"ET":
            raise PteError(f"incompatible schema version {ident!r} (want ET12)")
        raise PteError("not a .pte file (no ET12 identifier)")
    if len(data) >= 16 and bytes(data[8:12]) == b"eh00":
        hlen = struct.unpack_from("<I", data, 12)[0]
        if hlen < 24 or len(data) < 8 + hlen:
            raise PteError(f"bad extended header length {hlen}")
        program_size, base = struct.unpack_from("<QQ", data, 16)
        seg_size = struct.unpack_from("<Q", data, 32)[0] if hlen >= 32 else 0
        need = program_size if base == 0 else base + seg_size
        if program_size > len(data) or need > len(data):
            raise PteError(f"file is {len(data)} bytes, header needs {need}")
        return FileHeader(True, hlen, program_size, base, seg_size, len(data))
    return FileHeader(False, 0, len(data), 0, 0, len(data))


def parse_program(data: bytes) -> Program:
    header = read_header(data)
    try:
        prog = decode(data, Program, FILE_IDENTIFIER, limit=header.program_size)
    except (FlatbufferError, struct.error, UnicodeDecodeError, RecursionError, ValueError) as e:
        raise PteError(f"malformed flatbuffer: {e}") from e
    seg_data = []
    for i, seg in enumerate(prog.segments or []):
        start = header.segment_base_offset + seg.offset
        if seg.size and (not header.has_extended_header or start + seg.size > len(data)):
            raise PteError(f"segment {i} ({seg.offset}+{seg.size}) is outside the file")
        seg_data.append(bytes(data[start:start + seg.size]) if seg.size else b"")
    prog.segment_data = seg_data
    return prog


def read_program(path: str) -> Program:
    with open(path, "rb") as f:
        return parse_program(f.read())


def operator_keys(program: Program) -> List[str]:
    """The 'namespace::name.overload' of every method's operators, each once,
    in first-use order."""
    keys = (op.key for plan in program.execution_plan or [] for op in plan.operators or [])
    return list(dict.fromkeys(keys))
