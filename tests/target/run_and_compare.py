#!/usr/bin/env python3
"""Run a runner firmware in QEMU and compare its outputs byte for byte.

    run_and_compare.py [--expect FILE]... [--ptec-run BIN --model-file PTE [--input-file F]]
                       -- scripts/run_qemu.sh ARGS...

The firmware prints each output's bytes as "@out<i> <offset> <hex>" lines.
--expect FILE    output i (in order of the options) must equal FILE
--ptec-run BIN   also run the host CLI on the same program and inputs
                 (--input-file, once per input; ones when none is given) and
                 require identical output files.
Exit 0 when the firmware exits 0 and every comparison holds.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def firmware_outputs(text):
    outputs = {}
    for m in re.finditer(r"^@out(\d+) ([0-9a-f]+) ([0-9a-f]*)$", text, re.M):
        index, offset, data = int(m.group(1)), int(m.group(2), 16), bytes.fromhex(m.group(3))
        buf = outputs.setdefault(index, bytearray())
        if offset != len(buf):
            raise SystemExit(f"run_and_compare: @out{index} line at offset {offset}, expected {len(buf)}")
        buf += data
    return [bytes(outputs[i]) for i in sorted(outputs)]


def compare(label, got, want):
    if got == want:
        print(f"run_and_compare: {label}: {len(got)} bytes identical")
        return True
    print(f"run_and_compare: FAIL {label}: firmware {got.hex()} != {want.hex()}")
    return False


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--ptec-run")
    parser.add_argument("--model-file")
    parser.add_argument("--input-file", action="append", default=[])
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]

    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout, end="")
    ok = True
    if run.returncode != 0:
        print(f"run_and_compare: FAIL firmware exit status {run.returncode}")
        ok = False
    outputs = firmware_outputs(run.stdout)

    for i, path in enumerate(args.expect):
        with open(path, "rb") as f:
            want = f.read()
        got = outputs[i] if i < len(outputs) else b""
        ok &= compare(f"output {i} vs {os.path.basename(path)}", got, want)

    if args.ptec_run:
        with tempfile.TemporaryDirectory() as out:
            host = [args.ptec_run, args.model_file, "--output-dir", out]
            for path in args.input_file:
                host += ["--input", path]
            result = subprocess.run(host, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                print(result.stdout, end="")
                print(f"run_and_compare: FAIL ptec-run exit status {result.returncode}")
                ok = False
            for i, got in enumerate(outputs):
                path = os.path.join(out, f"output{i}.bin")
                want = open(path, "rb").read() if os.path.exists(path) else b""
                ok &= compare(f"output {i} vs ptec-run", got, want)
    if not outputs:
        print("run_and_compare: FAIL no @out lines in the firmware's output")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
