#!/usr/bin/env bash
# Host instructions (callgrind, exact and repeatable) that the cortex_m
# math layer executes on the DS-CNN keyword-spotting layer shapes of
# shared/targets/qemu.md, and for a whole DS-CNN inference through the
# runtime (ptec_method_execute, quantize to dequantize).
# Reference: upstream ExecuTorch + CMSIS-NN plain C, 10.02 M host
# instructions per inference.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/host/bench/bench_kernels
dispatch=build/host/bench/bench_dispatch
if [ ! -x "$bin" ] || [ ! -x "$dispatch" ]; then
  cmake --preset host >/dev/null && cmake --build --preset host -j2 --target bench_kernels bench_dispatch >/dev/null
fi
runs=2
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

# Instructions inside bench_region() per run.
count() {
  valgrind --tool=callgrind --toggle-collect=bench_region --callgrind-out-file="$out/cg" \
    "$bin" "$1" "$runs" >/dev/null 2>&1
  local total
  total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out/cg")
  echo $(( total / runs ))
}

printf 'cortex_m kernels (portable C reference), host instructions per call:\n'
printf '  %-46s %12s\n' "layer" "instructions"
# One table row, and its figure line (kept for the end, after the table).
row() {
  local v
  v=$(count "$1")
  echo "figure host.kernels.$1 $v" >>"$out/figures"
  printf '  %-46s %12s\n' "$2" "$v"
}
row conv "conv 10x4 s2 49x10x1->25x5x64 (depthwise dm 64)"
row conv_as_conv2d "  same layer as quantized_conv2d"
row dw "depthwise 3x3 s1 p1 25x5x64"
row pw "pointwise 1x1 64->64 over 25x5"
row pool "average pool 25x5->1x1, 64 ch"
row fc "fully connected 64->12"
row network "whole network, kernels only"

# A whole inference through the runtime: the DS-CNN test program of
# ptec.backends.cortex_m.sample_programs (float in, quantize ... dequantize, float out).
PYTHONPATH=python /usr/bin/python3 - "$out/ds_cnn.pte" <<'PY'
import sys
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.writer import write_program
program, _ = ds_cnn_program(seed=0)
write_program(program, sys.argv[1])
PY
valgrind --tool=callgrind --toggle-collect=ptec_method_execute --callgrind-out-file="$out/cg" \
  "$dispatch" "$out/ds_cnn.pte" "$runs" >/dev/null 2>&1
total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out/cg")
printf '  %-46s %12s   (upstream + CMSIS-NN plain C: 10,020,000)\n' \
  "whole inference, ptec_method_execute" "$(( total / runs ))"
cat "$out/figures"
echo "figure host.kernels.inference $(( total / runs ))"
