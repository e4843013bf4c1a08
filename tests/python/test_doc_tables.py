"""Every Markdown table in the docs has as many cells in each row as in
its header. A `|` inside a cell (an absolute value `|x|`, an `a | b` in
code) must be written `\\|`, or the renderer splits the cell there and the
row's later cells land under the wrong headings (docs/aot.md's operator
table had 13 such rows: its `--w4` and a16 columns read wrong)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEPARATOR = re.compile(r"^\s*\|[\s:|-]+\|\s*$")


def cell_count(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return len(re.split(r"(?<!\\)\|", s))


def ragged_rows(text):
    lines = text.split("\n")
    bad, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and SEPARATOR.match(lines[i + 1]):
            want, j = cell_count(lines[i]), i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                if cell_count(lines[j]) != want:
                    bad.append((j + 1, cell_count(lines[j]), want))
                j += 1
            i = j
        else:
            i += 1
    return bad


def test_the_checker_sees_a_split_cell():
    table = "| a | b |\n|---|---|\n| `|x|` | y |\n| `\\|x\\|` | y |\n"
    assert ragged_rows(table) == [(3, 4, 2)]


def test_every_docs_table_row_has_its_headers_cells():
    files = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    bad = {str(p.relative_to(ROOT)): rows for p in files if (rows := ragged_rows(p.read_text()))}
    assert not bad, bad
