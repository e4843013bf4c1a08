#!/bin/sh
# Runs test_npu_modes in both driver modes for one product and requires
# identical transcripts (tests/c/npu/test_npu_modes.c).
# Usage: compare_modes.sh u55|u65 <direct exe> <regs exe> <shared dir> <case dir> <work dir>
set -u
product=$1 direct=$2 regs=$3 shared=$4 cases=$5 work=$6
mkdir -p "$work" || exit 1
"$direct" "$product" "$shared" "$cases" "$work/direct_$product.txt" || { echo "mode (a) failed"; exit 1; }
"$regs" "$product" "$shared" "$cases" "$work/regs_$product.txt" || { echo "mode (b) failed"; exit 1; }
if ! diff "$work/direct_$product.txt" "$work/regs_$product.txt"; then
    echo "modes (a) and (b) differ for $product"
    exit 1
fi
lines=$(wc -l < "$work/direct_$product.txt")
[ "$lines" -gt 0 ] || { echo "empty transcript"; exit 1; }
echo "$product: $lines transcript lines identical in both modes"
cat "$work/direct_$product.txt"
