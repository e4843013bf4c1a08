#!/usr/bin/env bash
# Footprint on the Cortex-M targets (`make size`).
#   scripts/size.sh [FIRMWARE_NAME...]
#   scripts/size.sh --core-only      (part 1 alone; bench/runtime_size.sh)
# Cross-builds every cortex-m preset (-Os; scripts/cortex_m_cores.sh), then prints
#  1. .text/.data/.bss of the runtime core (libptec_runtime.a: no kernels,
#     no backends, no delegate support, no board), per target, with and
#     without the prose of error messages (PTEC_ERROR_MESSAGES=OFF), and on
#     its own line the delegate support (libptec_delegates.a) that firmware
#     registering a backend links on top of it (docs/runtime.md, "Delegates");
#     and the core's linked delta in a minimal firmware (firmware/minimal);
#  2. for each runner firmware (default: ptec_runner, the fixed-address
#     runner with every kernel, and ptec_runner_module_linear, a program
#     compiled in with only its kernels), the linked image split into runtime
#     core, kernels, model, platform, application and C library (from the
#     map file, scripts/map_split.py).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t targets < <(scripts/cortex_m_cores.sh)
firmware=("$@")
core_only=0
if [ "${1:-}" = "--core-only" ]; then core_only=1; firmware=(); fi
[ ${#firmware[@]} -gt 0 ] || [ "$core_only" = 1 ] || firmware=(ptec_runner ptec_runner_module_linear)
jobs=2 # the machine is shared: never more
python=/usr/bin/python3
[ -x "$python" ] || python=python3

lib_size() { arm-none-eabi-size -t "$1/src/lib$2.a" | tail -1 | awk '{printf "%8s %8s %8s", $1, $2, $3}'; }
core_size() { lib_size "$1" ptec_runtime; }
delegates_size() { lib_size "$1" ptec_delegates; }

echo "== runtime core (libptec_runtime.a), -Os; .text = code + read-only data =="
printf '%-12s %-28s %8s %8s %8s\n' target "runtime core" .text .data .bss
for t in "${targets[@]}"; do
  echo "size: building $t" >&2
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j "$jobs" >/dev/null
  printf '%-12s %-28s %s\n' "$t" "with error messages" "$(core_size "build/$t")"
  cmake --preset "$t" -B "build/$t-terse" -DPTEC_ERROR_MESSAGES=OFF >/dev/null
  cmake --build "build/$t-terse" -j "$jobs" --target ptec_runtime ptec_delegates >/dev/null
  printf '%-12s %-28s %s\n' "$t" "codes only (messages off)" "$(core_size "build/$t-terse")"
  printf '%-12s %-28s %s\n' "$t" "+ delegate support" "$(delegates_size "build/$t")"
  printf '%-12s %-28s %s\n' "$t" "+ delegates, messages off" "$(delegates_size "build/$t-terse")"
  echo "figure size.$t.core_text $(core_size "build/$t" | awk '{print $1}')"
  echo "figure size.$t.core_text_terse $(core_size "build/$t-terse" | awk '{print $1}')"
  echo "figure size.$t.delegates_text $(delegates_size "build/$t" | awk '{print $1}')"
  echo "figure size.$t.delegates_text_terse $(delegates_size "build/$t-terse" | awk '{print $1}')"
done

# The runtime core's linked delta: firmware/minimal loads and runs a program
# through the public API (no console, no stdio), linked with --gc-sections;
# minus the same image without ptec (ptec_minimal_bare), its kernels, its
# program and the application's own calls, what is left is the core and
# what it brings: C library helpers, the board's platform hooks, padding. tests/target checks that this image
# links no stdio, heap or 64-bit division helper.
flash_part() { "$python" scripts/map_split.py "$1" --figures p | awk -v k="p.$2" '$1 == "figure" && $2 == k {print $3}'; }
echo
echo "== runtime core linked into firmware/minimal (-Os, --gc-sections): flash bytes =="
printf '%-12s %-28s %8s %8s %8s\n' target "" image bare delta
for t in "${targets[@]}"; do
  for build in "$t" "$t-terse"; do
    dir="build/$build/firmware/minimal"
    if ! cmake --build "build/$build" -j "$jobs" --target ptec_minimal ptec_minimal_bare >/dev/null 2>&1; then
      printf '%-12s %-28s not built (no upstream sample programs?)\n' "$t" "$build"
      continue
    fi
    image=$(flash_part "$dir/ptec_minimal.elf.map" total)
    bare=$(flash_part "$dir/ptec_minimal_bare.elf.map" total)
    delta=$((image - bare - $(flash_part "$dir/ptec_minimal.elf.map" kernels) - $(flash_part "$dir/ptec_minimal.elf.map" model)
             - $(flash_part "$dir/ptec_minimal.elf.map" application) + $(flash_part "$dir/ptec_minimal_bare.elf.map" application)))
    key=linked_delta; label="with error messages"
    [ "$build" = "$t" ] || { key=linked_delta_terse; label="codes only (messages off)"; }
    printf '%-12s %-28s %8s %8s %8s\n' "$t" "$label" "$image" "$bare" "$delta"
    echo "figure size.$t.minimal.$key $delta"
  done
done

# Where the M55 core's bytes are, file by file, with and without the
# prose of error messages (docs/performance.md); then the delegate support's.
for lib in ptec_runtime ptec_delegates; do
  for build in cortex-m55 cortex-m55-terse; do
    [ -f "build/$build/src/lib$lib.a" ] || continue
    key=core; [ "$lib" = ptec_runtime ] || key=delegates
    [ "$build" = cortex-m55 ] || key=${key}_terse
    echo
    echo "== lib$lib.a by file ($build): .text =="
    arm-none-eabi-size "build/$build/src/lib$lib.a" | awk -v key="$key" 'NR > 1 {
      name = $6; sub(/\.c\.obj$/, "", name); printf "%-20s %8d\n", name, $1
      printf "figure size.cortex-m55.%s.%s %d\n", key, name, $1 }'
  done
done

for name in ${firmware[@]+"${firmware[@]}"}; do
  for t in "${targets[@]}"; do
    elf=$(find "build/$t/firmware" -name "$name.elf" -print -quit 2>/dev/null || true)
    if [ -z "$elf" ]; then
      echo
      echo "== $name ($t): not built =="
      continue
    fi
    echo
    echo "== $name ($t): $(arm-none-eabi-size "$elf" | awk 'NR==2 {print "text " $1 ", data " $2 ", bss " $3}') =="
    "$python" scripts/map_split.py "$elf.map" --figures "size.$t.$name"
  done
done
