"""The Ethos-U accelerator configurations ptec compiles for, and the facts of
each that the compiler needs (spec ethos-u-npu.md §2, §4.1, §4.4): the COP1
config word Vela writes, the MACs per cycle, one core's SHRAM, the LUT area
at the end of SHRAM, and the OFM micro-block depth of the weight order.

Standard library only: the CLI reads the names at start-up."""
from __future__ import annotations

from dataclasses import dataclass

VELA_ID_WORD = 0x10060000          # Vela 3.x: arch 1.0.6 (§2)
LUT_BYTES = 2048                   # the last 2 KiB of SHRAM (§4.1)
MEMORY_MODES = ("Shared_Sram", "Dedicated_Sram")
DEFAULT_FAST_SCRATCH = 384 * 1024  # Vela's Dedicated_Sram_384KB


@dataclass(frozen=True)
class NpuConfig:
    name: str                      # Vela's accelerator name, e.g. "ethos-u55-128"
    product: int                   # 0 U55, 1 U65 (the config word's [31:28])
    log2_macs: int
    shram_kib: int                 # one core's SHRAM
    config_word: int
    cores: int = 1

    @property
    def macs(self) -> int:
        return 1 << self.log2_macs

    @property
    def is_u65(self) -> bool:
        return self.product == 1

    @property
    def lut_address(self) -> int:
        """SHRAM offset of the LUT area (Vela's shram_lut_address)."""
        return self.shram_kib * 1024 - LUT_BYTES

    @property
    def ofm_ublock_depth(self) -> int:
        """The OFM micro-block of the weight order: 4 on the 32-MAC U55 only (§4.4)."""
        return 4 if self.product == 0 and self.log2_macs == 5 else 8

    @property
    def default_cpu(self) -> str:
        """The core next to this NPU when the user names none: the M55 beside a
        U55 (Corstone-300), the i.MX93's M33 beside its U65."""
        return "cortex-m33" if self.is_u65 else "cortex-m55"


CONFIGS = {c.name: c for c in (
    NpuConfig("ethos-u55-32", 0, 5, 16, 0x00001005),
    NpuConfig("ethos-u55-64", 0, 6, 16, 0x00001006),
    NpuConfig("ethos-u55-128", 0, 7, 24, 0x00001807),
    NpuConfig("ethos-u55-256", 0, 8, 48, 0x00003008),
    NpuConfig("ethos-u65-256", 1, 8, 48, 0x10003008),
    NpuConfig("ethos-u65-512", 1, 9, 48, 0x10006009, cores=2),
)}
NPU_TARGETS = tuple(CONFIGS)


def npu_config(name: str) -> NpuConfig:
    try:
        return CONFIGS[name]
    except KeyError:
        raise ValueError(f"unknown Ethos-U accelerator {name!r}; one of: "
                         + ", ".join(NPU_TARGETS)) from None
