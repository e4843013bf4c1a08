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
