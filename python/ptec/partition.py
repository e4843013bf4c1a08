"""Assign every graph node to a backend and record why (ptec.backends).

Delegating backends claim first, from the graph alone, so that runs of
adjacent claimed nodes can become one delegate each. Every other node is
placed in graph order by the first kernel backend that claims it (cortex_m,
then portable, which takes everything). The order matters: cortex_m's rule
for cheap ops reads where their inputs went. A kernel lowering that finds,
while emitting, that it cannot take a node hands it back, and the node moves
to the next backend that claims it, with both reasons kept.

Inputs, constants and identities produce no code of their own: they are
placed on "none".
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .backends import Backend, DelegateBackend, KernelBackend
from .ir import Graph, Node, origin
from .lowered import Placement

FIRST_CHOICE = "the first backend asked that takes it"
NO_CODE = {"input": "a program input", "constant": "a constant, stored where it is used",
           "identity": "no operation: the value of its input",
           "state": "a state tensor: planned memory with an initial value, kept across runs",
           "state_write": "stores a value into its state tensor (a copy after the rest of the run)"}


class Partition:
    def __init__(self, graph: Graph, backends: Sequence[Backend]):
        self.graph = graph
        self.delegating = [b for b in backends if isinstance(b, DelegateBackend)]
        self.kernel = [b for b in backends if isinstance(b, KernelBackend)]
        self.placements: Dict[str, Placement] = {}
        self.refused: Dict[str, List[str]] = {}      # node -> "backend: why" so far
        self._backend_of: Dict[str, Backend] = {}

    def backend_of(self, name: str) -> Optional[Backend]:
        return self._backend_of.get(name)

    def delegate_groups(self, ctx) -> List[Tuple[DelegateBackend, List[Node]]]:
        """Runs of adjacent nodes (constants between them do not break a run)
        claimed by one delegating backend, placed on it."""
        groups: List[Tuple[DelegateBackend, List[Node]]] = []
        current = None
        for n in self.graph.nodes:
            if n.op in NO_CODE:
                if n.op != "constant":
                    current = None
                continue
            taker = None
            for b in self.delegating:
                why = n.attrs.get("fp32") or b.claim(n, ctx)      # fp32: computed so on purpose (its reason)
                if why is None:
                    taker = b
                    break
                self.refused.setdefault(n.name, []).append(f"{b.name}: {why}")
            if taker is None:
                current = None
                continue
            if current is None or current[0] is not taker:
                current = (taker, [])
                groups.append(current)
            current[1].append(n)
            self._set(n, taker, "; ".join(self.refused.get(n.name, [])) or FIRST_CHOICE)
        return [g for g in groups if self._kept(g, ctx)]

    def _kept(self, group, ctx) -> bool:
        """A delegating backend may decline a whole run (review: why, or
        None); its nodes then go to the kernel backends with that reason."""
        backend, nodes = group
        review = getattr(backend, "review", None)
        why = review(nodes, ctx) if review else None
        if why is None:
            return True
        for n in nodes:
            self.refused.setdefault(n.name, []).append(f"{backend.name}: {why}")
            self._backend_of.pop(n.name, None)
            self.placements.pop(n.name, None)
        return False

    def place(self, n: Node, ctx) -> KernelBackend:
        """The first kernel backend that takes n."""
        for b in self.kernel:
            why = b.claim(n, ctx)
            if why is None:
                self._set(n, b, "; ".join(self.refused.get(n.name, [])) or FIRST_CHOICE)
                return b
            self.refused.setdefault(n.name, []).append(f"{b.name}: {why}")
        raise ValueError(f"no backend takes node {n.name} ({n.op})")

    def hand_back(self, n: Node, backend: KernelBackend, why: str, ctx) -> KernelBackend:
        """backend could not lower n after all: the next kernel backend that takes it."""
        self.refused.setdefault(n.name, []).append(f"{backend.name}: {why}")
        rest = self.kernel[self.kernel.index(backend) + 1:]
        for b in rest:
            w = b.claim(n, ctx)
            if w is None:
                self._set(n, b, "; ".join(self.refused[n.name]))
                return b
            self.refused[n.name].append(f"{b.name}: {w}")
        raise ValueError(f"no backend takes node {n.name} ({n.op})")

    def place_no_code(self, n: Node) -> None:
        self.placements[n.name] = Placement(n.name, n.op, "none", NO_CODE[n.op], origin(n))

    def _set(self, n: Node, b: Backend, reason: str) -> None:
        self._backend_of[n.name] = b
        self.placements[n.name] = Placement(n.name, n.op, b.name, reason, origin(n))

    def in_graph_order(self) -> List[Placement]:
        return [self.placements[n.name] for n in self.graph.nodes if n.name in self.placements]
