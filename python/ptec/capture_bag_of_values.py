"""F.embedding_bag(ids, weight, ...) whose weight is computed from the input
and whose ids are constants (issue 15): no table to quantize ahead of
time, but each bag is a fixed combination of the weight's rows. (A
constant weight is nn.EmbeddingBag's lookup: capture_calls'
FUNCTIONAL_MODULES.)

mode "sum" / "mean": the bags are a constant matrix M [B, V] (M[b, id]
the id's per-sample weight, or 1 / the bag's count, summed over repeats)
times the weight [V, D], as one int8 batch matmul: weight^T [1, D, V] by
M^T [1, V, B] (a constant right operand, exact on its grid for 0/1 and
1/count), viewed and permuted to [B, D]. mode "max": each bag's rows as
one-wide slices joined, the maximum over them (a max pool), the bags
joined. padding_idx's ids are left out (and out of the mean's count),
as torch; an empty bag is zeros."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F

from .capture_calls import _meta_shape, _reduce_max_nodes
from .ir import Node

_NAMES = ("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
          "per_sample_weights", "include_last_offset", "padding_idx")


def _constant(a, by_name):
    node = by_name.get(a.name) if isinstance(a, torch.fx.Node) else None
    return None if node is None or node.op != "constant" else np.asarray(node.attrs["value"])


def bags(ids: np.ndarray, offsets, weights, include_last: bool):
    """[(ids of bag b, their per-sample weights)] as torch groups them, or None."""
    if ids.ndim == 2:
        if offsets is not None:
            return None
        w = np.ones(ids.shape) if weights is None else weights.reshape(ids.shape)
        return [(ids[b], w[b]) for b in range(ids.shape[0])]
    if ids.ndim != 1 or offsets is None or offsets.ndim != 1 or not len(offsets):
        return None
    w = np.ones(ids.shape) if weights is None else weights.reshape(ids.shape)
    ends = list(offsets[1:]) + ([] if include_last else [len(ids)])
    starts = list(offsets[:len(ends)])
    return [(ids[s:e], w[s:e]) for s, e in zip(starts, ends)]


def bag_of_values_nodes(fn, ins, by_name) -> Optional[List[Node]]:
    """The nodes of F.embedding_bag of a computed weight by constant ids and
    offsets (and per_sample_weights for mode sum), else None."""
    if fn.op != "call_function" or fn.target is not F.embedding_bag:
        return None
    args = dict(zip(_NAMES, fn.args))
    args.update(fn.kwargs)
    weight = args.get("weight")
    if set(args) - set(_NAMES) or not isinstance(weight, torch.fx.Node) or _constant(weight, by_name) is not None:
        return None
    ids = _constant(args.get("input"), by_name)
    offsets = None if args.get("offsets") is None else _constant(args["offsets"], by_name)
    sample = None if args.get("per_sample_weights") is None else _constant(args["per_sample_weights"], by_name)
    mode, padding = args.get("mode", "mean"), args.get("padding_idx")
    shape, out = _meta_shape(weight), _meta_shape(fn)
    if ids is None or (args.get("offsets") is not None and offsets is None) \
            or (args.get("per_sample_weights") is not None and (sample is None or mode != "sum")) \
            or args.get("max_norm") is not None or mode not in ("sum", "mean", "max") \
            or shape is None or len(shape) != 2 or out is None:
        return None
    groups = bags(ids.astype(np.int64), None if offsets is None else offsets.astype(np.int64), sample,
                  bool(args.get("include_last_offset")))
    if groups is None or ((ids < 0) | (ids >= shape[0])).any():
        return None
    if padding is not None:
        padding %= shape[0]
        groups = [(i[i != padding], w[i != padding]) for i, w in groups]
    name, n_bags, (rows, dims) = fn.name, len(groups), shape
    if mode == "max":
        nodes, picked = [], []
        for b, (i, _) in enumerate(groups):
            if not len(i):                  # torch's zeros: row 0 times the number 0 (a LUT)
                nodes += [Node(f"{name}__b{b}_r", "slice", [weight.name], dict(dim=0, start=0, end=1)),
                          Node(f"{name}__b{b}_0", "constant", [], dict(value=np.array(0.0, np.float32))),
                          Node(f"{name}__b{b}", "mul", [f"{name}__b{b}_r", f"{name}__b{b}_0"])]
                picked.append(nodes[-1].name)
                continue
            parts = [f"{name}__b{b}_r{k}" for k in range(len(i))]
            nodes += [Node(p, "slice", [weight.name], dict(dim=0, start=int(r), end=int(r) + 1))
                      for p, r in zip(parts, i)]
            if len(parts) > 1:
                nodes.append(Node(f"{name}__b{b}", "cat", parts, dict(dim=0)))
                nodes += _reduce_max_nodes(f"{name}__b{b}_max", nodes[-1].name, [len(parts), dims], [0], True, False)
            picked.append(nodes[-1].name)
        nodes.append(Node(name, "cat", picked, dict(dim=0)) if len(picked) > 1 else Node(name, "identity", picked))
        return nodes
    m = np.zeros((n_bags, rows), np.float32)
    for b, (i, w) in enumerate(groups):
        np.add.at(m[b], i, w / len(i) if mode == "mean" and len(i) else w)
    return [
        Node(f"{name}__wt", "permute", [weight.name], dict(dims=[1, 0])),
        Node(f"{name}__t", "reshape", [f"{name}__wt"], dict(target_shape=[1, dims, rows])),
        Node(f"{name}__m", "constant", [], dict(value=m.T[None].copy())),
        Node(f"{name}__p", "matmul", [f"{name}__t", f"{name}__m"]),
        Node(f"{name}__v", "reshape", [f"{name}__p"], dict(target_shape=[dims, n_bags])),
        Node(name, "permute", [f"{name}__v"], dict(dims=[1, 0]))]
