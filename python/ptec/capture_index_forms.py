"""A computed bool mask beside other indices: `x[mask, 1:]`, `x[mask, 0]`,
`x[:, mask, None]` (probe3's refusals of ordinary forms).

torch applies a lone advanced index (a 1-D mask, over dim p)
and the basic indices (ints, slices, None, `...`) after it independently:
the mask's dim becomes the dim of the selected positions, in its place
when every index before the mask is a whole slice, and each basic index
acts on its own dim. So x[:p, mask, rest] is the basic indexing
y = x[(:,) * (p + 1), rest] (the mask's dim kept whole) followed by the
selection y[(:,) * p, mask], whose dims are the same. The rewrite makes
those two getitems on the fx graph before capture: the selection then runs
as every x[mask] (capture_masked_select: leading dims, or after p whole
dims its `at` form, a program output), the basic indexing as ever, on x's
fixed shape. A mask after an int or beside another index tensor stays the
refused getitem, and so does a mask of several dims before other
indices (torch itself applies those indices as if the mask took one dim,
and fails on them or reads them so)."""
from __future__ import annotations

import operator

import torch
import torch.fx

_WHOLE = slice(None, None, None)


def _basic(i) -> bool:
    return i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(i, bool) \
        and not (isinstance(i, slice) and any(isinstance(b, torch.fx.Node) for b in (i.start, i.stop, i.step)))


def _computed(node: torch.fx.Node) -> bool:
    """node's value follows a program input's values (not a constant made in
    forward, from shapes too: `torch.arange(x.size(0)) > 2`)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n.op == "placeholder":
            return True
        if n in seen or (n.op == "call_method" and n.target in ("size", "dim", "numel")) \
                or (n.op == "call_function" and n.target is getattr):
            continue
        seen.add(n)
        todo.extend(n.all_input_nodes)
    return False


def _split(fn: torch.fx.Node):
    """(x, p, mask, rest) of getitem fn = x[(:,) * p, mask, *rest] with a
    computed bool mask and basic rest, or None."""
    if fn.op != "call_function" or fn.target is not operator.getitem or len(fn.args) != 2 \
            or not isinstance(fn.args[0], torch.fx.Node) or not isinstance(fn.args[1], tuple):
        return None
    idx = fn.args[1]
    at = [k for k, i in enumerate(idx) if isinstance(i, torch.fx.Node)]
    if len(at) != 1:
        return None
    p, mask = at[0], idx[at[0]]
    meta = mask.meta.get("tensor_meta")
    if getattr(meta, "dtype", None) is not torch.bool or not _computed(mask):
        return None
    if any(i != _WHOLE for i in idx[:p]) or not all(_basic(i) for i in idx[p + 1:]):
        return None
    return fn.args[0], p, mask, tuple(idx[p + 1:])


def mask_with_rest(gm: torch.fx.GraphModule, propagate) -> bool:
    """Each x[(:,) * p, mask, *rest] with basic indices in rest as the basic
    indexing then the selection (module docstring); True when any changed
    (then the shapes are propagated)."""
    g, changed = gm.graph, False
    for fn in list(g.nodes):
        split = _split(fn)
        if split is None:
            continue
        x, p, mask, rest = split
        if not rest:
            continue        # x[mask], x[:, mask]: the selection itself (capture_tensor_index)
        if len(mask.meta["tensor_meta"].shape) != 1:
            continue        # torch reads the basic indices after a k-D mask as if it took one dim: left as it is
        k = 1
        with g.inserting_before(fn):
            inner = g.call_function(operator.getitem, (x, (_WHOLE,) * (p + k) + rest))
            outer = g.call_function(operator.getitem, (inner, (_WHOLE,) * p + (mask,) if p else mask))
        outer.meta = dict(fn.meta)
        fn.replace_all_uses_with(outer)
        g.erase_node(fn)
        changed = True
    if changed:
        gm.recompile()
        propagate()
    return changed
