"""Every figure the README and docs cite is the committed output of `make
bench` (bench/figures.json, scripts/figures.py): a document that shows
another number, or cites a figure the bench does not measure, fails."""
import importlib.util
import json
import os

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("figures", os.path.join(ROOT, "scripts", "figures.py"))
figures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(figures)


def committed():
    with open(figures.COMMITTED) as f:
        return json.load(f)


def test_docs_show_the_committed_figures():
    problems = figures.render_docs(committed(), write=False)
    assert problems == [], "\n".join(problems) + "\n(scripts/figures.py docs --write fixes the text)"


def test_every_document_is_checked_subfolders_included():
    """docs/boards/*.md cite figures too; they were once left out."""
    checked = {os.path.relpath(p, ROOT) for p in figures.documents()}
    on_disk = {os.path.relpath(os.path.join(d, n), ROOT) for d, _, files in os.walk(os.path.join(ROOT, "docs"))
               for n in files if n.endswith(".md")}
    assert on_disk <= checked and "README.md" in checked
    assert os.path.join("docs", "boards", "imx93.md") in checked


def test_the_docs_cite_figures():
    cited = [m.group(1) for path in figures.documents() for m in figures.MARKER.finditer(open(path).read())]
    assert len(cited) > 50 and {"ds_cnn.cortex-m55.net", "host.dispatch.add.overhead"} <= set(cited)


def test_a_stale_figure_is_caught():
    key = "ds_cnn.cortex-m55.net"
    value = committed()[key]
    text = f"| x | <!--fig:{key}-->{value + 1:,}<!--/fig--> |"
    fixed, problems = figures.render(text, committed(), "t.md")
    assert problems and f"{value:,}" in fixed
    _, problems = figures.render("<!--fig:no.such.figure-->1<!--/fig-->", committed(), "t.md")
    assert problems == ["t.md: no figure no.such.figure in bench/figures.json"]


def test_check_tolerates_host_and_zoo_figures_only():
    base = {"host.x": 1000, "board.y": 1000}
    assert figures.drift({"host.x": 1015, "board.y": 1000}, base) == []
    assert figures.drift({"host.x": 1000, "board.y": 1001}, base) != []
    assert figures.drift({"host.x": 1030, "board.y": 1000}, base) != []
