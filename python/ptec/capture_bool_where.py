"""torch.where(cond, a, b) of bool operands, a bool result (issue 15):
`torch.where(x > 0, x > 1, x < -1)`. On bools a choice is logic,
(cond and a) or (not cond and b), so it becomes capture_bool's `logical`
nodes, exact as they are; a Python bool operand drops its term (False) or
is the condition itself (True). Operands are computed bools or bool
constants, with at least one computed."""
from __future__ import annotations

from typing import List, Optional

import torch

from .capture_rewrites import where_args
from .ir import Node


def bool_where_nodes(fn, by_name, is_bool, computed) -> Optional[List[Node]]:
    """The logical nodes of a bool torch.where (is_bool(name, by_name): a
    bool value; computed(arg, by_name): one computed in the program), else None."""
    if fn.target is not torch.where or where_args(fn) is None:
        return None
    meta = fn.meta.get("tensor_meta")
    if getattr(meta, "dtype", None) != torch.bool:
        return None
    cond, a, b = where_args(fn)

    def usable(v):
        return isinstance(v, bool) or (isinstance(v, torch.fx.Node) and is_bool(v.name, by_name))
    if not all(usable(v) for v in (cond, a, b)) or not any(computed(v, by_name) for v in (cond, a, b)) \
            or not isinstance(cond, torch.fx.Node):
        return None
    nodes: List[Node] = []

    def step(kind, *ins):
        nodes.append(Node(f"{fn.name}__{len(nodes)}", "logical", list(ins), dict(kind=kind)))
        return nodes[-1].name
    picked_a = None if a is False else cond.name if a is True else step("and", cond.name, a.name)
    if b is False:
        picked_b = None
    else:
        other = step("not", cond.name)
        picked_b = other if b is True else step("and", other, b.name)
    if picked_a is None and picked_b is None:
        return None                 # where(c, False, False): no computed value
    if picked_a is not None and picked_b is not None:
        step("or", picked_a, picked_b)
    nodes[-1].name = fn.name
    return nodes
