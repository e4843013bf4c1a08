"""`python3 -m ptec evaluate`: what a compiled model is worth, in one table.

For each model: compile it, run N inputs from its calibration distribution
(other seeds than calibration used) through ptec's C runtime and through the
int8 numpy reference, and report
  - how many outputs are byte-identical between the two,
  - the mean cosine similarity of the dequantized output to PyTorch float,
  - planned bytes next to the liveness lower bound,
  - for the digits CNN, float and int8 (runtime) accuracy on its held-back split."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np
import torch

from . import host_runtime
from .compiler import compile_model
from .interpreter import run_program
from .models import ZOO, load_model
from .pte import parse_program


@dataclass
class ModelReport:
    name: str
    target: str
    inputs: int
    identical: int              # runtime output bytes == int8 reference bytes
    cosine: float               # mean over inputs, dequantized output vs PyTorch float
    planned: int
    lower_bound: int
    pte_bytes: int
    float_accuracy: Optional[float] = None
    int8_accuracy: Optional[float] = None


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    denom = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / denom) if denom > 0 else float(np.array_equal(a, b))


def evaluate_model(name: str, n_inputs: int = 20, target: str = "cortex-m55", calib: int = 8,
                   ptec_run: Optional[str] = None, progress=None) -> ModelReport:
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(calib), target=target)
    program = parse_program(res.data)  # what is on disk, not the in-memory object
    identical, cosines = 0, []
    for k, x in enumerate(m.calibration(n_inputs, 101)):
        arrays = [t.numpy() for t in x]
        got = host_runtime.run(program, res.data, arrays, ptec_run)[0]
        want = run_program(program, arrays)[0]
        identical += int(got.dtype == want.dtype and got.tobytes() == want.tobytes())
        with torch.no_grad():
            ref = m.module(*x).detach().numpy()
        cosines.append(cosine(got, ref))
        if progress:
            progress(f"{name}: input {k + 1}/{n_inputs}")
    report = ModelReport(name, target, n_inputs, identical, float(np.mean(cosines)),
                         res.memory_plan.arena_bytes, res.memory_plan.lower_bound, len(res.data))
    if name == "digits_cnn":
        from .models.digits import accuracy, digits_dataset
        _, _, xte, yte = digits_dataset()
        report.float_accuracy = accuracy(m.module, xte, yte)
        preds = [host_runtime.run(program, res.data, [xte[i:i + 1]], ptec_run)[0].argmax()
                 for i in range(len(xte))]
        report.int8_accuracy = float((np.array(preds) == yte).mean())
    return report


def format_reports(reports: Sequence[ModelReport]) -> str:
    w = max([18] + [len(r.name) for r in reports])
    lines = [f"{'model':<{w}} {'target':<11} {'identical':>9} {'cosine':>7} {'planned B':>10} "
             f"{'bound B':>9} {'over':>6} {'.pte B':>8}"]
    for r in reports:
        over = (r.planned / r.lower_bound - 1) * 100 if r.lower_bound else 0.0
        lines.append(f"{r.name:<{w}} {r.target:<11} {r.identical:>4}/{r.inputs:<4} {r.cosine:>7.4f} "
                     f"{r.planned:>10} {r.lower_bound:>9} {over:>5.1f}% {r.pte_bytes:>8}")
    for r in reports:
        if r.float_accuracy is not None:
            lines.append(f"{r.name}: test accuracy float {r.float_accuracy * 100:.2f}%, "
                         f"ptec int8 (C runtime) {r.int8_accuracy * 100:.2f}%")
    return "\n".join(lines)


class EvaluateError(ValueError):
    """A bad `evaluate` command line; the message is one line."""


def evaluate_cli(args) -> int:
    names: List[str] = args.models or list(ZOO)
    unknown = [n for n in names if n not in ZOO and ".py" not in n]
    if unknown:
        raise EvaluateError(f"not in the zoo: {', '.join(unknown)} (choose from {', '.join(ZOO)}, "
                            "or give your model as path/to/model.py:factory)")
    if args.inputs < 1:
        raise EvaluateError(f"--inputs {args.inputs}: needs at least 1 input (e.g. --inputs 20)")
    try:
        host_runtime.ptec_run_path(args.ptec_run)   # before minutes of compiling
    except FileNotFoundError as e:
        raise EvaluateError(str(e)) from e
    reports = []
    for name in names:
        print(f"evaluate: {name} ({args.inputs} inputs, {args.target})", file=sys.stderr, flush=True)
        reports.append(evaluate_model(name, args.inputs, args.target, ptec_run=args.ptec_run))
    print(format_reports(reports))
    return 0 if all(r.identical == r.inputs for r in reports) else 1
