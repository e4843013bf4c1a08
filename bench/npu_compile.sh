#!/usr/bin/env bash
# ptec's Ethos-U compiler on the zoo and torchvision MobileNet-V2 1.0: placement,
# flash, SRAM and the NPU cycle estimate per network and NPU (bench/npu_compile.py).
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 bench/npu_compile.py
