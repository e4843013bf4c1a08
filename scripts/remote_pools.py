#!/usr/bin/python3
"""Exact pool sizes for the RPMsg model server (firmware/remote) from the
programs it is meant to run: the largest need of each region over the
given programs, as CMake options.

    scripts/remote_pools.py MODEL.pte [MODEL.pte...] --target cortex-m33

prints -DPTEC_REMOTE_METADATA_BYTES=... -DPTEC_REMOTE_PLANNED_BYTES=...
-DPTEC_REMOTE_SCRATCH_BYTES=... -DPTEC_REMOTE_IO_BYTES=... on one line.
The figures are ptec.requirements' (what ptec_method_requirements reports
on that core's build) and the server's own staging of inputs (each input,
and each output the program does not plan, rounded up to 16 bytes)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from ptec.pte import parse_program  # noqa: E402
from ptec.requirements import requirements  # noqa: E402


def align16(n):
    return (n + 15) // 16 * 16


def needs(path, target):
    with open(path, "rb") as f:
        prog = parse_program(f.read())
    r = requirements(prog, target=target)
    plan = prog.plan()
    io = 0
    for index in list(plan.inputs or []):
        io += align16(plan.values[index].val.nbytes)
    for index in list(plan.outputs or []):
        t = plan.values[index].val
        if getattr(t, "allocation_info", None) is None:
            io += align16(t.nbytes)
    return {"METADATA": r.metadata_bytes, "PLANNED": sum(align16(b) for b in r.planned_bytes),
            "SCRATCH": r.scratch_bytes, "IO": io}


def main(argv):
    if "--target" not in argv:
        sys.exit(__doc__)
    target = argv[argv.index("--target") + 1]
    paths = [a for a in argv[1:] if a not in ("--target", target)]
    if not paths:
        sys.exit(__doc__)
    most = {}
    for path in paths:
        for region, n in needs(path, target).items():
            most[region] = max(most.get(region, 0), n)
    print(" ".join("-DPTEC_REMOTE_%s_BYTES=%d" % (k, max(v, 16)) for k, v in most.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
