"""The AOT side of ptec's backends: one folder per backend.

A backend has a partitioner (`claim`: does it take this graph node, and if
not, why) and a lowering. There are two kinds:

* A kernel backend (`KernelBackend`) lowers one node at a time into kernel
  calls of the runtime's operator table: `cortex_m` (int8, CMSIS-NN
  numerics) and `portable` (fp32 ATen kernels, the fallback that takes
  everything).
* A delegating backend (`DelegateBackend`) takes runs of adjacent nodes and
  writes one blob per run; the emitter stores the blob as a BackendDelegate
  (inline or in a segment) and calls it with a DelegateCall. The runtime
  finds the backend by `delegate_id` in its backend table. Ethos-U will be
  one; tests/python/test_backend_seam.py has a test-only one.

`ptec.partition` asks the backends in order (delegating backends first, then
cortex_m, then portable) and records where each node went and why; the
driver `ptec.lower` runs the lowerings and produces a `ptec.lowered.Lowered`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from ..pte.schema import DataLocation

if TYPE_CHECKING:       # annotations only: importing a backend package stays torch-free
    from ..ir import Node
    from ..lowered import Act


class Backend:
    name: str = ""
    # True when the values this backend produces are fp32: a cheap op after
    # such a value may stay in fp32 rather than be quantized (cortex_m's rule).
    produces_float: bool = False

    def claim(self, n: Node, ctx) -> Optional[str]:
        """None when this backend takes node n, else the reason it does not.
        ctx is the lowering context (the graph, the placements so far)."""
        raise NotImplementedError


class KernelBackend(Backend):
    def lower_node(self, n: Node, ctx) -> Optional[Act]:
        """Emit n's kernel calls and return its value, or None to hand the
        node back (a fact found only while lowering; the reason is recorded
        with ctx.refuse first)."""
        raise NotImplementedError


@dataclass
class DelegateBlob:
    data: bytes
    compile_specs: List[Tuple[str, bytes]] = field(default_factory=list)
    location: int = DataLocation.SEGMENT


class DelegateBackend(Backend):
    delegate_id: str = ""            # the name in the runtime's backend table

    def write_blob(self, nodes: Sequence[Node], inputs: Sequence[Tuple[str, Act]],
                   outputs: Sequence[Tuple[str, Act]], ctx) -> DelegateBlob:
        """Lower a run of adjacent claimed nodes and serialise it. inputs and
        outputs are (graph node name, int8 value) in DelegateCall order."""
        raise NotImplementedError


def default_backends() -> List[Backend]:
    from .cortex_m import CortexMBackend
    from .portable import PortableBackend
    return [CortexMBackend(), PortableBackend()]
