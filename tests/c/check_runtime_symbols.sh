#!/usr/bin/env bash
# The runtime and kernel libraries may only need string.h and math.h from libc:
# no heap, no stdio. Lists every symbol they need from outside themselves that
# is not on the allow list. The EthosUBackend's library also needs Arm's NPU
# driver API (ethosu_*), which the board or ptec's NPU model provides.
set -euo pipefail
allowed='^(memcpy|memmove|memset|memcmp|strlen|strncmp|strcmp|nearbyintf|roundf|floorf|ceilf|expf|logf|tanhf|sqrtf|fabsf|floor|ceil|fabs|round|nearbyint|exp|log|lrintf|atan2|fmodf|hypot|pow|frexp|ldexp|sqrt|lgamma|erfc|expm1|log1p|fmaf|expm1f|log1pf|log2f|log10f|sinf|cosf|tanf|asinf|acosf|atanf|sinhf|coshf|asinhf|acoshf|atanhf|erff|truncf|__stack_chk_fail|ethosu_[a-z0-9_]+)$'
defined=$(for lib in "$@"; do nm --defined-only --format=just-symbols "$lib"; done | sort -u)
needed=$(for lib in "$@"; do nm -u --format=just-symbols "$lib"; done | sort -u)
bad=$(comm -23 <(echo "$needed") <(echo "$defined") | grep -vE "$allowed" || true)
if [ -n "$bad" ]; then
  echo "the runtime needs symbols outside string.h/math.h:"; echo "$bad" | sed 's/^/  /'
  echo "0 passed, 1 failed"; exit 1
fi
echo "runtime + kernels need only: $(comm -23 <(echo "$needed") <(echo "$defined") | tr '\n' ' ')"
echo "1 passed, 0 failed"
