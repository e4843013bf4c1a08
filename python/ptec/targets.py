"""The Cortex-M cores ptec compiles for, and the kernel ISA each one runs.

The runtime picks a kernel's variant at compile time from the compiler's
feature macros (src/kernels/cortex_m/nn/ptec_nn_isa.h): Helium on the M55,
the DSP extension on the M33, M7 and M4, the portable reference on the M3
(no DSP extension). The AOT compiler sizes each kernel's scratch for that
variant (backends/cortex_m/scratch.py). Each core has a QEMU board
(docs/targets.md). Standard library only: the CLI reads this at start-up."""
from __future__ import annotations

ISA = {"cortex-m55": "MVE", "cortex-m33": "DSP", "cortex-m7": "DSP", "cortex-m4": "DSP",
       "cortex-m3": "SCALAR"}
CORES = tuple(ISA)
