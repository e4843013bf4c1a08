"""torch.export (torch >= 2.1) front end of stage 1. It maps the ATen ops an
exported eval-mode CNN/MLP uses onto ptec.ir nodes and raises on anything
else; capture() then falls back to torch.fx. The result is also checked
against the module on the example input before it is used."""
from __future__ import annotations

import operator
from typing import Dict, List, Sequence, Tuple

import numpy as np
import torch

from .ir import Graph, Node, evaluate


class ExportUnsupported(RuntimeError):
    pass


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32).copy()


def _pair(v, default=None) -> List[int]:
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        v = default
    if isinstance(v, int):
        return [v, v]
    v = [int(x) for x in v]
    return v * 2 if len(v) == 1 else v


def _arg(n, i, default=None):
    return n.args[i] if len(n.args) > i else default


def capture_with_export(model: torch.nn.Module, example_inputs: Sequence[torch.Tensor]) -> Tuple[Graph, list]:
    """The exported graph and torch's outputs of the model on the example
    inputs (the eager run the graph is checked against, which
    capture_own_failure.wrong_shape reuses)."""
    ep = torch.export.export(model, tuple(example_inputs))
    sig = ep.graph_signature
    # a forward writing its buffers: export returns their new values as extra
    # outputs, which one static program would drop; fx keeps them as state
    # tensors (capture_buffer_state)
    mutated = [spec.target for spec in getattr(sig, "output_specs", ()) if spec.kind.name == "BUFFER_MUTATION"]
    if mutated or getattr(sig, "buffers_to_mutate", None):
        raise ExportUnsupported(f"the forward writes its buffer {(mutated or list(sig.buffers_to_mutate.values()))[0]}")
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    lifted: Dict[str, str] = {}
    user_outputs = None
    if hasattr(sig, "input_specs"):              # torch >= 2.2
        for spec in sig.input_specs:
            if spec.kind.name in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
                lifted[spec.arg.name] = spec.target
            elif spec.kind.name != "USER_INPUT":
                raise ExportUnsupported(f"input kind {spec.kind.name}")
        user_outputs = [spec.arg.name for spec in sig.output_specs
                        if spec.kind.name == "USER_OUTPUT"]
    else:                                        # torch 2.1
        for attr in ("inputs_to_parameters", "inputs_to_buffers",
                     "inputs_to_lifted_tensor_constants"):
            lifted.update(getattr(sig, attr, {}) or {})
    tensors: Dict[str, np.ndarray] = {}
    alias: Dict[str, str] = {}
    nodes: List[Node] = []
    inputs: List[str] = []
    outputs: List[str] = []

    def name_of(a):
        if not isinstance(a, torch.fx.Node):
            raise ExportUnsupported(f"expected a tensor, got {a!r}")
        return alias.get(a.name, a.name)

    def param(a):
        if a is None:
            return None
        if not isinstance(a, torch.fx.Node) or a.name not in tensors:
            raise ExportUnsupported("weights must be parameters or buffers")
        return tensors[a.name]

    for n in ep.graph.nodes:
        if n.op == "placeholder":
            if n.name in lifted:
                tensors[n.name] = _np(state[lifted[n.name]])
            else:
                nodes.append(Node(n.name, "input"))
                inputs.append(n.name)
            continue
        if n.op == "output":
            res = n.args[0]
            res = res if isinstance(res, (tuple, list)) else [res]
            if user_outputs is not None:
                res = [r for r in res if isinstance(r, torch.fx.Node) and r.name in user_outputs]
            outputs = [name_of(r) for r in res]
            continue
        if n.op != "call_function":
            raise ExportUnsupported(f"node kind {n.op}")
        t = str(n.target)
        if n.target is operator.getitem:
            if n.args[1] != 0:
                raise ExportUnsupported("only the first result of a multi-output op is used")
            alias[n.name] = name_of(n.args[0])
            continue
        x = lambda: [name_of(n.args[0])]  # noqa: E731
        if t in ("aten.conv2d.default", "aten.convolution.default"):
            if t == "aten.convolution.default":
                if _arg(n, 6, False):
                    raise ExportUnsupported("transposed convolution")
                groups = _arg(n, 8, 1)
            else:
                groups = _arg(n, 6, 1)
            if np.ndim(param(n.args[1])) != 4:      # a 1-D or 3-D convolution: fx's stand-ins take it
                raise ExportUnsupported("convolution other than 2-D")
            node = Node(n.name, "conv2d", x(), dict(
                weight=param(n.args[1]), bias=param(_arg(n, 2)),
                stride=_pair(_arg(n, 3, 1)), padding=_pair(_arg(n, 4, 0)),
                dilation=_pair(_arg(n, 5, 1)), groups=int(groups)))
            if isinstance(_arg(n, 4), str):
                raise ExportUnsupported("string padding")
        elif t == "aten.linear.default":
            node = Node(n.name, "linear", x(), dict(weight=param(n.args[1]),
                                                    bias=param(_arg(n, 2))))
        elif t in ("aten._native_batch_norm_legit_no_training.default",
                   "aten.batch_norm.default"):
            if t == "aten.batch_norm.default":
                if _arg(n, 5, False):
                    raise ExportUnsupported("training-mode batch norm")
                eps = _arg(n, 7, 1e-5)
            else:
                eps = _arg(n, 6, 1e-5)
            node = Node(n.name, "batch_norm", x(), dict(
                gamma=param(_arg(n, 1)), beta=param(_arg(n, 2)), mean=param(n.args[3]),
                var=param(n.args[4]), eps=float(eps)))
        elif t in ("aten.relu.default", "aten.relu_.default"):
            node = Node(n.name, "clamp", x(), dict(lo=0.0, hi=None))
        elif t in ("aten.hardtanh.default", "aten.hardtanh_.default"):
            node = Node(n.name, "clamp", x(), dict(lo=float(_arg(n, 1, -1.0)),
                                                    hi=float(_arg(n, 2, 1.0))))
        elif t == "aten.relu6.default":
            node = Node(n.name, "clamp", x(), dict(lo=0.0, hi=6.0))
        elif t == "aten.clamp.default":
            lo, hi = _arg(n, 1), _arg(n, 2)
            node = Node(n.name, "clamp", x(), dict(lo=None if lo is None else float(lo),
                                                    hi=None if hi is None else float(hi)))
        elif t in ("aten.add.Tensor", "aten.mul.Tensor", "aten.add_.Tensor"):
            op = "mul" if "mul" in t else "add"
            if n.kwargs.get("alpha", 1) != 1:
                raise ExportUnsupported("add with alpha")
            a, b = n.args[0], n.args[1]
            if isinstance(b, torch.fx.Node):
                node = Node(n.name, op, [name_of(a), name_of(b)])
            else:
                const = Node(n.name + "_const", "constant", [], dict(value=np.array(b, np.float32)))
                nodes.append(const)
                node = Node(n.name, op, [name_of(a), const.name])
        elif t in ("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
                   "aten.flatten.using_ints"):
            node = Node(n.name, "reshape", x(),
                        dict(target_shape=[int(s) for s in n.meta["val"].shape]))
        elif t == "aten.adaptive_avg_pool2d.default":
            node = Node(n.name, "adaptive_avg_pool2d", x(), dict(output_size=_pair(n.args[1])))
        elif t == "aten.avg_pool2d.default":
            k = _pair(n.args[1])
            node = Node(n.name, "avg_pool2d", x(), dict(
                kernel=k, stride=_pair(_arg(n, 2), k), padding=_pair(_arg(n, 3, 0)),
                ceil_mode=bool(_arg(n, 4, False)), count_include_pad=bool(_arg(n, 5, True)),
                divisor_override=_arg(n, 6)))
        elif t in ("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default"):
            k = _pair(n.args[1])
            node = Node(n.name, "max_pool2d", x(), dict(
                kernel=k, stride=_pair(_arg(n, 2), k), padding=_pair(_arg(n, 3, 0)),
                dilation=_pair(_arg(n, 4, 1)), ceil_mode=bool(_arg(n, 5, False))))
        elif t == "aten.dropout.default" and _arg(n, 2, False):
            raise ExportUnsupported("dropout with train=True (fx captures it as a random layer)")
        elif t in ("aten.dropout.default", "aten.clone.default", "aten.alias.default",
                   "aten.detach.default", "aten.contiguous.default"):
            alias[n.name] = name_of(n.args[0])
            continue
        elif t == "aten.mean.dim":
            dims = n.args[1]
            node = Node(n.name, "mean", x(), dict(dim=[dims] if isinstance(dims, int) else
                                                   list(dims), keepdim=bool(_arg(n, 2, False))))
        elif t in ("aten.softmax.int", "aten._softmax.default"):
            node = Node(n.name, "softmax", x(), dict(dim=int(n.args[1])))
        elif t == "aten.sigmoid.default":
            node = Node(n.name, "sigmoid", x())
        elif t == "aten.tanh.default":
            node = Node(n.name, "tanh", x())
        elif t == "aten.cat.default":
            node = Node(n.name, "cat", [name_of(a) for a in n.args[0]],
                        dict(dim=int(_arg(n, 1, 0))))
        else:
            raise ExportUnsupported(f"ATen op {t}")
        nodes.append(node)
    g = Graph(nodes, inputs, outputs)
    with torch.no_grad():
        want = model(*example_inputs)
    want = want if isinstance(want, (tuple, list)) else [want]
    got = evaluate(g, example_inputs)
    if len(got) != len(want) or not all(torch.allclose(a, b, atol=1e-4, rtol=1e-4)
                                        for a, b in zip(got, want)):
        raise ExportUnsupported("exported graph does not reproduce the module")
    return g, want
