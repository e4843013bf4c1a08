"""A linter for Ethos-U55/U65 command streams (spec ethos-u-npu.md §2-§5).

Every stream ptec's own compiler writes must pass it, and so must every real Vela stream in
shared/models (tests/python/test_stream_lint.py). It enforces the hardware rules the driver
headers state and the rules Vela's register-level generator follows, so it rejects what
Vela would never emit. It never runs anything.

    issues = lint_cop(cmd_data, "ethos-u55-256", {0: len(flash), 1: scratch_bytes})
    for i in issues:
        print(i.command_index, hex(i.offset), i.rule, i.message)

The rules, what each checks and where it comes from are listed in RULES and, with their
sources, in docs/ethos-u-lint.md. Sources named in comments: Vela = nxp-imx/ethos-u-vela
@a6f65663 (3.10) `ethosu/vela/...`; header = Arm ethos-u-core-driver
`src/ethosu55_interface.h` / `ethosu65_interface.h` (shared/third_party); driver =
`src/ethosu_driver.c`. The Vela computations below (SHRAM layout, BLOCKDEP, wait
dependencies, feature-map address ranges) are rewritten here from the published formulas;
this module deliberately does not import ptec's own block_config.py, so that it stays an
independent oracle.

Offsets: an issue found in the command stream carries the command's index and its byte
offset in the stream (the NPU's QREAD); an issue in the COP1 framing has command_index -1
and the byte offset inside the COP1 payload.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# _ADDRESS_REGISTERS: the cmd1 registers whose parameter [7:0] holds address bits [39:32]
# on U65, as the decoder treats them (spec §3.1)
from .command_stream import (COMPUTE_OPS, OPERATIONS, CommandStreamError, Command,
                             _ADDRESS_REGISTERS, decode_stream, parse_cop)
from .npu_config import LUT_BYTES, NpuConfig, npu_config


@dataclass
class LintIssue:
    command_index: int
    offset: int
    rule: str
    message: str                    # one line


# rule -> what it checks (one line); docs/ethos-u-lint.md gives the sources
RULES: Dict[str, str] = {
    "cop-format": "the payload is a well-formed COP1 (magic, records, one OPTIMIZER_CONFIG "
                  "and one COMMAND_STREAM)",
    "cop-config": "the OPTIMIZER_CONFIG word is Vela's word for the accelerator",
    "cop-align": "the command stream starts 16-byte aligned in the payload",
    "structure-size": "the stream is smaller than 16 MiB",
    "structure-truncated": "every cmd1 has its payload word",
    "structure-stop": "the stream ends with NPU_OP_STOP 0xFFFF",
    "structure-trailing": "nothing follows NPU_OP_STOP",
    "structure-opcode": "every opcode is known, and exists on this product",
    "structure-control": "control bits [15:14] are 0 (cmd0) or 1 (cmd1), bits [13:10] are 0",
    "reserved-bits": "no reserved or Vela-unused bits set in a parameter or payload",
    "reg-unset": "every register an operation reads was set earlier in the stream",
    "range-stride": "kernel strides are 1..3",
    "range-dilation": "dilation only on CONV/DEPTHWISE; dilated extents are consistent",
    "range-kernel": "dilated kernel extents within Vela's limits",
    "range-pad": "pads within the register widths and smaller than the kernel; the IFM "
                 "extent is positive",
    "range-depth": "IFM depth equals OFM depth for DEPTHWISE/POOL/ELEMENTWISE; REDUCE_SUM "
                   "writes depth 1",
    "range-zero-point": "zero points within their feature map's type; 32-bit IFMs use 0",
    "range-clamp": "ACTIVATION_MIN <= ACTIVATION_MAX, both within the OFM (or clip) type",
    "range-activation": "ACTIVATION function and clip range are defined values",
    "range-round": "OFM round mode is not reserved; IFM/IFM2 round modes are 0",
    "range-precision": "precision fields are not reserved; IFM2 matches the IFM size",
    "range-mode": "POOL/ELEMENTWISE modes and IFM_UPSCALE are defined values",
    "range-broadcast": "IFM2_BROADCAST is scalar or per-dimension, not both",
    "range-acc-format": "ACC_FORMAT is I32, or I40 with a 16-bit IFM",
    "ofm-block": "OFM block dims are multiples of the micro-block, within the maxima",
    "parallel-mode": "PARALLEL_MODE only on U65 and equal to cores-1; second-core weight "
                     "registers only on two-core configs",
    "shram-fit": "IB_END/AB_START/IFM2_IB_START are even, inside SHRAM and leave room for the "
                 "IFM buffers and accumulators the block config needs",
    "shram-lut": "with a LUT activation the IFM and accumulator buffers end below the LUT area",
    "shram-vela": "IB_END/AB_START/IFM2_IB_START equal Vela's layout for the block config",
    "weights-align": "WEIGHT_BASE and SCALE_BASE are 16-byte aligned",
    "weights-length": "WEIGHT_LENGTH is a non-zero multiple of 16 (0 only for an idle core)",
    "scale-length": "SCALE_LENGTH == roundup(10 * that core's OFM channels, 16)",
    "weights-bounds": "weight and scale streams lie inside their region",
    "fm-align": "feature-map bases aligned (NHCWB16: 16 bytes; NHWC: element size)",
    "fm-strides": "strides aligned as Vela aligns them (NHCWB16 C/Y: 16, X = 16 elements; "
                  "NHWC Y/X: element size)",
    "fm-bounds": "every IFM/IFM2/OFM access lies inside its region",
    "dma-form": "DMAs are 1-D, channel 0, non-empty, from external memory",
    "dma-shram": "a DMA into SHRAM targets the LUT area, 16-byte aligned, on an existing core",
    "dma-bounds": "DMA source and destination lie inside their regions",
    "dep-dma-wait": "an operation waits (DMA_WAIT) for every DMA whose memory it touches",
    "dep-kernel-wait": "a DMA waits (KERNEL_WAIT) for every operation whose memory it touches",
    "dep-blockdep": "BLOCKDEP is at most the safe value Vela's calc_blockdep computes",
    "lut-range": "a LUT activation's table lies inside the LUT area, aligned to its size",
    "lut-missing": "a LUT activation's table was DMA'd into SHRAM and not overwritten since",
}


# --------------------------------------------------------------------------
# Architecture facts (Vela architecture_features.py ArchitectureFeatures.accelerator_configs,
# SHRAMElements; keyed by MACs per core)

# granule order: IFM8, IFM16, IFM8 elementwise, IFM16 elementwise, IFM32, Acc16, Acc32, Acc40
_ARCH = {  # MACs per core: (ofm micro-block (w, h, d), ifm micro-block (w, h, d), granules)
    256: ((2, 2, 8), (2, 2, 8), (8, 8, 8, 8, 16, 8, 16, 20)),
    128: ((2, 1, 8), (2, 1, 8), (4, 4, 4, 4, 8, 4, 8, 12)),
    64: ((1, 1, 8), (1, 1, 8), (2, 2, 2, 2, 4, 4, 4, 8)),
    32: ((1, 1, 4), (1, 1, 8), (2, 2, 2, 2, 4, 4, 4, 4)),
}
_OFM_BLOCK_MAX = (64, 32, 128)        # w, h, d (Vela ofm_block_max; header field widths)
_SUBKERNEL_MAX = (8, 8)               # Vela SubKernelMax (w, h)
_MAX_BLOCKDEP = 3                     # Vela ArchitectureFeatures.MAX_BLOCKDEP
_MAX_OUTSTANDING_KERNELS = 2          # Vela max_outstanding_kernels
_RESERVED_OUTPUT_BANKS = 2            # Vela SHRAMConfig reserved_output_banks
_STREAM_LIMIT = 1 << 24               # Vela generate_command_stream: 16 MiB


@dataclass(frozen=True)
class _Arch:
    cfg: NpuConfig
    ofm_ublock: Tuple[int, int, int]
    ifm_ublock: Tuple[int, int, int]
    granules: Tuple[int, ...]

    @property
    def banks(self) -> int:
        return self.cfg.shram_kib

    @property
    def reserved_end_banks(self) -> int:          # Vela shram_reserved_unused_banks
        return 2 if self.banks > 16 else 0

    def available_banks(self, uses_lut: bool) -> int:   # Vela available_shram_banks
        n = self.banks - self.reserved_end_banks
        if uses_lut and self.reserved_end_banks == 0:
            n -= 2
        return n

    @property
    def max_outstanding_dma(self) -> int:         # Vela: 2 on U65, 1 on U55
        return 2 if self.cfg.is_u65 else 1


def _arch(cfg: NpuConfig) -> _Arch:
    ofm_u, ifm_u, gran = _ARCH[cfg.macs // cfg.cores]
    return _Arch(cfg, ofm_u, ifm_u, gran)


# --------------------------------------------------------------------------
# Register facts (header field widths; Vela never sets custom_dma_cs, so bit 15 of the
# region registers counts as reserved here)

_CMD0_MASKS = {
    "IFM_PAD_TOP": 0x7F, "IFM_PAD_LEFT": 0x7F, "IFM_PAD_RIGHT": 0xFF, "IFM_PAD_BOTTOM": 0xFF,
    "IFM_PRECISION": 0xC3CD, "IFM2_PRECISION": 0xC3CD, "OFM_PRECISION": 0xC1C7,
    "IFM_UPSCALE": 0x3, "IFM_IB_END": 0x3F, "AB_START": 0x3F, "IFM2_IB_START": 0x3F,
    "IFM_REGION": 0x7, "OFM_REGION": 0x7, "IFM2_REGION": 0x7, "WEIGHT_REGION": 0x7,
    "SCALE_REGION": 0x7, "DMA0_SRC_REGION": 0x707, "DMA0_DST_REGION": 0x707,
    "OFM_BLK_WIDTH_M1": 0x3F, "OFM_BLK_HEIGHT_M1": 0x1F, "OFM_BLK_DEPTH_M1": 0x7F,
    "KERNEL_STRIDE": 0x27F, "PARALLEL_MODE": 0x1, "ACC_FORMAT": 0x3, "ACTIVATION": 0x701F,
    "BLOCKDEP": 0x3, "IFM2_BROADCAST": 0xC7,
}
_OP_MASKS = {"NPU_OP_STOP": 0xFFFF, "NPU_OP_IRQ": 0xFFFF, "NPU_OP_CONV": 0,
             "NPU_OP_DEPTHWISE": 0, "NPU_OP_POOL": 0x7, "NPU_OP_ELEMENTWISE": 0x3F,
             "NPU_OP_DMA_START": 0, "NPU_OP_DMA_WAIT": 0xF, "NPU_OP_KERNEL_WAIT": 0x3,
             "NPU_OP_PMU_MASK": 0x1}
_CMD1_PAYLOAD_BITS = {"SCALE_LENGTH": 20, "SCALE1_LENGTH": 20, "OPB_SCALE": 16}
_SHIFT_REGISTERS = ("OFM_SCALE", "OPA_SCALE")      # parameter [5:0] = shift
# registers the U55 header does not define (ethosu55_interface.h cmd0/cmd1 opcodes)
_U65_ONLY = {"PARALLEL_MODE", "DMA0_SKIP0", "DMA0_SKIP1", "WEIGHT1_BASE", "WEIGHT1_LENGTH",
             "SCALE1_BASE", "SCALE1_LENGTH"}
_SECOND_CORE = ("WEIGHT1_BASE", "WEIGHT1_LENGTH", "SCALE1_BASE", "SCALE1_LENGTH")

_POOL_MAX, _POOL_AVERAGE, _POOL_REDUCE_SUM = 0, 1, 2
_EW_MUL, _EW_ADD, _EW_SUB = 0, 1, 2
_EW_UNARY = {5, 6, 7}                  # LRELU, ABS, CLZ (Vela UNARY_ELEMWISE_OPS)
_ACTIVATIONS = {0, 3, 4} | set(range(16, 24))
_CLIP_RANGES = {0: None, 2: (0, 255), 3: (-128, 127), 5: (-32768, 32767)}
_SHRAM = "shram"                       # access-set key of the NPU's internal SHRAM

# Vela's kernel limits on the NPU operation (tflite_supported_operators.py:
# dilated_height_range, dilated_product_range for convolutions; filter_height_range,
# filter_product_range for pooling; tflite_graph_optimiser convert_mean_to_depthwise_conv
# keeps MEAN kernels within the convolution limits)
_CONV_KERNEL_LIMITS = (64, 64 * 64)
_POOL_KERNEL_LIMITS = (256, 256 * 256)

_IFM_REGS = ("IFM_REGION", "IFM_BASE0", "IFM_BASE1", "IFM_BASE2", "IFM_BASE3",
             "IFM_HEIGHT0_M1", "IFM_HEIGHT1_M1", "IFM_WIDTH0_M1", "IFM_DEPTH_M1",
             "IFM_STRIDE_C", "IFM_STRIDE_Y", "IFM_STRIDE_X", "IFM_ZERO_POINT", "IFM_PRECISION",
             "IFM_UPSCALE")
_OFM_REGS = ("OFM_REGION", "OFM_BASE0", "OFM_BASE1", "OFM_BASE2", "OFM_BASE3",
             "OFM_HEIGHT0_M1", "OFM_HEIGHT1_M1", "OFM_WIDTH0_M1", "OFM_HEIGHT_M1",
             "OFM_WIDTH_M1", "OFM_DEPTH_M1", "OFM_STRIDE_C", "OFM_STRIDE_Y", "OFM_STRIDE_X",
             "OFM_ZERO_POINT", "OFM_PRECISION")
_COMMON_REGS = ("ACTIVATION", "ACTIVATION_MIN", "ACTIVATION_MAX", "OFM_BLK_HEIGHT_M1",
                "OFM_BLK_WIDTH_M1", "OFM_BLK_DEPTH_M1", "IFM_IB_END", "AB_START", "ACC_FORMAT",
                "BLOCKDEP")
_KERNEL_REGS = ("IFM_PAD_TOP", "IFM_PAD_LEFT", "IFM_PAD_BOTTOM", "IFM_PAD_RIGHT",
                "KERNEL_HEIGHT_M1", "KERNEL_WIDTH_M1", "KERNEL_STRIDE")
_WEIGHT_REGS = ("WEIGHT_REGION", "WEIGHT_BASE", "WEIGHT_LENGTH", "SCALE_REGION", "SCALE_BASE",
                "SCALE_LENGTH")
_IFM2_REGS = ("IFM2_REGION", "IFM2_BASE0", "IFM2_BASE1", "IFM2_BASE2", "IFM2_BASE3",
              "IFM2_HEIGHT0_M1", "IFM2_HEIGHT1_M1", "IFM2_WIDTH0_M1", "IFM2_STRIDE_C",
              "IFM2_STRIDE_Y", "IFM2_STRIDE_X", "IFM2_IB_START")
_DMA_REGS = ("DMA0_SRC_REGION", "DMA0_SRC", "DMA0_DST_REGION", "DMA0_DST", "DMA0_LEN")


def _s16(v: int) -> int:
    return v - 0x10000 if v & 0x8000 else v


def _round_up(a: int, b: int) -> int:
    return (a + b - 1) // b * b


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _type_range(bits: int, signed: bool) -> Tuple[int, int]:
    if signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# --------------------------------------------------------------------------
# Feature maps as Vela models them (register_command_stream_util.py get_address,
# get_address_range, get_address_ranges, get_address_ranges_for_area; spec §4.2)

@dataclass
class _Fm:
    region: int
    bases: Tuple[int, int, int, int]
    h0: int
    h1: int
    w0: int
    height: int
    width: int
    depth: int
    stride_x: int
    stride_y: int
    stride_c: int
    bits: int
    signed: bool
    brick: bool                      # NHCWB16

    @property
    def elem(self) -> int:
        return self.bits // 8

    def same_layout(self, other: "_Fm") -> bool:
        """Vela's intersects(): same shape and same tile box (sizes and addresses)."""
        return ((self.height, self.width, self.depth) == (other.height, other.width, other.depth)
                and (self.h0, self.h1, self.w0, self.bases)
                == (other.h0, other.h1, other.w0, other.bases))

    def address(self, y: int, x: int, c: int) -> int:
        t = 0
        if x >= self.w0:
            x -= self.w0
            t = 1
            if y >= self.h1:
                y -= self.h1
                t += 2
        elif y >= self.h0:
            y -= self.h0
            t += 2
        e = self.elem
        sc = self.stride_c if self.brick else 16 * e
        sx = 16 * e if self.brick else self.stride_x
        return self.bases[t] + y * self.stride_y + x * sx + (c // 16) * sc + (c % 16) * e

    def range(self, y0, x0, c0, y1, x1, c1) -> Tuple[int, int, int]:
        """(region, start, end) from (y0, x0, c0) to (y1, x1, c1) inclusive, one tile."""
        a0 = self.address(y0, x0, c0)
        a1 = self.address(y1, x1, c1)
        return self.region, a0, a1 + self.elem

    def ranges(self) -> List[Tuple[int, int, int]]:
        h, w, d = self.height, self.width, self.depth
        out = [self.range(0, 0, 0, min(h, self.h0) - 1, min(w, self.w0) - 1, d - 1)]
        t1 = w > self.w0
        t2 = h > self.h0
        if t1:
            out.append(self.range(0, self.w0, 0, min(h, self.h1) - 1, w - 1, d - 1))
        if t2:
            out.append(self.range(self.h0, 0, 0, h - 1, min(w, self.w0) - 1, d - 1))
        if t1 and t2:
            out.append(self.range(self.h1, self.w0, 0, h - 1, w - 1, d - 1))
        return out

    def area_ranges(self, start: Tuple[int, int, int], end: Tuple[int, int, int]):
        """Row-by-row ranges covering the area start..end (x, y, z), clipped to the map."""
        x0, y0, c0 = start
        x1 = min(end[0], self.width - 1)
        y1 = min(end[1], self.height - 1)
        c1 = min(end[2], self.depth - 1)
        h0, h1, w0 = self.h0, self.h1, self.w0
        out = []

        def rows(ya, xa, yb, xb):
            out.extend(self.range(y, xa, c0, y, xb, c1) for y in range(ya, yb + 1))
        if x0 < w0 and y0 < h0:
            rows(y0, x0, min(y1, h0 - 1), min(x1, w0 - 1))
        if x1 >= w0 and y0 < h1:
            rows(y0, max(x0, w0), min(y1, h1 - 1), x1)
        if x0 < w0 and y1 >= h0:
            rows(max(y0, h0), x0, y1, min(x1, w0 - 1))
        if x1 >= w0 and y1 >= h1:
            rows(max(y0, h1), max(x0, w0), y1, x1)
        return out


def _lists_overlap(a, b) -> bool:
    for ra, sa, ea in a:
        for rb, sb, eb in b:
            if ra == rb and sa < eb and sb < ea:
                return True
    return False


class _Access:
    """Read and write ranges of one command, by region key (Vela MemoryAccessSet)."""

    def __init__(self):
        self.reads: List[Tuple[object, int, int]] = []
        self.writes: List[Tuple[object, int, int]] = []

    def read(self, key, start, end):
        if end > start:
            self.reads.append((key, start, end))

    def write(self, key, start, end):
        if end > start:
            self.writes.append((key, start, end))

    def conflicts(self, other: "_Access") -> bool:
        return (_lists_overlap(self.writes, other.reads) or _lists_overlap(self.reads, other.writes)
                or _lists_overlap(self.writes, other.writes))


# --------------------------------------------------------------------------
# One block operation, rebuilt from the registers

@dataclass
class _Op:
    cmd: Command
    kind: str                         # CONV, DEPTHWISE, POOL, ELEMENTWISE
    mode: int
    ifm: _Fm
    ofm: _Fm
    ifm2: Optional[_Fm]               # a non-scalar IFM2
    binary: bool
    scalar: bool
    kernel_w: int                     # non-dilated
    kernel_h: int
    stride_x: int
    stride_y: int
    dil_x: int
    dil_y: int
    pads: Tuple[int, int, int, int]   # top, left, bottom, right
    block: Tuple[int, int, int]       # w, h, d
    part_kernel: bool
    uses_lut: bool
    lut_index: int
    acc: _Access = field(default_factory=_Access)

    @property
    def area_w(self) -> int:
        return (self.kernel_w - 1) * self.dil_x + 1

    @property
    def area_h(self) -> int:
        return (self.kernel_h - 1) * self.dil_y + 1


class _Linter:
    def __init__(self, cfg: NpuConfig, words: Sequence[int], region_sizes):
        self.cfg = cfg
        self.arch = _arch(cfg)
        self.words = words
        self.sizes = region_sizes
        self.issues: List[LintIssue] = []
        self.regs: Dict[str, int] = {}
        self.params: Dict[str, int] = {}
        self.outstanding_dma: List[_Access] = []
        self.outstanding_ops: List[_Access] = []
        self.prev_op: Optional[_Op] = None
        self.drained_since_prev = False
        self.lut_valid = bytearray(LUT_BYTES)     # which LUT-area bytes hold DMA'd data
        self.blockdeps: List[Tuple[int, int, int]] = []   # (index, programmed, safe)

    # ---- reporting

    def issue(self, cmd: Command, rule: str, message: str):
        assert rule in RULES, rule
        self.issues.append(LintIssue(cmd.index, cmd.offset, rule, message))

    def r(self, name: str) -> int:
        return self.regs.get(name, 0)

    # ---- the walk

    def run(self, cmds: List[Command]):
        for cmd in cmds:
            self.check_encoding(cmd)
            if cmd.cmd1:
                value = cmd.payload
                if self.cfg.is_u65 and cmd.name in _ADDRESS_REGISTERS:
                    value |= (cmd.param & 0xFF) << 32
                self.regs[cmd.name] = value
                self.params[cmd.name] = cmd.param
                self.check_register(cmd)
            elif cmd.name in OPERATIONS.values():
                self.operation(cmd)
            else:
                self.regs[cmd.name] = cmd.param
                self.check_register(cmd)

    def check_encoding(self, cmd: Command):
        w = self.words[cmd.offset // 4]
        if (w >> 10) & 0xF or w & 0x8000:
            self.issue(cmd, "structure-control",
                       f"command word 0x{w:08x}: bits [13:10] must be 0 and control 0 or 1")
        if cmd.name.startswith("UNKNOWN"):
            self.issue(cmd, "structure-opcode",
                       f"unknown {'cmd1' if cmd.cmd1 else 'cmd0'} opcode 0x{cmd.opcode:03x}")
        elif cmd.name in _U65_ONLY and not self.cfg.is_u65:
            self.issue(cmd, "structure-opcode", f"{cmd.name} does not exist on the Ethos-U55")

    def check_register(self, cmd: Command):
        name = cmd.name
        if cmd.cmd1:
            if name in _ADDRESS_REGISTERS:
                limit = 0xFF if self.cfg.is_u65 else 0
            elif name in _SHIFT_REGISTERS:
                limit = 0x3F
            else:
                limit = 0
            if cmd.param > limit:
                self.issue(cmd, "reserved-bits",
                           f"{name}: parameter 0x{cmd.param:04x} exceeds 0x{limit:x}")
            bits = _CMD1_PAYLOAD_BITS.get(name)
            if bits and cmd.payload >> bits:
                self.issue(cmd, "reserved-bits",
                           f"{name}: payload 0x{cmd.payload:08x} wider than {bits} bits")
        else:
            mask = _CMD0_MASKS.get(name, 0xFFFF)
            if cmd.param & ~mask:
                self.issue(cmd, "reserved-bits",
                           f"{name}: parameter 0x{cmd.param:04x} sets bits outside 0x{mask:04x}")
        if name == "PARALLEL_MODE" and self.cfg.is_u65 and cmd.param != self.cfg.cores - 1:
            self.issue(cmd, "parallel-mode",
                       f"PARALLEL_MODE {cmd.param} on {self.cfg.name}; Vela writes "
                       f"{self.cfg.cores - 1} (cores - 1)")
        if name in _SECOND_CORE and self.cfg.is_u65 and self.cfg.cores < 2:
            self.issue(cmd, "parallel-mode", f"{name} on single-core {self.cfg.name}")

    def require(self, cmd: Command, names):
        missing = [n for n in names if n not in self.regs]
        if missing:
            self.issue(cmd, "reg-unset", f"{cmd.short_name} reads {', '.join(missing)}, never "
                                         "set before it")

    # ---- operations

    def operation(self, cmd: Command):
        name = cmd.name
        mask = _OP_MASKS[name]
        if cmd.param & ~mask:
            self.issue(cmd, "reserved-bits",
                       f"{name}: parameter 0x{cmd.param:04x} sets bits outside 0x{mask:04x}")
        if name in ("NPU_OP_DMA_START",) + COMPUTE_OPS and self.cfg.is_u65:
            self.require(cmd, ("PARALLEL_MODE",))
        if name == "NPU_OP_DMA_WAIT":
            while len(self.outstanding_dma) > (cmd.param & 0xF):
                self.outstanding_dma.pop(0)
        elif name == "NPU_OP_KERNEL_WAIT":
            n = cmd.param & 0x3
            while len(self.outstanding_ops) > n:
                self.outstanding_ops.pop(0)
            if n == 0:
                self.drained_since_prev = True
        elif name == "NPU_OP_DMA_START":
            self.dma(cmd)
        elif name in COMPUTE_OPS:
            self.block_op(cmd)

    # ---- DMA

    def dma(self, cmd: Command):
        self.require(cmd, _DMA_REGS)
        src_region, dst_region = self.r("DMA0_SRC_REGION"), self.r("DMA0_DST_REGION")
        src, dst, length = self.r("DMA0_SRC"), self.r("DMA0_DST"), self.r("DMA0_LEN")
        acc = _Access()
        # Vela emits 1-D DMAs on channel 0 in mode 0 from external memory only
        # (register_command_stream_generator generate_dma_op; spec §5.4)
        if (src_region >> 9) & 3 or (dst_region >> 9) & 3:
            self.issue(cmd, "dma-form", "2-D/3-D DMA stride mode; Vela emits only 1-D DMAs")
        if src_region & 0x100:
            self.issue(cmd, "dma-form", "DMA source in SHRAM; Vela only DMAs from memory")
        if length == 0:
            self.issue(cmd, "dma-form", "DMA of 0 bytes")
        if src_region & 0x100:
            acc.read(_SHRAM, src, src + length)
        else:
            self.bounds(cmd, "dma-bounds", "DMA source", src_region & 7, src, src + length)
            acc.read(src_region & 7, src, src + length)
        if dst_region & 0x100:
            self.dma_to_shram(cmd, dst_region, dst, length)
            acc.write(_SHRAM, dst, dst + length)
        else:
            self.bounds(cmd, "dma-bounds", "DMA destination", dst_region & 7, dst, dst + length)
            acc.write(dst_region & 7, dst, dst + length)
        # Vela get_wait_dependency: a DMA must not touch what an outstanding kernel uses
        if any(acc.conflicts(o) for o in self.outstanding_ops):
            self.issue(cmd, "dep-kernel-wait",
                       "DMA touches memory an unfinished operation uses; a KERNEL_WAIT is "
                       "missing")
        self.outstanding_dma.append(acc)
        if len(self.outstanding_dma) > self.arch.max_outstanding_dma:
            self.outstanding_dma.pop(0)

    def dma_to_shram(self, cmd: Command, region: int, dst: int, length: int):
        lut = self.cfg.lut_address
        end = self.cfg.shram_kib * 1024
        mask = region & 7
        need = (1 << self.cfg.cores) - 1
        if mask & need != need:
            self.issue(cmd, "dma-shram", f"SHRAM DMA core mask {mask} misses a core of "
                                         f"{self.cfg.name}")
        # Vela lut.py places LUTs in the last 2 KiB; check_dma_op: internal addresses and
        # lengths 16-aligned
        if dst < lut or dst + length > end:
            self.issue(cmd, "dma-shram", f"SHRAM DMA to 0x{dst:x}..0x{dst + length:x} outside "
                                         f"the LUT area 0x{lut:x}..0x{end:x}")
        if dst % 16 or length % 16:
            self.issue(cmd, "dma-shram", f"SHRAM DMA address 0x{dst:x} / length {length} not "
                                         "16-byte aligned")
        lo, hi = max(dst - lut, 0), min(dst + length - lut, LUT_BYTES)
        for i in range(lo, hi):
            self.lut_valid[i] = 1

    def bounds(self, cmd, rule, what, region, start, end):
        if self.sizes is None:
            return
        if region not in self.sizes:
            self.issue(cmd, rule, f"{what} in region {region}, which has no size")
        elif start < 0 or end > self.sizes[region]:
            self.issue(cmd, rule, f"{what} 0x{start:x}..0x{end:x} outside region {region} "
                                  f"({self.sizes[region]} bytes)")

    # ---- block operations

    def fm(self, prefix: str, height: int, width: int, depth: int) -> _Fm:
        r = self.r
        prec = r(prefix + "_PRECISION")
        size = (prec >> 1) & 3 if prefix == "OFM" else (prec >> 2) & 3
        if prefix == "IFM2":
            tiles = ("IFM2_HEIGHT0_M1", "IFM2_HEIGHT1_M1", "IFM2_WIDTH0_M1")
        else:
            tiles = (prefix + "_HEIGHT0_M1", prefix + "_HEIGHT1_M1", prefix + "_WIDTH0_M1")
        return _Fm(region=r(prefix + "_REGION") & 7,
                   bases=tuple(r(f"{prefix}_BASE{i}") for i in range(4)),
                   h0=r(tiles[0]) + 1, h1=r(tiles[1]) + 1, w0=r(tiles[2]) + 1,
                   height=height, width=width, depth=depth,
                   stride_x=r(prefix + "_STRIDE_X"), stride_y=r(prefix + "_STRIDE_Y"),
                   stride_c=r(prefix + "_STRIDE_C"), bits=8 << min(size, 2),
                   signed=bool(prec & 1), brick=bool((prec >> 6) & 3 == 1))

    def build_op(self, cmd: Command) -> _Op:
        r = self.r
        kind = cmd.short_name
        ew = kind == "ELEMENTWISE"
        mode = cmd.param
        ofm_h, ofm_w, ofm_d = (r("OFM_HEIGHT_M1") + 1, r("OFM_WIDTH_M1") + 1,
                               r("OFM_DEPTH_M1") + 1)
        if ew:
            kw = kh = sx = sy = dx = dy = 1
            pads = (0, 0, 0, 0)
        else:
            s = r("KERNEL_STRIDE")
            sx = 1 + ((s & 1) | ((s >> 6) & 1) << 1)
            sy = 1 + (((s >> 1) & 1) | ((s >> 9) & 1) << 1)
            dx, dy = 1 + ((s >> 3) & 1), 1 + ((s >> 4) & 1)
            kw = r("KERNEL_WIDTH_M1") // dx + 1
            kh = r("KERNEL_HEIGHT_M1") // dy + 1
            pads = (r("IFM_PAD_TOP"), r("IFM_PAD_LEFT"), r("IFM_PAD_BOTTOM"), r("IFM_PAD_RIGHT"))
        # No register holds the IFM size (spec §4.2): Vela's IFM box is the single tile, or
        # the extent the kernel reads when the map spans several tiles
        if ew:
            ext_h, ext_w = ofm_h, ofm_w
        else:
            ext_h = (ofm_h - 1) * sy + r("KERNEL_HEIGHT_M1") + 1 - pads[0] - pads[2]
            ext_w = (ofm_w - 1) * sx + r("KERNEL_WIDTH_M1") + 1 - pads[1] - pads[3]
            if r("IFM_UPSCALE"):        # unverified: no oracle upscales (spec §8.4)
                ext_h, ext_w = _ceil_div(ext_h, 2), _ceil_div(ext_w, 2)
        ifm = self.fm("IFM", max(r("IFM_HEIGHT0_M1") + 1, ext_h),
                      max(r("IFM_WIDTH0_M1") + 1, ext_w), r("IFM_DEPTH_M1") + 1)
        ofm = self.fm("OFM", ofm_h, ofm_w, ofm_d)
        binary = ew and mode not in _EW_UNARY
        bc = r("IFM2_BROADCAST")
        scalar = binary and bool(bc & 0x80)
        ifm2 = None
        if binary and not scalar:
            ifm2 = self.fm("IFM2", 1 if bc & 1 else ifm.height, 1 if bc & 2 else ifm.width,
                           1 if bc & 4 else ifm.depth)
        act = r("ACTIVATION") & 0x1F
        op = _Op(cmd=cmd, kind=kind, mode=mode, ifm=ifm, ofm=ofm, ifm2=ifm2, binary=binary,
                 scalar=scalar, kernel_w=kw, kernel_h=kh, stride_x=sx, stride_y=sy, dil_x=dx,
                 dil_y=dy, pads=pads,
                 block=(r("OFM_BLK_WIDTH_M1") + 1, r("OFM_BLK_HEIGHT_M1") + 1,
                        r("OFM_BLK_DEPTH_M1") + 1),
                 part_kernel=kind == "CONV" and bool(r("KERNEL_STRIDE") & 4),
                 uses_lut=16 <= act <= 23, lut_index=act - 16)
        return op

    def weight_streams(self, op: _Op):
        """[(core, channels, (region, base, length) weights, (region, base, length) scales)]."""
        out = []
        cores = self.cfg.cores
        for core, (wb, wl, sb, sl) in enumerate((
                ("WEIGHT_BASE", "WEIGHT_LENGTH", "SCALE_BASE", "SCALE_LENGTH"),
                ("WEIGHT1_BASE", "WEIGHT1_LENGTH", "SCALE1_BASE", "SCALE1_LENGTH"))[:cores]):
            channels = len(range(core, op.ofm.depth, cores))
            out.append((core, channels,
                        (self.r("WEIGHT_REGION") & 7, self.r(wb), self.r(wl)),
                        (self.r("SCALE_REGION") & 7, self.r(sb), self.r(sl))))
        return out

    def block_op(self, cmd: Command):
        kind = cmd.short_name
        ew = kind == "ELEMENTWISE"
        required = list(_IFM_REGS + _OFM_REGS + _COMMON_REGS)
        if not ew:
            required += _KERNEL_REGS
        if kind in ("CONV", "DEPTHWISE"):
            required += _WEIGHT_REGS
            if self.cfg.cores > 1:
                required += _SECOND_CORE
        if "OFM_PRECISION" in self.regs and self.r("OFM_PRECISION") & 0x100:
            required.append("OFM_SCALE")
        if ew:
            mode = cmd.param
            if "OFM_SCALE" not in required:
                required.append("OFM_SCALE")
            if mode in (_EW_ADD, _EW_SUB):
                required += ["OPA_SCALE", "OPB_SCALE"]
            if mode not in _EW_UNARY:
                required += ["IFM2_ZERO_POINT", "IFM2_PRECISION", "IFM2_BROADCAST"]
                if "IFM2_BROADCAST" in self.regs and self.r("IFM2_BROADCAST") & 0x80:
                    required.append("IFM2_SCALAR")
                else:
                    required += _IFM2_REGS
        self.require(cmd, required)

        op = self.build_op(cmd)
        self.check_modes(op)
        self.check_kernel(op)
        self.check_precisions(op)
        self.check_output_stage(op)
        self.check_block_and_shram(op)
        self.check_feature_maps(op)
        if kind in ("CONV", "DEPTHWISE"):
            self.check_weights(op)
        self.check_lut(op)
        self.access_and_waits(op)
        self.check_blockdep(op)
        self.prev_op = op
        self.drained_since_prev = False

    # ---- value ranges

    def check_modes(self, op: _Op):
        cmd = op.cmd
        if op.kind == "POOL" and op.mode > _POOL_REDUCE_SUM:
            self.issue(cmd, "range-mode", f"POOL mode {op.mode} is not MAX/AVERAGE/REDUCE_SUM")
        if op.kind == "ELEMENTWISE" and op.mode > 9:
            self.issue(cmd, "range-mode", f"ELEMENTWISE mode {op.mode} is undefined")
        if self.r("IFM_UPSCALE") > 2:
            self.issue(cmd, "range-mode", f"IFM_UPSCALE {self.r('IFM_UPSCALE')} is reserved")
        if op.binary:
            bc = self.r("IFM2_BROADCAST")
            if bc & 0x80 and bc & 0x7:
                self.issue(cmd, "range-broadcast", f"IFM2_BROADCAST 0x{bc:x}: scalar together "
                                                   "with per-dimension broadcast")
        # depths (Vela high_level_command_to_npu_op get_ifm_depth; spec §5.2 REDUCE_SUM)
        equal = op.kind in ("DEPTHWISE", "ELEMENTWISE") or (op.kind == "POOL"
                                                           and op.mode != _POOL_REDUCE_SUM)
        if equal and op.ifm.depth != op.ofm.depth:
            self.issue(cmd, "range-depth", f"{op.kind} with IFM depth {op.ifm.depth} and OFM "
                                           f"depth {op.ofm.depth}")
        if op.kind == "POOL" and op.mode == _POOL_REDUCE_SUM and op.ofm.depth != 1:
            self.issue(cmd, "range-depth", f"REDUCE_SUM writes OFM depth {op.ofm.depth}, not 1")

    def check_kernel(self, op: _Op):
        if op.kind == "ELEMENTWISE":
            return
        cmd = op.cmd
        s = self.r("KERNEL_STRIDE")
        # Vela fixup_strided_conv / supported operators: hardware strides are 1, 2, 3
        if not (1 <= op.stride_x <= 3 and 1 <= op.stride_y <= 3):
            self.issue(cmd, "range-stride", f"stride y {op.stride_y}, x {op.stride_x} outside "
                                            "1..3")
        kh_m1, kw_m1 = self.r("KERNEL_HEIGHT_M1"), self.r("KERNEL_WIDTH_M1")
        if op.kind == "POOL" and (op.dil_x > 1 or op.dil_y > 1):
            self.issue(cmd, "range-dilation", "dilation on POOL; Vela pools are undilated")
        if kw_m1 % op.dil_x or kh_m1 % op.dil_y:
            self.issue(cmd, "range-dilation", f"dilated extent {kh_m1 + 1}x{kw_m1 + 1} is not "
                                              f"dilation {op.dil_y}x{op.dil_x} times (k-1)+1")
        if s & 0x20:
            self.issue(cmd, "reserved-bits", "KERNEL_STRIDE decomposition 4x4; Vela uses 8x8")
        if s & 4 and op.kind != "CONV":
            self.issue(cmd, "reserved-bits", f"part-kernel-first weight order on {op.kind}")
        max_h, max_prod = _POOL_KERNEL_LIMITS if op.kind == "POOL" else _CONV_KERNEL_LIMITS
        if op.area_h > max_h or op.area_h * op.area_w > max_prod:
            self.issue(cmd, "range-kernel", f"{op.kind} kernel extent {op.area_h}x{op.area_w} "
                                            f"exceeds height {max_h} / area {max_prod}")
        top, left, bottom, right = op.pads
        if top >= op.area_h or bottom >= op.area_h or left >= op.area_w or right >= op.area_w:
            self.issue(cmd, "range-pad", f"pads t{top} l{left} b{bottom} r{right} not smaller "
                                         f"than the kernel extent {op.area_h}x{op.area_w}")
        ext_h = (op.ofm.height - 1) * op.stride_y + op.area_h - top - bottom
        ext_w = (op.ofm.width - 1) * op.stride_x + op.area_w - left - right
        if ext_h < 1 or ext_w < 1:
            self.issue(cmd, "range-pad", f"pads leave an IFM extent of {ext_h}x{ext_w}")

    def check_precisions(self, op: _Op):
        cmd = op.cmd
        fms = [("IFM", self.r("IFM_PRECISION"))]
        if op.binary:
            fms.append(("IFM2", self.r("IFM2_PRECISION")))
        for name, p in fms:
            if (p >> 2) & 3 == 3 or (p >> 6) & 3 > 1 or (p >> 8) & 3 == 3:
                self.issue(cmd, "range-precision",
                           f"{name}_PRECISION 0x{p:04x}: reserved size, format or scale mode")
            if (p >> 14) & 3:
                self.issue(cmd, "range-round", f"{name}_PRECISION round mode {(p >> 14) & 3}; "
                                               "Vela writes 0")
        p = self.r("IFM_PRECISION")
        # Vela generate_ifm_precision: op_to_scale only for ADD/SUB, never on IFM2
        if (p >> 8) & 3 and not (op.kind == "ELEMENTWISE" and op.mode in (_EW_ADD, _EW_SUB)):
            self.issue(cmd, "range-precision", f"IFM scale mode {(p >> 8) & 3} on "
                                               f"{op.kind}; only ADD/SUB scale an operand")
        if op.binary and (self.r("IFM2_PRECISION") >> 8) & 3:
            self.issue(cmd, "range-precision", "IFM2 scale mode set; Vela writes 0")
        if op.binary and (self.r("IFM2_PRECISION") >> 2) & 3 != (p >> 2) & 3:
            self.issue(cmd, "range-precision", "IFM2 element size differs from the IFM's")
        q = self.r("OFM_PRECISION")
        if (q >> 1) & 3 == 3 or (q >> 6) & 3 > 1:
            self.issue(cmd, "range-precision",
                       f"OFM_PRECISION 0x{q:04x}: reserved size or format")
        if (q >> 14) & 3 == 3:
            self.issue(cmd, "range-round", "OFM round mode 3 is reserved")

    def check_output_stage(self, op: _Op):
        cmd = op.cmd
        act = self.r("ACTIVATION")
        fn, clip = act & 0x1F, (act >> 12) & 7
        if fn not in _ACTIVATIONS:
            self.issue(cmd, "range-activation", f"activation function {fn} is undefined")
        if clip not in _CLIP_RANGES:
            self.issue(cmd, "range-activation", f"activation clip range {clip} is undefined")
        elif clip and not op.uses_lut:
            # header: "This must be set to 0 if table lookup is not used"
            self.issue(cmd, "range-activation", f"clip range {clip} without a table lookup")
        # zero points (Vela get_zero_point / use_zero_point_0)
        fms = [("IFM", op.ifm)]
        if op.binary:
            fms.append(("IFM2", self.fm("IFM2", 1, 1, 1)))
        for name, fm in fms:
            zp = self.r(name + "_ZERO_POINT")
            if fm.bits == 32:
                if zp:
                    self.issue(cmd, "range-zero-point", f"{name} zero point {_s16(zp)} on a "
                                                        "32-bit IFM; Vela writes 0")
            else:
                v = _s16(zp) if fm.signed else zp
                lo, hi = _type_range(fm.bits, fm.signed)
                if not lo <= v <= hi:
                    self.issue(cmd, "range-zero-point", f"{name} zero point {v} outside "
                                                        f"{lo}..{hi}")
        ofm = op.ofm
        zp = self.r("OFM_ZERO_POINT")
        if ofm.bits < 32:
            v = _s16(zp) if ofm.signed else zp
            lo, hi = _type_range(ofm.bits, ofm.signed)
            if not lo <= v <= hi:
                self.issue(cmd, "range-zero-point", f"OFM zero point {v} outside {lo}..{hi}")
        # clamps (Vela generate_activation: quantized, clipped to int16 and the OFM type;
        # forced to the clip range with a LUT)
        if clip in _CLIP_RANGES and _CLIP_RANGES[clip]:
            lo, hi = _CLIP_RANGES[clip]
        elif ofm.bits == 32:
            lo, hi = -32768, 32767
        else:
            lo, hi = _type_range(ofm.bits, ofm.signed)
        amin, amax = self.r("ACTIVATION_MIN"), self.r("ACTIVATION_MAX")
        if lo < 0 or hi > 32767:
            amin, amax = _s16(amin), _s16(amax)
        if not (lo <= amin <= hi and lo <= amax <= hi and amin <= amax):
            self.issue(cmd, "range-clamp", f"clamp [{amin},{amax}] not an ordered range in "
                                           f"{lo}..{hi}")
        # Vela _acc_type: I40 only for a 16-bit IFM, never F16
        acc = self.r("ACC_FORMAT")
        if acc == 2 or acc == 3 or (acc == 1 and (op.ifm.bits != 16 or (
                op.kind == "POOL" and op.mode != _POOL_REDUCE_SUM))):
            self.issue(cmd, "range-acc-format", f"ACC_FORMAT {acc} with a {op.ifm.bits}-bit "
                                                f"IFM on {op.kind}")

    # ---- OFM block and SHRAM (Vela architecture_allocator.py try_block_config)

    def shram_needs(self, op: _Op):
        """(ifm_banks, acc_banks, vela layout (ib_end, ab_start, ib_start2) or None)."""
        arch = self.arch
        ofm_u, ifm_u, gran = arch.ofm_ublock, arch.ifm_ublock, arch.granules
        bw, bh, bd = op.block
        ew = op.kind == "ELEMENTWISE"
        ew_usage = (2 if op.scalar else 1) if ew else 0
        equal_depth = ew or op.kind == "DEPTHWISE" or (op.kind == "POOL"
                                                       and op.mode != _POOL_REDUCE_SUM)
        bits = op.ifm.bits
        gi = {8: 0, 16: 1, 32: 4}[bits]
        if ew and bits != 32:
            gi += 2
        ifm_granule = gran[gi]
        acc_format = self.r("ACC_FORMAT")
        acc_bits, acc_granule = {0: (32, gran[6]), 1: (40, gran[7]),
                                 2: (16, gran[5])}.get(acc_format, (32, gran[6]))
        lut_banks = max(2 if op.uses_lut else 0, arch.reserved_end_banks)
        upscale_mode = self.r("IFM_UPSCALE")
        upscale = 1 if upscale_mode == 0 else 2
        nearest = 1 if upscale_mode == 1 else 0
        # IFM block feeding one OFM block (Vela _get_ifm_blocksize; sub-kernels of 8x8)
        ih = _ceil_div((bh - 1) * op.stride_y + min(op.area_h, _SUBKERNEL_MAX[1]) + nearest,
                       upscale)
        iw = _ceil_div((bw - 1) * op.stride_x + min(op.area_w, _SUBKERNEL_MAX[0]) + nearest,
                       upscale)
        ih, iw = _round_up(ih, ofm_u[1]), _round_up(iw, ofm_u[0])
        if equal_depth:
            idepth = bd
        elif bits == 16:
            idepth = _round_up(min(op.ifm.depth, 16), 4)
        else:
            idepth = _round_up(min(op.ifm.depth, 16 if op.part_kernel else 32), ifm_u[2])
        # the 256/512 Conv1D case (Vela fit_block_for_ofm)
        if op.ofm.height == 1 and op.kernel_h == 1 and ofm_u[1] == 2:
            bh = min(bh, op.ofm.height)
        ifm_bytes = iw * ih * _round_up(idepth * bits // 8, 8)
        ifm_banks = _round_up(_ceil_div(ifm_bytes, 1024) * 2, ifm_granule)
        lut_start = arch.banks - lut_banks
        ifm_end = _RESERVED_OUTPUT_BANKS + ifm_banks
        ifm2_start = ifm_end
        acc_start = lut_start
        acc_banks = 0
        layout = None
        if ew_usage == 0:
            acc_bytes = bw * bh * _round_up(bd, 8) * acc_bits // 8
            acc_banks = _round_up(_ceil_div(acc_bytes, 1024) * 2, acc_granule)
            acc_start -= acc_banks
            if ifm_end <= acc_start:
                layout = (ifm_end, acc_start, ifm2_start)
        else:
            ifm2_banks = ifm_banks if ew_usage == 1 else 0
            if ifm2_start + ifm2_banks <= acc_start:
                layout = (acc_start, acc_start, ifm2_start)
        return ifm_banks, acc_banks, layout

    def check_block_and_shram(self, op: _Op):
        cmd = op.cmd
        arch = self.arch
        bw, bh, bd = op.block
        uw, uh, ud = arch.ofm_ublock
        mw, mh, md = _OFM_BLOCK_MAX
        if (bw > mw or bh > mh or bd > md or bw % uw or bh % uh or bd % ud):
            self.issue(cmd, "ofm-block", f"OFM block {bh}x{bw}x{bd} (h x w x d) is not a "
                                         f"multiple of {uh}x{uw}x{ud} within {mh}x{mw}x{md}")
            return
        ib_end, ab_start = self.r("IFM_IB_END"), self.r("AB_START")
        ib2 = self.r("IFM2_IB_START")
        uses_ib2 = op.binary and not op.scalar
        ifm_banks, acc_banks, layout = self.shram_needs(op)
        banks = arch.banks
        regs = [("IFM_IB_END", ib_end), ("AB_START", ab_start)]
        if uses_ib2:
            regs.append(("IFM2_IB_START", ib2))
        for name, v in regs:
            if v % 2 or v > banks:
                self.issue(cmd, "shram-fit", f"{name} {v} not an even bank number within "
                                             f"{banks} KiB of SHRAM")
        if ib_end > ab_start:
            self.issue(cmd, "shram-fit", f"IFM_IB_END {ib_end} beyond AB_START {ab_start}")
        start = _RESERVED_OUTPUT_BANKS
        if uses_ib2:
            if ib2 - start < ifm_banks or ib_end - ib2 < ifm_banks:
                self.issue(cmd, "shram-fit", f"IFM buffers 2..{ib2}..{ib_end} too small for "
                                             f"{ifm_banks} banks each")
        elif ib_end - start < ifm_banks:
            self.issue(cmd, "shram-fit", f"IFM buffer 2..{ib_end} too small for {ifm_banks} "
                                         "banks")
        if ab_start + acc_banks > banks:
            self.issue(cmd, "shram-fit", f"accumulators {ab_start}+{acc_banks} banks exceed "
                                         f"{banks} KiB")
        if op.uses_lut:
            lut_bank = self.cfg.lut_address // 1024
            top = max(ib_end, ab_start + acc_banks)
            if top > lut_bank:
                self.issue(cmd, "shram-lut", f"buffers reach bank {top}, over the LUT area at "
                                             f"bank {lut_bank}")
        if layout is None:
            self.issue(cmd, "shram-vela", f"block {bh}x{bw}x{bd} does not fit SHRAM in Vela's "
                                          "layout")
            return
        want = [("IFM_IB_END", ib_end, layout[0]), ("AB_START", ab_start, layout[1])]
        if uses_ib2:
            want.append(("IFM2_IB_START", ib2, layout[2]))
        bad = [f"{n} {have} (Vela {exp})" for n, have, exp in want if have != exp]
        if bad:
            self.issue(cmd, "shram-vela", "SHRAM layout differs from Vela's: " + ", ".join(bad))

    # ---- feature maps

    def check_feature_maps(self, op: _Op):
        cmd = op.cmd
        fms = [("IFM", op.ifm), ("OFM", op.ofm)]
        if op.ifm2 is not None:
            fms.append(("IFM2", op.ifm2))
        for name, fm in fms:
            e = fm.elem
            # Vela check_addresses / check_strides / get_strides
            align = 16 if fm.brick else e
            bad = [b for b in fm.bases if b % align]
            if bad:
                self.issue(cmd, "fm-align", f"{name} base 0x{bad[0]:x} not {align}-byte aligned "
                                            f"({'NHCWB16' if fm.brick else 'NHWC'})")
            if fm.brick:
                if fm.stride_c % 16 or fm.stride_y % 16 or fm.stride_x != 16 * e:
                    self.issue(cmd, "fm-strides",
                               f"{name} NHCWB16 strides y/x/c {fm.stride_y}/{fm.stride_x}/"
                               f"{fm.stride_c}: C and Y must be multiples of 16, X {16 * e}")
            elif fm.stride_y % e or fm.stride_x % e:
                self.issue(cmd, "fm-strides", f"{name} NHWC strides y/x {fm.stride_y}/"
                                              f"{fm.stride_x} not multiples of {e}")
            for region, start, end in fm.ranges():
                self.bounds(cmd, "fm-bounds", name, region, start, end)

    def check_weights(self, op: _Op):
        cmd = op.cmd
        per_channel = not self.r("OFM_PRECISION") & 0x100
        for core, channels, (wr, wb, wl), (sr, sb, sl) in self.weight_streams(op):
            suffix = "1" if core else ""
            # Vela generate_weights / generate_biases: check_alignment(16), check_length(16)
            for n, v in ((f"WEIGHT{suffix}_BASE", wb), (f"SCALE{suffix}_BASE", sb)):
                if v % 16:
                    self.issue(cmd, "weights-align", f"{n} 0x{v:x} not 16-byte aligned")
            if wl % 16 or (channels and wl == 0) or (not channels and wl):
                self.issue(cmd, "weights-length", f"WEIGHT{suffix}_LENGTH {wl} for {channels} "
                                                  "channels")
            if per_channel:
                # Vela weight_compressor: 10-byte records per channel of this core, padded
                # to 16 (spec §4.3)
                want = _round_up(10 * channels, 16)
                if sl != want:
                    self.issue(cmd, "scale-length", f"SCALE{suffix}_LENGTH {sl} for {channels} "
                                                    f"channels; want {want}")
            if wl:
                self.bounds(cmd, "weights-bounds", f"weights of core {core}", wr, wb, wb + wl)
            if sl:
                self.bounds(cmd, "weights-bounds", f"scales of core {core}", sr, sb, sb + sl)

    # ---- LUT

    def lut_bytes(self, op: _Op) -> int:
        """The table an activation reads (spec §5.3, Vela lut.py): 256 entries of the OFM
        element for 8-bit IFMs, 512 x 32-bit for 16-bit ones."""
        return 2048 if op.ifm.bits == 16 else 256 * op.ofm.elem

    def check_lut(self, op: _Op):
        cmd = op.cmd
        if op.uses_lut:
            size = self.lut_bytes(op)
            start = 256 * op.lut_index
            if start + size > LUT_BYTES or start % size:
                self.issue(cmd, "lut-range", f"table {op.lut_index} of {size} bytes at LUT "
                                             f"offset {start} does not fit the 2 KiB area "
                                             "aligned")
            elif not all(self.lut_valid[start:start + size]):
                self.issue(cmd, "lut-missing", f"LUT table {op.lut_index} (SHRAM 0x"
                                               f"{self.cfg.lut_address + start:x}, {size} bytes) "
                                               "was not DMA'd before use")
        elif self.arch.reserved_end_banks == 0:
            # Vela lut.py: without reserved banks a non-LUT op overwrites the LUT area
            self.lut_valid = bytearray(LUT_BYTES)

    # ---- dependencies (Vela get_op_memory_accesses, get_wait_dependency)

    def access_and_waits(self, op: _Op):
        acc = op.acc
        for fm in [op.ifm] + ([op.ifm2] if op.ifm2 is not None else []):
            for region, start, end in fm.ranges():
                acc.read(region, start, end)
        if op.kind in ("CONV", "DEPTHWISE"):
            for _, _, (wr, wb, wl), (sr, sb, sl) in self.weight_streams(op):
                acc.read(wr, wb, wb + wl)
                acc.read(sr, sb, sb + sl)
        if op.uses_lut:
            acc.read(_SHRAM, self.cfg.lut_address, self.cfg.lut_address + LUT_BYTES)
        for region, start, end in op.ofm.ranges():
            acc.write(region, start, end)
        acc.write(_SHRAM, 0, self.arch.available_banks(op.uses_lut) * 1024)
        if any(acc.conflicts(d) for d in self.outstanding_dma):
            self.issue(op.cmd, "dep-dma-wait", f"{op.kind} touches memory an unfinished DMA "
                                               "writes or reads; a DMA_WAIT is missing")
        self.outstanding_ops.append(acc)
        if len(self.outstanding_ops) > _MAX_OUTSTANDING_KERNELS:
            self.outstanding_ops.pop(0)

    # ---- BLOCKDEP (Vela register_command_stream_util.py calc_blockdep)

    def check_blockdep(self, op: _Op):
        programmed = self.r("BLOCKDEP")
        safe = min(_blockdep(self.arch, self.prev_op, op), _MAX_BLOCKDEP)
        self.blockdeps.append((op.cmd.index, programmed, safe))
        if programmed > safe and not self.drained_since_prev:
            self.issue(op.cmd, "dep-blockdep", f"BLOCKDEP {programmed} exceeds the safe "
                                               f"{safe} after the previous operation")


def _block_coords(size: Tuple[int, int, int], block: Tuple[int, int, int], offset: int):
    """Origin (x, y, z) of the block `offset` from the start (>= 0) or the end (< 0) of an
    area of `size` (w, h, d) walked depth-first, then x, then y; None past the end."""
    wb = _ceil_div(size[0], block[0])
    hb = _ceil_div(size[1], block[1])
    db = _ceil_div(size[2], block[2])
    total = wb * hb * db
    index = total + offset if offset < 0 else offset
    if index >= total:
        return None
    return (block[0] * ((index // db) % wb), block[1] * (index // (db * wb)),
            block[2] * (index % db))


def _blockdep(arch: _Arch, prev: Optional[_Op], cur: _Op) -> int:
    if prev is None:
        return 0
    if prev.uses_lut and arch.reserved_end_banks == 0 and not cur.uses_lut:
        return 0
    prev_ranges = prev.ofm.ranges()
    ifm_overlaps = _lists_overlap(prev_ranges, cur.ifm.ranges())
    ifm2_overlaps = cur.ifm2 is not None and _lists_overlap(prev_ranges, cur.ifm2.ranges())
    if ifm_overlaps and ifm2_overlaps:
        return 0
    if not ifm_overlaps and not ifm2_overlaps:
        return _MAX_BLOCKDEP
    if ifm2_overlaps:
        i2, i1 = cur.ifm2, cur.ifm
        if i2.height * i2.width * i2.depth < i1.height * i1.width * i1.depth:
            return 0
    fm = cur.ifm if ifm_overlaps else cur.ifm2
    # IFM block depth: for CONV Vela's calc_ifm_block_depth, else the OFM depth
    if cur.kind == "CONV":
        ifm_block_depth = min(8 * 32 // cur.ifm.bits, _round_up(cur.ifm.depth, arch.ifm_ublock[2]))
    else:
        ifm_block_depth = cur.ofm.depth
    cur_block = cur.block
    cur_ofm = (cur.ofm.width, cur.ofm.height, cur.ofm.depth)
    prev_block = prev.block
    prev_ofm = (prev.ofm.width, prev.ofm.height, prev.ofm.depth)
    # IFM block for one OFM block; Vela passes ofm_block_max (64 x 32) as the sub-kernel limit
    iw = _round_up((cur_block[0] - 1) * cur.stride_x + min(_OFM_BLOCK_MAX[0], cur.area_w),
                   arch.ifm_ublock[0])
    ih = _round_up((cur_block[1] - 1) * cur.stride_y + min(_OFM_BLOCK_MAX[1], cur.area_h),
                   arch.ifm_ublock[1])
    ifm_depth_blocks = _ceil_div(cur.ifm.depth, ifm_block_depth)
    top, left, bottom, right = cur.pads
    blockdep = _MAX_BLOCKDEP
    elapsed = 0
    for forward in range(_MAX_BLOCKDEP):
        oc = _block_coords(cur_ofm, cur_block, forward // ifm_depth_blocks)
        if oc is None:
            break
        # the IFM area the job `forward` reads; Vela subtracts the right pad from y
        sx = max(0, oc[0] * cur.stride_x - left)
        sy = max(0, oc[1] * cur.stride_y - right)
        sz = (forward % ifm_depth_blocks) * ifm_block_depth
        in_start, in_end = (sx, sy, sz), (sx + iw, sy + ih, sz + ifm_block_depth)
        outstanding = 0
        for back in range(_MAX_BLOCKDEP):
            pc = _block_coords(prev_ofm, prev_block, -1 - back)
            if pc is None:
                break
            out_end = (pc[0] + prev_block[0], pc[1] + prev_block[1], pc[2] + prev_block[2])
            if fm.same_layout(prev.ofm):
                hit = all(min(in_end[i], out_end[i]) - max(in_start[i], pc[i]) > 0
                          for i in range(3))
            else:
                hit = _lists_overlap(fm.area_ranges(in_start, in_end),
                                     prev.ofm.area_ranges(pc, out_end))
            if hit:
                break
            if outstanding > _MAX_BLOCKDEP:
                break
            outstanding += 1
        blockdep = min(blockdep, elapsed + outstanding)
        elapsed += 1
        if elapsed > _MAX_BLOCKDEP:
            break
    return blockdep


# --------------------------------------------------------------------------
# Entry points

def _decode(words: List[int], cfg: NpuConfig, issues: List[LintIssue]) -> List[Command]:
    try:
        cmds = decode_stream(words, cfg.product)
    except CommandStreamError:
        # decode_stream fails only on a cmd1 header in the last word
        offset = 4 * (len(words) - 1)
        cmds = decode_stream(words[:-1], cfg.product)
        issues.append(LintIssue(len(cmds), offset, "structure-truncated",
                                f"cmd1 header 0x{words[-1]:08x} at byte {offset} has no "
                                "payload word"))
        return cmds
    return cmds


def lint_stream(words: Sequence[int], accelerator: str,
                region_sizes: Optional[Dict[int, int]] = None) -> List[LintIssue]:
    """Every rule broken by a command stream (32-bit words) for `accelerator` (a Vela
    accelerator name, e.g. "ethos-u55-256"). `region_sizes` maps base-pointer region ->
    bytes; without it no bounds are checked."""
    cfg = npu_config(accelerator)
    words = [int(w) & 0xFFFFFFFF for w in words]
    issues: List[LintIssue] = []
    if 4 * len(words) >= _STREAM_LIMIT:
        issues.append(LintIssue(0, 0, "structure-size", f"stream of {4 * len(words)} bytes; "
                                                        "the limit is 16 MiB"))
    cmds = _decode(words, cfg, issues)
    truncated = bool(issues and issues[-1].rule == "structure-truncated")
    linter = _Linter(cfg, words, region_sizes)
    linter.run(cmds)
    issues.extend(linter.issues)
    used = sum(2 if c.cmd1 else 1 for c in cmds)
    end = 4 * used
    if not cmds or cmds[-1].name != "NPU_OP_STOP":
        if not truncated:
            issues.append(LintIssue(len(cmds), end, "structure-stop",
                                    "the stream does not end with NPU_OP_STOP"))
    else:
        stop = cmds[-1]
        if stop.param != 0xFFFF:
            issues.append(LintIssue(stop.index, stop.offset, "structure-stop",
                                    f"NPU_OP_STOP parameter 0x{stop.param:04x}, not 0xFFFF"))
        if used < len(words):
            issues.append(LintIssue(len(cmds), end, "structure-trailing",
                                    f"{len(words) - used} words after NPU_OP_STOP"))
    issues.sort(key=lambda i: (i.offset if i.command_index >= 0 else -1, i.command_index))
    return issues


def lint_cop(cop_bytes: bytes, accelerator: str,
             region_sizes: Optional[Dict[int, int]] = None) -> List[LintIssue]:
    """lint_stream on the COMMAND_STREAM of a COP1 payload, after checking the framing and
    the OPTIMIZER_CONFIG word (spec §2; ethos-u-delegate.md §4.2)."""
    cfg = npu_config(accelerator)
    try:
        cop = parse_cop(cop_bytes)
    except CommandStreamError as e:
        return [LintIssue(-1, 0, "cop-format", str(e))]
    issues: List[LintIssue] = []
    if cop.config != cfg.config_word:
        off = next((int(r.split("@")[1]) + 4 for r in cop.records if r.startswith("1@")), 0)
        issues.append(LintIssue(-1, off, "cop-config", f"config word 0x{cop.config:08x}; Vela "
                                                       f"writes 0x{cfg.config_word:08x} for "
                                                       f"{cfg.name}"))
    if cop.stream_offset % 16:
        # driver ethosu_invoke_v3: the command stream address must be 16-byte aligned
        issues.append(LintIssue(-1, cop.stream_offset, "cop-align",
                                f"command stream at payload byte {cop.stream_offset}, not "
                                "16-byte aligned"))
    return issues + lint_stream(cop.stream, accelerator, region_sizes)


def blockdep_report(words: Sequence[int], accelerator: str) -> List[Tuple[int, int, int]]:
    """(command index, programmed BLOCKDEP, the value Vela's calc_blockdep gives) for each
    block operation: lets tests compare the recomputation with real Vela streams."""
    cfg = npu_config(accelerator)
    words = [int(w) & 0xFFFFFFFF for w in words]
    linter = _Linter(cfg, words, None)
    linter.run(_decode(words, cfg, []))
    return linter.blockdeps
