#!/usr/bin/env bash
# Instructions the cortex_m kernels execute on the emulated boards (QEMU
# icount, exact), per DS-CNN layer and per inference, next to CMSIS-NN
# v19.1's figures from shared/targets/qemu.md. The program is the DS-CNN of
# ptec.backends.cortex_m.sample_programs (random weights, per-channel requantization), run by the
# fixed-address firmware runner, which profiles each operator.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v qemu-system-arm >/dev/null || { echo "kernels_qemu: qemu-system-arm missing, skipped"; exit 0; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

# Reference figures (instructions): conv, depthwise, pointwise, pool, fc, network.
declare -A cmsis=(
  [cortex-m55]="289086 166926 202923 9382 686 1778564"
  [cortex-m33]="1105800 593994 1064943 51018 2189 7794763"
)
for target in cortex-m55 cortex-m33; do
  elf=build/$target/firmware/runner/ptec_runner.elf
  if [ ! -f "$elf" ]; then
    cmake --preset "$target" >/dev/null && cmake --build --preset "$target" -j2 >/dev/null
  fi
  PYTHONPATH=python /usr/bin/python3 - "$out/ds_cnn.pte" "$target" <<'PY'
import sys
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.writer import write_program
program, _ = ds_cnn_program(seed=0, target=sys.argv[2])
write_program(program, sys.argv[1])
PY
  scripts/run_qemu.sh --target "$target" --elf "$elf" --model "$out/ds_cnn.pte" >"$out/log" 2>&1
  op() { awk -v i="$1" '$1 == "[" && $2 == i"]" {print $4; exit} $1 == "["i"]" {print $3; exit}' "$out/log"; }
  total=$(awk '/^inference:/ {print $2; exit}' "$out/log")
  read -r c_conv c_dw c_pw c_pool c_fc c_net <<<"${cmsis[$target]}"
  printf '%s, DSP/Helium kernel variants (-Os, variant loops -O2), QEMU instructions:\n' "$target"
  printf '  %-44s %12s %14s\n' "layer" "ptec" "CMSIS-NN v19.1"
  printf '  %-44s %12s %14s\n' "conv 10x4 s2 49x10x1->25x5x64" "$(op 1)" "$c_conv"
  printf '  %-44s %12s %14s\n' "depthwise 3x3 s1 p1 25x5x64" "$(op 2)" "$c_dw"
  printf '  %-44s %12s %14s\n' "pointwise 1x1 64->64 over 25x5" "$(op 3)" "$c_pw"
  printf '  %-44s %12s %14s\n' "average pool 25x5->1x1, 64 ch" "$(op 10)" "$c_pool"
  printf '  %-44s %12s %14s\n' "fully connected 64->12" "$(op 11)" "$c_fc"
  printf '  %-44s %12s %14s\n' "whole inference (with quantize, dequantize)" "$total" "$c_net"
  for pair in "conv $(op 1)" "dw $(op 2)" "pw $(op 3)" "pool $(op 10)" "fc $(op 11)" "net $total"; do
    echo "figure kernels.$target.$pair"
  done
done
