"""Stage 1: capture an eval-mode nn.Module as a ptec float Graph (ptec.ir).

torch.fx.symbolic_trace is the path that works on every supported torch
(1.13 included). On torch 2.x, torch.export is tried first when asked for
(method="auto" or "export"); any op it produces that ptec does not map makes
capture fall back to fx, so the result is the same graph either way.
Anything neither path understands becomes an `unsupported` node: it still
evaluates in float, and lowering reports it.
"""
from __future__ import annotations

import operator
from typing import List, Sequence

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .ir import Graph, Node, infer_shapes


class CaptureError(RuntimeError):
    pass


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32).copy()


def _pair(v) -> List[int]:
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def _module_node(name: str, m: nn.Module, ins: List[str]) -> Node:
    if isinstance(m, nn.Conv2d):
        if isinstance(m.padding, str):
            raise CaptureError(f"{name}: string padding {m.padding!r} is not supported")
        if m.padding_mode != "zeros":
            raise CaptureError(f"{name}: padding_mode {m.padding_mode} is not supported")
        return Node(name, "conv2d", ins, dict(
            weight=_np(m.weight), bias=None if m.bias is None else _np(m.bias),
            stride=_pair(m.stride), padding=_pair(m.padding), dilation=_pair(m.dilation),
            groups=int(m.groups)))
    if isinstance(m, nn.Linear):
        return Node(name, "linear", ins, dict(weight=_np(m.weight),
                                              bias=None if m.bias is None else _np(m.bias)))
    if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d)):
        return Node(name, "batch_norm", ins, dict(
            mean=_np(m.running_mean), var=_np(m.running_var),
            gamma=None if m.weight is None else _np(m.weight),
            beta=None if m.bias is None else _np(m.bias), eps=float(m.eps)))
    if isinstance(m, nn.ReLU):
        return Node(name, "clamp", ins, dict(lo=0.0, hi=None))
    if isinstance(m, nn.ReLU6):
        return Node(name, "clamp", ins, dict(lo=0.0, hi=6.0))
    if isinstance(m, nn.Hardtanh):
        return Node(name, "clamp", ins, dict(lo=float(m.min_val), hi=float(m.max_val)))
    if isinstance(m, (nn.Dropout, nn.Identity)):
        return Node(name, "identity", ins)
    if isinstance(m, nn.AvgPool2d):
        return Node(name, "avg_pool2d", ins, dict(
            kernel=_pair(m.kernel_size), stride=_pair(m.stride or m.kernel_size),
            padding=_pair(m.padding), ceil_mode=bool(m.ceil_mode),
            count_include_pad=bool(m.count_include_pad), divisor_override=m.divisor_override))
    if isinstance(m, nn.AdaptiveAvgPool2d):
        return Node(name, "adaptive_avg_pool2d", ins, dict(output_size=_pair(m.output_size)))
    if isinstance(m, nn.MaxPool2d):
        return Node(name, "max_pool2d", ins, dict(
            kernel=_pair(m.kernel_size), stride=_pair(m.stride or m.kernel_size),
            padding=_pair(m.padding), dilation=_pair(m.dilation), ceil_mode=bool(m.ceil_mode)))
    if isinstance(m, nn.Flatten):
        return Node(name, "reshape", ins, dict(flatten=(m.start_dim, m.end_dim)))
    if isinstance(m, nn.Softmax):
        return Node(name, "softmax", ins, dict(dim=m.dim if m.dim is not None else -1))
    if isinstance(m, nn.Sigmoid):
        return Node(name, "sigmoid", ins)
    if isinstance(m, nn.Tanh):
        return Node(name, "tanh", ins)
    return Node(name, "unsupported", ins, dict(fn=m, what=type(m).__name__))


_ACT_FUNCS = {F.relu: (0.0, None), torch.relu: (0.0, None), F.relu6: (0.0, 6.0)}


def _fx_to_graph(gm: torch.fx.GraphModule) -> Graph:
    nodes: List[Node] = []
    inputs: List[str] = []
    outputs: List[str] = []
    mods = dict(gm.named_modules())

    by_name = {}
    tuple_sources = set()

    def ref(a):
        return a.name if isinstance(a, torch.fx.Node) else None

    for fn in gm.graph.nodes:
        name = fn.name
        ins = [a.name for a in fn.args if isinstance(a, torch.fx.Node)]
        before = len(nodes)
        if fn.op == "placeholder":
            nodes.append(Node(name, "input"))
            inputs.append(name)
        elif fn.op == "output":
            res = fn.args[0]
            res = res if isinstance(res, (tuple, list)) else [res]
            outputs = [ref(r) for r in res]
            if any(o is None for o in outputs):
                raise CaptureError("model outputs must be tensors")
        elif fn.op == "get_attr":
            val = gm
            for part in fn.target.split("."):
                val = getattr(val, part)
            nodes.append(Node(name, "constant", [], dict(value=_np(val))))
        elif fn.op == "call_module":
            nodes.append(_module_node(name, mods[fn.target], ins))
        elif fn.op in ("call_function", "call_method"):
            scalar = _scalar_binary(fn)
            source = by_name.get(ins[0]) if ins and fn.target is operator.getitem else None
            if source is not None and source.op == "unsupported":
                # One element of a multi-output call (torch.sort, topk, ...):
                # keep it as one unsupported node named after that call, so
                # lowering reports the operator the model really used.
                nodes.append(_element_of(name, source, fn.args[1]))
                tuple_sources.add(source.name)
            elif scalar is not None:
                nodes.extend(scalar)
            else:
                nodes.append(_function_node(fn, ins))
        else:
            raise CaptureError(f"unexpected fx node {fn.op}")
        by_name.update((n.name, n) for n in nodes[before:])
    used = {i for n in nodes for i in n.inputs} | set(outputs)
    nodes = [n for n in nodes if n.name not in tuple_sources or n.name in used]
    return Graph(nodes, inputs, outputs)


def _element_of(name: str, source: Node, index) -> Node:
    fn = source.attrs["fn"]
    return Node(name, "unsupported", list(source.inputs),
                dict(fn=lambda *xs, _fn=fn, _i=index: _fn(*xs)[_i], what=source.attrs.get("what", "unknown")))


_BINARY = {operator.add: "add", torch.add: "add", "add": "add",
           operator.mul: "mul", torch.mul: "mul", "mul": "mul",
           operator.sub: "sub", torch.sub: "sub", "sub": "sub",
           operator.truediv: "div", torch.div: "div", "div": "div"}


def _scalar_binary(fn: torch.fx.Node):
    """`x + c`, `c * x`: the Python number becomes a constant node."""
    try:
        op = _BINARY.get(fn.target)
    except TypeError:
        return None
    if op is None or len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = fn.args
    if isinstance(a, torch.fx.Node) == isinstance(b, torch.fx.Node):
        return None
    x, c = (a, b) if isinstance(a, torch.fx.Node) else (b, a)
    if not isinstance(c, (int, float)):
        return None
    const = Node(fn.name + "_const", "constant", [], dict(value=np.array(c, np.float32)))
    # sub and div keep the operands' order (`1.0 - x`); add and mul do not care
    ins = [x.name, const.name] if isinstance(a, torch.fx.Node) else [const.name, x.name]
    return [const, Node(fn.name, op, ins)]


def _scalar_arg(fn, i, key, default=None):
    if len(fn.args) > i:
        return fn.args[i]
    return fn.kwargs.get(key, default)


def _function_node(fn: torch.fx.Node, ins: List[str]) -> Node:
    t = fn.target
    name = fn.name
    tensor_args = [a for a in fn.args if isinstance(a, torch.fx.Node)]
    if t in _ACT_FUNCS:
        lo, hi = _ACT_FUNCS[t]
        return Node(name, "clamp", ins[:1], dict(lo=lo, hi=hi))
    if t in (F.hardtanh,):
        return Node(name, "clamp", ins[:1], dict(lo=float(_scalar_arg(fn, 1, "min_val", -1.0)),
                                                hi=float(_scalar_arg(fn, 2, "max_val", 1.0))))
    if t in (torch.clamp, "clamp") or t == "clamp":
        lo = _scalar_arg(fn, 1, "min")
        hi = _scalar_arg(fn, 2, "max")
        if not isinstance(lo, torch.fx.Node) and not isinstance(hi, torch.fx.Node):
            return Node(name, "clamp", ins[:1], dict(lo=None if lo is None else float(lo),
                                                    hi=None if hi is None else float(hi)))
    if t in ("relu",):
        return Node(name, "clamp", ins[:1], dict(lo=0.0, hi=None))
    if t in (operator.add, torch.add, "add") and len(tensor_args) == 2 and len(fn.args) == 2:
        return Node(name, "add", ins)
    if t in (operator.mul, torch.mul, "mul") and len(tensor_args) == 2 and len(fn.args) == 2:
        return Node(name, "mul", ins)
    if t in (operator.sub, torch.sub, "sub") and len(tensor_args) == 2 and len(fn.args) == 2 \
            and not fn.kwargs:
        return Node(name, "sub", ins)
    if t in (operator.truediv, torch.div, "div") and len(tensor_args) == 2 and len(fn.args) == 2 \
            and not fn.kwargs:
        return Node(name, "div", ins)
    if t in ("permute", torch.permute):
        dims = fn.args[1:] if t == "permute" else [fn.args[1]]
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = dims[0]
        if all(isinstance(d, int) for d in dims):
            return Node(name, "permute", ins[:1], dict(dims=[int(d) for d in dims]))
    if t in ("unsqueeze", torch.unsqueeze) and isinstance(_scalar_arg(fn, 1, "dim"), int):
        return Node(name, "reshape", ins[:1], dict(unsqueeze=int(_scalar_arg(fn, 1, "dim"))))
    if t in ("squeeze", torch.squeeze) and isinstance(_scalar_arg(fn, 1, "dim"), (int, type(None))):
        return Node(name, "reshape", ins[:1], dict(squeeze=_scalar_arg(fn, 1, "dim")))
    if t in (torch.flatten, "flatten"):
        return Node(name, "reshape", ins[:1], dict(flatten=(int(_scalar_arg(fn, 1, "start_dim", 0)),
                                                            int(_scalar_arg(fn, 2, "end_dim", -1)))))
    if t in ("view", "reshape", torch.reshape):
        shape = fn.args[1:] if t != torch.reshape else fn.args[1]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if all(isinstance(s, int) for s in shape):
            return Node(name, "reshape", ins[:1], dict(target_shape=[int(s) for s in shape]))
    if t in (F.adaptive_avg_pool2d,):
        return Node(name, "adaptive_avg_pool2d", ins[:1],
                    dict(output_size=_pair(_scalar_arg(fn, 1, "output_size"))))
    if t in (F.avg_pool2d,):
        k = _pair(_scalar_arg(fn, 1, "kernel_size"))
        s = _scalar_arg(fn, 2, "stride")
        return Node(name, "avg_pool2d", ins[:1], dict(
            kernel=k, stride=_pair(s) if s else k, padding=_pair(_scalar_arg(fn, 3, "padding", 0)),
            ceil_mode=bool(_scalar_arg(fn, 4, "ceil_mode", False)),
            count_include_pad=bool(_scalar_arg(fn, 5, "count_include_pad", True)),
            divisor_override=_scalar_arg(fn, 6, "divisor_override")))
    if t in (F.max_pool2d,):
        k = _pair(_scalar_arg(fn, 1, "kernel_size"))
        s = _scalar_arg(fn, 2, "stride")
        return Node(name, "max_pool2d", ins[:1], dict(
            kernel=k, stride=_pair(s) if s else k, padding=_pair(_scalar_arg(fn, 3, "padding", 0)),
            dilation=_pair(_scalar_arg(fn, 4, "dilation", 1)),
            ceil_mode=bool(_scalar_arg(fn, 5, "ceil_mode", False))))
    if t in (F.softmax, torch.softmax, "softmax"):
        return Node(name, "softmax", ins[:1], dict(dim=int(_scalar_arg(fn, 1, "dim", -1))))
    if t in (torch.sigmoid, "sigmoid"):
        return Node(name, "sigmoid", ins[:1])
    if t in (torch.tanh, "tanh"):
        return Node(name, "tanh", ins[:1])
    if t in ("mean", torch.mean) and _scalar_arg(fn, 1, "dim") is not None:
        dim = _scalar_arg(fn, 1, "dim")
        dim = [dim] if isinstance(dim, int) else list(dim)
        return Node(name, "mean", ins[:1], dict(dim=dim, keepdim=bool(
            _scalar_arg(fn, 2, "keepdim", False))))
    if t in ("contiguous", F.dropout):
        return Node(name, "identity", ins[:1])
    if t in (torch.cat,):
        seq = fn.args[0]
        return Node(name, "cat", [a.name for a in seq], dict(dim=int(_scalar_arg(fn, 1, "dim", 0))))

    # Anything else keeps its float semantics for calibration and is reported
    # by lowering as an operator ptec cannot run.
    arg_template = fn.args
    kwargs = dict(fn.kwargs)

    def run(*xs, _t=t, _tmpl=arg_template, _kw=kwargs, _method=(fn.op == "call_method")):
        it = iter(xs)
        args = [next(it) if isinstance(a, torch.fx.Node) else a for a in _tmpl]
        if _method:
            return getattr(args[0], _t)(*args[1:], **_kw)
        return _t(*args, **_kw)
    what = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    return Node(name, "unsupported", ins, dict(fn=run, what=what))


def _resolve_reshapes(g: Graph) -> None:
    """Turn flatten(start, end) and view(-1 ...) into concrete target shapes."""
    for n in g.nodes:
        if n.op == "reshape":
            n.attrs = {"shape": list(n.shape), **({"act": n.attrs["act"]} if "act" in n.attrs else {})}


def capture(model: nn.Module, example_inputs: Sequence[torch.Tensor], method: str = "auto",
            name: str = "model") -> Graph:
    model = model.eval()
    example_inputs = [torch.as_tensor(x, dtype=torch.float32) for x in example_inputs]
    g = None
    if method in ("auto", "export") and hasattr(torch, "export"):
        try:
            from .capture_export import capture_with_export
            g = capture_with_export(model, example_inputs)
            g.source = "export"
        except Exception as e:          # noqa: BLE001 - any failure means "use fx"
            if method == "export":
                raise CaptureError(f"torch.export capture failed: {e}") from e
            g = None
    if g is None:
        try:
            gm = torch.fx.symbolic_trace(model)
        except Exception as e:          # noqa: BLE001
            raise CaptureError(f"torch.fx could not trace the model: {e}") from e
        g = _fx_to_graph(gm)
    g.name = name
    infer_shapes(g, example_inputs)
    _resolve_reshapes(g)
    return g
