#!/usr/bin/env bash
# Footprint of the runtime core (no kernels, no backends, no platform) on each
# Cortex-M target, built with the presets' -Os flags.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
printf '%-12s %8s %8s %8s   %s\n' target .text .data .bss "(.text = code + read-only data)"
for t in cortex-m55 cortex-m33; do
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j "$jobs" --target ptec_runtime >/dev/null
  lib=build/$t/src/libptec_runtime.a
  read -r text data bss < <(arm-none-eabi-size -t "$lib" | tail -1 | awk '{print $1, $2, $3}')
  printf '%-12s %8s %8s %8s   runtime core (libptec_runtime.a)\n' "$t" "$text" "$data" "$bss"
done
