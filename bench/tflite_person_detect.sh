#!/usr/bin/env bash
# TFLM's person_detect.tflite (int8) imported with `ptec import-tflite` for
# the M55 and the M33, run once in each board's runner firmware on TFLM's
# person.bmp (scripts/person_detect_data.py): .pte bytes, the memory the
# runtime asks for, and instructions per inference (QEMU icount).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/runner_log.sh
shared=${PTEC_SHARED:-../shared}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
/usr/bin/python3 scripts/person_detect_data.py "$shared" "$out" >/dev/null
printf '%-12s %10s %10s %10s %14s\n' target pte_B planned_B metadata_B instructions
for t in cortex-m55 cortex-m33; do
  PYTHONPATH=python /usr/bin/python3 -m ptec import-tflite "$shared/models/ethos-u/tflm/person_detect.tflite" \
    --target "$t" -o "$out/pd-$t.pte" >/dev/null
  log=$(scripts/run_qemu.sh --target "$t" --elf "build/$t/firmware/runner/ptec_runner.elf" \
        --model "$out/pd-$t.pte" --input "$out/person.bin" --timeout 300)
  pte=$(stat -c %s "$out/pd-$t.pte")
  planned=$(runner_figure planned <<<"$log")
  metadata=$(runner_figure metadata <<<"$log")
  instr=$(runner_figure inference <<<"$log")
  printf '%-12s %10s %10s %10s %14s\n' "$t" "$pte" "$planned" "$metadata" "$instr"
  echo "figure tflite.person_detect.$t.pte $pte"
  runner_figures "tflite.person_detect.$t" planned metadata inference <<<"$log"
done
