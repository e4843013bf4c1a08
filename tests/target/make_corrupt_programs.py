#!/usr/bin/env python3
"""Write damaged copies of the upstream samples for the target robustness tests.

    make_corrupt_programs.py UPSTREAM_DIR OUT_DIR

Each file must make the runner print an error and exit non-zero, never fault
or hang. Deterministic: the same files every run.
"""
import os
import random
import struct
import sys


def patched(data, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def main(upstream, out_dir):
    add = open(os.path.join(upstream, "add.pte"), "rb").read()
    arduino = open(os.path.join(upstream, "add_arduino.pte"), "rb").read()
    linear = open(os.path.join(upstream, "ModuleLinear-no-constant-segment.pte"), "rb").read()
    rng = random.Random(5)
    cases = {
        # Not a program at all.
        "garbage": bytes(rng.randrange(256) for _ in range(1024)),
        # Root table offset far past the end.
        "root_out_of_range": patched(add, 0, "<I", 0xFFFFFF00),
        # The execution_plan vector (add.pte @0x64) claims 2^31 plans.
        "huge_plan_count": patched(add, 0x64, "<I", 0x80000000),
        # The extended header's segments reach past the bytes given.
        "truncated_segment": arduino[:1100],
        # The first value's vtable offset sends reads backwards out of the file.
        "bad_vtable": patched(add, 0x23C, "<i", 0x7FFFFFF0),
        # Legacy constant_buffer: flipped bytes past the root table, so the
        # damage is met deep in the method (values, instructions, constants).
        "bit_flips": bytes(b ^ (0x5A if i % 13 == 5 and i >= 0x100 else 0)
                           for i, b in enumerate(linear)),
    }
    os.makedirs(out_dir, exist_ok=True)
    for name, data in cases.items():
        with open(os.path.join(out_dir, f"{name}.pte"), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
