#!/usr/bin/python3
"""The end of `make test`: one summary over every runner.

    test_summary.py <log dir> [--allowlist FILE] [--strict]

Reads, per runner, <runner>.xml (JUnit, from ctest --output-junit or pytest
--junitxml) and <runner>.rc (the runner's exit status), in the order
ctest-host, ctest-asan, pytest, then the fuzz runs (fuzz, fuzz-npu, fuzz-mlw,
fuzz-rpmsg; each of those has no XML and counts as one test,
passed when it exited 0). Prints how many tests each ran, passed,
failed and skipped, every skip with its reason, and last a line
"N passed, M failed[, K skipped]". With --strict (CI), a skip that is not on
the allow-list counts as a failure. Exits 1 when anything failed."""
import argparse
import fnmatch
import os
import sys
import xml.etree.ElementTree as ET

RUNNERS = ["ctest-host", "ctest-asan", "pytest", "fuzz", "fuzz-npu", "fuzz-mlw", "fuzz-rpmsg"]


def load_allowlist(path):
    """(runner, pattern, reason) per line of the allow-list file."""
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                raise SystemExit(f"{path}: needs '<runner> <test id> <reason>': {line}")
            entries.append(tuple(parts))
    return entries


def allowed(entries, runner, test_id):
    return any(r == runner and (fnmatch.fnmatchcase(test_id, p) or fnmatch.fnmatchcase(test_id, "*/" + p))
               for r, p, _ in entries)


def test_id(runner, case):
    name = case.get("name", "?")
    if runner == "pytest":
        return case.get("classname", "").replace(".", "/") + ".py::" + name
    return name


def skip_reason(case):
    skipped = case.find("skipped")
    out = case.findtext("system-out") or ""
    for line in out.splitlines():
        if line.startswith("skipped: "):
            return line[len("skipped: "):]
    if skipped is not None and skipped.get("message"):
        return skipped.get("message").strip()
    return "no reason given"


def read_runner(log_dir, runner):
    """ran, passed, failed, [(test id, reason)] skipped; None when the runner did not run."""
    rc_path = os.path.join(log_dir, runner + ".rc")
    xml_path = os.path.join(log_dir, runner + ".xml")
    if not os.path.exists(rc_path):
        return None
    rc = int(open(rc_path).read().strip() or 1)
    if not os.path.exists(xml_path):
        return {"passed": int(rc == 0), "failed": int(rc != 0), "skipped": [], "rc": rc, "failures": []}
    passed, failed, skipped, failures = 0, 0, [], []
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        tid = test_id(runner, case)
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
            failures.append(tid)
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped.append((tid, skip_reason(case)))
        else:
            passed += 1
    if rc != 0 and failed == 0:
        failed, failures = 1, [f"{runner} exited with status {rc}"]
    return {"passed": passed, "failed": failed, "skipped": skipped, "rc": rc, "failures": failures}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log_dir")
    ap.add_argument("--allowlist")
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    entries = load_allowlist(args.allowlist)
    total_passed = total_failed = total_skipped = 0
    print("== test summary ==")
    for runner in RUNNERS:
        r = read_runner(args.log_dir, runner)
        if r is None:
            print(f"{runner:<11} did not run")
            total_failed += 1
            continue
        ran = r["passed"] + r["failed"]
        unlisted = [(t, why) for t, why in r["skipped"] if not allowed(entries, runner, t)]
        failed = r["failed"] + (len(unlisted) if args.strict else 0)
        print(f"{runner:<11} {ran:4d} ran: {r['passed']} passed, {r['failed']} failed, "
              f"{len(r['skipped'])} skipped")
        for t in r["failures"][:20]:
            print(f"  FAILED  {t}")
        for t, why in r["skipped"]:
            mark = "allowed" if allowed(entries, runner, t) else "NOT ON tests/skip-allowlist.txt"
            print(f"  skipped ({mark}): {t}: {why}")
        total_passed += r["passed"]
        total_failed += failed
        total_skipped += len(r["skipped"])
    tail = f", {total_skipped} skipped" if total_skipped else ""
    print(f"{total_passed} passed, {total_failed} failed{tail}")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
