#!/usr/bin/env bash
# Executed instructions (QEMU icount, exact and repeatable) of the upstream
# samples on every core's board, through the firmware runner with the program
# compiled in: program init, method load, and one inference without
# profiling. Instructions are not cycles; compare like with like.
set -euo pipefail
cd "$(dirname "$0")/.."
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
    init=$(sed -n 's/^program init: \([0-9]*\) instructions/\1/p' <<<"$log")
    load=$(sed -n 's/^method load: \([0-9]*\) instructions/\1/p' <<<"$log")
    infer=$(sed -n 's/^inference: \([0-9]*\) instructions.*/\1/p' <<<"$log")
    printf '%-38s %-11s %10s %10s %10s\n' "$name" "$t" "$init" "$load" "$infer"
    echo "figure samples.$runner.$t.init $init"
    echo "figure samples.$runner.$t.load $load"
    echo "figure samples.$runner.$t.inference $infer"
    echo "figure samples.$runner.$t.metadata $(sed -n 's/^  metadata *required *\([0-9]*\) B.*/\1/p' <<<"$log")"
  done
done
