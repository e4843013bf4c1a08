#!/usr/bin/env bash
# The i.MX93 M33 firmware's footprint for the issue's deployment: the RPMsg
# model server with the runtime, only ds_cnn's kernels, RPMsg and the board,
# pools sized exactly for ds_cnn (scripts/remote_pools.py), built for the
# real board (boards/imx93_m33). Prints code and data against the TCMs and
# upstream ExecuTorch's 52 KB + 51 KB for the same deployment, as figures
# imx93.ds_cnn.code and imx93.ds_cnn.data (bytes).
#   bench/imx93_size.sh [BUILD_DIR]   (default build/bench/imx93-ds_cnn)
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
out=$(realpath -m "${1:-build/bench/imx93-ds_cnn}")
mkdir -p "$out"
log=$out/build.log
env PYTHONPATH=python "$py" -m ptec compile ds_cnn --calib 8 --target cortex-m33 -o "$out/ds_cnn.pte" \
  --kernel-list "$out/ds_cnn_kernels.def" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
pools=$("$py" scripts/remote_pools.py "$out/ds_cnn.pte" --target cortex-m33)
# shellcheck disable=SC2086
cmake --preset imx93-m33 -B "$out/build" -DPTEC_KERNEL_LIST="$out/ds_cnn_kernels.def" $pools >>"$log" 2>&1 \
  || { tail -20 "$log"; exit 1; }
cmake --build "$out/build" --target ptec_remote -j 2 >>"$log" 2>&1 || { tail -20 "$log"; exit 1; }
elf=$out/build/firmware/remote/ptec_remote.elf
echo "i.MX93 M33 firmware for ds_cnn ($elf), pools $pools:"
"$py" scripts/firmware_size.py "$elf" --budget imx93_m33 --figures imx93.ds_cnn
tools/ptec-rproc/ptec-rproc check "$elf" | tail -1
