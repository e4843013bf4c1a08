"""The AOT compiler: capture, quantize, lower, plan, emit, CLI."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from plan_check import check_plan
from ptec import quant_math as qm
from ptec.capture import capture
from ptec.compiler import CompileError, compile_model
from ptec.ir import evaluate
from ptec.models import ZOO, load_model
from ptec.ops import SIGNATURES, runtime_kernels
from ptec.plan import Buffer, liveness_lower_bound, plan_memory
from ptec.pte import Null, ScalarType, parse_program
from ptec.quantize import QuantConfig, prepare, quantize_graph, simulate

ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))


def compile_file(tmp_path, source: str, name: str = "m"):
    """`ptec compile` of a model file holding `source` (with a make() factory):
    (the finished process, the .pte path it was asked to write)."""
    src = tmp_path / f"{name}.py"
    src.write_text(source)
    out = tmp_path / f"{name}.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2",
                        "-o", str(out)], env=ENV, capture_output=True, text=True)
    return r, out


def _calls(program):
    plan = program.plan()
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        key = plan.operators[call.op_index].key
        names = [n for n, _ in SIGNATURES[key]]
        yield key, dict(zip(names, call.args)), plan


@pytest.fixture(scope="module")
def zoo_models():
    return {name: load_model(name) for name in ZOO}


@pytest.mark.parametrize("name", list(ZOO))
def test_capture_and_fold_match_pytorch(zoo_models, name):
    m = zoo_models[name]
    g = capture(m.module, m.example_inputs)
    x = m.calibration(2, 5)
    for inputs in x:
        ref = m.module(*inputs)
        assert torch.allclose(evaluate(g, inputs)[0], ref, atol=1e-5)
        assert torch.allclose(evaluate(prepare(g), inputs)[0], ref, atol=1e-4)
    ops = {n.op for n in prepare(g).nodes}
    assert "batch_norm" not in ops and "clamp" not in ops and "identity" not in ops


@pytest.mark.parametrize("name", list(ZOO))
@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_compile_zoo(zoo_models, name, target):
    m = zoo_models[name]
    res = compile_model(m.module, m.example_inputs, m.calibration(4), target=target)
    prog = parse_program(res.data)
    assert prog == res.program
    have = set(runtime_kernels())
    for key, a, plan in _calls(prog):
        assert key in have
        if key == "cortex_m::quantized_linear.out":
            bias, ksum = plan.values[a["bias"]].val, plan.values[a["kernel_sum"]].val
            if target == "cortex-m55":
                assert isinstance(bias, Null) and not isinstance(ksum, Null)
            else:
                assert isinstance(ksum, Null)
        if key == "cortex_m::quantized_avg_pool2d.out":
            c = plan.values[a["input"]].val.sizes[1]
            assert plan.values[a["scratch"]].val.sizes == [4 * c if target == "cortex-m33" else 0]
    check_plan(prog)
    mp = res.memory_plan
    assert mp.lower_bound <= mp.arena_bytes <= 1.1 * mp.lower_bound + 64
    # model I/O: float in (channels-last for images), float out
    x = prog.plan().values[prog.plan().inputs[0]].val
    assert x.scalar_type == ScalarType.FLOAT
    if len(x.sizes) == 4:
        assert list(x.dim_order) == [0, 2, 3, 1]


def test_fused_activation_ranges(zoo_models):
    """ReLU6 is fused: no clamp op remains, and each fused conv's activation
    range is [q(0), min(127, q(6))] in its output's quantized domain."""
    m = zoo_models["mobilenet_v2_035"]
    res = compile_model(m.module, m.example_inputs, m.calibration(2))
    q = res.graph
    assert all(n.op != "clamp" for n in q.nodes)
    fused = {n.qparams: n.attrs.get("act") for n in q.nodes if n.op == "conv2d"}
    assert (0.0, 6.0) in fused.values()
    checked = 0
    for key, a, plan in _calls(res.program):
        if key.endswith("conv2d.out"):
            out = plan.values[a["out"]].val
            zp = plan.values[a["output_offset"]].val.int_val
            lo = plan.values[a["activation_min"]].val.int_val
            hi = plan.values[a["activation_max"]].val.int_val
            assert -128 <= lo <= hi <= 127 and out.scalar_type == ScalarType.CHAR
            if lo > -128:
                assert lo == zp
            checked += 1
    assert checked == 52
    lo, hi = qm.activation_range(0.0, 6.0, 0.05, -128)
    assert (lo, hi) == (-128, -8)


def test_digits_accuracy_simulated(zoo_models):
    from ptec.models.digits import accuracy, digits_dataset
    m = zoo_models["digits_cnn"]
    _, _, xte, yte = digits_dataset()
    g = capture(m.module, m.example_inputs)
    float_acc = accuracy(m.module, xte, yte)
    assert float_acc > 0.93
    for cfg in (QuantConfig(), QuantConfig("percentile", 99.9)):
        q = quantize_graph(g, m.calibration(32), cfg)
        assert accuracy(lambda x: simulate(q, [x])[0], xte, yte) >= float_acc - 0.02


def test_int8_io(zoo_models):
    m = zoo_models["digits_cnn"]
    res = compile_model(m.module, m.example_inputs, m.calibration(4), int8_io=True)
    plan = res.program.plan()
    assert plan.values[plan.inputs[0]].val.scalar_type == ScalarType.CHAR
    assert plan.values[plan.outputs[0]].val.scalar_type == ScalarType.CHAR
    keys = [op.key for op in plan.operators]
    assert "cortex_m::quantize_per_tensor.out" not in keys
    assert res.lowered.inputs[0].scale > 0 and res.lowered.outputs[0].zero_point is not None


class _NeedsEmptyLike(nn.Module):
    # torch.empty_like: ptec has no kernel for it (its contents are undefined; torch.nextafter, the
    # example here before, runs since its fp32 kernel: test_float_bits.py)
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.empty_like(self.fc(x)) + x


def test_missing_kernel_fails_and_lists_ops():
    x = torch.randn(1, 4)
    with pytest.raises(CompileError, match=r"no kernel for empty_like \(torch.empty_like\)"):
        compile_model(_NeedsEmptyLike().eval(), [x], [(x,)])


def test_cli_missing_kernel_writes_no_file(tmp_path):
    r, out = compile_file(tmp_path, "import torch, torch.nn as nn\n"
                                    "class M(nn.Module):\n"
                                    "    input_shape = (1, 4)\n"
                                    "    def forward(self, x):\n"
                                    "        return torch.empty_like(x) + x + 1.0\n"
                                    "def make():\n    return M()\n")
    assert r.returncode != 0
    assert "no kernel for empty_like (torch.empty_like)" in r.stderr and "aten::" not in r.stderr, r.stderr
    assert not out.exists()


def test_cli_compile_with_header(tmp_path):
    src = tmp_path / "tiny.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "def make():\n"
                   "    torch.manual_seed(0)\n"
                   "    m = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(),\n"
                   "                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3),\n"
                   "                      nn.Softmax(dim=1))\n"
                   "    return m.eval(), torch.randn(1, 2, 6, 6)\n")
    out, hdr = tmp_path / "tiny.pte", tmp_path / "tiny_model.h"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "4",
                        "--target", "cortex-m33", "-o", str(out), "--header", str(hdr)],
                       env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "calibration 4/4" in r.stdout and "liveness lower bound" in r.stdout
    data = out.read_bytes()
    h = hdr.read_text()
    c = (tmp_path / "tiny_model.c").read_text()
    assert f"extern const uint8_t tiny_model_pte[{len(data)}];" in h
    assert "aligned(16)" in c and 'section(".ptec_model")' in c
    first = bytes(int(x, 16) for x in c.split("{", 1)[1].split(",")[:8])
    assert first == data[:8]
    prog = parse_program(data)
    keys = [op.key for op in prog.plan().operators]
    assert "cortex_m::softmax.out" in keys
    check_plan(prog)
    insp = subprocess.run([sys.executable, "-m", "ptec", "inspect", str(out)], env=ENV,
                          capture_output=True, text=True, check=True).stdout
    assert "cortex_m::softmax.out" in insp and "output_zero_point" in insp


def test_planner_on_known_case():
    # sizes round up to 16: a 112, b 64, c 112, d 16. Live sets: t0 {a,d} 128,
    # t1 {a,b,d} 192, t2 {b,c,d} 192, t3 {c,d} 128 -> bound 192.
    bufs = [Buffer("a", 100, 0, 1), Buffer("b", 50, 1, 2), Buffer("c", 100, 2, 3),
            Buffer("d", 10, 0, 3)]
    p = plan_memory(bufs)
    assert p.lower_bound == liveness_lower_bound(bufs) == 192
    assert p.arena_bytes == 192
    assert p.offsets == {"a": 0, "c": 0, "b": 112, "d": 176}


def test_percentile_observer_narrows_ranges(zoo_models):
    m = zoo_models["ds_cnn"]
    g = capture(m.module, m.example_inputs)
    calib = m.calibration(8)
    qa = quantize_graph(g, calib, QuantConfig("minmax"))
    qb = quantize_graph(g, calib, QuantConfig("percentile", 99.0))
    sa = [n.qparams[0] for n in qa.nodes]
    sb = [n.qparams[0] for n in qb.nodes]
    assert all(b <= a * 1.0001 for a, b in zip(sa, sb)) and sum(sb) < sum(sa)


def test_zoo_list_cli():
    out = subprocess.run([sys.executable, "-m", "ptec", "compile", "x", "--list"], env=ENV,
                         capture_output=True, text=True, check=True).stdout
    for name in ZOO:
        assert name in out


def test_bias_and_weight_quantization():
    from ptec.quantize import quantize_bias, quantize_weights, symmetric_weight_scales
    w = np.array([[1.0, -0.5], [0.0, 0.0], [0.25, 0.125]], np.float32)
    s = symmetric_weight_scales(w, per_channel=True)
    assert np.allclose(s, [1 / 127, 1.0, 0.25 / 127], rtol=1e-6)
    q = quantize_weights(w, s)
    assert q[0].tolist() == [127, -64] and q[1].tolist() == [0, 0] and q[2].tolist() == [127, 64]
    b = quantize_bias(np.array([0.5, 0.0, -1.0], np.float32), 0.1, s)
    assert b.dtype == np.int32 and b[0] == round(0.5 / (0.1 / 127))
    assert np.isclose(qm.activation_range(0.0, 6.0, 6.0 / 255, -128)[1], 127)


def test_cli_calibration_directory(tmp_path):
    calib = tmp_path / "calib"
    calib.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        np.save(calib / f"s{i}.npy", rng.normal(size=(1, 640)).astype(np.float32))
    out = tmp_path / "ae.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", "fc_autoencoder", "--calib",
                        str(calib), "--target", "cortex-m33", "--observer", "percentile",
                        "-o", str(out)], env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "calibrating on 3 samples (percentile)" in r.stdout
    assert "captured" in r.stdout and ("torch.fx" in r.stdout or "torch.export" in r.stdout)
    check_plan(parse_program(out.read_bytes()))


def test_export_front_end_when_available(zoo_models):
    """On torch >= 2.1 the torch.export front end must give the same graph
    semantics as fx (or fall back to fx); on 1.13 it is absent."""
    m = zoo_models["resnet8"]
    g = capture(m.module, m.example_inputs, method="auto")
    assert g.source in ("fx", "export")
    if not hasattr(torch, "export"):
        assert g.source == "fx"
        pytest.skip(f"torch {torch.__version__} has no torch.export: the fx front end was checked instead")
    x = m.calibration(1, 3)[0]
    assert torch.allclose(evaluate(g, x)[0], m.module(*x), atol=1e-5)


@pytest.mark.parametrize("name", ["digits_cnn", "resnet8"])
def test_compiled_file_agrees_with_flatc(zoo_models, name, tmp_path):
    from flatc_util import assert_same, flatc_json, have_flatc
    from ptec.pte.jsonview import to_flatc_json
    if not have_flatc():
        pytest.skip("flatc not installed")
    m = zoo_models[name]
    res = compile_model(m.module, m.example_inputs, m.calibration(2), target="cortex-m33")
    path = tmp_path / f"{name}.pte"
    path.write_bytes(res.data)
    assert_same(to_flatc_json(parse_program(res.data)), flatc_json(str(path)))


def test_cli_kernel_list(tmp_path):
    from ptec.ops import kernel_symbols
    out, defs = tmp_path / "d.pte", tmp_path / "d.def"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", "digits_cnn", "--calib", "2",
                        "-o", str(out), "--kernel-list", str(defs)], env=ENV,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    listed = re.findall(r"^PTEC_KERNEL\((\w+)\)", defs.read_text(), re.M)
    keys = {op.key for op in parse_program(out.read_bytes()).plan().operators}
    symbols = kernel_symbols()
    assert sorted(listed) == sorted(symbols[k] for k in keys)


def test_cli_sort_names_the_missing_operator_and_writes_no_file(tmp_path):
    """The issue's example was torch.sort, which runs now (capture_sort);
    torch.empty_like has no kernel (torch.frexp, the example before, runs since its fp32 kernel):
    compile says so and writes nothing."""
    src = tmp_path / "sorter.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    input_shape = (1, 8)\n"
                   "    def forward(self, x):\n"
                   "        return torch.empty_like(x) * 2.0\n"
                   "def make():\n    return M()\n")
    out = tmp_path / "sorter.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2",
                        "-o", str(out)], env=ENV, capture_output=True, text=True)
    assert r.returncode == 2
    assert "ptec has no kernel for empty_like (torch.empty_like)" in r.stderr and "aten::" not in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_errors_name_the_pytorch_module_path(tmp_path):
    """What ptec cannot compile is named as the model names it, by module
    path and class, never by a made-up ATen name. (Every torch.nn layer
    runs, unbatched ones too: the refused submodule is the model's own, a
    branch on its input's values, which no program of one fixed path holds.)"""
    r, out = compile_file(tmp_path, "import torch, torch.nn as nn\n"
                                    "class Gate(nn.Module):\n"
                                    "    def forward(self, x):\n"
                                    "        return x if x.sum() > 0 else -x\n"
                                    "class M(nn.Module):\n"
                                    "    input_shape = (2, 6)\n"
                                    "    def __init__(self):\n"
                                    "        super().__init__()\n"
                                    "        self.features = nn.Sequential(nn.ReLU(), nn.Identity(), nn.Tanh(), Gate())\n"
                                    "    def forward(self, x):\n"
                                    "        return self.features(x)\n"
                                    "def make():\n    return M()\n", "nested")
    assert r.returncode == 2, r.stderr
    assert "features.3 (Gate)" in r.stderr and "aten::" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


def test_long_models_show_lowering_progress():
    """Calibration and, on models of many nodes, lowering print progress."""
    from ptec.compiler import LONG_MODEL_NODES, compile_model
    model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(LONG_MODEL_NODES)]).eval()
    calib = [(torch.randn(1, 8),) for _ in range(4)]
    lines = []
    compile_model(model, list(calib[0]), calib, log=lines.append)
    calibration = [s for s in lines if s.startswith("calibration ")]
    lowering = [s for s in lines if s.startswith("lowering ")]
    assert calibration[-1] == "calibration 4/4", lines
    assert len(lowering) >= 4 and lowering[-1].startswith("lowering ") and \
        lowering[-1].split()[1].split("/")[0] == lowering[-1].split()[1].split("/")[1], lowering


def test_a_rank_the_runtime_cannot_hold_is_refused_at_compile():
    """Rank 17 and above: refused naming the layer (the runtime would
    refuse the program at load, "tensor rank above 16"); rank 16 compiles
    and loads."""
    class View(nn.Module):
        def __init__(self, rank):
            super().__init__()
            self.rank = rank

        def forward(self, x):
            return x.reshape([1] * (self.rank - 3) + [2, 2, 2]) * 2
    x = torch.randn(8)
    with pytest.raises(CompileError, match=r"^operator not supported: reshape \(Tensor.reshape\) gives a tensor of "
                                          r"rank 17; ptec's runtime holds tensors of rank 16 at most$"):
        compile_model(View(17).eval(), [x], [(x,)])
    from ptec import host_runtime
    res = compile_model(View(16).eval(), [x], [(x,)])
    got = host_runtime.run(parse_program(res.data), res.data, [x.numpy()])[0]
    assert got.shape == (1,) * 13 + (2, 2, 2)
