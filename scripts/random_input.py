#!/usr/bin/python3
"""Seeded random inputs for a program, as the runner firmware and ptec-run
read them (the benchmarks): every input's raw bytes, in its dtype and stored
order, back to back; the first input's element count in OUT.numel.

    scripts/random_input.py PROGRAM.pte OUT"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import numpy as np  # noqa: E402

from ptec.pte import NUMPY_DTYPE, ScalarType, read_program  # noqa: E402


def main(pte: str, out: str) -> None:
    plan = read_program(pte).plan()
    with open(out, "wb") as f:
        for i in plan.inputs:
            t = plan.values[i].val
            x = np.random.default_rng(0).normal(size=t.numel)
            f.write(x.astype(NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes())
    with open(out + ".numel", "w") as f:
        f.write("%d\n" % plan.values[plan.inputs[0]].val.numel)


if __name__ == "__main__":
    main(*sys.argv[1:3])
