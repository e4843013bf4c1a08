"""OFM block choice and SHRAM layout of one Ethos-U55/U65 operation: the registers
OFM_BLK_WIDTH/HEIGHT/DEPTH_M1, IFM_IB_END, AB_START, IFM2_IB_START and ACC_FORMAT
(spec ethos-u-npu.md §3.3; facts and sources in docs/ethos-u-compiler-facts.md).

The NPU computes the OFM one block at a time. For each block it holds, in its
shared buffer RAM (SHRAM, 1 KiB banks, one SHRAM per core), a double-buffered IFM
block (the IFM area the OFM block reads, see `ifm_block`), for convolutions and
pools a double-buffered accumulator block, for binary elementwise ops a second
IFM buffer, and at the end the LUT. The layout rules and numbers are those of
Arm's Vela compiler (architecture_features.py, architecture_allocator.py, read at
nxp-imx/ethos-u-vela@a6f65663, 3.10); this is ptec's own code. Bank indices:

    0 .. 1                 reserved for the output (2 banks)
    2 .. IB_END-1          IFM buffer (elementwise: IFM up to IFM2_IB_START, IFM2 after)
    AB_START .. end-1      accumulators (elementwise: none, AB_START = IB_END = end)
    end .. banks-1         LUT / reserved end banks (2 KiB; on 16-bank SHRAMs only with a LUT)

The registers hold bank numbers, i.e. KiB offsets into one core's SHRAM.

Block choice: `choose_block_config` runs Vela's own search (find_block_config): every
block of micro-block multiples up to 32 high, 64 wide and 128 deep (depths in steps
of 16 below the OFM depth) whose layout fits is scored by the IFM and weight bytes it
fetches per OFM element (elementwise: by the number of blocks), halved when two IFM
blocks hold the whole IFM; the lowest score wins (on an equal score a later block wins
only if it is at most 4x4 and its IFM block covers at least as much of the IFM).
On the three Vela streams in shared/models this picks Vela's block for all 130
operations (ops Vela split into OFM depth slices scored on their whole OFM, as Vela
scores them; tests/python/test_block_config.py). Not modelled, changing at most which
legal block wins: Vela's striping of cascaded ops (it scores the stripe), a larger IFM2
steering the score, fully connected layers (Vela scores them without weight fetches),
and Vela's allocator guessing the weight order with a strict ">" where its weight
encoder uses ">=", and unary elementwise ops, for which Vela reserves an IFM2 buffer
they never read (here has_ifm2=False reserves none; the registers are the same).
Not modelled, conservative: IFM_UPSCALE (the IFM block computed here is then larger
than the NPU needs).

Weight order: ptec writes depth-first weights (KERNEL_STRIDE[2] = 0, weight_order.py),
so every function here assumes depth-first for CONV unless `part_kernel=True` (Vela's
part-kernel-first streams; `vela_part_kernel_first` is Vela's rule for choosing it).
The IFM block of a CONV holds 32 channels depth-first, 16 part-kernel-first.

Standard library only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from .npu_config import LUT_BYTES, NpuConfig

# --------------------------------------------------------------------------
# Facts (Vela architecture_features.py: accelerator_configs, SHRAMConfig,
# SHRAMElements, ofm_block_max, OFMSplitDepth, SubKernelMax). Keyed by the MACs of
# one core: the u65-512 is two u65-256 cores, each with its own 48-bank SHRAM.

BANK_BYTES = 1024                  # SHRAM bank; the registers count banks
OUTPUT_BANKS = 2                   # banks 0..1, reserved for the output
OFM_BLOCK_MAX = (32, 64, 128)      # (height, width, depth)
SPLIT_DEPTH = 16                   # block depths step by 16 while below the OFM depth
SUB_KERNEL_MAX = 8                 # the IFM block covers at most 8 kernel rows/columns
IFM_UBLOCK_DEPTH = 8               # IFM micro-block depth, all configurations

# OFM micro-block (height, width, depth) = the smallest block; the depth equals
# NpuConfig.ofm_ublock_depth, which is checked against it.
_UBLOCK = {256: (2, 2, 8), 128: (1, 2, 8), 64: (1, 1, 8), 32: (1, 1, 4)}

# Bank granules: each area's bank count is rounded up to a multiple of these.
# Keys: ("ifm", bits), ("ifm_ew", bits) for elementwise IFMs, ("acc", bits).
_GRANULES = {
    256: {("ifm", 8): 8, ("ifm", 16): 8, ("ifm_ew", 8): 8, ("ifm_ew", 16): 8, ("ifm", 32): 16,
          ("acc", 16): 8, ("acc", 32): 16, ("acc", 40): 20},
    128: {("ifm", 8): 4, ("ifm", 16): 4, ("ifm_ew", 8): 4, ("ifm_ew", 16): 4, ("ifm", 32): 8,
          ("acc", 16): 4, ("acc", 32): 8, ("acc", 40): 12},
    64: {("ifm", 8): 2, ("ifm", 16): 2, ("ifm_ew", 8): 2, ("ifm_ew", 16): 2, ("ifm", 32): 4,
         ("acc", 16): 4, ("acc", 32): 4, ("acc", 40): 8},
    32: {("ifm", 8): 2, ("ifm", 16): 2, ("ifm_ew", 8): 2, ("ifm_ew", 16): 2, ("ifm", 32): 4,
         ("acc", 16): 4, ("acc", 32): 4, ("acc", 40): 4},
}

ACC_I32, ACC_I40 = 0, 1            # ACC_FORMAT values (spec §3.3)
KINDS = ("conv", "depthwise", "pool", "reduce_sum", "elementwise")


class BlockConfigError(ValueError):
    """An operation ptec cannot give a block: one line naming what does not fit."""


@dataclass(frozen=True)
class OpShape:
    kind: str                 # "conv", "depthwise", "pool", "elementwise" (also "reduce_sum")
    ifm: Tuple[int, int, int]  # (height, width, depth) of the input feature map
    ofm: Tuple[int, int, int]  # (height, width, depth)
    kernel: Tuple[int, int] = (1, 1)    # (height, width), undilated
    stride: Tuple[int, int] = (1, 1)
    dilation: Tuple[int, int] = (1, 1)
    ifm_bits: int = 8
    ofm_bits: int = 8          # checked, but Vela's layout does not depend on it
    has_ifm2: bool = False     # elementwise with a tensor IFM2 (False: scalar or unary)
    uses_lut: bool = False


@dataclass(frozen=True)
class BlockConfig:
    width: int
    height: int
    depth: int                 # the OFM block
    ib_end: int
    ab_start: int
    ifm2_ib_start: int         # register values as the NPU takes them (bank numbers)
    acc_format: int            # 0 I32, 1 I40


# --------------------------------------------------------------------------
# Per-configuration geometry

@dataclass(frozen=True)
class _Shram:
    banks: int                 # one core's SHRAM, in banks
    ublock: Tuple[int, int, int]
    granules: Dict[Tuple[str, int], int]
    end_banks: int             # always reserved at the end (the LUT's place when > 16 banks)
    lut_banks: int             # the LUT area, whether or not reserved by default


def _shram(cfg: NpuConfig) -> _Shram:
    per_core = cfg.macs // cfg.cores
    if per_core not in _UBLOCK:
        raise BlockConfigError(f"{cfg.name}: no SHRAM facts for {per_core} MACs per core")
    ublock = _UBLOCK[per_core]
    assert ublock[2] == cfg.ofm_ublock_depth, cfg.name
    banks = cfg.shram_kib * 1024 // BANK_BYTES
    lut_banks = LUT_BYTES // BANK_BYTES
    # Vela: 2 end banks are reserved on SHRAMs of more than 16 banks; the LUT sits there
    # (npu_config.lut_address is the same place on every configuration).
    end_banks = lut_banks if banks > 16 else 0
    assert cfg.lut_address == (banks - lut_banks) * BANK_BYTES, cfg.name
    return _Shram(banks, ublock, _GRANULES[per_core], end_banks, lut_banks)


def _round_up(v: int, m: int) -> int:
    return -(-v // m) * m


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _kind(op: OpShape) -> str:
    """The op's kind as the allocator treats it: a pool whose IFM and OFM depths
    differ is a REDUCE_SUM (it sums all IFM channels into OFM depth 1, §5.2)."""
    if op.kind not in KINDS:
        raise BlockConfigError(f"unknown NPU operation kind {op.kind!r}; one of "
                               + ", ".join(KINDS))
    if op.kind == "pool" and op.ifm[2] != op.ofm[2]:
        return "reduce_sum"
    return op.kind


def _check_op(op: OpShape) -> str:
    kind = _kind(op)
    for name, v in (("ifm", op.ifm), ("ofm", op.ofm)):
        if len(v) != 3 or min(v) < 1:
            raise BlockConfigError(f"{kind}: {name} shape {tuple(v)} is not three positive sizes")
    for name, v in (("kernel", op.kernel), ("stride", op.stride), ("dilation", op.dilation)):
        if len(v) != 2 or min(v) < 1:
            raise BlockConfigError(f"{kind}: {name} {tuple(v)} is not two positive sizes")
    for name, bits in (("ifm", op.ifm_bits), ("ofm", op.ofm_bits)):
        if bits not in (8, 16, 32):
            raise BlockConfigError(f"{kind}: {name} of {bits} bits; the NPU takes 8, 16 or 32")
    if op.has_ifm2 and kind != "elementwise":
        raise BlockConfigError(f"{kind}: only elementwise operations read an IFM2")
    return kind


def _kernel_extent(op: OpShape) -> Tuple[int, int]:
    """(height, width) of the dilated kernel; elementwise ops have none."""
    if op.kind == "elementwise":
        return 1, 1
    return tuple((k - 1) * d + 1 for k, d in zip(op.kernel, op.dilation))


def _stride(op: OpShape) -> Tuple[int, int]:
    return (1, 1) if op.kind == "elementwise" else tuple(op.stride)


def vela_part_kernel_first(op: OpShape) -> bool:
    """Vela's choice of weight order for a CONV (weight_compressor.py): part-kernel-first
    when the IFM has at most 8 channels or when it uses the MACs at least as well
    (IFM depth / depth rounded to 8, times kernel elements / elements rounded to 4
    (8-bit) or 2 (16-bit)) as depth-first does (depth / depth rounded to 32 or 16).
    Vela uses depth-first for fully connected layers whatever this says."""
    if op.kind != "conv":
        return False
    depth = op.ifm[2]
    if depth <= 8:
        return True
    elements = op.kernel[0] * op.kernel[1]
    eight_bit = op.ifm_bits == 8
    depth_first = depth / _round_up(depth, 32 if eight_bit else 16)
    part_kernel = (depth / _round_up(depth, 8)) * (elements / _round_up(elements, 4 if eight_bit else 2))
    return part_kernel >= depth_first


def accumulator_format(op: OpShape) -> int:
    """ACC_FORMAT: 40-bit accumulators for a 16-bit IFM except in pools (Vela's
    _acc_type; ptec's tensors are always quantized, Vela's "scaled" condition),
    otherwise 32-bit."""
    kind = _kind(op)
    return ACC_I40 if op.ifm_bits == 16 and kind != "pool" else ACC_I32


def _ifm_depth_per_block(op: OpShape, kind: str, block_depth: int, part_kernel: bool) -> int:
    """IFM channels held per block. Depthwise, pool and elementwise ops read the same
    channels they write; CONV and REDUCE_SUM read IFM blocks of up to 32 channels
    (16 part-kernel-first), or 16 rounded to 4 with a 16-bit IFM, in micro-blocks of 8."""
    if kind in ("depthwise", "pool", "elementwise"):
        return block_depth
    depth = op.ifm[2]
    if op.ifm_bits == 16:
        return _round_up(min(depth, 16), 4)
    return _round_up(min(depth, 16 if part_kernel else 32), IFM_UBLOCK_DEPTH)


def ifm_block(cfg: NpuConfig, op: OpShape, height: int, width: int, depth: int,
              part_kernel: bool = False) -> Tuple[int, int, int]:
    """(height, width, depth) of the IFM area an OFM block of that size reads:
    (block - 1) * stride + min(dilated kernel, 8) on each axis, rounded up to the
    micro-block; kernels beyond 8 run as 8x8 sub-kernels over the same buffer."""
    kind = _check_op(op)
    sh = _shram(cfg)
    return _ifm_block(sh, op, kind, height, width, depth, part_kernel)


def _ifm_block(sh: _Shram, op: OpShape, kind: str, height: int, width: int, depth: int,
               part_kernel: bool) -> Tuple[int, int, int]:
    (eh, ew), (sy, sx) = _kernel_extent(op), _stride(op)
    ih = _round_up((height - 1) * sy + min(eh, SUB_KERNEL_MAX), sh.ublock[0])
    iw = _round_up((width - 1) * sx + min(ew, SUB_KERNEL_MAX), sh.ublock[1])
    return ih, iw, _ifm_depth_per_block(op, kind, depth, part_kernel)


@dataclass(frozen=True)
class _Layout:
    ifm: Tuple[int, int, int]  # IFM block
    ifm_block_bytes: int       # one IFM block (single buffer)
    acc_block_bytes: int       # one accumulator block (0 for elementwise)
    ifm_banks: int             # double-buffered, granule-rounded
    ifm2_banks: int
    acc_banks: int
    end: int                   # first bank of the LUT / reserved end
    ib_end: int
    ab_start: int
    ifm2_ib_start: int
    acc_format: int

    @property
    def fits(self) -> bool:
        used = OUTPUT_BANKS + self.ifm_banks + self.ifm2_banks + self.acc_banks
        return used <= self.end


def _layout(sh: _Shram, op: OpShape, kind: str, height: int, width: int, depth: int,
            part_kernel: bool) -> _Layout:
    """Vela's SHRAM layout (_try_block_config) of one OFM block."""
    ifm = _ifm_block(sh, op, kind, height, width, depth, part_kernel)
    elementwise = kind == "elementwise"
    # IFM: H*W*roundup(C*bytes, 8), double-buffered, rounded to the IFM granule
    ifm_bytes = ifm[0] * ifm[1] * _round_up(ifm[2] * op.ifm_bits // 8, 8)
    granule = sh.granules[("ifm_ew" if elementwise and op.ifm_bits != 32 else "ifm", op.ifm_bits)]
    ifm_banks = _round_up(2 * _ceil_div(ifm_bytes, BANK_BYTES), granule)
    end = sh.banks - max(sh.end_banks, sh.lut_banks if op.uses_lut else 0)
    acc_format = accumulator_format(op)
    if elementwise:
        acc_bytes = acc_banks = 0
        ifm2_banks = ifm_banks if op.has_ifm2 else 0
        ifm2_start = OUTPUT_BANKS + ifm_banks
        ib_end = ab_start = end
    else:
        # Vela's 1-D case (fit_block_for_ofm): an OFM one row high under a one-row
        # kernel keeps one row of accumulators where the micro-block is two high.
        acc_height = height
        if op.ofm[0] == 1 and op.kernel[0] == 1 and sh.ublock[0] == 2:
            acc_height = min(height, 1)
        acc_bits = 40 if acc_format == ACC_I40 else 32
        acc_bytes = acc_height * width * _round_up(depth, 8) * acc_bits // 8
        acc_banks = _round_up(2 * _ceil_div(acc_bytes, BANK_BYTES), sh.granules[("acc", acc_bits)])
        ifm2_banks = 0
        ib_end = ifm2_start = OUTPUT_BANKS + ifm_banks
        ab_start = end - acc_banks
    return _Layout(ifm, ifm_bytes, acc_bytes, ifm_banks, ifm2_banks, acc_banks, end,
                   ib_end, ab_start, ifm2_start, acc_format)


def _legal(sh: _Shram, height: int, width: int, depth: int) -> Optional[str]:
    """Vela's validity test of a block: each size in 1..max and a micro-block multiple.
    Vela rounds even an OFM shallower than the micro-block up to it (X: OFM depth 1
    runs with block depth 8 in all three oracle streams)."""
    for name, v, top, u in zip(("height", "width", "depth"), (height, width, depth),
                               OFM_BLOCK_MAX, sh.ublock):
        if not 1 <= v <= top or v % u:
            return f"block {name} {v} is not a multiple of {u} in 1..{top}"
    return None


def _describe(op: OpShape, kind: str) -> str:
    text = f"{kind} {op.ifm_bits}-bit IFM {'x'.join(map(str, op.ifm))} -> OFM {'x'.join(map(str, op.ofm))}"
    if kind != "elementwise":
        text += (f", kernel {op.kernel[0]}x{op.kernel[1]} stride {op.stride[0]}x{op.stride[1]}"
                 f" dilation {op.dilation[0]}x{op.dilation[1]}")
    return text


def _config(lay: _Layout, height: int, width: int, depth: int) -> BlockConfig:
    return BlockConfig(width=width, height=height, depth=depth, ib_end=lay.ib_end,
                       ab_start=lay.ab_start, ifm2_ib_start=lay.ifm2_ib_start,
                       acc_format=lay.acc_format)


# --------------------------------------------------------------------------
# Public API

def micro_block(cfg: NpuConfig) -> Tuple[int, int, int]:
    """(height, width, depth) of the OFM micro-block: the smallest legal block, and the
    step of every block size."""
    return _shram(cfg).ublock


def block_config_for(cfg: NpuConfig, op: OpShape, height: int, width: int, depth: int,
                     part_kernel: bool = False) -> BlockConfig:
    """The registers of a given OFM block (Vela's try_block_config); BlockConfigError if
    the block is not legal or does not fit."""
    kind = _check_op(op)
    sh = _shram(cfg)
    why = _legal(sh, height, width, depth)
    if why:
        raise BlockConfigError(f"{_describe(op, kind)} on {cfg.name}: {why}")
    lay = _layout(sh, op, kind, height, width, depth, part_kernel)
    if not lay.fits:
        raise BlockConfigError(f"{_describe(op, kind)} on {cfg.name}: block {height}x{width}x{depth} "
                               f"needs {_needs(lay)}")
    return _config(lay, height, width, depth)


def _needs(lay: _Layout) -> str:
    """What a layout asks for against what there is, e.g. "2 KiB output + 16 KiB IFM +
    4 KiB accumulators = 22 KiB, 14 KiB usable"."""
    parts = [(OUTPUT_BANKS, "output"), (lay.ifm_banks, "IFM"), (lay.ifm2_banks, "IFM2"),
             (lay.acc_banks, "accumulators")]
    total = sum(n for n, _ in parts)
    text = " + ".join(f"{n} KiB {what}" for n, what in parts if n)
    return f"{text} = {total} KiB, {lay.end} KiB usable"


def shram_usage(cfg: NpuConfig, op: OpShape, block: BlockConfig,
                part_kernel: bool = False) -> Dict[str, int]:
    """Bytes of each SHRAM area the block needs, from its width, height and depth (the
    register fields are not read; `check_block` compares them). Areas, in bank order:
    output, ifm, ifm2, accumulators (each a whole number of banks, double-buffered and
    granule-rounded), lut (the LUT or reserved end banks); shram = one core's SHRAM;
    free = shram minus all areas (negative: does not fit). Also ifm_block / acc_block:
    the bytes of one IFM / accumulator block before double-buffering and rounding."""
    kind = _check_op(op)
    sh = _shram(cfg)
    lay = _layout(sh, op, kind, block.height, block.width, block.depth, part_kernel)
    areas = {
        "output": OUTPUT_BANKS * BANK_BYTES,
        "ifm": lay.ifm_banks * BANK_BYTES,
        "ifm2": lay.ifm2_banks * BANK_BYTES,
        "accumulators": lay.acc_banks * BANK_BYTES,
        "lut": (sh.banks - lay.end) * BANK_BYTES,
    }
    shram = sh.banks * BANK_BYTES
    areas["shram"] = shram
    areas["free"] = shram - sum(v for k, v in areas.items() if k != "shram")
    areas["ifm_block"] = lay.ifm_block_bytes
    areas["acc_block"] = lay.acc_block_bytes
    return areas


def check_block(cfg: NpuConfig, op: OpShape, block: BlockConfig,
                part_kernel: bool = False) -> Optional[str]:
    """None if the block is legal, its areas fit the SHRAM and its register values place
    them without overlap; else the first reason, one line. Register rules: the IFM buffer
    [2, IB_END) holds the IFM area (elementwise with an IFM2: IFM in [2, IFM2_IB_START),
    IFM2 in [IFM2_IB_START, IB_END)); accumulators [AB_START, AB_START + area) end before
    the LUT / reserved end banks; IB_END <= AB_START; ACC_FORMAT as `accumulator_format`."""
    kind = _check_op(op)
    sh = _shram(cfg)
    b = block
    why = _legal(sh, b.height, b.width, b.depth)
    if why:
        return why
    lay = _layout(sh, op, kind, b.height, b.width, b.depth, part_kernel)
    if not lay.fits:
        return f"block {b.height}x{b.width}x{b.depth} needs {_needs(lay)}"
    if b.acc_format != lay.acc_format:
        return f"ACC_FORMAT {b.acc_format}, the operation needs {lay.acc_format}"
    if not b.ib_end <= b.ab_start <= lay.end:
        return f"IB_END {b.ib_end} / AB_START {b.ab_start} not ordered before the end bank {lay.end}"
    if kind == "elementwise" and op.has_ifm2:
        if b.ifm2_ib_start < OUTPUT_BANKS + lay.ifm_banks:
            return (f"IFM2_IB_START {b.ifm2_ib_start} leaves the IFM {b.ifm2_ib_start - OUTPUT_BANKS}"
                    f" of {lay.ifm_banks} banks")
        if b.ib_end - b.ifm2_ib_start < lay.ifm2_banks:
            return (f"IFM2 area [{b.ifm2_ib_start}, {b.ib_end}) is smaller than its "
                    f"{lay.ifm2_banks} banks")
    elif b.ib_end < OUTPUT_BANKS + lay.ifm_banks:
        return f"IB_END {b.ib_end} leaves the IFM {b.ib_end - OUTPUT_BANKS} of {lay.ifm_banks} banks"
    if lay.end - b.ab_start < lay.acc_banks:
        return (f"AB_START {b.ab_start} leaves the accumulators {lay.end - b.ab_start} of "
                f"{lay.acc_banks} banks")
    return None


def choose_block_config(cfg: NpuConfig, op: OpShape, part_kernel: bool = False) -> BlockConfig:
    """The OFM block and SHRAM registers for op on cfg, by Vela's search and score
    (find_block_config; see the module docstring). BlockConfigError, one line, when
    not even the smallest block (one micro-block) fits."""
    kind = _check_op(op)
    sh = _shram(cfg)
    uh, uw, ud = sh.ublock
    oh, ow, od = op.ofm
    ih_full, iw_full, id_full = op.ifm
    equal_depth = kind in ("depthwise", "pool", "elementwise")
    convolution = kind in ("conv", "depthwise")
    eh, ew = _kernel_extent(op)
    repeats = _ceil_div(ew, SUB_KERNEL_MAX) * _ceil_div(eh, SUB_KERNEL_MAX)
    weight_wh = eh * ew if convolution else 0
    ofm_elements = oh * ow * od
    ifm_elements = ih_full * iw_full * id_full

    top_h = _round_up(min(oh, OFM_BLOCK_MAX[0]), uh)
    top_w = _round_up(min(ow, OFM_BLOCK_MAX[1]), uw)
    top_d = _round_up(min(od, OFM_BLOCK_MAX[2]), ud)

    def next_depth(d: int) -> int:
        return _round_up(d, SPLIT_DEPTH) if d < od else d

    best = None
    best_cost = math.inf
    best_coverage = math.inf
    depth = next_depth(max(ud, min(top_d, SPLIT_DEPTH)))
    while depth <= top_d:
        failed = set()            # (height, width) of blocks that did not fit at this depth
        for height in range(uh, top_h + 1, uh):
            for width in range(uw, top_w + 1, uw):
                # Vela skips a block whose transpose already failed at this depth
                if (width, height) in failed:
                    continue
                lay = _layout(sh, op, kind, height, width, depth, part_kernel)
                if not lay.fits:
                    failed.add((height, width))
                    continue
                cost = _cost(op, kind, lay, height, width, depth, sh.ublock, equal_depth, weight_wh,
                             repeats, ofm_elements, ifm_elements)
                if cost > best_cost:
                    continue
                if cost == best_cost:
                    ifm_h, ifm_w, _ = lay.ifm
                    coverage = (ih_full * iw_full) / (min(ih_full, ifm_h) * min(iw_full, ifm_w))
                    if not (coverage <= best_coverage and height <= 4 and width <= 4):
                        continue
                    best_coverage = coverage
                else:
                    best_coverage = math.inf
                best_cost = cost
                best = (lay, height, width, depth)
        depth = next_depth(depth + ud)

    if best is None:
        lay = _layout(sh, op, kind, uh, uw, ud, part_kernel)
        raise BlockConfigError(f"{_describe(op, kind)} does not fit the {sh.banks} KiB SHRAM of "
                               f"{cfg.name}: even the smallest block {uh}x{uw}x{ud} needs "
                               f"{_needs(lay)}")
    lay, height, width, depth = best
    return _config(lay, height, width, depth)


def _cost(op: OpShape, kind: str, lay: _Layout, height: int, width: int, depth: int,
          ublock, equal_depth: bool, weight_wh: int, repeats: int, ofm_elements: int,
          ifm_elements: int) -> float:
    """Vela's relative cost of a block: bytes fetched per OFM element (floating point, in
    Vela's order of operations so that ties fall the same way)."""
    oh, ow, od = op.ofm
    if kind == "elementwise":
        cost = max(ofm_elements / (height * width * depth), 1)
    else:
        bh = height
        if op.ofm[0] == 1 and op.kernel[0] == 1 and ublock[0] == 2:
            bh = min(height, 1)
        full_h, full_w, full_d = _ceil_div(oh, bh), _ceil_div(ow, width), _ceil_div(od, depth)
        part_h, part_w, part_d = oh / bh, ow / width, od / depth
        ifm_depth = op.ifm[2]
        weights = weight_wh * ifm_depth * (full_w * full_h)
        if kind != "depthwise":
            weights *= depth * part_d
        ifm_h, ifm_w, _ = lay.ifm
        ifm = (ifm_w * ifm_h) * ifm_depth * repeats * (part_w * part_h)
        if not equal_depth:
            ifm *= full_d
        cost = (ifm + weights) / ofm_elements
    ifm_h, ifm_w, ifm_d = lay.ifm
    if ifm_elements < ifm_h * ifm_w * ifm_d * 2:
        cost = cost / 2
    return cost
