#!/usr/bin/env bash
# Instruction counts of the AOT model zoo on the QEMU boards: each zoo model is
# compiled for the target with `python3 -m ptec compile`, run once in the
# runner firmware (fixed-address program, seeded random input) and reported
# as inference instructions (QEMU icount) and planned arena bytes. The output
# is also compared byte for byte with ptec-run on the host.
#   bench/aot_zoo.sh [CORE ...]      (default: every core, scripts/cortex_m_cores.sh)
# Needs the cross build of each target (cmake --preset T && cmake --build --preset T);
# a target without its runner firmware is skipped with a note.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(scripts/cortex_m_cores.sh)
py=/usr/bin/python3
host_run=build/host/tools/ptec-run/ptec-run
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models=(digits_cnn ds_cnn fc_autoencoder resnet8 mobilenet_v2_035 mobilenet_v1_025 tiny_attention)

for target in "${targets[@]}"; do
  elf=build/$target/firmware/runner/ptec_runner.elf
  if [ ! -f "$elf" ]; then
    echo "aot_zoo: $target: no $elf (build the $target preset first); skipped"
    continue
  fi
  printf '%-18s %-11s %14s %10s %10s  %s\n' model target instructions arena_B pte_B host
  for m in "${models[@]}"; do
    pte=$work/$m-$target.pte
    if ! PYTHONPATH=python $py -m ptec compile "$m" --calib 8 --target "$target" -o "$pte" >"$work/compile.log" 2>&1; then
      cat "$work/compile.log" >&2
      exit 1
    fi
    input=$work/$m.in
    $py scripts/random_input.py "$pte" "$input"
    cmp_args=()
    [ -x "$host_run" ] && cmp_args=(--ptec-run "$host_run" --model-file "$pte" --input-file "$input")
    out=$($py tests/target/run_and_compare.py "${cmp_args[@]}" -- scripts/run_qemu.sh --timeout 600 \
          --target "$target" --elf "$elf" --model "$pte" --input "$input" 2>&1 || true)
    instr=$(echo "$out" | sed -n 's/^inference: \([0-9]*\) instructions.*/\1/p')
    arena=$(echo "$out" | sed -n 's/^  planned\[1\] *required *\([0-9]*\) B.*/\1/p')
    same=$(echo "$out" | grep -q "FAIL" && echo DIFFERENT || ([ ${#cmp_args[@]} -gt 0 ] && echo identical || echo -))
    printf '%-18s %-11s %14s %10s %10s  %s\n' "$m" "$target" "${instr:-FAILED}" "${arena:-?}" \
      "$(stat -c %s "$pte")" "$same"
    echo "figure zoo.$m.$target.instructions ${instr:-FAILED}"
    echo "figure zoo.$m.$target.planned ${arena:-FAILED}"
    echo "figure zoo.$m.$target.pte $(stat -c %s "$pte")"
    # The float input's quantization, per element (the profile's first
    # quantize_per_tensor over the input's elements, rounded).
    quant=$(echo "$out" | sed -n 's/^ *\[ *[0-9]*\] cortex_m::quantize_per_tensor.out *\([0-9]*\).*/\1/p' | head -n 1)
    if [ -n "$quant" ]; then
      echo "figure zoo.$m.$target.quantize_per_element $(( (quant + $(cat "$input.numel") / 2) / $(cat "$input.numel") ))"
    fi
  done
  # MobileNet-V2's activations (issue 16, docs/performance.md), compile only:
  # with an int8 input, the liveness bound of the --ptec-runtime-only plan
  # and the plan with every expansion fused into its depthwise and the
  # stride-1 layers in place (--fuse-expansion --in-place).
  for form in bound fused; do
    flags=(--ptec-runtime-only)
    [ "$form" = fused ] && flags=(--fuse-expansion --in-place)
    PYTHONPATH=python $py -m ptec compile mobilenet_v2_035 --calib 8 --int8-io --target "$target" "${flags[@]}" \
      -o "$work/mbv2-$form.pte" >"$work/compile.log" 2>&1 || { cat "$work/compile.log" >&2; exit 1; }
    line=$(grep "memory: planned" "$work/compile.log")
    if [ "$form" = bound ]; then
      echo "figure zoo.mobilenet_v2_035.$target.bound_int8_io $(echo "$line" | sed -n 's/.*lower bound \([0-9]*\) bytes.*/\1/p')"
    else
      echo "figure zoo.mobilenet_v2_035.$target.planned_fused_int8_io $(echo "$line" | sed -n 's/.*planned \([0-9]*\) bytes.*/\1/p')"
    fi
  done
  # ... and what fusing costs in instructions: the compile command's
  # program (float input) with --fuse-expansion --in-place, run as above
  # (the M55 and the M33, the cores the targets name).
  if [ "$target" = cortex-m55 ] || [ "$target" = cortex-m33 ]; then
    pte=$work/mbv2-fused-run.pte
    PYTHONPATH=python $py -m ptec compile mobilenet_v2_035 --calib 8 --target "$target" --fuse-expansion --in-place \
      -o "$pte" >"$work/compile.log" 2>&1 || { cat "$work/compile.log" >&2; exit 1; }
    $py scripts/random_input.py "$pte" "$work/mbv2.in"
    cmp_args=()
    [ -x "$host_run" ] && cmp_args=(--ptec-run "$host_run" --model-file "$pte" --input-file "$work/mbv2.in")
    out=$($py tests/target/run_and_compare.py "${cmp_args[@]}" -- scripts/run_qemu.sh --timeout 600 \
          --target "$target" --elf "$elf" --model "$pte" --input "$work/mbv2.in" 2>&1 || true)
    echo "$out" | grep -q "FAIL" && { echo "$out" >&2; echo "aot_zoo: fused mobilenet_v2_035 differs from the host" >&2; exit 1; }
    instr=$(echo "$out" | sed -n 's/^inference: \([0-9]*\) instructions.*/\1/p')
    echo "figure zoo.mobilenet_v2_035.$target.instructions_fused_in_place ${instr:-FAILED}"
  fi
done
