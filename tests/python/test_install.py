"""The ptec package installs with pip and works from the installed copy alone:
no path back into the checkout (issue 9)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
PYTHON = "/usr/bin/python3"


def have_pip():
    probe = "import importlib.util as u; assert all(u.find_spec(m) for m in ('pip', 'setuptools', 'wheel'))"
    return subprocess.run([PYTHON, "-c", probe], capture_output=True).returncode == 0


def test_installed_package_compiles_ds_cnn_outside_the_checkout(tmp_path):
    if not have_pip():
        pytest.skip("pip, setuptools or wheel missing (scripts/setup.sh installs them)")
    # pip builds in the source folder: build from a copy, not the checkout.
    source = tmp_path / "source"
    shutil.copytree(os.path.join(ROOT, "python"), source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    target = tmp_path / "installed"
    r = subprocess.run([PYTHON, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                        "--no-index", "--quiet", "--target", str(target), str(source)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    shutil.rmtree(source)   # nothing may be left to find there either

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(target)
    where = subprocess.run([PYTHON, "-c", "import ptec.ops, ptec.c_array; print(ptec.ops.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(target)), where
    r = subprocess.run([PYTHON, "-m", "ptec", "compile", "ds_cnn", "-o", "x.pte"],
                       cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

    in_tree = tmp_path / "in_tree.pte"
    r = subprocess.run([PYTHON, "-m", "ptec", "compile", "ds_cnn", "-o", str(in_tree)], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (work / "x.pte").read_bytes() == in_tree.read_bytes()
