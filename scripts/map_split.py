#!/usr/bin/env python3
"""Split a linked firmware's memory by origin, from its GNU ld map file.

    scripts/map_split.py FIRMWARE.elf.map

Prints flash (code + read-only data + the .data image), RAM (.data + .bss)
per part: runtime core, backends, kernels, model, rpmsg, platform (board + arch), the
application (the runner), C library, alignment padding. Stack, newlib heap and the runtime's pools are
shown apart: they are reserved sizes, not code. Standard library only.
"""
import re
import sys

# Output section -> kind. Anything else (debug info, attributes) is ignored.
FLASH = {".vectors", ".resource_table", ".text", ".rodata", ".ARM.extab", ".ARM.exidx", ".init_array", ".ptec_model"}
DATA = {".data"}
BSS = {".bss"}
RESERVED = {".stack": "stack", ".heap": "newlib heap", ".ptec_pool": "runtime pools"}

PARTS = ["runtime core", "backends", "kernels", "model", "rpmsg", "platform", "application", "C library", "padding",
         "other"]


def part_of(path):
    name = path.replace("\\", "/")
    if "libptec_runtime.a" in name:
        return "runtime core"
    if re.search(r"libptec_(backends|delegates|ethos_u|npu_\w+)\.a", name):
        return "backends"
    if re.search(r"libptec_kernels(_\w+)?\.a", name) or name.endswith("kernel_table.c.obj"):
        return "kernels"
    if "ptec_runner_model.c.obj" in name:
        return "model"
    if "libptec_rpmsg.a" in name:
        return "rpmsg"
    if "/boards/" in name or "/arch/" in name or "ptec_board.dir" in name:
        return "platform"
    if re.search(r"lib(c|g|m|gcc|nosys|c_nano|g_nano)\.a|crt\w*\.o|/arm-none-eabi/", name):
        return "C library"
    if "/firmware/" in name or "runner_lib" in name or name.startswith("CMakeFiles/"):
        return "application"
    return "other"


def parse(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        sys.exit(f"map_split: {path}: not a GNU ld map file")
    sizes = {part: {"flash": 0, "data": 0, "bss": 0} for part in PARTS}
    reserved = {}
    output = None
    pending = None  # input section name wrapped onto the next line
    for line in lines[start + 1:]:
        m = re.match(r"^(\.[\w.]+|/DISCARD/)(\s+0x[0-9a-f]+\s+0x([0-9a-f]+))?", line)
        if m:
            output = m.group(1)
            if output in RESERVED and m.group(3):
                reserved[RESERVED[output]] = reserved.get(RESERVED[output], 0) + int(m.group(3), 16)
            pending = None
            continue
        if output is None:
            continue
        m = re.match(r"^ \*fill\*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
        if m:
            kind = "flash" if output in FLASH else "data" if output in DATA else "bss" if output in BSS else None
            if kind:
                sizes["padding"][kind] += int(m.group(1), 16)
                if kind == "data":
                    sizes["padding"]["flash"] += int(m.group(1), 16)
            continue
        m = re.match(r"^ ([.\w]\S*|COMMON)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ ([.\w]\S*|COMMON)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if not m or (m.group(1) is None and pending is None):
            pending = None
            continue
        pending = None
        size, origin = int(m.group(3), 16), m.group(4).strip()
        if output in FLASH:
            sizes[part_of(origin)]["flash"] += size
        elif output in DATA:
            sizes[part_of(origin)]["data"] += size
            sizes[part_of(origin)]["flash"] += size  # its initial image
        elif output in BSS:
            sizes[part_of(origin)]["bss"] += size
    return sizes, reserved


def main(argv):
    """map_split.py FILE.map [--figures PREFIX]: with --figures, also one
    `figure PREFIX.<part> <flash bytes>` line per part and the total, for
    make bench (scripts/figures.py)."""
    prefix = argv[argv.index("--figures") + 1] if "--figures" in argv else None
    paths = [a for a in argv[1:] if a != "--figures" and a != prefix]
    if len(paths) != 1:
        sys.exit(__doc__)
    sizes, reserved = parse(paths[0])
    print(f"  {'part':<14}{'flash':>10}{'ram':>10}   (flash = code + rodata + .data image; ram = .data + .bss)")
    total_flash = total_ram = 0
    for part in PARTS:
        s = sizes[part]
        ram = s["data"] + s["bss"]
        if s["flash"] == 0 and ram == 0:
            continue
        total_flash += s["flash"]
        total_ram += ram
        print(f"  {part:<14}{s['flash']:>10}{ram:>10}")
    print(f"  {'total':<14}{total_flash:>10}{total_ram:>10}")
    if prefix:
        for part in PARTS:
            print(f"figure {prefix}.{part.replace(' ', '_')} {sizes[part]['flash']}")
        print(f"figure {prefix}.total {total_flash}")
    if reserved:
        print("  reserved: " + ", ".join(f"{k} {v}" for k, v in sorted(reserved.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
