"""Any view as a constant gather from its base's elements (issue 15):
`y.as_strided(size, stride, offset)`, `torch.as_strided(y, ...)`, a piece
of `torch.broadcast_tensors(y[:, :1], y)` read after a write into y, a
write into an as_strided view, and writes into views covering an element
twice (`y.unfold(2, 3, 2).relu_()`, overlapping as_strided windows).

A view's elements are elements of its storage: torch's run of the graph
(capture_view_writes) gives each view's storage offset, shape and strides,
so element i of the view is storage element offset + sum(i_d * stride_d),
and through the root's own strides, a constant flat position of the root
(the value holding the whole storage). A value read from that memory is
then the flattened root's getitem at those constant positions, whichever
call made it: as_strided, whose arguments count in storage elements and
so cannot be redone on a ptec value (ptec's values share no bytes), or a
piece of a tuple no chain of views re-derives. Shapes are static, so the
positions are the program's.

A write into a view whose positions cover an element twice: torch 1.13
runs most in-place ops on it element by element in its order (an
unfold's overlapping windows, an as_strided with overlapping rows), so
an element covered k times is written k times, each reading the last
write: k applications of the op. For an op of the element alone (its
other operands numbers: relu_, clamp_, add_(1), mul_(2), fill_, zero_,
...) that is the same whatever torch's order, and it runs so: the op
applied to the elements covered at least once, written back, then to
those covered at least twice, ... Other overlapping writes are refused in
one line: an op with a tensor operand (the copies would take different
values, and torch's last one depends on its order), or one that is not
element-wise. Where torch itself refuses (its TensorIterator ops on an
expanded view: "unsupported operation: more than one element of the
written-to tensor refers to a single memory location"), capture refuses
quoting torch: that is torch's refusal, not a gap of ptec.

The same order decides a write that reads, through a tensor operand in
the written memory, an element it writes at another position
(`y[..., 1:].add_(y[..., :-1])`: a running sum for a short row, pairwise
sums for a long one; `y /= y[..., :1]`; `y[..., 1:] = y[..., :-1]`):
refused in one line (torch refuses some of them itself). An operand read
at the very positions written (`y.mul_(y)`), or elsewhere, runs."""
from __future__ import annotations

import operator
from typing import Optional

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import _extract_tensor_metadata

from .capture_in_place import _MARK
from .capture_item_assignment import _WRITTEN, READS, assigned
from .ir import UnsupportedOperator

# out-of-place ops of one element alone (with number operands): an element
# covered twice by the written view takes the op twice, in any order
_ELEMENTWISE = {"relu", "relu6", "clamp", "clip", "clamp_min", "clamp_max", "hardtanh", "add", "sub", "mul", "div",
                "true_divide", "multiply", "subtract", "divide", "pow", "neg", "negative", "abs", "absolute", "exp",
                "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos",
                "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round",
                "trunc", "fix", "frac", "sign", "sgn", "reciprocal", "square", "erf", "erfc", "leaky_relu", "elu",
                "selu", "celu", "silu", "mish", "hardswish", "hardsigmoid", "threshold", "fmod", "remainder",
                "nan_to_num", "zeros_like", "full_like", "ones_like", "logit", "softplus", "gelu", "hardshrink",
                "softshrink", "tanhshrink", "logsigmoid", "deg2rad", "rad2deg", "sinc", "float_power", "xlogy",
                "heaviside", "lerp"}
_ELEMENTWISE_MODULES = (nn.ReLU, nn.ReLU6, nn.LeakyReLU, nn.Hardtanh, nn.ELU, nn.SELU, nn.CELU, nn.SiLU, nn.Mish,
                        nn.Hardswish, nn.Hardsigmoid, nn.Threshold, nn.Sigmoid, nn.Tanh, nn.GELU, nn.Softplus)
_OPERATORS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
              operator.pow}
_TORCH_REFUSES = "unsupported operation"     # how torch's own refusal of such a write begins
# writes that read their tensor operand once, before writing (a 0-d value)
_READ_ONCE = {torch.full_like, "masked_fill", "index_fill", torch.masked_fill, torch.index_fill}


def is_as_strided(fn: torch.fx.Node) -> bool:
    """x.as_strided(...) or torch.as_strided(x, ...)."""
    return (fn.op == "call_method" and fn.target == "as_strided") or \
        (fn.op == "call_function" and fn.target is getattr(torch, "as_strided", None))


def torch_refusal(e: BaseException) -> Optional[str]:
    """The first line of torch's refusal of a write into overlapping
    memory, else None."""
    line = (str(e).strip().splitlines() or [""])[0]
    return line if isinstance(e, RuntimeError) and line.startswith(_TORCH_REFUSES) else None


def _of_each_element(fn: torch.fx.Node, mods) -> bool:
    """fn (out of place) is an op of each element alone, its other
    operands numbers."""
    if _has_node(list(fn.args[1:]) + list(fn.kwargs.values())):
        return False
    if fn.op == "call_module":
        return isinstance(mods.get(fn.target), _ELEMENTWISE_MODULES)
    if fn.op == "call_method":
        return fn.target in _ELEMENTWISE
    if fn.target in _OPERATORS:
        return True
    name = getattr(fn.target, "__name__", None)
    return name in _ELEMENTWISE and any(getattr(home, name, None) is fn.target for home in (torch, F))


def _has_node(v) -> bool:
    found = []
    torch.fx.node.map_aggregate(v, lambda a: found.append(a) if isinstance(a, torch.fx.Node) else a)
    return bool(found)


class Gathers:
    """capture_view_writes' _Rewrite: values read, and writes done, at a
    view's constant positions in its root."""

    def _meta(self, n, like):
        n.meta.update(type=torch.Tensor, tensor_meta=_extract_tensor_metadata(like))
        return n

    def _gather(self, before, k, cur, q):
        """cur (root k's value) flattened, read at the constant positions q
        (a tensor of the view's shape): new nodes before node `before`."""
        root = self.memory[self.root[k]]
        count = int(torch.tensor(root.shape, dtype=torch.long).prod()) if root.shape else 1
        flat = self._meta(self._add(self.g.inserting_before(before), "call_method", "reshape", (cur, (-1,))),
                          torch.empty(count, dtype=root.dtype))
        at = self._meta(self._add(self.g.inserting_before(before), "get_attr",
                                  self._constant("_ptec_view_read", q.clone()), ()), q)
        return self._meta(self._add(self.g.inserting_before(before), "call_function", operator.getitem, (flat, at)),
                          torch.empty(tuple(q.shape), dtype=root.dtype))

    def _constant(self, prefix, value):
        n = 0
        while hasattr(self.gm, f"{prefix}{n}"):
            n += 1
        setattr(self.gm, f"{prefix}{n}", value)
        return f"{prefix}{n}"

    def _as_gather(self, fn, why):
        """fn's value read at its positions in its root's current value: a
        gather after fn, which takes fn's place (and its memory)."""
        found = self.memory.get(fn)
        keys = self.keys.get(fn, ())
        k = next(iter(keys)) if len(keys) == 1 else None
        q = self._positions(fn, k) if k is not None and k in self.root else None
        if q is None or found.dtype != self.memory[self.root[k]].dtype:
            raise UnsupportedOperator(
                f"operator not supported: {self.name(fn)}: {why} memory that no one value of the program holds "
                "(outside the tensor it views, or of another dtype), which ptec does not follow")
        got = self._gather(fn, k, self.cur[k], q)
        fn.replace_all_uses_with(got)
        for table in (self.memory, self.keys, self.born):
            table[got] = table[fn]
        self.g.erase_node(fn)
        return got

    def _reads_what_it_writes(self, fn, form, t, k, q):
        """Refuses write fn (into view t, root positions q) when it reads,
        through a tensor operand in the same memory, an element it writes
        at another position (`y[:, 1:].add_(y[:, :-1])`, `y /= y[:, :1]`,
        `y[:, 1:] = y[:, :-1]`): torch runs the elements in its own order
        (vectorized or not, by size and strides), so whether the operand
        reads the element before or after its write is torch's order's,
        and torch refuses some such writes itself."""
        meta = fn.meta.get(READS) if fn.op == "call_function" and fn.target is assigned else None
        if meta is not None:
            at, operands = meta
            target = q.reshape(-1)[at]
        elif fn.op == "call_function" and fn.target is assigned:
            return
        else:
            target = q
            operands = [a for a in list(fn.args) + [v for key, v in fn.kwargs.items() if key != "out"]
                        if isinstance(a, torch.fx.Node) and a is not t]
        written = torch.zeros(int(target.max()) + 1 if target.numel() else 1, dtype=torch.bool)
        written[target.reshape(-1)] = True
        for o in operands:
            m = self.memory.get(o)
            if not hasattr(m, "key") or m.key != k or (form[1] in _READ_ONCE and m.shape == ()):
                continue
            p = self._positions(o, k)
            try:
                p = torch.broadcast_to(p, target.shape) if p is not None else None
            except RuntimeError:
                p = None
            if p is None:
                continue
            inside = p < written.numel()
            hit = torch.zeros_like(inside)
            hit[inside] = written[p[inside]]
            if bool((hit & (p != target)).any()):
                raise UnsupportedOperator(
                    f"operator not supported: {self.name(fn)}: writes in place into {self.name(t)} while reading "
                    f"{self.name(o)}, which shares elements the write writes at other positions: torch runs the "
                    "elements in its own order (which element reads another's write depends on it, and torch "
                    "refuses some such writes: \"unsupported operation: some elements of the input tensor and the "
                    "written-to tensor refer to a single memory location\"), which ptec does not follow: read a "
                    "copy (.clone()) or write the out-of-place op")

    def _overlapping_write(self, fn, t, k, q, spelled):
        """The root's value after fn (out of place on view t, whose
        positions q cover an element twice) is written: the op applied
        once to the elements covered at least once, again to those covered
        at least twice, ...; fn becomes t's new value read back."""
        if not _of_each_element(fn, self.mods):
            raise UnsupportedOperator(
                f"operator not supported: {spelled}: writes in place into {self.name(t)}, whose elements "
                f"cover an element of {self.name(self.root[k])} twice, an op that is not of each element alone "
                "with number operands (torch writes the copies in its own order), which ptec does not follow: "
                "write the out-of-place op")
        root = self.memory[self.root[k]]
        flat_q = q.reshape(-1)
        times = torch.bincount(flat_q)
        cur = self.cur[k]
        written = set()

        def where():
            return self.g.inserting_before(fn)
        for j in range(1, int(times.max()) + 1):
            p = torch.nonzero(times >= j).reshape(-1)
            values = self._gather(fn, k, cur, p)
            with where():
                done = self.g.node_copy(fn, lambda n: values if n is fn.args[0] else n)
            done.meta.pop(_MARK, None)      # `w += 1`: out of place here
            self.made.append(done)
            self._meta(done, torch.empty(p.numel(), dtype=root.dtype))
            flat = values.args[0]
            at = values.args[1]
            put = self._meta(self._add(where(), "call_method", "index_put", (flat, (at,), done)),
                             torch.empty(flat.meta["tensor_meta"].shape, dtype=root.dtype))
            new = self._meta(self._add(where(), "call_method", "reshape", (put, root.shape)),
                             torch.empty(root.shape, dtype=root.dtype))
            marker = self._meta(self._add(where(), "call_function", assigned, (cur, new)),
                                torch.empty(root.shape, dtype=root.dtype))
            written.update(p.tolist())
            marker.meta[_WRITTEN] = (tuple(root.shape), frozenset(written))
            cur = marker
        back = self._gather(fn, k, cur, q)       # the view as it reads after the write
        fn.op, fn.target, fn.args, fn.kwargs = back.op, back.target, back.args, {}
        fn.meta.pop(_MARK, None)
        back.replace_all_uses_with(fn)
        self.g.erase_node(back)
        self.made.remove(back)
        return cur
