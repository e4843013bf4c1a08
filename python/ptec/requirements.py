"""The exact memory the runtime asks for a method, computed from the .pte
alone: what ptec_method_requirements() reports on a given build, region by
region (metadata, each planned buffer, scratch, fast scratch, and the total
ptec_method_load_single() carves), so that static arrays sized from these
numbers load, and one byte less does not.

The metadata region is the runtime's walk over the plan (method_load.c):
one execution context (a head and a region per planned buffer), a bit
per EValue and a value header per EValue the load keeps (tensors, tensor lists, Bools; not
those named only as arguments a kernel's run never reads: kept_flags), a tensor per kept Tensor, the
input flags and I/O pointers, a context per delegate plus its backend's
persistent bytes, an instruction record per instruction, and per kernel
call its argument pointers and its kernel's prepared state. Their sizes
depend on the pointer width, and the scratch of some kernels on the
kernel ISA the build compiles (src/kernels/cortex_m/nn/ptec_nn_isa.h), so
both are looked up per build kind in runtime_layout.json, a copy of what
tools/ptec-layout prints on each build (scripts/runtime_layout.py checks
it). The sizes assume the default limits of include/ptec/config.h, which
the layout records.

Standard library only."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .backends.cortex_m.runtime_scratch import kernel_scratch
from .pte.schema import (Bool, DelegateCall, EValue, JumpFalseCall, KernelCall, MoveCall, OptionalTensorList,
                         Program, Tensor, TensorList, TensorShapeDynamism)
from .targets import ISA

LAYOUT_FILE = os.path.join(os.path.dirname(__file__), "runtime_layout.json")
ETHOS_U_ID = "EthosUBackend"
NPU_REGION_ALIGN = 16       # the Ethos-U delegate rounds its work area and fast scratch to this


class RequirementsError(ValueError):
    """The program cannot be sized for this build; the message is one line."""


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def build_kind(target: str) -> str:
    """'host' (64-bit, reference kernels) or a core of ptec.targets -> the
    runtime_layout.json key: pointer model and kernel ISA."""
    if target == "host":
        return "lp64-SCALAR"
    if target not in ISA:
        raise RequirementsError(f"unknown target {target!r}; expected host or one of {', '.join(ISA)}")
    return f"ilp32-{ISA[target]}"


def load_layouts() -> Dict[str, dict]:
    with open(LAYOUT_FILE) as f:
        return json.load(f)["layouts"]


@dataclass
class Requirements:
    metadata_bytes: int
    planned_bytes: List[int]
    scratch_bytes: int
    fast_scratch_bytes: int
    total_bytes: int
    build: str = ""
    notes: List[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"build": self.build, "metadata_bytes": self.metadata_bytes,
                "planned_bytes": list(self.planned_bytes), "scratch_bytes": self.scratch_bytes,
                "fast_scratch_bytes": self.fast_scratch_bytes, "total_bytes": self.total_bytes}


class _Metadata:
    """method_load.c's meta_arena: every take aligns the running total first."""

    def __init__(self, align: int):
        self.used = 0
        self.align = align

    def take(self, count: int, size: int, align: Optional[int] = None) -> None:
        self.used = _align(self.used, align or self.align) + count * size


# The values a loaded method keeps a header for: what a run reads (tensors
# and tensor lists for kernels, Bools for jump conditions). Every other value
# is read by kernels' prepare alone, decoded for its call and not kept.
KEPT_VALUE_TYPES = (Tensor, TensorList, OptionalTensorList, Bool)


def _kept(v: EValue) -> bool:
    return isinstance(v.val, KEPT_VALUE_TYPES)


# method_load.c's LATER_VALUES: values past it are always kept.
LATER_VALUES = 2048


def kept_flags(plan, lay: dict) -> List[bool]:
    """Which of the plan's values the load keeps a header for
    (method_load.c's mark_call_args): a kept kind, unless every reference to
    it is an argument its kernel's run never reads (the layout's
    prepared_args, PTEC_PREPARED_ARGS) and nothing else (an input or output,
    a move, a jump, a delegate call, another argument) names it."""
    values = plan.values or []
    n = len(values)
    masks = lay.get("prepared_args", {})
    operators = plan.operators or []
    pinned, prepared = set(), set()

    def mark(s, i):
        if 0 <= i < n and i < LATER_VALUES:
            s.add(i)

    def pin_items(i):
        # a kernel finds a tensor list's items among the kept values
        if 0 <= i < n and isinstance(values[i].val, (TensorList, OptionalTensorList)):
            for j in values[i].val.items or []:
                mark(pinned, j)

    chains = plan.chains or []
    for ins in (chains[0].instructions or []) if chains else []:
        call = ins.instr_args
        if isinstance(call, MoveCall):
            mark(pinned, call.move_from)
            mark(pinned, call.move_to)
            pin_items(call.move_from)
            pin_items(call.move_to)
        elif isinstance(call, JumpFalseCall):
            mark(pinned, call.cond_value_index)
        elif isinstance(call, (KernelCall, DelegateCall)):
            mask = 0
            if isinstance(call, KernelCall) and 0 <= call.op_index < len(operators):
                op = operators[call.op_index]
                mask = masks.get(op.name + (f".{op.overload}" if op.overload else ""), 0)
            for j, a in enumerate(call.args or []):
                mark(prepared if j < 16 and (mask >> j) & 1 else pinned, a)
                pin_items(a)
    for a in list(plan.inputs or []) + list(plan.outputs or []):
        mark(pinned, a)
        pin_items(a)
    return [_kept(v) and not (i in prepared and i not in pinned) for i, v in enumerate(values)]


def _delegate_blob(program: Program, delegate) -> bytes:
    from .pte.inspect import delegate_data
    data = delegate_data(program, delegate)
    if data is None:
        raise RequirementsError(f"delegate {delegate.id!r} names no data")
    return data


def _ethos_u_fast_scratch(d) -> int:
    """The fast scratch a blob of ptec's compiler says its stream uses (the
    compile spec ptec_fast_scratch_bytes; 0 without one), as the delegate
    reads it (src/backends/ethos_u/ethos_u_fast_scratch.c)."""
    for spec in d.compile_specs or []:
        if spec.key == "ptec_fast_scratch_bytes":
            text = bytes(spec.value or b"")
            if not (1 <= len(text) <= 10 and text.isdigit() and int(text) < 1 << 32):
                raise RequirementsError("EthosUBackend compile spec ptec_fast_scratch_bytes is not "
                                        "a decimal byte count below 2^32")
            return int(text)
    return 0


def _ethos_u_scratch(blob: bytes) -> int:
    from .backends.ethos_u.blob import VelaBlobError, read_blob
    try:
        return _align(read_blob(blob).scratch_size, NPU_REGION_ALIGN)
    except VelaBlobError as e:
        raise RequirementsError(f"EthosUBackend blob: {e}") from e


def requirements(program: Program, method: str = "forward", target: str = "host",
                 fast_scratch: int = 0, layout: Optional[dict] = None) -> Requirements:
    """What ptec_method_requirements() reports for `method` on a build for
    `target` ('host' or a Cortex-M core). fast_scratch: the build's
    PTEC_ETHOSU_FAST_SCRATCH_BYTES (0 by default)."""
    kind = build_kind(target)
    lay = layout if layout is not None else load_layouts()[kind]
    names = [p.name for p in program.execution_plan or []]
    if method not in names:
        raise RequirementsError(f"no method {method!r} (the program has {', '.join(names) or 'none'})")
    plan = program.plan(method)
    sizes, ptr = lay["sizes"], lay["pointer"]
    meta = _Metadata(lay["meta_align"])
    values = plan.values or []
    chains = plan.chains or []
    if len(chains) != 1:
        raise RequirementsError("methods must have exactly one chain")
    planned = [int(n) for n in (plan.non_const_buffer_sizes or [])[1:]]
    if len(planned) > lay["config"]["PTEC_MAX_PLANNED_BUFFERS"]:
        raise RequirementsError(f"{len(planned)} planned buffers; this build takes at most "
                                f"{lay['config']['PTEC_MAX_PLANNED_BUFFERS']}")

    # The execution context: its head, then one region (base, size) per planned buffer.
    meta.take(1, sizes["exec_ctx"] + len(planned) * 2 * ptr)
    meta.take((len(values) + 31) // 32, sizes["kept_word"])   # which values are kept, 32 to a word
    kept = kept_flags(plan, lay)
    meta.take(sum(kept), sizes["value"])
    for v, k in zip(values, kept):
        if isinstance(v.val, Tensor):
            if k:   # a tensor the load keeps no header for has no tensor either
                meta.take(1, sizes["tensor"])
            # A bound-dynamic tensor's writable sizes: current, then bound.
            rank = len(v.val.sizes or [])
            if v.val.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND and rank <= lay["config"]["PTEC_MAX_RANK"]:
                meta.take(2 * rank, 4)
    n_in, n_out = len(plan.inputs or []), len(plan.outputs or [])
    meta.take(n_in, 1)
    meta.take(n_in + n_out, ptr)

    scratch = 0
    fast = 0
    delegates = plan.delegates or []
    meta.take(len(delegates), sizes["delegate_ctx"])
    for d in delegates:
        persistent = lay["backends"].get(d.id)
        if persistent is None:
            raise RequirementsError(f"delegate backend {d.id!r} is not one ptec's runtime has")
        if persistent:
            meta.take(1, persistent, lay["buffer_align"])
        if d.id == ETHOS_U_ID:
            scratch = max(scratch, _ethos_u_scratch(_delegate_blob(program, d)))
            fast = max(fast, _align(max(fast_scratch, _ethos_u_fast_scratch(d)), NPU_REGION_ALIGN))

    instructions = chains[0].instructions or []
    meta.take(len(instructions), sizes["instr"])
    operators = plan.operators or []
    kernels = lay["kernels"]

    def tensor_sizes(args, i):
        v = values[args[i]].val if 0 <= i < len(args) and 0 <= args[i] < len(values) else None
        if not isinstance(v, Tensor):
            raise RequirementsError(f"argument {i} is not a tensor")
        return list(v.sizes or [])

    def int_list(args, i):
        v = values[args[i]].val if 0 <= i < len(args) and 0 <= args[i] < len(values) else None
        items = getattr(v, "items", None)
        if items is None or not items or not all(0 <= j < len(values) and hasattr(values[j].val, "int_val")
                                                 for j in items):
            raise RequirementsError(f"argument {i} is not an int list")
        return [int(values[j].val.int_val) for j in items]

    def int_value(args, i):
        v = values[args[i]].val if 0 <= i < len(args) and 0 <= args[i] < len(values) else None
        if not hasattr(v, "int_val"):
            raise RequirementsError(f"argument {i} is not an int")
        return int(v.int_val)

    def planned_tensor(args, i):
        v = values[args[i]].val if 0 <= i < len(args) and 0 <= args[i] < len(values) else None
        return isinstance(v, Tensor) and v.allocation_info is not None

    move_to = {ins.instr_args.move_to for ins in instructions if isinstance(ins.instr_args, MoveCall)}
    for k, ins in enumerate(instructions):
        call = ins.instr_args
        if isinstance(call, KernelCall):
            if not 0 <= call.op_index < len(operators):
                raise RequirementsError(f"instruction {k} names no operator")
            op = operators[call.op_index]
            name = op.name + (f".{op.overload}" if op.overload else "")
            if name not in kernels:
                raise RequirementsError(f"instruction {k}: operator {name} is not in ptec's runtime")
            args = list(call.args or [])
            # method_load.c bind_args: a kernel's run does not read its
            # prepare-only arguments, so it would not see a move into one.
            mask = lay.get("prepared_args", {}).get(name, 0)
            if len(args) < 16 and mask >> len(args):
                raise RequirementsError(f"instruction {k}: {name} declares a prepare-only argument past the call's")
            if any(j < 16 and (mask >> j) & 1 and a in move_to for j, a in enumerate(args)):
                raise RequirementsError(f"instruction {k}: prepare-only argument is a move destination")
            meta.take(len(args), ptr)
            meta.take(1, kernels[name])
            scratch = max(scratch, kernel_scratch(lay["isa"], name, lambda i: tensor_sizes(args, i),
                                                  lambda i: int_list(args, i), lambda i: planned_tensor(args, i),
                                                  lambda i: int_value(args, i)))
        elif isinstance(call, DelegateCall):
            args = list(call.args or [])
            meta.take(len(args), ptr)
            for a in args:   # a backend may read any kind: one not kept gets a header of its own
                if 0 <= a < len(values) and not _kept(values[a]):
                    meta.take(1, sizes["value"])

    align = lay["buffer_align"]
    total = _align(meta.used, align) + _align(fast, align) + scratch + sum(_align(p, align) for p in planned)
    return Requirements(meta.used, planned, scratch, fast, total, build=kind)


# The header's #if chain: how a C compiler tells the build kinds apart, the
# way src/kernels/cortex_m/nn/ptec_nn_isa.h picks the kernel variant.
_KIND_CONDITIONS = (
    ("lp64-SCALAR", "UINTPTR_MAX > 0xFFFFFFFFu"),
    ("ilp32-MVE", "!defined(PTEC_NN_PORTABLE) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)"),
    ("ilp32-DSP", "!defined(PTEC_NN_PORTABLE) && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP"),
    ("ilp32-SCALAR", None),
)


def header_macros(program: Program, prefix: str, method: str = "forward") -> List[str]:
    """C lines defining PREFIX_METADATA_BYTES, PREFIX_PLANNED_COUNT,
    PREFIX_PLANNED<i>_BYTES, PREFIX_SCRATCH_BYTES, PREFIX_FAST_SCRATCH_BYTES
    and PREFIX_TOTAL_BYTES: exactly what ptec_method_requirements() reports
    on the build the header is compiled into (host or a Cortex-M core).
    The header must be compiled with ptec's include path (ptec/config.h)."""
    layouts = load_layouts()
    by_kind = {}
    for kind, _ in _KIND_CONDITIONS:
        target = "host" if kind.startswith("lp64") else next(c for c, i in ISA.items() if kind == f"ilp32-{i}")
        by_kind[kind] = requirements(program, method, target, layout=layouts[kind])
    first = by_kind["lp64-SCALAR"]
    config = layouts["lp64-SCALAR"]["config"]
    has_npu = any(d.id == ETHOS_U_ID for d in program.plan(method).delegates or [])
    p = prefix
    lines = [f"/* Exact bytes ptec_method_requirements() reports for method \"{method}\" on the",
             " * build this header is compiled into (by pointer width and kernel ISA): size",
             " * static arrays with them, one per region, or one of TOTAL_BYTES for",
             " * ptec_method_load_single(). From `ptec inspect --requirements`. */",
             "#include \"ptec/config.h\"",
             "#if " + " || ".join(f"{k} != {v}u" for k, v in sorted(config.items())),
             f"#error \"{p}_*_BYTES assume ptec/config.h's default limits\"",
             "#endif"]
    for i, (kind, cond) in enumerate(_KIND_CONDITIONS):
        lines.append(("#if " if i == 0 else "#elif ") + cond if cond else "#else")
        r = by_kind[kind]
        lines += [f"#define {p}_METADATA_BYTES {r.metadata_bytes}u   /* {kind} */",
                  f"#define {p}_SCRATCH_BYTES {r.scratch_bytes}u"]
    lines.append("#endif")
    lines.append(f"#define {p}_PLANNED_COUNT {len(first.planned_bytes)}u")
    lines += [f"#define {p}_PLANNED{i + 1}_BYTES {n}u" for i, n in enumerate(first.planned_bytes)]
    lines.append(f"#define {p}_FAST_SCRATCH_BYTES "
                 + ("((PTEC_ETHOSU_FAST_SCRATCH_BYTES + 15u) & ~15u)" if has_npu else "0u"))
    a16 = lambda m: f"((({m}) + 15u) & ~15u)"   # noqa: E731
    parts = [a16(f"{p}_METADATA_BYTES"), a16(f"{p}_FAST_SCRATCH_BYTES"), f"{p}_SCRATCH_BYTES"] + \
        [a16(f"{p}_PLANNED{i + 1}_BYTES") for i in range(len(first.planned_bytes))]
    lines.append(f"#define {p}_TOTAL_BYTES ({' + '.join(parts)})")
    return lines


def describe(r: Requirements, method: str = "forward") -> str:
    """Human-readable lines for `ptec inspect --requirements`."""
    out = [f"requirements of \"{method}\" on an {r.build} build (ptec_method_requirements):",
           f"  metadata      {r.metadata_bytes:>10} B"]
    out += [f"  planned[{i + 1}]    {n:>10} B" for i, n in enumerate(r.planned_bytes)]
    out += [f"  scratch       {r.scratch_bytes:>10} B",
            f"  fast scratch  {r.fast_scratch_bytes:>10} B",
            f"  total         {r.total_bytes:>10} B  (one buffer for ptec_method_load_single, 16-byte aligned regions)"]
    return "\n".join(out)
