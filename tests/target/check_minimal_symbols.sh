#!/usr/bin/env bash
# The runtime core adds no stdio, no heap and no 64-bit division helper to a
# firmware. ptec_minimal (firmware/minimal: one program loaded and executed
# through the public API, no console) must link none that the same image
# without ptec (ptec_minimal_bare: the board, whose startup makes stdout
# unbuffered for applications that print) does not link already, and no
# object of the runtime core's archive may refer to one. A 64-bit division
# on a 32-bit core is a libgcc call (__aeabi_uldivmod, __aeabi_ldivmod).
#   check_minimal_symbols.sh PTEC_MINIMAL.elf PTEC_MINIMAL_BARE.elf libptec_runtime.a
set -euo pipefail
elf=$1 bare=$2 core=$3
nm=arm-none-eabi-nm
symbols=$("$nm" --format=just-symbols "$elf" | sort -u)
# Not vacuous: the image loads and runs a program.
for needed in main ptec_method_load_single ptec_method_execute; do
  if ! grep -qx "$needed" <<<"$symbols"; then
    echo "$elf does not link $needed"; echo "0 passed, 1 failed"; exit 1
  fi
done
forbidden='^(_?_?(s|sn|vsn|vs|f|vf|v|i|fi|si|sni)?printf(_r)?|_printf_[a-z]+|_svfi?printf_r|_vfi?printf_r|_?puts(_r)?|putchar(_r)?|_?fputs(_r)?|_?fputc(_r)?|_?fwrite(_r)?|setvbuf|__sfp|__sinit|_?fflush(_r)?|_?malloc(_r)?|_?free(_r)?|_sbrk(_r)?|__aeabi_u?ldivmod|__(u)?divdi3|__(u)?moddi3|__udivmoddi4|__divmoddi4)$'
added=$(comm -23 <(echo "$symbols") <("$nm" --format=just-symbols "$bare" | sort -u) | grep -E "$forbidden" || true)
referred=$("$nm" -u --format=just-symbols "$core" | sort -u | grep -E "$forbidden" || true)
failed=0
if [ -n "$added" ]; then
  echo "linking ptec adds stdio, the heap or 64-bit division to $elf:"; echo "$added" | sed 's/^/  /'
  failed=1
fi
if [ -n "$referred" ]; then
  echo "the runtime core ($core) refers to stdio, the heap or 64-bit division:"; echo "$referred" | sed 's/^/  /'
  failed=1
fi
if [ "$failed" = 1 ]; then
  echo "0 passed, 1 failed"; exit 1
fi
echo "$elf: ptec adds no stdio, heap or 64-bit division; the core refers to none"
echo "1 passed, 0 failed"
