"""Render schema dataclasses the way `flatc --json --strict-json
--defaults-json` renders the same table, so tests can compare the two."""
from __future__ import annotations

import enum

from .flatbuffer import _IDS
from .schema import ENUMS, SCALARS


def to_flatc_json(obj):
    out = {}
    for name, kind, opts, _ in _IDS[type(obj)]:
        value = getattr(obj, name)
        if isinstance(kind, tuple) and kind[0] == "union":
            out[name + "_type"] = "NONE" if value is None else type(value).__name__
            if value is not None:
                out[name] = to_flatc_json(value)
            continue
        if isinstance(kind, str) and kind in SCALARS:
            if "enum" in opts:
                try:
                    value = ENUMS[opts["enum"]](value).name
                except ValueError:
                    value = int(value)
            elif kind == "bool":
                value = bool(value)
            elif kind == "double":
                value = float(value)
            else:
                value = int(value)
            out[name] = value
            continue
        if value is None:
            continue
        if kind == "string":
            out[name] = value
        elif kind == "bytes":
            out[name] = list(value)
        elif kind[0] == "table":
            out[name] = to_flatc_json(value)
        elif isinstance(kind[1], tuple):
            out[name] = [to_flatc_json(v) for v in value]
        else:
            out[name] = [(bool(v) if kind[1] == "bool" else
                          float(v) if kind[1] == "double" else
                          int(v.value if isinstance(v, enum.Enum) else v)) for v in value]
    return out
