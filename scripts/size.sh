#!/usr/bin/env bash
# Footprint of the runtime core (no kernels, no backends, no platform) on each
# Cortex-M target, built with the presets' -Os flags; also without the prose
# of error messages (PTEC_ERROR_MESSAGES=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
core_size() { arm-none-eabi-size -t "$1/src/libptec_runtime.a" | tail -1 | awk '{printf "%8s %8s %8s", $1, $2, $3}'; }
printf '%-12s %-28s %8s %8s %8s\n' target "runtime core" .text .data .bss
for t in cortex-m55 cortex-m33; do
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j "$jobs" --target ptec_runtime >/dev/null
  printf '%-12s %-28s %s\n' "$t" "with error messages" "$(core_size "build/$t")"
  cmake --preset "$t" -B "build/$t-terse" -DPTEC_ERROR_MESSAGES=OFF >/dev/null
  cmake --build "build/$t-terse" -j "$jobs" --target ptec_runtime >/dev/null
  printf '%-12s %-28s %s\n' "$t" "codes only (messages off)" "$(core_size "build/$t-terse")"
done
