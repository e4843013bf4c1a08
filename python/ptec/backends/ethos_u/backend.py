"""The Ethos-U delegating backend: claims the nodes the NPU computes exactly
(npu_ops), turns each run of adjacent claimed nodes into one command stream
(codegen) and writes it as upstream's EthosUBackend blob (blob.py), so that
upstream ExecuTorch's runtime could run the program unchanged."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from .. import DelegateBackend, DelegateBlob
from ...pte.schema import DataLocation
from .blob import IoEntry, VelaBlob, shape6, write_blob
from .codegen import MIN_SLICE, fast_scratch_slice_bytes, generate
from .npu_config import DEFAULT_FAST_SCRATCH, MEMORY_MODES, npu_config

MIN_FAST_SCRATCH = 4096
FAST_SCRATCH_SPEC = "ptec_fast_scratch_bytes"  # ptec's own compile spec; upstream ignores specs
from .npu_ops import ALIAS_OPS, NotForNpu, NpuOp, flattened_map, keeps_bytes, npu_op, npu_ops
from .perf import estimate_cycles
from .stream_lint import lint_cop

BACKEND_ID = "EthosUBackend"
TOSA_SPEC = "TOSA-1.0+INT+int16+int4+u55"     # what upstream writes for U55 and U65 (delegate spec §1.1)
NO_WORK = ("a run of NPU operations without multiply-accumulate work: copying its "
           "tensors to and from the NPU costs more than running it on the CPU")


@dataclass
class NpuPlacement:
    """One NPU node for the placement report."""
    node: str
    kind: str
    macs: int
    weight_bytes: int
    cycles: int
    delegate: int


class EthosUConfigError(ValueError):
    """An NPU configuration ptec's compiler cannot write for; one line."""


class EthosUBackend(DelegateBackend):
    name = "ethos_u"
    delegate_id = BACKEND_ID

    def __init__(self, accelerator: str = "ethos-u55-128", memory_mode: str = "Shared_Sram",
                 fast_scratch: int = DEFAULT_FAST_SCRATCH):
        self.cfg = npu_config(accelerator)
        if self.cfg.cores > 1:
            raise EthosUConfigError(f"{accelerator}: its two cores need dual-core command streams, "
                             "which no oracle here pins (ethos-u-npu.md §8.4); compile for "
                             "ethos-u65-256 meanwhile")
        if memory_mode not in MEMORY_MODES:
            raise EthosUConfigError(f"memory mode {memory_mode!r}: one of {', '.join(MEMORY_MODES)}")
        if memory_mode == "Dedicated_Sram" and fast_scratch < MIN_FAST_SCRATCH:
            raise EthosUConfigError(f"fast scratch of {fast_scratch} bytes: Dedicated_Sram needs at least "
                             f"{MIN_FAST_SCRATCH} for one op's weights")
        self.memory_mode = memory_mode
        self.fast_scratch = fast_scratch
        self._ops: Dict[str, List[NpuOp]] = {}
        self.placements: List[NpuPlacement] = []
        self.delegates: List[Dict[str, int]] = []     # per blob: sizes

    # -- partitioner -----------------------------------------------------------
    def claim(self, n, ctx) -> Optional[str]:
        if n.op in ALIAS_OPS:
            if ctx.partition.backend_of(n.inputs[0]) is not self:
                return "a reshape is taken only after an NPU operation"
            if keeps_bytes(ctx.g, n):
                return None
            user = ctx.g.users(n.name)[0] if len(ctx.g.users(n.name)) == 1 else None
            if user is not None and user.op == "linear" and flattened_map(ctx.g, user) is not None:
                try:            # the linear reads the map itself: this flatten is never made
                    npu_op(ctx.g, user, self.cfg)
                    return None
                except (NotForNpu, ValueError):
                    pass
            return "this reshape reorders bytes (channels-last to contiguous)"
        try:
            ops = npu_ops(ctx.g, n, self.cfg)
        except NotForNpu as e:
            return str(e)
        except ValueError as e:      # parameters out of range (a shift CMSIS-NN cannot take)
            return str(e)
        for op in ops:
            if self.dedicated and op.weights is not None:
                worst = fast_scratch_slice_bytes(op, MIN_SLICE)
                if worst > self.fast_scratch:
                    return (f"even {MIN_SLICE} output channels of weights may need {worst} bytes, "
                            f"more than the fast scratch ({self.fast_scratch})")
        self._ops[n.name] = ops
        return None

    @property
    def dedicated(self) -> bool:
        return self.memory_mode == "Dedicated_Sram"

    def review(self, nodes, ctx) -> Optional[str]:
        """Why a whole run is better left on the CPU, or None to keep it."""
        if not any(op.macs for n in nodes for op in self._ops.get(n.name, [])):
            return NO_WORK
        return None

    # -- lowering --------------------------------------------------------------
    def write_blob(self, nodes, inputs, outputs, ctx) -> DelegateBlob:
        ops = [op for n in nodes for op in self._ops.get(n.name, [])]
        aliases = {n.name: n.inputs[0] for n in nodes
                   if n.op in ALIAS_OPS and keeps_bytes(ctx.g, n)}
        gen = generate(self.cfg, ops, aliases, [name for name, _ in inputs],
                       [name for name, _ in outputs],
                       self.fast_scratch if self.dedicated else 0)

        def entry(name, act):
            while name in aliases:
                name = aliases[name]
            sizes = act.sizes
            nhwc = [sizes[0], sizes[2], sizes[3], sizes[1]] if len(sizes) == 4 else sizes
            return IoEntry(shape6(nhwc), 1, gen.places[name].offset)
        # every stream ptec writes goes through the linter (stream_lint: the
        # hardware rules, written apart from this generator); a finding is a bug here
        regions = {0: len(gen.weight_data), 1: gen.scratch_size,
                   **({2: gen.fast_scratch_size} if gen.fast_scratch_size else {})}
        issues = lint_cop(gen.cop, self.cfg.name, regions)
        if issues:
            first = issues[0]
            raise ValueError(f"the generated {self.cfg.name} stream breaks rule {first.rule} at command "
                             f"{first.command_index}: {first.message} ({len(issues)} finding(s); "
                             "a ptec bug, please report it)")
        blob = VelaBlob(gen.cop, gen.weight_data, gen.scratch_size,
                        [entry(n, a) for n, a in inputs], [entry(n, a) for n, a in outputs])
        index = len(self.delegates)
        for n in nodes:             # one line per node, its operations summed (a cat has several)
            mine = self._ops.get(n.name, [])
            if mine:
                self.placements.append(NpuPlacement(
                    n.name, mine[0].kind, sum(op.macs for op in mine), gen.weight_bytes.get(n.name, 0),
                    sum(estimate_cycles(self.cfg, op) for op in mine), index))
        self.delegates.append({"commands": gen.commands, "flash": len(gen.weight_data),
                               "cop": len(gen.cop), "sram": gen.scratch_size,
                               "fast": gen.fast_scratch_size})
        flags = (f"--accelerator-config={self.cfg.name} --memory-mode={self.memory_mode}"
                 + (f" --arena-cache-size={self.fast_scratch}" if self.dedicated else "")
                 + " --output-format=raw")
        specs = [("tosa_spec", TOSA_SPEC.encode()), ("compile_flags", flags.encode()),
                 ("output_format", b"vela"), ("target", self.cfg.name.encode())]
        if gen.fast_scratch_size:
            specs.append((FAST_SCRATCH_SPEC, str(gen.fast_scratch_size).encode()))
        return DelegateBlob(write_blob(blob), specs, DataLocation.SEGMENT)
