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
core_size() { arm-none-eabi-size -t "$1/src/libptec_runtime.a" | tail -1 | awk '{printf "%8s %8s %8s", $1, $2, $3}'; }
printf '%-12s %-28s %8s %8s %8s\n' target "" .text .data .bss
for t in "${targets[@]}"; do
  printf '%-12s %-28s %s\n' "$t" "with error messages" "$(core_size "build/$t")"
  # The same core without the prose of error messages (codes, instruction and operator kept).
  cmake --preset "$t" -B "build/$t-terse" -DPTEC_ERROR_MESSAGES=OFF >/dev/null
  cmake --build "build/$t-terse" -j2 --target ptec_runtime >/dev/null
  printf '%-12s %-28s %s\n' "$t" "codes only (messages off)" "$(core_size "build/$t-terse")"
done
echo "(.text = code + read-only data)"

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
