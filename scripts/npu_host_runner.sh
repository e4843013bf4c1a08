#!/usr/bin/env bash
# Builds (once) a host ptec-run whose EthosUBackend drives the NPU model as
# ACCELERATOR, and prints its path. The NPU a build drives is a build
# constant (PTEC_ETHOSU_TARGET; docs/ethos-u.md, "The delegate"), so each
# accelerator the tests run besides build/host's gets its own build tree.
#   scripts/npu_host_runner.sh ethos-u65-256
set -euo pipefail
cd "$(dirname "$0")/.."
accel=${1:?usage: scripts/npu_host_runner.sh ACCELERATOR}
case $accel in
  ethos-u55-32|ethos-u55-64|ethos-u55-128|ethos-u55-256|ethos-u65-256|ethos-u65-512) ;;
  *) echo "npu_host_runner: unknown accelerator '$accel'" >&2; exit 2 ;;
esac
dir=build/npu-host/$accel
mkdir -p build/npu-host
exec 9>"build/.npu-host-$accel.lock"   # parallel test workers build it once
flock 9
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake --preset host -B "$dir" -DPTEC_ETHOSU=ON -DPTEC_ETHOSU_TARGET="$accel" >"$dir.log" 2>&1 \
    || { cat "$dir.log" >&2; exit 1; }
fi
cmake --build "$dir" --target ptec-run -j "$(nproc 2>/dev/null || echo 2)" >>"$dir.log" 2>&1 \
  || { tail -40 "$dir.log" >&2; exit 1; }
echo "$(pwd)/$dir/tools/ptec-run/ptec-run"
