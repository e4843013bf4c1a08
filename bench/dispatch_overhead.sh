#!/usr/bin/env bash
# Host instructions that one ptec_method_execute() of a program costs, minus
# what its kernels' run() functions cost: the runtime's dispatch overhead.
# Counted with callgrind (exact and repeatable). Upstream's Method::execute
# costs 908 instructions for add.pte by the same measure.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-${PTEC_SHARED:-../shared}/models/upstream/add.pte}
bin=build/host/bench/bench_dispatch
runs=1000
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" "$model" "$runs" >/dev/null 2>&1
callgrind_annotate --inclusive=yes --threshold=100 "$out/cg" >"$out/report" 2>/dev/null
inclusive() { awk -v f="$1" '$0 ~ f"[ (]|"f"$" {gsub(",", "", $1); print $1; exit}' "$out/report"; }
execute=$(inclusive ptec_method_execute)
kernels=0
for k in $(grep -oE 'ptec_[a-z_]*_run\b' "$out/report" | sort -u); do
  v=$(inclusive "$k"); kernels=$((kernels + ${v:-0}))
done
per_exec=$(( execute / runs ))
per_kernel=$(( kernels / runs ))
printf 'dispatch overhead, %s:\n' "$(basename "$model")"
printf '  execute (inclusive)   %6d instructions per run\n' "$per_exec"
printf '  kernels run()         %6d\n' "$per_kernel"
printf '  runtime overhead      %6d   (upstream Method::execute: 908; aim: < 150)\n' $((per_exec - per_kernel))
name=$(basename "$model" .pte)
echo "figure host.dispatch.$name.execute $per_exec"
echo "figure host.dispatch.$name.overhead $((per_exec - per_kernel))"
