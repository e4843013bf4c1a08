"""Memory planning: give every planned buffer an offset in one arena so that
buffers whose lifetimes overlap never share bytes.

Input is a list of Buffer(id, nbytes, first, last) where first/last are the
instruction indices of the first write and the last read (inclusive). Views
are not buffers: they are aliases of their base and extend its lifetime,
which the caller resolves before planning. The algorithm is greedy by
decreasing size (ties: longer lifetime first), placing each buffer at the
lowest aligned offset that fits between the already placed buffers it
overlaps in time. The liveness lower bound (the largest sum of bytes live at
any one instruction) is reported next to the result so the gap is visible.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List

ALIGNMENT = 16


@dataclass
class Buffer:
    id: object
    nbytes: int
    first: int
    last: int


@dataclass
class MemoryPlan:
    offsets: Dict[object, int] = field(default_factory=dict)
    arena_bytes: int = 0
    lower_bound: int = 0

    def summary(self) -> str:
        return (f"planned {self.arena_bytes} bytes "
                f"(liveness lower bound {self.lower_bound} bytes)")


def _align(n: int, a: int = ALIGNMENT) -> int:
    return (n + a - 1) // a * a


def liveness_lower_bound(buffers: List[Buffer], alignment: int = ALIGNMENT) -> int:
    events = sorted({b.first for b in buffers} | {b.last for b in buffers})
    best = 0
    for t in events:
        best = max(best, sum(_align(b.nbytes, alignment) for b in buffers
                             if b.first <= t <= b.last))
    return best


def plan_memory(buffers: List[Buffer], alignment: int = ALIGNMENT) -> MemoryPlan:
    order = sorted(buffers, key=lambda b: (-_align(b.nbytes, alignment),
                                           -(b.last - b.first), str(b.id)))
    placed: List[tuple] = []        # (offset, end, buffer)
    plan = MemoryPlan()
    for b in order:
        size = _align(b.nbytes, alignment)
        conflicts = sorted((o, e) for o, e, p in placed
                           if not (p.last < b.first or b.last < p.first))
        offset = 0
        for o, e in conflicts:
            if offset + size <= o:
                break
            offset = max(offset, _align(e, alignment))
        placed.append((offset, offset + size, b))
        plan.offsets[b.id] = offset
        plan.arena_bytes = max(plan.arena_bytes, offset + size)
    plan.lower_bound = liveness_lower_bound(buffers, alignment)
    return plan


def plan_lowered(lowered) -> MemoryPlan:
    """Stage 4 of the compiler: plan the activations and scratch buffers of a
    lowered program (ptec.lowered.Lowered). Views share their base's storage."""
    return plan_memory(lowered.builder.lifetimes())
