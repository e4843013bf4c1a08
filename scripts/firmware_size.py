#!/usr/bin/env python3
"""A firmware's code and data against its board's memory, from the linker's
map file (scripts/map_split.py), for the remoteproc boards.

    scripts/firmware_size.py FIRMWARE.elf --budget imx93_m33 [--figures PREFIX]

Code = everything loaded into code TCM (vectors, resource table, code,
read-only data, the .data image); data = .data, .bss, the stack, newlib's
heap and the runtime's pools, all in system TCM. Next to them: what
upstream ExecuTorch's runtime needed for the same deployment (issue 13 of
this project: 52 KB of code and 51 KB of data after shrinking its pools by
trial). With --figures, `figure PREFIX.code|data <bytes>` lines for make
bench. Standard library only."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import map_split  # noqa: E402

BUDGETS = {
    # code TCM less 16 bytes (imx_rproc's strict end check); data from
    # 0x20003000 to 0x2001E000, where Linux puts the live resource table.
    "imx93_m33": {"code": 0x1FFF0, "data": 108 * 1024, "upstream_code": 52 * 1024, "upstream_data": 51 * 1024},
}


def main(argv):
    if "--budget" not in argv:
        sys.exit(__doc__)
    budget = BUDGETS[argv[argv.index("--budget") + 1]]
    prefix = argv[argv.index("--figures") + 1] if "--figures" in argv else None
    elf = argv[1]
    sizes, reserved = map_split.parse(elf + ".map")
    code = sum(s["flash"] for s in sizes.values())
    data = sum(s["data"] + s["bss"] for s in sizes.values()) + sum(reserved.values())
    def kb(n):
        return "%.1f KB" % (n / 1024.0)
    print("code %s of %s code TCM (%d%%); data %s of %s system TCM (%d%%), of which %s reserved "
          "(%s)" % (kb(code), kb(budget["code"]), 100 * code // budget["code"], kb(data), kb(budget["data"]),
                    100 * data // budget["data"], kb(sum(reserved.values())),
                    ", ".join("%s %s" % (k, kb(v)) for k, v in sorted(reserved.items()))))
    parts = ["%s %s" % (p, kb(sizes[p]["flash"])) for p in map_split.PARTS if sizes[p]["flash"]]
    print("code by part: " + ", ".join(parts))
    print("upstream ExecuTorch for the same deployment: %s code + %s data"
          % (kb(budget["upstream_code"]), kb(budget["upstream_data"])))
    if prefix:
        print("figure %s.code %d" % (prefix, code))
        print("figure %s.data %d" % (prefix, data))
    if code > budget["code"] or data > budget["data"]:
        print("firmware_size: does not fit the board", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
