#!/usr/bin/env bash
# ptec-run end to end on the upstream samples: outputs byte-identical to
# upstream's, clear one-line errors with a non-zero exit for bad input.
set -uo pipefail
run=$1; models=$2/models/upstream; out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else echo "FAIL: $1"; fail=$((fail+1)); fi; }

"$run" "$models/add.pte" --input "$models/inputs/add_in0.f32.bin" --input "$models/inputs/add_in1.f32.bin" \
  --output-dir "$out/add" >"$out/add.log"
check "add outputs" "cmp -s $out/add/output0.bin $models/expected/add_inputs.out0.f32.bin"
check "add npy written" "[ -s $out/add/output0.npy ]"
check "report shows planned memory" "grep -q 'planned:   48 bytes (memory id 1)' $out/add.log"
"$run" "$models/add_arduino.pte" --input ones --output-dir "$out/ard" --repeat 3 --profile >"$out/ard.log"
check "add_arduino ones" "cmp -s $out/ard/output0.bin $models/expected/add_arduino_ones.out0.f32.bin"
check "profile names the operator" "grep -q 'aten::add.out' $out/ard.log"
"$run" "$models/ModuleLinear-no-constant-segment.pte" --input "$models/inputs/ModuleLinear_in0.f32.bin" \
  --output-dir "$out/lin" >/dev/null
check "legacy constant_buffer" "cmp -s $out/lin/output0.bin $models/expected/ModuleLinear_inputs.out0.f32.bin"

"$run" "$models/ethos_u_minimal_example.pte" --input ones --input ones --output-dir "$out/eth" >"$out/eth.log" 2>&1; rc=$?
if "$run" --list-ops | grep -q '^  EthosUBackend (NPU ethos-u55-128, config 0x00001807)'; then
  # The build's EthosUBackend on its NPU model: ones + ones = 2.0 (spec
  # ethos-u-npu.md §8.1), and the report says what the NPU did.
  check "delegate sample runs on the NPU model" "[ $rc -eq 0 ] && [ \$(od -An -tx4 $out/eth/output0.bin | tr -d ' ') = 40000000 ]"
  check "NPU call report" "grep -q '^npu:       delegate 0: 153 commands, 6 bytes DMA, 0 MACs (last run)' $out/eth.log"
else
  check "delegate sample fails cleanly" "[ $rc -eq 1 ] && grep -q 'backend EthosUBackend not available' $out/eth.log"
fi
# .npy inputs: the shape in the header is checked against the program.
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.fromfile(sys.argv[1], '<f4'))" \
  "$models/inputs/add_in0.f32.bin" "$out/in0.npy"
"$run" "$models/add.pte" --input "$out/in0.npy" --input "$models/inputs/add_in1.f32.bin" --output-dir "$out/npy" >/dev/null 2>"$out/npy.log"
check "npy input" "cmp -s $out/npy/output0.bin $models/expected/add_inputs.out0.f32.bin"
head -c 100 "$models/add.pte" >"$out/trunc.pte"
"$run" "$out/trunc.pte" >"$out/trunc.log" 2>&1; rc=$?
check "truncated file" "[ $rc -eq 1 ] && [ \$(wc -l <$out/trunc.log) -eq 1 ] && grep -q InvalidProgram $out/trunc.log"
head -c 3 "$models/add_in0.f32.bin" 2>/dev/null >"$out/short.bin"; head -c 3 "$models/inputs/add_in0.f32.bin" >"$out/short.bin"
"$run" "$models/add.pte" --input "$out/short.bin" >"$out/short.log" 2>&1; rc=$?
check "short input" "[ $rc -eq 1 ] && grep -q '3 bytes given, program expects 4' $out/short.log"
"$run" "$models/add.pte" --input "$out/no_such_file.bin" >"$out/missing.log" 2>&1; rc=$?
check "missing input file" "[ $rc -eq 1 ] && grep -q 'cannot read' $out/missing.log"
"$run" "$models/add.pte" --input zeros --input "$models/inputs/add_in1.f32.bin" --input ones >"$out/extra.log" 2>&1; rc=$?
check "too many inputs" "[ $rc -eq 2 ]"
"$run" "$models/add.pte" --input zeros --input "$models/inputs/add_in1.f32.bin" --output-dir "$out/zeros" >/dev/null
check "zeros and a raw file" "[ -s $out/zeros/output0.bin ]"
"$run" --list-ops >"$out/ops.log"
check "list-ops" "grep -q 'aten::add.out' $out/ops.log && grep -q 'quantized_decomposed::quantize_per_tensor.out' $out/ops.log"
# --steps: one loaded method, K executes (state programs: test_stateful.py).
"$run" "$models/add.pte" --steps 2 --reset-before 1 --output-dir "$out/steps" \
    --input "$models/inputs/add_in0.f32.bin" --input "$models/inputs/add_in1.f32.bin" \
    --input "$models/inputs/add_in0.f32.bin" --input "$models/inputs/add_in1.f32.bin" >"$out/steps.log"
check "steps write each step's outputs" "cmp -s $out/steps/step0_output0.bin $models/expected/add_inputs.out0.f32.bin && cmp -s $out/steps/step1_output0.bin $models/expected/add_inputs.out0.f32.bin && grep -q '(2 runs)' $out/steps.log"
"$run" "$models/add.pte" --steps 2 --input zeros --input zeros >"$out/steps_short.log" 2>&1; rc=$?
check "steps want inputs x steps" "[ $rc -eq 2 ] && grep -q 'wants 4 --input' $out/steps_short.log"
"$run" "$models/add.pte" --steps 2 --repeat 2 >/dev/null 2>&1; rc=$?
check "steps and repeat refused" "[ $rc -eq 2 ]"
"$run" "$models/add.pte" --reset-before 1 >/dev/null 2>&1; rc=$?
check "reset past the last step refused" "[ $rc -eq 2 ]"
"$run" >/dev/null 2>&1; rc=$?
check "usage error" "[ $rc -eq 2 ]"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
