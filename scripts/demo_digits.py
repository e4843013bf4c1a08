#!/usr/bin/env python3
"""The data and the report of `make demo` (scripts/demo.sh).

    demo_digits.py images DIR
        Writes DIR/images.bin (every held-back test image of the digits CNN's
        split, float32 [1,8,8,1] = NHWC, back to back: one block per
        inference for the runner's batch mode), DIR/images/<k>.bin (one
        file each, for ptec-run) and DIR/labels.txt, and prints the float
        model's accuracy on them (DIR/float_accuracy.txt).
    demo_digits.py report --dir DIR --pte FILE --log RUNNER_LOG --elf FIRMWARE.elf
                          --ptec-run BIN --target T
        Runs ptec-run on each image, compares its outputs with the board's
        byte for byte, and prints predictions, accuracy, instructions and
        memory. Exit status 1 when the board and the host disagree (or
        something failed). --cpu-pte FILE: also run a CPU-only program of
        the same model (the NPU demo) and require the same bytes.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

SHOWN = 40       # images in the predictions table
PER_ROW = 20
# Where each part of the image lives (docs/targets.md, memory map).
REGIONS = {
    "cortex-m55": {"code": "ITCM", "model": "QSPI flash, read-only, used in place", "ram": "DTCM",
                   "pools": "ISRAM"},
    **{core: {"code": "SSRAM1", "model": "SSRAM1 after the code, used in place", "ram": "SSRAM2/3",
              "pools": "SSRAM2/3"}                  # the MPS2 boards (AN505, AN500, AN386, AN385)
       for core in ("cortex-m33", "cortex-m7", "cortex-m4", "cortex-m3")},
}


def cmd_images(out):
    from ptec.models import load_model
    from ptec.models.digits import accuracy, digits_dataset
    xtr, _, xte, yte = digits_dataset()
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    blocks = []
    for k, x in enumerate(xte):
        # [1,8,8] NCHW with C = 1: the same bytes as NHWC, the program's order.
        raw = np.ascontiguousarray(x, np.float32).tobytes()
        blocks.append(raw)
        with open(os.path.join(out, "images", f"{k}.bin"), "wb") as f:
            f.write(raw)
    with open(os.path.join(out, "images.bin"), "wb") as f:
        f.write(b"".join(blocks))
    with open(os.path.join(out, "labels.txt"), "w") as f:
        f.write("\n".join(str(int(y)) for y in yte) + "\n")
    acc = accuracy(load_model("digits_cnn").module, xte, yte)
    with open(os.path.join(out, "float_accuracy.txt"), "w") as f:
        f.write(f"{acc}\n")
    print(f"{len(yte)} images (every 5th of sklearn's {len(xtr) + len(xte)} digits, never trained on); "
          f"float model accuracy {100 * acc:.1f}%")


def parse_log(text):
    board = {}
    for m in re.finditer(r"^@b(\d+)\.out0 ([0-9a-f]+) ([0-9a-f]*)$", text, re.M):
        k, offset = int(m.group(1)), int(m.group(2), 16)
        buf = board.setdefault(k, bytearray())
        if offset != len(buf):
            raise SystemExit(f"demo: @b{k}.out0 at offset {offset}, expected {len(buf)}")
        buf += bytes.fromhex(m.group(3))
    infer = {int(m.group(1)): (int(m.group(2)), int(m.group(3)))
             for m in re.finditer(r"^infer +(\d+): class +(-?\d+) +(\d+) instructions$", text, re.M)}
    return board, infer


def grab(pattern, text, default="?"):
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else default


def section_sizes(elf):
    out = subprocess.run(["arm-none-eabi-size", "-A", elf], stdout=subprocess.PIPE, text=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = (int(parts[1]), int(parts[2]))
    return sizes


def host_outputs(ptec_run, pte, images_dir, count, work):
    outputs = []
    os.makedirs(work, exist_ok=True)
    for k in range(count):
        out_dir = os.path.join(work, f"{k}")
        run = subprocess.run([ptec_run, pte, "--input", os.path.join(images_dir, f"{k}.bin"),
                              "--output-dir", out_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        if run.returncode != 0:
            raise SystemExit(f"demo: ptec-run failed on image {k}:\n{run.stdout}")
        with open(os.path.join(out_dir, "output0.bin"), "rb") as f:
            outputs.append(f.read())
    return outputs


def n(value):
    return f"{value:,}"


def cmd_report(a):
    with open(a.log) as f:
        log = f.read()
    labels = [int(x) for x in open(os.path.join(a.dir, "labels.txt")).read().split()]
    float_acc = float(open(os.path.join(a.dir, "float_accuracy.txt")).read())
    count = len(labels)
    board, infer = parse_log(log)
    if sorted(board) != list(range(count)) or sorted(infer) != list(range(count)):
        raise SystemExit(f"demo: the firmware reported {len(infer)} of {count} inferences")
    host = host_outputs(a.ptec_run, a.pte, os.path.join(a.dir, "images"), count, os.path.join(a.dir, "host"))

    host_pred = [int(np.argmax(np.frombuffer(h, np.float32))) for h in host]
    board_pred = [infer[k][0] for k in range(count)]
    instructions = [infer[k][1] for k in range(count)]
    same_bytes = sum(bytes(board[k]) == host[k] for k in range(count))
    same_cpu = count
    if a.cpu_pte:
        cpu = host_outputs(a.ptec_run, a.cpu_pte, os.path.join(a.dir, "images"), count,
                           os.path.join(a.dir, "host-cpu"))
        same_cpu = sum(c == h for c, h in zip(cpu, host))
    same_pred = sum(b == h for b, h in zip(board_pred, host_pred))
    acc_board = sum(p == y for p, y in zip(board_pred, labels)) / count
    acc_host = sum(p == y for p, y in zip(host_pred, labels)) / count
    core = grab(r"^ptec runner on \S+ \(([^)]*)\)", log)
    board_name = grab(r"^ptec runner on (\S+)", log)
    once = [n(int(grab(pattern, log, "0"))) for pattern in
            (r"^program init: (\d+)", r"^method requirements: (\d+)", r"^method load: (\d+)")]

    print()
    print(f"== predictions on the board ({a.target}: {board_name}, {core}), "
          f"first {min(SHOWN, count)} of {count} test images ==")
    for start in range(0, min(SHOWN, count), PER_ROW):
        ks = range(start, min(start + PER_ROW, SHOWN, count))
        print("  image " + "".join(f"{k:>4}" for k in ks))
        print("  label " + "".join(f"{labels[k]:>4}" for k in ks))
        print("  board " + "".join(f"{board_pred[k]:>4}" if board_pred[k] == labels[k]
                                   else f"{'x' + str(board_pred[k]):>4}" for k in ks))
    misses = [k for k in range(count) if board_pred[k] != labels[k]]
    listed = ", ".join(f"#{k} {labels[k]}->{board_pred[k]}" for k in misses[:12])
    print(f"  misses (x): {len(misses)} of {count}" + (f": {listed}" if misses else "")
          + (" ..." if len(misses) > 12 else ""))

    print()
    print(f"== accuracy on the {count} held-back images ==")
    print(f"  PyTorch float model                    {100 * float_acc:6.2f}%")
    print(f"  int8 program, host runtime (ptec-run)  {100 * acc_host:6.2f}%")
    print(f"  int8 program, on the board (QEMU)      {100 * acc_board:6.2f}%")
    print(f"  board vs host: {same_pred}/{count} predictions equal, "
          f"{same_bytes}/{count} outputs identical byte for byte")
    if a.cpu_pte:
        print(f"  NPU program vs the CPU-only program (host): {same_cpu}/{count} outputs identical "
              "byte for byte")

    print()
    print(f"== instructions per inference (executed on the emulated {core.split(',')[0]}, QEMU icount) ==")
    print(f"  min {n(min(instructions))}  mean {n(sum(instructions) // count)}  max {n(max(instructions))}"
          f"  (over {count} inferences, no profiling)")
    print("  per operator, image 0 (each figure includes the counter reads around it):")
    for line in re.findall(r"^  \[ *\d+\] .*$", log, re.M):
        print("  " + line)
    print(f"  once per boot: program init {once[0]}, method requirements {once[1]}, "
          f"method load {once[2]}")

    print()
    print("== memory ==")
    program_line = grab(r"^program: (.*)$", log)
    where = REGIONS.get(a.target, {"code": "?", "model": "?", "ram": "?", "pools": "?"})
    print(f"  program  {program_line}")
    print(f"           ({where['model']})")
    print("  runtime memory (ptec_method_requirements; the runner gives each region exactly that, "
          "carved from its build-time pools):")
    for line in re.findall(r"^  (?:metadata|planned\[\d+\]|scratch|total) .*$", log, re.M):
        print("  " + line)
    sizes = section_sizes(a.elf)

    def sz(name):
        return sizes.get(name, (0, 0))[0]

    def at(name):
        return f"0x{sizes.get(name, (0, 0))[1]:08x}"

    print(f"  firmware {os.path.basename(a.elf)} (arm-none-eabi-size -A):")
    print(f"    .text {n(sz('.text') + sz('.vectors'))} B code + .rodata {n(sz('.rodata'))} B "
          f"at {at('.text')} ({where['code']})")
    print(f"    .ptec_model {n(sz('.ptec_model'))} B at {at('.ptec_model')} (the program)")
    print(f"    .data {n(sz('.data'))} B, .bss {n(sz('.bss'))} B at {at('.data')} ({where['ram']}); "
          f"reserved there: stack {n(sz('.stack'))} B, newlib heap {n(sz('.heap'))} B")
    print(f"    .ptec_pool {n(sz('.ptec_pool'))} B at {at('.ptec_pool')} ({where['pools']}, NOLOAD): "
          f"the pools' build-time capacities")
    if a.kernels:
        names = re.findall(r"PTEC_KERNEL\(ptec_kernel_(\w+)\)", open(a.kernels).read())
        print(f"  kernels linked: {len(names)} (selective build from the compiler's --kernel-list):")
        print("    " + ", ".join(names))
    return 0 if same_bytes == count and same_pred == count and same_cpu == count else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("images")
    s.add_argument("dir")
    r = sub.add_parser("report")
    for opt in ("--dir", "--pte", "--log", "--elf", "--ptec-run", "--target"):
        r.add_argument(opt, required=True)
    r.add_argument("--kernels", help="the PTEC_KERNEL_LIST the firmware was built with")
    r.add_argument("--cpu-pte", help="a CPU-only program of the same quantized model: its "
                                     "outputs must equal --pte's byte for byte")
    a = p.parse_args()
    if a.cmd == "images":
        cmd_images(a.dir)
        return 0
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
