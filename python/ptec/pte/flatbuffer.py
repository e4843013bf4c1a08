"""A small flatbuffer encoder and decoder driven by schema.LAYOUT.

Written from the wire rules in pte-format.md §2; no flatbuffers library.
The encoder works front to back: a table is written first and the strings,
vectors and tables it points to follow it, so every uoffset points forward
as the format requires. Vtables sit just before the first table that uses
them and are shared by identical tables. All alignment is relative to
byte 0 of the file, which is what a reader that maps the file at an aligned
address needs.
"""
from __future__ import annotations

import dataclasses
import struct
from typing import Any, Dict, List, Tuple

from .schema import ENUMS, LAYOUT, SCALARS, UNIONS


class FlatbufferError(ValueError):
    pass


def _field_ids(cls) -> List[Tuple[str, Any, dict, int]]:
    out, next_id = [], 0
    for name, kind, opts in LAYOUT[cls]:
        out.append((name, kind, opts, next_id))
        next_id += 2 if isinstance(kind, tuple) and kind[0] == "union" else 1
    return out


_IDS = {cls: _field_ids(cls) for cls in LAYOUT}


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


# --------------------------------------------------------------------------
# Encoder

class Encoder:
    def __init__(self, prefix_len: int):
        self.out = bytearray(prefix_len)
        self.vtables: Dict[bytes, int] = {}

    def pad_to(self, alignment: int, residue: int = 0) -> None:
        while len(self.out) % alignment != residue % alignment:
            self.out.append(0)

    def patch_uoffset(self, slot: int, target: int) -> None:
        if target <= slot:
            raise FlatbufferError("internal: backward uoffset")
        struct.pack_into("<I", self.out, slot, target - slot)

    # -- leaves --------------------------------------------------------------
    def write_string(self, s: str) -> int:
        data = s.encode("utf-8")
        self.pad_to(4)
        pos = len(self.out)
        self.out += struct.pack("<I", len(data)) + data + b"\0"
        return pos

    def write_scalar_vector(self, elem: str, items, force_align: int = 0) -> int:
        code, size = SCALARS[elem]
        elem_align = max(size, 4, force_align)
        self.pad_to(elem_align, elem_align - 4)
        pos = len(self.out)
        if elem == "ubyte" or isinstance(items, (bytes, bytearray)):
            data = bytes(items)
        elif elem == "bool":
            data = bytes(1 if b else 0 for b in items)
        else:
            data = struct.pack("<%d%s" % (len(items), code), *items)
        self.out += struct.pack("<I", len(items)) + data
        return pos

    def write_offset_vector(self, items: list, write_item) -> int:
        """A vector of uoffsets to what write_item writes for each item
        (tables, strings), after the vector."""
        self.pad_to(4)
        pos = len(self.out)
        self.out += struct.pack("<I", len(items)) + bytes(4 * len(items))
        for i, item in enumerate(items):
            self.patch_uoffset(pos + 4 + 4 * i, write_item(item))
        return pos

    # -- tables --------------------------------------------------------------
    def write_table(self, obj) -> int:
        cls = type(obj)
        if cls not in LAYOUT:
            raise FlatbufferError(f"not a schema table: {cls.__name__}")
        slots = []      # (field id, size, packed bytes or None, child writer)
        for name, kind, opts, fid in _IDS[cls]:
            value = getattr(obj, name)
            if isinstance(kind, tuple) and kind[0] == "union":
                if value is None:
                    continue
                members = UNIONS[kind[1]]
                try:
                    tag = members.index(type(value)) + 1
                except ValueError:
                    raise FlatbufferError(f"{type(value).__name__} is not in union {kind[1]}")
                slots.append((fid, 1, struct.pack("<B", tag), None))
                slots.append((fid + 1, 4, None, (lambda v=value: self.write_table(v))))
            elif isinstance(kind, str) and kind in SCALARS:
                if not value:     # every schema default here is 0 / false
                    continue
                code, size = SCALARS[kind]
                v = float(value) if kind == "double" else int(value)
                slots.append((fid, size, struct.pack("<" + code, v), None))
            elif value is None:
                continue
            elif kind == "string":
                slots.append((fid, 4, None, (lambda v=value: self.write_string(v))))
            elif kind == "bytes":
                fa = opts.get("force_align", 0)
                slots.append((fid, 4, None,
                              (lambda v=value, fa=fa: self.write_scalar_vector("ubyte", v, fa))))
            elif kind[0] == "table":
                slots.append((fid, 4, None, (lambda v=value: self.write_table(v))))
            elif kind[0] == "vector":
                elem = kind[1]
                if isinstance(elem, tuple):
                    writer = (lambda v=value: self.write_offset_vector(v, self.write_table))
                elif elem == "string":
                    writer = (lambda v=value: self.write_offset_vector(v, self.write_string))
                else:
                    writer = (lambda v=value, e=elem: self.write_scalar_vector(e, v))
                slots.append((fid, 4, None, writer))
            else:
                raise FlatbufferError(f"unknown kind {kind!r}")

        # Inline layout: soffset at +0, then fields by decreasing size.
        has8 = any(s[1] == 8 for s in slots)
        order = sorted(slots, key=lambda s: -s[1])
        rel = 4
        placed = []
        for fid, size, packed, writer in order:
            # Table start is 4 mod 8 when it holds 8-byte fields, so +4 is 8-aligned.
            absolute_mod = (4 if has8 else 0)
            while (rel + absolute_mod) % size:
                rel += 1
            placed.append((fid, rel, size, packed, writer))
            rel += size
        obj_len = _align(rel, 4)
        n_ids = 1 + max([p[0] for p in placed], default=-1)
        voffsets = [0] * n_ids
        for fid, r, *_ in placed:
            voffsets[fid] = r
        vt = struct.pack("<%dH" % (2 + n_ids), 4 + 2 * n_ids, obj_len, *voffsets)

        vt_pos = self.vtables.get(vt)
        if vt_pos is None:
            self.pad_to(2)
            vt_pos = len(self.out)
            self.out += vt
            self.vtables[vt] = vt_pos
        self.pad_to(8 if has8 else 4, 4 if has8 else 0)
        table = len(self.out)
        body = bytearray(obj_len)
        struct.pack_into("<i", body, 0, table - vt_pos)
        for fid, r, size, packed, writer in placed:
            if packed is not None:
                body[r:r + size] = packed
        self.out += body
        for fid, r, size, packed, writer in sorted(placed, key=lambda p: p[0]):
            if writer is not None:
                self.patch_uoffset(table + r, writer())
        return table


def encode(root, file_identifier: bytes, prefix_len: int = 8) -> bytearray:
    """Serialise `root`; bytes [8, prefix_len) are left zero for a header."""
    enc = Encoder(max(prefix_len, 8))
    root_pos = enc.write_table(root)
    struct.pack_into("<I", enc.out, 0, root_pos)
    enc.out[4:8] = file_identifier
    enc.pad_to(8)
    return enc.out


# --------------------------------------------------------------------------
# Decoder

class Decoder:
    def __init__(self, buf: bytes, limit: int = None):
        self.buf = memoryview(buf)
        self.limit = len(buf) if limit is None else min(limit, len(buf))

    def _check(self, pos: int, n: int) -> None:
        if pos < 0 or n < 0 or pos + n > self.limit:
            raise FlatbufferError(f"read of {n} bytes at {pos} is outside the buffer")

    def scalar(self, code: str, pos: int):
        size = struct.calcsize("<" + code)
        self._check(pos, size)
        return struct.unpack_from("<" + code, self.buf, pos)[0]

    def deref(self, pos: int) -> int:
        off = self.scalar("I", pos)
        if off == 0:
            raise FlatbufferError(f"zero uoffset at {pos}")
        return pos + off

    def field_pos(self, table: int, fid: int):
        vt = table - self.scalar("i", table)
        vt_len = self.scalar("H", vt)
        if 4 + 2 * fid >= vt_len:
            return None
        vo = self.scalar("H", vt + 4 + 2 * fid)
        return None if vo == 0 else table + vo

    def vector(self, pos: int) -> Tuple[int, int]:
        n = self.scalar("I", pos)
        return pos + 4, n

    def string(self, pos: int) -> str:
        start, n = self.vector(pos)
        self._check(start, n)
        return bytes(self.buf[start:start + n]).decode("utf-8")

    def table(self, cls, pos: int, depth: int = 0):
        if depth > 64:
            raise FlatbufferError("tables nested deeper than 64")
        if pos % 4:
            raise FlatbufferError(f"{cls.__name__} table at unaligned position {pos}")
        kwargs = {}
        for name, kind, opts, fid in _IDS[cls]:
            if isinstance(kind, tuple) and kind[0] == "union":
                tp = self.field_pos(pos, fid)
                vp = self.field_pos(pos, fid + 1)
                tag = self.scalar("B", tp) if tp is not None else 0
                if tag == 0 or vp is None:
                    kwargs[name] = None
                    continue
                members = UNIONS[kind[1]]
                if tag > len(members):
                    raise FlatbufferError(f"{cls.__name__}.{name}: union tag {tag} out of range")
                kwargs[name] = self.table(members[tag - 1], self.deref(vp), depth + 1)
                continue
            fp = self.field_pos(pos, fid)
            if isinstance(kind, str) and kind in SCALARS:
                if fp is None:
                    value = 0
                else:
                    value = self.scalar(SCALARS[kind][0], fp)
                if kind == "bool":
                    value = bool(value)
                elif kind == "double":
                    value = float(value)
                elif "enum" in opts:
                    try:
                        value = ENUMS[opts["enum"]](value)
                    except ValueError:
                        pass
                kwargs[name] = value
                continue
            if fp is None:
                kwargs[name] = None
                continue
            target = self.deref(fp)
            if kind == "string":
                kwargs[name] = self.string(target)
            elif kind == "bytes":
                start, n = self.vector(target)
                self._check(start, n)
                kwargs[name] = bytes(self.buf[start:start + n])
            elif kind[0] == "table":
                kwargs[name] = self.table(kind[1], target, depth + 1)
            else:
                elem = kind[1]
                start, n = self.vector(target)
                if isinstance(elem, tuple):
                    self._check(start, 4 * n)
                    kwargs[name] = [self.table(elem[1], self.deref(start + 4 * i), depth + 1)
                                    for i in range(n)]
                elif elem == "string":
                    self._check(start, 4 * n)
                    kwargs[name] = [self.string(self.deref(start + 4 * i)) for i in range(n)]
                else:
                    code, size = SCALARS[elem]
                    self._check(start, size * n)
                    vals = list(struct.unpack_from("<%d%s" % (n, code), self.buf, start))
                    if elem == "bool":
                        vals = [bool(v) for v in vals]
                    kwargs[name] = vals
        return cls(**kwargs)


def decode(buf: bytes, root_cls, file_identifier: bytes = None, limit: int = None):
    dec = Decoder(buf, limit)
    if file_identifier is not None and bytes(buf[4:8]) != file_identifier:
        raise FlatbufferError(f"file identifier {bytes(buf[4:8])!r} != {file_identifier!r}")
    return dec.table(root_cls, dec.scalar("I", 0))


def asdict(obj):
    return dataclasses.asdict(obj)
