"""The traced program checked against the model's own forward on the
example inputs (probe: trace fidelity, the safety net).

torch.fx records only what reaches its proxies: Python that asks about a
traced value in a way no proxy can answer (`type(x) is torch.Tensor`, an
`id()`, a check of a real tensor's contents, a write into a tensor fx
saw as a constant) changes what the forward does without leaving a trace,
and the program compiled from the trace is silently another function. So
once capture has made the traced graph plain torch ops (after the
in-place writes are out-of-place: capture.py's _fx_graph), it is run on
the example inputs and its float outputs compared with torch's outputs
of the model; a difference beyond float rounding (1% of the output's
range) or another shape is refused in one line naming the output, rather
than compiled.

Not checked: a model with random ops (the model itself gives other
outputs from another random stream), one that keeps or writes state
across runs (--stateful, buffers written in forward: the traced program
reads state nodes), the elements torch gives as NaN or inf (ptec's
stand-ins define a fully masked attention row), and integer or bool
outputs (an argmax of near-equal floats may flip legitimately); when
either run fails, the later checks decide (capture_own_failure)."""
from __future__ import annotations

from typing import List, Optional

import torch
import torch.fx

from .capture_own_failure import _reference_outputs, _tensors
from .capture_tracer import restore_buffers, snapshot_buffers

# beyond float rounding: a fraction of the output's range (the silent errors this catches are whole values)
RELATIVE = 1e-2

WHY = ("Python code the trace cannot see (isinstance / type checks on traced values, writes into tensors made in "
       "forward, a tensor's contents read in Python) changed what runs: write that code with tensor ops")


def _run(gm: torch.fx.GraphModule, example_inputs) -> Optional[List[torch.Tensor]]:
    saved = snapshot_buffers(gm)
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            return _tensors(gm(*[x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]))
    except Exception:               # noqa: BLE001 - the graph does not run here: later checks decide
        return None
    finally:
        restore_buffers(gm, saved)


def _plain_outputs(model, example_inputs) -> Optional[List[torch.Tensor]]:
    """torch's outputs of a copy of the model as torch runs it (no function mode), else None."""
    from .model_copy import model_copy
    try:
        runner = model_copy(model)
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            return _tensors(runner(*[x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]))
    except Exception:               # noqa: BLE001 - no reference: nothing refused
        return None


def _differs(got: torch.Tensor, want: torch.Tensor) -> Optional[str]:
    if list(got.shape) != list(want.shape):
        return f"shape {list(got.shape)}, torch's {list(want.shape)}"
    if not (want.is_floating_point() and got.is_floating_point()) or want.numel() == 0:
        return None
    g, w = got.double(), want.double()
    # where torch's value is NaN / inf (a fully masked attention row) ptec's stand-ins may define one:
    # compared where torch's is finite
    finite = torch.isfinite(w)
    if bool((finite & ~torch.isfinite(g)).any()):
        return "non-finite values where torch's are finite"
    if not bool(finite.any()):
        return None
    span = float(w[finite].max() - w[finite].min())
    scale = max(span, float(w[finite].abs().max()), 1e-6)
    worst = float((g[finite] - w[finite]).abs().max())
    if worst > RELATIVE * scale:
        return f"values up to {worst:.3g} off (output range {span:.3g})"
    return None


def trace_differs_refusal(gm: torch.fx.GraphModule, model: torch.nn.Module, example_inputs,
                          states=None, stateful: bool = False):
    """(the one-line refusal or None, torch's outputs of the model when computed)."""
    if states or stateful or model is None:
        return None, None
    want = _reference_outputs(model, example_inputs)
    if want is None:
        return None, None
    got = _run(gm, example_inputs)
    if got is None or len(got) != len(want):
        return None, want
    for k, (g, w) in enumerate(zip(got, want)):
        why = _differs(g, w)
        if why is None:
            continue
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0x5EED)       # another stream: a random model's own two runs differ too
            again = _reference_outputs(model, example_inputs)
        if again is None or len(again) != len(want) or any(_differs(a, b) for a, b in zip(again, want)):
            return None, want
        # the reference runs under a TorchFunctionMode (dropping generator= arguments), which turns off
        # torch's inference fast path of nn.MultiheadAttention / TransformerEncoderLayer (it reads a 0/1
        # float key padding mask as a bool): the forward as torch runs it, without the mode, decides
        plain = _plain_outputs(model, example_inputs)
        if plain is None or len(plain) != len(got) or not any(_differs(a, b) for a, b in zip(got, plain)):
            return None, want
        return (f"the model's forward ({type(model).__name__}): the traced program differs from the model's "
                f"forward on the example inputs at output {k} ({why}): {WHY}"), want
    return None, want
