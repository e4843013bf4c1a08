#!/usr/bin/env bash
# make demo NPU=1: TFLM's person detection, compiled by Vela for an Ethos-U55-256,
# on the emulated Cortex-M55 with ptec's NPU model behind the EthosUBackend.
#   scripts/demo_npu.sh
#  1. import person_detect_vela.tflite (its ethos-u operator becomes an
#     upstream-format EthosUBackend delegate) and person_detect.tflite (int8,
#     on ptec's cortex_m kernels) with ptec's importer, and write TFLM's two
#     test images as TFLM feeds them (scripts/person_detect_data.py);
#  2. build ptec-run for the same NPU (host preset, PTEC_ETHOSU_TARGET=ethos-u55-256);
#  3. build the M55 runner with the EthosUBackend on the NPU model
#     (PTEC_ETHOSU=ON) and the Vela program compiled in;
#  4. run both images on the emulated board (one QEMU run, batch mode);
#  5. run them through ptec-run, with the NPU model and on the CPU kernels,
#     and compare: the three must give the same bytes, and person.bmp must
#     score person above no-person and no_person.bmp the reverse.
# Build and tool output goes to build/demo-npu/demo/steps.log (shown when a
# step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
npu=ethos-u55-256
py=/usr/bin/python3
[ -x "$py" ] || py=python3
shared="${PTEC_SHARED:-$(pwd)/../shared}"
tflm=$shared/models/ethos-u/tflm
build=build/demo-npu
work=$build/demo
host=$build/host
ptec_run=$host/tools/ptec-run/ptec-run
rm -rf "$work"
mkdir -p "$work"
log=$work/steps.log
: >"$log"

. scripts/demo_steps.sh

echo "ptec demo: person detection compiled by Vela for an $npu, on an emulated Cortex-M55 with ptec's NPU model"

step 1/5 "import person_detect_vela.tflite (NPU) and person_detect.tflite (CPU); TFLM's two test images"
quiet "$py" scripts/person_detect_data.py "$shared" "$work"
done_step "$(stat -c %s "$work/person_detect_vela.pte") and $(stat -c %s "$work/person_detect.pte") bytes, 2 x 9,216-byte images"

step 2/5 "build ptec-run for the $npu (host preset, EthosUBackend on the NPU model)"
quiet cmake --preset host -B "$host" -DPTEC_ETHOSU=ON -DPTEC_ETHOSU_TARGET=$npu
quiet cmake --build "$host" --target ptec-run -j 2
done_step

step 3/5 "build the cortex-m55 runner with the EthosUBackend and the Vela program compiled in"
quiet cmake --preset cortex-m55 -B "$build/m55" -DPTEC_ETHOSU=ON -DPTEC_ETHOSU_TARGET=$npu \
  -DPTEC_RUNNER_MODEL="$PWD/$work/person_detect_vela.pte"
quiet cmake --build "$build/m55" --target ptec_runner -j 2
elf=$build/m55/firmware/runner/ptec_runner.elf
done_step "$elf"

step 4/5 "run both images on the board (one QEMU run, batch mode)"
status=0
scripts/run_qemu.sh --target cortex-m55 --elf "$elf" --input "$work/images.bin" --timeout 300 \
  >"$work/runner.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAILED (exit status $status)"; grep -v '^@' "$work/runner.log" | tail -n 30; exit 1
fi
# The NPU model runs on the emulated CPU: its instructions (between the
# driver's begin and end hooks) are the NPU's part, the rest the CPU's.
total=$(sed -n 's/^infer *0: class *[-0-9]* *\([0-9]*\) instructions.*/\1/p' "$work/runner.log")
model=$(sed -n "s/^npu: .*; \([0-9]*\) instructions in the driver's job.*/\1/p" "$work/runner.log" | head -n 1)
done_step "person.bmp: $total instructions, $((total - model)) on the CPU side, $model in the NPU model"
grep -E '^(npu:|infer )' "$work/runner.log" | sed 's/^ */      /'

step 5/5 "run them on the host (ptec-run: NPU model, and CPU kernels) and compare"
fail=0
report=""
k=0
for name in person no_person; do
  board=$(sed -n "s/^@b$k\.out0 000000 \([0-9a-f]*\).*/\1/p" "$work/runner.log")
  quiet "$ptec_run" "$work/person_detect_vela.pte" --input "$work/$name.bin" --output-dir "$work/npu-$name"
  quiet "$ptec_run" "$work/person_detect.pte" --input "$work/$name.bin" --output-dir "$work/cpu-$name"
  npu_host=$(od -An -tx1 "$work/npu-$name/output0.bin" | tr -d ' \n')
  cpu_host=$(od -An -tx1 "$work/cpu-$name/output0.bin" | tr -d ' \n')
  read -r no_person_score person_score < <(od -An -td1 "$work/npu-$name/output0.bin")
  same="board = host NPU model = host CPU kernels"
  if [ "$board" != "$npu_host" ] || [ "$npu_host" != "$cpu_host" ]; then
    same="DIFFER: board $board, host NPU $npu_host, host CPU $cpu_host"; fail=1
  fi
  if [ "$name" = person ]; then ok=$((person_score > no_person_score)); else ok=$((no_person_score > person_score)); fi
  [ "$ok" = 1 ] || fail=1
  report+="      $name.bmp: person $person_score, no person $no_person_score ($([ "$ok" = 1 ] && echo as TFLM expects || echo NOT as TFLM expects)); $same"$'\n'
  k=$((k + 1))
done
if [ "$fail" = 0 ]; then done_step; else echo "FAILED"; fi
printf '%s' "$report"
echo
echo "demo: $(elapsed "$t_all") in all; logs and files in $work"
[ "$fail" = 0 ] || { echo "demo: FAILED (see above)" >&2; exit 1; }
echo
scripts/demo_npu_compile.sh "$npu" "$host"
