"""From a delegate's NPU operations to its blob's parts: the COP1 command
data, the constant data (region 0: scale records, compressed weights, LUT
tables) and the working area (region 1: every feature map of the group,
inputs and outputs included, at offsets planned here).

Layout facts are the spec's (ethos-u-npu.md): NHWC strides (§4.2), per op
the scale records padded to 16 then the weight stream (§4.3), the LUT area
and its DMA (§4.1, §5.3). Every op runs to completion before the next
(BLOCKDEP 0) and every DMA is waited for before its data is read, so the
stream is hazard-free without Vela's overlap analysis; that costs some
overlap on silicon and is the documented first step.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .mlw_encode import encode_weights
from .npu_config import NpuConfig
from .block_config import OpShape, choose_block_config
from .npu_ops import ELEMENTWISE, Fmap, NpuOp
from .stream_writer import StreamWriter
from .weight_order import ordered_weights

ALIGN = 16
REGION_CONST, REGION_SCRATCH, REGION_FAST = 0, 1, 2
SCALE_RECORD = 10
LUT_ENTRIES = 256
DMA_TO_SHRAM = 0x100 | 3          # internal destination, core mask 3 (as Vela writes it, §4.1)
POOL_MODES = {"pool_max": 0, "pool_avg": 1}
ACTIVATION_LUT0 = 16
SLICE_WEIGHTS = 32768
MAX_OP_WIDTH = 65536              # WIDTH_M1 registers are 16-bit
INT32 = 4
EW_MODES = {"MUL": 0, "ADD": 1, "SHL": 9}
ROUND_DBL, ROUND_NATURAL = 0, 2
ADD_LEFT_SHIFT = 20               # CMSIS-NN's add: operands << 20 before their rescale
MIN_SLICE = 8                     # the OFM micro-block


def _align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


def scale_records(bias: Sequence[int], scales: Sequence[Tuple[int, int]]) -> bytes:
    """10 bytes per OFM channel (§4.3): bias s40, scale u32, shift; padded to 16."""
    out = bytearray()
    for b, (m, s) in zip(bias, scales):
        b = int(b)
        if not -(1 << 39) <= b < 1 << 39 or not 0 <= m < 1 << 32 or not 0 <= s < 64:
            raise ValueError(f"scale record out of range: bias {b}, scale {m}, shift {s}")
        out += (b & ((1 << 40) - 1)).to_bytes(5, "little") + int(m).to_bytes(4, "little") + bytes([s])
    return bytes(out) + bytes(_align(len(out)) - len(out))


@dataclass
class Placed:
    """Where a value lives in region 1."""
    offset: int
    nbytes: int


@dataclass
class Generated:
    cop: bytes
    weight_data: bytes
    scratch_size: int
    places: Dict[str, Placed]
    weight_bytes: Dict[str, int] = field(default_factory=dict)   # node -> encoded weights + scales
    commands: int = 0
    fast_scratch_size: int = 0        # Dedicated_Sram: the region-2 bytes the stream uses


def fast_scratch_slice_bytes(op: NpuOp, channels: int) -> int:
    """An upper bound of one slice's records + weight stream: 10 bytes per
    channel padded to 16, and at most 9 bits per weight (the encoder's worst
    case) plus a slice header per 32,768 weights and the end padding."""
    per_channel = int(np.prod(op.weights.shape[1:]))
    ordered = channels * per_channel * 2            # brick padding at most doubles the count
    return (_align(SCALE_RECORD * channels) + _align((ordered * 9 + 7) // 8
            + 64 * (ordered // 32768 + 1) + ALIGN))


def plan_scratch(ops: List[NpuOp], inputs: Sequence[str], outputs: Sequence[str],
                 sizes: Dict[str, int]) -> Tuple[Dict[str, Placed], int]:
    """Region-1 offsets: values whose lifetimes overlap never share bytes.
    Inputs live from the start, outputs to the end; greedy by size, first
    fit (the same idea as TFLM's greedy planner)."""
    first: Dict[str, int] = {name: -1 for name in inputs}
    last: Dict[str, int] = {}
    for i, op in enumerate(ops):
        first.setdefault(op.ofm, i)
        for v in [op.ifm] + ([op.ifm2] if op.ifm2 else []):
            last[v] = i
        last.setdefault(op.ofm, i)
        last[op.ofm] = max(last[op.ofm], i)
        for t in temporaries(op):
            first[t], last[t] = i, i
    for name in outputs:
        last[name] = len(ops)
    for name in first:
        last.setdefault(name, first[name])
    order = sorted(first, key=lambda v: (-sizes[v], first[v]))
    placed: Dict[str, Placed] = {}
    for v in order:
        clashes = sorted((p.offset, p.offset + _align(p.nbytes)) for u, p in placed.items()
                         if first[u] <= last[v] and first[v] <= last[u])
        at = 0
        for lo, hi in clashes:
            if at + sizes[v] <= lo:
                break
            at = max(at, hi)
        placed[v] = Placed(at, sizes[v])
    total = max((p.offset + _align(p.nbytes) for p in placed.values()), default=0)
    return placed, max(total, ALIGN)


def _kernel_stride(op: NpuOp) -> int:
    sy, sx = (s - 1 for s in op.stride)
    dy, dx = (d - 1 for d in op.dilation)
    return (sx & 1) | (sy & 1) << 1 | dx << 3 | dy << 4 | (sx >> 1) << 6 | (sy >> 1) << 9


def temporaries(op: NpuOp) -> Dict[str, int]:
    """Region-1 scratch of one op: the int32 operands of add and mul."""
    if op.kind not in ELEMENTWISE:
        return {}
    return {f"{op.node}#a": op.ofm_shape.nbytes * INT32,
            f"{op.node}#b": (op.ifm2_shape or op.ofm_shape).nbytes * INT32}


def depth_slices(op: NpuOp, fast_scratch: int = 0) -> List[Tuple[int, int]]:
    """(first channel, channels) of each NPU op the node becomes. Weighted
    ops are split along the OFM depth, in whole OFM blocks, so that one op
    holds at most SLICE_WEIGHTS weights, as Vela slices its ops to fit its
    weight buffers (§4.3); the NPU model decodes one op's weights at a time
    into a fixed work buffer (PTEC_NPU_MODEL_WORK_BYTES, 128 KiB)."""
    depth = op.ofm_shape.c
    if op.weights is None:
        return [(0, depth)]
    per_channel = int(np.prod(op.weights.shape[1:]))
    fit = SLICE_WEIGHTS // per_channel
    step = op.block.depth if op.block.depth <= fit else MIN_SLICE    # whole blocks, else parts of one
    n = max(step, fit // step * step)
    if fast_scratch:      # Dedicated_Sram: each slice's weights must fit the fast scratch
        while n > MIN_SLICE and fast_scratch_slice_bytes(op, n) > fast_scratch:
            n = max(MIN_SLICE, n // 2 // MIN_SLICE * MIN_SLICE)
    return [(c, min(n, depth - c)) for c in range(0, depth, n)]


def _fmap_registers(w: StreamWriter, prefix: str, shape, base: int, zp: int, elem: int = 1,
                    region: int = REGION_SCRATCH, tile_w: Optional[int] = None) -> None:
    """One map's registers: strides of the whole map `shape` (NHWC), one
    tile from `base`, `tile_w` columns wide (default the map's width)."""
    w.set(f"{prefix}_REGION", region)
    w.address(f"{prefix}_BASE0", base)
    for t in (1, 2, 3):
        w.address(f"{prefix}_BASE{t}", 0)
    w.address(f"{prefix}_STRIDE_X", shape.c * elem)
    w.address(f"{prefix}_STRIDE_Y", shape.w * shape.c * elem)
    w.address(f"{prefix}_STRIDE_C", elem)
    w.set(f"{prefix}_WIDTH0_M1", (shape.w if tile_w is None else tile_w) - 1)
    w.set(f"{prefix}_HEIGHT0_M1", shape.h - 1)
    w.set(f"{prefix}_HEIGHT1_M1", shape.h - 1)
    w.set(f"{prefix}_ZERO_POINT", zp)


def _block_registers(w: StreamWriter, blk) -> None:
    """The OFM block and the SHRAM layout of a block_config.BlockConfig."""
    w.set("OFM_BLK_HEIGHT_M1", blk.height - 1)
    w.set("OFM_BLK_WIDTH_M1", blk.width - 1)
    w.set("OFM_BLK_DEPTH_M1", blk.depth - 1)
    w.set("IFM_IB_END", blk.ib_end)
    w.set("AB_START", blk.ab_start)
    w.set("ACC_FORMAT", blk.acc_format)


def width_stripes(width: int, stride: int = 1, extent: int = 1) -> List[Tuple[int, int]]:
    """(first OFM column, columns) of each stripe: one op's OFM and IFM
    widths are 16-bit registers (MAX_OP_WIDTH), so a wider map runs as
    several ops side by side (the IFM window of a stripe is at most
    (columns - 1) * stride + extent wide)."""
    n = min(MAX_OP_WIDTH, (MAX_OP_WIDTH - extent) // stride + 1)
    return [(x, min(n, width - x)) for x in range(0, width, n)]


def generate(cfg: NpuConfig, ops: List[NpuOp], aliases: Dict[str, str],
             inputs: Sequence[str], outputs: Sequence[str], fast_scratch: int = 0) -> Generated:
    """aliases: value -> the value whose bytes it is (a reshape). fast_scratch:
    0 for Shared_Sram (the NPU reads weights in place from region 0), else
    the Dedicated_Sram fast scratch (region 2) that each op's weights and
    scale records are DMA'd into before it runs."""
    def root(v: str) -> str:
        while v in aliases:
            v = aliases[v]
        return v
    for op in ops:
        op.ifm, op.ofm = root(op.ifm), root(op.ofm)
    sizes: Dict[str, int] = {}
    for op in ops:
        op.ifm2 = root(op.ifm2) if op.ifm2 else None
        sizes[op.ifm] = op.ifm_shape.nbytes
        sizes[op.ofm] = (op.ofm_whole or op.ofm_shape).nbytes
        if op.ifm2:
            sizes[op.ifm2] = (op.ifm2_shape or op.ifm_shape).nbytes
        sizes.update(temporaries(op))
    ins = [root(v) for v in inputs]
    outs = [root(v) for v in outputs]
    places, scratch_size = plan_scratch(ops, ins, outs, sizes)

    const = bytearray()
    w = StreamWriter(cfg)
    weight_bytes: Dict[str, int] = {}
    if cfg.is_u65:
        w.set("PARALLEL_MODE", cfg.cores - 1)
    lut_loaded = None
    tables: Dict[bytes, int] = {}
    fast_used = 0
    for op in ops:
        if op.lut is not None:
            table = op.lut.astype(np.int8).tobytes()
            if lut_loaded != table:
                if table not in tables:          # one copy of each table in region 0
                    tables[table] = len(const)
                    const += table + bytes(_align(len(table)) - len(table))
                src = tables[table]
                w.op("KERNEL_WAIT", 0)       # SHRAM: no op may still be using it
                w.set("DMA0_SRC_REGION", REGION_CONST)
                w.address("DMA0_SRC", src)
                w.set("DMA0_DST_REGION", DMA_TO_SHRAM)
                w.address("DMA0_DST", cfg.lut_address)
                w.address("DMA0_LEN", LUT_ENTRIES)
                w.op("DMA_START", 0)
                w.op("DMA_WAIT", 0)
                lut_loaded = table
        else:
            lut_loaded = None     # on 16 KiB SHRAMs other ops' buffers cover the LUT area
        if op.kind in ELEMENTWISE:
            _emit_binary(w, cfg, op, places, const)
            continue
        fast = [0]
        for c0, cn in depth_slices(op, fast_scratch):
            used = _emit(w, cfg, op, places, c0, cn, const, weight_bytes, fast_scratch)
            fast[0] = max(fast[0], used)
        fast_used = max(fast_used, fast[0])
    w.stop()
    if not const:
        const = bytearray(ALIGN)          # the blob's weight_data is never empty
    return Generated(w.cop1(), bytes(const), scratch_size, places, weight_bytes, len(w.words),
                     fast_used)


def _emit(w: StreamWriter, cfg: NpuConfig, op: NpuOp, places: Dict[str, Placed], c0: int, cn: int,
          const: bytearray, weight_bytes: Dict[str, int], fast_scratch: int = 0) -> int:
    """Channels c0 .. c0+cn of op's OFM (of its IFM too for depthwise and
    pools, which keep channels): the bases move by c0 bytes, the strides
    stay those of the whole maps. Returns the fast-scratch bytes it uses."""
    ifm, ofm = op.ifm_shape, op.ofm_shape
    per_channel = op.kind != "conv"
    w.set("IFM_DEPTH_M1", (cn if per_channel else ifm.c) - 1)
    w.set("IFM_PRECISION", 1)                   # signed 8-bit NHWC, DBL
    w.set("IFM_UPSCALE", 0)
    top, left, bottom, right = op.pad
    w.set("IFM_PAD_TOP", top)
    w.set("IFM_PAD_BOTTOM", bottom)
    w.set("OFM_HEIGHT_M1", ofm.h - 1)
    w.set("OFM_DEPTH_M1", cn - 1)
    global_scale = op.ofm_scale is not None
    w.set("OFM_PRECISION", 1 | (int(global_scale) << 8))
    if global_scale:
        m, s = op.ofm_scale
        w.set32("OFM_SCALE", m, s)
    kh, kw = op.kernel
    w.set("KERNEL_HEIGHT_M1", op.dilation[0] * (kh - 1))
    w.set("KERNEL_WIDTH_M1", op.dilation[1] * (kw - 1))
    w.set("KERNEL_STRIDE", _kernel_stride(op))
    blk = op.block
    _block_registers(w, blk)
    w.set("ACTIVATION", ACTIVATION_LUT0 if op.lut is not None else 0)
    lo, hi = op.act
    w.set("ACTIVATION_MIN", lo)
    w.set("ACTIVATION_MAX", hi)
    w.set("BLOCKDEP", 0)
    ext_w = op.dilation[1] * (kw - 1) + 1
    stripes = width_stripes(ofm.w, op.stride[1], ext_w)

    def run_stripes(opname: str, param: int = 0) -> None:
        """The op once per stripe: the IFM window starts at column
        x0 * stride - left; pads only where the window leaves the map."""
        whole = op.ofm_whole or ofm
        for x0, n in stripes:
            first = x0 * op.stride[1] - left
            last = first + (n - 1) * op.stride[1] + ext_w - 1
            pad_l, pad_r = max(0, -first), (right if x0 + n == ofm.w else max(0, last - (ifm.w - 1)))
            col = max(first, 0)
            tile = (n - 1) * op.stride[1] + ext_w - pad_l - pad_r
            _fmap_registers(w, "IFM", ifm, places[op.ifm].offset + col * ifm.c + (c0 if per_channel else 0),
                            op.ifm_zp, tile_w=tile if len(stripes) > 1 else None)
            w.set("IFM_PAD_LEFT", pad_l)
            w.set("IFM_PAD_RIGHT", pad_r)
            _fmap_registers(w, "OFM", whole, places[op.ofm].offset + op.ofm_at + x0 * whole.c + c0, op.ofm_zp,
                            tile_w=n if len(stripes) > 1 else None)
            w.set("OFM_WIDTH_M1", n - 1)
            w.op(opname, param)
    if op.weights is None:
        run_stripes("POOL", POOL_MODES[op.kind])
        return 0
    records = scale_records(op.bias[c0:c0 + cn], op.scales[c0:c0 + cn])
    values = ordered_weights(op.weights[c0:c0 + cn], depthwise=op.kind == "depthwise",
                             block_depth=blk.depth, ofm_ublock=cfg.ofm_ublock_depth,
                             dilation=op.dilation)
    stream = encode_weights(values)
    scale_base = len(const)
    const += records
    weight_base = len(const)
    const += stream
    weight_bytes[op.node] = weight_bytes.get(op.node, 0) + len(records) + len(stream)
    region, used = REGION_CONST, 0
    if fast_scratch:
        # Dedicated_Sram: records and stream (adjacent in region 0) into the
        # fast scratch, once the previous op no longer reads it (§5.4).
        used = len(records) + len(stream)
        if used > fast_scratch:
            raise ValueError(f"{op.node}: {used} bytes of weights exceed the fast scratch "
                             f"({fast_scratch})")
        w.op("KERNEL_WAIT", 0)
        w.set("DMA0_SRC_REGION", REGION_CONST)
        w.address("DMA0_SRC", scale_base)
        w.set("DMA0_DST_REGION", REGION_FAST)
        w.address("DMA0_DST", 0)
        w.address("DMA0_LEN", used)
        w.op("DMA_START", 0)
        w.op("DMA_WAIT", 0)
        region, scale_base, weight_base = REGION_FAST, 0, len(records)
    w.set("WEIGHT_REGION", region)
    w.address("WEIGHT_BASE", weight_base)
    w.set32("WEIGHT_LENGTH", len(stream))
    w.set("SCALE_REGION", region)
    w.address("SCALE_BASE", scale_base)
    w.set32("SCALE_LENGTH", len(records))
    run_stripes("CONV" if op.kind == "conv" else "DEPTHWISE")
    return used


def _ew_step(w: StreamWriter, cfg: NpuConfig, mode: str, shape: Fmap, ifm: Tuple[int, int, int],
             ifm2, ofm: Tuple[int, int, int], shift: int = 0, act=(-32768, 32767)) -> None:
    """One ELEMENTWISE op over `shape`. ifm, ofm: (region-1 offset, element
    bytes, zero point); ifm2: ("scalar", value) or ("map", region, offset,
    shape) of an int32 map, broadcast along its size-1 dimensions. Output
    scale 1 >> shift in DBL rounding."""
    i_off, i_elem, i_zp = ifm
    o_off, o_elem, o_zp = ofm
    size = {1: 0, 4: 2}
    stripes = width_stripes(shape.w)
    striped = len(stripes) > 1
    w.set("IFM_DEPTH_M1", shape.c - 1)
    w.set("IFM_PRECISION", 1 | size[i_elem] << 2)
    w.set("IFM_UPSCALE", 0)
    w.set("OFM_HEIGHT_M1", shape.h - 1)
    w.set("OFM_DEPTH_M1", shape.c - 1)
    w.set("OFM_PRECISION", 1 | size[o_elem] << 1 | 1 << 8 | ROUND_DBL << 14)
    w.set32("OFM_SCALE", 1, shift)
    tensor2 = ifm2[0] == "map"
    if tensor2:
        _, region, offset, shape2 = ifm2
        # a size-1 dimension of IFM2 is repeated over the OFM (IFM2_BROADCAST [0] H, [1] W, [2] C)
        flags = (shape2.h == 1 < shape.h) | (shape2.w == 1 < shape.w) << 1 | (shape2.c == 1 < shape.c) << 2
        w.set("IFM2_PRECISION", 1 | size[INT32] << 2)
        w.set("IFM2_BROADCAST", flags)
    else:
        w.set("IFM2_SCALAR", ifm2[1])
        w.set("IFM2_ZERO_POINT", 0)
        w.set("IFM2_PRECISION", 1 | size[i_elem] << 2)
        w.set("IFM2_BROADCAST", 0x80)
    blk = choose_block_config(cfg, OpShape("elementwise", (shape.h, shape.w, shape.c),
                                           (shape.h, shape.w, shape.c), ifm_bits=8 * i_elem,
                                           ofm_bits=8 * o_elem, has_ifm2=tensor2))
    _block_registers(w, blk)
    w.set("IFM2_IB_START", blk.ifm2_ib_start)
    w.set("ACTIVATION", 0)
    w.set("ACTIVATION_MIN", act[0])
    w.set("ACTIVATION_MAX", act[1])
    w.set("BLOCKDEP", 0)
    for x0, n in stripes:       # side by side when wider than one op can be
        _fmap_registers(w, "IFM", shape, i_off + x0 * shape.c * i_elem, i_zp, i_elem,
                        tile_w=n if striped else None)
        _fmap_registers(w, "OFM", shape, o_off + x0 * shape.c * o_elem, o_zp, o_elem,
                        tile_w=n if striped else None)
        w.set("OFM_WIDTH_M1", n - 1)
        if tensor2:
            step = 0 if shape2.w == 1 else x0 * shape2.c * INT32
            _fmap_registers(w, "IFM2", shape2, offset + step, 0, INT32, region,
                            tile_w=(1 if shape2.w == 1 else n) if striped else None)
        w.op("ELEMENTWISE", EW_MODES[mode])


def _emit_binary(w: StreamWriter, cfg: NpuConfig, op: NpuOp, places: Dict[str, Placed],
                 const: bytearray) -> None:
    """CMSIS-NN's int8 add (or mul) in int32 steps the oracles pin (spec §8.1:
    the minimal example's int8 -> int32 ADD with a scalar 0, 32-bit MUL by a
    region-0 constant with a shift, 32-bit ADD; §8.2: 32-bit SHL):
      add: t = (x - zp) << 20, t = R(t * M, 31 - S) per operand, t_a + t_b,
           then R(sum * Mo, 31 - So) + out zp, clamped;
      mul: t = x - zp per operand, t_a * t_b, then R(product * Mo, 31 - So).
    R is DBL: for shifts above 31 it is TFLite's double rounding, which is
    CMSIS-NN's doubling high multiply and rounding shift (§5.1); that DBL
    applies to 32-bit MUL as it does to the conv output stage is inferred."""
    shape = op.ofm_shape
    shape2 = op.ifm2_shape or shape
    one = Fmap(1, 1, 1)
    ta, tb = (places[t].offset for t in temporaries(op))
    w.set32("OPA_SCALE", 1)
    w.set32("OPB_SCALE", 1)

    def constant(m: int) -> int:
        at = len(const)
        const.extend(int(m).to_bytes(4, "little", signed=True) + bytes(ALIGN - INT32))
        return at
    for src, zp, t, key, sh in ((op.ifm, op.ifm_zp, ta, "a", shape),
                                (op.ifm2, op.ifm2_zp, tb, "b", shape2)):
        _ew_step(w, cfg, "ADD", sh, (places[src].offset, 1, zp), ("scalar", 0), (t, INT32, 0))
        if op.kind == "add":
            _ew_step(w, cfg, "SHL", sh, (t, INT32, 0), ("scalar", ADD_LEFT_SHIFT), (t, INT32, 0))
            m, e = op.requant[key]
            _ew_step(w, cfg, "MUL", sh, (t, INT32, 0), ("map", REGION_CONST, constant(m), one),
                     (t, INT32, 0), 31 - e)
    _ew_step(w, cfg, "ADD" if op.kind == "add" else "MUL", shape, (ta, INT32, 0),
             ("map", REGION_SCRATCH, tb, shape2), (ta, INT32, 0))
    m, e = op.requant["out"]
    _ew_step(w, cfg, "MUL", shape, (ta, INT32, 0), ("map", REGION_CONST, constant(m), one),
             (places[op.ofm].offset, 1, op.ofm_zp), 31 - e, op.act)
