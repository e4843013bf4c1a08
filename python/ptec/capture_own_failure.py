"""A captured graph that fails on the example inputs while torch runs the
model on them: ptec's own rewrite failed (a stand-in, a lowering form), so
the refusal is ptec's, naming the node (its module path and class, or its
call) that failed, never "the model fails on its example inputs"."""
from __future__ import annotations

import math
from typing import Optional

import torch

from .capture_tracer import eager_failure
from .ir import eval_node, input_dtype, origin
from .model_copy import model_copy


def failing_node(g, example_inputs):
    """The first node of g whose evaluation raises on the example inputs, else None."""
    env = {name: torch.as_tensor(x, dtype=input_dtype(g.node(name))) for name, x in zip(g.inputs, example_inputs)}
    for n in g.nodes:
        if n.op == "input":
            continue
        try:
            env[n.name] = eval_node(n, [env[i] for i in n.inputs])
        except Exception:               # noqa: BLE001 - the one looked for
            return n
    return None


def own_failure(g, example_inputs, model, e: BaseException) -> Optional[str]:
    """The one-line refusal when torch runs `model` on the example inputs
    but g fails on them (e: g's error), else None (the model's own failure)."""
    if model is None or eager_failure(model, example_inputs) is not None:
        return None
    n = failing_node(g, example_inputs)
    shapes = ", ".join("x".join(map(str, x.shape)) for x in example_inputs)
    first = (str(e).strip().splitlines() or [""])[0]
    where = origin(n) if n is not None else "the captured graph"
    if n is None or not n.attrs.get("source") or " (nn." not in n.attrs["source"]:
        where += f" in {type(model).__name__}"         # a stand-in's own op: the model that holds it
    read = getattr(g, "item_readers", {}).get((n.attrs.get("source") or "").split(" ")[0]) if n is not None else None
    if read:                # x[:, :x.argmax().item()]: the number is the input's (capture_item)
        from .capture_tracer import NUMBER_FIX
        return (f"{where}: it is given a number read with {read}, which depends on the input's values, known only "
                f"when the program runs ({type(e).__name__}: {first}): {NUMBER_FIX}")
    return (f"{where}: ptec cannot capture it on inputs {shapes} (torch runs the model; ptec's rewrite of it "
            f"fails: {type(e).__name__}: {first})")


def _tensors(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _tensors(x)]
    if isinstance(v, dict):             # in insertion order, as capture_outputs flattens it
        return [t for x in v.values() for t in _tensors(x)]
    return []


class _WithoutGenerators(torch.overrides.TorchFunctionMode):
    """Torch calls without their torch.Generator arguments (generator=g,
    torch.poisson(rates, g)): a user's generator never advances for ptec's
    reference run (capture_random drops them the same way while tracing)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = {k: v for k, v in (kwargs or {}).items() if not isinstance(v, torch.Generator)}
        return func(*(a for a in args if not isinstance(a, torch.Generator)), **kwargs)


def _reference_outputs(model, example_inputs):
    """torch's output tensors of a copy of `model` on the example inputs, the
    caller's random streams untouched (the global one forked, a generator=
    argument dropped), else None when it fails."""
    try:
        runner = model_copy(model)
        with torch.no_grad(), torch.random.fork_rng(devices=[]), _WithoutGenerators():
            return _tensors(runner(*[x.clone() for x in example_inputs]))
    except Exception:                   # noqa: BLE001 - the caller compares nothing
        return None


def wrong_shape(g, example_inputs, model, eager=None) -> Optional[str]:
    """The one-line refusal when an output of g holds torch's number of
    elements in another shape than torch's output of `model` on the example
    inputs (a rewrite that lost or added a dimension must never give a
    silently wrong shape), else None. eager: that output when the capture
    ran the model already (capture_export's check), else it runs here."""
    if model is None:
        return None
    want = _tensors(eager) if eager is not None else _reference_outputs(model, example_inputs)
    if want is None:                    # no eager reference: nothing to compare
        return None
    if len(want) != len(g.outputs):
        return None
    for k, (t, name) in enumerate(zip(want, g.outputs)):
        got = list(g.node(name).shape or [])
        # the same elements in another shape (a size-1 dim lost or added); a selection's
        # planned bound (x[mask]: the most it can select) differs in size and is no such case
        if t.dim() > 0 and got != list(t.shape) and math.prod(got) == t.numel():
            return (f"{origin(g.node(name))}: ptec's capture gives output {k} the shape {got}, torch gives "
                    f"{list(t.shape)}; refused rather than run with a wrong shape")
    return None
