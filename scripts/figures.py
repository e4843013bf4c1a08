#!/usr/bin/python3
"""One source for every figure in the README and docs: `make bench`.

Each bench script prints, next to its table, one `figure KEY VALUE` line per
measured figure. A document cites a figure as

    <!--fig:KEY-->1,788,541<!--/fig-->        (or <!--fig:KEY:kb-->19.1<!--/fig-->)

and the text between the markers is always the committed value of KEY in
bench/figures.json, formatted (default: an integer with thousands
separators; `kb`: bytes as KB with one decimal).

  scripts/figures.py collect LOG -o MEASURED.json   the figure lines of a bench log
  scripts/figures.py check MEASURED.json            vs bench/figures.json; 1 on drift
  scripts/figures.py update MEASURED.json           bench/figures.json := measured, docs rewritten
  scripts/figures.py docs [--write]                 docs vs bench/figures.json; 1 on drift

`make bench` ends with `check`, so a change that moves a figure fails it
until `update` is run and committed; `make test` runs `docs`
(tests/python/test_figures.py), so a document cannot cite a figure other
than the committed one. Host figures (callgrind, keys `host.*`) depend on
the host's C library and CPU, and the zoo's (`zoo.*`) on torch's float
calibration, so `check` allows them 2%; the other board figures (QEMU
icount of programs built without torch) and sizes are exact."""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = os.path.join(ROOT, "bench", "figures.json")
MARKER = re.compile(r"<!--fig:([\w.\-\[\]]+)(?::(\w+))?-->(.*?)<!--/fig-->")
# Figures that may move a little between machines: the host's callgrind
# counts (its C library and CPU) and the zoo's (compiled from PyTorch
# models, whose float calibration follows torch's CPU kernels and BLAS;
# the NPU compiler's (`npu.*`) and the sequence models' (`seq.*`) likewise).
TOLERANT = ("host.", "zoo.", "npu.", "seq.")
TOLERANCE = 0.02


def documents():
    """README.md and every .md under docs/, subfolders (docs/boards/) included."""
    yield os.path.join(ROOT, "README.md")
    docs = os.path.join(ROOT, "docs")
    for folder, dirs, files in os.walk(docs):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def fmt(value, how):
    if how in (None, "int"):
        return f"{int(value):,}"
    if how == "kb":
        return f"{value / 1024:.1f}"
    raise SystemExit(f"figures: unknown format '{how}'")


def load(path):
    with open(path) as f:
        return json.load(f)


def collect(log_path):
    figures = {}
    with open(log_path, errors="replace") as f:
        for line in f:
            m = re.match(r"^figure (\S+) (-?\d+)$", line.strip())
            if m:
                figures[m.group(1)] = int(m.group(2))
            elif line.startswith("figure "):
                raise SystemExit(f"figures: not a measurement: {line.strip()}")
    return dict(sorted(figures.items()))


def drift(measured, committed):
    out = []
    for key in sorted(set(measured) | set(committed)):
        a, b = committed.get(key), measured.get(key)
        if a is None or b is None:
            out.append(f"{key}: committed {a}, measured {b}")
        elif key.startswith(TOLERANT) and abs(b - a) <= TOLERANCE * abs(a):
            continue
        elif a != b:
            out.append(f"{key}: committed {a:,}, measured {b:,}")
    return out


def render(text, figures, name):
    """(text with every marker showing its committed figure, problems)."""
    problems = []

    def sub(m):
        key, how, shown = m.group(1), m.group(2), m.group(3)
        if key not in figures:
            problems.append(f"{name}: no figure {key} in bench/figures.json")
            return m.group(0)
        want = fmt(figures[key], how)
        if shown != want:
            problems.append(f"{name}: {key} shows {shown}, bench says {want}")
        return f"<!--fig:{key}{':' + how if how else ''}-->{want}<!--/fig-->"
    return MARKER.sub(sub, text), problems


def render_docs(figures, write):
    problems = []
    for path in documents():
        with open(path) as f:
            text = f.read()
        new, found = render(text, figures, os.path.relpath(path, ROOT))
        problems += found
        if write and new != text:
            with open(path, "w") as f:
                f.write(new)
    return problems


def main(argv):
    if len(argv) >= 2 and argv[0] == "collect":
        out = argv[argv.index("-o") + 1] if "-o" in argv else None
        figures = collect(argv[1])
        if not figures:
            raise SystemExit(f"figures: no figure lines in {argv[1]}")
        text = json.dumps(figures, indent=1) + "\n"
        if out:
            with open(out, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    if len(argv) == 2 and argv[0] == "check":
        problems = drift(load(argv[1]), load(COMMITTED))
        if problems:
            print("figures: the measured figures differ from bench/figures.json, which the docs cite:\n  "
                  + "\n  ".join(problems)
                  + f"\nfigures: if the change is meant, run scripts/figures.py update {argv[1]} and commit",
                  file=sys.stderr)
            return 1
        print(f"figures: all {len(load(COMMITTED))} figures as committed")
        return 0
    if len(argv) == 2 and argv[0] == "update":
        measured = load(argv[1])
        with open(COMMITTED, "w") as f:
            f.write(json.dumps(measured, indent=1) + "\n")
        problems = [p for p in render_docs(measured, write=True) if "no figure" in p]
        for p in problems:
            print("figures: " + p, file=sys.stderr)
        print(f"figures: bench/figures.json and the docs updated ({len(measured)} figures)")
        return 1 if problems else 0
    if argv and argv[0] == "docs":
        problems = render_docs(load(COMMITTED), write="--write" in argv)
        for p in problems:
            print("figures: " + p, file=sys.stderr)
        return 1 if problems else 0
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
