"""Boxes and scores picked by integer indices before nms, read in fp32.

`torchvision.ops.nms(boxes[idx], scores[idx], t)` with idx computed in
the program (`scores.topk(k).indices`, `scores.argsort()[:k]`,
`boxes.index_select(0, idx)`): capture_tensor_index makes each pick a row
lookup, aten::embedding.out on a table that is a view of the float input
([K, 4] boxes, [K, 1] scores). On the int8 path that table is the input's
int8 copy, so nms met boxes rounded to the input's grid (an IoU near t
moved across it: a box kept that torchvision suppresses, 1 of 8 feeds in
session 22's probe) and scores rounded together (equal codes sorted as
ties). nms itself runs in fp32 on the values it is given (capture_nms).

`float_rows_for_nms` (after capture, on the IR) walks back from each
`nms` / `batched_nms` node's boxes and scores (through the argsort of
the scores, views, and the steps capture_nms already runs in fp32, as
batched_nms's coordinate shift) to such a lookup, and marks fp32 the
lookup, the views (and joins, torch.cat) between its table and float
program inputs, and the views after it: the portable backend's aten::embedding.out then copies
float32 rows of the input itself (the kernel copies rows of any dtype,
each id checked against the table), exactly torch's values. A table
computed by int8 layers is left as it is: its int8 rows are the values
the program holds, which a lookup only copies.

The picked float rows' element-wise readers (_float_readers: views and
selections of them, add / sub / mul / div of them, of each other and of
constants, `p[:, 2:] - p[:, :2]`, `(p[:, 2] - p[:, 0]) * (p[:, 3] -
p[:, 1])`) run in fp32 too: on int8 the slices took the input's grid and
each step its own (2.10 to 2.31 and 1.93 to 15.77 output steps from
torch, issue 15; now torch's values). A reader of anything else stays as
it was (an int8 layer quantizes the float rows it reads)."""
from __future__ import annotations

from typing import List, Optional

from .ir import Node

ROWS_FP32 = ("boxes or scores that nms reads, picked by indices (boxes[idx], index_select): the float rows "
             "themselves, as torchvision reads them (an int8 grid moves an overlap across the threshold and "
             "makes near scores ties)")
# steps that only view or select float32 elements, each with a portable float32 kernel
_VIEWS = ("reshape", "slice", "permute", "identity")
READERS_FP32 = ("an element-wise step of boxes or scores picked in fp32 for nms (boxes[idx][:, 2:] - "
                "boxes[idx][:, :2]): the float rows' own values, as torch computes them, not their int8 rounding")
# what a reader of the picked rows may be: a view or selection, or arithmetic (each a portable float32 kernel)
_READ_VIEWS = _VIEWS + ("select", "squeeze", "unsqueeze", "transpose", "flip")
_ARITH = ("add", "sub", "mul", "div")


def _float_source(g, name: str) -> Optional[List[Node]]:
    """The views and joins (cat) from float32 program inputs (or steps
    already in fp32) to `name`, `name` included; None when they hold
    anything else."""
    chain, seen, todo = [], set(), [name]
    while todo:
        n = g.node(todo.pop())
        if n.name in seen:
            continue
        seen.add(n.name)
        if n.op == "input":
            if n.attrs.get("dtype"):            # an integer / bool input
                return None
            continue
        if n.attrs.get("fp32") and n.op != "constant":
            continue
        if n.attrs.get("dtype") or not ((n.op in _VIEWS and len(n.inputs) == 1) or (n.op == "cat" and n.inputs)):
            return None
        chain.append(n)
        todo.extend(n.inputs)
    return chain


def _ids(g, name: str) -> bool:
    """The ids are an int64 / int32 value: x[i]'s flat position, a sort's
    order, or another value holding ids (capture_indices.int64_ids)."""
    from .capture_indices import int64_ids
    n = g.node(name)
    return n.op in ("flat_index", "sort_indices") or int64_ids(n)


def _lookups(g, start: str) -> List[List[Node]]:
    """Each row lookup whose rows reach `start` through views, fp32 steps
    and sorts (a sort's values input): [lookup, views before, views after]."""
    found, seen, todo = [], set(), [(start, [])]
    while todo:
        name, after = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        n = g.node(name)
        if n.op == "embedding" and len(n.inputs) == 2 and not n.attrs.get("fp32"):
            table = _float_source(g, n.inputs[1])
            if table is not None and _ids(g, n.inputs[0]):
                found.append([n] + table + after)
            continue
        if n.op == "sort_indices":
            todo.append((n.inputs[0], []))
        elif n.op in _VIEWS and len(n.inputs) == 1 and not n.attrs.get("dtype"):
            todo.append((n.inputs[0], after + ([] if n.attrs.get("fp32") else [n])))
        elif n.attrs.get("fp32") and n.op not in ("input", "constant"):
            todo.extend((i, []) for i in n.inputs)
    return found


def _float_readers(g, rows) -> None:
    """The element-wise readers of picked float rows (module doc): views
    of them, and add / sub / mul / div of them, of each other and of
    constants, in graph order, marked fp32 (READERS_FP32)."""
    held = set(rows)
    for n in g.nodes:
        if n.name in held or n.op in ("input", "constant") or n.attrs.get("dtype") or not n.inputs:
            continue
        ins = [i for i in n.inputs if g.node(i).op != "constant"]
        if not ins or not all(i in held for i in ins):
            continue
        if (n.op in _READ_VIEWS and len(n.inputs) == 1) or (n.op in _ARITH and len(n.inputs) == 2):
            n.attrs.setdefault("fp32", READERS_FP32)
            held.add(n.name)


def float_rows_for_nms(g) -> None:
    """The row lookups feeding an nms's boxes or scores, marked fp32, and
    their element-wise readers (module doc)."""
    rows = []
    for n in [n for n in g.nodes if n.op in ("nms", "batched_nms")]:
        values = n.inputs[:2] if n.op == "nms" else n.inputs[:3]       # (not the classes or the threshold)
        for v in values:
            for steps in _lookups(g, v):
                for s in steps:
                    s.attrs.setdefault("fp32", ROWS_FP32)
                rows += [steps[0].name] + [s.name for s in steps[1:] if _after(g, steps[0].name, s.name)]
    if rows:
        _float_readers(g, rows)     # boxes[idx][:, 2:] - boxes[idx][:, :2]: float, as the rows are


def _after(g, lookup: str, name: str) -> bool:
    """name is a view after the lookup (reads it, through views), not one of its table's."""
    n = g.node(name)
    while n.inputs:
        if n.inputs[0] == lookup:
            return True
        if n.op not in _VIEWS:
            return False
        n = g.node(n.inputs[0])
    return False
