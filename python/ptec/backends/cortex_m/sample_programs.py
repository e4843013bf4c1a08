"""Sample cortex_m programs built directly from the kernel helpers, without
PyTorch: small, deterministic programs for runtime tests, fuzzing seeds and
the board tests (for example a DS-CNN-shaped keyword spotter with random
int8 weights)."""
from __future__ import annotations

import numpy as np

from ...lowered import new_act, view
from ...pte.program_builder import ProgramBuilder
from ...pte.schema import ScalarType
from .kernels import I8, avg_pool2d, conv2d, dequantize, linear, quantize
from .scratch import plan_for_ptec_runtime_only

def _rand_conv(rng, cout, cin_g, kh, kw):
    w = rng.integers(-127, 128, size=(cout, cin_g, kh, kw), dtype=np.int64).astype(np.int8)
    scales = rng.uniform(0.002, 0.01, size=cout)
    bias = rng.integers(-2000, 2000, size=cout).astype(np.int32)
    return w, scales, bias


def ds_cnn_program(seed: int = 0, target: str = "cortex-m55", channels: int = 64,
                   blocks: int = 4, classes: int = 12, int8_io: bool = False,
                   ptec_runtime_only: bool = False, in_place: bool = False):
    """A DS-CNN keyword spotter shape: input [1,1,49,10]; conv 10x4 stride 2
    (written as depthwise with depth multiplier `channels` from 1 channel);
    `blocks` x (depthwise 3x3 + pointwise 1x1) with ReLU; average pool over
    the whole map; linear to `classes`. Random int8 weights, int32 biases and
    per-channel multipliers from cortex-m-ops.md §1.5. ptec_runtime_only: as
    `compile --ptec-runtime-only` plans it (no scratch for upstream's
    CMSIS-NN kernels; with in_place, every depthwise and pointwise layer's
    out over its input, ptec/pte/in_place.py). Returns (Program, info)."""
    rng = np.random.default_rng(seed)
    b = ProgramBuilder()
    if ptec_runtime_only:
        plan_for_ptec_runtime_only(b, in_place)
    in_scale, in_zp = 0.05, 3
    if int8_io:
        x = new_act(b, I8, [1, 1, 49, 10], in_scale, in_zp)
        inp = x
    else:
        inp = new_act(b, ScalarType.FLOAT, [1, 1, 49, 10])
        x = quantize(b, inp, in_scale, in_zp)
    w, ws, bias = _rand_conv(rng, channels, 1, 10, 4)
    relu_zp = -128
    act_scale = 0.03
    x = conv2d(b, x, w, bias, ws, act_scale, relu_zp, stride=(2, 2), padding=(5, 1),
               act_min=relu_zp, target=target)
    for _ in range(blocks):
        w, ws, bias = _rand_conv(rng, channels, 1, 3, 3)
        x = conv2d(b, x, w, bias, ws, act_scale, relu_zp, padding=(1, 1), groups=channels,
                   act_min=relu_zp, target=target)
        w, ws, bias = _rand_conv(rng, channels, channels, 1, 1)
        ws = ws / 8.0
        x = conv2d(b, x, w, bias, ws, act_scale, relu_zp, act_min=relu_zp, target=target)
    x = avg_pool2d(b, x, kernel=x.sizes[2:], target=target)
    x = view(b, x, [1, channels])
    fw = rng.integers(-127, 128, size=(classes, channels)).astype(np.int8)
    fb = rng.integers(-500, 500, size=classes).astype(np.int32)
    x = linear(b, x, fw, fb, 0.004, 0.1, 5, target=target)
    out = x if int8_io else dequantize(b, x)
    b.set_io([inp.value], [out.value])
    from ...requirements_record import with_record
    program = with_record(b.build(), target)   # as compile writes it: requirements read, not measured
    return program, {"memory_plan": b.memory_plan, "input": inp, "output": out}
