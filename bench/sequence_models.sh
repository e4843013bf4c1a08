#!/usr/bin/env bash
# Instructions per inference of the sequence models (python/ptec/models/sequence.py:
# a GRU keyword spotter, an LSTM classifier, an SVDF keyword spotter, a transformer encoder) on the
# QEMU M55 and M33 boards, each output compared byte for byte with ptec-run on the
# host; with the program size and the RAM the runtime asks for.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
host_run=build/host/tools/ptec-run/ptec-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-16s %-11s %14s %10s %10s  %s\n' model target instructions ram_B pte_B host
for target in cortex-m55 cortex-m33; do
  elf=build/$target/firmware/runner/ptec_runner.elf
  if [ ! -f "$elf" ]; then
    echo "sequence_models: $target: no $elf (build the $target preset first); skipped"
    continue
  fi
  for m in gru_kws lstm_classifier svdf_kws transformer; do
    pte=$work/$m-$target.pte
    if ! PYTHONPATH=python $py -m ptec compile "python/ptec/models/sequence.py:$m" --calib 8 --target "$target" \
         -o "$pte" >"$work/compile.log" 2>&1; then
      cat "$work/compile.log" >&2
      exit 1
    fi
    ram=$(sed -n 's/.*loading needs \([0-9]*\) bytes of RAM.*/\1/p' "$work/compile.log")
    input=$work/$m.in
    $py scripts/random_input.py "$pte" "$input"
    out=$($py tests/target/run_and_compare.py --ptec-run "$host_run" --model-file "$pte" --input-file "$input" \
          -- scripts/run_qemu.sh --timeout 600 --target "$target" --elf "$elf" --model "$pte" --input "$input" 2>&1 || true)
    instr=$(echo "$out" | sed -n 's/^inference: \([0-9]*\) instructions.*/\1/p')
    same=$(echo "$out" | grep -q "FAIL" && echo DIFFERENT || echo identical)
    printf '%-16s %-11s %14s %10s %10s  %s\n' "$m" "$target" "${instr:-FAILED}" "${ram:-?}" "$(stat -c %s "$pte")" "$same"
    [ -n "$instr" ] && [ "$same" = identical ] || { echo "$out" | tail -20 >&2; exit 1; }
    echo "figure seq.$m.$target.instructions $instr"
    echo "figure seq.$m.$target.ram $ram"
    echo "figure seq.$m.$target.pte $(stat -c %s "$pte")"
  done
done
