"""`ptec report`: one self-contained HTML page, rendered in real headless
Chromium (Debian's): the page's script draws every planned tensor on the
memory timeline and the cost bars, logs nothing to the console, and loads
nothing from the network; a screenshot is kept in build/test-artifacts.
Also: the profile inputs it reads (ptec-run --profile --json, the firmware
runner's log), the placement names the PyTorch modules and the NPU, and the
board budgets agree with the boards' linker scripts."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from ptec.compiler import compile_model
from ptec.models import load_model
from ptec.report import BOARDS, collect, load_profile, write_report

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")
SHARED = os.environ.get("PTEC_SHARED", os.path.join(ROOT, "..", "shared"))
ARTIFACTS = os.path.join(ROOT, "build", "test-artifacts")
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("no chromium (scripts/setup.sh installs Debian's)")
    return exe


def render(html_path, *extra):
    """(DOM after the scripts ran, Chromium's console lines)."""
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                        "--v=0", "--virtual-time-budget=5000", *extra, f"file://{html_path}"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    console = [line for line in r.stderr.splitlines() if "CONSOLE" in line]
    return r.stdout, console


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    m = load_model("digits_cnn")
    res = compile_model(m.module, m.example_inputs, m.calibration(8), target="cortex-m55")
    pte = d / "digits.pte"
    pte.write_bytes(res.data)
    return d, pte


def test_console_errors_are_caught(tmp_path):
    """The check below can fail: a page that throws is seen."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><body><script>undefinedFunction();</script></body>")
    _, console = render(page, "--dump-dom")
    assert any("undefinedFunction" in line for line in console), console


def test_report_renders_in_chromium(digits):
    d, pte = digits
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    run_json = d / "run.json"
    subprocess.run([PTEC_RUN, str(pte), "--profile", "--json", str(run_json)], check=True,
                   stdout=subprocess.DEVNULL)
    out = d / "report.html"
    r = subprocess.run([sys.executable, "-m", "ptec", "report", str(pte), "--profile", str(run_json),
                        "--target", "host", "--board", "mps3-an547", "-o", str(out)],
                       env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert not re.search(r"(src|href)=\"?(https?:)?//", page), "the page loads something from the network"
    data = collect(pte.read_bytes(), "host", load_profile(str(run_json)))
    dom, console = render(out, "--dump-dom")
    assert console == [], console
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-charts="drawn"' in body, body
    assert f'data-tensors="{len(data["tensors"])}"' in body and len(data["tensors"]) > 3, body
    bars = int(re.search(r'data-bars="(\d+)"', body).group(1))
    assert bars == sum(1 for r in data["instructions"] if r["ticks"]) + \
        sum(1 for r in data["instructions"] if r["macs"]), body
    assert dom.count('class="tensor"') == len(data["tensors"]) and 'class="peak"' in dom
    for module in ("conv1 (nn.Conv2d)", "conv2 (nn.Conv2d)", "fc (nn.Linear)"):
        assert module in page, module
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "report.png")
    if os.path.exists(shot):
        os.remove(shot)
    render(out, "--hide-scrollbars", "--window-size=1250,1600", f"--screenshot={shot}")
    assert os.path.getsize(shot) > 20000, "screenshot missing or blank"


def test_peak_is_the_most_live_bytes(digits):
    _, pte = digits
    data = collect(pte.read_bytes())
    assert data["peak_bytes"] == max(data["live"]) > 0
    assert data["peak_bytes"] <= sum(data["buffers"])        # never more than the planned buffers


def test_runner_log_profile_and_npu_placement(tmp_path):
    """The firmware runner's per-operator table is a profile; an Ethos-U
    program made by upstream shows its delegate on the NPU."""
    pte = os.path.join(SHARED, "models", "upstream", "ethos_u_minimal_example.pte")
    log = tmp_path / "runner.log"
    log.write_text("instructions per operator:\n"
                   "  [  0] quantized_decomposed::quantize_per_tensor.out        1,001   2.0%\n"
                   "  [  2] EthosUBackend                                       12,345  98.0%\n")
    prof = load_profile(str(log))
    assert prof == {"unit": "instructions", "per_instruction": {0: 1001.0, 2: 12345.0},
                    "source": "firmware runner"}
    d = write_report(pte, str(tmp_path / "npu.html"), str(log), target="cortex-m55")
    npu = d["instructions"][2]
    assert npu["placed"] == "NPU (EthosUBackend)" and npu["ticks"] == 12345 and npu["macs"] is None
    assert d["instructions"][0]["placed"] == "CPU int8"
    log.write_text(log.read_text() + "  [  9] EthosUBackend   1  0.0%\n")
    with pytest.raises(ValueError, match="more instructions than"):
        write_report(pte, str(tmp_path / "npu2.html"), str(log))


def test_runner_log_from_a_board(digits, tmp_path):
    """A real runner log, from the emulated M55, reads as a profile of every instruction."""
    elf = os.path.join(ROOT, "build", "cortex-m55", "firmware", "runner", "ptec_runner.elf")
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip("no QEMU or no cortex-m55 runner")
    _, pte = digits
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", "cortex-m55", "--elf", elf,
                          "--model", str(pte), "--timeout", "60"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    log = tmp_path / "runner.log"
    log.write_text(run.stdout)
    d = write_report(str(pte), str(tmp_path / "r.html"), str(log))
    assert all(r["ticks"] and r["ticks"] > 0 for r in d["instructions"]), d["instructions"]


def test_bad_profile_is_one_line_and_no_file(digits, tmp_path):
    _, pte = digits
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "ptec", "report", str(pte), "--profile", str(bad), "-o", str(out)],
                       env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not valid JSON" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("machine", [m for m in BOARDS if m.startswith("mps")])
def test_board_budgets_match_the_linker_scripts(machine):
    """report.BOARDS repeats the QEMU boards' memory sizes (the package
    cannot read the checkout): they must stay those of boards/*/*.ld."""
    boards = os.path.join(ROOT, "boards")
    # The runner's board on that machine (the i.MX93 simulation also runs on
    # mps2-an505, with the i.MX93's memory map).
    folder = next(b for b in sorted(os.listdir(boards)) if os.path.exists(os.path.join(boards, b, "board.cmake"))
                  and b.startswith("mps")
                  and f"PTEC_BOARD_QEMU_MACHINE {machine})" in open(os.path.join(boards, b, "board.cmake")).read())
    cmake = open(os.path.join(boards, folder, "board.cmake")).read()
    script = re.search(r"PTEC_BOARD_LINKER_SCRIPT \$\{CMAKE_CURRENT_LIST_DIR\}/(\.\./)?([\w/]+\.ld)", cmake)
    ld_path = os.path.normpath(os.path.join(boards, folder, (script.group(1) or "") + script.group(2))) \
        if script else None
    if ld_path is None:
        include = re.search(r"include\(\$\{CMAKE_CURRENT_LIST_DIR\}/(.+?\.cmake)\)", cmake).group(1)
        inc = open(os.path.join(boards, folder, include)).read()
        script = re.search(r"PTEC_BOARD_LINKER_SCRIPT \$\{CMAKE_CURRENT_LIST_DIR\}/([\w/]+\.ld)", inc).group(1)
        ld_path = os.path.join(os.path.dirname(os.path.join(boards, folder, include)), script)
    ld = open(ld_path).read()
    sizes = {name: int(n) * {"K": 1024, "M": 2**20}[unit]
             for name, n, unit in re.findall(r"^\s*(\w+) \(\w+\)\s*:\s*ORIGIN = \w+, LENGTH = (\d+)([KM])", ld, re.M)}
    b = BOARDS[machine]
    ram = {"ISRAM": "ISRAM", "SSRAM2/3 pool": "SSRAM23_POOL"}[b["ram_name"]]
    assert sizes[ram] == b["ram"], (ld_path, sizes)
    assert sizes[b["program_name"]] == b["program"], (ld_path, sizes)
