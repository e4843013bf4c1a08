#!/bin/sh
# An executable whose backend table lists no backend links no delegate
# support; one that registers a backend links it (the check can fail).
#   check_no_delegates.sh NO_BACKEND_EXE WITH_BACKEND_EXE
set -eu
nm_cmd=${NM:-nm}
symbols='ptec_delegate_support|ptec_delegate_fail|ptec_delegate_compile_spec|ptec_program_delegate'
if "$nm_cmd" "$1" | grep -E " [TDRtdr] ($symbols)\$"; then
  echo "FAIL: $1 links delegate support with no backend registered" >&2
  exit 1
fi
for s in ptec_delegate_support ptec_delegate_fail; do
  "$nm_cmd" "$2" | grep -qE " [TDRtdr] $s\$" || { echo "FAIL: $2 lacks $s" >&2; exit 1; }
done
echo "ok: no delegate support without a backend, present with one"
