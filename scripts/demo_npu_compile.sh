#!/usr/bin/env bash
# Second half of `make demo NPU=1`: a PyTorch model compiled by ptec for an
# Ethos-U55 (no Vela), on the emulated Cortex-M55 with ptec's NPU model.
#   scripts/demo_npu_compile.sh NPU HOST_BUILD
#  1. compile digits_cnn for the NPU (--target NPU): print the network summary
#     and the placement of every operator; and for the CPU alone, the same
#     quantized model, as the reference;
#  2. build the M55 runner with the EthosUBackend on the NPU model and the
#     NPU program compiled in;
#  3. run the held-back digits on the board (one QEMU run);
#  4. compare: board = host NPU model (ptec-run) = host CPU-only program,
#     byte for byte, and the accuracy; write the HTML report with the
#     placement.
set -euo pipefail
cd "$(dirname "$0")/.."
npu=${1:?usage: scripts/demo_npu_compile.sh NPU HOST_BUILD}
host=${2:?usage: scripts/demo_npu_compile.sh NPU HOST_BUILD}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
build=build/demo-npu
work=$build/compile
ptec_run=$host/tools/ptec-run/ptec-run
rm -rf "$work"
mkdir -p "$work"
log=$work/steps.log
: >"$log"

. scripts/demo_steps.sh

echo "ptec demo, part 2: a PyTorch digits CNN compiled by ptec for an $npu (no Vela), on the emulated Cortex-M55"

step 1/4 "compile digits_cnn for the $npu beside a cortex-m55, and for the cortex-m55 alone"
quiet env PYTHONPATH=python "$py" -m ptec compile digits_cnn --calib 32 --target "$npu" --cpu cortex-m55 \
  -o "$work/digits_npu.pte" --placement "$work/placement.txt"
quiet env PYTHONPATH=python "$py" -m ptec compile digits_cnn --calib 32 --target cortex-m55 \
  -o "$work/digits_cpu.pte"
done_step "$(stat -c %s "$work/digits_npu.pte") bytes (NPU) and $(stat -c %s "$work/digits_cpu.pte") bytes (CPU only)"
sed 's/^/      /' "$work/placement.txt"
quiet env PYTHONPATH=python "$py" scripts/demo_digits.py images "$work"

step 2/4 "build the cortex-m55 runner with the EthosUBackend and the NPU program compiled in"
quiet cmake --preset cortex-m55 -B "$build/m55-compile" -DPTEC_ETHOSU=ON -DPTEC_ETHOSU_TARGET="$npu" \
  -DPTEC_RUNNER_MODEL="$PWD/$work/digits_npu.pte"
quiet cmake --build "$build/m55-compile" --target ptec_runner -j 2
elf=$build/m55-compile/firmware/runner/ptec_runner.elf
done_step "$elf"

images=$(wc -l <"$work/labels.txt")
step 3/4 "run $images inferences on the board (one QEMU run, batch mode)"
status=0
scripts/run_qemu.sh --target cortex-m55 --elf "$elf" --input "$work/images.bin" --timeout 300 \
  >"$work/runner.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAILED (exit status $status)"; grep -v '^@' "$work/runner.log" | tail -n 30; exit 1
fi
done_step "$(sed -n 's/^inference: \([0-9]*\) instructions.*/\1 instructions per inference on average (CPU side and NPU model)/p' "$work/runner.log")"

step 4/4 "compare: board, host NPU model (ptec-run) and the CPU-only program, byte for byte"
status=0
"$py" scripts/demo_digits.py report --dir "$work" --pte "$work/digits_npu.pte" --log "$work/runner.log" \
  --elf "$elf" --ptec-run "$ptec_run" --target cortex-m55 --cpu-pte "$work/digits_cpu.pte" \
  >"$work/report.txt" 2>&1 || status=$?
if [ "$status" -eq 0 ]; then done_step; else echo "FAILED"; fi
sed -n '/== accuracy/,/^$/p' "$work/report.txt"
quiet env PYTHONPATH=python "$py" -m ptec report "$work/digits_npu.pte" --placement "$work/placement.txt" \
  --profile "$work/runner.log" --target cortex-m55 -o "$work/report.html"
echo "demo, part 2: report: $PWD/$work/report.html (placement, memory, cost per operator)"
echo "demo, part 2: $(elapsed "$t_all"); logs and files in $work"
[ "$status" -eq 0 ] || { cat "$work/report.txt"; echo "demo: FAILED (see above)" >&2; exit 1; }
