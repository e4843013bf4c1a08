"""Functional layers whose weight (or bias, a norm's affine, prelu's slope)
is computed in the forward (issue 15; capture_computed_weights), and views
of a constant read by a multi-input op (program_builder.view).

Oracle: torch float on the same input. Bounds in int8 output steps of the
program's output (measured worst in the comments), on inputs whose
outputs vary (worst_steps checks the outputs span at least 16 steps and
that ptec-run matches the numpy reference interpreter)."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import compile_model
from model_checks import Call
from test_function_coverage import inputs
from test_module_coverage import worst_steps

S3, S4 = (1, 4, 8), (1, 3, 4, 4)


# ---------------------------------------------------------------------------
# A constant read through views (a reshape, a squeeze, an expand: no copy)
# by cat / stack / where / an item assignment. The view of a constant once
# was a program value with no memory (neither constant nor planned), which
# the runtime rejects at load: "tensor has no memory".

class _ConstantView(nn.Module):
    def __init__(self, form, dtype):
        super().__init__()
        self.form = form
        self.register_buffer("b", torch.tensor([[[0.75, -1.5]]]).to(dtype))

    def forward(self, x):
        b = self.b.to(x.dtype)
        if self.form == "cat":
            return torch.cat([x, b.reshape(1, 1, 2).expand(1, 4, 2)], -1)
        if self.form == "cat(squeeze, None)":
            return torch.cat([x, b.squeeze(0).expand(4, 2)[None]], -1)
        if self.form == "stack":
            return torch.stack([x[..., :2], b.reshape(1, 1, 2).expand(1, 4, 2)], -1)
        if self.form == "where":
            return torch.where(x[..., :2] > 0, x[..., :2], b.reshape(1, 1, 2).expand(1, 4, 2))
        if self.form == "maximum":
            return torch.maximum(x[..., :2], b.reshape(1, 1, 2).expand(1, 4, 2))
        y = x.clone()                                   # "index_put"
        y[:, :, 2:4] = b.reshape(1, 1, 2).expand(1, 4, 2)
        return y


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("form", ["cat", "cat(squeeze, None)", "stack", "where", "maximum", "index_put"])
def test_constant_view_feeding_a_multi_input_op(form, dtype, tmp_path):
    model = _ConstantView(form, dtype).eval()
    calibration = inputs(S3, -3.0, 3.0)
    res = compile_model(model, [calibration[0][0]], calibration)
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 1.0 + 1e-3
