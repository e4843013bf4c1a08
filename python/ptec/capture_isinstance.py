"""isinstance in the model's own code answered as torch would while fx
traces (probe: trace fidelity).

fx hands the forward Proxies, and ptec swaps nn.LSTM / GRU / RNN, their
cells, MultiheadAttention and the Transformer modules for stand-ins
(capture_modules). Python in the forward that asks `isinstance(x,
torch.Tensor)` / `torch.is_tensor(x)` of a traced value, or
`isinstance(self.cell, nn.LSTMCell)` of a replaced module, got False,
and the branch torch takes was silently dropped (the program returned
its input: 129 output steps off).

For the trace, builtins.isinstance answers True where torch would: a
proxy whose value the tracer knows (capture_tracer's shadow values) is an
instance of what that value is an instance of, and a stand-in is an
instance of the class of the module it stands for. Only for calls made
from the model's code (its files, torchvision's, ptec's own models):
fx's and ptec's own isinstance checks (`isinstance(a, torch.Tensor)` in
fx's create_arg, `isinstance(m, LSTMLayer)`) keep their answers, which is
why this is not a `__class__` property on the proxy (fx would make a
proxy argument a tensor constant, and torch's C argument parser would
take it for a tensor). It only turns False into True; `type(x) is
torch.Tensor` cannot be answered this way (docs/aot.md says so).
"""
from __future__ import annotations

import builtins
import contextlib
import os
import sys

import torch
import torch.fx

from .capture_tracer import _PTEC_DIR, _PTEC_MODELS, _TORCH_DIR

_isinstance = builtins.isinstance
_IS_TENSOR_CODE = torch.is_tensor.__code__     # torch.is_tensor(x): its caller is the model's code


def _model_code(filename: str) -> bool:
    path = filename if filename.startswith("<") else os.path.abspath(filename)
    if path.startswith(_PTEC_MODELS):
        return True
    return not path.startswith((_PTEC_DIR, _TORCH_DIR))


# _model_code of the files callers were in, kept for the names whose answer
# does not depend on the working directory (absolute ones, "<...>")
_MODEL_FILES = {}


def _from_model_code(frame) -> bool:
    """Whether the isinstance call was made in `frame` (the caller's; for
    torch.is_tensor, its caller's) from the model's code."""
    if frame.f_code is _IS_TENSOR_CODE and frame.f_back is not None:
        frame = frame.f_back
    filename = frame.f_code.co_filename
    answer = _MODEL_FILES.get(filename)
    if answer is None:
        answer = _model_code(filename)
        if filename.startswith("<") or os.path.isabs(filename):
            _MODEL_FILES[filename] = answer
    return answer


def _stands_for(obj):
    """What the traced object is to the model: a proxy's known value, a
    stand-in's original module, else None."""
    if _isinstance(obj, torch.fx.Proxy):
        tracer = obj.tracer
        known = getattr(tracer, "known", None)
        if known is not None and getattr(tracer, "_values", None) is not None and known(obj.node):
            return tracer.value(obj.node)
        return None
    if _isinstance(obj, torch.nn.Module):
        return obj.__dict__.get("_ptec_original")
    return None


def _traced_isinstance(obj, cls):
    # The common calls decide at the first two tests: what is an instance,
    # and anything but a proxy or a module (torch's and fx's own checks of
    # tensors, tuples, nodes). A module other than a stand-in is decided
    # without the caller's frame, and a proxy's caller is asked for before
    # its shadow value, so fx's and ptec's own checks of proxies pay one
    # look-up of their file.
    if _isinstance(obj, cls):
        return True
    if not _isinstance(obj, (torch.fx.Proxy, torch.nn.Module)):
        return False
    if not _isinstance(obj, torch.fx.Proxy) and "_ptec_original" not in obj.__dict__:
        return False
    if not _from_model_code(sys._getframe(1)):
        return False
    stands_for = _stands_for(obj)
    if stands_for is None:
        return False
    return _isinstance(stands_for, cls)


@contextlib.contextmanager
def isinstance_as_torch():
    """builtins.isinstance answering for proxies and stand-ins (module doc), for one trace."""
    builtins.isinstance = _traced_isinstance
    try:
        yield
    finally:
        builtins.isinstance = _isinstance
