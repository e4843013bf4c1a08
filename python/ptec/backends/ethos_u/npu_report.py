"""What `compile --target ethos-u...` tells the user: a network summary in
the form Vela users know, and the placement of every operator (NPU or CPU,
why, MACs, compressed weight bytes, estimated NPU cycles)."""
from __future__ import annotations

from typing import Dict, List

import numpy as np

from .backend import EthosUBackend


def node_macs(g, n) -> int:
    """Multiply-accumulates of a conv2d or linear node (0 for other ops)."""
    if n.op == "conv2d":
        cout, cin_g, kh, kw = np.shape(n.attrs["weight"])
        return int(np.prod(n.shape[2:])) * n.shape[0] * cout * cin_g * kh * kw
    if n.op == "linear":
        cout, cin = np.shape(n.attrs["weight"])
        return int(np.prod(n.shape[:-1])) * cout * cin
    return 0


def _row(label: str, value: str) -> str:
    return f"{label:<40s} {value:>24s}"


def network_summary(res, backend: EthosUBackend, cpu: str) -> List[str]:
    g = res.graph
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    npu = [p for p in placed if p.backend == backend.name]
    total_macs = sum(node_macs(g, g.node(p.node)) for p in placed)
    npu_macs = sum(node_macs(g, g.node(p.node)) for p in npu)
    sram = max((d["sram"] for d in backend.delegates), default=0)
    flash = sum(d["flash"] + d["cop"] for d in backend.delegates)
    n_cpu = len(placed) - len(npu)

    def pct(a, b):
        return f"{100.0 * a / b:.1f}%" if b else "0.0%"
    return [
        f"Network summary for {g.name}",
        _row("Accelerator configuration", backend.cfg.name),
        _row("CPU", cpu),
        _row("Memory mode", backend.memory_mode),
        _row("NPU delegates", str(len(backend.delegates))),
        _row("Total SRAM used (largest work area)", f"{sram / 1024:.2f} KiB"),
        _row("Total Off-chip Flash used", f"{flash / 1024:.2f} KiB"),
        *([_row("Fast scratch used (region 2)",
                f"{max(d['fast'] for d in backend.delegates) / 1024:.2f} KiB")]
          if backend.dedicated else []),
        _row("Estimated NPU cycles", f"{sum(p.cycles for p in backend.placements):,}"),
        f"CPU operators = {n_cpu} ({pct(n_cpu, len(placed))})",
        f"NPU operators = {len(npu)} ({pct(len(npu), len(placed))})",
        _row("Neural network macs", f"{total_macs:,} MACs/batch"),
        _row("MACs on the NPU", f"{npu_macs:,} ({pct(npu_macs, total_macs)})"),
    ]


def placement_table(res, backend: EthosUBackend) -> List[str]:
    """One line per operator, in graph order."""
    g = res.graph
    info: Dict[str, object] = {p.node: p for p in backend.placements}
    lines = [f"{'operator':<40s} {'op':<12s} {'where':<9s} {'MACs':>12s} {'weights B':>10s} "
             f"{'NPU cycles':>11s}  why"]
    for p in res.lowered.placements:
        if p.backend == "none":
            continue
        n = g.node(p.node)
        i = info.get(p.node)
        if p.backend == backend.name:
            where = "NPU"
            why = f"delegate {i.delegate}" if i else "no NPU operation: the next one reads its input"
        else:
            where, why = p.backend, p.reason
        lines.append(f"{(p.source or p.node)[:40]:<40s} {n.op[:12]:<12s} {where:<9s} "
                     f"{node_macs(g, n):>12,} {(i.weight_bytes if i else 0):>10,} "
                     f"{(i.cycles if i else 0):>11,}  {why}")
    d = backend.delegates
    for k, sizes in enumerate(d):
        lines.append(f"delegate {k}: {sizes['commands']} command words, flash {sizes['flash']:,} B "
                     f"(weights, scales, LUTs) + {sizes['cop']:,} B command data, SRAM work "
                     f"area {sizes['sram']:,} B")
    return lines
