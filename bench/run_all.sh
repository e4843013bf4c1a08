#!/usr/bin/env bash
# Every benchmark, one after the other. Figures are instruction counts
# (callgrind on the host, QEMU's icount on the boards), never wall-clock time.
set -euo pipefail
cd "$(dirname "$0")"
for b in dispatch_overhead.sh $(ls *.sh | grep -vE '^(run_all|dispatch_overhead)\.sh$' || true); do
  echo "== $b"
  "./$b"
done
