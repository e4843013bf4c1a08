#!/usr/bin/env python3
"""Run one hostile program in the QEMU runner firmware and check that it is
refused as the manifest says for a 32-bit target: the runner's exit status
for that step, its "error: <call> failed: <Status>" line, the detail words,
and no fault.

    check_target_run.py MANIFEST FILE -- COMMAND...
"""
import subprocess
import sys

# The runner's exit status and the API call it names, for each step.
STEPS = {
    "init": (2, "ptec_program_init"),
    "requirements": (3, "ptec_method_requirements"),
    "load": (3, "ptec_method_load"),
    "execute": (5, "ptec_method_execute"),
}


def expectation(manifest, name):
    for line in open(manifest):
        fields = line.rstrip("\n").split(" ", 4)
        if fields[0] == name and fields[1] in ("any", "32"):
            return fields[2], fields[3], fields[4] if len(fields) > 4 else ""
    sys.exit(f"check_target_run: no 32-bit expectation for {name} in {manifest}")


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.exit(__doc__)
    step, status, words = expectation(argv[0], argv[1])
    if step not in STEPS:
        sys.exit(f"check_target_run: {argv[1]} is not refused on a 32-bit target ({step})")
    want_exit, call = STEPS[step]
    run = subprocess.run(argv[3:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    out = run.stdout
    print(out)
    problems = []
    if run.returncode != want_exit:
        problems.append(f"exit status {run.returncode}, want {want_exit}")
    if f"error: {call} failed: {status} (0x" not in out:
        problems.append(f"no line 'error: {call} failed: {status}'")
    if words not in out:
        problems.append(f"the detail lacks '{words}'")
    if "FAULT" in out:
        problems.append("the firmware faulted")
    for p in problems:
        print(f"check_target_run: FAIL: {argv[1]}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
