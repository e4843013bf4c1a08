"""The .pte program as plain Python dataclasses, which are also the table
layout that the flatbuffer reader and writer share.

Every table of the upstream schema (pte-format.md §3) is one dataclass whose
fields follow the schema's declaration order, each carrying its wire kind. A union field is one Python
attribute holding the member object (or None); on the wire it takes two field
ids (type tag, then value). Vectors are Python lists, `[ubyte]` is `bytes`,
and a missing offset field is `None` (distinct from an empty list).
"""
from __future__ import annotations

import enum
import dataclasses
from dataclasses import dataclass, field
from typing import List, Optional, Union, get_args

# Wire kinds of a field (`_fb(kind, default, **options)`):
#   scalar: 'bool','byte','ubyte','short','ushort','int','uint','long','ulong','double'
#   'string' | ('table', Cls) | ('vector', elem) with elem a scalar name,
#   'string' or ('table', Cls) | ('union', name) | 'bytes' (= [ubyte])
# Options: force_align (a [ubyte] vector's alignment), enum (the Python
# enum of a scalar). The dataclass fields, in schema order, are the layout.


def _fb(kind, default=None, **options):
    return field(default=default, metadata={"fb": (kind, options)})


class ScalarType(enum.IntEnum):
    BYTE = 0
    CHAR = 1
    SHORT = 2
    INT = 3
    LONG = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15
    QUINT4X2 = 16
    QUINT2X4 = 17
    BITS16 = 22
    FLOAT8E5M2 = 23
    FLOAT8E4M3FN = 24
    FLOAT8E5M2FNUZ = 25
    FLOAT8E4M3FNUZ = 26
    UINT16 = 27
    UINT32 = 28
    UINT64 = 29


ELEMENT_SIZE = {
    ScalarType.BYTE: 1, ScalarType.CHAR: 1, ScalarType.SHORT: 2, ScalarType.INT: 4,
    ScalarType.LONG: 8, ScalarType.HALF: 2, ScalarType.FLOAT: 4, ScalarType.DOUBLE: 8,
    ScalarType.BOOL: 1, ScalarType.QINT8: 1, ScalarType.QUINT8: 1, ScalarType.QINT32: 4,
    ScalarType.BFLOAT16: 2, ScalarType.QUINT4X2: 1, ScalarType.QUINT2X4: 1,
    ScalarType.BITS16: 2, ScalarType.FLOAT8E5M2: 1, ScalarType.FLOAT8E4M3FN: 1,
    ScalarType.FLOAT8E5M2FNUZ: 1, ScalarType.FLOAT8E4M3FNUZ: 1, ScalarType.UINT16: 2,
    ScalarType.UINT32: 4, ScalarType.UINT64: 8,
}

NUMPY_DTYPE = {
    ScalarType.BYTE: "u1", ScalarType.CHAR: "i1", ScalarType.SHORT: "<i2",
    ScalarType.INT: "<i4", ScalarType.LONG: "<i8", ScalarType.HALF: "<f2",
    ScalarType.FLOAT: "<f4", ScalarType.DOUBLE: "<f8", ScalarType.BOOL: "?",
    ScalarType.UINT16: "<u2", ScalarType.UINT32: "<u4", ScalarType.UINT64: "<u8",
    # numpy has no bfloat16: its bit patterns (the top half of a float32's;
    # torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) reads them)
    ScalarType.BFLOAT16: "<u2",
}


class TensorShapeDynamism(enum.IntEnum):
    STATIC = 0
    DYNAMIC_BOUND = 1
    DYNAMIC_UNBOUND = 2


class TensorDataLocation(enum.IntEnum):
    SEGMENT = 0
    EXTERNAL = 1


class DeviceType(enum.IntEnum):
    CPU = 0
    CUDA = 1


class DataLocation(enum.IntEnum):
    INLINE = 0
    SEGMENT = 1


# --------------------------------------------------------------------------
# EValue members (union KernelTypes)

@dataclass
class Null:
    pass


@dataclass
class Int:
    int_val: int = _fb("long", 0)


@dataclass
class Bool:
    bool_val: bool = _fb("bool", False)


@dataclass
class Double:
    double_val: float = _fb("double", 0.0)


@dataclass
class String:
    string_val: Optional[str] = _fb("string")


@dataclass
class IntList:
    items: Optional[List[int]] = _fb(("vector", "long"))      # value indices of Int EValues


@dataclass
class DoubleList:
    items: Optional[List[float]] = _fb(("vector", "double"))


@dataclass
class BoolList:
    items: Optional[List[bool]] = _fb(("vector", "bool"))


@dataclass
class TensorList:
    items: Optional[List[int]] = _fb(("vector", "int"))


@dataclass
class OptionalTensorList:
    items: Optional[List[int]] = _fb(("vector", "int"))      # -1 means None


@dataclass
class AllocationDetails:
    memory_id: int = _fb("uint", 0)
    memory_offset_low: int = _fb("uint", 0)
    memory_offset_high: int = _fb("uint", 0)

    @property
    def offset(self) -> int:
        return (self.memory_offset_high << 32) | self.memory_offset_low


@dataclass
class ExtraTensorInfo:
    mutable_data_segments_idx: int = _fb("ulong", 0)
    fully_qualified_name: Optional[str] = _fb("string")
    location: int = _fb("byte", TensorDataLocation.SEGMENT, enum="TensorDataLocation")
    device_type: int = _fb("byte", DeviceType.CPU, enum="DeviceType")
    device_index: int = _fb("byte", 0)


@dataclass
class Tensor:
    scalar_type: int = _fb("byte", ScalarType.BYTE, enum="ScalarType")
    storage_offset: int = _fb("int", 0)
    sizes: Optional[List[int]] = _fb(("vector", "int"))
    dim_order: Optional[bytes] = _fb("bytes")
    requires_grad: bool = _fb("bool", False)
    data_buffer_idx: int = _fb("uint", 0)
    allocation_info: Optional[AllocationDetails] = _fb(("table", AllocationDetails))
    layout: int = _fb("byte", 0)
    shape_dynamism: int = _fb("byte", TensorShapeDynamism.STATIC, enum="TensorShapeDynamism")
    extra_tensor_info: Optional[ExtraTensorInfo] = _fb(("table", ExtraTensorInfo))

    @property
    def numel(self) -> int:
        n = 1
        for s in self.sizes or []:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.numel * ELEMENT_SIZE.get(ScalarType(self.scalar_type), 1)

    @property
    def is_constant(self) -> bool:
        return self.data_buffer_idx > 0 and self.allocation_info is None

    @property
    def has_initial_value(self) -> bool:
        """Planned, with an initial value in mutable_data_segments[0] (state)."""
        return self.data_buffer_idx > 0 and self.allocation_info is not None


EValueMember = Union[Null, Int, Bool, Double, Tensor, String, IntList, DoubleList,
                     BoolList, TensorList, OptionalTensorList]


@dataclass
class EValue:
    val: Optional[EValueMember] = _fb(("union", "KernelTypes"))


# --------------------------------------------------------------------------
# Instructions (union InstructionArguments)

@dataclass
class KernelCall:
    op_index: int = _fb("int", 0)
    args: Optional[List[int]] = _fb(("vector", "int"))


@dataclass
class DelegateCall:
    delegate_index: int = _fb("int", 0)
    args: Optional[List[int]] = _fb(("vector", "int"))


@dataclass
class MoveCall:
    move_from: int = _fb("int", 0)
    move_to: int = _fb("int", 0)


@dataclass
class JumpFalseCall:
    cond_value_index: int = _fb("int", 0)
    destination_instruction: int = _fb("int", 0)


@dataclass
class FreeCall:
    value_index: int = _fb("int", 0)


InstructionArguments = Union[KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall]


@dataclass
class Instruction:
    instr_args: Optional[InstructionArguments] = _fb(("union", "InstructionArguments"))


@dataclass
class Frame:
    filename: Optional[str] = _fb("string")
    lineno: int = _fb("int", 0)
    name: Optional[str] = _fb("string")
    context: Optional[str] = _fb("string")


@dataclass
class FrameList:
    items: Optional[List[Frame]] = _fb(("vector", ("table", Frame)))


@dataclass
class Chain:
    inputs: Optional[List[int]] = _fb(("vector", "int"))
    outputs: Optional[List[int]] = _fb(("vector", "int"))
    instructions: Optional[List[Instruction]] = _fb(("vector", ("table", Instruction)))
    stacktrace: Optional[List[FrameList]] = _fb(("vector", ("table", FrameList)))


@dataclass
class Operator:
    name: Optional[str] = _fb("string")
    overload: Optional[str] = _fb("string")

    @property
    def key(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else (self.name or "")


@dataclass
class CompileSpec:
    key: Optional[str] = _fb("string")
    value: Optional[bytes] = _fb("bytes")


@dataclass
class BackendDelegateDataReference:
    location: int = _fb("byte", DataLocation.INLINE, enum="DataLocation")
    index: int = _fb("uint", 0)


@dataclass
class BackendDelegate:
    id: Optional[str] = _fb("string")
    processed: Optional[BackendDelegateDataReference] = _fb(("table", BackendDelegateDataReference))
    compile_specs: Optional[List[CompileSpec]] = _fb(("vector", ("table", CompileSpec)))


@dataclass
class ContainerMetadata:
    encoded_inp_str: Optional[str] = _fb("string")
    encoded_out_str: Optional[str] = _fb("string")


@dataclass
class NonConstBufferDevice:
    buffer_idx: int = _fb("int", 0)
    device_type: int = _fb("byte", DeviceType.CPU, enum="DeviceType")
    device_index: int = _fb("byte", 0)


@dataclass
class ExecutionPlan:
    name: Optional[str] = _fb("string")
    container_meta_type: Optional[ContainerMetadata] = _fb(("table", ContainerMetadata))
    values: Optional[List[EValue]] = _fb(("vector", ("table", EValue)))
    inputs: Optional[List[int]] = _fb(("vector", "int"))
    outputs: Optional[List[int]] = _fb(("vector", "int"))
    chains: Optional[List[Chain]] = _fb(("vector", ("table", Chain)))
    operators: Optional[List[Operator]] = _fb(("vector", ("table", Operator)))
    delegates: Optional[List[BackendDelegate]] = _fb(("vector", ("table", BackendDelegate)))
    non_const_buffer_sizes: Optional[List[int]] = _fb(("vector", "long"))
    non_const_buffer_device: Optional[List[NonConstBufferDevice]] = _fb(("vector", ("table", NonConstBufferDevice)))


@dataclass
class Buffer:
    storage: Optional[bytes] = _fb("bytes", force_align=16)


@dataclass
class BackendDelegateInlineData:
    data: Optional[bytes] = _fb("bytes", force_align=16)


@dataclass
class DataSegment:
    offset: int = _fb("ulong", 0)
    size: int = _fb("ulong", 0)


@dataclass
class SubsegmentOffsets:
    segment_index: int = _fb("uint", 0)
    offsets: Optional[List[int]] = _fb(("vector", "ulong"))


@dataclass
class NamedData:
    key: Optional[str] = _fb("string")
    segment_index: int = _fb("uint", 0)


@dataclass
class Program:
    version: int = _fb("uint", 0)
    execution_plan: Optional[List[ExecutionPlan]] = _fb(("vector", ("table", ExecutionPlan)))
    constant_buffer: Optional[List[Buffer]] = _fb(("vector", ("table", Buffer)))
    backend_delegate_data: Optional[List[BackendDelegateInlineData]] = _fb(("vector", ("table", BackendDelegateInlineData)))
    segments: Optional[List[DataSegment]] = _fb(("vector", ("table", DataSegment)))
    constant_segment: Optional[SubsegmentOffsets] = _fb(("table", SubsegmentOffsets))
    mutable_data_segments: Optional[List[SubsegmentOffsets]] = _fb(("vector", ("table", SubsegmentOffsets)))
    named_data: Optional[List[NamedData]] = _fb(("vector", ("table", NamedData)))
    # Not part of the flatbuffer: the bytes of each entry of `segments`, in
    # order. The writer derives `segments[i]` (offset, size) from these.
    segment_data: List[bytes] = field(default_factory=list)

    # -- conveniences used by inspect, tests and the runtime-less reference --
    def plan(self, name: str = "forward") -> ExecutionPlan:
        for p in self.execution_plan or []:
            if p.name == name:
                return p
        raise KeyError(name)

    def constant_bytes(self, tensor: Tensor) -> Optional[bytes]:
        """Bytes of a constant tensor (new constant segment or legacy buffer)."""
        if not tensor.is_constant:
            return None
        cs = self.constant_segment
        if cs is not None and cs.offsets is not None and len(cs.offsets) > 1:
            seg = self.segment_data[cs.segment_index]
            off = cs.offsets[tensor.data_buffer_idx]
            return bytes(seg[off:off + tensor.nbytes])
        buf = (self.constant_buffer or [])[tensor.data_buffer_idx]
        return bytes((buf.storage or b"")[:tensor.nbytes])

    def initial_bytes(self, tensor: Tensor) -> Optional[bytes]:
        """A planned tensor's initial value (mutable_data_segments[0], the
        entry upstream's runtime reads), or None."""
        if not tensor.has_initial_value:
            return None
        ms = self.mutable_data_segments[0]
        seg = self.segment_data[ms.segment_index]
        off = ms.offsets[tensor.data_buffer_idx]
        return bytes(seg[off:off + tensor.nbytes])


# --------------------------------------------------------------------------
# Wire layout, read off the dataclasses above.

UNIONS = {
    "KernelTypes": list(get_args(EValueMember)),
    "InstructionArguments": list(get_args(InstructionArguments)),
}

ENUMS = {
    "ScalarType": ScalarType,
    "TensorShapeDynamism": TensorShapeDynamism,
    "TensorDataLocation": TensorDataLocation,
    "DeviceType": DeviceType,
    "DataLocation": DataLocation,
}

# table class -> [(attribute, kind, options)], in schema order
LAYOUT = {cls: [(f.name, *f.metadata["fb"]) for f in dataclasses.fields(cls) if "fb" in f.metadata]
          for cls in list(globals().values())
          if dataclasses.is_dataclass(cls) and cls.__module__ == __name__}

SCALARS = {  # name -> (struct code, size)
    "bool": ("B", 1), "byte": ("b", 1), "ubyte": ("B", 1), "short": ("h", 2),
    "ushort": ("H", 2), "int": ("i", 4), "uint": ("I", 4), "long": ("q", 8),
    "ulong": ("Q", 8), "double": ("d", 8),
}

FILE_IDENTIFIER = b"ET12"
