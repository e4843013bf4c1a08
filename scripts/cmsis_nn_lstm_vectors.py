#!/usr/bin/python3
"""ptec::quantized_lstm and ptec::quantized_lstm_a16 against CMSIS-NN's own
int8 and int16 LSTM test vectors (their expected outputs come from TFLite
Micro's reference kernels): the numpy references, and with --ptec-run the C
kernels in one-op programs too, must give the expected bytes exactly. Needs a CMSIS-NN checkout (not vendored);
the cases are the ones that start from the zero state.

    scripts/cmsis_nn_lstm_vectors.py CMSIS_NN_DIR [--ptec-run build/host/tools/ptec-run/ptec-run]

CMSIS-NN's vectors give `INPUT_ZERO_POINT` as the input offset (-zp) and
the gate biases apart from the kernel sums, which its test adds with
arm_vector_sum_s8; this script forms the effective biases the same way
(docs/kernels.md, "LSTM"). The int16 cases (lstm_*_s16) have zero points
0, so their effective biases are the gate biases (int64) on the input side
and zero on the hidden side. Exit status 1 when a case differs."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from ptec.pte.program_builder import ProgramBuilder  # noqa: E402
from ptec.pte.schema import ScalarType  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402
from ptec.reference import cortex_m as ref  # noqa: E402

CASES = ("lstm_1", "lstm_2", "lstm_one_time_step")
CASES_S16 = ("lstm_1_s16", "lstm_2_s16", "lstm_one_time_step_s16")
GATES = ("input", "forget", "cell", "output")     # PyTorch's order i, f, g, o


def c_array(path):
    text = open(path, encoding="utf-8").read()
    body = re.search(r"=\s*\{(.*?)\}", text, re.S).group(1)
    return np.array([int(v) for v in body.replace("\n", " ").split(",") if v.strip()], np.int64)


def config(folder, prefix):
    values = {}
    for line in open(os.path.join(folder, "config_data.h"), encoding="utf-8"):
        m = re.match(r"#define %s_(\w+) (\S+)" % prefix, line)
        if m:
            v = m.group(2)
            values[m.group(1)] = {"true": 1, "false": 0}[v] if v in ("true", "false") else int(v)
    return values


def load(folder, name):
    s16 = name.endswith("_s16")
    c = config(folder, name.upper())
    n_in, hidden, steps, batches = c["INPUT_SIZE"], c["HIDDEN_SIZE"], c["TIME_STEPS"], c["BATCH_SIZE"]
    wx = np.concatenate([c_array(f"{folder}/{g}_gate_input_weights.h").reshape(hidden, n_in) for g in GATES])
    wh = np.concatenate([c_array(f"{folder}/{g}_gate_hidden_weights.h").reshape(hidden, hidden) for g in GATES])
    bias = np.concatenate([c_array(f"{folder}/{g}_gate_bias.h") for g in GATES])
    big = [g.upper() for g in GATES]
    time_major = bool(c["TIME_MAJOR"])
    x = c_array(f"{folder}/input_tensor.h").astype(np.int16 if s16 else np.int8)
    args = dict(
        input_weights=wx.astype(np.int8), hidden_weights=wh.astype(np.int8),
        input_effective_bias=(bias + c["INPUT_ZERO_POINT"] * wx.sum(axis=1)).astype(np.int32),
        hidden_effective_bias=(-c["OUTPUT_ZERO_POINT"] * wh.sum(axis=1)).astype(np.int32),
        gate_multipliers=np.array([c[f"{g}_GATE_INPUT_MULTIPLIER"] for g in big]
                                  + [c[f"{g}_GATE_HIDDEN_MULTIPLIER"] for g in big], np.int32),
        gate_shifts=np.array([c[f"{g}_GATE_INPUT_SHIFT"] for g in big]
                             + [c[f"{g}_GATE_HIDDEN_SHIFT"] for g in big], np.int32),
        forget_to_cell_multiplier=c["FORGET_TO_CELL_MULTIPLIER"], forget_to_cell_shift=c["FORGET_TO_CELL_SHIFT"],
        input_to_cell_multiplier=c["INPUT_TO_CELL_MULTIPLIER"], input_to_cell_shift=c["INPUT_TO_CELL_SHIFT"],
        output_multiplier=c["OUTPUT_MULTIPLIER"], output_shift=c["OUTPUT_SHIFT"], cell_clip=c["CELL_CLIP"],
        cell_scale_power=c["CELL_SCALE_POWER"], output_zero_point=c["OUTPUT_ZERO_POINT"],
        batch_first=not time_major)
    if s16:
        if c["INPUT_ZERO_POINT"] != 0 or c["OUTPUT_ZERO_POINT"] != 0:
            raise ValueError(f"{name}: int16 vectors with a zero point")
        args["input_effective_bias"] = bias.astype(np.int64)
        args["hidden_effective_bias"] = np.zeros(4 * hidden, np.int64)
        del args["output_zero_point"]
    x = x.reshape((steps, batches, n_in) if time_major else (batches, steps, n_in))
    want = c_array(f"{folder}/output.h").astype(x.dtype).reshape(x.shape[:2] + (hidden,))
    return x, args, want


def run_c(ptec_run, x, args, workdir):
    b = ProgramBuilder()
    hidden = args["input_weights"].shape[0] // 4
    dtype = ScalarType.SHORT if x.dtype == np.int16 else ScalarType.CHAR
    xv, out = b.tensor(dtype, x.shape), b.tensor(dtype, x.shape[:2] + (hidden,))
    call = {k: (b.constant(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    if dtype == ScalarType.SHORT:
        b.call("ptec::quantized_lstm_a16.out", input=xv, out=out, **call)
    else:
        b.call("ptec::quantized_lstm.out", input=xv, initial_hidden=None, initial_cell=None, out=out, **call)
    b.set_io([xv], [out])
    base = os.path.join(workdir, "lstm")
    write_program(b.build(), base + ".pte")
    with open(base + ".in", "wb") as f:
        f.write(np.ascontiguousarray(x).tobytes())
    proc = subprocess.run([ptec_run, base + ".pte", "--input", base + ".in", "--output-dir", base + "-out"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    with open(os.path.join(base + "-out", "output0.bin"), "rb") as f:
        return np.frombuffer(f.read(), x.dtype)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cmsis_nn", help="a CMSIS-NN checkout")
    parser.add_argument("--ptec-run", help="also run the C kernel with this ptec-run")
    a = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="ptec-lstm-cmsis-") as workdir:
        for name in CASES + CASES_S16:
            folder = os.path.join(a.cmsis_nn, "Tests", "UnitTest", "TestCases", "TestData", name)
            x, args, want = load(folder, name)
            fn = ref.quantized_lstm_a16 if name.endswith("_s16") else ref.quantized_lstm
            got = {"numpy": fn(x, **args).reshape(-1)}
            if a.ptec_run:
                got["C"] = run_c(a.ptec_run, x, args, workdir)
            for who, y in got.items():
                same = np.array_equal(y, want.reshape(-1))
                failures += not same
                print("%-22s %-5s %s (%d values)" % (name, who, "identical" if same else
                                                    "DIFFERS in %d" % int((y != want.reshape(-1)).sum()), want.size))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
