"""Tracing with the example's values known (issue 15, the front end).

torch.fx traces a forward with proxies, which know no values: Python
control that needs one (iterating over `x.unbind(1)`, `len(x.chunk(3))`,
`torch.zeros(x.shape)`, `if x.shape[-1] > 4`, `range(x.size(1))`,
`int(x.shape[1] / 2)`) fails with fx's own error. capture knows the
example inputs, and a ptec program has static shapes, so this tracer
runs every traced op once more on the example values as it records it
(a shadow value per fx node: the inputs and attributes cloned, so the
model and the caller's tensors are never written). With them:

* a shape query (`x.shape`, `x.size()`, `x.size(d)`, `x.dim()`, `x.ndim`,
  `x.numel()`, `len(x)`) is the traced Python int or torch.Size itself, not
  a node: any Python on it works, and a constructor given it (`torch.zeros(
  x.shape)`, `torch.arange(x.shape[-1])`) makes a constant the graph holds;
* the pieces of chunk / split / unbind / tensor_split (and their torch.,
  hsplit, vsplit, dsplit spellings) are a Python tuple of getitem proxies,
  one per piece, so iteration, zip, enumerate, reversed, slicing the tuple,
  `*pieces` and passing it to torch.cat all work; a piece no one reads is
  dropped after tracing (drop_traced_leftovers);
* so is any other call's tuple (or list) of tensors of a fixed length:
  torch.broadcast_tensors / meshgrid, the named tuples of topk / sort / max
  / aminmax / ... (their type kept: .values, .indices), a submodule's or a
  function's tuple, nn.LSTM's (out, (h, c)) nested: passed whole to
  torch.cat / stack, `*t`, sum(t), t[::-1] all trace, and returned whole
  it is the program's outputs. One whose length or pieces' sizes follow the
  data (x[mask].split(2)) stays a node; passed whole where torch takes
  tensors it is refused in one line (sequence_refusal);
* iterating over, len() of, or a slice of any other proxy whose value is a
  tuple gives its elements; of a tensor, its rows;
* bool() of a proxy whose value does not depend on the input's data
  (`x.dtype == torch.float32`) is that value.

What stays unknown while tracing: a value computed from the input's data
(`if x.sum() > 0`, `int(x.max())`) and the shape of a selection `x[mask]`
(which changes from run to run). Python control on those is refused in
one line naming the module path, the source line and the fix (torch.where
for a choice per element). A node whose shadow value fails to compute
(an op torch cannot run on the example) leaves its readers unknown: they
trace as before (proxies), so nothing is worse than plain fx.

trace_refusal turns any other error raised while tracing into one line
naming the module it was raised in (and, when the model fails in eager
torch too, says so: torch 1.13 and 2.x refuse `torch.clamp(x, min=tensor,
max=1.0)` themselves, the mixed Tensor / number bounds having no overload).
"""
from __future__ import annotations

import builtins
import dataclasses
import inspect
import linecache
import operator
import os
import warnings
from typing import Any, Dict, Optional, Set

import torch
import torch.fx
from torch.fx.node import map_arg

from .capture_nms import kept_count_why, nms_call
from .model_copy import model_copy

_PTEC_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
# ptec's own models and layers are a model's code; the rest of ptec is the tracing
_PTEC_MODELS = tuple(_PTEC_DIR + d + os.sep for d in ("models", "nn"))

# shape queries answered with the traced Python value (no node)
_SHAPE_METHODS = {"size", "numel", "nelement", "dim", "ndimension"}
_SHAPE_ATTRIBUTES = {"shape", "ndim"}
# metadata answered with the traced value (no node): a constructor's device= / dtype= from the input
_CONSTANT_ATTRIBUTES = {"device", "dtype", "is_cuda", "is_nested"}
# metadata whose value never depends on the data (a node still, read by capture_plumbing)
_METADATA = {"dtype", "device", "is_cuda", "is_floating_point", "is_complex", "requires_grad", "layout",
             "is_contiguous", "element_size", "is_quantized", "is_sparse", "is_nested", "is_leaf",
             torch.is_floating_point, torch.is_complex}
# calls whose result is a tuple of pieces of their first argument
_PIECES = {"chunk", "split", "split_with_sizes", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit",
           torch.chunk, torch.split, torch.unbind, torch.tensor_split, torch.hsplit, torch.vsplit, torch.dsplit}
# calls whose result's shape follows the data of their input
_DATA_SHAPED = {"masked_select", "nonzero", "argwhere", "unique", "unique_consecutive", "bincount",
                "repeat_interleave", torch.masked_select, torch.nonzero, torch.argwhere, torch.unique,
                torch.unique_consecutive, torch.bincount, torch.repeat_interleave}

# the fix a refusal names: for Python control, and for int() / float() of a value
CONTROL_FIX = ("the program runs one fixed path for every input: compute both results and pick per element "
               "with torch.where(cond, a, b)")
NUMBER_FIX = ("keep it a tensor (a program's shapes cannot follow the values; "
              "for a choice per element use torch.where(cond, a, b))")
# float(t): Python's float() must give a real number, fixed when tracing, so it cannot stand for a
# per-input value as t.item() does (capture_item: a 0-d tensor read per input, probe 8)
FLOAT_FIX = ("a Python float would be one number fixed at compile time: write t.item() or use t itself, "
             "which ptec reads per input as a 0-d tensor")


class TracedControlError(ValueError):
    """Python control on a value only known when the program runs; one line."""


def _target_in(target, table) -> bool:
    try:
        return target in table
    except TypeError:                       # an unhashable target is in no table
        return False


def _user_site(tb=None) -> str:
    """` at file:line (`code`)` of the innermost frame of the model's own
    code (not torch's, not ptec's), from a traceback or from the current
    stack; "" when there is none."""
    frames = []
    if tb is not None:
        while tb is not None:
            frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
            tb = tb.tb_next
        frames.reverse()
    else:
        f = inspect.currentframe()
        while f is not None:
            frames.append((f.f_code.co_filename, f.f_lineno))
            f = f.f_back
    for filename, line in frames:
        path = os.path.abspath(filename)
        tracing = path.startswith((_PTEC_DIR, _TORCH_DIR)) and not path.startswith(_PTEC_MODELS)
        if not tracing and not filename.startswith("<"):
            code = linecache.getline(filename, line).strip()
            code = code if len(code) <= 70 else code[:67] + "..."
            return f" at {os.path.basename(filename)}:{line}" + (f" (`{code}`)" if code else "")
    return ""


class KnownValuesTracer(torch.fx.Tracer):
    """torch.fx.Tracer whose nodes carry the example's values (module doc).
    Give it the example inputs with start(); without them it is plain fx."""

    def start(self, example_inputs) -> None:
        self._examples = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in example_inputs or ()]
        self._placeholders = 0
        self._values: Dict[torch.fx.Node, Any] = {}
        self._data: Set[torch.fx.Node] = set()          # the value depends on the input's data
        self._varying: Set[torch.fx.Node] = set()       # the shape depends on the input's data
        self._evaluating = False
        self._modules = []                              # (path, class name) of the calls being traced
        self._varying_tuples = []                       # tuple values of data-dependent sizes, as traced

    # -- where we are ---------------------------------------------------------

    def where(self) -> str:
        """The module being traced, as the user's model names it."""
        modules = getattr(self, "_modules", None)
        if modules:
            path, cls = modules[-1]
            return f"module {path} ({cls})"
        root = getattr(self, "root", None)
        return f"the model's forward ({type(root).__name__})" if root is not None else "the model's forward"

    def create_arg(self, a):
        # a dataclass instance (a model's output record): a call of its class with
        # its fields by keyword, as fx records a namedtuple (capture_outputs flattens it)
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            return self.create_node("call_function", type(a), (), {
                f.name: self.create_arg(getattr(a, f.name)) for f in dataclasses.fields(a)})
        # a range in an index or an argument (x[range(3), [0, 1, 2]]): the
        # list of its ints, which torch reads the same (an index tensor there)
        if isinstance(a, range):
            return super().create_arg(list(a))
        return super().create_arg(a)

    def call_module(self, m, forward, args, kwargs):
        if getattr(self, "_evaluating", False):       # a shadow value: the real call
            return forward(*args, **kwargs)
        from .capture_torchvision import multiscale_forward
        made = multiscale_forward(m, args, kwargs)      # torchvision's MultiScaleRoIAlign as torch ops
        if made is not None:
            return made
        try:
            path = self.path_of_module(m)
        except NameError:                             # a module made in forward
            from .capture_module_aliases import module_at_same_path
            same = module_at_same_path(self.root, m)  # or the model's, reached through a lambda of __init__
            if same is not None:
                return same(*args, **kwargs)
            from .capture_module_forms import installed_made, traced_through
            if traced_through(m):                     # no parameters or buffers: its forward's ops
                return forward(*args, **kwargs)
            # a submodule of the model while capture runs, its tensors as made in the traced call
            # (capture_module_forms judges, once traced, whether torch's output is the same on every call)
            path = installed_made(self, m, f"{self.where()}{_user_site()}", TracedControlError)
        modules = getattr(self, "_modules", None)
        if modules is None:
            return super().call_module(m, forward, args, kwargs)
        modules.append((path, type(m).__name__))
        try:
            return super().call_module(m, forward, args, kwargs)
        except Exception as e:
            if not hasattr(e, "ptec_where"):          # the innermost module names it
                e.ptec_where = self.where()
            raise
        finally:
            modules.pop()

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if getattr(self, "_evaluating", False):       # a shadow value reads the real parameter
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    # -- shadow values ----------------------------------------------------------

    def known(self, node: torch.fx.Node) -> bool:
        values = getattr(self, "_values", None)
        if values is None:
            return False
        if node not in values and node.op == "get_attr":
            self._record_attribute(node)
        return node in values

    def value(self, node: torch.fx.Node):
        return self._values[node]

    def fixed(self, node: torch.fx.Node) -> bool:
        """node's value is known and does not depend on the input's data."""
        return self.known(node) and node not in self._data

    def fixed_shape(self, node: torch.fx.Node) -> bool:
        return self.known(node) and node not in self._varying

    def _record_attribute(self, node: torch.fx.Node) -> None:
        # the module's own dicts: fx patches nn.Module.__getattr__ while tracing
        val = self.root
        for part in node.target.split("."):
            found = [d[part] for d in (val._parameters, val._buffers, val._modules, vars(val))
                     if isinstance(d, dict) and part in d] if isinstance(val, torch.nn.Module) else []
            if not found:
                if isinstance(val, torch.nn.Module) or not hasattr(val, part):
                    return
                found = [getattr(val, part)]
            val = found[0]
        self._values[node] = val.detach().clone() if isinstance(val, torch.Tensor) else val

    def _record(self, node: torch.fx.Node) -> None:
        """node's shadow value, from its inputs' (nothing if one is unknown)."""
        if node.op == "placeholder":
            index, self._placeholders = self._placeholders, self._placeholders + 1
            if str(node.target).startswith("*"):      # forward(*xs) / (**kw): left unknown (plain fx)
                return
            if index < len(self._examples):
                self._values[node] = self._examples[index]
                self._data.add(node)
            elif node.args:                           # a default argument
                self._values[node] = node.args[0]
            return
        if node.op == "get_attr":
            self._record_attribute(node)
            return
        if node.op not in ("call_function", "call_method", "call_module"):
            return
        inputs = node.all_input_nodes
        if not all(self.known(a) for a in inputs):
            return
        args, kwargs = map_arg((node.args, node.kwargs), lambda a: self._values[a])
        self._evaluating = True
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")     # the model's own warnings: once, from shape propagation
                if node.op == "call_function":
                    result = node.target(*args, **kwargs)
                elif node.op == "call_method":
                    result = getattr(args[0], node.target)(*args[1:], **kwargs)
                else:
                    # a stateful layer writes its buffers: restored, so only the model's own writes remain
                    # for capture_in_place.refuse_written_tensors to see
                    module = self.root.get_submodule(node.target)
                    saved = snapshot_buffers(module)
                    try:
                        result = module(*args, **kwargs)
                    finally:
                        restore_buffers(module, saved)
        except Exception:                             # noqa: BLE001 - unknown: its readers trace as plain fx
            return
        finally:
            self._evaluating = False
        self._values[node] = result
        data = any(a in self._data for a in inputs)
        varying = any(a in self._varying for a in inputs)
        name = node.target if node.op in ("call_method", "call_function") else None
        if node.target is builtins.getattr and len(node.args) > 1:
            name = node.args[1]
        if _target_in(name, _METADATA):
            data = varying = False
        elif data and self._shapes_follow_data(node):
            varying = True
        if data:
            self._data.add(node)
        if varying:
            self._varying.add(node)

    def _shapes_follow_data(self, node: torch.fx.Node) -> bool:
        """A selection-like call of data: x[mask], nonzero, torch.where(c), ..."""
        if _target_in(node.target, _DATA_SHAPED):
            return True
        if node.op == "call_function" and nms_call(node.target):
            return True                             # how many boxes torchvision's nms keeps (capture_nms)
        if node.target in (torch.where, "where") and len(node.args) + len(node.kwargs) == 1:
            return True
        if node.target is operator.getitem and len(node.args) == 2:
            index = node.args[1] if isinstance(node.args[1], (tuple, list)) else (node.args[1],)
            return any(isinstance(i, torch.fx.Node) and isinstance(self._values.get(i), torch.Tensor)
                       and self._values[i].dtype in (torch.bool, torch.uint8) and i in self._data
                       for i in index)
        return False

    # -- Python on proxies ------------------------------------------------------

    def create_proxy(self, kind, target, args, kwargs, *rest, **kw):
        if getattr(self, "_values", None) is None:
            return super().create_proxy(kind, target, args, kwargs, *rest, **kw)
        from .capture_wrapped import wrapped_traced_through
        made = wrapped_traced_through(self, kind, target, args, kwargs)    # torch.fx.wrap's function: its body
        if made is not None:
            return made
        receiver = args[0].node if args and isinstance(args[0], torch.fx.Proxy) else None
        if kind == "call_method" and target in _SHAPE_METHODS and receiver is not None \
                and self.fixed_shape(receiver) and isinstance(self.value(receiver), torch.Tensor):
            shape_args = torch.fx.node.map_aggregate(args[1:], lambda a: self._plain(a))
            if all(a is not _UNKNOWN for a in shape_args) and all(not isinstance(a, torch.fx.Proxy)
                                                                 for a in shape_args):
                return getattr(self.value(receiver), target)(*shape_args, **kwargs)
        if kind == "call_function" and target is operator.getitem and receiver is not None \
                and isinstance(args[1], slice) and self._pieces(receiver) is not None:
            # a slice of a tuple value (torch.meshgrid's, a module's): the tuple of those elements
            return tuple(args[0][i] for i in range(len(self._pieces(receiver)))[args[1]])
        if kind == "call_function" and target is operator.getitem and len(args) == 2:
            self._refuse_data_slice(args[1])
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **kw)
        if isinstance(proxy, torch.fx.Proxy) and kind == "call_method" and target in _SHAPE_METHODS:
            # a size of a selection's result (k.numel()): its refusal names the user's line (capture_shape_numbers)
            proxy.node.meta["ptec_size_site"] = _user_site()
        if isinstance(proxy, torch.fx.Proxy) and kind == "call_function" \
                and getattr(target, "__module__", None) in ("_operator", "operator"):
            # x[i], a + b: fx names them getitem_1, add_2; refusals name the user's line instead (ir.written)
            proxy.node.meta["ptec_site"] = _user_site()
        if isinstance(proxy, torch.fx.Proxy):
            if target is operator.getitem and receiver is not None and receiver.meta.get("ptec_tuple"):
                proxy.node.meta["ptec_piece"] = True
            self._record(proxy.node)
            value = self._pieces(proxy.node)
            if value is None and self.known(proxy.node) and (type(self.value(proxy.node)) in (tuple, list)
                                                              or _named_tuple(self.value(proxy.node))):
                self._varying_tuples.append(proxy.node)   # its length or sizes follow the data: sequence_refusal
            if value is not None and kind in ("call_function", "call_method", "call_module") \
                    and (_target_in(target, _PIECES) or _all_tensors(value)):
                if _target_in(target, _PIECES):           # no piece read: the call goes too
                    proxy.node.meta["ptec_pieces"] = True
                proxy.node.meta["ptec_tuple"] = True      # its getitems below are pieces (drop_traced_leftovers)
                # a piece is a tuple itself when its value is one (LSTM's (out, (h, c)))
                pieces = [proxy[i] for i in range(len(value))]
                # a named tuple (torch.return_types.max: .values, .indices) keeps its type
                return tuple(pieces) if type(value) is tuple else (
                    list(pieces) if type(value) is list else type(value)(pieces))
        return proxy

    def _refuse_data_slice(self, index) -> None:
        """x[i, :lengths[i]]: a slice bound that is a traced value of the
        input's data makes the result's shape follow the values; refused in
        one line naming the bound's call and the user's line (fx would
        record it, and the graph fail on a slice of a tensor bound)."""
        for piece in index if isinstance(index, (tuple, list)) else (index,):
            if not isinstance(piece, slice):
                continue
            for bound in (piece.start, piece.stop, piece.step):
                if isinstance(bound, torch.fx.Proxy) and not self.fixed(bound.node) and self.known(bound.node) \
                        and isinstance(self.value(bound.node), torch.Tensor) \
                        and "ptec_item_read" not in bound.node.meta:    # .item()'s: capture_item's refusal
                    raise TracedControlError(
                        f"{self.where()}{_user_site()}: a slice bound from the result of {_callee(bound.node)} "
                        "cannot be traced: the slice's length, so the result's shape, depends on the input's "
                        "values, known only when the program runs: slice a fixed length and mask the rest "
                        "(torch.arange(T) < lengths[:, None] with torch.where, or a masked sum / count)")

    def _plain(self, a):
        if isinstance(a, torch.fx.Proxy):
            return self.value(a.node) if self.fixed(a.node) else _UNKNOWN
        return a

    def _pieces(self, node: torch.fx.Node):
        """node's value when it is a tuple (a named one: torch.return_types.*)
        or list whose length is fixed (not of a selection), else None."""
        if not self.fixed_shape(node):
            return None
        v = self.value(node)
        return v if type(v) in (tuple, list) or _named_tuple(v) else None

    def length(self, proxy) -> Optional[int]:
        """len() of the proxy's value when it is fixed, else None."""
        node = proxy.node
        if self._pieces(node) is not None:
            return len(self._pieces(node))
        if self.fixed_shape(node) and isinstance(self.value(node), torch.Tensor) and self.value(node).dim() > 0:
            return int(self.value(node).shape[0])
        return None

    def shape_attribute(self, proxy, name: str):
        """x.shape / x.ndim of a tensor whose shape is fixed, else None."""
        node = proxy.node
        if self.fixed_shape(node) and isinstance(self.value(node), torch.Tensor):
            return getattr(self.value(node), name)
        return None

    def constant_attribute(self, proxy, name: str):
        """x.device / x.dtype / x.is_cuda of a traced tensor: the value
        tracing saw (the CPU, the traced dtype), so a constructor given it
        (torch.zeros(n, device=x.device, dtype=x.dtype)) makes a constant."""
        node = proxy.node
        if self.known(node) and isinstance(self.value(node), torch.Tensor):
            return getattr(self.value(node), name)
        return None

    def iter(self, obj):
        n = self.length(obj) if getattr(self, "_values", None) is not None else None
        if n is not None:
            return iter([obj[i] for i in range(n)])
        varying = getattr(self, "_varying", None) and obj.node in self._varying
        kept = kept_count_why(_ancestors(obj.node)) if varying else None
        raise TracedControlError(
            f"{self.where()}{_user_site()}: iterating over the result of {_callee(obj.node)}"
            " cannot be traced: its length is not known while tracing"
            + (f": it is {kept}" if kept else
               " (a selection x[mask] changes length from run to run): take a fixed number of elements"
               if varying else ": index its elements (t[0], t[1], ...) or split it with x.unbind(dim)"))

    def to_bool(self, obj):
        if getattr(self, "_values", None) is not None and self.fixed(obj.node):
            obj.node.meta["ptec_decided"] = True        # Python took it: no node of the program
            return builtins.bool(self.value(obj.node))
        raise TracedControlError(self.control_refusal(obj, "Python control (if, while, assert, and/or, bool())"))

    def control_refusal(self, obj, what: str) -> str:
        site = _user_site()
        if getattr(self, "_values", None) is not None and self._reads_varying_size(obj.node):
            kept = kept_count_why(_ancestors(obj.node))
            why = "reads a size of " + (kept or "a selection x[mask], which changes from run to run "
                                        "(use the count mask.sum() as a tensor)")
        elif getattr(self, "_values", None) is not None and self.known(obj.node):
            why = "depends on the input's values, known only when the program runs: " + (
                CONTROL_FIX if what.startswith("Python control") else FLOAT_FIX if what == "float()"
                else NUMBER_FIX)
        else:
            why = ("is not known while tracing (an op before it did not run on the example inputs): "
                   "give it a fixed value")
        return (f"{self.where()}{site}: {what} on the result of {_callee(obj.node)} cannot be traced: "
                f"it {why}")

    def sequence_refusal(self, e: BaseException) -> Optional[str]:
        """One line for torch refusing a traced value where it takes a
        sequence of tensors (torch.cat(t, 1)) when t is the latest tuple
        whose length or pieces' sizes follow the input's data (x[mask].split(2),
        torch.nonzero(m, as_tuple=True)): it stays a node, not a Python tuple."""
        text = str(e)
        if "tuple of Tensors" not in text or "traced value" not in _one_line(e):
            return None
        unread = [n for n in getattr(self, "_varying_tuples", ()) if not n.users]
        if not unread:
            return None
        return (f"{getattr(e, 'ptec_where', None) or self.where()}{_user_site(e.__traceback__)}: the result of "
                f"{_callee(unread[-1])} passed whole as a sequence of tensors cannot be traced: how many tensors "
                "it holds, or their sizes, follow the input's values (a selection x[mask] changes length from "
                "run to run): take a fixed number of elements of fixed size")

    def _reads_varying_size(self, node: torch.fx.Node) -> bool:
        for a in _ancestors(node):
            size = (a.op == "call_method" and a.target in _SHAPE_METHODS) or (
                a.target is builtins.getattr and len(a.args) > 1 and a.args[1] in _SHAPE_ATTRIBUTES)
            if size and a.args and isinstance(a.args[0], torch.fx.Node) and a.args[0] in self._varying:
                return True
        return False


def _named_tuple(v) -> bool:
    """torch.return_types.max and the like (a structseq: a tuple subclass)."""
    return isinstance(v, tuple) and type(v).__module__ == "torch.return_types"


def _all_tensors(v) -> bool:
    """A tuple / list whose leaves are all tensors (nested: LSTM's (out, (h, c)))."""
    if isinstance(v, torch.Tensor):
        return True
    return isinstance(v, (tuple, list)) and len(v) > 0 and all(_all_tensors(e) for e in v)


class _Unknown:
    pass


_UNKNOWN = _Unknown()


def _ancestors(node: torch.fx.Node):
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(n.all_input_nodes)
    return seen


def _callee(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return str(node.target)
    module = getattr(node.target, "__module__", None) or ""
    name = getattr(node.target, "__name__", str(node.target))
    if node.op == "call_function" and nms_call(node.target):
        return nms_call(node.target)
    return f"operator.{name}" if module in ("_operator", "operator") else (
        f"torch.{name}" if module.startswith("torch") else name)


class KnownValuesProxy(torch.fx.Proxy):
    """A proxy whose Python conversions ask the tracer's shadow values."""

    @property
    def __class__(self):
        # object.__getattribute__(x, "__class__") from the model's code: refused (capture_type_checks)
        from .capture_type_checks import class_asked
        class_asked(self)
        return type(self)

    def __len__(self):
        tracer = self.tracer
        n = tracer.length(self) if isinstance(tracer, KnownValuesTracer) else None
        if n is None and getattr(tracer, "_varying", None) and self.node in tracer._varying:
            kept = kept_count_why(_ancestors(self.node))
            raise TracedControlError(
                f"{tracer.where()}{_user_site()}: len() of the result of {_callee(self.node)} cannot be traced: "
                + (f"it is {kept}" if kept else
                   "a selection x[mask] changes length from run to run (use the count mask.sum() as a tensor)"))
        if n is None:
            from .capture_plumbing import TRACED_LEN
            raise RuntimeError(TRACED_LEN)
        return n

    def __getattr__(self, k):
        tracer = self.__dict__.get("tracer")
        if k.startswith("__") or not isinstance(tracer, KnownValuesTracer):
            return super().__getattr__(k)
        if k in _SHAPE_ATTRIBUTES and getattr(tracer, "_values", None) is not None:
            found = tracer.shape_attribute(self, k)
            if found is not None:
                return found
        if k in _CONSTANT_ATTRIBUTES and getattr(tracer, "_values", None) is not None:
            found = tracer.constant_attribute(self, k)
            if found is not None:
                return found
        return KnownValuesAttribute(self, k)       # x.T.shape: the attribute's shape is known too

    def __int__(self):
        return self._number(int, "int()")

    def __float__(self):
        return self._number(float, "float()")

    def _number(self, kind, what):
        tracer = self.tracer
        if isinstance(tracer, KnownValuesTracer) and getattr(tracer, "_values", None) is not None:
            if tracer.fixed(self.node):
                self.node.meta["ptec_decided"] = True
                return kind(tracer.value(self.node))
            raise TracedControlError(tracer.control_refusal(self, what))
        raise TypeError(f"{what} of a traced value cannot be traced")


class KnownValuesAttribute(KnownValuesProxy, torch.fx.proxy.Attribute):
    """fx's lazily recorded attribute (x.T, x.mT) as a KnownValuesProxy."""


def snapshot_buffers(root: torch.nn.Module):
    """The module's buffers as they are, for restore_buffers after a shadow
    value of it (a stateful layer writes its buffers)."""
    return {k: v.detach().clone() for k, v in root.named_buffers()}


def restore_buffers(root: torch.nn.Module, saved) -> None:
    with torch.no_grad():
        for k, v in root.named_buffers():
            if k in saved and not torch.equal(v, saved[k]):
                v.copy_(saved[k])


def drop_traced_leftovers(graph: torch.fx.Graph) -> None:
    """Nodes tracing made that the program does not hold: the getitems made
    for every piece of a chunk / split (create_proxy) that the model never
    read (and the call, when none is: len(x.chunk(3))), and a value Python
    decided on (`x.dtype == torch.float32` in an `if`) with the nodes only
    it read (no in-place call among them)."""
    for fn in reversed(list(graph.nodes)):
        if (fn.meta.get("ptec_piece") or fn.meta.get("ptec_pieces")) and not fn.users:
            graph.erase_node(fn)
    todo = [fn for fn in graph.nodes if fn.meta.get("ptec_decided") and not fn.users]
    gone = set()
    while todo:
        fn = todo.pop()
        if fn in gone or fn.users or fn.op not in ("call_function", "call_method") \
                or (isinstance(fn.target, str) and fn.target.endswith("_")):
            continue
        inputs = fn.all_input_nodes
        graph.erase_node(fn)
        gone.add(fn)
        todo.extend(a for a in inputs if not a.users)


def _one_line(e: BaseException) -> str:
    """torch's message on one line: its first line, then an overload list
    (`* (Tensor input, ...)`) joined with `;`; fx's proxy classes named
    "a traced value"."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    first = lines[0]
    overloads = [ln.lstrip("* ") for ln in lines[1:] if ln.startswith("*")][:4]
    text = first + (" " + "; ".join(overloads) if overloads else "")
    for proxy in ("KnownValuesAttribute", "KnownValuesProxy", "_UnpackingProxy", "Attribute", "Proxy"):
        text = text.replace(proxy, "a traced value")
    return text


def eager_failure(model: torch.nn.Module, example_inputs) -> Optional[BaseException]:
    """The model's own error on its example inputs (a copy of it runs, so
    no state is written), or None when it runs."""
    try:
        runner = model_copy(model)
    except Exception:                   # noqa: BLE001 - an uncopyable model: no check
        return None
    try:
        with torch.no_grad():
            runner(*[x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs])
    except Exception as e:              # noqa: BLE001 - the model's own failure
        return e
    return None


def trace_refusal(e: BaseException, model: Optional[torch.nn.Module] = None, example_inputs=()) -> str:
    """One line for an error raised while tracing: a refusal of this
    tracer as it is, the model's own failure in eager torch, or fx's error
    naming the module it was raised in."""
    if isinstance(e, TracedControlError):
        return str(e)
    where = getattr(e, "ptec_where", None) or "the model's forward"
    site = _user_site(e.__traceback__)
    if model is not None and example_inputs:
        own = eager_failure(model, example_inputs)
        if own is not None:
            shapes = ", ".join("x".join(map(str, x.shape)) for x in example_inputs if isinstance(x, torch.Tensor))
            return (f"{where}{_user_site(own.__traceback__)}: the model fails on its example inputs ({shapes}) "
                    f"in torch itself, not only while tracing: {type(own).__name__}: {_one_line(own)}")
    from .capture_torchvision import module_refusal
    if module_refusal(where):           # torchvision's MultiScaleRoIAlign: refused naming it and why
        return module_refusal(where)
    from .capture_item import item_refusal
    read = item_refusal(e, where, site, _one_line(e))     # torch.zeros(x.argmax().item()) (capture_item)
    if read:
        return read
    if isinstance(e, NameError) and "is not a member of this module" in str(e):
        # a module's own tensors read outside a call of one of the model's submodules (capture_module_aliases)
        return (f"{where}{site}: torch.fx could not trace it: a parameter or buffer that is not one of the "
                "model's is read, as when a submodule's bound .forward / .__call__ kept in __init__ (or a "
                "module outside the model) runs: call the submodule itself, as in self.cell(x, h)")
    return (f"{where}{site}: torch.fx could not trace it: {_one_line(e)} "
            "(write that line with tensor ops, or give it a fixed value)")
