# Sourced by the bench scripts: one figure from a firmware runner's report
# (firmware/runner/runner_main.c prints it).
#   runner_figure FIELD <<<"$log"
# FIELD: inference, init, requirements, load (instructions), or
# metadata, planned, scratch (bytes the runtime asked for).
runner_figure() {
  case "$1" in
    inference) sed -n 's/^inference: \([0-9]*\) instructions.*/\1/p' ;;
    init) sed -n 's/^program init: \([0-9]*\) .*/\1/p' ;;
    requirements) sed -n 's/^method requirements: \([0-9]*\) .*/\1/p' ;;
    load) sed -n 's/^method load: \([0-9]*\) .*/\1/p' ;;
    metadata) sed -n 's/^  metadata *required *\([0-9]*\) B.*/\1/p' ;;
    planned) sed -n 's/^  planned\[1\] *required *\([0-9]*\) B.*/\1/p' ;;
    scratch) sed -n 's/^  scratch *required *\([0-9]*\) B.*/\1/p' ;;
    *) echo "runner_figure: unknown field $1" >&2; return 2 ;;
  esac
}

# `figure PREFIX.FIELD VALUE` lines (scripts/figures.py) for several fields.
#   runner_figures PREFIX FIELD... <<<"$log"
runner_figures() {
  local prefix=$1 log field
  shift
  log=$(cat)
  for field in "$@"; do
    echo "figure $prefix.$field $(runner_figure "$field" <<<"$log")"
  done
}
