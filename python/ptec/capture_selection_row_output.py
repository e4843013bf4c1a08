"""A 1-D selection given dims of size 1 in front, as a program output
(issue 15): `x[m].unsqueeze(0)`, `x[m][None]`, `x[m].view(1, -1)`,
`x[m].reshape(1, -1)`, `x[m][None, None]`, `x[m].view(1, 1, -1)`. The
result [1, ..., 1, n] has a bound-dynamic dim that is not the first, so it
cannot be a view of the 1-D selection's planned tensor in a program of
static shapes; instead the selection itself is made with that rank: the
node becomes a `masked_select` with attrs `row` (the count of leading
ones), planned at [1, ..., 1, bound], lowered to aten::masked_select.out
into that bound-dynamic tensor, whose kernel sets [1, ..., 1, count]
(ptec's portable kernel takes that form; the .pte stays upstream's format,
the dynamism flag per tensor). Only as a program output: a reader of the
view is lifted to a reader of the selection before capture
(capture_selection_lead), so what reaches here is the view itself. A row
selection's unsqueeze(0) (`boxes[m].unsqueeze(0)`, `boxes[m][None]`: [1, n,
C]) is its aten::index.Tensor_out into [1, bound, C] (ptec's kernel takes a
dim of 1 in front, setting [1, count, C]; upstream's resizes out to
[count, C]), likewise a program output only: its readers
(`boxes[m][None] * 2`, `.sum(1)`, `.softmax(-1)`) are lifted to readers of
the rows before capture as the 1-D view's are (capture_selection_lead)."""
from __future__ import annotations

from .ir import Graph, Node, origin


def _leading_ones(user: Node, sel: Node) -> int:
    """k when user is a view [1] * k + [n] of the 1-D selection sel:
    unsqueeze at 0 (or -2), or a target [1, ..., 1, -1] / [1, ..., 1, the
    example's count] (the trace writes `s[None]` with the example's length;
    a literal view spelling it is refused before capture,
    capture_selection_lead.literal_views); else 0."""
    a = user.attrs
    if user.op != "reshape" or user.inputs != [sel.name] or sel.attrs.get("row"):
        return 0
    if sel.attrs.get("rows"):
        return _one_in_front_of_rows(user, sel)
    if len(sel.shape) != 1:
        return 0
    if "unsqueeze" in a and set(a) <= {"unsqueeze", "source"}:
        return 1 if a["unsqueeze"] in (0, -2) else 0
    if "target_shape" in a and set(a) <= {"target_shape", "source"}:
        t = [int(v) for v in a["target_shape"]]
        if len(t) >= 2 and all(v == 1 for v in t[:-1]) and (t[-1] == -1 or (
                user.shape is not None and len(user.shape) == len(t) and t[-1] == user.shape[-1])):
            return len(t) - 1
    return 0


def _one_in_front_of_rows(user: Node, sel: Node) -> int:
    """1 when user views the row selection sel [n, C...] as [1, n, C...]:
    unsqueeze(0), or a target [1, -1 or the example's count, C...]."""
    a, rank = user.attrs, len(sel.shape)
    if "unsqueeze" in a and set(a) <= {"unsqueeze", "source"}:
        return 1 if a["unsqueeze"] in (0, -rank - 1) else 0
    if "target_shape" in a and set(a) <= {"target_shape", "source"}:
        t = [int(v) for v in a["target_shape"]]
        rest = [int(v) for v in sel.shape[1:]]
        if len(t) == rank + 1 and t[0] == 1 and t[2:] == rest and (t[1] == -1 or (
                user.shape is not None and len(user.shape) == len(t) and t[1] == user.shape[1])):
            return 1
    return 0


def row_output(g: Graph, user: Node, sel: Node) -> bool:
    """user, a program output reading the selection sel, a view [1, ..., 1, n]
    of it: made a selection into [1, ..., 1, bound] itself (True), else False."""
    k = _leading_ones(user, sel) if user.name in g.outputs else 0
    if not k:
        return False
    attrs = dict(row=k, source=origin(user), **({"rows": True} if sel.attrs.get("rows") else {}))
    g.nodes[g.nodes.index(user)] = Node(user.name, "masked_select", list(sel.inputs), attrs,
                                        shape=[1] * k + list(sel.shape))
    return True
