#!/usr/bin/env bash
# make demo: the whole path on one small model.
#   scripts/demo.sh [cortex-m55|cortex-m33|cortex-m7|cortex-m4|cortex-m3|BOARD]   (BOARD: a folder of boards/ with a QEMU machine;
#   imx93_m33 or imx93_m33_sim: the remoteproc flow, scripts/demo_imx93.sh)
#  0. build the host runtime's CLI, ptec-run (host preset);
#  1. compile the zoo's digits CNN (trained in seconds on sklearn's bundled
#     8x8 digits) to an int8 .pte for the target with the AOT compiler;
#  2. write its held-back test images (the split the compiler's accuracy uses);
#  3. build the firmware runner for the target with the program compiled in
#     and only the program's kernels (build/demo-<target>);
#  4. run every test image on the emulated board in one QEMU run (the runner's
#     batch mode);
#  5. run the same images through the host runtime (ptec-run) and print
#     predictions, accuracy (float, int8 host, int8 board), instructions per
#     inference and memory. Exits non-zero if board and host differ by a byte;
#  6. write the HTML report (ptec report: memory timeline, instructions per
#     operator from the board's profile, placement, memory per region) and
#     print its path.
# Each step prints one progress line; build and compiler output go to
# build/demo-<target>/demo/steps.log (shown when a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-cortex-m55}
# A core builds for its default board (boards/CMakeLists.txt); a board name
# builds for that board, and its core (board.cmake) is the AOT target.
# run_qemu.sh takes the QEMU machine from the firmware's board record.
board_args=()
build_name=$target
cores=$(scripts/cortex_m_cores.sh | tr '\n' ' ')
case " $cores " in
  *" $target "*) ;;
  *)
    if [ ! -f "boards/$target/board.cmake" ]; then
      echo "demo: target must be a core (${cores% }) or a board of boards/, not '$target'" >&2; exit 2
    fi
    # A board that Linux starts with remoteproc has its own flow: RPMsg, not a batch run.
    if grep -q imx93_common boards/"$target"/board.cmake; then
      exec scripts/demo_imx93.sh
    fi
    board_args=(-DPTEC_BOARD="$target")
    build_name=$target
    target=$(sed -n 's/^set(PTEC_BOARD_CPU \([a-z0-9-]*\)).*/\1/p' "boards/$target/board.cmake")
    [ -n "$target" ] || { echo "demo: board $build_name has no CPU for the AOT" >&2; exit 2; }
    ;;
esac
. scripts/demo_steps.sh
demo_workspace "$build_name"

echo "ptec demo: a digits CNN from PyTorch to an emulated $target board (QEMU)"

build_host_step

step 1/6 "compile digits_cnn for $target: train (float), calibrate, quantize to int8, lower, plan"
quiet env PYTHONPATH=python "$py" -m ptec compile digits_cnn --calib 32 --target "$target" \
  -o "$pte" --kernel-list "$kernels"
done_step "$(stat -c %s "$pte") bytes, $(grep -c '^PTEC_KERNEL' "$kernels") kernels"
sed -n 's/^\[ptec\] \(lowered\|memory:\|input \|output \)/      \1/p' "$log"

step 2/6 "write the held-back test images"
quiet env PYTHONPATH=python "$py" scripts/demo_digits.py images "$work"
done_step
echo "      $(tail -n 1 "$log")"
images=$(wc -l <"$work/labels.txt")

step 3/6 "build the $target runner with the program compiled in and only its kernels"
quiet cmake --preset "$target" -B "$build" "${board_args[@]}" -DPTEC_RUNNER_MODEL="$PWD/$pte" \
  -DPTEC_KERNEL_LIST="$PWD/$kernels"
quiet cmake --build "$build" --target ptec_runner -j 2
elf=$build/firmware/runner/ptec_runner.elf
done_step "$elf"
echo "      board: $(arm-none-eabi-readelf -p .ptec_board_info "$elf" | sed -n 's/^ *\[ *[0-9a-f]*\] *//p' | paste -sd ' ')"

step 4/6 "run $images inferences on the board (one QEMU run, batch mode)"
status=0
scripts/run_qemu.sh --target "$target" --elf "$elf" --input "$work/images.bin" --timeout 120 \
  >"$work/runner.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "FAILED (exit status $status)"; grep -v '^@' "$work/runner.log" | tail -n 30; exit 1
fi
done_step "$(sed -n 's/^inference: \([0-9]*\) instructions.*/\1 instructions per inference on average/p' "$work/runner.log")"
echo "      first lines of the board's log:"
grep -m 4 '^infer ' "$work/runner.log" | sed 's/^/        /'

step 5/6 "run the same $images images on the host runtime (ptec-run) and compare"
status=0
"$py" scripts/demo_digits.py report --dir "$work" --pte "$pte" --log "$work/runner.log" --elf "$elf" \
  --ptec-run "$ptec_run" --target "$target" --kernels "$kernels" >"$work/report.txt" 2>&1 || status=$?
if [ "$status" -eq 0 ]; then done_step; else echo "FAILED"; fi
cat "$work/report.txt"

step 6/6 "write the HTML report (memory timeline, cost per operator, placement)"
machine=$(arm-none-eabi-readelf -p .ptec_board_info "$elf" | sed -n 's/.*qemu_machine=\([a-z0-9-]*\).*/\1/p' | head -n 1)
board_opt=()
if "$py" -c "import sys; sys.path.insert(0, 'python'); from ptec.report import BOARDS; sys.exit('$machine' not in BOARDS)"; then
  board_opt=(--board "$machine")
fi
quiet env PYTHONPATH=python "$py" -m ptec report "$pte" --profile "$work/runner.log" --target "$target" \
  "${board_opt[@]}" -o "$work/report.html"
done_step "$work/report.html"
echo
echo "demo: $(elapsed "$t_all") in all; logs and files in $work"
echo "demo: report: $PWD/$work/report.html (open it in a browser)"
[ "$status" -eq 0 ] || { echo "demo: FAILED (see above)" >&2; exit 1; }
