"""`python3 -m ptec inspect MODEL.tflite`: a TFLite model as text (subgraphs, I/O tensors
with quantization, operators with options); an `ethos-u` operator's COP1 payload is decoded
like an EthosUBackend blob's (--commands lists every command)."""
from __future__ import annotations

from typing import List

from .reader import Model, Tensor


def _quant(t: Tensor) -> str:
    q = t.quantization
    if q is None:
        return ""
    if q.per_channel:
        return f" per-channel ({len(q.scale)} scales, axis {q.quantized_dimension})"
    zp = q.zero_point[0] if q.zero_point else 0
    return f" scale {q.scale[0]:.9g} zp {zp}" if q.scale else ""


def tensor_line(t: Tensor) -> str:
    shape = ",".join(str(d) for d in t.shape)
    data = f" data {len(t.data)} B" if t.data else ""
    return f"tensor {t.index} {t.name!r} {t.type}[{shape}]{_quant(t)}{data}"


def describe_model(model: Model, name: str = "", size: int = 0, commands: bool = False) -> str:
    out: List[str] = [f"file {name} ({size} bytes): TFLite schema {model.version}, "
                      f"{model.description!r}, {len(model.subgraphs)} subgraph(s)"]
    if model.metadata:
        out.append("metadata: " + ", ".join(f"{k} ({len(v)} B)" for k, v in model.metadata.items()))
    alloc = model.offline_memory_allocation() if "OfflineMemoryAllocation" in model.metadata else None
    if alloc is not None:
        out.append(f"OfflineMemoryAllocation (subgraph 0): {alloc}")
    for g in model.subgraphs:
        out.append(f"subgraph {g.index} {g.name!r}: {len(g.tensors)} tensors, "
                   f"{len(g.operators)} operators, inputs {g.inputs}, outputs {g.outputs}")
        for i in g.inputs:
            out.append("  input  " + tensor_line(g.tensors[i]))
        for i in g.outputs:
            out.append("  output " + tensor_line(g.tensors[i]))
        for op in g.operators:
            opts = ", ".join(f"{k}={v}" for k, v in op.options.items())
            custom = (f" custom_options {op.custom_options.hex()}"
                      if op.custom_options is not None and len(op.custom_options) <= 16 else "")
            out.append(f"  op {op.index:3d} {op.name} in {op.inputs} out {op.outputs}"
                       + (f" {{{opts}}}" if opts else "") + custom)
            if op.custom_code == "ethos-u" and op.inputs and op.inputs[0] >= 0:
                from ..backends.ethos_u.command_stream import describe_cop
                for i in op.inputs[:4]:
                    out.append("      " + tensor_line(g.tensors[i]))
                cmd = g.tensors[op.inputs[0]].data or b""
                out += describe_cop(cmd, commands=commands, indent="      ").splitlines()
    return "\n".join(out)
