#!/usr/bin/env bash
# Runs a command and checks its exit status and output.
#   expect_run.sh [--exit N[,N...]] [--match REGEX]... [--reject REGEX]... -- COMMAND...
# --exit: the allowed exit statuses (default 0).
# --match: some line of stdout+stderr must match the (extended) regex.
# --reject: no line may match. The output is echoed for ctest's log.
set -uo pipefail

want_exit=0
matches=()
rejects=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) want_exit="$2"; shift 2 ;;
    --match) matches+=("$2"); shift 2 ;;
    --reject) rejects+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect_run: unknown argument $1" >&2; exit 2 ;;
  esac
done

output="$(mktemp)"
trap 'rm -f "$output"' EXIT
"$@" >"$output" 2>&1
status=$?
cat "$output"

failed=0
if [[ ",$want_exit," != *",$status,"* ]]; then
  echo "expect_run: FAIL: exit status $status, expected $want_exit" >&2
  failed=1
fi
for re in "${matches[@]+"${matches[@]}"}"; do
  if ! grep -Eq -- "$re" "$output"; then
    echo "expect_run: FAIL: no line matches /$re/" >&2
    failed=1
  fi
done
for re in "${rejects[@]+"${rejects[@]}"}"; do
  if grep -Eq -- "$re" "$output"; then
    echo "expect_run: FAIL: a line matches /$re/, which must not appear" >&2
    failed=1
  fi
done
exit "$failed"
