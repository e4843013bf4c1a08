"""Operator signatures (schema parameter names and kinds, `out` last) for
every operator ptec emits or understands, the kernel the runtime has for
each, and the kernel lists a build links: all read from operators.json, the
one manifest of operators (docs/architecture.md, "Operators: one manifest").

Kinds: Tensor, Tensor?, Tensor[], Tensor?[] (None items -1), int, int?, int[], int[]?, float, bool, Scalar,
Scalar?, ScalarType, ScalarType?. A KernelCall carries one value per
parameter, then the return slot repeating `out` (pte-format.md §4.7), or a
TensorList of the outputs for operators with several. The aten schemas are
those of PyTorch's native_functions.yaml out variants, the names and
overloads ExecuTorch's portable library registers.
Sources: cortex-m-ops.md §3 and §4.

Run as `python3 -m ptec.ops [FILE]` to write the all-kernels list
(src/kernels/all_kernels.def) from the manifest.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

Sig = List[Tuple[str, str]]

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "operators.json")


@dataclass(frozen=True)
class Operator:
    key: str                    # "namespace::name.overload"
    signature: Tuple[Tuple[str, str], ...]
    outputs: Tuple[str, ...]
    kernel: Optional[str]       # the const ptec_kernel symbol, None: no kernel
    source: Optional[str]       # the C file defining it, relative to the checkout
    isa: Dict[str, Tuple[str, ...]]


_SCHEMA = re.compile(r"\s*([\w:.]+)\s*\((.*)\)\s*")


def parse_schema(schema: str) -> Tuple[str, Sig]:
    """'ns::op.overload(Kind name, ...)' -> (key, [(name, kind), ...])."""
    m = _SCHEMA.fullmatch(schema)
    if not m:
        raise ValueError(f"bad operator schema {schema!r}")
    params = []
    for param in filter(None, (p.strip() for p in m.group(2).split(","))):
        kind, _, name = param.rpartition(" ")
        if not kind or not name.isidentifier():
            raise ValueError(f"bad parameter {param!r} in {schema!r}")
        params.append((name, kind))
    return m.group(1), params


def _load(path: str = MANIFEST) -> Dict[str, Operator]:
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)["operators"]
    out: Dict[str, Operator] = {}
    for e in entries:
        key, sig = parse_schema(e["schema"])
        if key in out:
            raise ValueError(f"{path}: {key} listed twice")
        out[key] = Operator(key, tuple(sig), tuple(e.get("outputs", ["out"])), e.get("kernel"),
                            e.get("source"), {k: tuple(v) for k, v in e.get("isa", {}).items()})
    return out


OPERATORS: Dict[str, Operator] = _load()
SIGNATURES: Dict[str, Sig] = {k: list(op.signature) for k, op in OPERATORS.items()}


def outputs(key: str) -> Tuple[str, ...]:
    """The out parameters, in schema order. With several, the KernelCall's
    return slot is one TensorList of them (pte-format.md 4.7)."""
    op = OPERATORS.get(key)
    return op.outputs if op is not None else ("out",)


def signature(key: str) -> Sig:
    return SIGNATURES[key]


def cortex_m_ops() -> List[str]:
    return sorted(k for k in SIGNATURES if k.startswith("cortex_m::"))


# --------------------------------------------------------------------------
# Which kernels the ptec runtime has, and the X-macro lists that select them.

def kernel_symbols() -> Dict[str, str]:
    """Operator key -> PTEC_KERNEL symbol, for every operator with a kernel."""
    return {k: op.kernel for k, op in OPERATORS.items() if op.kernel}


def runtime_kernels() -> List[str]:
    """Operator keys the ptec runtime has kernels for."""
    return sorted(kernel_symbols())


def read_kernel_list(text: str) -> Set[str]:
    """The symbols of a PTEC_KERNEL_LIST file's PTEC_KERNEL(symbol) lines."""
    return set(re.findall(r"^\s*PTEC_KERNEL\(\s*(\w+)\s*\)", text, re.M))


def all_kernels_def() -> str:
    """src/kernels/all_kernels.def: every kernel of the manifest, sorted by
    operator name (byte order), the order in which the runtime's kernel
    lookup (kernel_table.c) finds a name by binary search."""
    from .pte.upstream_rules import RULES       # upstream_rules imports this module
    lines = ["/* Every kernel ptec ships, one PTEC_KERNEL(symbol) per line, sorted by",
             " * operator name (the runtime finds names by binary search). The symbol is",
             " * the const ptec_kernel a kernel file defines; \"ptec only\" marks an",
             " * operator upstream ExecuTorch has no kernel for (pte/upstream_rules.py).",
             " * Generated from python/ptec/operators.json by `python3 -m ptec.ops`;",
             " * do not edit. */", ""]
    for key in sorted(OPERATORS, key=lambda k: k.encode()):
        op = OPERATORS[key]
        if op.kernel:
            own = key.startswith("ptec::") or (key in RULES and RULES[key].upstream_library.startswith("none"))
            lines.append(f"PTEC_KERNEL({op.kernel}) /* {key}, {os.path.dirname(op.source or '')}"
                         + (", ptec only" if own else "") + " */")
    return "\n".join(lines) + "\n"


def kernel_list(operators: Iterable[str], origin: str = "this program",
                available: Optional[Set[str]] = None) -> Tuple[str, List[str]]:
    """A PTEC_KERNEL_LIST file selecting exactly these operators, sorted by
    name as the runtime's binary search expects (selective build: cmake
    -DPTEC_KERNEL_LIST=that.def), and the operators it leaves out: those ptec
    has no kernel for, or whose symbol is not in `available` (a build's own
    list) when that is given."""
    lines = [f"/* Kernels used by {origin}, sorted by operator name. Generated by ptec; do not edit. */"]
    missing = []
    symbols = kernel_symbols()
    for key in sorted(dict.fromkeys(operators), key=lambda k: k.encode()):
        symbol = symbols.get(key)
        if symbol is None or (available is not None and symbol not in available):
            missing.append(key)
            lines.append(f"/* {key}: no kernel in this ptec ({symbol or 'none in the manifest'}) */")
        else:
            lines.append(f"PTEC_KERNEL({symbol}) /* {key} */")
    return "\n".join(lines) + "\n", missing


def kernel_list_def(operators: Iterable[str]) -> str:
    """kernel_list() for `compile --kernel-list`, where every operator must
    have a kernel (KeyError names those without)."""
    text, missing = kernel_list(operators)
    if missing:
        raise KeyError("no kernel symbol for " + ", ".join(sorted(missing)))
    return text


def main(argv: Sequence[str] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) > 1:
        print("usage: python3 -m ptec.ops [FILE]   (write the all-kernels list; default stdout)",
              file=sys.stderr)
        return 2
    text = all_kernels_def()
    if argv:
        with open(argv[0], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
