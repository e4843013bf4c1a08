"""`type(x)` in the model's own code answered as torch would while fx
traces (probe: trace fidelity).

fx hands the forward Proxies, so `type(x) is torch.Tensor`, `type(x) ==
torch.Tensor`, `type(x) in (torch.Tensor, ...)`, `type(x).__name__ ==
'Tensor'` and `type(self.weight) is nn.Parameter` saw `Proxy`, and the
program held the branch fx took, silently: not the one the model's
forward takes.

`type` is a builtin the model's code looks up by name, so for one trace
the name resolves, in each module of the model's code that runs during
the trace, to `_Type` below: called with one argument it answers a proxy
by the type of its known value (capture_tracer's shadow values; a
get_attr of a parameter: nn.Parameter), a module ptec swaps for a
stand-in (capture_modules) by its original's class, and anything else as
type() does; with three it makes a class as type() does, and
`isinstance(c, type)` / `issubclass(m, type)` / `type(c) == type` keep
their answers (type(c) of a class c answers this `type`, so `type(c) is
type` does too). A proxy whose value is not known is refused in one line
(fx's branch would be a guess). A module's globals get the name on the
first call of its code during the trace (sys.setprofile) and are put back
as they were when the trace ends, also on an error.

Left as they were: torch's, torchvision's, ptec's and the standard
library's modules, installed packages other than the model's own, code
run by exec() without a module, and a module that binds `type` to
something else. A global bound to the builtin (`from builtins import
type [as t]`, `t = type`) is replaced as well, and a global naming the builtins module
(`import builtins [as b]`) reads as one whose `type` is `_Type`. A model
file `ptec compile` loads is no entry of sys.modules: a module for this.
The builtin bound before the trace outside the globals is replaced too:
in a default or keyword-only default of the module's functions and of
its classes' methods, in their closures' cells, as a class attribute of
its classes (`_t = type`) and as an instance attribute of the model's
modules of its classes (`self._t = type`), and as an item of such an
attribute's list, dict or tuple (`self.fns = [type]`: the list's and
dict's items replaced in place, a tuple by a new tuple); each put back as
it was (the same objects) when the trace ends. Not seen: one inside a
container elsewhere (nested, a global's, a closure's).

`x.__class__` (or getattr(x, "__class__")) of a proxy cannot be answered
(torch's C argument parser asks a proxy's `__class__` too, and would take
it for a tensor): once the model's code that spells `__class__` runs,
Proxy.__getattribute__ refuses it in one line when asked from such a
line of the model's code, and is put back when the trace ends; and
`getattr` in the model's modules is a stand-in (bound as `type` is) that
refuses getattr(x, name) of a proxy with name "__class__", spelled or
computed. object.__getattribute__(x, name) is not seen.
"""
from __future__ import annotations

import builtins
import contextlib
import linecache
import os
import sys
import sysconfig
import types
from typing import Dict, List, Set

import torch
import torch.fx

from .capture_tracer import _PTEC_DIR, _TORCH_DIR, TracedControlError, _user_site

_type = builtins.type
_getattr = builtins.getattr
_isinstance = builtins.isinstance
_issubclass = builtins.issubclass
_MISSING = object()

# whose globals keep the builtin: torch's, ptec's, torchvision's, the standard library's
_LEFT_NAMES = ("torch", "torchvision", "ptec", "builtins", "__future__")
_STDLIB = set(getattr(sys, "stdlib_module_names", ()))
_LEFT_DIRS = tuple(os.path.abspath(p) + os.sep for p in {_PTEC_DIR, _TORCH_DIR, sysconfig.get_paths()["stdlib"],
                                                           sysconfig.get_paths()["platstdlib"]})
_INSTALLED = ("site-packages", "dist-packages")        # a directory of installed packages (Debian's too)


def _attribute(root, target: str):
    """The object a get_attr node reads, from the modules' own dicts (fx
    patches nn.Module.__getattr__ while tracing); _MISSING if not found."""
    val = root
    for part in target.split("."):
        if _isinstance(val, torch.nn.Module):
            for d in (val._parameters, val._buffers, val._modules, vars(val)):
                if part in d:
                    val = d[part]
                    break
            else:
                return _MISSING
        else:
            val = getattr(val, part, _MISSING)
            if val is _MISSING:
                return _MISSING
    return val


def _type_of(obj):
    """type(obj) as the model's forward sees it (module doc)."""
    if _isinstance(obj, torch.fx.Proxy):
        node = obj.node
        tracer = obj.tracer
        if node.op == "get_attr":
            val = _attribute(tracer.root, node.target)
            if val is not _MISSING:
                return _type(val)
        known = getattr(tracer, "known", None)
        if known is not None and getattr(tracer, "_values", None) is not None and known(node):
            return _type(tracer.value(node))
        where = tracer.where() if hasattr(tracer, "where") else "the model's forward"
        target = getattr(node.target, "__name__", node.target)
        raise TracedControlError(
            f"{where}: type() of a traced value ({node.op} {target}) whose example value ptec does not "
            f"know{_user_site()}: fx's answer (Proxy) is not the model's and ptec cannot compute it; remove the check")
    if _isinstance(obj, torch.nn.Module):
        original = obj.__dict__.get("_ptec_original")
        if original is not None:
            return _type(original)
    found = _type(obj)
    return _Type if found is _type else found       # type(c) is type, for a class c: still True


class _TypeMeta(type):
    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:
            return _type_of(args[0])
        return _type(*args, **kwargs)

    def __instancecheck__(cls, obj):
        return _isinstance(obj, _type)

    def __subclasscheck__(cls, sub):
        return _issubclass(sub, _type)

    def __eq__(cls, other):
        return other is _type or other is cls

    def __ne__(cls, other):
        return not cls.__eq__(other)

    def __hash__(cls):
        return hash(_type)

    def __repr__(cls):
        return repr(_type)


class _Type(type, metaclass=_TypeMeta):
    """`type` in the model's modules while fx traces (module doc)."""


_Type.__name__ = _Type.__qualname__ = "type"
_Type.__module__ = "builtins"


def _model_packages(model: torch.nn.Module) -> Set[str]:
    """Top-level packages of the model's own classes (an installed model
    package's helpers are the model's code too)."""
    found = set()
    for m in model.modules():
        for cls in _type(m).__mro__:
            top = (cls.__module__ or "").split(".")[0]
            if top and top not in _LEFT_NAMES and top not in _STDLIB:
                found.add(top)
    return found


def _is_model_module(g: dict, packages: Set[str]) -> bool:
    name = g.get("__name__")
    path = g.get("__file__")
    if not _isinstance(name, str) or (getattr(sys.modules.get(name), "__dict__", None) is not g
                                      and not _isinstance(path, str)):
        return False    # exec'd code, fx's generated forward: no module's globals (a file `ptec compile` loads: one)
    top = name.split(".")[0]
    if top in _LEFT_NAMES or top in _STDLIB:
        return False
    if _isinstance(path, str):
        path = os.path.abspath(path)
        if any(part in _INSTALLED for part in path.split(os.sep)):
            return top in packages
        if path.startswith(_LEFT_DIRS):
            return False
    return True


class _Builtins(types.ModuleType):
    """The builtins module as a model's module sees it while fx traces:
    `builtins.type` is _Type, everything else the builtin."""

    def __getattr__(self, name):
        return getattr(builtins, name)


def _class_getattr(obj, name, *default):
    """`getattr` in the model's modules while fx traces: getattr(x, name)
    of a traced value with name "__class__" (spelled or computed) refused
    as x.__class__ is (_proxy_getattribute); else the builtin."""
    if name == "__class__" and _isinstance(obj, torch.fx.Proxy):
        _refuse_class(obj)
    return _getattr(obj, name, *default)


_class_getattr.__name__ = _class_getattr.__qualname__ = "getattr"

_BUILTINS = _Builtins("builtins")
_BUILTINS.type = _Type
_BUILTINS.getattr = _class_getattr

# the builtin -> its stand-in, wherever the model's code bound it before the trace
_STAND_INS = ((_type, _Type), (_getattr, _class_getattr), (builtins, _BUILTINS))


def _stand_in(value):
    for builtin, stand_in in _STAND_INS:
        if value is builtin:
            return stand_in
    return _MISSING

_model_globals: Dict[int, dict] = {}    # the patched modules' globals, while a trace runs


def _reads_class(code) -> bool:
    """code spells `.__class__` or getattr(x, "__class__")."""
    return "__class__" in code.co_names or "__class__" in code.co_consts


def _proxy_getattribute(self, name):
    """Proxy.__getattribute__ while a model's code that reads `__class__`
    runs: `x.__class__` of a traced value on such a line is refused (fx's
    Proxy is not the model's answer, and answering Tensor would let torch's
    C argument parser take the proxy for a tensor)."""
    if name == "__class__":
        frame = sys._getframe(1)
        if id(frame.f_globals) in _model_globals and _reads_class(frame.f_code) \
                and "__class__" in linecache.getline(frame.f_code.co_filename, frame.f_lineno):
            _refuse_class(self)
    return _proxy_base[0](self, name)


def class_asked(proxy) -> None:
    """The proxy classes' `__class__` (capture_tracer.KnownValuesProxy): a
    line of the model's code spelling `__class__` that asks it
    (`object.__getattribute__(x, "__class__")`, which no hook of
    __getattribute__ sees) is refused; anyone else (torch's argument
    parser, isinstance) gets the proxy's class."""
    frame = sys._getframe(2)
    if id(frame.f_globals) in _model_globals and _reads_class(frame.f_code) \
            and "__class__" in linecache.getline(frame.f_code.co_filename, frame.f_lineno):
        _refuse_class(proxy)


def _refuse_class(proxy):
    tracer = object.__getattribute__(proxy, "tracer")
    where = tracer.where() if hasattr(tracer, "where") else "the model's forward"
    raise TracedControlError(
        f"{where}: x.__class__ of a traced value is fx's Proxy, not what the model's forward "
        f"sees{_user_site()}; write type(x) or isinstance(x, torch.Tensor)")


_proxy_base = [object.__getattribute__]      # the getter _proxy_getattribute wraps (torch's, if it has one)


def _hook_proxy():
    """Proxy.__getattribute__ is _proxy_getattribute; what the class had
    before (its own, or _MISSING), or None if it already was."""
    own = vars(torch.fx.Proxy).get("__getattribute__", _MISSING)
    if own is _proxy_getattribute:
        return None
    _proxy_base[0] = torch.fx.Proxy.__getattribute__
    torch.fx.Proxy.__getattribute__ = _proxy_getattribute
    return own


@contextlib.contextmanager
def type_as_torch(model: torch.nn.Module):
    """`type` in the model's modules answering for proxies and stand-ins
    (module doc), for one trace; their globals exactly as they were after."""
    packages = _model_packages(model)
    seen: Dict[int, dict] = {}          # id -> globals (kept alive so an id is not reused)
    codes: Dict[int, object] = {}       # the model's code objects run so far
    patched: List[tuple] = []           # (globals, name, what was there)
    hooked: List[object] = []           # what Proxy.__getattribute__ was, when this trace hooked it
    bound: List[tuple] = []             # (object, attribute, what was there): defaults, cells, class attributes
    walked: Set[int] = set()            # functions and classes looked at
    added: List[int] = []               # _model_globals' entries this trace made (a trace in a trace: both)
    previous = sys.getprofile()
    chained = previous if callable(previous) else None

    def patch(g: dict) -> None:
        seen[id(g)] = g
        if not _is_model_module(g, packages):
            return
        if id(g) not in _model_globals:
            _model_globals[id(g)] = g
            added.append(id(g))
        for name, stand_in in (("type", _Type), ("getattr", _class_getattr)):
            if name not in g:                            # else the builtin (below) or the module's own
                patched.append((g, name, _MISSING))
                g[name] = stand_in
        for name, value in list(g.items()):
            # (not __builtins__, the builtins module in a script's globals: a function made while tracing, a
            # lambda in forward, takes its builtins from it, and the stand-in's own dict holds none of them)
            stand_in = _stand_in(value) if name != "__builtins__" else _MISSING
            if stand_in is not _MISSING:                 # from builtins import type [as t]; t = type; import builtins
                patched.append((g, name, value))
                g[name] = stand_in
            elif _isinstance(value, types.FunctionType) and value.__globals__ is g:
                bind_function(value)
            elif _isinstance(value, _type) and value.__module__ == g.get("__name__"):
                bind_class(value)
        for m in model.modules():                        # self._t = type in __init__
            if _type(m).__module__ == g.get("__name__"):
                bind_class(_type(m))
                for name, value in list(vars(m).items()):
                    stand_in = _stand_in(value)
                    if stand_in is not _MISSING:
                        patched.append((vars(m), name, value))
                        vars(m)[name] = stand_in
                    elif _type(value) in (list, dict):       # self.fns = [type], {"t": type}: in place
                        for key, item in list(value.items() if _type(value) is dict else enumerate(value)):
                            if _stand_in(item) is not _MISSING:
                                patched.append((value, key, item))
                                value[key] = _stand_in(item)
                    elif _type(value) is tuple and any(_stand_in(i) is not _MISSING for i in value):
                        patched.append((vars(m), name, value))      # self.fns = (type, len): a new tuple
                        vars(m)[name] = tuple(i if _stand_in(i) is _MISSING else _stand_in(i) for i in value)

    def bind(obj, attr, before, after) -> None:
        try:
            setattr(obj, attr, after)
        except (AttributeError, TypeError, ValueError):
            return                                       # read-only: left as it was
        bound.append((obj, attr, before))

    def bind_function(fn) -> None:
        """def h(y, _type=type), def h(y, *, t=type), a closure's cell: the stand-ins."""
        if id(fn) in walked:
            return
        walked.add(id(fn))
        defaults = fn.__defaults__ or ()
        if any(_stand_in(v) is not _MISSING for v in defaults):
            bind(fn, "__defaults__", fn.__defaults__,
                 tuple(v if _stand_in(v) is _MISSING else _stand_in(v) for v in defaults))
        kw = fn.__kwdefaults__ or {}
        if any(_stand_in(v) is not _MISSING for v in kw.values()):
            bind(fn, "__kwdefaults__", fn.__kwdefaults__,
                 {k: v if _stand_in(v) is _MISSING else _stand_in(v) for k, v in kw.items()})
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue                                 # an empty cell
            if _stand_in(value) is not _MISSING:
                bind(cell, "cell_contents", value, _stand_in(value))

    def bind_class(cls) -> None:
        """_t = type in a class body, and its methods' defaults."""
        if id(cls) in walked:
            return
        walked.add(id(cls))
        for name, value in list(vars(cls).items()):
            if _stand_in(value) is not _MISSING:
                bind(cls, name, value, _stand_in(value))
            elif _isinstance(value, (staticmethod, classmethod)):
                bind_function(value.__func__) if _isinstance(value.__func__, types.FunctionType) else None
            elif _isinstance(value, types.FunctionType):
                bind_function(value)
            elif _isinstance(value, _type) and value.__module__ == cls.__module__:
                bind_class(value)

    def on_call(frame, event, arg):
        if event == "call":
            g = frame.f_globals
            if id(g) not in seen:
                patch(g)
            if id(g) in _model_globals and not hooked:
                code = frame.f_code
                if id(code) not in codes:
                    codes[id(code)] = code
                    if _reads_class(code):
                        own = _hook_proxy()
                        if own is not None:
                            hooked.append(own)
        if chained is not None:
            chained(frame, event, arg)

    sys.setprofile(on_call)
    try:
        yield patched
    finally:
        sys.setprofile(previous)
        if hooked:
            if hooked[0] is _MISSING:
                del torch.fx.Proxy.__getattribute__
            else:
                torch.fx.Proxy.__getattribute__ = hooked[0]
        for key in added:
            del _model_globals[key]
        for obj, attr, before in reversed(bound):
            setattr(obj, attr, before)
        for g, name, before in reversed(patched):
            if before is _MISSING:
                g.pop(name, None)
            else:
                g[name] = before
