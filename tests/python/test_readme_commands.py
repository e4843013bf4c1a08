"""The README's commands work as written, with a python3 first on PATH that
has no torch (a pyenv or venv one): the compile block, the ptec-run line and
the examples/hello build, run in a scratch folder that mirrors the checkout
(so nothing is written into it). `make demo` and `make test` are the suite
itself. Placeholders the README names as such (`your_model.tflite`,
`x.npy`) are given real files."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import ROOT

SHARED = os.environ.get("PTEC_SHARED", os.path.join(ROOT, "..", "shared"))


def sh_blocks():
    with open(os.path.join(ROOT, "README.md")) as f:
        return re.findall(r"^```sh\n(.*?)^```", f.read(), re.S | re.M)


def commands(block):
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.fixture
def workdir(tmp_path):
    for name in os.listdir(ROOT):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(ROOT, name), tmp_path / name)
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho 'a python3 without torch' >&2\nexit 1\n")
    (fake / "python3").chmod(0o755)
    os.symlink(os.path.join(SHARED, "models", "ethos-u", "tflm", "person_detect.tflite"),
               tmp_path / "your_model.tflite")
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    return tmp_path, env


def shell(cmd, cwd, env):
    r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-3000:]}"
    return r.stdout


def test_readme_commands_work_as_written(workdir):
    cwd, env = workdir
    assert subprocess.run(["python3", "-c", "1"], env=env).returncode == 1   # the decoy is first
    blocks = sh_blocks()
    if not os.path.exists(os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")):
        pytest.skip("no ptec-run (make host)")
    os.symlink(os.path.join(ROOT, "build"), cwd / "build")     # ptec-run, for evaluate and the line below
    compile_block = next(b for b in blocks if "tools/ptec compile digits_cnn --calib 32" in b)
    for cmd in commands(compile_block):
        shell(cmd, cwd, env)
    ptec_run_line = next(c for b in blocks for c in commands(b) if "ptec-run model.pte" in c)
    np.save(cwd / "x.npy", np.ones((1, 1, 16, 16), np.float32))     # model.pte: examples/my_model.py
    out = shell(ptec_run_line.replace("--output-dir out", f"--output-dir {cwd / 'out'}"), cwd, env)
    assert "output 0: float32 [1, 4]" in out and (cwd / "out" / "output0.npy").exists(), out
    os.unlink(cwd / "build")
    hello_block = next(b for b in blocks if "examples/hello" in b)
    lines = commands(hello_block)
    for cmd in lines[:-1]:
        shell(cmd, cwd, env)
    # the RAM the README's comment promises (the header's exact total for this build)
    ram = re.search(r"class 1, (\d+) bytes of RAM", hello_block).group(1)
    assert re.match(r"scores:( -?\d+\.\d{3}){10}\nclass 1, " + ram + r" bytes of RAM\n$", shell(lines[-1], cwd, env))


def test_tools_ptec_says_what_to_install(tmp_path):
    """With no Python that has torch, tools/ptec says what to do, in one line, exit 2."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in ("python3",):
        (fake / name).write_text("#!/bin/sh\nexit 1\n")
        (fake / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:/bin", PTEC_PYTHON=str(fake / "python3"))
    tool = tmp_path / "tools" / "ptec"
    tool.parent.mkdir()
    # A copy whose Debian interpreter path is a decoy too: the search must fail.
    text = open(os.path.join(ROOT, "tools", "ptec")).read().replace("/usr/bin/python3", str(fake / "python3"))
    tool.write_text(text)
    tool.chmod(0o755)
    r = subprocess.run([str(tool), "inspect", "x.pte"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2 and "no Python with torch and numpy" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
