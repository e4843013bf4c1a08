"""Integer arithmetic on index values (issue 15): `i - 1`, `1 - i`,
`ids * 2`, `i + j`, `-i`, `torch.clamp(i, 0, n - 1)`, `torch.stack([i, j])`,
`torch.cat([i, j])`, views and slices (`i[:, None]`, `i.unsqueeze(1)`,
`i.view(-1)`, `j[:1]`, `i[1:]`), where i, j are int64 / int32 values of the program
(capture_indices.int_dtype: an argmax, x.long() / x.int() of a float value,
an int64 input, or such arithmetic itself).

Torch computes these in integers and so does the program: one `int_math`
node (attrs kind: add, sub, mul, clamp, cat, stack, view, slice; dtype: torch's result
dtype, "int64" or "int32"), lowered on the integer tensors themselves
(ptec.backends.cortex_m.lowering_int), never quantized. The result dtype
is torch's own (the traced call's): int64 + a Python int stays int64,
int32 + a Python int stays int32. Operands:

* int values of the program of the result's dtype (inputs, in order);
* integer constants (buffers, tensors made in forward from no input):
  inputs too, cast to the result dtype as torch casts them;
* Python ints (attrs scalars: {operand position: value}), which must lie
  in the result dtype's range.

`-i` is `0 - i` (kind sub), so it wraps as torch's negation does.
Floor division and remainders (kinds floor_divide: `i // 2`,
`torch.floor_divide`, `torch.div(i, b, rounding_mode="floor")`;
trunc_divide: `rounding_mode="trunc"`; remainder: `i % 3`,
`torch.remainder`; fmod: `torch.fmod`) compute as torch's integer kernels:
the quotient toward minus infinity, the remainder with the divisor's sign,
fmod and trunc with C's truncation; a zero divisor (torch raises
ZeroDivisionError) or the least value by -1 (torch's CPU traps) fails the
run, never a made-up number. torch.maximum / minimum (torch.max / min of
two tensors), abs (abs of the least value wraps to itself, as torch) and
sign: kinds maximum, minimum, abs, sign. Comparisons (`i < j`, `i == 2`)
are capture_bool's `compare` nodes with attrs integer (the dtype compared
in) and, for a Python int, int_scalar: exact, lowered on the integers.
Bitwise and / or / xor (`i & 3`, `|`, `^`, the torch functions), `~i`
(i ^ -1) and shifts (`i << 2`, `>>`, torch.bitwise_left_shift /
right_shift) on two's complement bits: a left shift wraps, a right shift
is arithmetic; a shift amount outside [0, width) fails the run (a Python
int one is refused): torch 1.13 takes it modulo the width, 2.x saturates.
Casts between int64 and int32 (kind cast: `i.int()`, `k.long()`,
`.to(torch.int32)`) keep the value or, into int32, its low 32 bits as
torch; an int32 value beside int64 ones is promoted to int64 as torch
promotes it (lowering casts it). The float graph carries the result as
float32, as every index value (capture_indices). A bool's `.long()` /
`.int()` (capture_bool's bool_to) is an operand like any int value.
Further kinds: where (torch.where(m, i, j), i.masked_fill(m, v): inputs
[m, operands]); gcd, lcm (torch's calc_gcd); sum, prod, amax, amin,
argmax, argmin, cumsum (attrs dims, keepdim: i.sum(), i.max(),
i.max(dim)'s values and indices, torch.cumsum); pow (i ** k, square);
permute, take (i[j]); i.bool() is a compare node (i != 0),
count_nonzero and diff are spelled with compare / bool_to / sum and
slice / sub. Float operands beside int values are capture_int_promotion's
(torch's float copy, before capture reads the graph). Refused in one line
naming the call (an `unsupported` node whose reason lowering reports): an
operand of a dtype torch would not promote to the result's, a Python int
outside the result dtype, a Python int shift amount outside [0, width), a
negative or tensor exponent. Any other integer call is left to capture
(and then refused by lower.index_used_as_number, naming it)."""
from __future__ import annotations

import operator
from typing import List, Optional

import numpy as np
import torch

from .capture_indices import int_dtype
from .capture_int_casts import int_cast_nodes, torch_dtype
from .ir import Node

TORCH_DTYPES = {"int64": torch.int64, "int32": torch.int32}
_FROM_TORCH = {v: k for k, v in TORCH_DTYPES.items()}
NUMPY_DTYPES = {"int64": np.int64, "int32": np.int32}

_BINARY = {}
for _kind, _fns in {"add": (operator.add, torch.add, "add"), "sub": (operator.sub, torch.sub, "sub"),
                    "mul": (operator.mul, torch.mul, "mul")}.items():
    for _f in _fns:
        _BINARY[_f] = _kind
_NEG = (operator.neg, torch.neg, "neg", torch.negative, "negative")
_CLAMP = (torch.clamp, "clamp", torch.clip, "clip")
_JOIN = {torch.cat: "cat", torch.concat: "cat", torch.stack: "stack"}
# floor division and remainders of integers (torch.div with a rounding_mode: _division_kind)
_DIVISION = {operator.floordiv: "floor_divide", torch.floor_divide: "floor_divide", "floor_divide": "floor_divide",
             operator.mod: "remainder", torch.remainder: "remainder", "remainder": "remainder",
             torch.fmod: "fmod", "fmod": "fmod", torch.gcd: "gcd", "gcd": "gcd", torch.lcm: "lcm", "lcm": "lcm"}
_ROUNDING = {"floor": "floor_divide", "trunc": "trunc_divide"}
# bitwise functions and shifts of integers (~i is i ^ -1)
_BITWISE = {operator.and_: "bitwise_and", torch.bitwise_and: "bitwise_and", "bitwise_and": "bitwise_and",
            "__and__": "bitwise_and", operator.or_: "bitwise_or", torch.bitwise_or: "bitwise_or",
            "bitwise_or": "bitwise_or", "__or__": "bitwise_or", operator.xor: "bitwise_xor",
            torch.bitwise_xor: "bitwise_xor", "bitwise_xor": "bitwise_xor", "__xor__": "bitwise_xor",
            operator.lshift: "left_shift", "__lshift__": "left_shift", operator.rshift: "right_shift",
            "__rshift__": "right_shift"}
for _name, _kind in (("bitwise_left_shift", "left_shift"), ("bitwise_right_shift", "right_shift")):
    _BITWISE[_name] = _kind
    if hasattr(torch, _name):
        _BITWISE[getattr(torch, _name)] = _kind
_INVERT = (operator.invert, torch.bitwise_not, "bitwise_not")
# reductions of int values: sum and prod (int64, or the dtype asked), amax / amin (max / min of the
# whole tensor), argmax / argmin, cumsum (int64); attrs dims (None: every dim), keepdim
_REDUCE = {torch.sum: "sum", "sum": "sum", torch.amax: "amax", "amax": "amax", torch.amin: "amin",
           "amin": "amin", torch.argmax: "argmax", "argmax": "argmax", torch.argmin: "argmin",
           "argmin": "argmin", torch.cumsum: "cumsum", "cumsum": "cumsum", torch.max: "amax", "max": "amax",
           torch.min: "amin", "min": "amin", torch.prod: "prod", "prod": "prod"}
# i ** k, torch.pow(i, k), torch.square(i) for a Python int k >= 0: kind pow (attrs exponent)
_POW = (operator.pow, torch.pow, "pow", "__pow__")
_SQUARE = (torch.square, "square")
_COUNTS = (torch.count_nonzero, "count_nonzero")
_DIFF = (torch.diff, "diff")
_REDUCE_ARGS = {"sum": ("input", "dim", "keepdim"), "amax": ("input", "dim", "keepdim"),
                "amin": ("input", "dim", "keepdim"), "argmax": ("input", "dim", "keepdim"),
                "argmin": ("input", "dim", "keepdim"), "cumsum": ("input", "dim"), "prod": ("input", "dim", "keepdim")}
_EXTREMES = {torch.maximum: "maximum", "maximum": "maximum", torch.max: "maximum", "max": "maximum",
             torch.minimum: "minimum", "minimum": "minimum", torch.min: "minimum", "min": "minimum",
             operator.abs: "abs", torch.abs: "abs", "abs": "abs", torch.absolute: "abs", "absolute": "abs",
             torch.sign: "sign", "sign": "sign"}
_TORCH_FNS = {"bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
              "left_shift": operator.lshift, "right_shift": operator.rshift}
_CASTS = ("int", "long", "to", "type")
# torch's promotion among the dtypes here: an int32 value beside int64 ones becomes int64
_PROMOTES = {("int32", "int64")}


def _int_of(node: Optional[Node]) -> Optional[str]:
    """The integer dtype of an operand: an int value of the program
    (capture_indices.int_dtype) or a bool's `.long()` / `.int()` (a
    bool_to node of an integer dtype: its 0 / 1)."""
    if node is not None and node.op == "bool_to" and node.attrs.get("dtype") in TORCH_DTYPES:
        return node.attrs["dtype"]
    return int_dtype(node)


def _int_constant(node: Optional[Node]) -> Optional[str]:
    """The dtype of an integer constant (a buffer of labels `self.labels[i]`, capture_table_lookup), else None."""
    if node is None or node.op != "constant":
        return None
    return _FROM_TORCH.get(torch.from_numpy(np.asarray(node.attrs["value"])[:0].copy()).dtype)


def _lookup(table, target):
    try:
        return table.get(target) if isinstance(table, dict) else (target in table)
    except TypeError:         # an unhashable target is none of these
        return None


def _result_dtype(fn: torch.fx.Node) -> Optional[str]:
    return _FROM_TORCH.get(getattr(fn.meta.get("tensor_meta"), "dtype", None))


def _python_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _refused(fn: torch.fx.Node, by_name, why: str) -> List[Node]:
    """The call as one unsupported node whose reason lowering reports,
    evaluated as torch does (an int value carried as float32 taken back to
    its dtype, the result carried as float32 again)."""
    order = []
    torch.fx.node.map_arg((fn.args, fn.kwargs), order.append)
    names = list(dict.fromkeys(t.name for t in order))
    dtypes = {n: _int_of(by_name.get(n)) for n in names}

    def run(*xs):
        value = {n: (x.to(torch.int64).to(torch_dtype(dtypes[n])) if dtypes[n] else x) for n, x in zip(names, xs)}
        args, kwargs = torch.fx.node.map_arg((fn.args, fn.kwargs), lambda a: value[a.name])
        y = fn.target(*args, **kwargs) if fn.op == "call_function" else getattr(args[0], fn.target)(*args[1:],
                                                                                                    **kwargs)
        return y.float() if isinstance(y, torch.Tensor) and y.dtype in _FROM_TORCH else y
    return [Node(fn.name, "unsupported", names, dict(fn=run, what=str(fn.target), why=why))]


def _operands(fn: torch.fx.Node, args, by_name, dtype: str):
    """(input names, scalars) for operands `args` of a call whose result
    has `dtype`, or a refusal reason (str), or None when no operand is an
    int value of the program (not this module's call)."""
    names, scalars, computed, why = [], {}, False, None
    lo, hi = np.iinfo(NUMPY_DTYPES[dtype]).min, np.iinfo(NUMPY_DTYPES[dtype]).max
    for k, a in enumerate(args):
        node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
        has = _int_of(node)
        if _python_int(a):
            scalars[k] = int(a)
            if not lo <= a <= hi:
                why = why or f"the number {a} is outside {dtype}"
        elif node is not None and node.op == "constant" \
                and np.issubdtype(np.asarray(node.attrs["value"]).dtype, np.integer):
            names.append(a.name)
        elif has is not None:
            names.append(a.name)
            computed = True
            if has != dtype and (has, dtype) not in _PROMOTES:
                why = why or f"an {has} value in a {dtype} result: a conversion torch does not make here"
        else:
            why = why or "an operand that is neither an integer value of the program, an integer constant nor an int"
    if not computed:
        return None
    return why or (names, scalars)


def _compare_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """A comparison (`i < j`, `i == 2`, `3 <= i`, torch.gt ...) of int values
    of the program: a `compare` node (capture_bool's: its bool serves any
    bool use) with attrs integer (the dtype torch compares in: int64 if
    either operand is, else int32) and, for a Python int operand, scalar
    (for the float graph) and int_scalar (exact, for lowering)."""
    from .capture_bool import _COMPARE, SWAPPED
    kind = _lookup(_COMPARE, fn.target)
    if kind is None or len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = fn.args
    if not isinstance(a, torch.fx.Node):
        a, b, kind = b, a, SWAPPED[kind]
    if not isinstance(a, torch.fx.Node):
        return None
    dtypes = [_int_of(by_name.get(v.name)) for v in (a, b) if isinstance(v, torch.fx.Node)]
    if not any(dtypes):
        return None
    dtype = "int64" if "int64" in dtypes else "int32"
    found = _operands(fn, [a, b], by_name, dtype)
    if found is None or isinstance(found, str):
        return None if found is None else _refused(fn, by_name, found)
    names, scalars = found
    attrs = dict(kind=kind, integer=dtype)
    if scalars:
        attrs.update(scalar=float(scalars[1]), int_scalar=scalars[1])
    return [Node(fn.name, "compare", names, attrs)]


def _extreme_nodes(fn: torch.fx.Node, by_name, dtype: str) -> Optional[List[Node]]:
    """torch.maximum / minimum, torch.max / min of two tensors, abs and sign
    of int values: int_math kinds maximum, minimum, abs, sign."""
    kind = _lookup(_EXTREMES, fn.target)
    if kind is None or fn.kwargs:
        return None
    arity = 1 if kind in ("abs", "sign") else 2
    if len(fn.args) != arity or (arity == 2 and not all(isinstance(v, torch.fx.Node) for v in fn.args)):
        return None                       # torch.max(i) / max(i, dim): reductions, not this module's
    found = _operands(fn, fn.args, by_name, dtype)
    if found is None or isinstance(found, str):
        return None if found is None else _refused(fn, by_name, found)
    return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, scalars=found[1]))]


def _tensor_bounds(fn: torch.fx.Node, by_name, dtype: str, x, lo, hi) -> List[Node]:
    """torch.clamp(i, min=t0, max=t1) with a tensor bound (a 0-d
    `torch.tensor(2)`, `i.new_full((), 5)`, or any int tensor that
    broadcasts): torch's min(max(i, t0), t1), as int_math maximum then
    minimum (a Python int bound: a one-sided clamp), exact."""
    nodes, cur = [], x.name
    steps = [(b, k) for b, k in ((lo, "maximum"), (hi, "minimum")) if b is not None]
    for n, (bound, kind) in enumerate(steps):
        name = fn.name if n == len(steps) - 1 else f"{fn.name}__{kind}"
        if _python_int(bound):
            found = _operands(fn, [x, bound], by_name, dtype)
            if isinstance(found, str):
                return _refused(fn, by_name, found)
            side = dict(lo=bound, hi=None) if kind == "maximum" else dict(lo=None, hi=bound)
            nodes.append(Node(name, "int_math", [cur], dict(kind="clamp", dtype=dtype, **side)))
        else:
            found = _operands(fn, [x, bound], by_name, dtype) if isinstance(bound, torch.fx.Node) else \
                "a bound that is neither a tensor nor an int"
            if found is None or isinstance(found, str) or len(found[0]) != 2:
                return _refused(fn, by_name, found or "a bound that is not an integer tensor")
            nodes.append(Node(name, "int_math", [cur, found[0][1]], dict(kind=kind, dtype=dtype, scalars={})))
        cur = name
    return nodes


def int_math_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """The int_math node of an integer call on int values of the program,
    a refused node for such a call ptec does not run, or None (a call of
    anything else: not this module's)."""
    if fn.op not in ("call_function", "call_method"):
        return None
    narrow = int_cast_nodes(fn, by_name)     # into / from int16, uint8, int8, float64 (capture_int_casts)
    if narrow is not None:
        return narrow
    compared = _compare_nodes(fn, by_name) or _to_bool_nodes(fn, by_name)
    if compared is not None:
        return compared
    dtype = _result_dtype(fn)
    if dtype is None:
        return None
    spelled = _spelled_nodes(fn, by_name, dtype)
    if spelled is not None:
        return spelled
    kind = _lookup(_BINARY, fn.target)
    if kind is not None:
        if len(fn.args) != 2 or set(fn.kwargs) - ({"alpha"} if kind != "mul" else set()):
            return None
        alpha = fn.kwargs.get("alpha", 1)
        found = _operands(fn, fn.args, by_name, dtype)
        if found is None:
            return None
        if isinstance(found, str) or not _python_int(alpha):
            return _refused(fn, by_name, found if isinstance(found, str) else "an alpha that is not an int")
        return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, scalars=found[1], alpha=alpha))]
    if _lookup(_NEG, fn.target):
        if len(fn.args) != 1 or fn.kwargs:
            return None
        found = _operands(fn, fn.args, by_name, dtype)
        if found is None or isinstance(found, str):
            return None if found is None else _refused(fn, by_name, found)
        # -i as 0 - i: the same wrap at the dtype's least value
        return [Node(fn.name, "int_math", found[0], dict(kind="sub", dtype=dtype, scalars={0: 0}, alpha=1))]
    if _lookup(_CLAMP, fn.target):
        args = dict(zip(("input", "min", "max"), fn.args))
        args.update(fn.kwargs)
        if set(args) - {"input", "min", "max"} or not isinstance(args.get("input"), torch.fx.Node):
            return None
        found = _operands(fn, [args["input"]], by_name, dtype)
        if found is None:
            return None
        lo, hi = args.get("min"), args.get("max")
        if not isinstance(found, str) and any(isinstance(b, torch.fx.Node) for b in (lo, hi)):
            return _tensor_bounds(fn, by_name, dtype, args["input"], lo, hi)
        if isinstance(found, str) or not all(b is None or _python_int(b) for b in (lo, hi)) or lo is hi is None:
            return _refused(fn, by_name, found if isinstance(found, str) else "bounds that are not ints (a tensor "
                                                                              "bound is not run on integers)")
        return [Node(fn.name, "int_math", found[0], dict(kind="clamp", dtype=dtype, lo=lo, hi=hi))]
    kind = _lookup(_JOIN, fn.target)
    if kind is not None:
        args = dict(zip(("tensors", "dim"), fn.args))
        args.update(fn.kwargs)
        tensors, dim = args.get("tensors"), args.get("dim", 0)
        if set(args) - {"tensors", "dim"} or not isinstance(tensors, (list, tuple)) or not tensors \
                or not _python_int(dim):
            return None
        found = _operands(fn, tensors, by_name, dtype)
        if found is None:
            return None
        if isinstance(found, str) or found[1]:
            return _refused(fn, by_name, found if isinstance(found, str) else "a number among the tensors")
        return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, dim=dim))]
    reduced = _reduce_nodes(fn, by_name, dtype)
    if reduced is not None:
        return reduced
    extreme = _extreme_nodes(fn, by_name, dtype)
    if extreme is not None:
        return extreme
    kind = _lookup(_BITWISE, fn.target)
    if kind is not None:
        if len(fn.args) != 2 or fn.kwargs:
            return None
        found = _operands(fn, fn.args, by_name, dtype)
        if found is None or isinstance(found, str):
            return None if found is None else _refused(fn, by_name, found)
        width = np.iinfo(NUMPY_DTYPES[dtype]).bits
        if kind.endswith("shift") and 1 in found[1] and not 0 <= found[1][1] < width:
            return _refused(fn, by_name, f"a shift by {found[1][1]}, outside [0, {width}): torch's result for it "
                                         f"differs across versions")
        return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, scalars=found[1]))]
    if _lookup(_INVERT, fn.target):
        if len(fn.args) != 1 or fn.kwargs:
            return None
        found = _operands(fn, fn.args, by_name, dtype)
        if found is None or isinstance(found, str):
            return None if found is None else _refused(fn, by_name, found)
        # ~i as i ^ -1: every bit flipped
        return [Node(fn.name, "int_math", found[0], dict(kind="bitwise_xor", dtype=dtype, scalars={1: -1}))]
    kind = _division_kind(fn)
    if kind is not None:
        args = dict(zip(("input", "other"), fn.args))
        args.update(fn.kwargs)
        if set(args) - {"input", "other", "rounding_mode"} or len(fn.args) > 2:
            return None
        found = _operands(fn, [args.get("input"), args.get("other")], by_name, dtype)
        if found is None or isinstance(found, str):
            return None if found is None else _refused(fn, by_name, found)
        return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, scalars=found[1]))]
    picked = _where_nodes(fn, by_name, dtype)
    if picked is not None:
        return picked
    if _lookup(_CASTS, fn.target) and fn.op == "call_method" and fn.args and isinstance(fn.args[0], torch.fx.Node):
        has = _int_of(by_name.get(fn.args[0].name))
        if has is not None and has != dtype:
            # i.int(), k.long(), i.to(torch.int32): the value in the other integer dtype
            return [Node(fn.name, "int_math", [fn.args[0].name], dict(kind="cast", dtype=dtype))]
    return None


def _to_bool_nodes(fn: torch.fx.Node, by_name) -> Optional[List[Node]]:
    """i.bool() / i.to(torch.bool) of an int value: i != 0 (a compare node of integers)."""
    if fn.op != "call_method" or not fn.args or not isinstance(fn.args[0], torch.fx.Node) or fn.kwargs:
        return None
    if not ((fn.target == "bool" and len(fn.args) == 1)
            or (fn.target in ("to", "type") and len(fn.args) == 2 and fn.args[1] is torch.bool)):
        return None
    has = _int_of(by_name.get(fn.args[0].name))
    if has is None:
        return None
    return [Node(fn.name, "compare", [fn.args[0].name], dict(kind="ne", integer=has, scalar=0.0, int_scalar=0))]


def _spelled_nodes(fn: torch.fx.Node, by_name, dtype: str) -> Optional[List[Node]]:
    """Calls spelled with other integer nodes: `i ** k` / torch.pow(i, k) /
    torch.square(i) (kind pow, attrs exponent: a Python int >= 0; torch's
    repeated products, wrapping), torch.count_nonzero(i, dim) ((i != 0) as
    int64, summed), torch.diff(i, dim=d) (i[1:] - i[:-1] along d)."""
    if _lookup(_POW, fn.target) or _lookup(_SQUARE, fn.target):
        square = _lookup(_SQUARE, fn.target)
        if fn.kwargs or len(fn.args) != (1 if square else 2) or not isinstance(fn.args[0], torch.fx.Node):
            return None
        k = 2 if square else fn.args[1]
        found = _operands(fn, fn.args[:1], by_name, dtype)
        if found is None or isinstance(found, str):
            return None if found is None else _refused(fn, by_name, found)
        if not _python_int(k) or not 0 <= k < 2 ** 31:
            return _refused(fn, by_name, "an exponent that is not an int in [0, 2^31) (torch refuses a negative "
                                         "one; a tensor exponent is not run on integers)")
        return [Node(fn.name, "int_math", found[0], dict(kind="pow", dtype=dtype, exponent=int(k)))]
    if _lookup(_COUNTS, fn.target) or _lookup(_DIFF, fn.target):
        count = _lookup(_COUNTS, fn.target)
        names = ("input", "dim") if count else ("input", "n", "dim")
        args = dict(zip(names, fn.args))
        args.update(fn.kwargs)
        x = args.get("input")
        if set(args) - set(names) or len(fn.args) > len(names) or not isinstance(x, torch.fx.Node):
            return None
        has = _int_of(by_name.get(x.name))
        if has is None:
            return None
        dim = args.get("dim", None if count else -1)
        if count:
            dims = None if dim is None else [dim] if _python_int(dim) else list(dim) \
                if isinstance(dim, (list, tuple)) and all(map(_python_int, dim)) else False
            if dims is False:
                return None
            nz, ones = f"{fn.name}__nonzero", f"{fn.name}__ones"
            return [Node(nz, "compare", [x.name], dict(kind="ne", integer=has, scalar=0.0, int_scalar=0)),
                    Node(ones, "bool_to", [nz], dict(dtype="int64")),
                    Node(fn.name, "int_math", [ones], dict(kind="sum", dtype=dtype, dims=dims, keepdim=False))]
        shape = getattr(x.meta.get("tensor_meta"), "shape", None)
        if args.get("n", 1) != 1 or not _python_int(dim) or shape is None or has != dtype:
            return None
        d = dim % len(shape)
        hi, lo = f"{fn.name}__later", f"{fn.name}__earlier"
        return [Node(hi, "int_math", [x.name], dict(kind="slice", dtype=dtype, dim=d, start=1, end=int(shape[d]))),
                Node(lo, "int_math", [x.name], dict(kind="slice", dtype=dtype, dim=d, start=0,
                                                    end=int(shape[d]) - 1)),
                Node(fn.name, "int_math", [hi, lo], dict(kind="sub", dtype=dtype, scalars={}, alpha=1))]
    return None


def int_extreme_element(name: str, source: Node, item, by_name) -> Optional[List[Node]]:
    """Element 0 / .values or 1 / .indices of i.max(dim) / torch.min(i, dim,
    keepdim) of an int value (capture's unsupported node with attrs
    values_of): int_math kind amax / amin (the values, i's dtype) or argmax /
    argmin (int64; ties: the first, as torch). None for anything else."""
    has = _int_of(by_name.get(source.inputs[0])) if source.inputs else None
    if has is None or item not in (0, "values", 1, "indices"):
        return None
    dim, keepdim, negate, _ = source.attrs["values_of"]
    values = item in (0, "values")
    kind = ("amin" if negate else "amax") if values else ("argmin" if negate else "argmax")
    return [Node(name, "int_math", [source.inputs[0]], dict(kind=kind, dtype=has if values else "int64",
                                                            dims=[dim], keepdim=keepdim))]


def _reduce_nodes(fn: torch.fx.Node, by_name, dtype: str) -> Optional[List[Node]]:
    """i.sum(), torch.sum(i, dim, keepdim), i.sum(dtype=torch.int32),
    i.prod() / i.prod(dim), i.amax(dim) / amin, i.max() / i.min() (the whole
    tensor's), i.argmax(dim) / argmin, torch.cumsum(i, dim) of an int value:
    int_math kinds sum, prod, amax, amin, argmax, argmin, cumsum (attrs dims: a list, or None for every
    dim; keepdim). An int32 value summed into int64 is cast first (the same
    sum: torch accumulates it in int64)."""
    kind = _lookup(_REDUCE, fn.target)
    if kind is None or not fn.args or not isinstance(fn.args[0], torch.fx.Node):
        return None
    args = dict(zip(_REDUCE_ARGS[kind], fn.args))
    if len(fn.args) > len(_REDUCE_ARGS[kind]):
        return None
    args.update(fn.kwargs)
    wanted = args.pop("dtype", None)
    if set(args) - set(_REDUCE_ARGS[kind]) or (wanted is not None and _FROM_TORCH.get(wanted) != dtype):
        return None
    if fn.target in (torch.max, "max", torch.min, "min") and len(args) != 1:
        return None                       # i.max(dim): values and indices, not run here
    dim, keepdim = args.get("dim"), args.get("keepdim", False)
    if kind == "cumsum" and not _python_int(dim):
        return None
    dims = None if dim is None or (kind in ("sum", "amax", "amin") and dim in ((), [])) else \
        [dim] if _python_int(dim) else list(dim) if isinstance(dim, (list, tuple)) and all(map(_python_int, dim)) \
        else False
    if dims is False or not isinstance(keepdim, bool) or (kind in ("argmax", "argmin", "prod") and dims
                                                           and len(dims) != 1):
        return None
    # i.sum(dtype=torch.int32) of an int64 i: torch's int32 sum of its low bits, the int64 sum's low bits
    has = _int_of(by_name.get(args["input"].name)) if isinstance(args["input"], torch.fx.Node) else None
    found = _operands(fn, [args["input"]], by_name, has if kind in ("sum", "prod") and has else dtype)
    if found is None or isinstance(found, str):
        return None if found is None else _refused(fn, by_name, found)
    return [Node(fn.name, "int_math", found[0], dict(kind=kind, dtype=dtype, dims=dims, keepdim=keepdim))]


def _where_nodes(fn: torch.fx.Node, by_name, dtype: str) -> Optional[List[Node]]:
    """torch.where(m, i, j) / where(m, i, 0) / where(m, 0, i) and
    i.masked_fill(m, v) (where(m, v, i)) of int values with a bool m:
    int_math kind where, inputs [m, operands...] (Python ints: scalars at
    positions 0 / 1 of the two picked operands)."""
    if _lookup((torch.where, "where"), fn.target) and len(fn.args) == 3 and not fn.kwargs:
        cond, picked = fn.args[0], list(fn.args[1:])
    elif _lookup((torch.masked_fill, "masked_fill"), fn.target) and len(fn.args) == 3 and not fn.kwargs:
        cond, picked = fn.args[1], [fn.args[2], fn.args[0]]
    else:
        return None
    if not isinstance(cond, torch.fx.Node) or cond.name not in by_name \
            or getattr(cond.meta.get("tensor_meta"), "dtype", None) is not torch.bool:
        return None
    found = _operands(fn, picked, by_name, dtype)
    if found is None or isinstance(found, str):
        return None if found is None else _refused(fn, by_name, found)
    return [Node(fn.name, "int_math", [cond.name] + found[0], dict(kind="where", dtype=dtype, scalars=found[1]))]


def _division_kind(fn: torch.fx.Node) -> Optional[str]:
    """floor_divide, trunc_divide, remainder or fmod for a call of one, else None."""
    kind = _lookup(_DIVISION, fn.target)
    if kind is None and _lookup((torch.div, "div"), fn.target):
        mode = fn.kwargs.get("rounding_mode")
        kind = _ROUNDING.get(mode) if isinstance(mode, str) else None
    return kind


def int_view_nodes(fn: torch.fx.Node, nodes: List[Node], by_name) -> List[Node]:
    """The nodes capture made for fn, made int_math when they only move an
    int value's elements: slices (`j[:1]`, `i[1:]`, kind slice: attrs dim,
    start, end), reshapes (`i.unsqueeze(1)`, `i[:, None]`, `i.view(-1)`,
    `i[0]`; kind view: attrs shape, torch's), joins of such pieces
    (`i.flip(0)`, `i.repeat(2)`, `i[:, None].expand(n, 3)`: kind cat, attrs
    dim) and permutations (`i.t()`, `i.permute(1, 0)`: kind permute, attrs
    dims), `i.clone()` / `i.contiguous()` (capture's identity: kind view)
    and `i[j]` (capture's embedding of i's rows by the index j: kind take),
    so the value stays an integer. Any other nodes: unchanged."""
    dtype = _result_dtype(fn)
    movements = ("slice", "reshape", "cat", "permute", "identity", "embedding", "flat_index")
    if dtype is None or not nodes or fn.meta.get("tensor_meta") is None \
            or any(n.op not in movements or (n.op not in ("cat", "embedding", "flat_index") and len(n.inputs) != 1)
                   or (n.op == "embedding" and len(n.inputs) != 2) for n in nodes) \
            or any(n.op in ("reshape", "identity") and not (n.attrs.get("shape") or n.attrs.get("target_shape"))
                   for n in nodes[:-1]):
        return nodes
    made = {}
    for n in nodes:
        if n.op == "flat_index":          # i[j]'s computed j, wrapped and checked: an int64 index, kept as it is
            made[n.name] = "int64"
            continue
        # an embedding's ids (input 0) are any index; its table, like every other input, the dtype
        if any((made.get(i) or _int_of(by_name.get(i)) or _int_constant(by_name.get(i))) != dtype
               for i in n.inputs[n.op == "embedding":]) \
                or (n.op == "embedding" and (made.get(n.inputs[0]) or _int_of(by_name.get(n.inputs[0]))) is None):
            return nodes
        made[n.name] = dtype
    for k, n in enumerate(nodes):
        if n.op == "flat_index":
            continue
        attrs = dict(dtype=dtype, **{k: n.attrs[k] for k in ("source",) if k in n.attrs})
        if n.op == "slice":
            attrs.update(kind="slice", dim=n.attrs["dim"], start=n.attrs["start"], end=n.attrs["end"])
        elif n.op == "cat":
            attrs.update(kind="cat", dim=n.attrs["dim"])
        elif n.op == "permute":
            attrs.update(kind="permute", dims=[int(d) for d in n.attrs["dims"]])
        elif n.op == "embedding":
            attrs.update(kind="take")
        elif k == len(nodes) - 1:
            attrs.update(kind="view", shape=[int(d) for d in fn.meta["tensor_meta"].shape])
        else:
            attrs.update(kind="view", shape=[int(d) for d in n.attrs.get("shape") or n.attrs["target_shape"]])
        n.op, n.attrs = "int_math", attrs
    return nodes


def eval_int_math(a: dict, xs: List[torch.Tensor]) -> torch.Tensor:
    """The int_math node in the float graph: torch's integer call on the
    operands in the node's dtype, an integer result carried as int64
    (exact: a float32 carrier rounded products past 2^24, so calibration
    saw `(ids * 1000003) % 64` as 16, 40, 8, 48 ... where torch gives 14,
    17, 20, 23 ...); a float or bool result as float32, as before."""
    return _carried(_eval_int_math(a, xs))


def _carried(y: torch.Tensor) -> torch.Tensor:
    if y.dtype.is_floating_point or y.dtype == torch.bool:
        return y.float()
    return y.to(torch.int64)


def _eval_int_math(a: dict, xs: List[torch.Tensor]) -> torch.Tensor:
    kind = a["kind"]
    if kind == "cast":         # eval_cast without its float32 carrier
        return xs[0].to(torch.int64).to(torch_dtype(a["dtype"]))
    dt = TORCH_DTYPES[a["dtype"]]
    if kind in ("cat", "stack"):
        return getattr(torch, kind)([x.to(dt) for x in xs], a["dim"])
    if kind == "clamp":
        return torch.clamp(xs[0].to(dt), a["lo"], a["hi"])
    if kind == "view":
        return xs[0].reshape(a["shape"])
    if kind in ("abs", "sign"):
        return getattr(torch, kind)(xs[0].to(dt))
    if kind == "slice":
        return xs[0].narrow(a["dim"], a["start"], a["end"] - a["start"])
    if kind == "permute":
        return xs[0].permute(*a["dims"])
    if kind == "take":
        return torch.nn.functional.embedding(xs[0].long(), xs[1].to(dt))
    if kind == "pow":
        return torch.pow(xs[0].to(dt), a["exponent"])
    if kind in _REDUCE_ARGS:
        return _eval_reduce(kind, xs[0].to(torch.int64).to(dt), a["dims"], a["keepdim"])
    scalars = {int(k): v for k, v in a["scalars"].items()}
    if kind == "where":
        rest = iter(xs[1:])
        p, q = [torch.tensor(scalars[k], dtype=dt) if k in scalars else next(rest).to(dt) for k in range(2)]
        return torch.where(xs[0].bool(), p, q)
    rest = iter(xs)
    p, q = [torch.tensor(scalars[k], dtype=dt) if k in scalars else next(rest).to(dt) for k in range(2)]
    if kind == "mul":
        return (p * q)
    if kind in _TORCH_FNS:
        return _TORCH_FNS[kind](p, q)
    if kind in ("maximum", "minimum"):
        return getattr(torch, kind)(p, q)
    if kind in ("gcd", "lcm"):
        return getattr(torch, kind)(p, q)
    if kind in ("floor_divide", "remainder", "fmod", "trunc_divide"):
        if kind == "trunc_divide":
            return torch.div(p, q, rounding_mode="trunc")
        return getattr(torch, kind)(p, q)
    return getattr(torch, kind)(p, q, alpha=a["alpha"])


def _eval_reduce(kind: str, x: torch.Tensor, dims, keepdim: bool) -> torch.Tensor:
    """torch's reduction of the integer tensor x (dims None: every dim)."""
    if kind == "cumsum":
        return torch.cumsum(x, dims[0])
    if kind in ("argmax", "argmin"):
        return getattr(torch, kind)(x, dims[0] if dims else None, keepdim)
    if dims is None:
        dims = list(range(x.dim()))
    if kind == "sum":
        return torch.sum(x, dims, keepdim) if dims else x.clone()
    if kind == "prod":
        return torch.prod(x, dims[0], keepdim) if len(dims) == 1 else torch.prod(x) if dims else x.clone()
    return getattr(torch, kind)(x, dims, keepdim) if dims else x.clone()
