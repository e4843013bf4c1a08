"""In-place writes through views (issue 15): `v = y[:, :2]; v.relu_();
return y`, `y[0].mul_(2)`, `y.view(2, 16).add_(1); return y`,
`y.transpose(1, 2)[0].clamp_(0, 1)`, `a = y[:, 1]; y.add_(1); return a`,
`F.relu(y[..., :4], inplace=True)`, `z = y[0]; z[1] = 0; return y`.

torch's in-place call writes the bytes of its operand, and every value
sharing them (the base, the views made before or after the write) reads
the written numbers afterwards. ptec's values share no bytes. Which values
share which bytes is torch's to say (reshape of a non-contiguous tensor
copies, contiguous() of a contiguous one is itself), so the graph is run
once in torch on copies of the example inputs, the writes done in place as
torch does them, and each value's memory read off its result: the storage
it lies in and the storage element of each of its elements. Shapes are
static, so the answer is the program's.

Then, in graph order, each storage has one value that holds all of it (its
first tensor, the root) and a current node for it:

- a write into t (a view of root y, or y): the call runs out of place
  (capture_in_place) and its result goes back into y at the elements t
  covers: y itself when t is all of y in order (view / reshape / flatten /
  squeeze), the inverse permute when t is a permute of y, else the
  flattened y's index_put at those constant positions with a marker of the
  written positions (capture_item_assignment's `assigned`, so a later slice
  that reads none of them reads y before the write);
- a later reader of a value made before the write reads it re-derived from
  the current y: its chain of views (slices / select / getitem, narrow,
  view / reshape / flatten / unflatten / squeeze / unsqueeze, transpose /
  permute / t / movedim / swapaxes, expand, split / chunk / unbind pieces,
  diagonal, unfold, contiguous / detach / to of the same dtype,
  nn.Identity, nn.Flatten, dropout in eval) done again on the current y,
  and the written value itself is t's current value;
- x.t_(), x.unsqueeze_(0), ...: the same elements in a new shape, so the
  tensor (and the nodes that are the same tensor object) is that view for
  its later readers and writers.

Every other value sharing the memory (a piece of broadcast_tensors read
after a write), and every as_strided (its arguments count in storage
elements), is read as a constant gather from its root's current value,
and a write into a view covering an element twice applies an op of each
element once per covering (capture_strided).

Refused in one line naming the write and the value: a view as another
dtype read after a write, a tuple sharing several tensors' memory read
whole after one (only one whose value the tracer does not know: it gives
the others as their pieces, each read at its positions); a write into a view as another dtype, outside its root's
memory, resized by torch, or covering an element twice with an op that is
not of each element alone, or reading through a tensor operand an element
it writes at another position; a write into a constant made in forward (a
parameter, buffer or tensor attribute is a state kept across executes:
capture_buffer_state). When torch's run fails at a write that
torch refuses (an element-wise op into an expanded view), its reason is
quoted; otherwise capture_in_place's own analysis decides."""
from __future__ import annotations

import contextlib
import io
import itertools
import operator
from typing import Optional

import torch
import torch.fx
from torch.fx.passes.shape_prop import _extract_tensor_metadata

from .capture_in_place import (_MARK, _AUGMENTED, _call_name, _is_tensor, _kept_why, _namer, _write,
                               as_out_of_place, in_place_writes)
from .capture_item_assignment import _WRITTEN, assigned
from .capture_strided import Gathers, is_as_strided, torch_refusal
from .ir import UnsupportedOperator

# calls whose value, when torch's run shows it shares its first operand's
# storage, is that operand's elements rearranged: done again on a new value
_VIEWS = {"view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "swapaxes", "swapdims",
          "moveaxis", "movedim", "squeeze", "unsqueeze", "flatten", "unflatten", "ravel", "narrow", "select",
          "expand", "expand_as", "broadcast_to", "split", "split_with_sizes", "chunk", "unbind", "tensor_split",
          "hsplit", "vsplit", "dsplit", "contiguous", "detach", "to", "type", "type_as", "float", "double",
          "half", "int", "long", "short", "bool", "char", "byte", "cpu", "getitem", "__getitem__", "T", "mT",
          "data", "positive", "alias", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
          "feature_alpha_dropout", "atleast_1d", "atleast_2d", "atleast_3d", "requires_grad_", "detach_",
          "diagonal", "unfold"}
_VIEW_MODULES = (torch.nn.Identity, torch.nn.Flatten, torch.nn.Unflatten, torch.nn.Dropout, torch.nn.Dropout2d,
                 torch.nn.Dropout3d, torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout)
# in-place calls that change the tensor's shape and strides, not its elements (x.t_())
_SHAPE_ONLY = {"t", "transpose", "squeeze", "unsqueeze", "swapdims", "swapaxes"}
# the in-place op torch runs for the tracer's `y += z` (recorded as y + z)
_IN_PLACE_OF = {op: getattr(operator, k[2:-2]) for k, op in _AUGMENTED.items() if hasattr(operator, k[2:-2])}


class _Memory:
    """Where a tensor lies: its storage (key), element size, offset, shape
    and strides as torch's run left them."""

    def __init__(self, t: torch.Tensor, node: torch.fx.Node):
        size = t.element_size()
        self.key = (t.data_ptr() - t.storage_offset() * size) if t.numel() and t.data_ptr() else ("empty", node)
        self.size, self.offset, self.shape, self.stride = size, t.storage_offset(), tuple(t.shape), tuple(t.stride())
        self.dtype = t.dtype

    def elements(self) -> torch.Tensor:
        """The storage element of each element (a tensor of the shape)."""
        span = self.offset + sum((s - 1) * d for s, d in zip(self.shape, self.stride) if s) + 1
        if 0 in self.shape:
            return torch.zeros(self.shape, dtype=torch.long)
        return torch.arange(span).as_strided(self.shape, self.stride, self.offset)


def _memory_of(value, node):
    """A tensor's _Memory; a tuple of them for the tensors in a tuple, list
    or dict (nested too: a value holding a view is read with it); None."""
    if isinstance(value, torch.Tensor):
        return _Memory(value, node) if value.layout == torch.strided and not value.is_quantized else None
    found = []

    def walk(v):
        if isinstance(v, torch.Tensor):
            found.append(_Memory(v, node) if v.layout == torch.strided and not v.is_quantized else None)
        elif isinstance(v, (tuple, list)):
            for e in v:
                walk(e)
        elif isinstance(v, dict):
            for e in v.values():
                walk(e)
    walk(value)
    if any(f is None for f in found):
        return None
    return tuple(found) if found else None


class _Run(torch.fx.Interpreter):
    """torch's run of the graph, the writes in place as torch does them
    (the tracer's `y += z` and `assigned(y, new)` record out-of-place
    values), keeping every result alive so no storage is reused."""

    def __init__(self, gm):
        super().__init__(gm)
        self.kept, self.memory, self.same, self.objects, self.unseen = [], {}, {}, {}, set()
        self.failed = None      # (the node torch's run failed at, its exception)

    def run_node(self, n):
        try:
            return self._run_node(n)
        except Exception as e:      # noqa: BLE001 - reported by the caller
            self.failed = self.failed or (n, e)
            raise

    def _run_node(self, n):
        if n.meta.get(_MARK) and n.op == "call_function" and n.target is assigned:
            y, new = self.fetch_args_kwargs_from_env(n)[0]
            y.copy_(new)
            result = y
        elif n.meta.get(_MARK) and n.op == "call_function" and n.target in _IN_PLACE_OF:
            args = self.fetch_args_kwargs_from_env(n)[0]
            result = _IN_PLACE_OF[n.target](*args)
        else:
            result = super().run_node(n)
        self.kept.append(result)
        if isinstance(result, torch.Tensor):        # the same tensor object (nn.Identity, dropout in eval, x.t_())
            self.same[n] = self.objects.setdefault(id(result), n)
        found = _memory_of(result, n)
        if found is not None:
            self.memory[n] = found
        elif isinstance(result, torch.Tensor):
            self.unseen.add(n)
        return result


def _memory(gm: torch.fx.GraphModule, example_inputs):
    """(each node's _Memory (a tuple of them for a tuple of tensors), the
    same objects, the tensors without one) from torch's run on copies of
    the inputs, and None; or None and (the node the run failed at, torch's
    exception) when it fails. The model's buffers and torch's random state
    are left as they were."""
    inputs = [x.detach().clone(memory_format=torch.contiguous_format) if isinstance(x, torch.Tensor) else x
              for x in example_inputs]
    buffers = {k: v.detach().clone() for k, v in gm.named_buffers()}
    rng = torch.random.get_rng_state()
    run = _Run(gm)
    try:
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            run.run(*inputs)
    except Exception:                   # noqa: BLE001 - the model's own failure: capture reports it elsewhere
        return None, run.failed
    finally:
        torch.random.set_rng_state(rng)
        with torch.no_grad():
            for k, v in gm.named_buffers():
                if k in buffers and not torch.equal(v, buffers[k]):
                    v.copy_(buffers[k])
    return (run.memory, run.same, run.unseen), None


def writes_through_views(gm: torch.fx.GraphModule, example_inputs) -> None:
    """Each in-place write as its out-of-place op written back into the
    value holding its memory, and the later readers of every value sharing
    that memory reading it re-derived (see the module's docstring)."""
    mods = dict(gm.named_modules())
    in_place_writes(gm, rewrite=False)      # several out= tensors, a parameter's write: refused as there
    if not any(_write(fn, mods) or is_as_strided(fn) for fn in gm.graph.nodes):
        return
    memory, failed = _memory(gm, example_inputs)
    if memory is None:
        w = _write(failed[0], mods) if failed is not None else None
        why = torch_refusal(failed[1]) if w is not None else None
        if why:                         # torch's own refusal (a write into an expanded view), quoted
            name = _namer(gm)
            raise UnsupportedOperator(f"operator not supported: {name(failed[0])}: writes in place into "
                                      f"{name(w[1])}, which torch itself refuses: {why}")
        if any(_write(fn, mods) for fn in gm.graph.nodes):
            in_place_writes(gm)         # capture_in_place's own analysis: refuses what it cannot follow
        return
    _Rewrite(gm, *memory, mods).run()
    gm.recompile()


class _Rewrite(Gathers):
    def __init__(self, gm, memory, same, unseen, mods):
        self.gm, self.g, self.memory, self.mods, self.name = gm, gm.graph, memory, mods, _namer(gm)
        self.unseen = unseen    # tensors without a _Memory
        self.same = same        # node -> the first node whose value is the same tensor object
        self.rebound = {}       # node -> the node its tensor is after x.t_(), x.unsqueeze_(0), ...
        self.keys = {}          # node -> the storages its value lies in
        self.born = {}          # node -> {storage: its version when the node's value was made}
        self.root, self.version, self.cur, self.lookup = {}, {}, {}, {}
        self.cache = {}         # (node, storage, version) -> the node holding its value then
        self.written = {}       # write node -> the node it writes
        self.log = {}           # storage -> [(the write's name, written node)], version k made by log[k - 1]
        self.made = []          # nodes this rewrite added
        self.parent = {}        # node -> its first operand in the model's graph

    def run(self):
        self.order = {fn: i for i, fn in enumerate(self.g.nodes)}
        for fn in list(self.g.nodes):
            w = _write(fn, self.mods)
            if w is not None and not _is_tensor(w[1]):
                w = None
            while w is not None and w[1] in self.rebound:      # x.t_(); x.relu_(): a write into the view
                w = (w[0], self.rebound[w[1]])
            if fn.args and isinstance(fn.args[0], torch.fx.Node):
                self.parent[fn] = fn.args[0]        # before a read re-derived replaces it
            piece = None        # fn: a piece of a tuple made before a write (broadcast_tensors), read after it
            for a in list(fn.all_input_nodes):
                if a in self.rebound:
                    b = a
                    while b in self.rebound:
                        b = self.rebound[b]
                    fn.replace_input_with(a, b)
                    a = b
                stale = [k for k in self.keys.get(a, ()) if self.born[a][k] != self.version[k]]
                if not stale:
                    continue
                try:
                    fn.replace_input_with(a, self._derive(a, stale, fn))
                except UnsupportedOperator:
                    if not (isinstance(self.memory.get(a), tuple) and isinstance(self.memory.get(fn), _Memory)
                            and fn.op == "call_function" and fn.target is operator.getitem and fn.args[0] is a):
                        raise
                    piece = a           # no chain re-derives the tuple: fn is read at its positions
            self._place(fn)
            if is_as_strided(fn):           # storage offsets and strides: read at its positions in its root
                self._as_gather(fn, "its storage offset and strides reach")
                continue
            if piece is not None:
                self._as_gather(fn, f"a piece of {self.name(piece)} read after a write, it reads")
                continue
            if w is not None and w[0][0] == "call_method" and w[0][1] in _SHAPE_ONLY:
                as_out_of_place(fn, w[0])       # a new shape, the same elements: the tensor is the view from here
                group = self.same.get(w[1], w[1])
                for a, b in self.same.items():
                    if b is group and self.order[a] < self.order[fn]:
                        self.rebound[a] = fn
            elif w is not None and w[1] in self.keys:
                self._write(fn, w[0], w[1])
            elif w is not None and w[1] in self.unseen:
                raise UnsupportedOperator(f"operator not supported: {self.name(fn)}: writes in place into "
                                          f"{self.name(w[1])}, a tensor whose memory ptec does not read "
                                          "(not strided, or quantized)")
        for fn in reversed(self.made):
            if not fn.users:
                self.g.erase_node(fn)
        for fn in reversed(list(self.g.nodes)):     # the views whose readers read them re-derived or gathered
            name = _call_name(fn) if fn.op in ("call_function", "call_method") else None
            if not fn.users and (name in _VIEWS or is_as_strided(fn) or name == "broadcast_tensors") \
                    and not name.startswith(("dropout", "alpha", "feature")) and _write(fn, self.mods) is None:
                self.g.erase_node(fn)

    def _place(self, fn):
        found = self.memory.get(fn)
        if found is None:
            return
        keys = [m.key for m in found] if isinstance(found, tuple) else [found.key]
        for k in keys:
            if k not in self.version:
                self.version[k], self.log[k] = 0, []
            if k not in self.root and not isinstance(found, tuple):
                self.root[k], self.cur[k] = fn, fn
        self.keys[fn] = set(keys)
        self.born[fn] = {k: self.version[k] for k in keys}

    def _positions(self, fn, k) -> Optional[torch.Tensor]:
        """The root's flat index of each element of fn (storage k), or None
        when an element lies outside the root or the root holds an element
        twice."""
        root, m = self.root.get(k), self.memory.get(fn)
        if root is None or not isinstance(m, _Memory) or m.size != self.memory[root].size:
            return None
        if k not in self.lookup:
            at = self.memory[root].elements().reshape(-1)
            table = torch.full((int(at.max()) + 1 if at.numel() else 1,), -1, dtype=torch.long)
            table[at] = torch.arange(at.numel())
            self.lookup[k] = table if int((table >= 0).sum()) == at.numel() else None
        table = self.lookup[k]
        at = m.elements()
        if table is None or (at.numel() and int(at.max()) >= table.numel()):
            return None
        q = table[at]
        return None if bool((q < 0).any()) else q

    def _add(self, where, op, target, args, like=None):
        with where:
            n = self.g.create_node(op, target, args, {})
        if like is not None:
            n.meta.update({k: v for k, v in like.meta.items() if k in ("type", "tensor_meta")})
        self.made.append(n)
        return n

    def _derive(self, a, stale, reader):
        """The node holding a's value now (a re-derived from its root's
        current value); UnsupportedOperator when a is no chain of views."""
        if len(self.keys[a]) != 1:
            return self._refuse(a, stale[0], reader, "it lies in several tensors' memory")
        k = stale[0]
        v = self.version[k]
        got = self.cache.get((a, k, v))
        if got is not None:
            return got
        m = self.memory[a]
        root_dtype = self.memory[self.root[k]].dtype
        if a is self.root.get(k):
            got = self.cur[k]
        elif a in self.written:
            got = self._derive(self.written[a], stale, reader)
        elif self._whole(a, k):
            cur = self.cur[k]
            got = cur if m.shape == self.memory[self.root[k]].shape else \
                self._add(self.g.inserting_before(reader), "call_method", "reshape", (cur, m.shape), a)
        else:
            try:
                got = self._chain(a, k, m, root_dtype, reader)
            except UnsupportedOperator:
                q = self._positions(a, k) if getattr(m, "dtype", None) == root_dtype else None
                if q is None:
                    raise
                got = self._gather(reader, k, self.cur[k], q)   # capture_strided
        self.cache[(a, k, v)] = got
        return got

    def _chain(self, a, k, m, root_dtype, reader):
        """a's chain of views done again on its parent re-derived."""
        name = _call_name(a) if a.op != "call_module" else None
        module = self.mods.get(a.target) if a.op == "call_module" else None
        parent = self.parent.get(a)
        if (name not in _VIEWS and not isinstance(module, _VIEW_MODULES)) or parent is None \
                or self.keys.get(parent) != {k} or getattr(m, "dtype", None) not in (None, root_dtype):
            return self._refuse(a, k, reader, f"{a.name} is not a view ptec re-derives (slices, select, "
                                "narrow, view / reshape, squeeze / unsqueeze, transpose / permute, expand, "
                                "split pieces, diagonal, unfold, as_strided, of the same dtype)")
        new_parent, now = self._derive(parent, [k], reader), a.args[0]
        with self.g.inserting_before(reader):
            got = self.g.node_copy(a, lambda n: new_parent if n is now else n)
        got.meta.pop(_MARK, None)
        self.made.append(got)
        return got

    def _whole(self, a, k) -> bool:
        """a holds all of its root's elements in the root's order."""
        if not isinstance(self.memory.get(a), _Memory):
            return False
        q = self._positions(a, k)
        n = self.memory[self.root[k]]
        count = 1
        for s in n.shape:
            count *= s
        return q is not None and q.numel() == count and self.memory[a].dtype == n.dtype \
            and torch.equal(q.reshape(-1), torch.arange(count))

    def _refuse(self, a, k, reader, why):
        w, t = self.log[k][self.born[a][k]]
        raise UnsupportedOperator(
            f"operator not supported: {w}: writes in place into {self.name(t)}, whose memory "
            f"{self.name(a)} shares, and {self.name(reader)} reads {a.name} after the write (torch's reader "
            f"sees the write); {why}: write the out-of-place op")

    def _write(self, fn, form, t):
        if len(self.keys[t]) != 1 or not isinstance(self.memory.get(t), _Memory):
            raise UnsupportedOperator(f"operator not supported: {self.name(fn)}: writes in place into "
                                      f"{self.name(t)}, which lies in several tensors' memory")
        k = next(iter(self.keys[t]))
        root = self.root[k]
        why = _kept_why([root]) if root.op == "get_attr" else None
        if why:
            raise UnsupportedOperator(f"operator not supported: {self.name(fn)}: {why}")
        done = self.memory.get(fn)
        if isinstance(done, _Memory) and (done.key, done.shape) != (k, self.memory[t].shape):
            raise UnsupportedOperator(
                f"operator not supported: {self.name(fn)}: writes in place into {self.name(t)} a value of "
                "another shape (torch resizes it), which ptec does not follow: write the out-of-place op")
        if self.memory[t].dtype != self.memory[root].dtype:
            raise UnsupportedOperator(
                f"operator not supported: {self.name(fn)}: writes in place into {self.name(t)}, a view of "
                f"{self.name(root)} as another dtype, which ptec does not follow: write the out-of-place op")
        q = self._positions(t, k)
        if q is None:
            raise UnsupportedOperator(
                f"operator not supported: {self.name(fn)}: writes in place into {self.name(t)}, whose elements "
                f"are not all elements of {self.name(root)} (torch's memory of the two overlaps otherwise), "
                "which ptec does not follow: write the out-of-place op")
        self._reads_what_it_writes(fn, form, t, k, q)      # capture_strided: torch's order would decide
        twice = q.reshape(-1).unique().numel() != q.numel()
        if twice and not (fn.args and fn.args[0] is t):
            raise UnsupportedOperator(
                f"operator not supported: {self.name(fn)}: writes into {self.name(t)}, whose elements cover an "
                f"element of {self.name(root)} twice, a value not computed from it (out=), which ptec does not "
                "follow: write the out-of-place op")
        self.log[k].append((self.name(fn), t))       # named as the model spells it
        as_out_of_place(fn, form)
        back = self._overlapping_write(fn, t, k, q, self.log[k][-1][0]) if twice else self._back(fn, t, k, q)
        self.version[k] += 1
        v = self.version[k]
        self.cur[k] = back
        self.written[fn] = t
        self.keys[fn], self.born[fn] = {k}, {k: v}
        self.cache[(root, k, v)] = back
        self.cache[(t, k, v)] = fn
        self.cache[(fn, k, v)] = fn

    def _back(self, fn, t, k, q):
        """The node holding the root's value after fn's value (t's new
        value) is written at t's elements q."""
        root, cur = self.root[k], self.cur[k]
        shape = self.memory[root].shape
        count = 1
        for s in shape:
            count *= s
        last = [fn]

        def after():
            return self.g.inserting_after(last[0])

        def add(op, target, args, like=None):
            last[0] = self._add(after(), op, target, args, None)
            like = torch.empty(like or shape, dtype=self.memory[root].dtype) if not isinstance(like, torch.Tensor) \
                else like
            last[0].meta.update(type=torch.Tensor, tensor_meta=_extract_tensor_metadata(like))
            return last[0]
        if q.numel() == count:
            whole = torch.arange(count).view(shape)
            if torch.equal(q.reshape(-1), whole.reshape(-1)):
                return fn if tuple(q.shape) == shape else add("call_method", "reshape", (fn, shape))
            for p in itertools.permutations(range(len(shape))) if len(shape) <= 6 else ():
                if tuple(q.shape) == tuple(shape[i] for i in p) and torch.equal(q, whole.permute(p)):
                    inverse = tuple(sorted(range(len(p)), key=lambda i: p[i]))
                    return add("call_method", "permute", (fn, inverse))
        n = 0
        while hasattr(self.gm, f"_ptec_view_write{n}"):
            n += 1
        setattr(self.gm, f"_ptec_view_write{n}", q.reshape(-1).clone())
        flat = add("call_method", "reshape", (cur, (-1,)), (count,))
        at = add("get_attr", f"_ptec_view_write{n}", (), getattr(self.gm, f"_ptec_view_write{n}"))
        values = add("call_method", "reshape", (fn, (-1,)), (q.numel(),))
        put = add("call_method", "index_put", (flat, (at,), values), (count,))
        new = add("call_method", "reshape", (put, shape))
        marker = add("call_function", assigned, (cur, new))
        marker.meta[_WRITTEN] = (tuple(shape), frozenset(q.reshape(-1).tolist()))
        return marker
