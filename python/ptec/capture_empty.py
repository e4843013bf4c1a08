"""Layers with a zero-size weight (nn.Linear(8, 0), nn.Linear(0, 10): what
nn.AdaptiveLogSoftmaxWithLoss makes for a cluster whose projection size
in_features // div_value**k is 0).

torch computes them literally: a layer without output features gives an
empty tensor, one without input features sums nothing, so each row of its
result is the bias (zeros without one) whatever the input. ptec keeps no
zero-size tensor: the second is that constant, the first is dropped once
nothing reads it. An empty value still read (a model output, a cat) is
refused in one line naming the layer.

Also x.new_empty(...) / torch.empty_like(x) whose every element the model
writes before reading (AdaptiveLogSoftmaxWithLoss.log_prob fills its
output slice by slice): its undefined contents reach no output, so it is a
constant of zeros. Checked on the example: the outputs with the tensor
all NaN equal those with it all zeros; otherwise it stays refused."""
import numpy as np
import torch

from .ir import Graph, evaluate, origin

# ops whose attrs["weight"] is [out, in, ...]
_WEIGHTED = ("linear", "conv2d", "conv_transpose2d", "conv1d", "conv3d")


def _empty_weight(n) -> bool:
    w = n.attrs.get("weight") if n.op in _WEIGHTED else None
    return isinstance(w, np.ndarray) and w.size == 0


def without_zero_size_layers(g: Graph, error) -> None:
    """Rewrites g (shapes inferred) in place; error(message) for an empty
    value something reads."""
    if not any(_empty_weight(n) for n in g.nodes):
        return
    for n in g.nodes:
        if n.op == "linear" and _empty_weight(n) and n.attrs["weight"].shape[1] == 0 and 0 not in n.shape:
            bias = n.attrs.get("bias")
            bias = np.zeros(n.shape[-1], np.float32) if bias is None else np.asarray(bias, np.float32)
            n.op, n.inputs = "constant", []
            n.attrs = dict(value=np.ascontiguousarray(np.broadcast_to(bias, n.shape), np.float32),
                           source=n.attrs.get("source"))
    dropped = True
    while dropped:              # the empty layers and what only they read
        dropped = False
        read = {i for m in g.nodes for i in m.inputs} | set(g.outputs)
        for n in list(g.nodes):
            if n.name not in read and n.op not in ("input", "state") and (_empty_weight(n) or 0 in (n.shape or [1])):
                g.remove(n.name)
                dropped = True
    for n in g.nodes:
        if _empty_weight(n) or (n.op != "input" and 0 in (n.shape or [1])):
            raise error(f"{origin(n)} gives an empty tensor {'x'.join(map(str, n.shape))}, which ptec does not "
                        "hold (zero-size tensors): drop the layer, or read none of its output")


def undefined_never_read(g: Graph, example_inputs) -> None:
    """Each new_empty / empty_like node (refused for its undefined contents)
    whose contents reach no output: a constant of zeros (g's shapes inferred)."""
    for n in g.nodes:
        if n.op != "unsupported" or n.attrs.get("what") not in ("new_empty", "empty_like") or not n.shape:
            continue
        saved = (n.op, n.inputs, n.attrs)
        outs = []
        for fill in (0.0, float("nan")):
            n.op, n.inputs = "constant", []
            n.attrs = dict(value=np.full(n.shape, fill, np.float32), source=saved[2].get("source"))
            try:
                outs.append(evaluate(g, example_inputs))
            except Exception:       # noqa: BLE001 - the graph needs more than this: left as it was
                outs = []
                break
        same = len(outs) == 2 and all(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                                      and torch.equal(a, b) for a, b in zip(*outs))
        if same:
            n.attrs["value"] = np.zeros(n.shape, np.float32)
        else:
            n.op, n.inputs, n.attrs = saved
