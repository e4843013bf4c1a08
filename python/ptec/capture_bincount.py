"""torch.bincount(ids, weights=None, minlength=n) of int64 ids computed in
the program (an argmax, x.long(): capture_indices' index values), issue 15.
Count j is the sum over i of [ids_i == j] (times weights_i): each id picks
its row of the constant identity as a one-hot row (aten::embedding.out on
the int8 0/1 bytes, every id checked against the table at run time), and
the rows are summed (an int8 mean times their number; weights first multiply
their one-hot rows, an int8 mul). torch's length is max(minlength, largest
id + 1), a program's is fixed: the call runs only when every id is provably
below minlength (an argmax / argmin over at most minlength values, a
clamp(0, <= minlength - 1), a remainder by a constant <= minlength, through
casts and reshapes), so the length is minlength; else it is refused in one
line (length_refusal), where a shorter result padded with zeros or a run
failing on a larger id would surprise. Counts
come out as float values on an int8 grid: with weights torch's are float
too; without, torch's int64 counts are taken only when the model reads
them as float (`.float()`), else the call stays refused by name.

Without weights, of integer ids of any source (an int64 / int32 / narrow
input, an argmax, integer arithmetic), the call is rewritten before
capture (`bincount_as_one_hot`) as `F.one_hot(ids.long(), L).sum(0)`, L
the traced length: torch's int64 counts exactly (capture's one_hot, an
embedding of the identity's 0/1 bytes, and capture_int_math's int64 sum),
read as integers or `.float()` (exact) alike, under the same length rule."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_calls import _meta_shape, _scalar_arg
from .capture_indices import is_index
from .capture_rewrites import _Steps
from .ir import Node


def _as_float(u) -> bool:
    """u reads its argument as float32: `.float()`, `.to(torch.float32)`, `.type(torch.float32)`."""
    return (u.target == "float" and len(u.args) == 1 and not u.kwargs) or (
        u.target in ("to", "type") and len(u.args) == 2 and u.args[1] is torch.float32 and not u.kwargs)


def bincount_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    if fn.target not in (torch.bincount, "bincount") or set(fn.kwargs) - {"weights", "minlength"} \
            or len(fn.args) > 3:
        return None
    ids, weights = fn.args[0], _scalar_arg(fn, 1, "weights")
    ids_shape, out = _meta_shape(ids) if isinstance(ids, torch.fx.Node) else None, _meta_shape(fn)
    if ids_shape is None or len(ids_shape) != 1 or out is None or not is_index(by_name.get(ids.name)):
        return None
    why = length_refusal(fn)
    if why is not None:
        from .capture import CaptureError
        raise CaptureError(why)
    n, length = ids_shape[0], out[0]
    if weights is not None and (not isinstance(weights, torch.fx.Node) or _meta_shape(weights) != [n]
                                or getattr(weights.meta.get("tensor_meta"), "dtype", None) != torch.float32):
        return None
    if weights is None and not all(_as_float(u) for u in fn.users):
        return None         # torch's int64 counts read as integers: ptec's are int8 values (refused by name)
    s = _Steps(fn.name)
    rows = s("embedding", [ids.name], weight=np.eye(length, dtype=np.float32))      # [n, length] one-hot
    if weights is not None:
        w = s.widen(s("reshape", [weights.name], target_shape=[n, 1]), [n, 1], [n, length])
        rows = s("mul", [rows, w])
    # summed over the ids: [1, n, length] averaged over dim 1 (an int8 mean), times n
    mean = s("mean", [s("reshape", [rows], target_shape=[1, n, length])], dim=[1], keepdim=False)
    s("reshape", [s("mul", [mean, s.const(float(n))])], target_shape=[length])
    return s.done()


_INTEGER = (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8)
_SAME_VALUES = ("long", "int", "short", "byte", "flatten", "reshape", "view", "squeeze", "unsqueeze", "contiguous",
                torch.flatten, torch.reshape, torch.squeeze, torch.unsqueeze)


# steps whose values are some of their first argument's (a slice, a reordering)
_SOME_VALUES = ("narrow", "flip", "roll", "select", "expand", "repeat", torch.narrow, torch.flip, torch.roll,
                torch.select)


def _ids_below(ids, m: int, assumed=frozenset()) -> bool:
    """Every value of fx node ids is provably in [0, m): an argmax / argmin
    over at most m values, a clamp(0, <= m - 1) or a remainder by a constant
    <= m, through casts, reshapes and slices; a cat of such; an integer
    buffer state (capture_buffer_state) whose initial value is in [0, m)
    and whose written value is such, its own old value counted as below m
    (by induction over the executes: `self.hist = torch.cat([self.hist[1:],
    x.argmax(-1)])`)."""
    from .capture_buffer_state import INIT
    from .capture_modules import ptec_state, ptec_state_write
    while isinstance(ids, torch.fx.Node) and ids.op in ("call_function", "call_method") and ids.args and (
            ids.target in _SAME_VALUES or ids.target in _SOME_VALUES or (
                ids.target is operator.getitem and isinstance(ids.args[0], torch.fx.Node)
                and hasattr(ids.args[0].meta.get("tensor_meta"), "dtype"))):      # (a tensor's, not a tuple's)
        ids = ids.args[0]
    if not isinstance(ids, torch.fx.Node) or ids.op not in ("call_function", "call_method") or not ids.args:
        return False
    t, src = ids.target, ids.args[0]
    if t is ptec_state:
        if ids in assumed:
            return True
        init = ids.meta.get(INIT)
        writes = [u for u in src.users if u.target is ptec_state_write and u.args[0] is src] \
            if isinstance(src, torch.fx.Node) else []
        return (isinstance(init, torch.Tensor) and init.dtype in _INTEGER and init.numel() > 0
                and 0 <= int(init.min()) and int(init.max()) < m and len(writes) == 1
                and _ids_below(writes[0].args[1], m, assumed | {ids}))
    if t in (torch.cat, torch.concat, "cat") and isinstance(src, (list, tuple)):
        return bool(src) and all(_ids_below(p, m, assumed) for p in src)
    if t in (torch.argmax, torch.argmin, "argmax", "argmin"):
        shape = _meta_shape(src) if isinstance(src, torch.fx.Node) else None
        dim = ids.kwargs.get("dim", ids.args[1] if len(ids.args) > 1 else None)
        if shape is None or not isinstance(dim, (int, type(None))):
            return False
        size = int(np.prod(shape)) if dim is None else shape[dim]
        return 1 <= size <= m
    if t in (torch.clamp, torch.clip, "clamp", "clip"):
        lo = ids.kwargs.get("min", ids.args[1] if len(ids.args) > 1 else None)
        hi = ids.kwargs.get("max", ids.args[2] if len(ids.args) > 2 else None)
        return isinstance(lo, int) and isinstance(hi, int) and 0 <= lo and hi <= m - 1
    if t in (torch.remainder, "remainder", operator.mod) and len(ids.args) == 2:
        return isinstance(ids.args[1], int) and 1 <= ids.args[1] <= m
    return False


def length_refusal(fn) -> Optional[str]:
    """Why torch.bincount call fn has no fixed length, or None: torch's is
    max(minlength, largest id + 1), a .pte's is fixed, so it runs only when
    every id is provably below minlength (the length is then minlength)."""
    m = _scalar_arg(fn, 2, "minlength")
    if isinstance(m, int) and m >= 1 and fn.args and _ids_below(fn.args[0], m):
        return None
    return (f"{fn.name} (torch.bincount): its length follows the largest id and a program's shapes are fixed: "
            "pass minlength=<n> with ids known below n (an argmax over n values, ids.clamp(0, n - 1), ids % n)")


def bincount_as_one_hot(gm: torch.fx.GraphModule, propagate) -> None:
    """torch.bincount(ids, minlength=m) / ids.bincount() without weights, ids
    1-D integers: `F.one_hot(ids.long(), L).sum(0)` (the module doc), in
    place; propagate() traces shapes again after a change."""
    import torch.nn.functional as F
    g = gm.graph
    changed = False
    for fn in list(g.nodes):
        if fn.op not in ("call_function", "call_method") or fn.target not in (torch.bincount, "bincount") \
                or set(fn.kwargs) - {"weights", "minlength"} or len(fn.args) > 3 or not fn.args \
                or not isinstance(fn.args[0], torch.fx.Node) or _scalar_arg(fn, 1, "weights") is not None:
            continue
        ids, out = fn.args[0], _meta_shape(fn)
        dtype = getattr(ids.meta.get("tensor_meta"), "dtype", None)
        if dtype not in _INTEGER or len(_meta_shape(ids) or []) != 1 or out is None or len(out) != 1 \
                or out[0] < 1 or _meta_shape(ids)[0] < 1:
            continue
        why = length_refusal(fn)
        if why is not None:
            from .capture import CaptureError
            raise CaptureError(why)
        with g.inserting_before(fn):
            src = ids if dtype is torch.int64 else g.call_method("long", (ids,))
            counts = g.call_method("sum", (g.call_function(F.one_hot, (src, int(out[0]))), 0))
        fn.replace_all_uses_with(counts)
        g.erase_node(fn)
        changed = True
    if changed:
        gm.recompile()
        propagate()
