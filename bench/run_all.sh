#!/usr/bin/env bash
# Every benchmark, one after the other. Figures are instruction counts
# (callgrind on the host, QEMU's icount on the boards) and sizes, never
# wall-clock time. Each script's `figure KEY VALUE` lines are collected into
# build/bench/figures.json and checked against bench/figures.json, the
# figures the README and docs cite (scripts/figures.py): a figure that moved
# fails the run until `scripts/figures.py update build/bench/figures.json`.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p ../build/bench
for b in dispatch_overhead.sh $(ls *.sh | grep -vE '^(run_all|dispatch_overhead|runner_log)\.sh$' || true); do
  echo "== $b"
  "./$b"
done 2>&1 | tee ../build/bench/bench.log
/usr/bin/python3 ../scripts/figures.py collect ../build/bench/bench.log -o ../build/bench/figures.json
/usr/bin/python3 ../scripts/figures.py check ../build/bench/figures.json
