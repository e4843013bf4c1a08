"""Runs a .pte on ptec's C runtime on the host (the ptec-run CLI) and gives
back its outputs as numpy arrays in logical (PyTorch) order. `run` executes
once; `run_stream` executes several times in a row on one loaded method, so
state tensors (--stateful recurrent layers) carry over, with resets where
asked."""
from __future__ import annotations

import os
import subprocess
import tempfile
from typing import List, Optional, Sequence

import numpy as np

from .pte import NUMPY_DTYPE, ScalarType
from .pte.schema import Program, TensorShapeDynamism

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


class RuntimeError_(RuntimeError):
    """ptec-run refused the program or its inputs; the message is its one line."""


def ptec_run_path(path: Optional[str] = None) -> str:
    path = path or os.environ.get("PTEC_RUN", DEFAULT_PTEC_RUN)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} not found: build the host preset first (make host)")
    return path


def physical_bytes(tensor, array) -> bytes:
    """An array in logical order, laid out as the tensor's dim order says."""
    x = np.asarray(array).reshape(tensor.sizes).transpose(list(tensor.dim_order))
    return np.ascontiguousarray(x, NUMPY_DTYPE[ScalarType(tensor.scalar_type)]).tobytes()


def logical_array(tensor, raw: bytes) -> np.ndarray:
    """A static output's bytes as stored, in logical order."""
    x = np.frombuffer(raw, NUMPY_DTYPE[ScalarType(tensor.scalar_type)])
    x = x.reshape([tensor.sizes[d] for d in tensor.dim_order])
    return x.transpose(np.argsort(list(tensor.dim_order)))


def _read_output(tensor, path: str) -> np.ndarray:
    """Output `path` + .bin / .npy that ptec-run wrote. A bound-dynamic
    output's sizes are the run's (which dim, and how long, only the
    runtime's tensor says: aten::masked_select's [count] or [1, count],
    aten::index's [rows, ...]): read from the .npy, which ptec-run writes
    in logical order with the sizes ptec_method_output() reports, checked
    against the bound."""
    if tensor.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND:
        x = np.load(path + ".npy", allow_pickle=False)
        want = np.dtype(NUMPY_DTYPE[ScalarType(tensor.scalar_type)])
        if x.dtype != want or x.ndim != len(tensor.sizes) or any(n > b for n, b in zip(x.shape, tensor.sizes)):
            raise RuntimeError_(f"ptec-run wrote {x.dtype}{list(x.shape)} for an output bounded by "
                                f"{want}{list(tensor.sizes)}")
        return x
    with open(path + ".bin", "rb") as f:
        return logical_array(tensor, f.read())


def _written(tmp: str, name: str, data: bytes) -> str:
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _input_args(plan, inputs, tmp: str, prefix: str) -> List[str]:
    """ptec-run's --input arguments: each of the method's inputs written to
    tmp/<prefix>in<i>.bin in its physical layout."""
    args = []
    for i, (index, x) in enumerate(zip(plan.inputs, inputs)):
        args += ["--input", _written(tmp, f"{prefix}in{i}.bin", physical_bytes(plan.values[index].val, x))]
    return args


def _ptec_run(args: List[str]) -> None:
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError_(r.stderr.strip())


def _outputs(plan, tmp: str, prefix: str) -> List[np.ndarray]:
    """The method's outputs ptec-run wrote as tmp/<prefix>output<i>."""
    return [_read_output(plan.values[index].val, os.path.join(tmp, f"{prefix}output{i}"))
            for i, index in enumerate(plan.outputs)]


def run(program: Program, pte: bytes, inputs: Sequence[np.ndarray], ptec_run: Optional[str] = None,
        workdir: Optional[str] = None, repeat: int = 1) -> List[np.ndarray]:
    """Runs `pte` (the serialized `program`) on `inputs`, `repeat` times in
    one loaded method; the outputs are the last execute's."""
    plan = program.plan()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = _written(tmp, "model.pte", pte)
        args = [ptec_run_path(ptec_run), path, "--output-dir", tmp]
        if repeat != 1:
            args += ["--repeat", str(int(repeat))]
        _ptec_run(args + _input_args(plan, inputs, tmp, ""))
        return _outputs(plan, tmp, "")


def run_stream(program: Program, pte: bytes, steps: Sequence[Sequence[np.ndarray]],
               reset_before: Sequence[int] = (), ptec_run: Optional[str] = None,
               workdir: Optional[str] = None) -> List[List[np.ndarray]]:
    """Runs `pte` once per entry of `steps` (each the method's inputs) on one
    loaded method (ptec-run --steps): what a run leaves in the state tensors
    the next one reads. Before each step index in `reset_before` the state
    goes back to its initial value (ptec_method_reset_state). Returns each
    step's outputs."""
    plan = program.plan()
    steps = [list(s) for s in steps]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        path = _written(tmp, "model.pte", pte)
        args = [ptec_run_path(ptec_run), path, "--output-dir", tmp, "--steps", str(len(steps))]
        for k in reset_before:
            args += ["--reset-before", str(int(k))]
        for k, inputs in enumerate(steps):
            if len(inputs) != len(plan.inputs):
                raise ValueError(f"step {k}: {len(inputs)} inputs, the method takes {len(plan.inputs)}")
            args += _input_args(plan, inputs, tmp, f"step{k}_")
        _ptec_run(args)
        return [_outputs(plan, tmp, f"step{k}_") for k in range(len(steps))]
