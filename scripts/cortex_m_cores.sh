#!/usr/bin/env bash
# Prints the Cortex-M cores, one a line, in CMakePresets.json's order: the
# TARGET_CPU of each bare-metal preset (each has a QEMU board, docs/targets.md).
# The shell scripts' list of cores; Python's is ptec.targets.CORES.
set -euo pipefail
sed -n 's/.*"TARGET_CPU": "\(cortex-m[0-9]*\)".*/\1/p' "$(dirname "$0")/../CMakePresets.json" | awk '!seen[$0]++'
