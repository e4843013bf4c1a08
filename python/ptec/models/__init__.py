"""The ptec model zoo: name -> factory, input shape and calibration data.

`load_model(spec)` accepts a zoo name or `path/to/file.py:factory`. A user
factory returns an nn.Module (with an `input_shape` attribute: one shape,
or a list of shapes, one per input; or `example_inputs`), or a tuple (module, example_inputs). The module may also
define `calibration_data(n)` returning a list of input tuples.
"""
from __future__ import annotations

import functools
import importlib.util
import inspect
import os
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn

from . import synthetic
from .common import class_targets, fit_linear_head, normalize_batch_norm, randomize_batch_norm


@dataclass
class ZooEntry:
    name: str
    description: str
    factory: Callable[[], nn.Module]
    input_shape: Tuple[int, ...]
    calibration: Optional[Callable[[int, int], List[tuple]]] = None


def _random_inputs(shape, scale=1.0):
    def gen(n: int, seed: int = 0) -> List[tuple]:
        g = torch.Generator().manual_seed(1000 + seed)
        return [(torch.randn(shape, generator=g) * scale,) for _ in range(n)]
    return gen


def _ds_cnn():
    from .ds_cnn import DSCNN
    return DSCNN()


def _mbv1():
    from .mobilenet_v1 import MobileNetV1
    return MobileNetV1(0.25, 2)


def _resnet8():
    from .resnet8 import ResNet8
    return ResNet8()


def _ae():
    from .autoencoder import FCAutoencoder
    return FCAutoencoder()


def _mbv2():
    from .mobilenet_v2 import MobileNetV2
    return MobileNetV2(0.35, 2)


@dataclass
class SyntheticTask:
    """A zoo model's synthetic task: `data(n, seed)` gives (x, labels); `head`
    names the final linear layer fitted to the labels (None: an autoencoder,
    whose output layer is fitted to reconstruct its input). `bn_shift` raises
    every batch-norm bias (common.normalize_batch_norm): the deep MobileNets
    need it to stay stable under int8 rounding, the shallow models fit their
    task better without it. `samples`: how many task inputs the fit sees.
    `rounding`: weight of the int8-rounding penalty in the head's fit
    (common.fit_linear_head; 0: none)."""
    build: Callable[[], nn.Module]
    data: Callable[[int, int], Tuple[torch.Tensor, torch.Tensor]]
    head: Optional[str]
    bn_shift: float = 0.0
    samples: int = 256
    rounding: float = 0.0


FIT_SEED, TEST_SEED = 1, 2          # calibration draws use seeds 1000 + k

TASKS = {
    # ds_cnn and resnet8 fit on more inputs (and ds_cnn with a batch-norm
    # shift of 1) so that their float decisions are not near ties that int8
    # rounding flips: with 256 inputs, 4.5 % (ds_cnn) and 2.7 % of them
    # differed between float and int8, now 1.2 % and 0.5 %
    "ds_cnn": SyntheticTask(_ds_cnn, synthetic.mfcc_frames, "fc", 1.0, 2048),
    "mobilenet_v1_025": SyntheticTask(_mbv1, synthetic.colour_scenes, "fc", 2.0, 128),
    "resnet8": SyntheticTask(_resnet8, lambda n, s: synthetic.gratings(n, s, 3, 32, 10), "fc",
                             samples=1024),
    "fc_autoencoder": SyntheticTask(_ae, synthetic.machine_frames, None, 2.0),
    # MobileNetV2's 17 random blocks move its features under int8 rounding by
    # a good part of the class signal: its head is fitted against that
    # rounding, on more inputs, and its scenes' light is at least 0.6
    "mobilenet_v2_035": SyntheticTask(_mbv2, lambda n, s: synthetic.colour_scenes(n, s, 0.6),
                                      "classifier.1", 2.0, 512, rounding=1.0),
}


@functools.lru_cache(maxsize=None)
def _fitted_weights(name: str):
    """Random convolutions with batch-norm statistics taken from task inputs
    and the last layer fitted in closed form.
    Computed once per process: tests load zoo models many times."""
    task = TASKS[name]
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = randomize_batch_norm(task.build(), 0)
        x, y = task.data(task.samples, FIT_SEED)
        normalize_batch_norm(model, x, task.bn_shift)
        if task.head is not None:
            classes = model.get_submodule(task.head).out_features
            fit_linear_head(model, task.head, x, class_targets(y, classes), rounding=task.rounding)
        else:               # an autoencoder: the output layer reconstructs the input
            fit_linear_head(model, "out", x, x, rounding=task.rounding)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _fitted(name: str):
    def make():
        model = TASKS[name].build()
        model.load_state_dict(_fitted_weights(name))
        return model.eval()
    return make


def _task_inputs(name: str):
    def gen(n: int, seed: int = 0) -> List[tuple]:
        x, _ = TASKS[name].data(n, 1000 + seed)
        return [(x[i:i + 1],) for i in range(n)]
    return gen


def task_test_set(name: str, n: int = 200) -> Tuple[np.ndarray, np.ndarray]:
    """Held-out (x, labels) of a zoo model's task, as numpy arrays."""
    if name == "digits_cnn":
        from .digits import digits_dataset
        _, _, xte, yte = digits_dataset()
        return xte, yte
    if name == "tiny_attention":
        from .tiny_attention import synthetic_sequences
        x, y = synthetic_sequences(n, TEST_SEED + 500)
        return x.numpy(), y.numpy()
    x, y = TASKS[name].data(n, TEST_SEED)
    return x.numpy(), y.numpy()


CLASSIFIERS = ("ds_cnn", "mobilenet_v1_025", "resnet8", "mobilenet_v2_035", "tiny_attention",
               "digits_cnn")


def _tiny_attention():
    from .tiny_attention import train_tiny_attention
    return train_tiny_attention()


def _tiny_attention_calibration(n: int, seed: int = 0) -> List[tuple]:
    from .tiny_attention import calibration
    return calibration(n, seed)


def _digits():
    from .digits import train_digits
    return train_digits()


def _digits_calibration(n: int, seed: int = 0) -> List[tuple]:
    from .digits import digits_dataset
    xtr = digits_dataset()[0]
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(xtr), size=min(n, len(xtr)), replace=False)
    return [(torch.from_numpy(xtr[i:i + 1]),) for i in idx]


ZOO = {
    "ds_cnn": ZooEntry("ds_cnn", "DS-CNN keyword spotter, 1x1x49x10 MFCC, 12 classes",
                       _fitted("ds_cnn"), (1, 1, 49, 10), _task_inputs("ds_cnn")),
    "mobilenet_v1_025": ZooEntry("mobilenet_v1_025",
                                 "MobileNetV1-0.25 visual wake words, 1x3x96x96, 2 classes",
                                 _fitted("mobilenet_v1_025"), (1, 3, 96, 96),
                                 _task_inputs("mobilenet_v1_025")),
    "resnet8": ZooEntry("resnet8", "ResNet-8 CIFAR-10, 1x3x32x32, 10 classes",
                        _fitted("resnet8"), (1, 3, 32, 32), _task_inputs("resnet8")),
    "fc_autoencoder": ZooEntry("fc_autoencoder", "FC autoencoder (anomaly detection), 640 inputs",
                               _fitted("fc_autoencoder"), (1, 640), _task_inputs("fc_autoencoder")),
    "mobilenet_v2_035": ZooEntry("mobilenet_v2_035", "MobileNetV2-0.35, 1x3x96x96, 2 classes",
                                 _fitted("mobilenet_v2_035"), (1, 3, 96, 96),
                                 _task_inputs("mobilenet_v2_035")),
    "tiny_attention": ZooEntry("tiny_attention",
                               "single-head attention + GELU MLP, trained on synthetic 16x12 "
                               "sequences, 6 classes",
                               _tiny_attention, (1, 16, 12), _tiny_attention_calibration),
    "digits_cnn": ZooEntry("digits_cnn", "small CNN trained on sklearn 8x8 digits, 10 classes",
                           _digits, (1, 1, 8, 8), _digits_calibration),
}


@dataclass
class LoadedModel:
    name: str
    module: nn.Module
    example_inputs: List[torch.Tensor]
    calibration: Callable[[int, int], List[tuple]]
    calibration_is_noise: bool = False     # no data of the model's own: random inputs


class ModelLoadError(ValueError):
    """A model spec that names no usable model; the message is one line."""


def _import_file(path: str):
    mod_spec = importlib.util.spec_from_file_location("ptec_user_model", path)
    if mod_spec is None or mod_spec.loader is None:
        raise ModelLoadError(f"model file {path}: not a Python module (give a .py file)")
    mod = importlib.util.module_from_spec(mod_spec)
    try:
        mod_spec.loader.exec_module(mod)
    except SyntaxError as e:
        raise ModelLoadError(f"model file {path}: syntax error at line {e.lineno}: {e.msg} "
                             "(fix the file)") from e
    except Exception as e:          # noqa: BLE001 - whatever the user's module raises
        raise ModelLoadError(f"model file {path}: raised {type(e).__name__} while importing: "
                             f"{e} (fix the file; --debug shows the traceback)") from e
    return mod


def _call_factory(spec: str, path: str, factory_name: str):
    mod = _import_file(path)
    factory = getattr(mod, factory_name, None) if factory_name else None
    if not callable(factory):
        defined = sorted(k for k, v in vars(mod).items()
                         if callable(v) and getattr(v, "__module__", None) == mod.__name__)
        raise ModelLoadError(f"model file {path}: no function {factory_name!r} (give "
                             f"{path}:FACTORY; it defines: {', '.join(defined) or 'nothing'})")
    try:
        return factory()
    except Exception as e:          # noqa: BLE001
        raise ModelLoadError(f"factory {spec} raised {type(e).__name__}: {e} "
                             "(fix the factory; --debug shows the traceback)") from e


def _noise_like(e: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """A random input of e's shape and dtype (the CLI's calibration when the
    model file gives none): standard normal float32 for a float example
    (rounded to float16 / bfloat16 for such an example),
    random bools for a bool one, the whole range for uint8 / int8, and for
    other integers (token ids) values in [min(0, lowest), highest] of the
    example's own values."""
    if e.dtype == torch.bool:
        return torch.rand(e.shape, generator=g) < 0.5
    if e.dtype in (torch.uint8, torch.int8):
        info = torch.iinfo(e.dtype)
        return torch.randint(info.min, info.max + 1, tuple(e.shape), generator=g, dtype=e.dtype)
    if e.dtype in (torch.int16, torch.int32, torch.int64):
        lo = min(0, int(e.min())) if e.numel() else 0
        hi = int(e.max()) if e.numel() else 0
        return torch.randint(lo, max(hi, lo) + 1, tuple(e.shape), generator=g, dtype=e.dtype)
    if e.dtype in (torch.float16, torch.bfloat16):      # a half input: normal noise in its dtype
        return torch.randn(tuple(e.shape), generator=g).to(e.dtype)
    return torch.randn(tuple(e.shape), generator=g)


def _is_shape(v) -> bool:
    return isinstance(v, (tuple, list, torch.Size)) and all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v)


def _shape_inputs(spec: str, shape) -> List[torch.Tensor]:
    """Gaussian example inputs for a module's input_shape: one shape (a tuple
    of ints, torch.Size) gives one input, a list or tuple of shapes one input
    per shape, in forward's order; anything else is refused in one line."""
    if _is_shape(shape):
        return [torch.randn(tuple(shape))]
    if isinstance(shape, (tuple, list)) and shape and all(_is_shape(s) for s in shape):
        return [torch.randn(tuple(s)) for s in shape]
    raise ModelLoadError(f"{spec}: input_shape must be one shape, a tuple of ints such as (1, 3, 32, 32), or a "
                         f"list of such shapes, one per input of forward; got {shape!r}")


def _load_file(spec: str) -> LoadedModel:
    path, colon, factory_name = spec.rpartition(":")
    if not colon:
        path = spec
    if not os.path.isfile(path):
        if spec.endswith(".py") or path.endswith(".py"):
            raise ModelLoadError(f"model file {path}: no such file")
        raise ModelLoadError(f"model {spec!r}: not a zoo name ({', '.join(ZOO)}) "
                             "and not path/to/file.py:factory")
    if not colon:
        raise ModelLoadError(f"model {spec!r}: name the factory function, as {spec}:FACTORY")
    result = _call_factory(spec, path, factory_name)
    if isinstance(result, tuple):
        if len(result) != 2:
            raise ModelLoadError(f"factory {spec} returned a {len(result)}-tuple; return "
                                 "(module, example_inputs) or a module")
        module, example = result
    else:
        module = result
        example = getattr(module, "example_inputs", None)
        if example is None:
            shape = getattr(module, "input_shape", None)
            if shape is None:
                raise ModelLoadError(f"{spec}: the factory must return (module, example_inputs) "
                                     "or a module with input_shape / example_inputs")
            example = _shape_inputs(spec, shape)
    if not isinstance(module, nn.Module):
        raise ModelLoadError(f"factory {spec} returned {type(module).__name__}, not a "
                             "torch.nn.Module")
    example = list(example) if isinstance(example, (tuple, list)) else [example]
    if not example or not all(isinstance(e, torch.Tensor) for e in example):
        raise ModelLoadError(f"factory {spec}: example inputs must be tensors, got "
                             f"{', '.join(type(e).__name__ for e in example) or 'none'}")
    user_calib = getattr(module, "calibration_data", None)
    if user_calib is None:
        def calib(n, seed=0, example=tuple(e.detach().clone() for e in example)):
            g = torch.Generator().manual_seed(1000 + seed)
            return [tuple(_noise_like(e, g) for e in example) for _ in range(n)]
    else:
        def calib(n, seed=0):
            try:    # calibration_data(n), or calibration_data(n, seed)
                takes_seed = len(inspect.signature(user_calib).parameters) >= 2
                return user_calib(n, seed) if takes_seed else user_calib(n)
            except Exception as e:      # noqa: BLE001
                raise ModelLoadError(f"{spec}: calibration_data({n}) raised "
                                     f"{type(e).__name__}: {e} (fix it; --debug shows the "
                                     "traceback)") from e
    from ..capture_train_norms import evaluated     # a batch norm kept in training mode under an eval root
    return LoadedModel(os.path.splitext(os.path.basename(path))[0] + "_" + factory_name,
                       evaluated(module), example, calib, calibration_is_noise=user_calib is None)


def load_model(spec: str) -> LoadedModel:
    if spec in ZOO:
        e = ZOO[spec]
        module = e.factory()
        example = [torch.zeros(e.input_shape)]
        return LoadedModel(e.name, module, example, e.calibration or _random_inputs(e.input_shape))
    return _load_file(spec)


def zoo_names() -> Sequence[str]:
    return list(ZOO)
