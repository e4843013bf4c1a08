#!/usr/bin/env bash
# The README's C example must be examples/hello/main.c, word for word.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
awk '/^```c example$/ {on=1; next} /^```$/ {on=0} on' "$root/README.md" >/tmp/ptec-readme-example.$$
if diff -u "$root/examples/hello/main.c" /tmp/ptec-readme-example.$$; then
  rm -f /tmp/ptec-readme-example.$$; echo "1 passed, 0 failed"
else
  rm -f /tmp/ptec-readme-example.$$; echo "README example differs from examples/hello/main.c"; echo "0 passed, 1 failed"; exit 1
fi
