"""The EthosUBackend delegate blob, upstream's "vela_bin_stream" (spec ethos-u-delegate.md §2):
a writer, and a reader that checks what upstream's runtime checks at init (§2.5) plus the
payload sizes of the fixed-size blocks.

Framing: blocks of a 32-byte header (name NUL-padded to 16, u32 LE payload size, u8 external
flag, 11 zero bytes), the payload, zero padding to a multiple of 16. Block order:
vela_bin_stream (empty), cmd_data (COP1), weight_data, scratch_size (u32), inputs, outputs,
vela_end_stream (empty). An I/O table is an i32 count, then per tensor i32 shape[6],
elem_size, offset (within the scratch area), region.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple

BLOCK_HEADER = 32
BLOCK_ALIGN = 16
NAME_LEN = 16
START, END = "vela_bin_stream", "vela_end_stream"
BLOCK_ORDER = (START, "cmd_data", "weight_data", "scratch_size", "inputs", "outputs", END)
COP_MAGICS = (b"COP1", b"COP2")
IO_ENTRY = struct.Struct("<9i")      # shape[6], elem_size, offset, region
SCRATCH_REGION = 1


class VelaBlobError(ValueError):
    """A blob that is not a valid vela_bin_stream; the message is one line."""


@dataclass
class IoEntry:
    shape: Tuple[int, ...]           # Vela's 6-D shape, leading 1s
    elem_size: int                   # bytes per element: 1, 2 or 4
    offset: int                      # byte offset inside the scratch area (region 1)
    region: int = SCRATCH_REGION

    @property
    def nbytes(self) -> int:
        n = self.elem_size
        for d in self.shape:
            n *= max(d, 1)
        return n


def shape6(shape: Sequence[int]) -> Tuple[int, ...]:
    """A tensor shape as Vela's 6-D shape (leading 1s)."""
    shape = [int(d) for d in shape]
    if len(shape) > 6:
        raise VelaBlobError(f"shape {shape} has more than 6 dimensions")
    return tuple([1] * (6 - len(shape)) + shape)


@dataclass
class Block:
    name: str
    offset: int                      # of the header, from the blob start
    size: int                        # payload bytes, unpadded
    external: bool
    payload: bytes

    @property
    def payload_offset(self) -> int:
        return self.offset + BLOCK_HEADER


@dataclass
class VelaBlob:
    cmd_data: bytes
    weight_data: bytes
    scratch_size: int
    inputs: List[IoEntry]
    outputs: List[IoEntry]
    # block name -> the 64-hex named-data key of an external block (§2.4); its payload in
    # this object is then empty
    external: dict = field(default_factory=dict)


def _align(n: int, a: int = BLOCK_ALIGN) -> int:
    return (n + a - 1) // a * a


def _block(name: str, payload: bytes, external: bool = False) -> bytes:
    raw = name.encode("ascii")
    if len(raw) >= NAME_LEN:
        raise VelaBlobError(f"block name {name!r} is longer than {NAME_LEN - 1} characters")
    header = raw.ljust(NAME_LEN, b"\0") + struct.pack("<IB", len(payload), int(external))
    header += bytes(BLOCK_HEADER - len(header))
    return header + payload + bytes(_align(len(payload)) - len(payload))


def io_table(entries: Sequence[IoEntry]) -> bytes:
    out = struct.pack("<i", len(entries))
    for e in entries:
        if len(e.shape) != 6:
            raise VelaBlobError(f"I/O shape {e.shape} is not 6-D")
        out += IO_ENTRY.pack(*e.shape, e.elem_size, e.offset, e.region)
    return out


def write_blob(blob: VelaBlob) -> bytes:
    """The vela_bin_stream bytes (all blocks inline)."""
    if bytes(blob.cmd_data[:4]) not in COP_MAGICS:
        raise VelaBlobError("cmd_data does not start with COP1/COP2")
    if not 0 <= blob.scratch_size < 2 ** 32:
        raise VelaBlobError(f"scratch_size {blob.scratch_size} does not fit in a u32")
    for what, entries in (("input", blob.inputs), ("output", blob.outputs)):
        for i, e in enumerate(entries):
            if e.offset < 0 or e.offset + e.nbytes > blob.scratch_size:
                raise VelaBlobError(f"{what} {i}: bytes {e.offset}..{e.offset + e.nbytes} are "
                                    f"outside the {blob.scratch_size}-byte scratch area")
    return b"".join([
        _block(START, b""),
        _block("cmd_data", bytes(blob.cmd_data)),
        _block("weight_data", bytes(blob.weight_data)),
        _block("scratch_size", struct.pack("<I", blob.scratch_size)),
        _block("inputs", io_table(blob.inputs)),
        _block("outputs", io_table(blob.outputs)),
        _block(END, b""),
    ])


def read_blocks(data: bytes) -> List[Block]:
    """The blocks in file order, with the framing checks of §2.5 (start and end markers,
    names known, every block inside the blob, the end marker ending it exactly)."""
    data = bytes(data)
    if len(data) < 2 * BLOCK_HEADER or len(data) % BLOCK_ALIGN:
        raise VelaBlobError(f"blob of {len(data)} bytes: not a multiple of {BLOCK_ALIGN} "
                            f"holding at least the two {BLOCK_HEADER}-byte markers")
    out: List[Block] = []
    pos = 0
    while pos < len(data):
        if pos + BLOCK_HEADER > len(data):
            raise VelaBlobError(f"block header at byte {pos} runs past the blob end")
        raw_name = data[pos:pos + NAME_LEN]
        name = raw_name.split(b"\0", 1)[0].decode("ascii", "replace")
        size, ext = struct.unpack_from("<IB", data, pos + NAME_LEN)
        # upstream matches names as prefixes of the known names
        known = next((k for k in BLOCK_ORDER if raw_name[:len(k)] == k.encode()), None)
        if known is None:
            raise VelaBlobError(f"unknown block {name!r} at byte {pos}")
        if not out and known != START:
            raise VelaBlobError(f"first block is {name!r}, not {START!r}")
        end = pos + BLOCK_HEADER + size
        if end > len(data):
            raise VelaBlobError(f"block {name!r} at byte {pos}: {size} payload bytes run past "
                                f"the {len(data)}-byte blob")
        out.append(Block(known, pos, size, bool(ext), data[pos + BLOCK_HEADER:end]))
        if known == END:
            if end != len(data):
                raise VelaBlobError(f"{END} at byte {pos} does not end the blob "
                                    f"({len(data) - end} bytes follow)")
            break
        pos = pos + BLOCK_HEADER + _align(size)
    if not out or out[-1].name != END:
        raise VelaBlobError(f"no {END} block")
    return out


def _io_entries(block: Block) -> List[IoEntry]:
    p = block.payload
    if len(p) < 4:
        raise VelaBlobError(f"{block.name}: {len(p)} bytes, no count")
    count = struct.unpack_from("<i", p)[0]
    if count < 0 or 4 + count * IO_ENTRY.size != len(p):
        raise VelaBlobError(f"{block.name}: count {count} needs {4 + max(count, 0) * 36} "
                            f"bytes, block has {len(p)}")
    out = []
    for i in range(count):
        v = IO_ENTRY.unpack_from(p, 4 + i * IO_ENTRY.size)
        out.append(IoEntry(tuple(v[:6]), v[6], v[7], v[8]))
    return out


def read_blob(data: bytes) -> VelaBlob:
    """Parse and check a vela_bin_stream. External blocks (§2.4) are reported in
    VelaBlob.external with an empty payload."""
    found = {}
    external = {}
    for b in read_blocks(data):
        if b.name in (START, END):
            continue
        if b.name in found:
            raise VelaBlobError(f"block {b.name!r} appears twice")
        if b.external:
            if b.name not in ("cmd_data", "weight_data") or b.size != 64:
                raise VelaBlobError(f"external block {b.name!r} of {b.size} bytes (only "
                                    "cmd_data/weight_data, with a 64-hex key, may be external)")
            external[b.name] = b.payload.decode("ascii", "replace")
            found[b.name] = b""
        else:
            found[b.name] = b
    for name in BLOCK_ORDER[1:-1]:
        if name not in found:
            raise VelaBlobError(f"no {name!r} block")

    def payload(name):
        v = found[name]
        return v if isinstance(v, bytes) else v.payload
    cmd = payload("cmd_data")
    if "cmd_data" not in external and cmd[:4] not in COP_MAGICS:
        raise VelaBlobError(f"cmd_data starts with {cmd[:4]!r}, not COP1/COP2")
    scratch = payload("scratch_size")
    if len(scratch) != 4:
        raise VelaBlobError(f"scratch_size block holds {len(scratch)} bytes, not 4")
    return VelaBlob(cmd_data=cmd, weight_data=payload("weight_data"),
                    scratch_size=struct.unpack("<I", scratch)[0],
                    inputs=_io_entries(found["inputs"]), outputs=_io_entries(found["outputs"]),
                    external=external)

