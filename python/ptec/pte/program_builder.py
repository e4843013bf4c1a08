"""Build a .pte Program by hand: values, constants, kernel calls, delegate
calls, inputs and outputs. Used by the compiler's emit stage and by tests
that need small programs. Planned tensors get arena offsets from ptec.plan at build() unless
the caller fixed them.

    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [1, 4])
    y = b.tensor(ScalarType.FLOAT, [1, 4])
    b.call("aten::add.out", self=x, other=b.constant(np.ones(4, np.float32)),
           alpha=1, out=y)
    b.set_io([x], [y])
    program = b.build()
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..ops import outputs, signature
from ..plan import Buffer as PlanBuffer
from ..plan import MemoryPlan, plan_memory
from .in_place import alias_in_place
from .writer import layout_segments
from .schema import (AllocationDetails, BackendDelegate, BackendDelegateDataReference,
                     BackendDelegateInlineData, Bool, Chain, CompileSpec, DataLocation,
                     DelegateCall, Double, DoubleList, EValue, ExecutionPlan, Frame, FrameList, Instruction,
                     Int, IntList,
                     KernelCall, Null, Operator, OptionalTensorList, Program, ScalarType, String,
                     SubsegmentOffsets, Tensor, TensorList)

CONSTANT_ALIGNMENT = 16

_NP_TO_SCALAR = {
    np.dtype("int8"): ScalarType.CHAR, np.dtype("uint8"): ScalarType.BYTE,
    np.dtype("int16"): ScalarType.SHORT, np.dtype("int32"): ScalarType.INT,
    np.dtype("int64"): ScalarType.LONG, np.dtype("float32"): ScalarType.FLOAT,
    np.dtype("float64"): ScalarType.DOUBLE, np.dtype("bool"): ScalarType.BOOL,
    np.dtype("float16"): ScalarType.HALF,
}

CHANNELS_LAST = [0, 2, 3, 1]


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def contiguous(rank: int) -> List[int]:
    return list(range(rank))


class ProgramBuilder:
    def __init__(self, method: str = "forward", check_call: Optional[Callable[[str, dict, object], None]] = None):
        self.method = method
        # check_call(key, int and int[] arguments, source) before each call is appended: the compiler's
        # builders pass quant_math.check_requant_shifts (a degenerate requantization shift refused at
        # compile time); test generators build such calls on purpose, to check the runtime's own refusal
        self.check_call = check_call
        self.values: List[EValue] = []
        self.operators: List[Operator] = []
        self._op_index: Dict[str, int] = {}
        self.instructions: List[Instruction] = []
        # Where each instruction came from, for the chain's stacktrace (the
        # upstream schema's debug field, which runtimes ignore): the
        # PyTorch module path and class, and the backend that placed it.
        # Set by the lowering before each node; None for glue of no node.
        self.source: Optional[Tuple[str, str]] = None
        self._sources: List[Optional[Tuple[str, str]]] = []
        self.delegates: List[BackendDelegate] = []
        self._inline_blobs: List[bytes] = []           # Program.backend_delegate_data
        self._delegate_segments: List[bytes] = []      # segments after the constant one
        self._constants: List[bytes] = [b""]          # entry 0: placeholder
        self._constant_index: Dict[bytes, int] = {}
        self._planned: List[int] = []                  # value indices with storage
        self._states: Dict[int, bytes] = {}            # state value -> initial bytes
        self._alias_of: Dict[int, int] = {}            # view value -> base value
        self._fixed_offsets: Dict[int, int] = {}
        self.inputs: List[int] = []
        self.outputs: List[int] = []
        self.memory_plan: Optional[MemoryPlan] = None
        # Set by a lowering that plans for ptec's runtime only
        # (--ptec-runtime-only): operators called under another name, and
        # whether scratch() plans the bytes upstream's kernels would use.
        self.renamed: Dict[str, str] = {}
        self.plan_scratch = True
        # --ptec-runtime-only too: plan in-place layers (pte/in_place.py)
        # once, before the first plan; in_place_layers counts them.
        self.in_place = False
        self.in_place_layers: Optional[int] = None
        # --fuse-expansion: how many expansion + depthwise pairs became one
        # call (pte/fuse_expansion.py), set by the lowering.
        self.fused_expansions: Optional[int] = None

    # -- values ---------------------------------------------------------------
    def add(self, member) -> int:
        self.values.append(EValue(member))
        return len(self.values) - 1

    def int(self, v: int) -> int:
        return self.add(Int(int(v)))

    def double(self, v: float) -> int:
        return self.add(Double(float(v)))

    def bool(self, v: bool) -> int:
        return self.add(Bool(bool(v)))

    def null(self) -> int:
        return self.add(Null())

    def string(self, s: str) -> int:
        return self.add(String(s))

    def int_list(self, items: Sequence[int]) -> int:
        idx = [self.int(v) for v in items]
        return self.add(IntList(idx))

    def tensor_list(self, items: Sequence[int]) -> int:
        return self.add(TensorList(list(items)))

    def tensor(self, scalar_type: int, sizes: Sequence[int], dim_order=None,
               planned: bool = True, offset: Optional[int] = None) -> int:
        """An activation. Planned tensors live in arena 1."""
        sizes = [int(s) for s in sizes]
        dim_order = contiguous(len(sizes)) if dim_order is None else list(dim_order)
        t = Tensor(scalar_type=ScalarType(scalar_type), sizes=sizes, dim_order=bytes(dim_order))
        idx = self.add(t)
        if planned:
            self._planned.append(idx)
            if offset is not None:
                self._fixed_offsets[idx] = offset
        return idx

    def state(self, scalar_type: int, sizes: Sequence[int], initial: bytes) -> int:
        """A planned tensor with an initial value (upstream's mutable buffer):
        the runtime copies `initial` into its planned bytes at load (and again
        on ptec_method_reset_state); what a run leaves there the next run
        reads. Its lifetime is the whole run, so the plan never lends its bytes
        to another tensor."""
        idx = self.tensor(scalar_type, sizes)
        initial = bytes(initial)
        if len(initial) != self.values[idx].val.nbytes:
            raise ValueError(f"state {list(sizes)}: {len(initial)} initial bytes for "
                             f"{self.values[idx].val.nbytes}")
        self._states[idx] = initial
        return idx

    def holds_state(self, idx: int) -> bool:
        """Whether value idx's bytes are a state's (the state, or a view of it)."""
        while idx in self._alias_of:
            idx = self._alias_of[idx]
        return idx in self._states

    def scratch(self, nbytes: int, offset: Optional[int] = None) -> int:
        """A planned BYTE [n] buffer for a kernel's temporaries (BYTE [0]
        when plan_scratch is off: ptec's kernels never read this argument)."""
        return self.tensor(ScalarType.BYTE, [int(nbytes) if self.plan_scratch else 0], [0], offset=offset)

    def view(self, base: int, sizes: Sequence[int], dim_order=None) -> int:
        """A second tensor value over the same bytes (no instruction)."""
        b = self.values[base].val
        while base in self._alias_of:
            base = self._alias_of[base]
        sizes = [int(s) for s in sizes]
        dim_order = contiguous(len(sizes)) if dim_order is None else list(dim_order)
        # a view of a constant reads the constant's bytes: it names the same
        # constant-segment entry (else it would be a value with no memory,
        # neither constant nor planned, which the runtime rejects at load)
        t = Tensor(scalar_type=b.scalar_type, sizes=sizes, dim_order=bytes(dim_order),
                   data_buffer_idx=self.values[base].val.data_buffer_idx)
        if int(np.prod(sizes)) * 1 != b.numel:
            raise ValueError(f"view {sizes} does not match base numel {b.numel}")
        idx = self.add(t)
        self._alias_of[idx] = base
        return idx

    def constant(self, array, scalar_type: Optional[int] = None, sizes=None) -> int:
        """A constant tensor; identical bytes share one constant-segment entry."""
        shape = np.shape(array)          # (ascontiguousarray makes a 0-d array 1-d)
        arr = np.ascontiguousarray(array)
        st = ScalarType(scalar_type) if scalar_type is not None else _NP_TO_SCALAR[arr.dtype]
        data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        buf = self._constant_index.get(data)
        if buf is None:
            buf = len(self._constants)
            self._constants.append(data)
            self._constant_index[data] = buf
        sizes = list(shape) if sizes is None else [int(s) for s in sizes]
        t = Tensor(scalar_type=st, sizes=[int(s) for s in sizes],
                   dim_order=bytes(contiguous(len(sizes))), data_buffer_idx=buf)
        return self.add(t)

    # -- instructions ---------------------------------------------------------
    def operator(self, key: str) -> int:
        if key not in self._op_index:
            name, _, overload = key.rpartition(".")
            self._op_index[key] = len(self.operators)
            self.operators.append(Operator(name=name, overload=overload))
        return self._op_index[key]

    def box(self, kind: str, value) -> int:
        """Turn a Python argument into a value index according to its kind.
        Tensor kinds take value indices; other kinds take Python values."""
        if kind.endswith("?") and value is None:
            return self.null()
        base = kind.rstrip("?")
        if base == "Tensor":
            if not isinstance(value, (int, np.integer)) or not 0 <= value < len(self.values):
                raise ValueError(f"Tensor argument must be a value index, got {value!r}")
            return int(value)
        if base == "Tensor[]":
            return self.tensor_list(value)
        if base == "Tensor?[]":                     # None items are -1
            return self.add(OptionalTensorList([-1 if v is None else int(v) for v in value]))
        if base in ("int", "ScalarType"):
            return self.int(value)
        if base == "float":
            return self.double(value)
        if base == "bool":
            return self.bool(value)
        if base == "int[]":
            return self.int_list(value)
        if base == "float[]":
            return self.add(DoubleList([float(v) for v in value]))
        if base == "Scalar":
            return self.double(value) if isinstance(value, float) else self.int(value)
        raise ValueError(f"unknown argument kind {kind}")

    def call(self, key: str, /, **kwargs) -> int:
        """Append a KernelCall with the schema's arguments, out, and the return
        slot. Returns the `out` value index."""
        key = self.renamed.get(key, key)
        sig = signature(key)
        unknown = set(kwargs) - {n for n, _ in sig}
        if unknown:
            raise ValueError(f"{key}: unknown arguments {sorted(unknown)}")
        if self.check_call is not None:
            self.check_call(key, {n: kwargs[n] for n, kind in sig if kind in ("int", "int[]") and n in kwargs},
                            self.source)
        args = []
        for name, kind in sig:
            if name not in kwargs and not kind.endswith("?"):
                raise ValueError(f"{key}: missing argument {name}")
            args.append(self.box(kind, kwargs.get(name)))
        outs = outputs(key)
        if len(outs) == 1:
            args.append(args[-1])                   # the return slot repeats out
        else:                                       # several outputs: one TensorList of them
            names = [n for n, _ in sig]
            args.append(self.tensor_list([args[names.index(o)] for o in outs]))
        self._append(Instruction(KernelCall(self.operator(key), args)))
        return args[[n for n, _ in sig].index(outs[0])]

    def _append(self, instruction: Instruction) -> None:
        self.instructions.append(instruction)
        self._sources.append(self.source)

    def call_raw(self, key: str, args: Sequence[int]) -> None:
        self._append(Instruction(KernelCall(self.operator(key), list(args))))

    def delegate_call(self, backend_id: str, blob: bytes, args: Sequence[int],
                      compile_specs: Sequence = (),
                      location: int = DataLocation.SEGMENT) -> int:
        """Append a DelegateCall running `blob` on the backend named
        `backend_id` (the name the runtime's backend table looks up), with
        `args` = the delegate's input values then its output values
        (pte-format.md §4.7). The blob goes in a segment of its own after the
        constant segment (upstream's default) or, with DataLocation.INLINE,
        into Program.backend_delegate_data. compile_specs are (key, bytes)
        pairs. Returns the delegate's index."""
        blob = bytes(blob)
        if location == DataLocation.INLINE:
            self._inline_blobs.append(blob)
            index = len(self._inline_blobs) - 1
        elif location == DataLocation.SEGMENT:
            self._delegate_segments.append(blob)
            index = len(self._delegate_segments)       # segment 0 holds the constants
        else:
            raise ValueError(f"unknown delegate data location {location!r}")
        specs = [CompileSpec(key=str(k), value=bytes(v)) for k, v in compile_specs]
        self.delegates.append(BackendDelegate(
            id=backend_id, processed=BackendDelegateDataReference(location, index),
            compile_specs=specs))
        delegate_index = len(self.delegates) - 1
        self._append(Instruction(DelegateCall(delegate_index, [int(a) for a in args])))
        return delegate_index

    def set_io(self, inputs: Sequence[int], outputs: Sequence[int]) -> None:
        self.inputs, self.outputs = list(inputs), list(outputs)

    # -- build ----------------------------------------------------------------
    def lifetimes(self) -> List[PlanBuffer]:
        """One planning buffer per planned storage: [first, last] instruction
        indices (inputs from -1, outputs until after the last instruction);
        views count as uses of their base."""
        if self.in_place and self.in_place_layers is None:
            self.in_place_layers = alias_in_place(self)
        n = len(self.instructions)
        first: Dict[int, int] = {}
        last: Dict[int, int] = {}

        def touch(v: int, t: int) -> None:
            v = self._alias_of.get(v, v)
            first[v] = min(first.get(v, t), t)
            last[v] = max(last.get(v, t), t)

        for t, ins in enumerate(self.instructions):
            args = getattr(ins.instr_args, "args", None) or []
            for a in args:
                val = self.values[a].val
                if isinstance(val, (TensorList, OptionalTensorList)):
                    for item in val.items or []:
                        if item >= 0:                   # an optional list's None is -1
                            touch(item, t)
                else:
                    touch(a, t)
        for v in self.inputs:
            touch(v, -1)
        for v in self.outputs:
            touch(v, n)
        for v in self._states:   # read before the first instruction, kept after the last
            touch(v, -1)
            touch(v, n)
        out = []
        for v in self._planned:
            if v in first:
                out.append(PlanBuffer(v, self.values[v].val.nbytes, first[v], last[v]))
            else:   # never used: give it a slot of its own lifetime
                out.append(PlanBuffer(v, self.values[v].val.nbytes, n + 1, n + 1))
        return out

    def set_offsets(self, offsets: Dict[int, int]) -> None:
        """Fix arena offsets (value index -> byte offset) from an external plan."""
        self._fixed_offsets.update(offsets)

    def _stacktrace(self) -> Optional[List[FrameList]]:
        """One FrameList per instruction (one Frame: name = module path and
        class, context = backend), or None when no instruction has a source."""
        if not any(self._sources):
            return None
        return [FrameList([Frame(name=s[0], context=s[1])] if s else []) for s in self._sources]

    def build(self, arena_bytes: Optional[int] = None) -> Program:
        if self._planned and len(self._fixed_offsets) < len(self._planned):
            self.memory_plan = plan_memory(self.lifetimes())
            offsets = self.memory_plan.offsets
            arena = self.memory_plan.arena_bytes
        else:
            offsets = dict(self._fixed_offsets)
            arena = arena_bytes if arena_bytes is not None else max(
                [offsets[v] + self.values[v].val.nbytes for v in self._planned], default=0)
        for v in self._planned:
            self.values[v].val.allocation_info = AllocationDetails(1, offsets[v] & 0xFFFFFFFF,
                                                                   offsets[v] >> 32)
        for view, base in self._alias_of.items():
            if base in offsets:
                self.values[view].val.allocation_info = AllocationDetails(
                    1, offsets[base] & 0xFFFFFFFF, offsets[base] >> 32)
        sizes = [0, _align(arena, CONSTANT_ALIGNMENT)] if self._planned else [0]

        blob = bytearray()
        offsets_list = [0]
        for data in self._constants[1:]:
            offsets_list.append(len(blob))
            blob += data
            blob += bytes(_align(len(blob), CONSTANT_ALIGNMENT) - len(blob))

        plan = ExecutionPlan(
            name=self.method, values=self.values, inputs=self.inputs, outputs=self.outputs,
            chains=[Chain(inputs=[], outputs=[], instructions=self.instructions,
                          stacktrace=self._stacktrace())],
            operators=self.operators, delegates=self.delegates, non_const_buffer_sizes=sizes)
        segment_data = [bytes(blob)] + self._delegate_segments
        mutable = None
        if self._states:
            # After the delegate segments, so that their indices stay put.
            data = bytearray()
            mutable_offsets = [0]
            for k, (v, initial) in enumerate(sorted(self._states.items()), start=1):
                self.values[v].val.data_buffer_idx = k
                mutable_offsets.append(len(data))
                data += initial
                data += bytes(_align(len(data), CONSTANT_ALIGNMENT) - len(data))
            mutable = [SubsegmentOffsets(len(segment_data), mutable_offsets)]
            segment_data.append(bytes(data))
        return Program(
            execution_plan=[plan], constant_buffer=[],
            backend_delegate_data=[BackendDelegateInlineData(d) for d in self._inline_blobs],
            segments=layout_segments(segment_data), constant_segment=SubsegmentOffsets(0, offsets_list),
            mutable_data_segments=mutable, segment_data=segment_data)
