"""The tuple forms of nonzero (issue 15): torch.where(cond) with one
argument and torch.nonzero / Tensor.nonzero(as_tuple=True) give one 1-D
int64 tensor per dim of cond, the coordinates of its set elements along
that dim in row-major order, their length the count (a value). Element d
is the rows selection of column d of the constant coordinate table
(capture_nonzero.coordinate_table) by the flattened mask, the same
selection as nonzero(as_tuple=False)'s with one column: a program output
only (a bound-dynamic tensor, planned at numel). The call itself becomes
a tuple whose elements are made when captured (`result[d]`, unpacking);
an element used by anything but the program's outputs is refused in one
line, as is the whole tuple returned as one value."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import refuse_call, _meta_shape
from .ir import Node


def coordinate_tuple_nodes(fn, m: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """The call as a tuple node (its elements made per getitem), or None
    when m is not a value of a shape known here."""
    from .capture import _function_node
    from .capture_nonzero import coordinate_table
    shape = _meta_shape(m)
    if not shape or 0 in shape:
        return None
    if any(u.op == "output" for u in fn.users):
        refuse_call(fn, "the tuple returned whole: return its elements (rows, cols = torch.where(m); "
                    "return rows, cols)")
    dtype = getattr(m.meta.get("tensor_meta"), "dtype", None)
    table = coordinate_table(shape)

    def element(get: torch.fx.Node, index) -> Optional[List[Node]]:
        if not isinstance(index, int) or isinstance(index, bool) or not -len(shape) <= index < len(shape):
            return None
        if any(u.op != "output" for u in get.users):
            refuse_call(fn, "its coordinates, whose length depends on the values, run only as program outputs "
                        "(return them; use them after the program)")
        name, mask = get.name, m.name
        nodes = []
        if dtype != torch.bool:
            nodes.append(Node(f"{name}__set", "compare", [mask], dict(kind="ne", scalar=0.0)))
            mask = nodes[-1].name
        nodes += [Node(f"{name}__flat", "reshape", [mask], dict(target_shape=[int(np.prod(shape))])),
                  Node(f"{name}__column", "constant", [], dict(value=table[:, index % len(shape)].copy())),
                  Node(name, "masked_select", [f"{name}__column", f"{name}__flat"])]
        return nodes

    node = _function_node(fn, [m.name])
    node.attrs["elements"] = element
    return [node]
