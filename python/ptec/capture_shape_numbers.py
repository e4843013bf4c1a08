"""Shape numbers used as numbers: `x / x.size(-1)`, `x.sum() / x.shape[2]`,
`x + x.numel()`, `q @ k.transpose(-2, -1) / q.size(-1) ** 0.5`.

torch.fx records x.size(d), x.shape[d] and x.numel() as nodes whose traced
value is an int (or a torch.Size). capture drops them as inputs, because a
layer spelling a shape with them (`x.view(x.size(0), -1)`) takes its shape
from tracing. A tensor op that reads one as an operand would then lose an
input, so each such number is written into its readers as the constant
the trace gave it: ptec's programs have static shapes, so it is that
number on every run.

Except for a selection x[mask], whose length changes from run to run: a
shape number of it (or of anything computed from it) is refused naming
the call, with the count that works instead (mask.sum()). And except for a number made of
the values of a tensor computed from the input (`math.sqrt(x.max())`, a
parameter's item() is fine): folding it would freeze the example's value,
so it is refused naming the call (capture_item keeps `t.item()` a tensor)."""
from __future__ import annotations

import operator
from typing import List, Set

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

from .capture_nms import kept_count_why, nms_call


class ShapeNumbers(ShapeProp):
    """ShapeProp that also keeps each number and torch.Size result (meta
    "number"): x.size(d), and arithmetic on it (`x.size(-1) ** 0.5`)."""

    def run_node(self, n):
        result = super().run_node(n)
        if isinstance(result, (int, float, torch.Size)) and not isinstance(result, bool):
            n.meta["number"] = tuple(result) if isinstance(result, torch.Size) else result
        return result


# layers that spell a shape with a number: their shape is the trace's (capture), and a
# selection's view keeps or splits its rows (capture_selection_rows)
_SHAPE_SPELLING = {"view", "reshape", torch.reshape}


def _is_selection(fn: torch.fx.Node) -> bool:
    """x[mask] with a bool tensor among the indices, torch.masked_select, or
    torchvision's nms / batched_nms (the kept boxes: capture_nms)."""
    if fn.op in ("call_function", "call_method") and fn.target in (torch.masked_select, "masked_select"):
        return True
    if fn.op == "call_function" and nms_call(fn.target):
        return True
    if fn.op != "call_function" or fn.target is not operator.getitem or len(fn.args) != 2:
        return False
    idx = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
    return any(isinstance(i, torch.fx.Node) and getattr(i.meta.get("tensor_meta"), "dtype", None) == torch.bool
               for i in idx)


def _varying(gm: torch.fx.GraphModule) -> Set[str]:
    """Nodes whose shape follows a selection's run-time length."""
    out: Set[str] = set()
    for fn in gm.graph.nodes:
        if _is_selection(fn) or any(a.name in out for a in fn.all_input_nodes):
            out.add(fn.name)
    return out


def _ancestors(fn: torch.fx.Node) -> List[torch.fx.Node]:
    seen, todo = [], [fn]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.append(n)
            todo.extend(n.all_input_nodes)
    return seen


def _number_node(fn: torch.fx.Node) -> bool:
    return fn.op in ("call_function", "call_method") and isinstance(fn.meta.get("number"), (int, float))


_SHAPE_QUERIES = {"size", "numel", "nelement", "dim", "ndimension", "shape", "ndim", "stride", "storage_offset",
                  "element_size", "get_device"}


def _shape_query(fn: torch.fx.Node) -> bool:
    if fn.op == "call_function" and fn.target in (torch.numel, torch.Tensor.size, torch.Tensor.dim):
        return True
    if fn.op == "call_method":
        return fn.target in _SHAPE_QUERIES
    return fn.op == "call_function" and fn.target is getattr and len(fn.args) > 1 and fn.args[1] in _SHAPE_QUERIES


def _from_input(fn: torch.fx.Node) -> bool:
    seen, todo = set(), [fn]
    while todo:
        n = todo.pop()
        if n.op == "placeholder":
            return True
        if n not in seen:
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return False


def _reads_input_values(fn: torch.fx.Node) -> bool:
    """fn (a number) is computed from the values of a tensor of the input
    (math.sqrt(x.max()), t.item() * 2), not from shapes or parameters."""
    if _shape_query(fn):
        return False
    for a in fn.all_input_nodes:
        if "number" in a.meta:
            if _reads_input_values(a):
                return True
        elif "tensor_meta" in a.meta and _from_input(a):
            return True
    return False


def fold_shape_numbers(gm: torch.fx.GraphModule, error) -> None:
    """Writes each int shape number into the readers that make a tensor of
    it (their args); raises `error` for a number of a selection's length,
    and for a Python number made of the input's values (`math.sqrt(x.max())`:
    folding it would freeze the example's value into the program)."""
    varying = _varying(gm)
    for fn in gm.graph.nodes:
        if not _number_node(fn):
            continue
        tensor_users = [u for u in fn.users if "tensor_meta" in u.meta and u.target not in _SHAPE_SPELLING]
        if not tensor_users:
            continue
        if _reads_input_values(fn):
            what = f"{fn.target}" if isinstance(fn.target, str) else (
                f"{getattr(fn.target, '__module__', None) or ''}.{getattr(fn.target, '__name__', fn.target)}"
                .lstrip("."))
            raise error(f"operator not supported: {fn.name} ({what}) makes a Python number of a tensor computed "
                        "from the input: it depends on the input's values, known only when the program runs: keep it "
                        "a tensor "
                        "(torch.sqrt(t) rather than math.sqrt(t), t rather than t.item())")
        if fn.name in varying:
            what = f"{fn.target}" if isinstance(fn.target, str) else getattr(fn.target, "__name__", str(fn.target))
            site = fn.meta.get("ptec_site") or fn.meta.get("ptec_size_site") or ""
            kept = kept_count_why(_ancestors(fn))
            if kept:
                raise error(f"operator not supported: {fn.name} ({what}){site} reads a size of {kept}")
            raise error(f"operator not supported: {fn.name} ({what}){site} reads a size of a selection x[mask], which "
                        "changes from run to run: use the count mask.sum() (or mask.float().sum()) instead")
        value = fn.meta["number"]
        for u in tensor_users:
            u.args = torch.fx.node.map_arg(u.args, lambda a: value if a is fn else a)
            u.kwargs = torch.fx.node.map_arg(u.kwargs, lambda a: value if a is fn else a)
