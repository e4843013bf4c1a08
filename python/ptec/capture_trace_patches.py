"""Every change ptec makes to torch (and to the model) while torch.fx traces
a forward, in one place.

fx records calls on Proxies; a few calls torch makes eagerly would freeze a
value, bypass the trace or raise before fx sees them. Each patch below
lasts for one trace and is undone when it ends, in reverse order, also on
an error.

The patches are process-wide, so traces are serialized: COMPILE_LOCK (a
re-entrant lock, also held by compiler.compile_model for a whole compile)
is held while they are on, and a trace started inside another trace of
the same thread (a compile called from a model's forward while it is
traced) is refused in one line.
"""
from __future__ import annotations

import contextlib
import threading
from typing import List

import torch

from .capture_buffer_state import binding_names
from .capture_call_forms import unbound_methods_traced
from .capture_distributions import argument_checks_skipped
from .capture_isinstance import isinstance_as_torch
from .capture_item import tensors_of_traced_values
from .capture_made_tensors import factories_counted
from .capture_packed_sequences import patched as packing_patched
from .capture_random import recording_random_calls
from .capture_table_lookup import tables_indexed_by_proxies
from .capture_type_checks import type_as_torch
from .capture_tracer import TracedControlError

COMPILE_LOCK = threading.RLock()    # one compile, one trace at a time in a process (module doc)
_tracing = threading.local()        # .on: this thread is inside trace_patches


@contextlib.contextmanager
def trace_patches(tracer, model: torch.nn.Module, states: bool, unchecked: List[str]):
    """unchecked collects the torch.distributions checks skipped (for the
    compile note)."""
    if getattr(_tracing, "on", False):
        raise TracedControlError("a trace started while another trace runs in this thread (a compile called from a "
                           "model's forward?): ptec's trace patches are process-wide; compile is not reentrant")
    with COMPILE_LOCK, contextlib.ExitStack() as stack:
        _tracing.on = True
        stack.callback(setattr, _tracing, "on", False)
        # torch.rand(2, 3): a call in the program, not a frozen draw; a
        # random op's shadow value draws nothing from the model's generator
        stack.enter_context(recording_random_calls(tracer))
        stack.enter_context(torch.random.fork_rng(devices=[]))
        # pack_padded_sequence / pad_packed_sequence / pad_sequence
        stack.enter_context(packing_patched(model))
        # torch.tensor / as_tensor of an item() or tolist() read per input
        stack.enter_context(tensors_of_traced_values(tracer))
        if states:
            # self.buf = ... in forward: a state write, named by its path
            stack.enter_context(binding_names(tracer))
        # torch.Tensor.add(x, y) and other unbound-method spellings
        stack.enter_context(unbound_methods_traced())
        # a constant table (a buffer, a tensor literal) indexed by a Proxy
        stack.enter_context(tables_indexed_by_proxies())
        # torch.distributions' validate_args, which reads values
        stack.enter_context(argument_checks_skipped(unchecked))
        # torch.zeros(2, 8) in forward: counted, a node when a traced value writes it (capture_made_tensors)
        stack.enter_context(factories_counted(tracer))
        # isinstance(x, torch.Tensor) / isinstance(self.cell, nn.LSTMCell) in the model's code: torch's answer
        stack.enter_context(isinstance_as_torch())
        # type(x) is torch.Tensor / type(self.weight) is nn.Parameter in the model's code: torch's answer
        stack.enter_context(type_as_torch(model))
        yield
