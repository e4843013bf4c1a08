#!/usr/bin/env bash
# DS-CNN keyword spotter (the shape of shared/targets/qemu.md's reference
# table) on every core's board: executed instructions per layer and for the
# whole inference, next to CMSIS-NN v19.1's figures for the same layers
# (-Ofast, same counting method) where qemu.md has them (M55, M33; none was
# measured on the M7, M4 and M3: "-"). The program comes from ptec.backends.cortex_m.sample_programs with random
# weights; instruction counts of these kernels do not depend on the values
# except through saturation branches.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/runner_log.sh
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
mapfile -t cores < <(scripts/cortex_m_cores.sh)
for t in "${cores[@]}"; do
  cmake --preset "$t" >/dev/null
  cmake --build --preset "$t" -j2 >/dev/null
  PYTHONPATH=python "$python" - "$t" "$out/ds_cnn_$t.pte" >"$out/bound_$t" <<'PY'
import sys
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.writer import write_program
program, info = ds_cnn_program(seed=5, target=sys.argv[1])
write_program(program, sys.argv[2])
print(info["memory_plan"].lower_bound)   # the plan's liveness bound
PY
  scripts/run_qemu.sh --target "$t" --elf "build/$t/firmware/runner/ptec_runner.elf" \
    --model "$out/ds_cnn_$t.pte" --timeout 300 >"$out/$t.log"
done
# The same program as `compile --ptec-runtime-only` plans it (no scratch
# for upstream's CMSIS-NN kernels: the M55's depthwise layers want 4,464 B),
# and as `--in-place` does (also every depthwise and pointwise layer's out
# over its dying input).
for t in cortex-m55 cortex-m33; do
  for form in only in_place; do
    PYTHONPATH=python "$python" - "$t" "$out/ds_cnn_${form}_$t.pte" "$form" <<'PY'
import sys
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte.writer import write_program
program, _ = ds_cnn_program(seed=5, target=sys.argv[1], ptec_runtime_only=True, in_place=sys.argv[3] == "in_place")
write_program(program, sys.argv[2])
PY
    scripts/run_qemu.sh --target "$t" --elf "build/$t/firmware/runner/ptec_runner.elf" \
      --model "$out/ds_cnn_${form}_$t.pte" --timeout 300 >"$out/${form}_$t.log"
  done
done

# CMSIS-NN v19.1 reference (qemu.md): M55, M33.
declare -A ref=(
  [conv,cortex-m55]=289086 [conv,cortex-m33]=1105800
  [dw,cortex-m55]=166926 [dw,cortex-m33]=593994
  [pw,cortex-m55]=202923 [pw,cortex-m33]=1064943
  [pool,cortex-m55]=9382 [pool,cortex-m33]=51018
  [fc,cortex-m55]=686 [fc,cortex-m33]=2189
  [net,cortex-m55]=1778564 [net,cortex-m33]=7794763)

printf '%-34s %-11s %12s %12s %8s\n' layer target ptec CMSIS-NN ratio
for t in "${cores[@]}"; do
  log="$out/$t.log"
  count() { sed -n "s/^  \[ *$1\] [^ ]* *\([0-9]*\) .*/\1/p" "$log"; }
  row() {
    local name=$1 key=$2 value=$3
    local cmsis=${ref[$key,$t]:-}
    echo "figure ds_cnn.$t.$key $value"
    [ -z "$cmsis" ] || echo "figure cmsis_nn.ds_cnn.$t.$key $cmsis"
    if [ -n "$cmsis" ]; then
      printf '%-34s %-11s %12s %12s %7sx\n' "$name" "$t" "$value" "$cmsis" \
        "$(awk -v a="$value" -v b="$cmsis" 'BEGIN {printf "%.2f", a / b}')"
    else
      printf '%-34s %-11s %12s %12s %8s\n' "$name" "$t" "$value" - -
    fi
  }
  row "conv 10x4 s2 (depthwise, mult 64)" conv "$(count 1)"
  row "depthwise 3x3 (first block)" dw "$(count 2)"
  row "pointwise 1x1 (first block)" pw "$(count 3)"
  row "average pool 25x5" pool "$(count 10)"
  row "fully connected 64 -> 12" fc "$(count 11)"
  row "whole inference (+quant/dequant)" net "$(runner_figure inference <"$log")"
  for region in metadata planned scratch requirements; do
    echo "figure ds_cnn.$t.$([ "$region" = requirements ] || echo memory.)$region $(runner_figure "$region" <"$log")"
  done
  echo "figure ds_cnn.$t.load $(runner_figure load <"$log")"
  echo "figure ds_cnn.$t.memory.liveness_bound $(cat "$out/bound_$t")"
  if [ -f "$out/only_$t.log" ]; then
    echo "figure ds_cnn.$t.memory.planned_ptec_runtime_only $(runner_figure planned <"$out/only_$t.log")"
    echo "figure ds_cnn.$t.inference_ptec_runtime_only $(runner_figure inference <"$out/only_$t.log")"
    echo "figure ds_cnn.$t.memory.planned_in_place $(runner_figure planned <"$out/in_place_$t.log")"
    echo "figure ds_cnn.$t.memory.scratch_in_place $(runner_figure scratch <"$out/in_place_$t.log")"
    echo "figure ds_cnn.$t.inference_in_place $(runner_figure inference <"$out/in_place_$t.log")"
  fi
done
echo "(ptec: preset flags, -Os, DSP/Helium variant loops -O2 (the M3 runs the reference C); per-layer figures include ~24 instructions of counter reads)"
