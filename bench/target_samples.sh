#!/usr/bin/env bash
# Executed instructions (QEMU icount, exact and repeatable) of the upstream
# samples on every core's board, through the firmware runner with the program
# compiled in: program init, method load, and one inference without
# profiling. Instructions are not cycles; compare like with like.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/runner_log.sh
mapfile -t cores < <(scripts/cortex_m_cores.sh)
for t in "${cores[@]}"; do
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j2 >/dev/null
done
printf '%-38s %-11s %10s %10s %10s\n' program target init load inference
for runner in add add_arduino module_linear; do
  for t in "${cores[@]}"; do
    log=$(scripts/run_qemu.sh --target "$t" --elf "build/$t/firmware/runner/ptec_runner_$runner.elf")
    name=$(sed -n 's/^program: \([^,]*\),.*/\1/p' <<<"$log")
    init=$(runner_figure init <<<"$log")
    load=$(runner_figure load <<<"$log")
    infer=$(runner_figure inference <<<"$log")
    printf '%-38s %-11s %10s %10s %10s\n' "$name" "$t" "$init" "$load" "$infer"
    runner_figures "samples.$runner.$t" init load inference metadata <<<"$log"
  done
done
