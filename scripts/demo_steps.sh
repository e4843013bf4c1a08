# The demos' step lines (sourced by scripts/demo.sh and scripts/demo_npu.sh):
# one progress line per step with its time, the step's output in $log, shown
# when it fails. The caller sets $log first.
t_all=$(date +%s.%N)
t_step=$t_all
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }
step() { t_step=$(date +%s.%N); printf '[%s] %s ... ' "$1" "$2"; }
done_step() { echo "done (${1:+$1, }$(elapsed "$t_step"))"; }
# Runs a step's command with its output in $log; on failure shows it and stops.
quiet() {
  if ! "$@" >>"$log" 2>&1; then
    echo "FAILED"; echo "--- $*"; tail -n 40 "$log"; exit 1
  fi
}

# A demo's workspace: build/demo-<name>/demo, emptied, and the names every
# demo uses (the interpreter, ptec-run, the program, its kernel list, the
# step log). Then step 0, the host build of ptec-run.
demo_workspace() {
  py=/usr/bin/python3
  [ -x "$py" ] || py=python3
  ptec_run=build/host/tools/ptec-run/ptec-run
  build=build/demo-$1
  work=$build/demo
  rm -rf "$work"
  mkdir -p "$work"
  pte=$work/digits_cnn.pte
  kernels=$work/digits_cnn_kernels.def
  log=$work/steps.log
  : >"$log"
}

build_host_step() {
  step 0/6 "build the host runtime and ptec-run (host preset)"
  quiet cmake --preset host
  quiet cmake --build --preset host --target ptec-run -j 2
  done_step
}
