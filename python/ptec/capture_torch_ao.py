"""Models torch.ao.quantization has already processed: prepare() /
prepare_fx() (observers, or FakeQuantize for QAT), convert() / convert_fx()
/ quantize_dynamic() (nn.quantized.* modules, quantized tensors,
quantize_per_tensor calls). ptec quantizes a float model itself, from its
own calibration; these carry torch's quantization instead, which ptec
would trace as observers' statistics code or quantized kernels. Refused in
one line naming the first such module and asking for the float model.

QuantStub / DeQuantStub in a float model (never prepared) are identity in
forward, and so is fx's trace of them: they run. So does FloatFunctional
(and FXFloatFunctional), which torchvision's quantizable models hold
unprepared (quantize=False): its add / mul / cat / add_relu / add_scalar /
mul_scalar are the float torch ops followed by an nn.Identity until
prepare() swaps that for an observer (refused below, as an observer);
QFunctional, convert()'s form, stays refused."""
from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn

ASK = "ptec quantizes the float model itself: give it the model before torch.ao.quantization's prepare/convert"

# the module paths of torch's quantized, reference-quantized and QAT modules (ao and legacy torch.nn spellings)
_QUANTIZED_PATHS = ("torch.ao.nn.quantized", "torch.nn.quantized", "torch.ao.nn.intrinsic.quantized",
                    "torch.nn.intrinsic.quantized", "torch.ao.nn.qat", "torch.nn.qat", "torch.ao.nn.intrinsic.qat",
                    "torch.nn.intrinsic.qat", "torch.ao.nn.quantizable", "torch.nn.quantizable")
_QUANTIZE_CALLS = tuple(getattr(torch, n) for n in ("quantize_per_tensor", "quantize_per_channel",
                                                     "quantize_per_tensor_dynamic") if hasattr(torch, n))


def _float_functionals() -> tuple:
    try:
        from torch.ao.nn.quantized import FloatFunctional, FXFloatFunctional
    except ImportError:             # an older torch: the legacy spelling
        try:
            from torch.nn.quantized import FloatFunctional, FXFloatFunctional
        except ImportError:
            return ()
    return FloatFunctional, FXFloatFunctional


def _observer_bases() -> tuple:
    try:
        from torch.ao.quantization import FakeQuantizeBase, ObserverBase
    except ImportError:             # a torch without torch.ao.quantization: nothing to find
        return ()
    return ObserverBase, FakeQuantizeBase


def _where(name: str, m: nn.Module) -> str:
    cls = f"{type(m).__module__}.{type(m).__name__}"
    return f"{'the model' if not name else 'module ' + name} ({cls})"


def torch_ao_refusal(model: nn.Module) -> Optional[str]:
    """The one-line refusal for a model torch.ao.quantization prepared or converted, else None."""
    bases = _observer_bases()
    floats = _float_functionals()
    for name, m in model.named_modules():
        if bases and isinstance(m, bases):
            return f"{_where(name, m)} is an observer torch.ao.quantization's prepare inserted: {ASK}"
        path = type(m).__module__ or ""
        # the exact class: a subclass (QFunctional is not one) may compute otherwise
        if any(path == p or path.startswith(p + ".") for p in _QUANTIZED_PATHS) and type(m) not in floats:
            return f"{_where(name, m)} is a module torch.ao.quantization made (convert / prepare_qat): {ASK}"
        for k, t in list(m.named_parameters(recurse=False)) + list(m.named_buffers(recurse=False)):
            if isinstance(t, torch.Tensor) and t.is_quantized:
                where = ".".join(p for p in (name, k) if p)
                return f"tensor {where} is quantized ({t.dtype}), made by torch.ao.quantization: {ASK}"
        if isinstance(m, torch.fx.GraphModule) and _QUANTIZE_CALLS:
            for fn in m.graph.nodes:
                if fn.op == "call_function" and fn.target in _QUANTIZE_CALLS:
                    return f"{fn.name} ({fn.target.__name__}) is a call torch.ao.quantization's convert_fx made: {ASK}"
    return None
