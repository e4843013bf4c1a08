"""ptec's Ethos-U compiler (python/ptec/backends/ethos_u, issue 12), checked
by parts of the project that share no code with it:

* the weights and scale records: the NPU model's decoder (C, through
  tests/c/npu/npu_weights_dump) must read back exactly the graph's int8
  weights, int32 biases and ptec's (multiplier, 31 - shift) pairs;
* the numbers: every zoo model runs through the EthosUBackend delegate on the
  NPU model (ptec-run) and must give the bytes of the CPU-only program of the
  same quantized graph (cortex_m kernels, CMSIS-NN numerics);
* the streams: the linter (stream_lint, written from the hardware rules and
  checked on Vela's own streams) finds nothing in any generated stream;
* the blob: upstream's layout, read back by the package's blob reader (which
  checks what upstream's runtime checks at init).
"""
import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from ptec.backends.cortex_m import CortexMBackend
from ptec.backends.ethos_u.backend import BACKEND_ID, EthosUBackend
from ptec.backends.ethos_u.blob import read_blob
from ptec.backends.ethos_u.npu_ops import average_scale
from ptec.backends.ethos_u.npu_config import NPU_TARGETS
from ptec.backends.ethos_u.npu_report import network_summary, node_macs, placement_table
from ptec.backends.ethos_u.stream_lint import lint_cop
from ptec.backends.portable import PortableBackend
from ptec.compiler import compile_model
from ptec.models import ZOO, load_model
from runtime_util import PTEC_RUN
from test_npu_weights_oracle import DUMP, read_dump

CNNS = ("ds_cnn", "mobilenet_v1_025", "resnet8", "mobilenet_v2_035", "digits_cnn")
HOST_NPU = "ethos-u55-128"          # what build/host's ptec-run drives (PTEC_ETHOSU_TARGET)


def _backends(accel):
    npu = EthosUBackend(accel)
    return npu, [npu, CortexMBackend(), PortableBackend()]


class Recorder(EthosUBackend):
    """Keeps every blob it writes (the test reads them without a .pte reader)."""

    def __init__(self, accel, *args):
        super().__init__(accel, *args)
        self.blobs = []

    def write_blob(self, nodes, inputs, outputs, ctx):
        b = super().write_blob(nodes, inputs, outputs, ctx)
        self.blobs.append((list(nodes), b.data))
        return b


# ---------------------------------------------------------------------------
# Weights and scale records, decoded by the NPU model

class Layers(nn.Module):
    """Kernels larger than the 8x8 sub-kernel, a dilation, channel counts
    that are not multiples of the 32-deep IFM block or of the OFM block, a
    5x5 depthwise (elements padded to 4), and a linear as a 1x1 CONV."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 20, 9, padding=4)
        self.b = nn.Conv2d(20, 37, 3, padding=2, dilation=2, stride=2)
        self.dw = nn.Conv2d(37, 37, 5, padding=2, groups=37)
        self.c = nn.Conv2d(37, 70, 1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(70, 11)

    def forward(self, x):
        x = torch.relu(self.a(x))
        x = torch.relu(self.b(x))
        x = torch.clamp(self.dw(x), 0, 6)
        x = self.pool(torch.relu(self.c(x)))
        return self.fc(torch.flatten(x, 1))


def _compile_layers(accel):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 16, 16, generator=g),) for _ in range(8)]
    npu = Recorder(accel)
    res = compile_model(Layers().eval(), list(calib[0]), calib,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    return res, npu, calib


@pytest.mark.parametrize("accel", ["ethos-u55-128", "ethos-u55-32", "ethos-u65-256"])
def test_weights_and_records_decode_to_the_graph(tmp_path, accel):
    assert os.path.exists(DUMP), "build the host preset first (make host)"
    res, npu, _ = _compile_layers(accel)
    assert len(npu.blobs) == 1, [p.backend for p in res.lowered.placements]
    nodes, data = npu.blobs[0]
    blob = read_blob(data)
    (tmp_path / "cop.bin").write_bytes(blob.cmd_data)
    (tmp_path / "flash.bin").write_bytes(blob.weight_data)
    proc = subprocess.run([DUMP, accel, str(tmp_path / "cop.bin"), str(tmp_path / "flash.bin"),
                           str(blob.scratch_size), str(tmp_path / "ops.bin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    ops = read_dump(str(tmp_path / "ops.bin"))
    layers = [n for n in nodes if n.op in ("conv2d", "linear")]
    assert len(ops) == len(layers) == 5
    g = res.graph
    for op, n in zip(ops, layers):
        w = np.asarray(n.attrs["weight_q"], np.int16)
        if n.op == "linear":
            want = w.reshape(w.shape[0], 1, 1, w.shape[1])
        else:
            want = w.transpose(0, 2, 3, 1)              # OIHW -> OHWI (I = 1 for depthwise)
        assert op["kind"] == (3 if n.attrs.get("groups", 1) > 1 else 2)
        np.testing.assert_array_equal(op["weights"], want, err_msg=n.name)
        bias = n.attrs.get("bias_q")
        np.testing.assert_array_equal(op["records"]["bias"],
                                      np.zeros(len(want)) if bias is None else bias)
        # (M, s): from the scales by the formula of quant_math's docstring, here in floats
        s_in = g.node(n.inputs[0]).qparams[0]
        sig = s_in * np.broadcast_to(np.asarray(n.attrs["weight_scales"], np.float64),
                                     (len(want),)) / n.qparams[0]
        got = op["records"]["scale"].astype(np.float64) * 2.0 ** -op["records"]["shift"].astype(np.float64)
        np.testing.assert_allclose(got, sig, rtol=2 ** -30)
        assert np.all(op["records"]["scale"] >= 1 << 30)


# ---------------------------------------------------------------------------
# Average pool scale: exact for every sum

def test_average_scale_matches_round_half_away_for_every_sum():
    for count in list(range(1, 70)) + [96, 100, 121, 196, 225, 490, 1024, 2047]:
        m, s = average_scale(count)
        sums = np.arange(-128 * count, 127 * count + 1, dtype=object)
        for v in sums[:: max(1, len(sums) // 4000)].tolist() + [-128 * count, 127 * count]:
            p = v * m                                     # the NPU's DBL rule, in Python ints
            if s > 31:
                npu = (p + (1 << (s - 1)) + ((1 << 30) if p >= 0 else -(1 << 30))) >> s
            else:
                npu = (p + (1 << (s - 1))) >> s if s else p
            q, r = divmod(abs(v), count)
            cpu = (q + (1 if 2 * r >= count else 0)) * (1 if v >= 0 else -1)
            assert npu == cpu, (count, v)


# ---------------------------------------------------------------------------
# Zoo models: the NPU's bytes equal the CPU's

def _run(pte_path, inputs, tmp_path, tag, runner=PTEC_RUN):
    args = [runner, str(pte_path), "--output-dir", str(tmp_path / f"{tag}-out")]
    for i, x in enumerate(inputs):
        p = tmp_path / f"{tag}-in{i}.npy"
        np.save(p, x)
        args += ["--input", str(p)]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, f"{tag}: {proc.stderr}"
    out, i = [], 0
    while (tmp_path / f"{tag}-out" / f"output{i}.bin").exists():
        out.append((tmp_path / f"{tag}-out" / f"output{i}.bin").read_bytes())
        i += 1
    return out


def npu_runner(accel):
    """ptec-run for this NPU: build/host's when it drives it, else one built
    for it (scripts/npu_host_runner.sh, cached under build/npu-host)."""
    if accel == HOST_NPU:
        return PTEC_RUN
    proc = subprocess.run([os.path.join(ROOT, "scripts", "npu_host_runner.sh"), accel],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def lint_blobs(npu, fast=0):
    """Every stream the backend wrote, through the linter: no issue."""
    for nodes, data in npu.blobs:
        b = read_blob(data)
        regions = {0: len(b.weight_data), 1: b.scratch_size, **({2: fast} if fast else {})}
        issues = lint_cop(b.cmd_data, npu.cfg.name, regions)
        assert not issues, [f"{i.rule}: {i.message}" for i in issues[:5]]


def check_zoo_model(name, accel, tmp_path, inputs=3):
    m = load_model(name)
    calib = m.calibration(8)
    npu = Recorder(accel)
    backends = [npu, CortexMBackend(), PortableBackend()]
    cpu = "cortex-m33" if npu.cfg.is_u65 else "cortex-m55"
    res = compile_model(m.module, m.example_inputs, calib, target=cpu, int8_io=True,
                        backends=backends)
    ref = compile_model(m.module, m.example_inputs, calib, target=cpu, int8_io=True)
    assert res.lowered.delegates, placement_table(res, npu)
    lint_blobs(npu)
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    runner = npu_runner(accel)
    rng = np.random.default_rng(7)
    for k in range(inputs):
        xs = []
        for io, x in zip(res.lowered.inputs, calib[k]):
            q = np.clip(np.round(x.numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
            if k == inputs - 1:        # and one input of noise over the whole int8 range
                q = rng.integers(-128, 128, q.shape).astype(np.int8)
            xs.append(q)
        got = _run(tmp_path / "npu.pte", xs, tmp_path, f"npu{k}", runner)
        want = _run(tmp_path / "cpu.pte", xs, tmp_path, f"cpu{k}")
        assert got == want, f"{name} on {accel}: input {k}: NPU bytes differ from the CPU's"
    return res, npu


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_model_on_u55_equals_cpu_bytes(name, tmp_path):
    res, npu = check_zoo_model(name, "ethos-u55-128", tmp_path)
    if name in CNNS:
        g = res.graph
        total = sum(node_macs(g, g.node(p.node)) for p in res.lowered.placements)
        on_npu = sum(p.macs for p in npu.placements)
        assert on_npu >= 0.9 * total, "\n".join(placement_table(res, npu))


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_model_on_u65_equals_cpu_bytes(name, tmp_path):
    check_zoo_model(name, "ethos-u65-256", tmp_path, inputs=2)


@pytest.mark.parametrize("accel", [a for a in NPU_TARGETS if a != "ethos-u65-512"])
def test_every_stream_of_the_zoo_passes_the_linter(accel):
    for name in ZOO:
        m = load_model(name)
        npu = Recorder(accel)
        compile_model(m.module, m.example_inputs, m.calibration(4), int8_io=True,
                      backends=[npu, CortexMBackend(), PortableBackend()])
        assert npu.blobs, name
        lint_blobs(npu)


def test_dual_core_u65_512_is_refused_in_one_line():
    with pytest.raises(ValueError, match="dual-core"):
        EthosUBackend("ethos-u65-512")


# ---------------------------------------------------------------------------
# The report and the command line

def test_summary_and_placement_name_every_operator():
    res, npu, _ = _compile_layers("ethos-u55-128")
    summary = "\n".join(network_summary(res, npu, "cortex-m55"))
    assert "NPU operators = " in summary and "Neural network macs" in summary
    table = placement_table(res, npu)
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    assert len(table) == 1 + len(placed) + len(npu.delegates)
    assert any("NPU" in line and "conv2d" in line for line in table)


def test_refusals_name_the_reason():
    class Adds(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 4, 3, padding=1)
            self.g = nn.Conv2d(4, 8, 3, padding=1, groups=2)
            self.p = nn.AvgPool2d(3, 1, padding=1)

        def forward(self, x):
            y = self.a(x)
            return self.p(self.g(y - x))
    g = torch.Generator().manual_seed(2)
    calib = [(torch.randn(1, 4, 8, 8, generator=g),) for _ in range(4)]
    npu, backends = _backends("ethos-u55-128")
    res = compile_model(Adds().eval(), list(calib[0]), calib, backends=backends)
    why = {p.op: p.reason for p in res.lowered.placements}
    assert "no oracle" in why["sub"]
    assert "grouped convolution" in why["conv2d"] or "groups" in why["conv2d"]
    assert "padded average pool" in why["avg_pool2d"]
    for p in res.lowered.placements:
        assert "\n" not in p.reason


# ---------------------------------------------------------------------------
# The users' own example: torchvision MobileNet-V2 1.0, 224x224, on a U65

def test_torchvision_mobilenet_v2_runs_entirely_on_the_u65(tmp_path):
    """Every operator on the NPU in Shared_Sram, one delegate, and the
    delegate's bytes equal to the CPU program's. Random weights and inputs
    (no pretrained weights offline): placement and numerics do not depend
    on them. Vela reports 300,838,272 MACs for this network; ptec counts
    300,774,272, those of the convolutions and the classifier only (Vela's
    figure is 64,000 higher, 62,720 of them the 7x7x1280 average pool)."""
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(width_mult=1.0).eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(2)]
    npu = Recorder("ethos-u65-256")
    res = compile_model(model, list(calib[0]), calib, target="cortex-m33", int8_io=True,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    assert [p for p in placed if p.backend != npu.name] == [], "\n".join(placement_table(res, npu))
    assert len(npu.blobs) == 1
    assert sum(node_macs(res.graph, res.graph.node(p.node)) for p in placed) == 300_774_272
    lint_blobs(npu)
    ref = compile_model(model, list(calib[0]), calib, target="cortex-m33", int8_io=True)
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    io = res.lowered.inputs[0]
    x = np.clip(np.round(calib[1][0].numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
    got = _run(tmp_path / "npu.pte", [x], tmp_path, "npu", npu_runner("ethos-u65-256"))
    want = _run(tmp_path / "cpu.pte", [x], tmp_path, "cpu")
    assert got == want


def _cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run(["/usr/bin/python3", "-m", "ptec", *args], capture_output=True, text=True,
                          env=env, cwd=cwd)


def test_cli_compiles_for_the_npu_and_reports_the_placement(tmp_path):
    pte, txt, page = tmp_path / "d.pte", tmp_path / "d.txt", tmp_path / "d.html"
    p = _cli("compile", "digits_cnn", "--calib", "8", "--target", "ethos-u55-128", "-o", str(pte),
             "--placement", str(txt))
    assert p.returncode == 0, p.stderr
    assert "NPU operators = 6 (100.0%)" in p.stdout and "CPU" in p.stdout
    text = txt.read_text()
    for module in ("conv1 (nn.Conv2d)", "pool2 (nn.MaxPool2d)", "fc (nn.Linear)"):
        assert module in text
    p = _cli("report", str(pte), "--placement", str(txt), "-o", str(page))
    assert p.returncode == 0, p.stderr
    assert "Ethos-U placement" in page.read_text() and "conv1 (nn.Conv2d)" in page.read_text()
    missing, page2 = tmp_path / "none.txt", tmp_path / "d2.html"
    p = _cli("report", str(pte), "--placement", str(missing), "-o", str(page2))
    assert p.returncode == 2 and not page2.exists()
    assert p.stderr.strip() == f"ptec report: error: --placement {missing}: cannot read: No such file or directory"


@pytest.mark.parametrize("args, message", [
    (["--target", "ethos-u55-128", "--fast-scratch", "65536"], "add --memory-mode Dedicated_Sram"),
    (["--target", "ethos-u55-128", "--memory-mode", "Dedicated_Sram", "--fast-scratch", "100"],
     "Dedicated_Sram needs at least"),
    (["--target", "cortex-m55", "--cpu", "cortex-m33"], "go with an Ethos-U --target"),
    (["--target", "ethos-u65-512"], "dual-core"),
])
def test_cli_npu_errors_are_one_line_and_leave_no_file(tmp_path, args, message):
    out = tmp_path / "x.pte"
    p = _cli("compile", "digits_cnn", "--calib", "2", "-o", str(out), *args)
    assert p.returncode == 2
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not out.exists() and os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------
# Dedicated_Sram: weights DMA'd into the fast scratch, its size in the program

FAST = 8192          # small: the larger layers must be split to fit


@pytest.mark.parametrize("name", ["ds_cnn", "mobilenet_v2_035", "resnet8"])
def test_dedicated_sram_runs_with_the_fast_scratch_the_program_states(name, tmp_path):
    from ptec.pte.reader import parse_program
    from ptec.requirements import requirements
    m = load_model(name)
    calib = m.calibration(4)
    npu = Recorder(HOST_NPU, "Dedicated_Sram", FAST)
    res = compile_model(m.module, m.example_inputs, calib, int8_io=True,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    ref = compile_model(m.module, m.example_inputs, calib, int8_io=True)
    program = parse_program(res.data)
    stated = [int(dict((c.key, c.value) for c in d.compile_specs)["ptec_fast_scratch_bytes"])
              for d in program.execution_plan[0].delegates]
    assert all(0 < f <= FAST for f in stated)
    assert max(stated) == max(d["fast"] for d in npu.delegates)
    lint_blobs(npu, max(stated))
    # ptec inspect --requirements and the runtime (ptec-run) both report it before load
    want = (max(stated) + 15) // 16 * 16
    assert requirements(program, target="host").fast_scratch_bytes == want
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    io = res.lowered.inputs[0]
    x = np.clip(np.round(calib[0][0].numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
    assert _run(tmp_path / "npu.pte", [x], tmp_path, "npu") == _run(tmp_path / "cpu.pte", [x], tmp_path, "cpu")
    p = subprocess.run([PTEC_RUN, str(tmp_path / "npu.pte")], capture_output=True, text=True)
    assert f"fast scratch: {want} bytes" in p.stdout
    # given less than it states, the load fails naming why
    p = subprocess.run([PTEC_RUN, str(tmp_path / "npu.pte"), "--region", f"fast_scratch={want - 16}"],
                       capture_output=True, text=True)
    assert p.returncode != 0 and f"fast scratch buffer too small: need {want} bytes" in p.stderr, p.stderr


@pytest.mark.parametrize("value", [b"12a", b"4294967296", b"", b"-1"])
def test_a_fast_scratch_spec_that_is_no_byte_count_is_refused(value, tmp_path):
    from ptec.pte.reader import parse_program
    from ptec.pte.schema import CompileSpec
    from ptec.pte.writer import serialize_program
    res, npu, _ = _compile_layers(HOST_NPU)
    program = parse_program(res.data)
    d = program.execution_plan[0].delegates[0]
    d.compile_specs = list(d.compile_specs) + [CompileSpec("ptec_fast_scratch_bytes", value)]
    (tmp_path / "bad.pte").write_bytes(serialize_program(program))
    p = subprocess.run([PTEC_RUN, str(tmp_path / "bad.pte")], capture_output=True, text=True)
    assert p.returncode != 0
    assert "ptec_fast_scratch_bytes is not a decimal byte count" in p.stderr, p.stderr
    p = _cli("inspect", "--requirements", str(tmp_path / "bad.pte"))
    assert p.returncode == 2 and "ptec_fast_scratch_bytes" in p.stderr


# ---------------------------------------------------------------------------
# cat by addressing: copies into parts of the output

class Branches(nn.Module):
    """Inception-like: channel, height and width concatenations, and a
    flatten + cat of vectors."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(3, 5, 1)
        self.c = nn.Conv2d(13, 6, 3, padding=1)

    def forward(self, x):
        y = torch.cat([torch.relu(self.a(x)), torch.relu(self.b(x))], 1)
        z = self.c(y)
        return torch.cat([z, torch.relu(z)], 3), torch.cat([z, torch.clamp(z, 0, 1)], 2)


@pytest.mark.parametrize("accel", [HOST_NPU, "ethos-u65-256"])
def test_cat_runs_on_the_npu_with_the_cpu_bytes(accel, tmp_path):
    g = torch.Generator().manual_seed(4)
    calib = [(torch.randn(1, 3, 10, 12, generator=g),) for _ in range(8)]
    torch.manual_seed(0)
    model = Branches().eval()
    npu = Recorder(accel)
    res = compile_model(model, list(calib[0]), calib, int8_io=True,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    ref = compile_model(model, list(calib[0]), calib, int8_io=True)
    cats = [p for p in res.lowered.placements if p.op == "cat"]
    assert cats and all(p.backend == npu.name or "grid" in p.reason for p in cats), \
        "\n".join(placement_table(res, npu))
    assert any(p.backend == npu.name for p in cats)
    lint_blobs(npu)
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    io = res.lowered.inputs[0]
    for k in range(2):
        x = np.clip(np.round(calib[k][0].numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
        assert _run(tmp_path / "npu.pte", [x], tmp_path, f"npu{k}", npu_runner(accel)) == \
            _run(tmp_path / "cpu.pte", [x], tmp_path, f"cpu{k}")


@pytest.mark.parametrize("name, accel", [("mobilenet_v3_small", HOST_NPU),
                                         ("shufflenet_v2_x0_5", "ethos-u65-256")])
def test_torchvision_networks_on_the_npu_equal_the_cpu(name, accel, tmp_path):
    """MobileNet-V3 small (squeeze-excite: a per-channel broadcast mul;
    hardswish and hardsigmoid as LUTs) runs entirely on the NPU; ShuffleNet-V2
    (cat, channel shuffle, chunk) with its shuffles and slices on the CPU.
    Both give the CPU program's bytes."""
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 224, 224, generator=g),) for _ in range(3)]
    npu = Recorder(accel)
    res = compile_model(model, list(calib[0]), calib, int8_io=True,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    ref = compile_model(model, list(calib[0]), calib, int8_io=True)
    placed = [p for p in res.lowered.placements if p.backend != "none"]
    on_cpu = {p.op for p in placed if p.backend != npu.name}
    if name == "mobilenet_v3_small":
        assert not on_cpu, "\n".join(placement_table(res, npu))
    else:
        assert on_cpu <= {"channel_shuffle", "slice"}, on_cpu
    assert not res.lowered.fallbacks
    lint_blobs(npu)
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    io = res.lowered.inputs[0]
    x = np.clip(np.round(calib[2][0].numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
    assert _run(tmp_path / "npu.pte", [x], tmp_path, "npu", npu_runner(accel)) == \
        _run(tmp_path / "cpu.pte", [x], tmp_path, "cpu")


# ---------------------------------------------------------------------------
# Maps wider than one op can be (16-bit width registers): stripes side by side

class LongSignal(nn.Module):
    """Raw audio, 70,000 samples (over 4 s at 16 kHz): a Conv1d at stride 1
    makes a 70,000-wide map, which runs as stripes of at most 65,536."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 9, padding=4)
        self.dw = nn.Conv1d(8, 8, 5, padding=2, groups=8)
        self.pool = nn.MaxPool1d(4)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        y = torch.relu(self.dw(torch.relu(self.conv(x))) + self.conv(x))
        return self.fc(self.pool(y).mean(-1))


def test_wide_maps_run_in_stripes_with_the_cpu_bytes(tmp_path):
    g = torch.Generator().manual_seed(5)
    calib = [(torch.randn(1, 1, 70_000, generator=g),) for _ in range(3)]
    torch.manual_seed(0)
    model = LongSignal().eval()
    npu = Recorder(HOST_NPU)
    res = compile_model(model, list(calib[0]), calib, int8_io=True,
                        backends=[npu, CortexMBackend(), PortableBackend()])
    ref = compile_model(model, list(calib[0]), calib, int8_io=True)
    on_npu = {p.op for p in res.lowered.placements if p.backend == npu.name}
    assert "conv2d" in on_npu, "\n".join(placement_table(res, npu))
    lint_blobs(npu)
    from ptec.backends.ethos_u.command_stream import decode_stream, parse_cop
    widths = [c.param + 1 for _, data in npu.blobs
              for c in decode_stream(parse_cop(read_blob(data).cmd_data).stream)
              if c.name == "OFM_WIDTH_M1"]
    assert max(widths) <= 65_536 and any(a + b == 70_000 for a in widths for b in widths), sorted(set(widths))
    (tmp_path / "npu.pte").write_bytes(res.data)
    (tmp_path / "cpu.pte").write_bytes(ref.data)
    io = res.lowered.inputs[0]
    x = np.clip(np.round(calib[1][0].numpy() / io.scale) + io.zero_point, -128, 127).astype(np.int8)
    assert _run(tmp_path / "npu.pte", [x], tmp_path, "npu") == _run(tmp_path / "cpu.pte", [x], tmp_path, "cpu")


def test_the_compiler_lints_every_stream_it_writes(monkeypatch):
    """compile fails, naming the rule, when the linter finds anything in a
    stream it wrote (here a linter made to find a problem everywhere)."""
    import ptec.backends.ethos_u.backend as backend_module
    from ptec.backends.ethos_u.stream_lint import LintIssue
    from ptec.compiler import CompileError
    seen = []

    def finds(cop, accel, regions):
        seen.append((accel, sorted(regions)))
        return [LintIssue(3, 12, "dep-blockdep", "BLOCKDEP above the safe value")]
    monkeypatch.setattr(backend_module, "lint_cop", finds)
    with pytest.raises(CompileError, match="breaks rule dep-blockdep at command 3"):
        _compile_layers(HOST_NPU)
    assert seen == [(HOST_NPU, [0, 1])]


@pytest.mark.parametrize("hw, out, divides", [((8, 6), (4, 3), True), ((7, 6), (3, 3), False),
                                              ((8, 7), (2, 2), False)])
def test_an_adaptive_pool_goes_to_the_npu_only_where_its_windows_are_equal(hw, out, divides):
    """Capture expands a non-dividing adaptive pool to linears, but a graph
    made another way can still hold one: its windows differ in size, which
    one POOL cannot do, so it stays on the CPU with the reason."""
    from ptec.backends.ethos_u.npu_config import npu_config
    from ptec.backends.ethos_u.npu_ops import NotForNpu, npu_op
    from ptec.ir import Graph, Node
    x = Node("x", "input", shape=[1, 4, *hw], qparams=(0.05, 3))
    pool = Node("p", "adaptive_avg_pool2d", ["x"], dict(output_size=list(out)), shape=[1, 4, *out],
                qparams=(0.05, 3))
    g = Graph([x, pool], ["x"], ["p"])
    cfg = npu_config("ethos-u55-128")
    if divides:
        op = npu_op(g, pool, cfg)
        assert op.kernel == (hw[0] // out[0], hw[1] // out[1]) and (op.ofm_shape.h, op.ofm_shape.w) == out
    else:
        with pytest.raises(NotForNpu, match="does not divide"):
            npu_op(g, pool, cfg)
