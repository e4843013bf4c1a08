"""A 1-D selection given a dim of size 1 in front, as a program output
(issue 15): `x[m].unsqueeze(0)`, `x[m][None]`, `x[m].view(1, -1)`,
`x[m].reshape(1, -1)`. The result [1, n] has a bound-dynamic dim that is
not the first, so it cannot be a view of the 1-D selection's planned
tensor in a program of static shapes; instead the selection itself is made
with a rank-2 out: the node becomes a `masked_select` with attrs `row`,
planned at [1, bound], lowered to aten::masked_select.out into that
[1, bound] bound-dynamic tensor, whose kernel sets [1, count] (ptec's
portable kernel takes that form; the .pte stays upstream's format, the
dynamism flag per tensor). Only as a program output: a reader of the
[1, n] would see a variable length in its second dim, which no kernel
takes (apply element-wise ops before the unsqueeze; capture_masked_select
moves them before the selection). A row selection's unsqueeze(0) ([1, n,
C]: aten::index sets a first dim only) and a rank-3 view stay refused."""
from __future__ import annotations

from .ir import Graph, Node, origin


def _adds_a_leading_one(user: Node, sel: Node) -> bool:
    """user is a view [1, n] of the 1-D selection sel: unsqueeze at 0 (or
    -2), or a target [1, -1] / [1, the example's count] (the trace writes
    `s[None]` with the example's length)."""
    a = user.attrs
    if user.op != "reshape" or user.inputs != [sel.name] or len(sel.shape) != 1 or sel.attrs.get("rows") \
            or sel.attrs.get("row"):
        return False
    if "unsqueeze" in a and set(a) <= {"unsqueeze", "source"}:
        return a["unsqueeze"] in (0, -2)
    if "target_shape" in a and set(a) <= {"target_shape", "source"}:
        t = [int(v) for v in a["target_shape"]]
        return len(t) == 2 and t[0] == 1 and (t[1] == -1 or (user.shape is not None and len(user.shape) == 2
                                                              and t[1] == user.shape[1]))
    return False


def row_output(g: Graph, user: Node, sel: Node) -> bool:
    """user, a program output reading the selection sel, a view [1, n] of
    it: made a selection into [1, bound] itself (True), else False."""
    if user.name not in g.outputs or not _adds_a_leading_one(user, sel):
        return False
    g.nodes[g.nodes.index(user)] = Node(user.name, "masked_select", list(sel.inputs),
                                        dict(row=True, source=origin(user)), shape=[1] + list(sel.shape))
    return True
