#!/usr/bin/python3
"""Compares python/ptec/runtime_layout.json (the AOT's copy of the runtime's
metadata sizes, read by ptec.requirements) with what tools/ptec-layout
prints on each build: the host (build/host) and each core's board under
QEMU (build/<core>/firmware/ptec_layout.elf). Cores of one build kind
(pointer model and kernel ISA) must agree with each other and with the copy.

  scripts/runtime_layout.py            check; exit 1 on drift, 3 when a build is missing
  scripts/runtime_layout.py --write    rewrite the copy from the builds

Run it after changing a runtime structure, a kernel's state or a backend's
persistent bytes (make host cross first)."""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from ptec.requirements import LAYOUT_FILE, build_kind  # noqa: E402
from ptec.targets import CORES  # noqa: E402


def host_binary():
    return os.path.join(ROOT, "build", "host", "tools", "ptec-layout", "ptec-layout")


def firmware(core):
    return os.path.join(ROOT, "build", core, "firmware", "ptec_layout.elf")


class Missing(Exception):
    pass


def _json_line(text, where):
    for line in text.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{where} printed no layout line:\n{text}")


def measure(build):
    """The layout `build` ('host' or a core) prints; Missing when it is not built."""
    if build == "host":
        exe = host_binary()
        if not os.path.exists(exe):
            raise Missing(f"{exe} (make host)")
        run = subprocess.run([exe], stdout=subprocess.PIPE, text=True, check=True)
        return _json_line(run.stdout, exe)
    elf = firmware(build)
    if not os.path.exists(elf) or shutil.which("qemu-system-arm") is None:
        raise Missing(f"{elf} or qemu-system-arm (make cross)")
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", build, "--elf", elf,
                          "--timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{elf} exited {run.returncode}:\n{run.stdout}")
    return _json_line(run.stdout, elf)


def differences(want, got, path=""):
    """Readable differences between two layouts."""
    out = []
    for key in sorted(set(want) | set(got)):
        a, b = want.get(key), got.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += differences(a, b, f"{path}{key}.")
        elif a != b:
            out.append(f"{path}{key}: copy {a!r}, build {b!r}")
    return out


def main(argv):
    write = "--write" in argv
    with open(LAYOUT_FILE) as f:
        saved = json.load(f)
    layouts = dict(saved["layouts"])
    seen, missing, drift = {}, [], []
    for build in ("host",) + tuple(CORES):
        kind = build_kind(build)
        try:
            got = measure(build)
        except Missing as e:
            missing.append(str(e))
            continue
        if kind in seen and seen[kind][1] != got:
            drift.append(f"{build} and {seen[kind][0]} are both {kind} but differ: "
                         + "; ".join(differences(seen[kind][1], got)))
        seen.setdefault(kind, (build, got))
        if write:
            layouts[kind] = got
        elif got != layouts.get(kind):
            drift.append(f"{build} ({kind}): " + "; ".join(differences(layouts.get(kind, {}), got)))
        print(f"runtime_layout: {build}: {kind} {'written' if write else 'ok' if got == layouts.get(kind) else 'DRIFT'}")
    for m in missing:
        print(f"runtime_layout: not built: {m}", file=sys.stderr)
    if drift:
        print("runtime_layout: python/ptec/runtime_layout.json differs from the builds "
              "(scripts/runtime_layout.py --write updates it):\n  " + "\n  ".join(drift), file=sys.stderr)
        return 1
    if write:
        saved["layouts"] = dict(sorted(layouts.items()))
        with open(LAYOUT_FILE, "w") as f:
            json.dump(saved, f, indent=1)
            f.write("\n")
    return 3 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
