#!/usr/bin/env bash
# Footprint on the Cortex-M targets (`make size`).
#   scripts/size.sh [FIRMWARE_NAME...]
# Cross-builds the cortex-m55 and cortex-m33 presets, then prints
#  1. .text/.data/.bss of the runtime core (libptec_runtime.a: no kernels,
#     no backends, no board), per target;
#  2. for each runner firmware (default: ptec_runner, the fixed-address
#     runner with every kernel, and ptec_runner_module_linear, a program
#     compiled in with only its kernels), the linked image split into runtime
#     core, kernels, model, platform, application and C library (from the
#     map file).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(cortex-m55 cortex-m33)
firmware=("$@")
[ ${#firmware[@]} -gt 0 ] || firmware=(ptec_runner ptec_runner_module_linear)
python=/usr/bin/python3
[ -x "$python" ] || python=python3

for t in "${targets[@]}"; do
  echo "size: building $t" >&2
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j2 >/dev/null
done

echo "== runtime core (libptec_runtime.a), -Os =="
printf '%-12s %8s %8s %8s   %s\n' target .text .data .bss "(.text = code + read-only data)"
for t in "${targets[@]}"; do
  lib="build/$t/src/libptec_runtime.a"
  # The totals line of `size -t`: text data bss dec hex.
  read -r text data bss _ < <(arm-none-eabi-size -t "$lib" | tail -1)
  printf '%-12s %8s %8s %8s\n' "$t" "$text" "$data" "$bss"
done

for name in "${firmware[@]}"; do
  for t in "${targets[@]}"; do
    elf=$(find "build/$t/firmware" -name "$name.elf" -print -quit)
    if [ -z "$elf" ]; then
      echo
      echo "== $name ($t): not built (the runner needs the runtime in src/runtime) =="
      continue
    fi
    echo
    echo "== $name ($t): $(arm-none-eabi-size "$elf" | awk 'NR==2 {print "text " $1 ", data " $2 ", bss " $3}') =="
    "$python" scripts/map_split.py "$elf.map"
  done
done
