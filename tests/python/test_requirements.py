"""Exact memory requirements from the file (ptec.requirements): the AOT's
copy of the runtime's sizes matches every build, the real programs in
../shared/models need what the host runtime measures, and the CLI and the
generated header give those numbers. Zoo programs: test_aot_on_boards.py
(exact on the host, equal to each board's runtime). Programs of ptec's own
kernels (--ptec-runtime-only, --in-place, --a16, --w4, the LSTM kernels,
attention, average pooling, --fuse-expansion, a fractional max pool), whose
scratch rules the zoo does not reach: exact on the host and equal, region
by region, to what the M55 (MVE), M33 (DSP) and M3 (scalar) runtimes ask."""
import functools
import glob
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

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


def measured_on_host(out):
    """{region: bytes} ptec-run reports (planned: one entry per buffer)."""
    found = {k: int(v) for k, v in re.findall(r"^(metadata|scratch|total):\s+(\d+) bytes", out, re.M)}
    found["planned"] = [int(v) for v in re.findall(r"^planned:\s+(\d+) bytes", out, re.M)]
    return found


def assert_exact_on_host(path, r):
    """ptec-run measures the computed sizes, loads with exactly them per
    region (--region), and fails to load with one byte less in any."""
    out = ptec_run(path).stdout
    assert measured_on_host(out) == {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes,
                                     "total": r.total_bytes, "planned": r.planned_bytes}, out
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


@pytest.mark.parametrize("path", SHARED_PTES, ids=[os.path.relpath(p, SHARED) for p in SHARED_PTES])
def test_shared_programs_on_host(path):
    """Programs made by upstream ExecuTorch (an Ethos-U one included): the
    computed sizes are what ptec-run measures, they load, one byte less fails."""
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    with open(path, "rb") as f:
        r = requirements(parse_program(f.read()), target="host")
    assert_exact_on_host(path, r)


def test_every_kernel_that_asks_scratch_has_a_rule():
    """Each kernel whose C prepare sets a scratch size (op->scratch_bytes
    from anything but 0, or ptec's in-place buffer) has a rule in
    runtime_scratch.py, or is listed there as asking 0 on every ISA; the
    kernels that may run in place have the in-place rule. A kernel added
    with a scratch and no rule would be under-counted by the --header
    macros (the tests below hold each rule to the runtime)."""
    import json
    from ptec.backends.cortex_m import runtime_scratch as rs
    with open(os.path.join(ROOT, "python", "ptec", "operators.json")) as f:
        operators = json.load(f)["operators"]
    asking, in_place = set(), set()
    for op in operators:
        with open(os.path.join(ROOT, op["source"])) as f:
            text = f.read()
        name = op["schema"].split("(")[0]
        if re.search(r"op->scratch_bytes\s*=\s*(?![\s0])", text):
            asking.add(name)
        if "ptec_cm_prepare_in_place" in text and name.startswith("ptec::"):
            in_place.add(name)
    assert asking >= {"ptec::quantized_conv2d.out", "ptec::quantized_lstm.out", "ptec::random_fractional_pick.out"}
    assert asking - rs.RULED - rs.NO_SCRATCH == set()
    assert rs.NO_SCRATCH & rs.RULED == set() and rs.NO_SCRATCH <= asking
    assert in_place == set(rs.PTEC_IN_PLACE_OUT)


class Attention(nn.Module):
    """One head of self-attention: two activation-by-activation matmuls."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        a = torch.softmax(self.q(x) @ self.k(x).transpose(1, 2) * 0.35, dim=-1)
        return a @ self.v(x)


class Sequence(nn.Module):
    """An LSTM's whole output sequence (a stand-alone nn.LSTM returns a tuple)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(6, 10, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1, groups=16),
                         nn.ReLU(), nn.Conv2d(16, 24, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(24, 5))


def _in_place():
    # a 5x5 depthwise (padding 2: the rows held back) and pointwise layers of unchanged shape
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 5, padding=2, groups=8),
                         nn.ReLU(), nn.Conv2d(8, 8, 1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8 * 25, 4))


def _short_image():
    # one input channel (a depthwise of multiplier 8 on DSP and Helium), a dilated depthwise and a
    # pointwise layer on an image of 3 rows: fewer than a block of rows, the held rows capped at H
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8),
                         nn.ReLU(), nn.Conv2d(8, 8, 1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 21, 3))


def _expansion():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU6(), nn.Conv2d(8, 32, 1), nn.ReLU6(),
                         nn.Conv2d(32, 32, 3, 2, 1, groups=32), nn.ReLU6(), nn.Conv2d(32, 8, 1))


# name -> (model, input sizes, compile_model options)
class Singular(nn.Module):
    """The matrices' singular values after a linear (ptec::linalg_svdvals.out's scratch)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(7, 7)

    def forward(self, x):
        return torch.linalg.svdvals(self.fc(x))


class SymmetricEigen(Singular):
    """The eigenvalues of the linear's lower triangles (ptec::linalg_eigvalsh.out's scratch)."""

    def forward(self, x):
        return torch.linalg.eigvalsh(self.fc(x))


class DetAndSolve(Singular):
    """log |det| and A^-1 (A + I) of the linear's matrices (ptec::linalg_det.out's and linalg_solve.out's scratch)."""

    def forward(self, x):
        a = self.fc(x) + 4 * torch.eye(7)
        return torch.cat([torch.linalg.slogdet(a)[1][..., None, None].expand(-1, 7, 1),
                          torch.linalg.solve(a, a + torch.eye(7))], -1)


class PseudoInverse(Singular):
    """The pseudo-inverses and eigenvectors of the linear's matrices (ptec::linalg_svd.out's and
    linalg_eigh_vectors.out's scratch)."""

    def forward(self, x):
        y = self.fc(x)
        return torch.cat([torch.linalg.pinv(y), torch.linalg.eigh(y[..., :7, :]).eigenvectors], -2)


class LuFactors(Singular):
    """The packed LU of the linear's matrices and P of their first 5 columns (ptec::linalg_lu.out's scratch)."""

    def forward(self, x):
        y = self.fc(x)
        return torch.cat([torch.linalg.lu_factor(y).LU, torch.linalg.lu(y[..., :5]).P], -1)


class LdlFactors(Singular):
    """LD of the linear's matrices' lower triangles and their pivots (ptec::linalg_ldl_factor.out's scratch)."""

    def forward(self, x):
        ld, pivots = torch.linalg.ldl_factor(self.fc(x))
        return torch.cat([ld, pivots[..., None].float()], -1)


class GeneralEigen(Singular):
    """The general eigenvalues and eigenvectors of the linear's matrices (ptec::linalg_eigvals.out's and
    linalg_eig_vectors.out's scratch)."""

    def forward(self, x):
        w, v = torch.linalg.eig(self.fc(x))
        return torch.cat([v.abs(), w.abs()[..., None]], -1)


class CholeskyInfo(Singular):
    """cholesky_ex's L and info of the linear's matrices times their transposes
    (ptec::linalg_cholesky.out's and linalg_cholesky_info.out's scratch)."""

    def forward(self, x):
        y = self.fc(x)
        l, info = torch.linalg.cholesky_ex(y @ y.mT + torch.eye(7))
        return torch.cat([l, info[..., None, None].expand(-1, 7, 1).float()], -1)


class ModeRows(nn.Module):
    """torch.mode along rows of 37 and down columns of 5 (aten::mode.values' scratch: 4 bytes per element
    of its row)."""

    def forward(self, x):
        y = torch.round(x * 2)
        return torch.cat([torch.mode(y, -1)[1].float(), torch.mode(y, 0)[1].float()], -1)


KERNEL_CASES = {
    "ptec_runtime_only": (_cnn, (1, 3, 12, 12), {"ptec_runtime_only": True}),
    "in_place": (_in_place, (1, 3, 10, 10), {"in_place": True}),
    "short_image": (_short_image, (1, 1, 3, 7), {"ptec_runtime_only": True}),
    "a16": (_cnn, (1, 3, 12, 12), {"a16": True}),
    "w4": (_cnn, (1, 3, 12, 12), {"w4": True}),
    # the packed depthwise from one input channel (unpacked after the single-input scratch) and dilated
    "w4_depthwise": (_short_image, (1, 1, 3, 7), {"w4": True}),
    "lstm": (Sequence, (1, 7, 6), {}),
    "lstm_a16": (Sequence, (1, 7, 6), {"a16": True}),
    "lstm_unrolled": (Sequence, (1, 7, 6), {"unrolled_lstm": True}),
    "attention": (Attention, (1, 6, 8), {}),
    "avg_pool": (lambda: nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AvgPool2d(3, 2), nn.Flatten(),
                                       nn.Linear(8 * 16, 4)), (1, 3, 11, 11), {}),
    "fuse_expansion": (_expansion, (1, 3, 9, 11), {"fuse_expansion": True}),
    "fractional_max_pool": (lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.FractionalMaxPool2d(2, output_size=(3, 4))),
                            (1, 3, 9, 10), {}),
    "svdvals": (Singular, (2, 5, 7), {}),
    "eigvalsh": (SymmetricEigen, (3, 7, 7), {}),
    "lu": (DetAndSolve, (3, 7, 7), {}),
    "svd": (PseudoInverse, (2, 7, 7), {}),
    "lu_factor": (LuFactors, (2, 7, 7), {}),
    "ldl_factor": (LdlFactors, (2, 7, 7), {}),
    "eig": (GeneralEigen, (2, 7, 7), {}),
    "cholesky_info": (CholeskyInfo, (2, 7, 7), {}),
    "mode": (ModeRows, (5, 37), {}),
}
BOARD_CORES = ["cortex-m55", "cortex-m33", "cortex-m3"]


@functools.lru_cache(maxsize=None)
def kernel_case(name, target):
    """The program of KERNEL_CASES[name] compiled for target, and an input's bytes."""
    from ptec.compiler import compile_model
    from ptec.pte import NUMPY_DTYPE, ScalarType
    build, sizes, options = KERNEL_CASES[name]
    torch.manual_seed(3)
    model = build().eval()
    g = torch.Generator().manual_seed(4)
    calib = [(torch.randn(*sizes, generator=g),) for _ in range(6)]
    data = compile_model(model, calib[0], calib, target=target, **options).data
    t = parse_program(data).plan().values[parse_program(data).plan().inputs[0]].val
    x = calib[1][0].numpy().reshape(t.sizes).transpose(list(t.dim_order))
    return data, np.ascontiguousarray(x, NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes()


@pytest.mark.parametrize("name", list(KERNEL_CASES))
def test_kernel_scratch_exact_on_host(tmp_path, name):
    """ptec's own kernels (conv and depthwise under their ptec:: names with
    the in-place buffer, w4, a16, LSTM, batch matmul, pooling, the fused
    expansion, the fractional pick, the singular and eigenvalues): the host runtime asks for what
    ptec.requirements computes, region by region, and no byte more."""
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    path = tmp_path / "model.pte"
    path.write_bytes(kernel_case(name, "cortex-m55")[0])
    assert_exact_on_host(str(path), requirements(parse_program(path.read_bytes()), target="host"))


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


@pytest.mark.parametrize("target", BOARD_CORES)
@pytest.mark.parametrize("name", list(KERNEL_CASES))
def test_kernel_scratch_on_boards(tmp_path, name, target):
    """The runtime on each kernel ISA's board (QEMU runner firmware) asks
    for every region what ptec.requirements computes for that core, the
    scratch of ptec's kernels included; the program runs."""
    import shutil
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    data, raw = kernel_case(name, target)
    (tmp_path / "model.pte").write_bytes(data)
    (tmp_path / "in.bin").write_bytes(raw)
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf",
                          runner_elf(target), "--model", str(tmp_path / "model.pte"), "--input",
                          str(tmp_path / "in.bin"), "--timeout", "120"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    found = {k: int(v) for k, v in re.findall(r"^  (metadata|planned\[\d+\]|scratch|total)\s+required\s+(\d+) B",
                                              run.stdout, re.M)}
    r = requirements(parse_program(data), target=target)
    want = {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes,
            "total": r.metadata_bytes + sum(r.planned_bytes) + r.scratch_bytes}   # the runner's unaligned sum
    want.update({f"planned[{i + 1}]": n for i, n in enumerate(r.planned_bytes)})
    assert found == want, run.stdout


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


def test_values_a_run_never_reads_are_not_kept(tmp_path, monkeypatch):
    """A loaded method keeps a value header only for what a run reads
    (tensors, tensor lists, Bools). Around z = x + c: a move between Ints
    (nothing to do at run), an Int output (reported by its kind), a Double
    and a string that nothing names, and a Bool moved at run into the
    condition of a forward jump that skips a second add. ptec.requirements
    and the host runtime agree to the byte (one byte less fails), the
    headers dropped are exactly those values', and the run takes the jump
    (the Bool move happened): z is x + c, not x + 2c."""
    from ptec.pte.program_builder import ProgramBuilder
    from ptec.pte.schema import FreeCall, Instruction, JumpFalseCall, MoveCall, ScalarType
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [4])
    c = b.constant(np.array([1.0, 2.0, 4.0, 8.0], dtype=np.float32))
    z = b.tensor(ScalarType.FLOAT, [4])
    b.call("aten::add.out", self=x, other=c, alpha=1, out=z)
    b.call("aten::add.out", self=z, other=c, alpha=1, out=z)
    cond, false = b.bool(True), b.bool(False)
    i_from, i_to = b.int(7), b.int(9)
    b.double(0.5)
    b.string("unused")
    b.set_io([x], [z, i_to])
    program = b.build()
    chain = program.execution_plan[0].chains[0].instructions
    first_add, second_add = chain[0], chain[1]
    chain[:] = [first_add, Instruction(MoveCall(i_from, i_to)), Instruction(MoveCall(false, cond)),
                Instruction(JumpFalseCall(cond, 5)), second_add, Instruction(FreeCall(x))]
    from ptec.pte.writer import write_program
    path = tmp_path / "kept.pte"
    write_program(program, str(path))
    plan = parse_program(path.read_bytes()).plan()
    r = requirements(parse_program(path.read_bytes()), target="host")
    assert_exact_on_host(str(path), r)
    # The layout: every value but the Ints, the Double and the string (and
    # the add's Int alpha, boxed once per call) has a header.
    from ptec.pte.schema import Double, Int, String
    dropped = sum(isinstance(v.val, (Int, Double, String)) for v in plan.values)
    assert dropped >= 4
    import ptec.requirements
    monkeypatch.setattr(ptec.requirements, "KEPT_VALUE_TYPES", object)
    kept_all = requirements(parse_program(path.read_bytes()), target="host")
    assert kept_all.metadata_bytes - r.metadata_bytes == dropped * 16   # 16-byte headers on LP64
    out = tmp_path / "out"
    run = subprocess.run([PTEC_RUN, str(path), "--output-dir", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert run.returncode == 0, run.stderr
    got = np.load(out / "output0.npy")
    assert got.tolist() == [2.0, 3.0, 5.0, 9.0], got   # ones + c: the second add was jumped over
