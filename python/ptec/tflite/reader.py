"""The package's one reader of TFLite flatbuffers (`.tflite`, identifier "TFL3").

Torch-free. Written from the field order of TensorFlow's `schema.fbs` (facts only); the
wire-level reads (vtables, uoffsets, bounds) are the package's generic flatbuffer decoder,
`ptec.pte.flatbuffer.Decoder`. Every offset and length is bounds-checked; a malformed file
raises TFLiteError with one line.

    model = read_model("person_detect.tflite")
    g = model.subgraphs[0]
    for op in g.operators:
        print(op.index, op.name, op.inputs, op.outputs, op.options)
    t = g.tensors[g.inputs[0]]
    t.shape, t.type, t.quantization.scale, t.quantization.zero_point, t.array()
    model.offline_memory_allocation()     # per-tensor arena offsets or None

An operator's `name` is its builtin operator name ("CONV_2D", ...) or, for a custom op, its
custom code ("ethos-u"); `builtin` is the builtin name either way ("CUSTOM" for custom ops).
`options` holds the builtin options this reader knows (see OPTIONS), with the Padding and
ActivationFunctionType enums as their names ("SAME", "RELU6").
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from ..pte.flatbuffer import Decoder, FlatbufferError

FILE_IDENTIFIER = b"TFL3"


class TFLiteError(ValueError):
    """A file that is not a readable TFLite model; the message is one line."""


# --------------------------------------------------------------------------
# Enums of schema.fbs

TENSOR_TYPES = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL", "INT16",
                "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT",
                "UINT32", "UINT16", "INT4", "BFLOAT16"]

NUMPY_DTYPES = {"FLOAT32": "<f4", "FLOAT16": "<f2", "INT32": "<i4", "UINT8": "u1",
                "INT64": "<i8", "BOOL": "u1", "INT16": "<i2", "INT8": "i1", "FLOAT64": "<f8",
                "UINT64": "<u8", "UINT32": "<u4", "UINT16": "<u2"}

BUILTIN_OPERATORS = [
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
    "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP",
    "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC",
    "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE",
    "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS",
    "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
    "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
    "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
    "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX",
    "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM",
    "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
    "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG",
    "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD",
    "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK",
    "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD",
    "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
    "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK",
    "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
    "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D",
    "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND",
    "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE",
    "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS"]

PADDING = ["SAME", "VALID"]
ACTIVATIONS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]

# Builtin options tables: operator -> (BuiltinOptions union tag, fields in schema order).
# A field is (name, kind, default); kind is a struct code, "?" bool, "pad"/"act" for the
# two enums (stored as their names) or "[i" for an int vector.
_CONV = [("padding", "pad", 0), ("stride_w", "i", 0), ("stride_h", "i", 0),
         ("fused_activation_function", "act", 0), ("dilation_w_factor", "i", 1),
         ("dilation_h_factor", "i", 1)]
_DEPTHWISE = [("padding", "pad", 0), ("stride_w", "i", 0), ("stride_h", "i", 0),
              ("depth_multiplier", "i", 0), ("fused_activation_function", "act", 0),
              ("dilation_w_factor", "i", 1), ("dilation_h_factor", "i", 1)]
_POOL = [("padding", "pad", 0), ("stride_w", "i", 0), ("stride_h", "i", 0),
         ("filter_width", "i", 0), ("filter_height", "i", 0),
         ("fused_activation_function", "act", 0)]
_ACT_ONLY = [("fused_activation_function", "act", 0)]
_ADD_SUB = [("fused_activation_function", "act", 0), ("pot_scale_int16", "?", 1)]
_REDUCER = [("keep_dims", "?", 0)]
_NONE: list = []

OPTIONS = {
    "CONV_2D": (1, _CONV),
    "DEPTHWISE_CONV_2D": (2, _DEPTHWISE),
    "AVERAGE_POOL_2D": (5, _POOL), "MAX_POOL_2D": (5, _POOL), "L2_POOL_2D": (5, _POOL),
    "FULLY_CONNECTED": (8, [("fused_activation_function", "act", 0),
                            ("weights_format", "b", 0), ("keep_num_dims", "?", 0),
                            ("asymmetric_quantize_inputs", "?", 0)]),
    "SOFTMAX": (9, [("beta", "f", 0.0)]),
    "CONCATENATION": (10, [("axis", "i", 0), ("fused_activation_function", "act", 0)]),
    "ADD": (11, _ADD_SUB),
    "L2_NORMALIZATION": (12, _ACT_ONLY),
    "RESIZE_BILINEAR": (15, [("new_height", "i", 0), ("new_width", "i", 0),
                             ("align_corners", "?", 0), ("half_pixel_centers", "?", 0)]),
    "RESHAPE": (17, [("new_shape", "[i", None)]),
    "SPACE_TO_DEPTH": (19, [("block_size", "i", 0)]),
    "MUL": (21, _ACT_ONLY),
    "PAD": (22, _NONE),
    "GATHER": (23, [("axis", "i", 0), ("batch_dims", "i", 0)]),
    "TRANSPOSE": (26, _NONE),
    "MEAN": (27, _REDUCER), "SUM": (27, _REDUCER), "REDUCE_MAX": (27, _REDUCER),
    "REDUCE_MIN": (27, _REDUCER), "REDUCE_PROD": (27, _REDUCER),
    "SUB": (28, _ADD_SUB),
    "DIV": (29, _ACT_ONLY),
    "SQUEEZE": (30, [("squeeze_dims", "[i", None)]),
    "STRIDED_SLICE": (32, [("begin_mask", "i", 0), ("end_mask", "i", 0),
                           ("ellipsis_mask", "i", 0), ("new_axis_mask", "i", 0),
                           ("shrink_axis_mask", "i", 0), ("offset", "?", 0)]),
    "SPLIT": (35, [("num_splits", "i", 0)]),
    "LOG_SOFTMAX": (36, _NONE),
    "DEQUANTIZE": (38, _NONE),
    "MAXIMUM": (39, _NONE), "MINIMUM": (39, _NONE),
    "PADV2": (43, _NONE),
    "TRANSPOSE_CONV": (49, [("padding", "pad", 0), ("stride_w", "i", 0), ("stride_h", "i", 0),
                            ("fused_activation_function", "act", 0)]),
    "PACK": (59, [("values_count", "i", 0), ("axis", "i", 0)]),
    "RESIZE_NEAREST_NEIGHBOR": (74, [("align_corners", "?", 0),
                                     ("half_pixel_centers", "?", 0)]),
    "LEAKY_RELU": (75, [("alpha", "f", 0.0)]),
    "QUANTIZE": (89, _NONE),
    "HARD_SWISH": (91, _NONE),
    "DEPTH_TO_SPACE": (94, [("block_size", "i", 0)]),
}


# --------------------------------------------------------------------------
# The model as plain objects

@dataclass
class Quantization:
    scale: List[float]
    zero_point: List[int]
    quantized_dimension: int = 0
    min: Optional[List[float]] = None
    max: Optional[List[float]] = None

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1


@dataclass
class Tensor:
    index: int
    name: str
    shape: List[int]
    type: str                       # a TENSOR_TYPES name, e.g. "INT8"
    buffer: int                     # index into Model.buffers (0 = no data)
    data: Optional[bytes]           # the buffer's bytes, None when it has none
    quantization: Optional[Quantization]
    is_variable: bool = False
    shape_signature: Optional[List[int]] = None

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def dtype(self) -> np.dtype:
        if self.type not in NUMPY_DTYPES:
            raise TFLiteError(f"tensor {self.index} ({self.name}): no numpy type for {self.type}")
        return np.dtype(NUMPY_DTYPES[self.type])

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def array(self) -> np.ndarray:
        """The constant data as an array of `shape` (a copy, native byte order)."""
        if self.data is None:
            raise TFLiteError(f"tensor {self.index} ({self.name}) has no data")
        dt = self.dtype
        if len(self.data) != self.numel * dt.itemsize:
            raise TFLiteError(f"tensor {self.index} ({self.name}): {len(self.data)} data "
                              f"bytes for shape {self.shape} of {self.type}")
        return np.frombuffer(self.data, dt).astype(dt.newbyteorder("=")).reshape(self.shape)


@dataclass
class Operator:
    index: int
    name: str                       # builtin name, or the custom code of a custom op
    builtin: str                    # builtin name ("CUSTOM" for custom ops)
    version: int
    inputs: List[int]               # tensor indices, -1 = optional input absent
    outputs: List[int]
    options: Dict[str, object] = field(default_factory=dict)
    options_type: int = 0           # BuiltinOptions union tag as stored
    custom_code: Optional[str] = None
    custom_options: Optional[bytes] = None
    custom_options_format: int = 0  # 0 = FLEXBUFFERS
    intermediates: Optional[List[int]] = None


@dataclass
class SubGraph:
    index: int
    name: Optional[str]
    tensors: List[Tensor]
    inputs: List[int]
    outputs: List[int]
    operators: List[Operator]


@dataclass
class OperatorCode:
    builtin: str
    custom_code: Optional[str]
    version: int


@dataclass
class Model:
    version: int
    description: Optional[str]
    operator_codes: List[OperatorCode]
    subgraphs: List[SubGraph]
    buffers: List[bytes]            # every Buffer's bytes (b"" when empty)
    metadata: Dict[str, bytes]      # Metadata name -> its buffer's bytes

    def offline_memory_allocation(self, subgraph: int = 0) -> Optional[List[int]]:
        """The "OfflineMemoryAllocation" metadata for one subgraph: one arena offset per
        tensor, -1 for a tensor the runtime plans itself; None without that metadata.
        Layout: int32 [version, subgraph count, offset count, offsets of subgraph 0, ...]."""
        raw = self.metadata.get("OfflineMemoryAllocation")
        if raw is None:
            return None
        if len(raw) % 4 or len(raw) < 12:
            raise TFLiteError(f"OfflineMemoryAllocation: {len(raw)} bytes is not an int32 "
                              "header of 3 words plus offsets")
        words = list(struct.unpack("<%di" % (len(raw) // 4), raw))
        count = words[2]
        if count < 0 or 3 + count > len(words):
            raise TFLiteError(f"OfflineMemoryAllocation: {count} offsets but "
                              f"{len(words) - 3} stored")
        offsets = words[3:3 + count]
        start = sum(len(g.tensors) for g in self.subgraphs[:subgraph])
        n = len(self.subgraphs[subgraph].tensors)
        if start + n > count:
            raise TFLiteError(f"OfflineMemoryAllocation: {count} offsets do not cover "
                              f"subgraph {subgraph}'s {n} tensors")
        return offsets[start:start + n]


# --------------------------------------------------------------------------
# Wire reads

class _Reader:
    def __init__(self, data: bytes):
        self.data = bytes(data)
        self.dec = Decoder(self.data)

    def table(self, pos: int) -> int:
        if pos % 4:
            raise TFLiteError(f"table at unaligned position {pos}")
        return pos

    def field(self, table: int, fid: int) -> Optional[int]:
        return self.dec.field_pos(table, fid)

    def scalar(self, table: int, fid: int, code: str, default=0):
        p = self.field(table, fid)
        return default if p is None else self.dec.scalar(code, p)

    def string(self, table: int, fid: int) -> Optional[str]:
        p = self.field(table, fid)
        return None if p is None else self.dec.string(self.dec.deref(p))

    def sub_table(self, table: int, fid: int) -> Optional[int]:
        p = self.field(table, fid)
        return None if p is None else self.table(self.dec.deref(p))

    def vector(self, table: int, fid: int, code: str) -> Optional[list]:
        p = self.field(table, fid)
        if p is None:
            return None
        start, n = self.dec.vector(self.dec.deref(p))
        size = struct.calcsize("<" + code)
        self.dec._check(start, size * n)
        return list(struct.unpack_from("<%d%s" % (n, code), self.data, start))

    def bytes_vector(self, table: int, fid: int) -> Optional[bytes]:
        p = self.field(table, fid)
        if p is None:
            return None
        start, n = self.dec.vector(self.dec.deref(p))
        self.dec._check(start, n)
        return self.data[start:start + n]

    def tables(self, table: int, fid: int) -> List[int]:
        p = self.field(table, fid)
        if p is None:
            return []
        start, n = self.dec.vector(self.dec.deref(p))
        self.dec._check(start, 4 * n)
        return [self.table(self.dec.deref(start + 4 * i)) for i in range(n)]

    def file_range(self, offset: int, size: int, what: str) -> bytes:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise TFLiteError(f"{what}: bytes {offset}..{offset + size} are outside the "
                              f"{len(self.data)}-byte file")
        return self.data[offset:offset + size]


def _name(names: List[str], value: int, what: str) -> str:
    if 0 <= value < len(names):
        return names[value]
    raise TFLiteError(f"unknown {what} {value}")


def _read_options(r: _Reader, op_table: int, builtin: str, op_index: int):
    tag = r.scalar(op_table, 3, "B")
    spec = OPTIONS.get(builtin)
    opts_table = r.sub_table(op_table, 4)
    if spec is None:
        return tag, {}
    want_tag, fields = spec
    if opts_table is not None and tag != want_tag:
        raise TFLiteError(f"operator {op_index} ({builtin}): builtin options type {tag}, "
                          f"expected {want_tag}")
    out: Dict[str, object] = {}
    for fid, (fname, kind, default) in enumerate(fields):
        if kind == "[i":
            out[fname] = (r.vector(opts_table, fid, "i") if opts_table is not None else None)
            continue
        code = {"pad": "b", "act": "b", "?": "B"}.get(kind, kind)
        value = r.scalar(opts_table, fid, code, default) if opts_table is not None else default
        if kind == "pad":
            value = _name(PADDING, value, f"operator {op_index} padding")
        elif kind == "act":
            value = _name(ACTIVATIONS, value, f"operator {op_index} fused activation")
        elif kind == "?":
            value = bool(value)
        elif kind == "f":
            value = float(value)
        out[fname] = value
    return tag, out


def _read_quantization(r: _Reader, q: Optional[int]) -> Optional[Quantization]:
    if q is None:
        return None
    scale = r.vector(q, 2, "f")
    zero_point = r.vector(q, 3, "q")
    if not scale and not zero_point:
        return None
    scale = [float(s) for s in scale or []]
    zero_point = [int(z) for z in zero_point or []]
    return Quantization(scale=scale, zero_point=zero_point,
                        quantized_dimension=r.scalar(q, 6, "i"),
                        min=r.vector(q, 0, "f"), max=r.vector(q, 1, "f"))


def _read_buffers(r: _Reader, model: int) -> List[bytes]:
    out = []
    for i, b in enumerate(r.tables(model, 4)):
        data = r.bytes_vector(b, 0)
        offset, size = r.scalar(b, 1, "Q"), r.scalar(b, 2, "Q")
        if offset > 1:      # data stored after the flatbuffer (models over 2 GB)
            data = r.file_range(offset, size, f"buffer {i}")
        out.append(data or b"")
    return out


def parse_model(data: bytes) -> Model:
    """Decode a .tflite file's bytes into a Model."""
    if len(data) < 8:
        raise TFLiteError("file shorter than 8 bytes")
    if bytes(data[4:8]) != FILE_IDENTIFIER:
        raise TFLiteError(f"not a TFLite model (file identifier {bytes(data[4:8])!r}, "
                          f"want {FILE_IDENTIFIER!r})")
    try:
        return _parse(_Reader(data))
    except (FlatbufferError, struct.error, UnicodeDecodeError, RecursionError) as e:
        raise TFLiteError(f"malformed TFLite flatbuffer: {e}") from e


def _parse(r: _Reader) -> Model:
    model = r.table(r.dec.deref(0))
    buffers = _read_buffers(r, model)

    def buffer_bytes(i: int, what: str) -> bytes:
        if not 0 <= i < len(buffers):
            raise TFLiteError(f"{what}: buffer {i} of {len(buffers)}")
        return buffers[i]

    codes = []
    for c in r.tables(model, 1):
        deprecated = r.scalar(c, 0, "b")
        code = max(deprecated, r.scalar(c, 3, "i"))
        codes.append(OperatorCode(builtin=_name(BUILTIN_OPERATORS, code, "builtin operator"),
                                  custom_code=r.string(c, 1), version=r.scalar(c, 2, "i", 1)))

    subgraphs = []
    for gi, g in enumerate(r.tables(model, 2)):
        tensors = []
        for ti, t in enumerate(r.tables(g, 0)):
            buf = r.scalar(t, 2, "I")
            data = buffer_bytes(buf, f"tensor {ti}")
            tensors.append(Tensor(
                index=ti, name=r.string(t, 3) or "", shape=r.vector(t, 0, "i") or [],
                type=_name(TENSOR_TYPES, r.scalar(t, 1, "b"), f"tensor {ti} type"),
                buffer=buf, data=data if data else None,
                quantization=_read_quantization(r, r.sub_table(t, 4)),
                is_variable=bool(r.scalar(t, 5, "B")), shape_signature=r.vector(t, 7, "i")))
        ops = []
        for oi, o in enumerate(r.tables(g, 3)):
            ci = r.scalar(o, 0, "I")
            if ci >= len(codes):
                raise TFLiteError(f"operator {oi}: opcode index {ci} of {len(codes)}")
            code = codes[ci]
            inputs = r.vector(o, 1, "i") or []
            outputs = r.vector(o, 2, "i") or []
            for t in inputs + outputs:
                if not -1 <= t < len(tensors):
                    raise TFLiteError(f"operator {oi}: tensor index {t} of {len(tensors)}")
            tag, options = _read_options(r, o, code.builtin, oi)
            custom = r.bytes_vector(o, 5)
            large_offset, large_size = r.scalar(o, 9, "Q"), r.scalar(o, 10, "Q")
            if large_offset > 1:
                custom = r.file_range(large_offset, large_size, f"operator {oi} custom options")
            is_custom = code.builtin == "CUSTOM"
            ops.append(Operator(
                index=oi, name=(code.custom_code or "CUSTOM") if is_custom else code.builtin,
                builtin=code.builtin, version=code.version, inputs=inputs, outputs=outputs,
                options=options, options_type=tag,
                custom_code=code.custom_code if is_custom else None, custom_options=custom,
                custom_options_format=r.scalar(o, 6, "b"),
                intermediates=r.vector(o, 8, "i")))
        g_inputs = r.vector(g, 1, "i") or []
        g_outputs = r.vector(g, 2, "i") or []
        for t in g_inputs + g_outputs:
            if not 0 <= t < len(tensors):
                raise TFLiteError(f"subgraph {gi}: input/output tensor {t} of {len(tensors)}")
        subgraphs.append(SubGraph(index=gi, name=r.string(g, 4), tensors=tensors,
                                  inputs=g_inputs, outputs=g_outputs, operators=ops))

    metadata = {}
    for m in r.tables(model, 6):
        name = r.string(m, 0) or ""
        metadata[name] = buffer_bytes(r.scalar(m, 1, "I"), f"metadata {name!r}")
    return Model(version=r.scalar(model, 0, "I"), description=r.string(model, 3),
                 operator_codes=codes, subgraphs=subgraphs, buffers=buffers, metadata=metadata)


def read_model(path: str) -> Model:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TFLiteError(f"{path}: cannot read: {e.strerror or e}") from e
    return parse_model(data)
