#!/usr/bin/python3
"""`make mutate`: plant each plausible bug of tests/mutants/mutants.json in a
temporary copy of the repository, build what it needs, run the test subset
that must catch it, and report killed/total. Each test subset is first run on
the unmutated copy and must pass there, so a test that fails anyway (a missing
build, a broken test) kills nothing.

A mutant is an exact snippet of a tracked file and its replacement. The
check fails (exit 1) if any mutant survives, if a snippet is no longer found
exactly once (the list must not rot silently), or if a mutant does not build
(a compile error proves nothing about the tests).

Usage: scripts/mutate.py [--list] [--check-snippets] [ID ...]"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MUTANTS = os.path.join(ROOT, "tests", "mutants", "mutants.json")
PYTHON = "/usr/bin/python3"
TEST_TIMEOUT = 1200


def load_mutants():
    with open(MUTANTS) as f:
        return json.load(f)


def snippet_problems(mutants, root=ROOT):
    """One line per mutant whose original snippet is not in its file exactly once."""
    problems = []
    seen = set()
    for m in mutants:
        if m["id"] in seen:
            problems.append(f"{m['id']}: duplicate id")
        seen.add(m["id"])
        path = os.path.join(root, m["file"])
        if not os.path.isfile(path):
            problems.append(f"{m['id']}: {m['file']} does not exist")
            continue
        with open(path) as f:
            count = f.read().count(m["original"])
        if count != 1:
            problems.append(f"{m['id']}: snippet found {count} times in {m['file']}")
        if m["original"] == m["replacement"]:
            problems.append(f"{m['id']}: replacement equals the original")
    return problems


def copy_tree(dest):
    """The tracked files as they are in the working tree, plus ../shared."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):
            continue
        dst = os.path.join(dest, "repo", rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    shared = os.environ.get("PTEC_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
    os.symlink(os.path.abspath(shared), os.path.join(dest, "shared"))
    return os.path.join(dest, "repo")


def run(cmd, cwd, log, env=None):
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                  env=env, timeout=TEST_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            out.write("timed out\n")
            return 124


class Builds:
    """Configured lazily, rebuilt incrementally after each C mutant."""
    def __init__(self, repo, log):
        self.repo, self.log, self.configured = repo, log, set()

    def build(self, presets):
        """presets: one preset, or several joined by "+" (a board's firmware
        and the host build whose ctest runs it: "host+cortex-m33")."""
        for preset in presets.split("+"):
            if preset not in self.configured:
                if run(["cmake", "--preset", preset], self.repo, self.log) != 0:
                    return False
                self.configured.add(preset)
            if run(["cmake", "--build", "--preset", preset, "-j", "2"], self.repo, self.log) != 0:
                return False
        return True


# Exit codes that mean "a test failed": anything else (a collection error, no
# test selected, a crash of the tool) proves nothing about the mutant.
KILLED_BY = {"pytest": 1, "ctest": 8, "ctest-asan": 8}


def test_command(test, repo):
    kind, rest = test[0], test[1:]
    if kind == "pytest":
        return [PYTHON, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"] + rest
    if kind in ("ctest", "ctest-asan"):
        preset = "host" if kind == "ctest" else "host-asan"
        return ["ctest", "--preset", preset, "--no-tests=error", "-R", rest[0]]
    raise ValueError(f"unknown test kind {kind}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", help="only these mutants")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check-snippets", action="store_true",
                    help="only check that every snippet is in the tree")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy and its log")
    args = ap.parse_args(argv)
    mutants = load_mutants()
    if args.list:
        for m in mutants:
            print(f"{m['id']:<42} {m['area']:<12} {m['file']}")
        return 0
    problems = snippet_problems(mutants)
    if problems:
        print("mutate: the mutant list no longer matches the tree:\n  " + "\n  ".join(problems))
        return 1
    if args.check_snippets:
        print(f"mutate: all {len(mutants)} snippets present")
        return 0
    if args.ids:
        unknown = set(args.ids) - {m["id"] for m in mutants}
        if unknown:
            print(f"mutate: unknown mutant(s): {', '.join(sorted(unknown))}")
            return 2
        mutants = [m for m in mutants if m["id"] in args.ids]
    tmp = tempfile.mkdtemp(prefix="ptec-mutate-")
    repo = copy_tree(tmp)
    log = os.path.join(tmp, "mutate.log")
    builds = Builds(repo, log)
    env = dict(os.environ, PYTHONPATH=os.path.join(repo, "python"), PTEC_STRICT="1",
               PTEC_SHARED=os.path.join(tmp, "shared"))
    # unmutated builds first, so each mutant rebuilds only what it touches; the
    # Python tests run programs on the host runtime, so any pytest mutant needs it
    presets = {m["build"] for m in mutants if m["build"]}
    if any(m["test"][0] == "pytest" for m in mutants):
        presets.add("host")
    for preset in sorted(presets):
        if not builds.build(preset):
            print(f"mutate: the unmutated tree does not build ({preset}); see {log}")
            return 1
    # Each test subset must pass on the unmutated tree: a test that fails
    # anyway (a missing build, a broken test) would "kill" every mutant.
    baseline = {}
    for test in sorted({tuple(m["test"]) for m in mutants}):
        baseline[test] = run(test_command(list(test), repo), repo, log, env)
        if baseline[test] != 0:
            print(f"mutate: {' '.join(test)} fails on the unmutated tree (exit {baseline[test]}); see {log}",
                  flush=True)
    killed, failures = 0, []
    for m in mutants:
        if baseline[tuple(m["test"])] != 0:
            print(f"{'TEST FAILS':<15} {m['id']:<42} by {' '.join(m['test'])} (unmutated)", flush=True)
            failures.append(m["id"])
            continue
        path = os.path.join(repo, m["file"])
        with open(path) as f:
            original = f.read()
        t0 = time.time()
        with open(path, "w") as f:
            f.write(original.replace(m["original"], m["replacement"], 1))
        try:
            if m["build"] and not builds.build(m["build"]):
                verdict = "DOES NOT BUILD"
                failures.append(m["id"])
            else:
                rc = run(test_command(m["test"], repo), repo, log, env)
                if rc == KILLED_BY[m["test"][0]]:
                    verdict = "killed"
                    killed += 1
                else:
                    verdict = "SURVIVED" if rc == 0 else f"TEST ERROR {rc}"
                    failures.append(m["id"])
        finally:
            with open(path, "w") as f:
                f.write(original)
        print(f"{verdict:<15} {m['id']:<42} by {' '.join(m['test'])} ({time.time() - t0:.0f} s)",
              flush=True)
    print(f"mutate: {killed}/{len(mutants)} mutants killed")
    if args.keep:
        print(f"mutate: copy and log kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
