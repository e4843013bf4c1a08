"""The compiler driver: capture -> quantize -> lower -> plan -> emit, and the
`python3 -m ptec compile` command."""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import numpy as np
import torch

from . import capture as cap
from . import emit as em
from . import lower as lw
from . import plan as pl
from . import quantize as qz
from .ops import runtime_kernels
from .pte.schema import Program


class CompileError(RuntimeError):
    pass


@dataclass
class CompileResult:
    program: Program
    data: bytes
    lowered: lw.Lowered
    memory_plan: pl.MemoryPlan
    graph: object                 # the quantized ptec Graph
    float_graph: object


def missing_kernels(operators: Sequence[str], available: Optional[Sequence[str]] = None) -> List[str]:
    have = set(available if available is not None else runtime_kernels())
    return sorted(set(operators) - have)


def compile_model(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                  calibration: Sequence[Sequence[torch.Tensor]], target: str = "cortex-m55",
                  int8_io: bool = False, config: qz.QuantConfig = qz.QuantConfig(),
                  capture_method: str = "auto", name: str = "model",
                  log: Callable[[str], None] = lambda s: None,
                  available_kernels: Optional[Sequence[str]] = None) -> CompileResult:
    t0 = time.time()
    graph = cap.capture(model, example_inputs, capture_method, name)
    log(f"captured {len(graph.nodes)} nodes with torch.{graph.source}")
    prepared = qz.prepare(graph)
    log(f"prepared: {len(prepared.nodes)} nodes after batch-norm folding and activation fusion")
    total = len(calibration)

    def progress(i):
        if i == total or i % max(1, total // 4) == 0:
            log(f"calibration {i}/{total}")
    observer = qz.calibrate(prepared, calibration, config, progress)
    qgraph = qz.quantize(prepared, observer)
    try:
        lowered = lw.lower(qgraph, target, int8_io)
    except ValueError as e:         # LoweringError, or parameters out of the kernels' range
        raise CompileError(f"lowering failed: {e}") from e
    log(f"lowered to {len(lowered.builder.instructions)} kernel calls, "
        f"{len(lowered.builder.operators)} operators"
        + (f", fp32 fallbacks: {', '.join(lowered.fallbacks)}" if lowered.fallbacks else ""))
    missing = missing_kernels(lowered.operators, available_kernels)
    if missing:
        raise CompileError("ptec's runtime has no kernel for: " + ", ".join(missing)
                           + (" (from " + "; ".join(lowered.fallbacks) + ")"
                              if lowered.fallbacks else "")
                           + (". Not lowered to int8: " + "; ".join(lowered.refusals)
                              if lowered.refusals else ""))
    mplan = pl.plan_lowered(lowered)
    log(f"memory: {mplan.summary()}")
    program = em.build_program(lowered, mplan)
    data = em.emit_pte(program)
    log(f"emitted {len(data)} bytes in {time.time() - t0:.1f} s")
    return CompileResult(program, data, lowered, mplan, qgraph, graph)


def _load_calibration_dir(path: str, example_inputs) -> List[tuple]:
    files = sorted(f for f in os.listdir(path) if f.endswith((".npy", ".bin")))
    out = []
    shapes = [tuple(e.shape) for e in example_inputs]
    for f in files:
        full = os.path.join(path, f)
        arr = np.load(full) if f.endswith(".npy") else np.fromfile(full, "<f4")
        arr = arr.astype(np.float32).reshape(shapes[0])
        out.append((torch.from_numpy(arr),))
    if not out:
        raise CompileError(f"no .npy or .bin files in {path}")
    return out


def compile_cli(args) -> int:
    from .models import ZOO, load_model
    if args.list:
        for name, e in ZOO.items():
            print(f"{name:20s} {e.description}")
        return 0
    if not args.output:
        raise CompileError("-o/--output is required")

    def log(msg):
        print(f"[ptec] {msg}", file=sys.stderr, flush=True)
    torch.manual_seed(args.seed)
    try:
        model = load_model(args.model)
    except ValueError as e:
        raise CompileError(str(e))
    log(f"model {model.name}: inputs {[tuple(x.shape) for x in model.example_inputs]}")
    if os.path.isdir(args.calib):
        calib = _load_calibration_dir(args.calib, model.example_inputs)
    else:
        try:
            n = int(args.calib)
        except ValueError:
            raise CompileError(f"--calib wants a number or a directory, got {args.calib!r}")
        calib = model.calibration(n, args.seed)
    log(f"calibrating on {len(calib)} samples ({args.observer})")
    cfg = qz.QuantConfig(observer=args.observer, percentile=args.percentile)
    res = compile_model(model.module, model.example_inputs, calib, args.target, args.int8_io,
                        cfg, name=model.name, log=log)
    with open(args.output, "wb") as f:
        f.write(res.data)
    for io in res.lowered.inputs:
        q = f" scale {io.scale:.9g} zero_point {io.zero_point}" if io.dtype == "int8" else ""
        log(f"input  {io.name}: {io.dtype} {io.sizes} dim_order {io.dim_order}{q}")
    for io in res.lowered.outputs:
        q = f" scale {io.scale:.9g} zero_point {io.zero_point}" if io.dtype == "int8" else ""
        log(f"output {io.name}: {io.dtype} {io.sizes}{q}")
    log(f"wrote {args.output} ({len(res.data)} bytes, arena {res.memory_plan.arena_bytes} bytes, "
        f"target {args.target})")
    if args.kernel_list:
        from .ops import kernel_list_def
        try:
            text = kernel_list_def(res.lowered.operators)
        except KeyError as e:
            raise CompileError(f"--kernel-list: {e}")
        with open(args.kernel_list, "w") as f:
            f.write(text)
        log(f"wrote {args.kernel_list} ({len(set(res.lowered.operators))} kernels)")
    if args.header:
        c_path = em.write_c_array(res.data, args.header, section=args.section,
                                 arena_bytes=res.memory_plan.arena_bytes)
        log(f"wrote {args.header} and {c_path}")
    return 0
