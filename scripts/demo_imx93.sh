#!/usr/bin/env bash
# make demo BOARD=imx93_m33: the i.MX93 Cortex-M33 deployment, emulated.
#  0. build the host runtime's CLI, ptec-run;
#  1. compile the zoo's digits CNN for the Cortex-M33 (int8, its kernel list);
#  2. write its held-back test images;
#  3. build the remoteproc firmware twice with only the program's kernels
#     and its pools sized exactly for the program (scripts/remote_pools.py):
#     for the real board (boards/imx93_m33: code TCM, system TCM, LPUART2,
#     MU1, DWT) and for its simulation on QEMU's AN505 (boards/imx93_m33_sim);
#     print code and data against the M33's TCMs;
#  4. run ptec-rproc's static checks on the real board's ELF (what Linux's
#     remoteproc checks, and the boot rules of the i.MX93);
#  5. "boot" the simulation with ptec-rproc (QEMU with DDR shared through a
#     file), place the model at 0x80100000 as dd would, set up the RPMsg
#     vdev, and run every test image over RPMsg; each output is compared
#     with ptec-run's on the host and must be byte-identical;
#  6. print predictions, accuracy, cost per inference and memory.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/demo_steps.sh
demo_workspace imx93_m33

echo "ptec demo: a digits CNN from PyTorch to an i.MX93 Cortex-M33, started by (emulated) Linux remoteproc"

build_host_step

step 1/6 "compile digits_cnn for cortex-m33: train (float), calibrate, quantize to int8, lower, plan"
quiet env PYTHONPATH=python "$py" -m ptec compile digits_cnn --calib 32 --target cortex-m33 \
  -o "$pte" --kernel-list "$kernels"
done_step "$(stat -c %s "$pte") bytes, $(grep -c '^PTEC_KERNEL' "$kernels") kernels"

step 2/6 "write the held-back test images"
quiet env PYTHONPATH=python "$py" scripts/demo_digits.py images "$work"
done_step "$(wc -l <"$work/labels.txt") images"

step 3/6 "build the remoteproc firmware (board and simulation) with the program's kernels, pools sized for it"
pools=$("$py" scripts/remote_pools.py "$pte" --target cortex-m33)
for preset in imx93-m33 imx93-m33-sim; do
  # shellcheck disable=SC2086
  quiet cmake --preset "$preset" -B "$build/$preset" -DPTEC_KERNEL_LIST="$PWD/$kernels" $pools
  quiet cmake --build "$build/$preset" --target ptec_remote -j 2
done
board_elf=$build/imx93-m33/firmware/remote/ptec_remote.elf
sim_elf=$build/imx93-m33-sim/firmware/remote/ptec_remote.elf
done_step "pools: $(echo "$pools" | sed 's/-DPTEC_REMOTE_//g; s/_BYTES//g')"
"$py" scripts/firmware_size.py "$board_elf" --budget imx93_m33 | sed 's/^/      /'

step 4/6 "remoteproc's checks on the real board's ELF ($board_elf)"
tools/ptec-rproc/ptec-rproc check "$board_elf" >"$work/check.txt" 2>&1 || { echo FAILED; cat "$work/check.txt"; exit 1; }
done_step
sed 's/^/      /' "$work/check.txt"

step 5/6 "boot the simulation with ptec-rproc, place the model, run every image over RPMsg"
status=0
tools/ptec-rproc/ptec-rproc run "$sim_elf" --model "$pte" --batch "$work/images" --ptec-run "$ptec_run" \
  --json "$work/rproc.json" --console "$work/console.txt" >"$work/rproc.txt" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAILED (exit status $status)"; tail -n 30 "$work/rproc.txt"; tail -n 10 "$work/console.txt"; exit 1
fi
done_step
sed 's/^/      /' "$work/rproc.txt"

step 6/6 "predictions and accuracy"
"$py" - "$work/rproc.json" "$work/labels.txt" "$work/float_accuracy.txt" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
labels = [int(x) for x in open(sys.argv[2]).read().split()]
float_acc = float(open(sys.argv[3]).read())
got = [r["label"] for r in report["runs"]]
right = sum(g == y for g, y in zip(got, labels))
print("done")
print("      first predictions (label / true): " + " ".join("%d/%d" % (g, y) for g, y in list(zip(got, labels))[:16]))
print("      accuracy on the M33 over RPMsg: %.1f%% (%d of %d); float model %.1f%%"
      % (100.0 * right / len(labels), right, len(labels), 100 * float_acc))
PY
echo
echo "demo: $(elapsed "$t_all") in all; logs and files in $work"
echo "demo: on a real i.MX93, the same ELF and .pte: docs/boards/imx93.md"
