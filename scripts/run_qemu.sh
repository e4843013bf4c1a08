#!/usr/bin/env bash
# Runs a ptec firmware in QEMU and exits with the firmware's own exit code.
#
#   scripts/run_qemu.sh --elf FILE [--target cortex-m55|cortex-m33|cortex-m7|cortex-m4|cortex-m3]
#                       [--model FILE [--model-addr ADDR]]
#                       [--input FILE [--input-addr ADDR]]
#                       [--timeout SECONDS] [--dry-run]
#
# The QEMU machine is the firmware's board's: the ELF's .ptec_board_info
# record (boards/board_record.c, from board.cmake). --target, when given,
# must be the board's CPU (a check that the ELF is the one meant).
# --model / --input place a file in memory with QEMU's -device loader. The
# addresses default to the firmware's program and input slots (the linker
# symbols __ptec_model_slot and __ptec_input_slot). When the firmware has a
# ptec_boot_info block, the script also writes the sizes there so the
# firmware knows how many bytes it got.
# Instruction counting: -icount shift=10 (one instruction = 20.48 ticks of
# the FPGAIO counter, the constant the boards' ptec_platform_ticks uses).
# A firmware that runs past --timeout (default 60 s) is killed; the script
# then says so and exits 124.
set -euo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "run_qemu: $*" >&2; exit 2; }

target="" elf="" model="" model_addr="" input="" input_addr="" timeout_s=60 dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:-}"; shift 2 ;;
    --elf) elf="${2:-}"; shift 2 ;;
    --model) model="${2:-}"; shift 2 ;;
    --model-addr) model_addr="${2:-}"; shift 2 ;;
    --input) input="${2:-}"; shift 2 ;;
    --input-addr) input_addr="${2:-}"; shift 2 ;;
    --timeout) timeout_s="${2:-}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[ -n "$elf" ] || die "--elf is required"
[ -f "$elf" ] || die "no such firmware: $elf"
[ -z "$model" ] || [ -f "$model" ] || die "no such model file: $model"
[ -z "$input" ] || [ -f "$input" ] || die "no such input file: $input"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout takes a whole number of seconds, at least 1"
command -v qemu-system-arm >/dev/null || die "qemu-system-arm not found (run scripts/setup.sh)"

# Address of a symbol in the firmware, as 0x..., or empty.
symbol() {
  local nm=arm-none-eabi-nm
  command -v "$nm" >/dev/null || return 0
  "$nm" "$elf" 2>/dev/null | awk -v s="$1" '$3 == s && !found { print "0x" $1; found = 1 }'
}
file_size() { stat -c %s "$1"; }
# A field of the firmware's board record (.ptec_board_info), or empty.
board_field() {
  local readelf=arm-none-eabi-readelf
  command -v "$readelf" >/dev/null || readelf=readelf
  "$readelf" -p .ptec_board_info "$elf" 2>/dev/null |
    sed -n "s/^ *\[ *[0-9a-f]*\] *$1=//p" | head -n 1
}

board="$(board_field board)"
machine="$(board_field qemu_machine)"
[ -n "$board" ] || die "$elf has no board record (.ptec_board_info): build it with this tree's boards/"
[ -n "$machine" ] || die "$elf is for board $board, which has no QEMU machine"
if [ -n "$target" ] && [ "$target" != "$(board_field cpu)" ]; then
  die "--target $target, but $elf is for board $board with a $(board_field cpu)"
fi

args=(-M "$machine" -nographic
      -semihosting-config enable=on,target=native
      -icount shift=10,align=off,sleep=off
      -kernel "$elf")

if [ -n "$model" ]; then
  [ -n "$model_addr" ] || model_addr="$(symbol __ptec_model_slot)"
  [ -n "$model_addr" ] || die "--model-addr is required: $elf has no __ptec_model_slot"
  slot_size="$(symbol __ptec_model_slot_size)"
  if [ -n "$slot_size" ] && [ "$model_addr" = "$(symbol __ptec_model_slot)" ] &&
     [ "$(file_size "$model")" -gt $((slot_size)) ]; then
    die "$model ($(file_size "$model") bytes) does not fit the program slot ($((slot_size)) bytes)"
  fi
  args+=(-device "loader,file=$model,addr=$model_addr,force-raw=on")
fi
if [ -n "$input" ]; then
  [ -n "$input_addr" ] || input_addr="$(symbol __ptec_input_slot)"
  [ -n "$input_addr" ] || die "--input-addr is required: $elf has no __ptec_input_slot"
  args+=(-device "loader,file=$input,addr=$input_addr,force-raw=on")
fi
boot_info="$(symbol ptec_boot_info)"
if [ -n "$boot_info" ] && { [ -n "$model" ] || [ -n "$input" ]; }; then
  model_size=0 input_size=0
  [ -z "$model" ] || model_size="$(file_size "$model")"
  [ -z "$input" ] || input_size="$(file_size "$input")"
  args+=(-device "loader,addr=$boot_info,data=0x49425450,data-len=4"
         -device "loader,addr=$(printf '0x%x' $((boot_info + 4))),data=$model_size,data-len=4"
         -device "loader,addr=$(printf '0x%x' $((boot_info + 8))),data=$input_size,data-len=4")
fi

if [ "$dry_run" -eq 1 ]; then
  printf '%q ' timeout "$timeout_s" qemu-system-arm "${args[@]}"; echo
  exit 0
fi

# stdin from /dev/null: the terminal stays in cooked mode, so Ctrl-C stops
# QEMU, and a test harness's stdin never reaches the guest.
status=0
timeout "$timeout_s" qemu-system-arm "${args[@]}" </dev/null || status=$?
if [ "$status" -eq 124 ]; then
  echo "run_qemu: TIMEOUT: $elf did not exit within ${timeout_s} s (killed)" >&2
fi
exit "$status"
