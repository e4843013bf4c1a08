#!/usr/bin/env bash
# Runs the structure-aware fuzzer (tests/fuzz) under ASan + UBSan.
#
#   scripts/fuzz.sh --seconds N [--fresh] [--coverage] [--npu | --mlw | --rpmsg]
#
# Builds the fuzz preset (clang + libFuzzer), writes the seed corpus, and
# fuzzes for N seconds with a fixed seed. The corpus grows in build/fuzz/corpus
# across runs; --fresh starts from the seeds alone in a new directory (what
# `make test` does, so its run does not depend on earlier ones). An input that
# crashes, hangs or leaks is copied into tests/fuzz/regressions/, which ctest
# replays on every build, and the script fails. --coverage then replays the
# seeds and the corpus through the fuzz-coverage build and prints the line
# coverage of src/runtime (llvm-cov). --npu fuzzes the NPU model's command
# stream interpreter instead (fuzz_npu_stream, seeds from make_npu_seeds.py,
# findings into tests/fuzz/npu_regressions/, corpus build/fuzz/npu_corpus);
# --mlw its weight decoder (fuzz_mlw, seeds from make_mlw_seeds.py, findings
# into tests/fuzz/mlw_regressions/, corpus build/fuzz/mlw_corpus); --rpmsg the
# i.MX93 model server behind RPMsg (fuzz_rpmsg: shared memory from the input;
# seeds and findings in tests/rpmsg/fuzz_seeds/, which ctest replays).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=""
fresh=0
coverage=0
npu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --coverage) coverage=1; shift ;;
    --npu) npu=1; shift ;;
    --mlw) npu=mlw; shift ;;
    --rpmsg) npu=rpmsg; shift ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[ -n "$seconds" ] || { echo "fuzz: --seconds is required" >&2; exit 2; }

shared="${PTEC_SHARED:-$(pwd)/../shared}"
out=build/fuzz
# target, replay tool, seeds, seed writer, corpus, regressions
target_dir=tests/fuzz
if [ "$npu" = rpmsg ]; then
  set -- fuzz_rpmsg fuzz_rpmsg_replay rpmsg_seeds "" rpmsg_corpus tests/rpmsg/fuzz_seeds
  target_dir=tests/rpmsg
  coverage=0
elif [ "$npu" = mlw ]; then
  set -- fuzz_mlw fuzz_mlw_replay mlw_seeds make_mlw_seeds.py mlw_corpus tests/fuzz/mlw_regressions
  coverage=0
elif [ "$npu" = 1 ]; then
  set -- fuzz_npu_stream fuzz_npu_replay npu_seeds make_npu_seeds.py npu_corpus tests/fuzz/npu_regressions
  coverage=0
else
  set -- fuzz_pte fuzz_replay seeds make_seed_corpus.py corpus tests/fuzz/regressions
fi
target=$1 replay=$2 seeds=$out/$3 seed_script=$4 corpus_dir=$out/$5 regressions=$6

cmake --preset fuzz >/dev/null
cmake --build build/fuzz -j 2 --target "$target" >/dev/null
# The pte fuzzer also starts from the hostile Ethos-U blobs (extra seeds that
# are refused at load, so they are kept apart from the seeds that must run).
extra_seeds=()
if [ "$npu" = rpmsg ]; then  # the seeds are files in the tree
  rm -rf "$seeds" && mkdir -p "$seeds" && cp tests/rpmsg/fuzz_seeds/* "$seeds/"
elif [ "$npu" != 0 ]; then  # --npu and --mlw: seeds only
  /usr/bin/python3 "tests/fuzz/$seed_script" "$shared" "$seeds"
else
  extra_seeds=("$out/seeds-hostile")
  /usr/bin/python3 "tests/fuzz/$seed_script" "$shared" "$seeds" --hostile "$out/seeds-hostile"
fi

if [ "$fresh" = 1 ]; then
  corpus=$(mktemp -d "$out/corpus-fresh.XXXXXX")
  trap 'rm -rf "$corpus"' EXIT
else
  corpus=$corpus_dir
  mkdir -p "$corpus"
fi
artifacts=$out/artifacts
rm -rf "$artifacts"
mkdir -p "$artifacts"

# -seed: the same mutations every run. -timeout: one input may take 10 s
# (a crafted loop is bounded by the runtime's execution budget, not by luck).
# The short run stops at the first finding; the long one (fork mode) keeps
# going and collects every finding.
mode=(-print_final_stats=1)
if [ "$fresh" = 0 ]; then
  mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
echo "fuzz: $target ${seconds} s from $(ls "$seeds" | wc -l) seeds, corpus $corpus"
status=0
"$out/$target_dir/$target" -seed=1 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${mode[@]}" \
    -artifact_prefix="$artifacts/" "$corpus" "$seeds" "${extra_seeds[@]}" >"$out/fuzz.log" 2>&1 || status=$?
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|^#[0-9]+: cov' "$out/fuzz.log" \
    | tail -3 | sed 's/^/fuzz: /'

found=$(find "$artifacts" -type f | sort)
if [ -n "$found" ]; then
  for f in $found; do
    cp "$f" "$regressions/"
    echo "fuzz: FOUND $(basename "$f") -> $regressions/ (replay: build/host-asan/$target_dir/$replay $regressions/$(basename "$f"))"
  done
  grep -E 'ERROR: |SUMMARY: |runtime error' "$out/fuzz.log" | head -20 | sed 's/^/fuzz: /'
fi
if [ "$status" != 0 ] || [ -n "$found" ]; then
  echo "fuzz: FAILED (libFuzzer exit $status; log $out/fuzz.log)"
  exit 1
fi
echo "fuzz: no crash, hang or leak"

if [ "$coverage" = 1 ]; then
  cmake --preset fuzz-coverage >/dev/null
  cmake --build --preset fuzz-coverage -j 2 >/dev/null
  cov=build/fuzz-coverage
  rm -f "$cov"/*.profraw
  LLVM_PROFILE_FILE="$cov/replay.profraw" "$cov/tests/fuzz/fuzz_replay" "$out/seeds" "$out/seeds-hostile" "$corpus" >/dev/null
  llvm-profdata merge -o "$cov/fuzz.profdata" "$cov/replay.profraw"
  llvm-cov report "$cov/tests/fuzz/fuzz_replay" -instr-profile="$cov/fuzz.profdata" src/runtime/ \
      >"$cov/coverage.txt"
  awk '/^TOTAL/ { printf "fuzz: src/runtime line coverage %s (%d of %d lines) over the seeds and corpus\n", $10, $8 - $9, $8 }' \
      "$cov/coverage.txt"
fi
