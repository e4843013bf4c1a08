"""ptec's estimate of an NPU operation's cycles, for the placement report.

The model (ptec's own, coarse; docs/ethos-u.md states it): an operation
takes the larger of its compute and its memory time.
* compute: the OFM is processed in whole blocks, so the work is the OFM
  rounded up to blocks, times the kernel taps, times the IFM depth rounded
  up to the 8-deep IFM micro-block (1 for depthwise and pools), divided by
  the MACs per cycle; depthwise and pools use one MAC column in eight
  (they have no IFM-depth reduction to spread over the array);
* memory: IFM, OFM and weight-stream bytes at 16 bytes per cycle (one
  128-bit AXI beat per cycle, no stalls).
Silicon adds what this ignores (DMA and compute overlap, bank conflicts,
the command stream's own reads); only a board run can pin the constant.
"""
from __future__ import annotations

import math

from .npu_config import NpuConfig

BYTES_PER_CYCLE = 16
IFM_UBLOCK = 8


def estimate_cycles(cfg: NpuConfig, op) -> int:
    o, b = op.ofm_shape, op.block
    blocks = (math.ceil(o.h / b.height) * b.height * math.ceil(o.w / b.width) * b.width
              * math.ceil(o.c / b.depth) * b.depth)
    kh, kw = op.kernel
    if op.kind == "conv":
        depth = math.ceil(op.ifm_shape.c / IFM_UBLOCK) * IFM_UBLOCK
        rate = cfg.macs
    else:
        depth, rate = 1, max(cfg.macs // IFM_UBLOCK, 1)
    compute = blocks * kh * kw * depth / rate
    weight_bytes = 0 if op.weights is None else op.weights.size
    memory = (op.ifm_shape.nbytes + o.nbytes + weight_bytes) / BYTES_PER_CYCLE
    return int(math.ceil(max(compute, memory)))
