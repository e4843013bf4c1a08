"""A statistic whose values sit far from 0 measured in steps of their own
spread (issue 15): an autoencoder's reconstruction distance
`torch.dist(x, ae(x))`, `(x - ae(x)).norm()`, `torch.linalg.norm(x - ae(x))`,
an MSE score `((x - ae(x)) ** 2).mean()` / `F.mse_loss(ae(x), x)`, a sum of
squares over all of a sample's values.

ptec.fp32_statistics measures a chain's int8 loss in steps of the root's
int8 grid, which holds 0. A distance over all 256 values of a sample sits
in [6.7, 9.8] on a grid of [0, 9.8]: 1.0 to 1.3 of that grid's steps off
(under its LIMIT), but the scores differ from one another by a third of
that grid, so the loss was 4.1 to 8.5 steps of their spread / 255 (the
output step issue 15 counts in; the MSE forms 4.2 to 5.4). What a score is
for, telling one sample from another (a threshold on it), sees the error
against that spread. Here the loss is also measured in those steps:
the grid's step over the spread's (at least 1: a spread wider than the
grid is the grid's own measure) times the loss in grid steps.

Only where the spread is measured: at least VALUES distinct root values
over the calibration samples (an anomaly score of 16 samples, not 4
samples' scalars, whose span is no range: tried on test_function_coverage's
rows of 4 samples, it took 9 norm and distance rows to fp32 for nothing).
Chains whose values reach near 0 have a spread as wide as their grid, and
this measure is the grid's."""
from __future__ import annotations

from typing import List

import numpy as np

VALUES = 16             # distinct root values over calibration that make a spread


def spread_factor(exact: List[np.ndarray]) -> float:
    """How many steps of the values' own spread (max - min over the
    calibration samples, / 255) one step of their int8 grid (which holds 0)
    is: at least 1, and 1 when fewer than VALUES values differ."""
    values = np.concatenate([np.asarray(e, np.float64).ravel() for e in exact])
    values = values[np.isfinite(values)]
    if np.unique(values).size < VALUES:
        return 1.0
    lo, hi = float(values.min()), float(values.max())
    spread = hi - lo
    grid = max(hi, 0.0) - min(lo, 0.0)
    return max(1.0, grid / spread) if spread > 0 else 1.0
