"""The mutation check's list (tests/mutants/mutants.json, run by `make
mutate`) must match the tree: every planted bug's original snippet occurs
exactly once in its file, so a refactoring that moves code fails here, in
`make test`, instead of leaving a mutant that silently tests nothing."""
import importlib.util
import os

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("mutate", os.path.join(ROOT, "scripts", "mutate.py"))
mutate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutate)


def test_every_mutant_snippet_is_in_the_tree():
    mutants = mutate.load_mutants()
    assert len(mutants) >= 20
    assert mutate.snippet_problems(mutants) == []


def test_a_moved_snippet_is_reported(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\n")
    moved = [dict(id="x", file="f.py", original="a = 2", replacement="a = 3")]
    assert mutate.snippet_problems(moved, str(tmp_path)) == ["x: snippet found 0 times in f.py"]


def test_every_area_of_the_issue_is_covered():
    areas = {m["area"] for m in mutate.load_mutants()}
    assert {"kernels", "runtime", "lowering", "quantization", "planning"} <= areas
