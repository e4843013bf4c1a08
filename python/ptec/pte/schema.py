"""The .pte program as plain Python dataclasses, plus the table layout that
the flatbuffer reader and writer share.

Every table of the upstream schema (pte-format.md §3) is one dataclass whose
fields follow the schema's declaration order. A union field is one Python
attribute holding the member object (or None); on the wire it takes two field
ids (type tag, then value). Vectors are Python lists, `[ubyte]` is `bytes`,
and a missing offset field is `None` (distinct from an empty list).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional, Union


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
    ScalarType.FLOAT: "<f4", ScalarType.DOUBLE: "<f8", ScalarType.BOOL: "u1",
    ScalarType.UINT16: "<u2", ScalarType.UINT32: "<u4", ScalarType.UINT64: "<u8",
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
    int_val: int = 0


@dataclass
class Bool:
    bool_val: bool = False


@dataclass
class Double:
    double_val: float = 0.0


@dataclass
class String:
    string_val: Optional[str] = None


@dataclass
class IntList:
    items: Optional[List[int]] = None      # value indices of Int EValues


@dataclass
class DoubleList:
    items: Optional[List[float]] = None


@dataclass
class BoolList:
    items: Optional[List[bool]] = None


@dataclass
class TensorList:
    items: Optional[List[int]] = None


@dataclass
class OptionalTensorList:
    items: Optional[List[int]] = None      # -1 means None


@dataclass
class AllocationDetails:
    memory_id: int = 0
    memory_offset_low: int = 0
    memory_offset_high: int = 0

    @property
    def offset(self) -> int:
        return (self.memory_offset_high << 32) | self.memory_offset_low


@dataclass
class ExtraTensorInfo:
    mutable_data_segments_idx: int = 0
    fully_qualified_name: Optional[str] = None
    location: int = TensorDataLocation.SEGMENT
    device_type: int = DeviceType.CPU
    device_index: int = 0


@dataclass
class Tensor:
    scalar_type: int = ScalarType.BYTE
    storage_offset: int = 0
    sizes: Optional[List[int]] = None
    dim_order: Optional[bytes] = None
    requires_grad: bool = False
    data_buffer_idx: int = 0
    allocation_info: Optional[AllocationDetails] = None
    layout: int = 0
    shape_dynamism: int = TensorShapeDynamism.STATIC
    extra_tensor_info: Optional[ExtraTensorInfo] = None

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


EValueMember = Union[Null, Int, Bool, Double, Tensor, String, IntList, DoubleList,
                     BoolList, TensorList, OptionalTensorList]


@dataclass
class EValue:
    val: Optional[EValueMember] = None


# --------------------------------------------------------------------------
# Instructions (union InstructionArguments)

@dataclass
class KernelCall:
    op_index: int = 0
    args: Optional[List[int]] = None


@dataclass
class DelegateCall:
    delegate_index: int = 0
    args: Optional[List[int]] = None


@dataclass
class MoveCall:
    move_from: int = 0
    move_to: int = 0


@dataclass
class JumpFalseCall:
    cond_value_index: int = 0
    destination_instruction: int = 0


@dataclass
class FreeCall:
    value_index: int = 0


@dataclass
class Instruction:
    instr_args: Optional[Union[KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall]] = None


@dataclass
class Frame:
    filename: Optional[str] = None
    lineno: int = 0
    name: Optional[str] = None
    context: Optional[str] = None


@dataclass
class FrameList:
    items: Optional[List[Frame]] = None


@dataclass
class Chain:
    inputs: Optional[List[int]] = None
    outputs: Optional[List[int]] = None
    instructions: Optional[List[Instruction]] = None
    stacktrace: Optional[List[FrameList]] = None


@dataclass
class Operator:
    name: Optional[str] = None
    overload: Optional[str] = None

    @property
    def key(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else (self.name or "")


@dataclass
class CompileSpec:
    key: Optional[str] = None
    value: Optional[bytes] = None


@dataclass
class BackendDelegateDataReference:
    location: int = DataLocation.INLINE
    index: int = 0


@dataclass
class BackendDelegate:
    id: Optional[str] = None
    processed: Optional[BackendDelegateDataReference] = None
    compile_specs: Optional[List[CompileSpec]] = None


@dataclass
class ContainerMetadata:
    encoded_inp_str: Optional[str] = None
    encoded_out_str: Optional[str] = None


@dataclass
class NonConstBufferDevice:
    buffer_idx: int = 0
    device_type: int = DeviceType.CPU
    device_index: int = 0


@dataclass
class ExecutionPlan:
    name: Optional[str] = None
    container_meta_type: Optional[ContainerMetadata] = None
    values: Optional[List[EValue]] = None
    inputs: Optional[List[int]] = None
    outputs: Optional[List[int]] = None
    chains: Optional[List[Chain]] = None
    operators: Optional[List[Operator]] = None
    delegates: Optional[List[BackendDelegate]] = None
    non_const_buffer_sizes: Optional[List[int]] = None
    non_const_buffer_device: Optional[List[NonConstBufferDevice]] = None


@dataclass
class Buffer:
    storage: Optional[bytes] = None


@dataclass
class BackendDelegateInlineData:
    data: Optional[bytes] = None


@dataclass
class DataSegment:
    offset: int = 0
    size: int = 0


@dataclass
class SubsegmentOffsets:
    segment_index: int = 0
    offsets: Optional[List[int]] = None


@dataclass
class NamedData:
    key: Optional[str] = None
    segment_index: int = 0


@dataclass
class Program:
    version: int = 0
    execution_plan: Optional[List[ExecutionPlan]] = None
    constant_buffer: Optional[List[Buffer]] = None
    backend_delegate_data: Optional[List[BackendDelegateInlineData]] = None
    segments: Optional[List[DataSegment]] = None
    constant_segment: Optional[SubsegmentOffsets] = None
    mutable_data_segments: Optional[List[SubsegmentOffsets]] = None
    named_data: Optional[List[NamedData]] = None
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


# --------------------------------------------------------------------------
# Wire layout. Field kinds:
#   scalar: 'bool','byte','ubyte','short','ushort','int','uint','long','ulong','double'
#   'string' | ('table', Cls) | ('vector', elem) with elem a scalar name,
#   'string' or ('table', Cls) | ('union', name) | 'bytes' (= [ubyte])
# A trailing dict holds options: force_align, enum.

UNIONS = {
    "KernelTypes": [Null, Int, Bool, Double, Tensor, String, IntList, DoubleList,
                    BoolList, TensorList, OptionalTensorList],
    "InstructionArguments": [KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall],
}

ENUMS = {
    "ScalarType": ScalarType,
    "TensorShapeDynamism": TensorShapeDynamism,
    "TensorDataLocation": TensorDataLocation,
    "DeviceType": DeviceType,
    "DataLocation": DataLocation,
}

# (attribute, kind, options)
LAYOUT = {
    Null: [],
    Int: [("int_val", "long", {})],
    Bool: [("bool_val", "bool", {})],
    Double: [("double_val", "double", {})],
    String: [("string_val", "string", {})],
    IntList: [("items", ("vector", "long"), {})],
    DoubleList: [("items", ("vector", "double"), {})],
    BoolList: [("items", ("vector", "bool"), {})],
    TensorList: [("items", ("vector", "int"), {})],
    OptionalTensorList: [("items", ("vector", "int"), {})],
    AllocationDetails: [("memory_id", "uint", {}), ("memory_offset_low", "uint", {}),
                        ("memory_offset_high", "uint", {})],
    ExtraTensorInfo: [("mutable_data_segments_idx", "ulong", {}),
                      ("fully_qualified_name", "string", {}),
                      ("location", "byte", {"enum": "TensorDataLocation"}),
                      ("device_type", "byte", {"enum": "DeviceType"}),
                      ("device_index", "byte", {})],
    Tensor: [("scalar_type", "byte", {"enum": "ScalarType"}), ("storage_offset", "int", {}),
             ("sizes", ("vector", "int"), {}), ("dim_order", "bytes", {}),
             ("requires_grad", "bool", {}), ("data_buffer_idx", "uint", {}),
             ("allocation_info", ("table", AllocationDetails), {}), ("layout", "byte", {}),
             ("shape_dynamism", "byte", {"enum": "TensorShapeDynamism"}),
             ("extra_tensor_info", ("table", ExtraTensorInfo), {})],
    EValue: [("val", ("union", "KernelTypes"), {})],
    KernelCall: [("op_index", "int", {}), ("args", ("vector", "int"), {})],
    DelegateCall: [("delegate_index", "int", {}), ("args", ("vector", "int"), {})],
    MoveCall: [("move_from", "int", {}), ("move_to", "int", {})],
    JumpFalseCall: [("cond_value_index", "int", {}), ("destination_instruction", "int", {})],
    FreeCall: [("value_index", "int", {})],
    Instruction: [("instr_args", ("union", "InstructionArguments"), {})],
    Frame: [("filename", "string", {}), ("lineno", "int", {}), ("name", "string", {}),
            ("context", "string", {})],
    FrameList: [("items", ("vector", ("table", Frame)), {})],
    Chain: [("inputs", ("vector", "int"), {}), ("outputs", ("vector", "int"), {}),
            ("instructions", ("vector", ("table", Instruction)), {}),
            ("stacktrace", ("vector", ("table", FrameList)), {})],
    Operator: [("name", "string", {}), ("overload", "string", {})],
    CompileSpec: [("key", "string", {}), ("value", "bytes", {})],
    BackendDelegateDataReference: [("location", "byte", {"enum": "DataLocation"}),
                                   ("index", "uint", {})],
    BackendDelegate: [("id", "string", {}),
                      ("processed", ("table", BackendDelegateDataReference), {}),
                      ("compile_specs", ("vector", ("table", CompileSpec)), {})],
    ContainerMetadata: [("encoded_inp_str", "string", {}), ("encoded_out_str", "string", {})],
    NonConstBufferDevice: [("buffer_idx", "int", {}),
                           ("device_type", "byte", {"enum": "DeviceType"}),
                           ("device_index", "byte", {})],
    ExecutionPlan: [("name", "string", {}),
                    ("container_meta_type", ("table", ContainerMetadata), {}),
                    ("values", ("vector", ("table", EValue)), {}),
                    ("inputs", ("vector", "int"), {}), ("outputs", ("vector", "int"), {}),
                    ("chains", ("vector", ("table", Chain)), {}),
                    ("operators", ("vector", ("table", Operator)), {}),
                    ("delegates", ("vector", ("table", BackendDelegate)), {}),
                    ("non_const_buffer_sizes", ("vector", "long"), {}),
                    ("non_const_buffer_device", ("vector", ("table", NonConstBufferDevice)), {})],
    Buffer: [("storage", "bytes", {"force_align": 16})],
    BackendDelegateInlineData: [("data", "bytes", {"force_align": 16})],
    DataSegment: [("offset", "ulong", {}), ("size", "ulong", {})],
    SubsegmentOffsets: [("segment_index", "uint", {}), ("offsets", ("vector", "ulong"), {})],
    NamedData: [("key", "string", {}), ("segment_index", "uint", {})],
    Program: [("version", "uint", {}),
              ("execution_plan", ("vector", ("table", ExecutionPlan)), {}),
              ("constant_buffer", ("vector", ("table", Buffer)), {}),
              ("backend_delegate_data", ("vector", ("table", BackendDelegateInlineData)), {}),
              ("segments", ("vector", ("table", DataSegment)), {}),
              ("constant_segment", ("table", SubsegmentOffsets), {}),
              ("mutable_data_segments", ("vector", ("table", SubsegmentOffsets)), {}),
              ("named_data", ("vector", ("table", NamedData)), {})],
}

SCALARS = {  # name -> (struct code, size)
    "bool": ("B", 1), "byte": ("b", 1), "ubyte": ("B", 1), "short": ("h", 2),
    "ushort": ("H", 2), "int": ("i", 4), "uint": ("I", 4), "long": ("q", 8),
    "ulong": ("Q", 8), "double": ("d", 8),
}

FILE_IDENTIFIER = b"ET12"
