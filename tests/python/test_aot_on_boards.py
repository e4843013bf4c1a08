"""Compiled models on the emulated boards: every zoo model, `ptec compile`d for
each core (M55, M33, M7, M4, M3) and run in the QEMU runner firmware of its
board, gives output bytes equal to the host runtime's (ptec-run) and to the
numpy reference interpreter. Compiled, interpreted and run on the host once
per kernel ISA (the M33, M7 and M4 share the DSP program).
The memory each board's runtime asks for equals what ptec.requirements
computes from the file for that core (what `inspect --requirements` and the
`--header` macros give), and on the host a program loads with exactly
those bytes and fails with one byte less in any region.
Skipped unless the cortex-m presets are built and qemu exists (a failure
under make test, PTEC_STRICT=1)."""
import functools
import importlib.util
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec import host_runtime
from ptec.models import ZOO, load_model
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program
from ptec.requirements import requirements
from ptec.targets import CORES, ISA

RUN_QEMU = os.path.join(ROOT, "scripts", "run_qemu.sh")
_spec = importlib.util.spec_from_file_location(
    "run_and_compare", os.path.join(ROOT, "tests", "target", "run_and_compare.py"))
run_and_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_and_compare)


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


@functools.lru_cache(maxsize=None)
def compiled_for_isa(name, isa, workdir):
    """The program of zoo model `name` compiled for the first core with this
    kernel ISA, its input bytes, and the outputs the int8 reference and the
    host runtime give. A program depends on the core only through the ISA
    its scratch is sized for (ptec.targets.ISA), so the cores that share an
    ISA (the M33, M7 and M4: DSP) run the same bytes; test_same_isa_same_program
    checks that."""
    target = next(core for core, core_isa in ISA.items() if core_isa == isa)
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(8), target=target)
    prog = parse_program(res.data)
    x = m.calibration(1, 17)[0][0].numpy()
    t = prog.plan().values[prog.plan().inputs[0]].val
    phys = x.reshape(t.sizes).transpose(list(t.dim_order))
    raw = np.ascontiguousarray(phys, NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes()
    want = np.ascontiguousarray(run_program(prog, [x])[0]).tobytes()
    host = np.ascontiguousarray(host_runtime.run(prog, res.data, [x], workdir=workdir)[0]).tobytes()
    return res.data, raw, want, host


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("aot_on_boards"))


@pytest.mark.parametrize("target", CORES)
@pytest.mark.parametrize("name", list(ZOO))
def test_compiled_model_on_board(tmp_path, cache_dir, target, name):
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    data, raw, want, host = compiled_for_isa(name, ISA[target], cache_dir)
    pte = tmp_path / "model.pte"
    pte.write_bytes(data)
    inp = tmp_path / "in.bin"
    inp.write_bytes(raw)
    run = subprocess.run([RUN_QEMU, "--target", target, "--elf", runner_elf(target), "--model",
                          str(pte), "--input", str(inp), "--timeout", "120"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    got = run_and_compare.firmware_outputs(run.stdout)
    assert got == [host], "board differs from ptec-run on the host"
    assert got == [want], "board differs from the int8 reference"
    assert runner_requirements(run.stdout) == predicted(data, target), \
        "the runtime on the board asks for other sizes than ptec.requirements gives for this core"


def runner_requirements(report):
    """{region: bytes} from the runner's "memory (from ptec_method_requirements)" lines."""
    found = dict(re.findall(r"^  (metadata|planned\[\d+\]|scratch)\s+required\s+(\d+) B", report, re.M))
    assert "metadata" in found, report
    return {k: int(v) for k, v in found.items()}


def predicted(data, target):
    r = requirements(parse_program(data), target=target)
    regions = {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes}
    regions.update({f"planned[{i + 1}]": n for i, n in enumerate(r.planned_bytes)})
    return regions


def ptec_run_binary():
    return os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


@pytest.mark.parametrize("name", list(ZOO))
def test_requirements_exact_on_host(tmp_path, cache_dir, name):
    """ptec-run given exactly the computed bytes per region (--region) loads
    and runs the program; one byte less in any region fails the load with
    the runtime's shortfall message."""
    exe = ptec_run_binary()
    if not os.path.exists(exe):
        pytest.skip("no ptec-run (make host)")
    data = compiled_for_isa(name, "MVE", cache_dir)[0]
    pte = tmp_path / "model.pte"
    pte.write_bytes(data)
    r = requirements(parse_program(data), target="host")
    regions = {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes,
               "fast_scratch": r.fast_scratch_bytes}
    regions.update({f"planned{i + 1}": n for i, n in enumerate(r.planned_bytes)})

    def run(sizes):
        args = [exe, str(pte)]
        for region, n in sizes.items():
            args += ["--region", f"{region}={n}"]
        return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    exact = run(regions)
    assert exact.returncode == 0, exact.stderr
    assert f"total:     {r.total_bytes} bytes" in exact.stdout, exact.stdout
    for region, n in regions.items():
        if n == 0:
            continue
        short = run({**regions, region: n - 1})
        assert short.returncode == 1 and "short by 1" in short.stderr, (region, short.stderr)


def test_same_isa_same_program():
    """The cores sharing an ISA get the same program from `ptec compile`
    (what lets test_compiled_model_on_board compile once per ISA)."""
    m = load_model("digits_cnn")
    calib = m.calibration(8)
    programs = {core: compile_model(m.module, m.example_inputs, calib, target=core).data
                for core, isa in ISA.items() if isa == "DSP"}
    assert len(programs) >= 2 and len(set(programs.values())) == 1, sorted(programs)


@pytest.mark.parametrize("command", [["compile", "digits_cnn"], ["evaluate"],
                                     ["import-tflite", "m.tflite", "-o", "m.pte"]])
def test_every_core_is_a_target(command):
    """`--target` takes every core that has a board, and no other."""
    from ptec.cli import _parser
    parser = _parser()
    for core in CORES:
        assert parser.parse_args(command + ["--target", core]).target == core
    assert set(CORES) == {"cortex-m55", "cortex-m33", "cortex-m7", "cortex-m4", "cortex-m3"}
    with pytest.raises(SystemExit):
        parser.parse_args(command + ["--target", "cortex-m85"])


def test_the_cores_are_the_presets_cores():
    """The cores are listed twice by necessity: ptec.targets (the installed
    package cannot read the checkout) and CMakePresets.json (what the build,
    the scripts and make test read). This keeps the two the same list."""
    import json
    with open(os.path.join(ROOT, "CMakePresets.json")) as f:
        presets = json.load(f)["configurePresets"]
    by_name = {p["name"]: p for p in presets}

    def cpu(p):
        while p is not None:
            if "TARGET_CPU" in p.get("cacheVariables", {}):
                return p["cacheVariables"]["TARGET_CPU"]
            p = by_name.get(p.get("inherits"))
        return None

    preset_cores = {cpu(p) for p in presets} - {None}
    assert preset_cores == set(CORES)
