#!/usr/bin/env bash
# torchvision MobileNet-V2 1.0 at 224 (random weights: the plan depends on
# shapes only), int8 input, on the Cortex-M55, compile only (issue 16,
# docs/performance.md "MobileNet-V2's activations"): the liveness bound of
# the --ptec-runtime-only plan, and the plan with every expansion fused into
# its depthwise and the stride-1 layers in place (--fuse-expansion
# --in-place), with the runtime scratch that program asks for.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=python /usr/bin/python3 - <<'PY'
import torch
import torchvision

from ptec.compiler import compile_model
from ptec.requirements import requirements

torch.manual_seed(0)
model = torchvision.models.mobilenet_v2(width_mult=1.0).eval()
g = torch.Generator().manual_seed(1)
calibration = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(2)]
for form, flags in (("bound", dict(ptec_runtime_only=True)), ("fused", dict(fuse_expansion=True, in_place=True))):
    res = compile_model(model, list(calibration[0]), calibration, target="cortex-m55", int8_io=True, **flags)
    if form == "bound":
        print(f"figure mbv2_tv.cortex-m55.activations_bound {res.memory_plan.lower_bound}")
    else:
        print(f"figure mbv2_tv.cortex-m55.activations_fused_in_place {res.memory_plan.arena_bytes}")
        print(f"figure mbv2_tv.cortex-m55.scratch_fused_in_place "
              f"{requirements(res.program, target='cortex-m55').scratch_bytes}")
PY
