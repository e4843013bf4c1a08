"""The compiler driver: capture -> quantize -> lower -> plan -> emit
(`python3 -m ptec compile` is its command line, in cli.py)."""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

import torch

from . import capture as cap
from . import emit as em
from . import lower as lw
from . import plan as pl
from . import quantize as qz
from .backends.ethos_u.npu_config import NPU_TARGETS
from .calibration import check_samples, refuse_nonfinite_inputs
from .exact_sums import narrow_sums_as_linear
from .narrow_clamps import narrow_clamp_producers
from .input_channel_spread import spread_inputs_in_fp32
from .cat_linear_split import shadow_cat_linears, split_wide_cat_linears
from .input_compression import compress_inputs_in_fp32
from .magnitude_logs import magnitude_logs_in_fp32
from .fp32_statistics import statistics_in_fp32
from .periodic_inputs import periodic_in_fp32
from .nonfinite_in_fp32 import nonfinite_in_fp32
from .guarded_denominators import guarded_denominators
from .fp32_residuals import residuals_in_fp32
from .masked_products import kept_ranges, watch_masked_values
from .class_token_rows import class_token_rows_in_fp32
from .capture_buffer_state import STATE
from .ops import runtime_kernels
from .ir import origin
from .pte.schema import Program
from .random_layers import RANDOM_OPS, node_seed, note as random_note
from .pte.upstream_rules import UpstreamRuleError, require_compatible, upstream_needs


class CompileError(RuntimeError):
    pass


def _check_ranks(graph) -> None:
    """A tensor of a rank the runtime cannot hold is refused here, naming
    its layer, not at load (`tensor rank above 16`)."""
    from .requirements import load_layouts
    most = min(lay["config"]["PTEC_MAX_RANK"] for lay in load_layouts().values())
    for n in graph.nodes:
        if n.shape is not None and len(n.shape) > most:
            raise CompileError(f"operator not supported: {origin(n)} gives a tensor of rank {len(n.shape)}; "
                               f"ptec's runtime holds tensors of rank {most} at most")


@dataclass
class CompileResult:
    program: Program
    data: bytes
    lowered: lw.Lowered
    memory_plan: pl.MemoryPlan
    graph: object                 # the quantized ptec Graph
    float_graph: object


LONG_MODEL_NODES = 40     # from here on, lowering reports its progress


def missing_kernels(operators: Sequence[str], available: Optional[Sequence[str]] = None) -> List[str]:
    have = set(available if available is not None else runtime_kernels())
    return sorted(set(operators) - have)


def _compile_model(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                  calibration: Sequence[Sequence[torch.Tensor]], target: str = "cortex-m55",
                  int8_io: bool = False, config: qz.QuantConfig = qz.QuantConfig(),
                  capture_method: str = "auto", name: str = "model",
                  log: Callable[[str], None] = lambda s: None,
                  available_kernels: Optional[Sequence[str]] = None,
                  backends=None, w4: bool = False, int8_layernorm: bool = False,
                  a16=None, stateful: bool = False, unrolled_lstm: bool = False,
                  ptec_runtime_only: bool = False, in_place: bool = False,
                  random_seed: int = 0, fuse_expansion: bool = False) -> CompileResult:
    """backends: the ptec.backends in the order they are asked (default
    cortex_m then portable; delegating backends go first). w4: linear and
    conv layers with 4-bit weights (ptec::*_w4 kernels, ptec's runtime only).
    int8_layernorm: nn.LayerNorm through ptec::quantized_layer_norm instead
    of fp32 (ptec's runtime only). a16: int16 activations (ptec::*_a16
    kernels, ptec's runtime only) for every layer that has an int16 kernel
    (True) or for the layers under the given module paths. stateful: nn.GRU /
    nn.LSTM keep their state across executes (state tensors: planned, with
    an initial value; a native LSTM layer's h and c are the kernel's
    initial_hidden / initial_cell). nn.LSTM layers become one
    ptec::quantized_lstm each (ptec's runtime only) unless unrolled_lstm,
    which unrolls them into upstream's int8 operators. ptec_runtime_only:
    no planned scratch for upstream's CMSIS-NN kernels, whose operators are
    then called by their ptec:: names (ptec's runtime only). in_place
    (implies ptec_runtime_only): depthwise and pointwise layers whose input
    dies there write over it: less memory, more instructions.
    fuse_expansion (implies ptec_runtime_only): each 1x1 expansion and the
    depthwise after it run as one ptec::quantized_expand_depthwise, the
    expanded tensor never whole: less memory, a few more instructions.
    random_seed:
    mixed into the seed each random layer's stream starts from at load
    (ptec.random_layers)."""
    t0 = time.time()
    graph = cap.capture(model, example_inputs, capture_method, name, stateful=stateful,
                        lstm_kernel=not unrolled_lstm, int8_io=int8_io)
    if stateful:
        kept = sum({"state": 1, "svdf": 1, "lstm": 2}.get(n.op, 0) for n in graph.nodes if n.op == "state"
                   or n.attrs.get("stateful"))
        log(f"--stateful: {kept} state tensors kept across runs")
    log(f"captured {len(graph.nodes)} nodes with torch.{graph.source}")
    kept = [n.attrs[STATE] for n in graph.nodes if n.op == "state" and n.attrs.get(STATE)]
    npu = target in NPU_TARGETS or any(type(b).__name__ == "EthosUBackend" for b in backends or ())
    if kept and npu:
        raise CompileError(f"the model writes its tensor {kept[0]} in forward, which ptec keeps as a state tensor "
                           "across executes: state tensors are not placed on the Ethos-U yet (give a cortex-m "
                           "--target, or compute it without writing the module's tensor)")
    _check_ranks(graph)
    noted = set()
    for n in graph.nodes:
        if n.op in RANDOM_OPS:
            n.attrs["seed"] = node_seed(n.name, random_seed)
            line = random_note(n, origin(n))
            if line not in noted:           # one line per call (randint's several draws)
                noted.add(line)
                log(line)
        elif "note" in n.attrs:
            log(n.attrs["note"])          # capture's word on a layer whose torch result surprises
    prepared = qz.prepare(graph)
    log(f"prepared: {len(prepared.nodes)} nodes after batch-norm folding and activation fusion")
    calibration = check_samples(calibration, example_inputs)
    total = len(calibration)
    compress_inputs_in_fp32(prepared, calibration, log, int8_io,    # 10 * log10(p + eps) of a power-spectrum input
                            lambda ops: missing_kernels(ops, available_kernels))
    periodic_in_fp32(prepared, calibration, log, int8_io,      # sin / cos of t * freqs, t an int input in [0, 1000]
                     lambda ops: missing_kernels(ops, available_kernels))
    magnitude_logs_in_fp32(prepared, calibration, log, int8_io,  # 20 * log10(hypot(re, im) + eps) (ptec.magnitude_logs)
                           lambda ops: missing_kernels(ops, available_kernels))
    statistics_in_fp32(prepared, calibration, log, int8_io,      # x.std(-1) over 5, a rolling std (ptec.fp32_statistics)
                       lambda ops: missing_kernels(ops, available_kernels))

    def progress(i):
        if i == total or i % max(1, total // 4) == 0:
            log(f"calibration {i}/{total}")
    with torch.random.fork_rng(devices=[]):
        # random nodes calibrate on torch's draws: seeded, so a compile repeats (the caller's generator untouched)
        torch.manual_seed(random_seed)
        shadow_cat_linears(prepared)      # fc(cat([x, x**3])): per-part layers calibrated too (ptec.cat_linear_split)
        observer = qz.calibrate(prepared, calibration, config, progress, watch=watch_masked_values)
    kept_ranges(prepared, observer, log)   # exp(d) * tril(ones): exp's grid over the kept positions (ptec.masked_products)
    split_wide_cat_linears(prepared, observer, log)   # ... kept where the parts' spans differ 4x, else removed
    refuse_nonfinite_inputs(prepared.inputs, calibration, observer)
    nonfinite_in_fp32(prepared, observer, log, int8_io)           # nan_to_num(a / b), b 0 in a sample
    guarded_denominators(prepared, observer, log, int8_io)        # z / (z.sum() + eps), z a row of zeros
    residuals_in_fp32(prepared, observer, log, int8_io, int8_layernorm, a16)   # x + attn(x) read by an fp32 LayerNorm
    class_token_rows_in_fp32(prepared, observer, log, int8_io, int8_layernorm, a16)   # cat([cls, tokens]) + pos
    spread_inputs_in_fp32(prepared, calibration, log, int8_io)     # BatchNorm1d of features 1e3 and 1e-2
    narrow_sums_as_linear(prepared, observer)    # narrow means, short sums: a grid of their own (ptec.exact_sums)
    narrow_clamp_producers(prepared, observer)   # a narrow clamp's grid for its producer (ptec.narrow_clamps)
    try:
        qgraph = qz.quantize(prepared, observer, w4, int8_layernorm, a16)
    except qz.A16SelectionError as e:
        raise CompileError(str(e)) from e
    if w4:
        packed = [n for n in qgraph.nodes if n.attrs.get("weight_bits") == 4]
        log(f"--w4: {len(packed)} layers with 4-bit weights "
            f"({sum(int(n.attrs['weight_q'].size) for n in packed)} weights, half a byte each)")
    if a16:
        marked = [n for n in qgraph.nodes if n.attrs.get("a16") and n.op != "reshape"]
        log(f"--a16: {len(marked)} layers with 16-bit activations")
    def lowering_progress(done, nodes):
        # A line per quarter on long models; short ones lower in a blink.
        if nodes >= LONG_MODEL_NODES and (done == nodes or done % max(1, nodes // 4) == 0):
            log(f"lowering {done}/{nodes} nodes")
    try:
        lowered = lw.lower(qgraph, target, int8_io, backends, lowering_progress,
                           ptec_runtime_only or in_place or fuse_expansion, in_place, fuse_expansion)
    except ValueError as e:         # LoweringError, or parameters out of the kernels' range
        raise CompileError(f"lowering failed: {e}") from e
    n_delegates = len(lowered.delegates)
    log(f"lowered to {len(lowered.builder.instructions) - n_delegates} kernel calls, "
        f"{len(lowered.builder.operators)} operators"
        + (f", {n_delegates} delegate calls ({', '.join(lowered.delegates)})" if n_delegates else "")
        + (f", fp32 fallbacks: {', '.join(lowered.fallbacks)}" if lowered.fallbacks else ""))
    if lowered.unsupported:
        raise CompileError("operator not supported: ptec has no kernel for "
                           + ", ".join(dict.fromkeys(lowered.unsupported))
                           + ". Replace it in the model, or compute it outside ptec "
                           "(docs/portable-ops.md lists what runs)")
    missing = missing_kernels(lowered.operators, available_kernels)
    if missing:
        raise CompileError("operator not supported: ptec's runtime has no kernel for: "
                           + ", ".join(missing)
                           + (" (from " + "; ".join(lowered.fallbacks) + ")"
                              if lowered.fallbacks else "")
                           + (". Not lowered to int8: " + "; ".join(lowered.refusals)
                              if lowered.refusals else "")
                           + ". Replace it in the model, or compute it outside ptec")
    mplan = pl.plan_lowered(lowered)
    if fuse_expansion:
        log(f"--fuse-expansion: {lowered.builder.fused_expansions or 0} expansion and depthwise pairs run as one "
            f"call")
    if in_place:
        log(f"--in-place: {lowered.builder.in_place_layers or 0} layers write their output over their input")
    log(f"memory: {mplan.summary()}")
    program = em.build_program(lowered, mplan, target)
    try:   # upstream's per-operator dim-order and dtype rules, before any byte exists
        require_compatible(program)
    except UpstreamRuleError as e:
        raise CompileError(str(e)) from e
    log("upstream ExecuTorch needs: " + ", ".join(upstream_needs(program)))
    data = em.emit_pte(program)
    log(f"emitted {len(data)} bytes in {time.time() - t0:.1f} s")
    return CompileResult(program, data, lowered, mplan, qgraph, graph)


# _compile_model, one compile at a time in a process: the trace's patches of
# torch and builtins are process-wide (capture_trace_patches' COMPILE_LOCK);
# a second thread's compile waits for the first. Its parameters and doc.
@functools.wraps(_compile_model)
def compile_model(*args, **kwargs) -> CompileResult:
    from .capture_trace_patches import COMPILE_LOCK
    with COMPILE_LOCK:
        return _compile_model(*args, **kwargs)


compile_model.__name__ = compile_model.__qualname__ = "compile_model"
