"""The EthosUBackend part of `python3 -m ptec inspect`: each such delegate's blob decoded
(blocks, scratch size, I/O tables, the COP1 config as a target name, operation counts and,
with --commands, the full command listing)."""
from __future__ import annotations

from typing import List

from ...pte.inspect import delegate_data
from ...pte.schema import Program
from .blob import VelaBlobError, read_blob, read_blocks
from .command_stream import CommandStreamError, describe_cop

BACKEND_ID = "EthosUBackend"


class EthosUInspectError(ValueError):
    """A delegate blob that is not a valid vela_bin_stream; one line."""


def _io_line(kind: str, i: int, e) -> str:
    shape = ",".join(str(d) for d in e.shape)
    return (f"  {kind} {i}: shape [{shape}] elem_size {e.elem_size} scratch offset {e.offset} "
            f"region {e.region} ({e.nbytes} B)")


def describe_blob(data: bytes, commands: bool = False) -> List[str]:
    blocks = read_blocks(data)
    blob = read_blob(data)
    out = [f"  vela_bin_stream: {len(data)} bytes, blocks "
           + ", ".join(f"{b.name}@{b.offset}({b.size}{' external' if b.external else ''})"
                       for b in blocks),
           f"  scratch_size {blob.scratch_size}, weight_data {len(blob.weight_data)} bytes"]
    out += [_io_line("input ", i, e) for i, e in enumerate(blob.inputs)]
    out += [_io_line("output", i, e) for i, e in enumerate(blob.outputs)]
    if "cmd_data" in blob.external:
        out.append(f"  cmd_data is external, named-data key {blob.external['cmd_data']}")
    else:
        out += describe_cop(blob.cmd_data, commands=commands, indent="  ").splitlines()
    return out


def describe_delegates(program: Program, commands: bool = False) -> str:
    """Text for every EthosUBackend delegate of every method ("" when there is none)."""
    out: List[str] = []
    for plan in program.execution_plan or []:
        for i, d in enumerate(plan.delegates or []):
            if d.id != BACKEND_ID:
                continue
            data = delegate_data(program, d)
            if data is None:
                raise EthosUInspectError(f"delegate {i} ({BACKEND_ID}): its data reference "
                                         "points at nothing")
            out.append(f"{BACKEND_ID} delegate [{i}] of method {plan.name!r}:")
            try:
                out += describe_blob(data, commands)
            except (VelaBlobError, CommandStreamError) as e:
                raise EthosUInspectError(f"delegate {i} ({BACKEND_ID}): {e}") from e
    return "\n".join(out)
