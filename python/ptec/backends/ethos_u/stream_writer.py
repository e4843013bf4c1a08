"""Writes an Ethos-U command stream and its COP1 payload (spec ethos-u-npu.md
§2, §3). Registers persist across operations, so like Vela the writer emits
a register only when its value changes; every register an operation reads is
set before its first use, since no stream may depend on an earlier invoke.
Command names and opcodes come from command_stream's tables (one place)."""
from __future__ import annotations

import struct
from typing import Dict, List, Optional, Tuple

from .command_stream import (ACTION_COMMAND_STREAM, ACTION_NOP, ACTION_OPTIMIZER_CONFIG,
                             CMD0_REGISTERS, CMD1_REGISTERS, COP1_MAGIC, OPERATIONS)
from .npu_config import VELA_ID_WORD, NpuConfig

CMD1_FLAG = 0x4000
STOP_PARAM = 0xFFFF
_CMD0 = {name: op for op, name in CMD0_REGISTERS.items()}
_CMD1 = {name: op for op, name in CMD1_REGISTERS.items()}
_OPS = {name[len("NPU_OP_"):]: op for op, name in OPERATIONS.items()}


class StreamWriter:
    def __init__(self, cfg: NpuConfig):
        self.cfg = cfg
        self.words: List[int] = []
        self._regs: Dict[str, Tuple[int, Optional[int]]] = {}
        self.operations = 0

    def set(self, name: str, value: int) -> None:
        """A cmd0 register (16-bit parameter); s16 values may be negative."""
        if not -0x8000 <= value <= 0xFFFF:
            raise ValueError(f"{name} = {value} does not fit 16 bits")
        value &= 0xFFFF
        if self._regs.get(name) == (value, None):
            return
        self._regs[name] = (value, None)
        self.words.append(_CMD0[name] | (value << 16))

    def set32(self, name: str, payload: int, param: int = 0) -> None:
        """A cmd1 register: the 32-bit payload, and its 16-bit parameter (a
        scale's shift, a U65 address's bits 39..32)."""
        if not 0 <= payload <= 0xFFFFFFFF or not 0 <= param <= 0xFFFF:
            raise ValueError(f"{name} = {payload} (parameter {param}) out of range")
        if self._regs.get(name) == (param, payload):
            return
        self._regs[name] = (param, payload)
        self.words.extend((_CMD1[name] | CMD1_FLAG | (param << 16), payload))

    def address(self, name: str, value: int) -> None:
        """An address register: 32 bits on the U55, 40 on the U65 (§3.1)."""
        limit = 1 << (40 if self.cfg.is_u65 else 32)
        if not 0 <= value < limit:
            raise ValueError(f"{name} = {value} is outside the NPU's address space")
        self.set32(name, value & 0xFFFFFFFF, value >> 32)

    def op(self, name: str, param: int = 0) -> None:
        """Runs NPU_OP_<name>; waits and DMAs are not operations."""
        self.words.append(_OPS[name] | (param << 16))
        if name in ("CONV", "DEPTHWISE", "POOL", "ELEMENTWISE"):
            self.operations += 1

    def stop(self) -> None:
        self.words.append(_OPS["STOP"] | (STOP_PARAM << 16))

    def cop1(self) -> bytes:
        """The COP1 payload as Vela lays it out: magic, OPTIMIZER_CONFIG
        (config and id words), three NOPs, the COMMAND_STREAM record."""
        n = len(self.words)
        if n >= 1 << 24:
            raise ValueError(f"command stream of {n} words exceeds the 16 MiB limit")
        head = [COP1_MAGIC, 0x00100000 | ACTION_OPTIMIZER_CONFIG, self.cfg.config_word,
                VELA_ID_WORD, ACTION_NOP, ACTION_NOP, ACTION_NOP,
                ACTION_COMMAND_STREAM | ((n >> 16) & 0xFF) << 8 | (n & 0xFFFF) << 16]
        words = head + self.words
        return struct.pack("<%dI" % len(words), *words)
