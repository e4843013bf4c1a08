"""Decode an Ethos-U55/U65 COP1 payload and its command stream into a readable listing
(spec ethos-u-npu.md §2, §3). For `python3 -m ptec inspect` and tests; it never runs
anything. Register state is tracked across commands (Vela emits a register only when it
changes), so each NPU_OP_* gets a one-line summary of the registers it runs on.

    cop = parse_cop(cmd_data)             # config word, id word, the stream's words
    cmds = decode_stream(cop.stream, product=cop.product)
    print(listing(cmds))
"""
from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional

COP1_MAGIC = 0x31504F43
ACTION_OPTIMIZER_CONFIG, ACTION_COMMAND_STREAM, ACTION_NOP = 1, 2, 5
PRODUCTS = {0: "ethos-u55", 1: "ethos-u65", 2: "ethos-u85"}


class CommandStreamError(ValueError):
    """A COP1 payload or stream that cannot be decoded; the message is one line."""


# --------------------------------------------------------------------------
# COP1 records (§2; ethos-u-delegate.md §4.2)

@dataclass
class Cop:
    config: int
    id: int
    stream: List[int]               # the COMMAND_STREAM's 32-bit words
    stream_offset: int              # byte offset of the stream's first word in the payload
    records: List[str] = field(default_factory=list)   # "action@offset" in payload order

    @property
    def product(self) -> int:
        return self.config >> 28

    @property
    def macs(self) -> int:
        return 1 << (self.config & 0xF)

    @property
    def shram_kib(self) -> int:
        return (self.config >> 8) & 0xFF

    @property
    def target(self) -> str:
        return target_name(self.config)


def target_name(config: int) -> str:
    """The Vela accelerator name of a COP config word, e.g. 0x1807 -> "ethos-u55-128"."""
    product = config >> 28
    if product not in PRODUCTS:
        raise CommandStreamError(f"config word 0x{config:08x}: unknown product {product}")
    return f"{PRODUCTS[product]}-{1 << (config & 0xF)}"


def parse_cop(data: bytes) -> Cop:
    """The records of a COP1 payload; exactly one OPTIMIZER_CONFIG and one COMMAND_STREAM."""
    data = bytes(data)
    if len(data) < 4 or len(data) % 4:
        raise CommandStreamError(f"COP payload of {len(data)} bytes is not a whole number of "
                                 "32-bit words")
    words = struct.unpack("<%dI" % (len(data) // 4), data)
    if words[0] != COP1_MAGIC:
        raise CommandStreamError(f"payload starts with {data[:4]!r}, not COP1")
    config = ident = None
    stream = None
    stream_offset = 0
    records = []
    i = 1
    while i < len(words):
        w = words[i]
        action = w & 0xFF
        records.append(f"{action}@{4 * i}")
        if action == ACTION_OPTIMIZER_CONFIG:
            if i + 2 >= len(words):
                raise CommandStreamError(f"OPTIMIZER_CONFIG at byte {4 * i} is truncated")
            if config is not None:
                raise CommandStreamError("two OPTIMIZER_CONFIG records")
            config, ident = words[i + 1], words[i + 2]
            i += 3
        elif action == ACTION_COMMAND_STREAM:
            n = (((w >> 8) & 0xFF) << 16) | (w >> 16)
            if i + 1 + n > len(words):
                raise CommandStreamError(f"COMMAND_STREAM at byte {4 * i}: {n} words, "
                                         f"{len(words) - i - 1} left")
            if stream is not None:
                raise CommandStreamError("two COMMAND_STREAM records")
            stream = list(words[i + 1:i + 1 + n])
            stream_offset = 4 * (i + 1)
            i += 1 + n
        elif action == ACTION_NOP:
            i += 1
        else:
            raise CommandStreamError(f"unknown COP action {action} at byte {4 * i}")
    if config is None:
        raise CommandStreamError("no OPTIMIZER_CONFIG record")
    if stream is None:
        raise CommandStreamError("no COMMAND_STREAM record")
    return Cop(config, ident, stream, stream_offset, records)


# --------------------------------------------------------------------------
# Command names (§3.2-3.4): (is_cmd1, opcode) -> name

OPERATIONS = {0x000: "NPU_OP_STOP", 0x001: "NPU_OP_IRQ", 0x002: "NPU_OP_CONV",
              0x003: "NPU_OP_DEPTHWISE", 0x005: "NPU_OP_POOL", 0x006: "NPU_OP_ELEMENTWISE",
              0x010: "NPU_OP_DMA_START", 0x011: "NPU_OP_DMA_WAIT", 0x012: "NPU_OP_KERNEL_WAIT",
              0x013: "NPU_OP_PMU_MASK"}

CMD0_REGISTERS = {
    0x100: "IFM_PAD_TOP", 0x101: "IFM_PAD_LEFT", 0x102: "IFM_PAD_RIGHT",
    0x103: "IFM_PAD_BOTTOM", 0x104: "IFM_DEPTH_M1", 0x105: "IFM_PRECISION",
    0x107: "IFM_UPSCALE", 0x109: "IFM_ZERO_POINT", 0x10A: "IFM_WIDTH0_M1",
    0x10B: "IFM_HEIGHT0_M1", 0x10C: "IFM_HEIGHT1_M1", 0x10D: "IFM_IB_END", 0x10F: "IFM_REGION",
    0x111: "OFM_WIDTH_M1", 0x112: "OFM_HEIGHT_M1", 0x113: "OFM_DEPTH_M1",
    0x114: "OFM_PRECISION", 0x115: "OFM_BLK_WIDTH_M1", 0x116: "OFM_BLK_HEIGHT_M1",
    0x117: "OFM_BLK_DEPTH_M1", 0x118: "OFM_ZERO_POINT", 0x11A: "OFM_WIDTH0_M1",
    0x11B: "OFM_HEIGHT0_M1", 0x11C: "OFM_HEIGHT1_M1", 0x11F: "OFM_REGION",
    0x120: "KERNEL_WIDTH_M1", 0x121: "KERNEL_HEIGHT_M1", 0x122: "KERNEL_STRIDE",
    0x123: "PARALLEL_MODE", 0x124: "ACC_FORMAT", 0x125: "ACTIVATION", 0x126: "ACTIVATION_MIN",
    0x127: "ACTIVATION_MAX", 0x128: "WEIGHT_REGION", 0x129: "SCALE_REGION",
    0x12D: "AB_START", 0x12F: "BLOCKDEP", 0x130: "DMA0_SRC_REGION", 0x131: "DMA0_DST_REGION",
    0x132: "DMA0_SIZE0", 0x133: "DMA0_SIZE1", 0x180: "IFM2_BROADCAST", 0x181: "IFM2_SCALAR",
    0x185: "IFM2_PRECISION", 0x189: "IFM2_ZERO_POINT", 0x18A: "IFM2_WIDTH0_M1",
    0x18B: "IFM2_HEIGHT0_M1", 0x18C: "IFM2_HEIGHT1_M1", 0x18D: "IFM2_IB_START",
    0x18F: "IFM2_REGION"}

CMD1_REGISTERS = {
    0x000: "IFM_BASE0", 0x001: "IFM_BASE1", 0x002: "IFM_BASE2", 0x003: "IFM_BASE3",
    0x004: "IFM_STRIDE_X", 0x005: "IFM_STRIDE_Y", 0x006: "IFM_STRIDE_C",
    0x010: "OFM_BASE0", 0x011: "OFM_BASE1", 0x012: "OFM_BASE2", 0x013: "OFM_BASE3",
    0x014: "OFM_STRIDE_X", 0x015: "OFM_STRIDE_Y", 0x016: "OFM_STRIDE_C",
    0x020: "WEIGHT_BASE", 0x021: "WEIGHT_LENGTH", 0x022: "SCALE_BASE", 0x023: "SCALE_LENGTH",
    0x024: "OFM_SCALE", 0x025: "OPA_SCALE", 0x026: "OPB_SCALE",
    0x030: "DMA0_SRC", 0x031: "DMA0_DST", 0x032: "DMA0_LEN", 0x033: "DMA0_SKIP0",
    0x034: "DMA0_SKIP1",
    0x080: "IFM2_BASE0", 0x081: "IFM2_BASE1", 0x082: "IFM2_BASE2", 0x083: "IFM2_BASE3",
    0x084: "IFM2_STRIDE_X", 0x085: "IFM2_STRIDE_Y", 0x086: "IFM2_STRIDE_C",
    0x090: "WEIGHT1_BASE", 0x091: "WEIGHT1_LENGTH", 0x092: "SCALE1_BASE",
    0x093: "SCALE1_LENGTH"}

# cmd1 registers whose parameter [7:0] carries address bits [39:32] on U65 (§3.1)
_ADDRESS_REGISTERS = {n for n in CMD1_REGISTERS.values()
                      if "BASE" in n or n in ("DMA0_SRC", "DMA0_DST")}
_S16_REGISTERS = {"IFM_ZERO_POINT", "OFM_ZERO_POINT", "IFM2_ZERO_POINT", "ACTIVATION_MIN",
                  "ACTIVATION_MAX", "IFM2_SCALAR"}

POOL_MODES = ["MAX", "AVERAGE", "REDUCE_SUM"]
ELEMENTWISE_MODES = ["MUL", "ADD", "SUB", "MIN", "MAX", "LRELU", "ABS", "CLZ", "SHR", "SHL"]
ROUND_MODES = ["DBL", "TRUNCATE", "NATURAL", "round3"]
FORMATS = ["NHWC", "NHCWB16", "format2", "format3"]
ACC_FORMATS = ["I32", "I40", "F16", "acc3"]


@dataclass
class Command:
    index: int
    offset: int                     # byte offset in the stream (the QREAD of this command)
    opcode: int
    cmd1: bool
    param: int                      # 16-bit parameter
    payload: Optional[int]          # cmd1's 32-bit payload word
    name: str
    summary: str = ""               # for NPU_OP_*: the decoded operation

    @property
    def short_name(self) -> str:
        return self.name[len("NPU_OP_"):] if self.name.startswith("NPU_OP_") else self.name


def _s16(v: int) -> int:
    return v - 0x10000 if v & 0x8000 else v


def _command_name(cmd1: bool, opcode: int) -> str:
    if cmd1:
        return CMD1_REGISTERS.get(opcode, f"UNKNOWN_CMD1_0x{opcode:03x}")
    if opcode in OPERATIONS:
        return OPERATIONS[opcode]
    return CMD0_REGISTERS.get(opcode, f"UNKNOWN_CMD0_0x{opcode:03x}")


def decode_stream(words, product: int = 0) -> List[Command]:
    """Every command of a stream, in order, with an op summary on each NPU_OP_*. Decoding
    stops after NPU_OP_STOP; a cmd1 without its payload word is an error."""
    out: List[Command] = []
    regs: Dict[str, int] = {}
    i = 0
    while i < len(words):
        w = words[i]
        opcode, cmd1, param = w & 0x3FF, bool(w & 0x4000), w >> 16
        payload = None
        if cmd1:
            if i + 1 >= len(words):
                raise CommandStreamError(f"command {len(out)} at byte {4 * i}: cmd1 without "
                                         "its payload word")
            payload = words[i + 1]
        name = _command_name(cmd1, opcode)
        cmd = Command(len(out), 4 * i, opcode, cmd1, param, payload, name)
        if cmd1:
            value = payload
            if product == 1 and name in _ADDRESS_REGISTERS:
                value |= (param & 0xFF) << 32
            regs[name] = value
            if name in ("OFM_SCALE", "OPA_SCALE"):
                regs[name + "_SHIFT"] = param & 0x3F
        elif name in OPERATIONS.values():
            cmd.summary = _summary(name, param, regs)
        else:
            regs[name] = param
        out.append(cmd)
        i += 2 if cmd1 else 1
        if name == "NPU_OP_STOP":
            break
    return out


# --------------------------------------------------------------------------
# Operation summaries

def _r(regs, name, default=0):
    return regs.get(name, default)


def _precision(p: int, ofm: bool) -> str:
    bits = 8 << (((p >> 1) if ofm else (p >> 2)) & 3)
    return f"{'s' if p & 1 else 'u'}{bits} {FORMATS[(p >> 6) & 3]}"


def _fmap(regs, prefix: str, ofm: bool = False) -> str:
    if ofm:
        shape = (f"{_r(regs, 'OFM_HEIGHT_M1') + 1}x{_r(regs, 'OFM_WIDTH_M1') + 1}"
                 f"x{_r(regs, 'OFM_DEPTH_M1') + 1}")
    else:
        shape = (f"{_r(regs, prefix + '_HEIGHT0_M1') + 1}x{_r(regs, prefix + '_WIDTH0_M1') + 1}"
                 f"x{_r(regs, 'IFM_DEPTH_M1') + 1}")
    region = _r(regs, prefix + "_REGION") & 7
    base = _r(regs, prefix + "_BASE0")
    prec = _r(regs, prefix + "_PRECISION")
    zp = _s16(_r(regs, prefix + "_ZERO_POINT"))
    strides = (f"{_r(regs, prefix + '_STRIDE_Y')}/{_r(regs, prefix + '_STRIDE_X')}"
               f"/{_r(regs, prefix + '_STRIDE_C')}")
    return (f"{prefix.lower()} {shape} {_precision(prec, ofm)} r{region}@0x{base:x} "
            f"strides y/x/c {strides} zp {zp}")


def _kernel(regs) -> str:
    s = _r(regs, "KERNEL_STRIDE")
    sx = 1 + ((s & 1) | (((s >> 6) & 1) << 1))
    sy = 1 + (((s >> 1) & 1) | (((s >> 9) & 1) << 1))
    dx, dy = 1 + ((s >> 3) & 1), 1 + ((s >> 4) & 1)
    kw = _r(regs, "KERNEL_WIDTH_M1") // dx + 1
    kh = _r(regs, "KERNEL_HEIGHT_M1") // dy + 1
    pads = (f"t{_r(regs, 'IFM_PAD_TOP')} l{_r(regs, 'IFM_PAD_LEFT')} "
            f"b{_r(regs, 'IFM_PAD_BOTTOM')} r{_r(regs, 'IFM_PAD_RIGHT')}")
    order = " part-kernel-first" if s & 4 else ""
    return f"kernel {kh}x{kw} stride {sy}x{sx} dilation {dy}x{dx} pad {pads}{order}"


def _output_stage(regs) -> str:
    p = _r(regs, "OFM_PRECISION")
    act = _r(regs, "ACTIVATION")
    fn = act & 0x1F
    fn_name = {0: "NONE", 3: "TANH", 4: "SIGMOID"}.get(fn, f"LUT{fn - 16}" if 16 <= fn <= 23
                                                         else f"act{fn}")
    scale = ("global OFM_SCALE {}>>{}".format(_r(regs, "OFM_SCALE"), _r(regs, "OFM_SCALE_SHIFT"))
             if p & 0x100 else "per-channel scales")
    return (f"round {ROUND_MODES[(p >> 14) & 3]} {scale} act {fn_name} "
            f"clamp [{_s16(_r(regs, 'ACTIVATION_MIN'))},{_s16(_r(regs, 'ACTIVATION_MAX'))}] "
            f"acc {ACC_FORMATS[_r(regs, 'ACC_FORMAT') & 3]}")


def _block(regs) -> str:
    return (f"block {_r(regs, 'OFM_BLK_HEIGHT_M1') + 1}x{_r(regs, 'OFM_BLK_WIDTH_M1') + 1}"
            f"x{_r(regs, 'OFM_BLK_DEPTH_M1') + 1}")


def _weights(regs) -> str:
    return (f"weights r{_r(regs, 'WEIGHT_REGION') & 7}@0x{_r(regs, 'WEIGHT_BASE'):x}"
            f"+{_r(regs, 'WEIGHT_LENGTH')} scales r{_r(regs, 'SCALE_REGION') & 7}"
            f"@0x{_r(regs, 'SCALE_BASE'):x}+{_r(regs, 'SCALE_LENGTH')}")


def _dma_end(regs, which: str) -> str:
    region = _r(regs, f"DMA0_{which}_REGION")
    addr = _r(regs, f"DMA0_{which}")
    if region & 0x100:
        return f"SHRAM@0x{addr:x}"
    return f"r{region & 7}@0x{addr:x}"


def _summary(name: str, param: int, regs) -> str:
    if name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
        return " | ".join([name[7:], _fmap(regs, "IFM"), _fmap(regs, "OFM", True), _kernel(regs),
                           _weights(regs), _block(regs), _output_stage(regs)])
    if name == "NPU_OP_POOL":
        mode = POOL_MODES[param] if param < len(POOL_MODES) else f"mode{param}"
        return " | ".join([f"POOL {mode}", _fmap(regs, "IFM"), _fmap(regs, "OFM", True),
                           _kernel(regs), _block(regs), _output_stage(regs)])
    if name == "NPU_OP_ELEMENTWISE":
        mode = ELEMENTWISE_MODES[param] if param < len(ELEMENTWISE_MODES) else f"mode{param}"
        bc = _r(regs, "IFM2_BROADCAST")
        if bc & 0x80:
            ifm2 = f"ifm2 scalar {_s16(_r(regs, 'IFM2_SCALAR'))}"
        else:
            ifm2 = _fmap(regs, "IFM2")
            flags = [f for bit, f in ((0, "H"), (1, "W"), (2, "C")) if bc >> bit & 1]
            if flags:
                ifm2 += " broadcast " + "".join(flags)
        if bc & 0x40:
            ifm2 += " reversed"
        return " | ".join([f"ELEMENTWISE {mode}", _fmap(regs, "IFM"), ifm2,
                           _fmap(regs, "OFM", True), _block(regs), _output_stage(regs)])
    if name == "NPU_OP_DMA_START":
        return (f"DMA {_dma_end(regs, 'SRC')} -> {_dma_end(regs, 'DST')} "
                f"len {_r(regs, 'DMA0_LEN')}")
    if name == "NPU_OP_DMA_WAIT":
        return f"DMA_WAIT until <= {param & 0xF} outstanding"
    if name == "NPU_OP_KERNEL_WAIT":
        return f"KERNEL_WAIT until <= {param & 0x3} outstanding"
    return f"{name[7:]} 0x{param:x}"


# --------------------------------------------------------------------------
# Listing

def operation_counts(cmds: List[Command]) -> Counter:
    """NPU_OP_* counts by short name, with POOL/ELEMENTWISE also counted per mode
    ("ELEMENTWISE ADD")."""
    c: Counter = Counter()
    for cmd in cmds:
        if cmd.name in OPERATIONS.values():
            c[cmd.short_name] += 1
            if cmd.name in ("NPU_OP_POOL", "NPU_OP_ELEMENTWISE"):
                c[" ".join(cmd.summary.split(" ", 2)[:2])] += 1
    return c


COMPUTE_OPS = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE")


@dataclass
class StreamStats:
    """What a run of the whole stream does, counted from the commands alone (the fields of
    ptec_npu_stats that need no arithmetic)."""
    commands: int                   # every command up to and including NPU_OP_STOP
    operations: int                 # CONV, DEPTHWISE, POOL, ELEMENTWISE
    dma_count: int                  # DMA_START
    dma_bytes: int                  # DMA0_LEN at each DMA_START (1-D transfers)


def stream_stats(cmds: List[Command]) -> StreamStats:
    regs: Dict[str, int] = {}
    ops = dmas = dma_bytes = 0
    for c in cmds:
        if c.cmd1:
            regs[c.name] = c.payload
        elif c.name in COMPUTE_OPS:
            ops += 1
        elif c.name == "NPU_OP_DMA_START":
            dmas += 1
            dma_bytes += regs.get("DMA0_LEN", 0)
    return StreamStats(len(cmds), ops, dmas, dma_bytes)


def regions_used(cmds: List[Command]) -> set:
    """The base-pointer regions the stream's operations and DMAs address (a DMA into the
    NPU's internal SHRAM and a scalar IFM2 address none)."""
    regs: Dict[str, int] = {}
    used = set()
    for c in cmds:
        if not c.cmd1 and c.name not in OPERATIONS.values():
            regs[c.name] = c.param
            continue
        if c.name == "NPU_OP_DMA_START":
            names = [n for n in ("DMA0_SRC_REGION", "DMA0_DST_REGION")
                     if not regs.get(n, 0) & 0x100]
        elif c.name in COMPUTE_OPS:
            names = ["IFM_REGION", "OFM_REGION"]
            if c.name == "NPU_OP_ELEMENTWISE" and not regs.get("IFM2_BROADCAST", 0) & 0x80:
                names.append("IFM2_REGION")
            if c.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
                names += ["WEIGHT_REGION", "SCALE_REGION"]
        else:
            continue
        used.update(regs.get(n, 0) & 7 for n in names)
    return used


def command_line(cmd: Command) -> str:
    head = f"{cmd.index:5d} @0x{cmd.offset:05x} {cmd.name:<20s}"
    if cmd.summary:
        return f"{head} {cmd.summary}"
    if cmd.cmd1:
        return f"{head} 0x{cmd.payload:08x} (param 0x{cmd.param:04x})"
    value = _s16(cmd.param) if cmd.name in _S16_REGISTERS else cmd.param
    return f"{head} {value}"


def listing(cmds: List[Command], ops_only: bool = False) -> str:
    return "\n".join(command_line(c) for c in cmds if c.summary or not ops_only)


def describe_cop(data: bytes, commands: bool = False, indent: str = "") -> str:
    """A COP1 payload as text: config, id, stream size, operation counts and, with
    `commands`, the full command listing."""
    cop = parse_cop(data)
    cmds = decode_stream(cop.stream, cop.product)
    counts = operation_counts(cmds)
    ident = cop.id
    lines = [f"COP1: config 0x{cop.config:08x} = {cop.target} (shram {cop.shram_kib} KiB), "
             f"id 0x{ident:08x} (arch {ident >> 28}.{(ident >> 20) & 0xFF}."
             f"{(ident >> 16) & 0xF})",
             f"command stream: {len(cop.stream)} words at payload byte {cop.stream_offset}, "
             f"{len(cmds)} commands",
             "operations: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    st = stream_stats(cmds)
    lines.append(f"a run: {st.commands} commands, {st.operations} operations, "
                 f"{st.dma_count} DMAs moving {st.dma_bytes} bytes")
    if commands:
        lines += listing(cmds).splitlines()
    return "\n".join(indent + line for line in lines)
