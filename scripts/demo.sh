#!/usr/bin/env bash
# make demo: the main job. Until the firmware runner and the AOT compiler
# land, it runs an upstream-made program through the host runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-cortex-m55}
models=${PTEC_SHARED:-../shared}/models/upstream
echo "ptec demo (host runtime; target $target firmware comes with the board support)"
echo "program: $models/add_arduino.pte (made by upstream ExecuTorch)"
build/host/tools/ptec-run/ptec-run "$models/add_arduino.pte" --input "$models/inputs/add_arduino_in0.f32.bin" --profile
