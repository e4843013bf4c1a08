#!/usr/bin/python3
"""Hostile arguments for the cortex_m operator wrappers: the valid one-op
programs of kernel_ops_e2e.py with random mutations of their Int values,
tensor sizes, dtypes and dim orders. ptec-run must either run or fail with
a status; a sanitizer report, a signal or a hang is a failure.

Usage: kernel_ops_fuzz.py --ptec-run PATH [--mutants N] [--seed S]
"""
import argparse
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_ops_e2e as e2e  # noqa: E402
from ptec.pte.schema import Int, Tensor  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402

SANITIZER_EXIT = 99
INTERESTING = [0, 1, -1, 2, 3, 4, 31, 32, -31, -32, 127, 128, -128, -129, 255, 65535, 65536, (1 << 31) - 1,
               -(1 << 31), 1 << 31, 1 << 40, -(1 << 40)]


def mutate(program, rnd):
    """Changes 1 to 3 things in the program's values, in place."""
    values = program.execution_plan[0].values
    for _ in range(rnd.randint(1, 3)):
        v = values[rnd.randrange(len(values))].val
        if isinstance(v, Int):
            v.int_val = rnd.choice(INTERESTING) if rnd.random() < 0.7 else v.int_val + rnd.randint(-3, 3)
        elif isinstance(v, Tensor) and v.sizes:
            kind = rnd.randrange(4)
            if kind == 0:
                d = rnd.randrange(len(v.sizes))
                v.sizes[d] = rnd.choice([0, 1, 2, v.sizes[d] + 1, max(v.sizes[d] - 1, 0), 3, 64])
            elif kind == 1:
                v.scalar_type = rnd.choice([0, 1, 2, 3, 4, 6, 11])
            elif kind == 2 and len(v.sizes) > 1:
                order = list(range(len(v.sizes)))
                rnd.shuffle(order)
                v.dim_order = bytes(order)
            else:
                v.sizes = v.sizes[:-1] if len(v.sizes) > 1 and rnd.random() < 0.5 else v.sizes + [1]
                v.dim_order = bytes(range(len(v.sizes)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ptec-run", required=True)
    parser.add_argument("--mutants", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    cases = [c for c in e2e.all_cases() if c.error is None]
    programs = [(c, c.builder.build()) for c in cases]
    workdir = tempfile.mkdtemp(prefix="ptec-kernel-fuzz-")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=%d" % SANITIZER_EXIT,
               UBSAN_OPTIONS="exitcode=%d:print_stacktrace=1" % SANITIZER_EXIT)
    failures = ran = refused = 0
    try:
        for m in range(args.mutants):
            case, program = programs[m % len(programs)]
            mutant = copy.deepcopy(program)
            mutate(mutant, rnd)
            path = os.path.join(workdir, "m%03d.pte" % m)
            try:
                write_program(mutant, path)
            except Exception:  # the writer refused it: nothing for the runtime to see
                continue
            cmd = [args.ptec_run, path]
            for i, x in enumerate(case.inputs):
                raw = os.path.join(workdir, "m%03d-in%d.bin" % (m, i))
                with open(raw, "wb") as f:
                    f.write(x.tobytes())
                cmd += ["--input", raw]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20, env=env)
            except subprocess.TimeoutExpired:
                failures += 1
                print("HANG  %s mutant %d" % (case.name, m))
                continue
            if proc.returncode == 0:
                ran += 1
            elif proc.returncode == SANITIZER_EXIT or proc.returncode < 0 or "Sanitizer" in proc.stderr \
                    or "runtime error" in proc.stderr:
                failures += 1
                keep = os.path.join(tempfile.gettempdir(), "ptec-fuzz-crash-%d.pte" % m)
                shutil.copy(path, keep)
                print("CRASH %s mutant %d (kept %s): %s" % (case.name, m, keep, proc.stderr[-2000:]))
            else:
                refused += 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("kernel_ops_fuzz: %d mutants, %d ran, %d refused with a status, %d crashed" % (
        args.mutants, ran, refused, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
