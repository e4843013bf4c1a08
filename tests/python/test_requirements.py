"""Exact memory requirements from the file (ptec.requirements): the AOT's
copy of the runtime's sizes matches every build, the real programs in
../shared/models need what the host runtime measures, and the CLI and the
generated header give those numbers. Zoo programs: test_aot_on_boards.py
(exact on the host, equal to each board's runtime)."""
import glob
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from ptec.pte import parse_program
from ptec.requirements import RequirementsError, requirements

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")
SHARED = os.environ.get("PTEC_SHARED", os.path.join(ROOT, "..", "shared"))
SHARED_PTES = sorted(glob.glob(os.path.join(SHARED, "models", "**", "*.pte"), recursive=True))


def test_layout_copy_matches_every_build():
    """python/ptec/runtime_layout.json is what tools/ptec-layout prints on the
    host and on each core's board (exit 3: a build is missing)."""
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "runtime_layout.py")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode == 3:
        pytest.skip("a build is missing (make host cross): " + run.stdout.strip().splitlines()[-1])
    assert run.returncode == 0, run.stdout


def ptec_run(path, *args):
    return subprocess.run([PTEC_RUN, path, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("path", SHARED_PTES, ids=[os.path.relpath(p, SHARED) for p in SHARED_PTES])
def test_shared_programs_on_host(path):
    """Programs made by upstream ExecuTorch (an Ethos-U one included): the
    computed sizes are what ptec-run measures, they load, one byte less fails."""
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    with open(path, "rb") as f:
        r = requirements(parse_program(f.read()), target="host")
    out = ptec_run(path).stdout
    measured = {k: int(v) for k, v in re.findall(r"^(metadata|scratch|total):\s+(\d+) bytes", out, re.M)}
    assert measured == {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes, "total": r.total_bytes}, out
    regions = [f"metadata={r.metadata_bytes}", f"scratch={r.scratch_bytes}"] + \
        [f"planned{i + 1}={n}" for i, n in enumerate(r.planned_bytes)]
    exact = ptec_run(path, *[a for reg in regions for a in ("--region", reg)])
    assert exact.returncode == 0, exact.stderr
    for k, reg in enumerate(regions):
        name, n = reg.split("=")
        if int(n) == 0:
            continue
        less = regions[:k] + [f"{name}={int(n) - 1}"] + regions[k + 1:]
        short = ptec_run(path, *[a for reg in less for a in ("--region", reg)])
        assert short.returncode == 1 and "short by 1" in short.stderr, (reg, short.stderr)


def test_unknown_operator_is_a_clear_error():
    from ptec.pte.schema import Operator
    with open(SHARED_PTES[0], "rb") as f:
        program = parse_program(f.read())
    program.plan().operators[0] = Operator(name="aten::nothing_like_it", overload="out")
    with pytest.raises(RequirementsError, match="aten::nothing_like_it.out is not in ptec's runtime"):
        requirements(program, target="cortex-m55")


def test_header_macros_pick_each_build(tmp_path):
    """The --header macros compile to the numbers of the build they are
    compiled into: the host compiler and arm-none-eabi-gcc for each core
    check them against ptec.requirements with static asserts."""
    import shutil
    from ptec.emit import write_c_array
    from ptec.targets import CORES
    path = next(p for p in SHARED_PTES if p.endswith("ethos_u_minimal_example.pte"))
    with open(path, "rb") as f:
        data = f.read()
    program = parse_program(data)
    write_c_array(data, str(tmp_path / "model.h"))
    compilers = [("host", ["gcc"])]
    if shutil.which("arm-none-eabi-gcc"):
        compilers += [(core, ["arm-none-eabi-gcc", f"-mcpu={core}", "-mthumb"]) for core in CORES]
    elif os.environ.get("PTEC_STRICT") == "1":
        pytest.fail("arm-none-eabi-gcc missing")
    for target, cc in compilers:
        r = requirements(program, target=target, fast_scratch=48)
        checks = [("MODEL_PTE_METADATA_BYTES", r.metadata_bytes), ("MODEL_PTE_SCRATCH_BYTES", r.scratch_bytes),
                  ("MODEL_PTE_FAST_SCRATCH_BYTES", r.fast_scratch_bytes), ("MODEL_PTE_TOTAL_BYTES", r.total_bytes),
                  ("MODEL_PTE_PLANNED_COUNT", len(r.planned_bytes))] + \
            [(f"MODEL_PTE_PLANNED{i + 1}_BYTES", n) for i, n in enumerate(r.planned_bytes)]
        src = tmp_path / f"check_{target}.c"
        src.write_text('#include "model.h"\n' + "".join(
            f'_Static_assert({m} == {v}u, "{m} is not {v} on {target}");\n' for m, v in checks))
        run = subprocess.run(cc + ["-std=c11", "-fsyntax-only", "-DPTEC_ETHOSU_FAST_SCRATCH_BYTES=48u",
                                   "-I", str(tmp_path), "-I", os.path.join(ROOT, "include"), str(src)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert run.returncode == 0, f"{target}: {run.stdout}"


def test_inspect_requirements_cli(tmp_path):
    path = next(p for p in SHARED_PTES if p.endswith("add.pte"))
    run = subprocess.run([sys.executable, "-m", "ptec", "inspect", "--requirements", "--target", "cortex-m33", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert run.returncode == 0, run.stderr
    with open(path, "rb") as f:
        r = requirements(parse_program(f.read()), target="cortex-m33")
    assert re.search(rf"metadata\s+{r.metadata_bytes} B", run.stdout) and \
        re.search(rf"total\s+{r.total_bytes} B", run.stdout), run.stdout
    bad = subprocess.run([sys.executable, "-m", "ptec", "inspect", "--requirements", "--method", "nope", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no method 'nope'" in bad.stderr
