#!/usr/bin/env bash
# Footprint on every core (scripts/size.sh, as `make size`): the runtime
# core's .text with and without the prose of error messages, and the runner
# images split by origin.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/size.sh
