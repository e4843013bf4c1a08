"""Results whose length depends on the values (issue 15), as selections
(capture_masked_select's bound-dynamic `masked_select`, a program output):

- torch.nonzero(m) / m.nonzero() / torch.argwhere(m) (as_tuple=False):
  the coordinates of m's nonzero elements, [count, rank] int64 in
  row-major order, are the rows of the constant coordinate table
  [numel, rank] (every position's coordinates, row-major) where the
  flattened m is set: a rows selection of the int64 table, a program
  output only. m is a bool value the program computes, or a float one
  (then m != 0).
- torch.unique(x) / x.unique() (sorted; the inverse:
  capture_unique_inverse; counts and dim: capture_unique_counts): x
  flattened and sorted, then the sorted values selected where each differs
  from the one before it (the first always kept). Values one int8 code
  apart stay apart, closer ones share a code: the program's unique values
  are those of the int8 codes.
- torch.unique_consecutive(x) / x.unique_consecutive() (the inverse:
  capture_unique_inverse; counts and dim: capture_unique_counts): the same without the sort, x
  flattened in its order.

as_tuple=True and torch.where(cond) with one argument: one 1-D tensor per
dim (capture_coordinate_tuple). sorted=False, and return_inverse,
return_counts and dim where their stand-ins do not run, are refused in
one line.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch

from .capture_calls import call_is, refuse_call, _meta_shape, _scalar_arg
from .ir import Node

_NONZERO = (torch.nonzero, "nonzero", torch.argwhere, "argwhere")
_UNIQUE = (torch.unique, "unique")
_CONSECUTIVE = (torch.unique_consecutive, "unique_consecutive")


def _dtype(a):
    return getattr(a.meta.get("tensor_meta"), "dtype", None) if isinstance(a, torch.fx.Node) else None


def coordinate_table(shape) -> np.ndarray:
    """[numel, rank] int64: row k the coordinates of flat position k."""
    return np.stack([g.ravel() for g in np.indices(shape)], axis=1).astype(np.int64)


def nonzero_nodes(fn, by_name) -> Optional[List[Node]]:
    if not call_is(fn, _NONZERO) or not fn.args or len(fn.args) > 1 or set(fn.kwargs) - {"as_tuple"}:
        return None
    m = fn.args[0]
    if not isinstance(m, torch.fx.Node) or by_name.get(m.name) is None or _dtype(m) not in (torch.bool, torch.float32):
        return None
    if fn.kwargs.get("as_tuple", False) is True:
        from .capture_coordinate_tuple import coordinate_tuple_nodes      # one 1-D tensor per dim
        return coordinate_tuple_nodes(fn, m, by_name)
    if fn.kwargs.get("as_tuple", False) is not False:
        refuse_call(fn, "as_tuple must be True or False")
    shape = _meta_shape(m)
    if not shape or 0 in shape:
        return None
    if any(u.op != "output" for u in fn.users):
        # the int64 rows have no int8 grid to move ops before the selection on (capture_masked_select)
        refuse_call(fn, "its result, whose length depends on the values, runs only as a program output "
                    "(return it; use it after the program)")
    name, nodes = fn.name, []
    mask = m.name
    if _dtype(m) == torch.float32:
        nodes.append(Node(f"{name}__set", "compare", [mask], dict(kind="ne", scalar=0.0)))
        mask = nodes[-1].name
    numel = int(np.prod(shape))
    nodes += [Node(f"{name}__flat", "reshape", [mask], dict(target_shape=[numel])),
              Node(f"{name}__table", "constant", [], dict(value=coordinate_table(shape))),
              Node(name, "masked_select", [f"{name}__table", f"{name}__flat"], dict(rows=True))]
    return nodes


def unique_nodes(fn, by_name) -> Optional[List[Node]]:
    consecutive = call_is(fn, _CONSECUTIVE)
    if not (call_is(fn, _UNIQUE) or consecutive) or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
            or by_name.get(fn.args[0].name) is None:
        return None
    if _dtype(fn.args[0]) in (torch.int64, torch.int32):        # what capture_unique_integers did not run
        refuse_call(fn, "of an integer tensor it runs without dim, sorted (sorted=True), on a tensor of at least "
                    "one element or a selection x[m] with m of x's shape (there with dim 0 too)")
    if _dtype(fn.args[0]) != torch.float32:
        return None
    names = ("return_inverse", "return_counts", "dim") if consecutive else \
        ("sorted", "return_inverse", "return_counts", "dim")
    if len(fn.args) > 1 + len(names) or set(fn.kwargs) - set(names):
        return None
    spelled = {k: _scalar_arg(fn, i + 1, k) for i, k in enumerate(names)}
    # what capture_unique_counts / capture_unique_inverse's stand-ins did not run
    if getattr(by_name.get(fn.args[0].name), "op", None) == "masked_select" and (
            spelled["dim"] is not None or spelled["return_counts"] or spelled["return_inverse"]):
        refuse_call(fn, "on a selection (x[mask], whose length follows the values) it runs sorted (unique) or "
                    "in x's order (unique_consecutive), without dim or with dim 0, with a mask of x's own shape "
                    "or (dim 0, float32) of x's leading dims")
    if spelled["dim"] is not None:
        refuse_call(fn, "dim runs on a float32 tensor of fixed shape, no size 0, with an int dim in range")
    if spelled.get("sorted") is False:
        refuse_call(fn, "sorted=False leaves the order to the implementation; ptec runs sorted=True")
    if spelled["return_inverse"]:
        refuse_call(fn, "return_inverse runs on a float32 tensor of at least 2 elements")
    if spelled["return_counts"]:
        refuse_call(fn, "return_counts runs on a float32 tensor of at least one element")
    shape = _meta_shape(fn.args[0])
    if shape is None or 0 in shape:
        return None
    n, name = int(np.prod(shape)) if shape else 1, fn.name
    step = lambda k: f"{name}__unique{k}"                            # noqa: E731
    if consecutive:             # the values in their order: each kept where it differs from the one before
        nodes = [Node(step(1) if n > 1 else name, "reshape", [fn.args[0].name], dict(target_shape=[n]))]
    else:
        nodes = [Node(step(0), "reshape", [fn.args[0].name], dict(target_shape=[n])),
                 Node(step(1) if n > 1 else name, "sort", [step(0)],
                      dict(dim=0, descending=False, k=None, pick=None, keepdim=False, rule=None))]
    if n == 1:
        return nodes
    first = np.zeros(n, np.bool_)
    first[0] = True
    nodes += [Node(step(2), "slice", [step(1)], dict(dim=0, start=0, end=1)),
              Node(step(3), "slice", [step(1)], dict(dim=0, start=0, end=n - 1)),
              # each value's predecessor (the first its own): where they differ a new value starts
              Node(step(4), "cat", [step(2), step(3)], dict(dim=0)),
              Node(step(5), "compare", [step(1), step(4)], dict(kind="ne")),
              Node(step(6), "constant", [], dict(value=first)),
              Node(step(7), "logical", [step(5), step(6)], dict(kind="or")),
              Node(name, "masked_select", [step(1), step(7)])]
    return nodes


def value_length_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of nonzero / argwhere / unique, or None for another call."""
    from .capture_unique_counts import int64_selection_nodes     # unique's counts: an int64 selection
    if int64_selection_nodes(fn, ins, by_name) is not None:
        return int64_selection_nodes(fn, ins, by_name)
    for make in (nonzero_nodes, unique_nodes):
        nodes = make(fn, by_name)
        if nodes is not None:
            return nodes
    if call_is(fn, (torch.where,)) and len(fn.args) == 1 and not fn.kwargs and isinstance(fn.args[0], torch.fx.Node) \
            and by_name.get(fn.args[0].name) is not None and _dtype(fn.args[0]) in (torch.bool, torch.float32):
        from .capture_coordinate_tuple import coordinate_tuple_nodes      # torch.where(cond): nonzero's tuple
        return coordinate_tuple_nodes(fn, fn.args[0], by_name)
    return None
