"""Bytes as C source: the one writer of the arrays that put a program (or an
input) into a firmware image. A definition is a const uint8_t array with an
alignment and a linker section, 16 bytes a row; a header is a guarded file
of declarations. Callers choose the names and declarations they export
(`ptec compile --header`, tools/pte2c.py); the layout is decided here."""
from __future__ import annotations

import os
import re
from typing import Iterable


def c_identifier(text: str) -> str:
    """`text` with every non-word character as '_', never starting with a digit."""
    ident = re.sub(r"\W", "_", text)
    return ident if re.match(r"[A-Za-z_]", ident) else "_" + ident


def header_guard(path: str) -> str:
    return c_identifier(os.path.basename(path)).upper()


def array_definition(data: bytes, name: str, section: str, align: int = 16,
                     used: bool = False) -> str:
    """`const uint8_t name[]` holding `data`, aligned, in `section`. `used`
    keeps it in an image even where nothing refers to it."""
    attrs = f'section("{section}"), aligned({align})' + (", used" if used else "")
    lines = [f"__attribute__(({attrs}))",
             f"const uint8_t {name}[{max(len(data), 1)}] = {{"]
    for i in range(0, len(data), 16):
        lines.append("    " + " ".join(f"0x{b:02x}," for b in data[i:i + 16]))
    lines.append("};")
    return "\n".join(lines) + "\n"


def header(path: str, comment: str, declarations: Iterable[str]) -> str:
    """A header for `path`: `comment`, an include guard, <stddef.h> and
    <stdint.h>, then the declaration lines."""
    guard = header_guard(path)
    return (f"{comment}\n#ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
            + "".join(line + "\n" for line in declarations) + "\n#endif\n")
