"""Calibration samples, checked against the model's inputs.

A sample is one tuple with a tensor per model input, each of exactly the
example input's shape and dtype (float32, or the integer / bool / float16 /
bfloat16 dtype of the example: capture_input_dtypes; numpy has no bfloat16,
a uint16 array of bit patterns stands for a bfloat16 one). Nothing is reshaped or converted: a sample that
does not match is refused with the file (or sample number) that holds it,
because a reshaped or truncated sample calibrates the wrong ranges silently.

A calibration directory holds one sample per file:
  NAME.npy  one array (models with one input), written by numpy.save;
  NAME.npz  one array per input, written by numpy.savez(f, x0, x1, ...) in the
            order of forward()'s arguments (arr_0, arr_1, ...);
  NAME.bin  raw little-endian values of the input's dtype: float32, or the
            integer / bool / float16 dtype of the example, a bfloat16 one's
            16-bit patterns (models with one input).
Other files are ignored.
"""
from __future__ import annotations

import os
import zipfile
from typing import Callable, List, Sequence

import numpy as np
import torch

from .capture_input_dtypes import half_dtype, kept_dtype

SAMPLE_SUFFIXES = (".npy", ".npz", ".bin")
DTYPE = np.dtype(np.float32)   # what capture traces and calibrate() evaluates in


class CalibrationError(ValueError):
    """Calibration data that does not fit the model; the message is one line."""


def _shape(s) -> str:
    return "x".join(str(d) for d in s) if len(s) else "scalar"


def check_sample(sample, example_inputs: Sequence[torch.Tensor], where: str) -> tuple:
    """The sample as a tuple of tensors, or CalibrationError naming `where`."""
    n = len(example_inputs)
    if isinstance(sample, (torch.Tensor, np.ndarray)):
        sample = (sample,)
    if not isinstance(sample, (tuple, list)):
        raise CalibrationError(f"{where}: a sample must be a tuple of {n} arrays, "
                               f"got {type(sample).__name__}")
    if len(sample) != n:
        raise CalibrationError(f"{where}: holds {len(sample)} input(s), the model has {n}"
                               + (" (save each sample with numpy.savez(file, x0, x1, ...))"
                                  if n > 1 else ""))
    out, nonfinite = [], []
    for k, (x, e) in enumerate(zip(sample, example_inputs)):
        what = f"{where}: input {k}" if n > 1 else where
        if not isinstance(x, (torch.Tensor, np.ndarray)):
            raise CalibrationError(f"{what}: {type(x).__name__} is not an array")
        # token ids, integer and bool inputs keep the example's dtype, float16 / bfloat16 too
        # (capture_input_dtypes); numpy has no bfloat16: its uint16 bit patterns stand for it
        want = kept_dtype(e) or half_dtype(e) or "float32"
        if want == "bfloat16" and isinstance(x, np.ndarray) and x.dtype == np.uint16:
            x = torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16)
        if str(x.dtype).replace("torch.", "") != want:
            dtype = str(x.dtype).replace("torch.", "")
            spelled = "bool_" if want == "bool" else want
            how = ("a torch bfloat16 tensor, or its bit patterns as numpy.uint16" if want == "bfloat16" else
                   f"convert with .astype(numpy.{spelled})")
            raise CalibrationError(f"{what}: dtype {dtype}, the model wants {want} ({how})")
        if tuple(x.shape) != tuple(e.shape):
            raise CalibrationError(f"{what}: shape {_shape(x.shape)}, the model wants "
                                   f"{_shape(e.shape)}")
        t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.array(x))
        if not bool(torch.isfinite(t).all()):
            nonfinite.append(k)
        out.append(t)
    return Sample(out, where if not isinstance(sample, Sample) else sample.where,
                  nonfinite if not isinstance(sample, Sample) else sample.nonfinite)


class Sample(tuple):
    """A checked sample: its tensors, where it came from (a file, a sample
    number) and which inputs hold NaN or inf. Those are allowed (a model
    that replaces them: nanmean, nan_to_num, isnan): calibration's ranges
    skip them (quantize.RangeObserver), and refuse_nonfinite_inputs refuses
    an input whose NaN / inf reach the outputs."""

    def __new__(cls, values, where: str = "", nonfinite=()):
        self = super().__new__(cls, values)
        self.where, self.nonfinite = where, tuple(nonfinite)
        return self


def refuse_nonfinite_inputs(inputs: Sequence[str], samples: Sequence[Sample], observer) -> None:
    """CalibrationError naming the first sample whose NaN / inf of an input
    change the model's outputs (no int8 grid holds them: only a model that
    replaces or drops them, as nanmean or nan_to_num, takes them)."""
    for k, name in enumerate(inputs):
        what = observer.nonfinite(name)
        if not what or what.endswith("dropped later"):
            continue
        first = next((s for s in samples if k in getattr(s, "nonfinite", ())), None)
        where = first.where if first is not None else "calibration"
        label = f"{where}: input {k}" if len(inputs) > 1 else where
        raise CalibrationError(f"{label}: holds NaN or infinity, which reach the model's outputs (calibration "
                               "needs finite values, except where the model replaces them: nan_to_num, nanmean, "
                               "nansum, isnan)")


def check_samples(samples, example_inputs: Sequence[torch.Tensor],
                  where: Callable[[int], str] = lambda i: f"calibration sample {i}") -> List[tuple]:
    out = [check_sample(s, example_inputs, where(i)) for i, s in enumerate(samples)]
    if not out:
        raise CalibrationError("no calibration samples (give at least one)")
    return out


_WRITER = {".npy": "numpy.save", ".npz": "numpy.savez", ".bin": "ndarray.tofile"}


def _read(path: str, n_inputs: int, raw: str = "<f4"):
    ext = os.path.splitext(path)[1]
    try:
        if ext == ".bin":
            return np.fromfile(path, raw)
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.ndarray):
            with data:
                keys = sorted(data.files)
                want = [f"arr_{k}" for k in range(n_inputs)]
                if ext != ".npz" or keys != sorted(want):
                    raise CalibrationError(
                        f"{path}: an archive of arrays {', '.join(keys) or '(none)'}; expected "
                        + (f"{', '.join(want)} (write it with numpy.savez(file, x0, x1, ...))"
                           if ext == ".npz" else "one array (write it with numpy.save)"))
                return tuple(data[k] for k in want)
        if ext == ".npz":
            raise CalibrationError(f"{path}: one array, not an archive (write it with "
                                   "numpy.savez(file, x0, x1, ...))")
        return data
    except CalibrationError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise CalibrationError(f"{path}: not a readable {ext} file ({e}); "
                               f"write it with {_WRITER[ext]}") from e


def load_directory(path: str, example_inputs: Sequence[torch.Tensor]) -> List[tuple]:
    n = len(example_inputs)
    try:
        files = sorted(f for f in os.listdir(path) if f.endswith(SAMPLE_SUFFIXES))
    except OSError as e:
        raise CalibrationError(f"--calib {path}: cannot list the directory ({e.strerror})") from e
    if not files:
        raise CalibrationError(f"--calib {path}: no .npy, .npz or .bin files "
                               "(one calibration sample per file)")
    out = []
    for f in files:
        full = os.path.join(path, f)
        if n > 1 and not f.endswith(".npz"):
            raise CalibrationError(f"{full}: the model has {n} inputs; save each sample as "
                                   ".npz with numpy.savez(file, x0, x1, ...)")
        # a bfloat16 input's .bin holds its bit patterns (uint16)
        e = example_inputs[0]
        raw = np.dtype(kept_dtype(e) or {"float16": "float16", "bfloat16": "uint16"}.get(half_dtype(e) or "")
                       or "float32").newbyteorder("<")
        arr = _read(full, n, raw)
        if f.endswith(".bin"):
            want = int(np.prod(example_inputs[0].shape))
            if arr.size != want:
                raise CalibrationError(f"{full}: {arr.size} {arr.dtype.name} values, the model's input "
                                       f"{_shape(example_inputs[0].shape)} has {want}")
            arr = arr.reshape(tuple(example_inputs[0].shape))
        out.append(check_sample(arr, example_inputs, full))
    return out
