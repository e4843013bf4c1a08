"""Human-readable dump of a .pte program (`python3 -m ptec inspect`)."""
from __future__ import annotations

from typing import List, Optional

from ..ops import SIGNATURES
from .reader import FileHeader
from .schema import (Bool, BoolList, DataLocation, DelegateCall, Double, DoubleList,
                     FreeCall, Int, IntList, JumpFalseCall, KernelCall, MoveCall, Null,
                     OptionalTensorList, Program, ScalarType, String, Tensor, TensorList,
                     TensorShapeDynamism)


def _dtype(t: Tensor) -> str:
    try:
        return ScalarType(t.scalar_type).name
    except ValueError:
        return f"type{int(t.scalar_type)}"


def _dim_order(t: Tensor) -> str:
    do = list(t.dim_order or b"")
    if do == list(range(len(do))):
        return ""
    if do == [0, 2, 3, 1]:
        return " channels-last"
    return f" dim_order={do}"


def tensor_desc(t: Tensor) -> str:
    sizes = ",".join(str(s) for s in (t.sizes or []))
    s = f"{_dtype(t)}[{sizes}]{_dim_order(t)}"
    if t.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND:   # the sizes a bound, the run sets the real ones
        s += " dynamic-bound"
    elif t.shape_dynamism == TensorShapeDynamism.DYNAMIC_UNBOUND:
        s += " dynamic-unbound"
    if t.allocation_info is not None:
        a = t.allocation_info
        s += f" arena{a.memory_id}@{a.offset} ({t.nbytes} B)"
        if t.data_buffer_idx:
            s += f" init#{t.data_buffer_idx}"
    elif t.data_buffer_idx:
        s += f" const#{t.data_buffer_idx} ({t.nbytes} B)"
    else:
        s += " (unplanned)"
    if t.extra_tensor_info is not None and t.extra_tensor_info.fully_qualified_name:
        s += f" fqn={t.extra_tensor_info.fully_qualified_name}"
    return s


def value_desc(values, i: int) -> str:
    if not 0 <= i < len(values):
        return f"<bad value index {i}>"
    v = values[i].val
    if v is None:
        return "<none>"
    if isinstance(v, Tensor):
        return "Tensor " + tensor_desc(v)
    if isinstance(v, Int):
        return f"Int {v.int_val}"
    if isinstance(v, Double):
        return f"Double {v.double_val:.9g}"
    if isinstance(v, Bool):
        return f"Bool {v.bool_val}"
    if isinstance(v, Null):
        return "Null"
    if isinstance(v, String):
        return f"String {v.string_val!r}"
    if isinstance(v, IntList):
        items = []
        for j in v.items or []:
            iv = values[j].val if 0 <= j < len(values) else None
            items.append(str(iv.int_val) if isinstance(iv, Int) else f"?v{j}")
        return f"IntList [{', '.join(items)}]"
    if isinstance(v, (DoubleList, BoolList)):
        return f"{type(v).__name__} {list(v.items or [])}"
    if isinstance(v, (TensorList, OptionalTensorList)):
        return f"{type(v).__name__} [{', '.join('v%d' % j for j in v.items or [])}]"
    return repr(v)


def delegate_data(program: Program, delegate) -> Optional[bytes]:
    """A delegate's processed bytes (inline or in a segment), None if the reference
    points at nothing."""
    ref = delegate.processed
    if ref is None:
        return None
    if ref.location == DataLocation.INLINE:
        blobs = program.backend_delegate_data or []
        return bytes(blobs[ref.index].data or b"") if 0 <= ref.index < len(blobs) else None
    segs = program.segment_data or []
    return segs[ref.index] if 0 <= ref.index < len(segs) else None


def delegate_blob_size(program: Program, delegate) -> Optional[int]:
    data = delegate_data(program, delegate)
    return None if data is None else len(data)


def describe(program: Program, header: Optional[FileHeader] = None, name: str = "") -> str:
    out: List[str] = []
    w = out.append
    if header is not None:
        w(f"file {name} ({header.file_size} bytes)")
        if header.has_extended_header:
            w(f"  extended header eh00: length {header.header_length}, program_size "
              f"{header.program_size}, segment_base_offset {header.segment_base_offset}, "
              f"segment_data_size {header.segment_data_size}")
        else:
            w("  no extended header (the flatbuffer is the whole file)")
    segs = program.segments or []
    w(f"segments: {len(segs)}")
    for i, s in enumerate(segs):
        w(f"  [{i}] offset {s.offset} size {s.size}")
    cs = program.constant_segment
    if cs is not None and cs.offsets is not None and len(cs.offsets) > 1:
        size = segs[cs.segment_index].size if cs.segment_index < len(segs) else 0
        w(f"constants: constant segment {cs.segment_index}, {len(cs.offsets) - 1} entries, "
          f"{size} bytes")
    elif program.constant_buffer and len(program.constant_buffer) > 1:
        total = sum(len(b.storage or b"") for b in program.constant_buffer)
        w(f"constants: legacy constant_buffer, {len(program.constant_buffer) - 1} entries, "
          f"{total} bytes")
    else:
        w("constants: none")
    for i, nd in enumerate(program.named_data or []):
        w(f"named data [{i}] {nd.key!r} -> segment {nd.segment_index}")
    from ..requirements_record import describe_record
    out += describe_record(program)
    if program.mutable_data_segments:
        w(f"mutable data segments: {len(program.mutable_data_segments)}")

    for plan in program.execution_plan or []:
        values = plan.values or []
        w("")
        w(f"method {plan.name!r}: {len(values)} values, inputs {plan.inputs}, "
          f"outputs {plan.outputs}")
        for i in plan.inputs or []:
            w(f"  input  v{i}: {value_desc(values, i)}")
        for i in plan.outputs or []:
            w(f"  output v{i}: {value_desc(values, i)}")
        sizes = plan.non_const_buffer_sizes or []
        w(f"memory plan: {len(sizes) - 1 if sizes else 0} arena(s)"
          + "".join(f", arena {k}: {n} bytes" for k, n in enumerate(sizes) if k > 0))
        ops = plan.operators or []
        w(f"operators: {len(ops)}")
        for i, op in enumerate(ops):
            w(f"  [{i}] {op.key}")
        for d_i, d in enumerate(plan.delegates or []):
            ref = d.processed
            loc = DataLocation(ref.location).name if ref is not None else "?"
            idx = ref.index if ref is not None else "?"
            w(f"delegate [{d_i}] id={d.id!r} location={loc} index={idx} "
              f"size={delegate_blob_size(program, d)} bytes")
            for cs_ in d.compile_specs or []:
                w(f"    {cs_.key} = {(cs_.value or b'').decode('ascii', 'replace')!r}")
        for c_i, chain in enumerate(plan.chains or []):
            instrs = chain.instructions or []
            w(f"chain {c_i}: {len(instrs)} instructions")
            for n, ins in enumerate(instrs):
                a = ins.instr_args
                if isinstance(a, KernelCall):
                    key = ops[a.op_index].key if 0 <= a.op_index < len(ops) else f"op{a.op_index}"
                    w(f"  {n:3d}: {key}  args={a.args}")
                    names = [p for p, _ in SIGNATURES.get(key, [])]
                    for j, arg in enumerate(a.args or []):
                        label = names[j] if j < len(names) else (
                            "(return)" if j == len(names) else f"arg{j}")
                        w(f"         {label:>24} v{arg}: {value_desc(values, arg)}")
                elif isinstance(a, DelegateCall):
                    w(f"  {n:3d}: delegate {a.delegate_index} args={a.args}")
                    for arg in a.args or []:
                        w(f"         {'':>24} v{arg}: {value_desc(values, arg)}")
                elif isinstance(a, MoveCall):
                    w(f"  {n:3d}: move v{a.move_from} -> v{a.move_to}")
                elif isinstance(a, JumpFalseCall):
                    w(f"  {n:3d}: jump_false v{a.cond_value_index} -> "
                      f"{a.destination_instruction}")
                elif isinstance(a, FreeCall):
                    w(f"  {n:3d}: free v{a.value_index}")
                else:
                    w(f"  {n:3d}: <empty instruction>")
        tensors = [(i, v.val) for i, v in enumerate(values) if isinstance(v.val, Tensor)]
        w(f"tensors: {len(tensors)}")
        for i, t in tensors:
            w(f"  v{i}: {tensor_desc(t)}")
    return "\n".join(out)
