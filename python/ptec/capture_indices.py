"""Index results (issue 15): x.argmax(dim) / x.argmin(dim) (and torch's),
the indices of x.max(dim) / x.min(dim), `.float()` of such an index, and
its uses as an index: torch.gather by it, nn.Embedding's ids.; ids computed from float values (x.long(),
x.int()) for nn.Embedding.

An `argmax` node (attrs dim, keepdim, smallest) is the int64 position of
the largest (smallest: argmin) value along dim; the graph's float
evaluation carries it as the index in float32, so calibration and the
float oracle see the numbers the model does. Lowered, it is an int64
tensor (aten::argmax.out on the int8 values, whose order is the
dequantized floats' order): a program output as int64, or through an
`index_to_float` node (the model's `.float()`, `.to(torch.float32)`) an
fp32 value for the layers after it. Without a dim (an index into the
flattened tensor) the call is not covered and stays refused by name.
Integer arithmetic on these values (`i - 1`, `torch.stack([i, j])`) is
capture_int_math's; its results are index values too (int_dtype)."""
from __future__ import annotations

import math
from typing import List, Optional

import torch

from .capture_calls import _meta_shape, _scalar_arg
from .ir import Node

# the nodes whose value is an int64 index (float32 in the float graph)
INDEX_OPS = ("argmax", "sort_indices", "window_argmax", "to_index", "int_math", "linalg_lu_pivots",
             "linalg_ldl_int", "linalg_cholesky_info", "frexp_exponent", "batched_nms")
ARG_TARGETS = {"argmax": False, torch.argmax: False, "argmin": True, torch.argmin: True}


def argmax_node(name: str, src: str, shape, dim, keepdim, smallest: bool) -> Optional[Node]:
    """The argmax node of src (logical shape `shape`) over dim, or None when
    dim or keepdim is not a plain int / bool."""
    if shape is None or not isinstance(dim, int) or isinstance(dim, bool) or not isinstance(keepdim, bool) \
            or not -len(shape) <= dim < len(shape) or shape[dim] == 0:
        return None
    return Node(name, "argmax", [src], dict(dim=dim % len(shape), keepdim=keepdim, smallest=smallest))


def arg_call_node(fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """x.argmax(dim, keepdim) / torch.argmin(x, dim=...): the argmax node."""
    try:
        smallest = ARG_TARGETS.get(fn.target)
    except TypeError:         # an unhashable target is no argmax
        return None
    if smallest is None or not fn.args or not isinstance(fn.args[0], torch.fx.Node) \
            or set(fn.kwargs) - {"dim", "keepdim"}:
        return None
    return argmax_node(fn.name, ins[0], _meta_shape(fn.args[0]), _scalar_arg(fn, 1, "dim"),
                       _scalar_arg(fn, 2, "keepdim", False), smallest)


def _is_float32(v) -> bool:
    return v is torch.float32


INDEX_DTYPES = {torch.int64: "int64", torch.int32: "int32"}
INDEX_METHODS = {"long": "int64", "int": "int32"}


def _index_dtype(fn: torch.fx.Node) -> Optional[str]:
    """"int64" / "int32" for x.long(), x.int(), x.to(torch.int64),
    x.to(dtype=torch.int32), x.type(torch.long); else None."""
    if fn.op != "call_method" or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    if fn.target in INDEX_METHODS and len(fn.args) == 1 and not fn.kwargs:
        return INDEX_METHODS[fn.target]
    if fn.target in ("to", "type"):
        rest = list(fn.args[1:]) + ([fn.kwargs["dtype"]] if set(fn.kwargs) == {"dtype"} else [])
        if len(rest) == 1 and set(fn.kwargs) <= {"dtype"} and isinstance(rest[0], torch.dtype):
            return INDEX_DTYPES.get(rest[0])
    return None


def int_dtype(node: Optional[Node]) -> Optional[str]:
    """"int64" / "int32" for an integer value the program computes or takes
    that models may index with or compute on: an argmax, an int64 input,
    x.long() / x.int() of a float value (to_index), integer arithmetic on
    such values (capture_int_math), the values of a sort of one
    (capture_int_sort); "int16" / "uint8" / "int8" / "float64" for a narrow
    cast of one (capture_int_casts: only converted or returned); else None."""
    if node is None:
        return None
    if node.op in ("argmax", "sort_indices", "batched_nms"):  # argsort's, sort's, topk's positions; nms's boxes
        return "int64"
    if node.op in ("input", "state"):     # an int buffer the forward writes too (capture_integer_states)
        return node.attrs.get("dtype") if node.attrs.get("dtype") not in (None, "bool") else None
    if node.op in ("to_index", "int_math"):
        return node.attrs["dtype"]
    if node.op == "sort" and node.attrs.get("integer"):      # the values of a sort of an int value
        return node.attrs["integer"]
    if node.op in ("linalg_lu_pivots", "linalg_ldl_int", "linalg_cholesky_info", "frexp_exponent"):
        return "int32"   # lu_factor's / ldl_factor's pivots, ldl's and cholesky_ex's info, frexp's exponent
    if node.op == "view_dtype" and node.attrs["dtype"] != "float32":
        return node.attrs["dtype"]         # x.view(torch.int32), x.view(torch.uint8) (capture_dtype_view)
    return None


def is_index(node: Optional[Node]) -> bool:
    """Whether a graph value is an int64 index (argmax, ids input, x.long(), arithmetic on them)."""
    return int_dtype(node) == "int64"


def to_index_node(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[Node]:
    """x.long() / x.int() / x.to(torch.int64) of a float value: a `to_index`
    node (attrs dtype), truncation toward zero as torch's, lowered as
    _to_dim_order_copy from float32 into int64 / int32; a value that is NaN,
    infinite or outside the integer type fails the run (InvalidArgument).
    Of an integer value already, to its own dtype: the value itself (to
    another: None, refused by name)."""
    dtype = _index_dtype(fn)
    src = by_name.get(ins[0]) if ins else None
    if dtype is None or src is None:
        return None
    if int_dtype(src) is not None:
        return Node(fn.name, "identity", ins[:1]) if dtype == int_dtype(src) else None
    return Node(fn.name, "to_index", ins[:1], dict(dtype=dtype))


def to_float_node(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[Node]:
    """`.float()`, `.to(torch.float32)` or `.type(torch.float32)` of an index
    node (argmax, x.long()) or an int64 input: the index_to_float node. Of anything else:
    None (a float value's `.float()` is capture_casts')."""
    if not fn.args or not isinstance(fn.args[0], torch.fx.Node) or not ins or by_name.get(ins[0]) is None \
            or (by_name[ins[0]].op not in INDEX_OPS      # no ins: a shape argument (torch.rand(x.shape))
                and int_dtype(by_name[ins[0]]) is None  # an int64 input's float copy too
                and not fn.args[0].meta.get("ptec_int64_selection")):  # unique's counts (capture_unique_counts)
        return None
    if fn.target == "float" and len(fn.args) == 1 and not fn.kwargs:
        return Node(fn.name, "index_to_float", ins[:1])
    if fn.target in ("to", "type") and len(fn.args) == 2 and not fn.kwargs and _is_float32(fn.args[1]):
        return Node(fn.name, "index_to_float", ins[:1])
    return None


GATHER_TARGETS = (torch.gather, "gather")


def computed_gather_node(fn: torch.fx.Node, ins: List[str], by_name) -> Optional[Node]:
    """torch.gather(x, dim, idx) / x.gather(dim, idx) whose idx is an int64
    value of the program of x's rank (an argmax with keepdim=True, or
    arithmetic on one: is_index): the `gather` node, which the program runs
    as aten::gather.out on the int8 values with the int64 index. A constant
    idx is capture_rewrites' (slices); any other: None."""
    try:
        if fn.target not in GATHER_TARGETS:
            return None
    except TypeError:         # an unhashable target is no gather
        return None
    args = dict(zip(("input", "dim", "index"), fn.args))
    args.update(fn.kwargs)
    if set(args) - {"input", "dim", "index", "sparse_grad"} or args.get("sparse_grad") or len(ins) != 2:
        return None
    x, dim, index = args.get("input"), args.get("dim"), args.get("index")
    if not isinstance(x, torch.fx.Node) or not isinstance(index, torch.fx.Node) \
            or not isinstance(dim, int) or isinstance(dim, bool):
        return None
    source = by_name.get(index.name)
    shape, index_shape = _meta_shape(x), _meta_shape(index)
    if not is_index(source) or shape is None or index_shape is None \
            or len(index_shape) != len(shape) or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    if any(i > s for d, (i, s) in enumerate(zip(index_shape, shape)) if d != dim):
        return None
    return Node(fn.name, "gather", [x.name, index.name], dict(dim=dim))


def traced_integer_dtypes(fn: torch.fx.Node) -> list:
    """For each tensor argument of fn (positional, in order), the integer
    dtype the model's own run gave it (ShapeProp's tensor_meta), else None.
    The float graph carries index values (argmax, argsort, x.long()) as
    float32, so a call capture leaves unsupported gets them back in torch's
    dtype: evaluated, it then fails or succeeds as in torch (gather by an
    argsort, one_hot of an argmax) instead of on a float index."""
    out = []
    for a in fn.args:
        if isinstance(a, torch.fx.Node):
            dtype = getattr(a.meta.get("tensor_meta"), "dtype", None)
            out.append(dtype if dtype in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
                       else None)
    return out


def as_traced(xs, dtypes) -> list:
    """xs (the float graph's values of a call's tensor arguments) with each
    float one whose traced dtype is an integer converted back to it."""
    return [x.to(d) if d is not None and isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x, d in zip(xs, list(dtypes) + [None] * (len(xs) - len(dtypes)))]


def index_input_attrs(fn: torch.fx.Node) -> dict:
    """A placeholder traced with an int64 example (token ids): attrs
    dtype="int64", so the graph evaluates it as int64 and the program takes
    it as int64. Float placeholders: {}."""
    meta = fn.meta.get("tensor_meta")
    from .capture_input_dtypes import KEPT
    dtype = KEPT.get(getattr(meta, "dtype", None)) if meta is not None else None
    return {"dtype": dtype} if dtype else {}


def int64_ids(node: Optional[Node]) -> bool:
    """node holds ids in the program: an int64 input (token ids), an argmax
    / argmin computed in it (the next token of a greedy decoder),
    x.long() / x.int() of a float value (to_index), or integer arithmetic
    on them (int_math), a bool's `.long()` / `.int()` (bool_to: ids 0 / 1)."""
    if node is not None and node.op == "bool_to" and node.attrs.get("dtype") in ("int64", "int32"):
        return True
    return int_dtype(node) is not None


def lookup_table(m: torch.nn.Module):
    """The float32 table whose rows nn.Embedding / nn.EmbeddingBag m's
    forward reads. With max_norm torch scales each row it looks up to a
    norm_type norm of at most max_norm (in place, before the lookup; a row
    scaled once stays so), so scaling every row now, by torch's own
    embedding_renorm_, gives the rows of every call whatever its ids."""
    with torch.no_grad():
        table = m.weight.detach().cpu().float().clone()
        if m.max_norm is not None:
            torch.embedding_renorm_(table, torch.arange(table.shape[0]), float(m.max_norm), float(m.norm_type))
    return table.numpy()


def embedding_node(name: str, m: torch.nn.Module, ins: List[str], by_name, ids_shape) -> Optional[Node]:
    """nn.Embedding (or F.embedding, rebuilt as one) looking up int64 ids
    of a program input: the `embedding` node holding the table (attrs
    weight). Each output row is a row of the table, so the int8 program
    copies rows of the table quantized on the output's own grid. The ids
    are a program input, an argmax (int64_ids), or computed in the program by x.long()
    / x.int() (to_index_node); the kernel fails the run on an id outside
    the table (max_norm's rows as lookup_table's). None (the call stays
    refused by name) for ids of rank above 2 (a 4-D output would be
    channels-last, which a row copy is not)."""
    src = by_name.get(ins[0]) if ins else None
    if not int64_ids(src) or ids_shape is None or not 1 <= len(ids_shape) <= 2:
        return None
    return Node(name, "embedding", ins[:1], dict(weight=lookup_table(m)))


def embedding_nodes(name: str, m: torch.nn.Module, ins: List[str], by_name, ids_shape) -> Optional[List[Node]]:
    """embedding_node's nodes; ids of rank 3 or more (`F.embedding((x > 0).long(),
    table)` on a [N, C, L] x): the lookup of the ids viewed as [-1, L] (rank 2),
    its rows viewed back to ids' shape + [D]. None as embedding_node."""
    if ids_shape is not None and len(ids_shape) > 2 and all(int(d) > 0 for d in ids_shape):
        flat = [int(math.prod(int(d) for d in ids_shape[:-1])), int(ids_shape[-1])]
        core = embedding_node(f"{name}_rows", m, ins, by_name, flat)
        if core is None:
            return None
        core.inputs = [f"{name}_ids"]
        dim = int(m.weight.shape[1])
        return [Node(f"{name}_ids", "reshape", ins[:1], dict(target_shape=flat)), core,
                Node(name, "reshape", [core.name], dict(target_shape=[int(d) for d in ids_shape] + [dim]))]
    node = embedding_node(name, m, ins, by_name, ids_shape)
    return None if node is None else [node]
