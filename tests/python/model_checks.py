"""Checks the operator-coverage tests share (test_conv1d, test_layer_norm,
test_upsample, test_stateful, test_svdf): a compiled model gives the numpy
reference interpreter's bytes on the host runtime and on an emulated board
(one input, or a stream of chunks), and its distance to PyTorch float in
output steps."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT
from ptec import host_runtime
from ptec.interpreter import Session, run_program
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program



class Call(torch.nn.Module):
    """A model whose forward is fn(x): one call, method or chain under test."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Conv(torch.nn.Module):
    """fn(y) on y = conv(x): a seeded Conv2d(3, 4, 3, padding=1) whose output
    is the value under test (a layer's output, not the program's input)."""

    def __init__(self, fn):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.conv(x))


def worst_steps_compiled(model, calib, feeds):
    """Compile `model` calibrated on `calib` (its first feed the example), run
    each of `feeds` on the host runtime: the worst |ptec - torch float| of the
    first output, in its output steps, and the compile's result."""
    from ptec.compiler import compile_model
    res = compile_model(model, list(calib[0]), calib)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for ins in feeds:
        got = host_runtime.run(prog, res.data, [t.numpy() for t in ins])[0]
        with torch.no_grad():
            want = model(*ins).numpy()
        worst = max(worst, float(np.abs(got - want).max()) / step)
    return worst, res


def stream_worst_steps(model, cal, xs, checked=8):
    """Compile a copy of `model` calibrated on `cal`, run `xs` as one stream
    on the host runtime (states carried), check its first `checked` outputs
    against the Python reference, and measure every output against a twin of
    the torch model stepped through the same inputs: the worst error in output
    steps, and the compile's result."""
    import copy
    from ptec.compiler import compile_model
    res = compile_model(copy.deepcopy(model), [cal[0]], [(x,) for x in cal])
    prog = parse_program(res.data)
    got = [o[0] for o in host_runtime.run_stream(prog, res.data, [[x.numpy()] for x in xs])]
    session = Session(prog)
    for x, o in zip(xs[:checked], got):
        # (fp32 exp / sin: the reference's numpy and the runtime's libm may differ in the last ulp)
        assert np.allclose(session.run([x.numpy()])[0], o, rtol=1e-6, atol=1e-6)
    twin = copy.deepcopy(model)
    with torch.no_grad():
        want = [twin(x).numpy() for x in xs]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    return max(float(np.abs(o - w).max()) for o, w in zip(got, want)) / step, res


def run_feed(res, feed, tmp_path):
    """ptec-run's outputs of compiled program `res` on tensors `feed`."""
    return host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed], workdir=str(tmp_path))


def steps_over_feeds(model, res, feeds, tmp_path=None):
    """Compiled program `res` on the host runtime against torch's `model` on
    each feed (lists of tensors): the worst |ptec - torch| of the first
    output in steps of its span over the feeds / 255, and torch's outputs."""
    prog = parse_program(res.data)
    extra = {} if tmp_path is None else dict(workdir=str(tmp_path))
    gots, wants = [], []
    for feed in feeds:
        got = host_runtime.run(prog, res.data, [t.numpy() for t in feed], **extra)
        with torch.no_grad():
            want = model(*[t.clone() for t in feed])
        gots.append(np.asarray(got[0], np.float64))
        wants.append(want.detach().numpy().astype(np.float64))
    w = np.stack(wants)
    step = float(np.ptp(w)) / 255
    assert step > 0, "outputs that vary"
    return float(np.abs(np.stack(gots) - w).max()) / step, w


def exact_runs(model, feeds, tmp_path):
    """Compile model on feeds (all int8, no fp32 fallback) and run each feed on
    the host: [(program outputs, torch's outputs as a tuple)], after the host's
    bytes are checked against the reference interpreter's."""
    from ptec.compiler import compile_model
    res = compile_model(model, list(feeds[0]), feeds)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    runs = []
    for feed in feeds:
        arrays = [t.numpy() for t in feed]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
        assert [np.asarray(g).tobytes() for g in got] == [np.asarray(w).tobytes() for w in run_program(prog, arrays)]
        with torch.no_grad():
            want = model(*feed)
        runs.append((got, want if isinstance(want, tuple) else (want,)))
    return res, runs


def runner_elf(target):
    return os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")


def hex_outputs(text, label):
    """The bytes the runner printed as `@<label> <offset> <hex>` lines."""
    buf = bytearray()
    for m in re.finditer(rf"^@{re.escape(label)} ([0-9a-f]+) ([0-9a-f]*)$", text, re.M):
        assert int(m.group(1), 16) == len(buf)
        buf += bytes.fromhex(m.group(2))
    return bytes(buf)


def board_streams_reference(data: bytes, chunks, target: str, workdir, random: bool = False) -> None:
    """The runner's batch mode keeps the method loaded, so the chunks (float
    tensors, or int8 for an int8 input) are one stream: each block's output
    bytes are the reference Session's streamed ones, and after the batch the
    runner resets the state and block 0 repeats. random: the program draws
    random numbers (ptec.random_layers), whose generators a reset leaves
    going, so the rerun of block 0 is the stream's next execute."""
    if shutil.which("qemu-system-arm") is None or not os.path.exists(runner_elf(target)):
        pytest.skip(f"no QEMU or no runner firmware for {target} (build the {target} preset)")
    prog = parse_program(data)
    session = Session(prog)
    t_in, t_out = (prog.plan().values[prog.plan().inputs[0]].val, prog.plan().values[prog.plan().outputs[0]].val)
    in_dtype = NUMPY_DTYPE[ScalarType(t_in.scalar_type)]

    def physical(a, t):
        return np.ascontiguousarray(np.asarray(a).transpose(list(t.dim_order))).tobytes()
    want = [physical(session.run([c.numpy()])[0], t_out) for c in chunks]
    rerun = physical(session.run([chunks[0].numpy()])[0], t_out) if random else want[0]
    (workdir / "m.pte").write_bytes(data)
    (workdir / "in.bin").write_bytes(b"".join(np.ascontiguousarray(c.numpy().transpose(list(t_in.dim_order)),
                                                                   in_dtype).tobytes() for c in chunks))
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target,
                          "--elf", runner_elf(target), "--model", str(workdir / "m.pte"),
                          "--input", str(workdir / "in.bin"), "--timeout", "300"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout[-3000:]
    for k, block in enumerate(want):
        assert hex_outputs(run.stdout, f"b{k}.out0") == block, (k, run.stdout[-3000:])
    assert hex_outputs(run.stdout, "reset.out0") == rerun


def smooth_images(n, seed):
    """n [1, 3, 16, 16] smooth images with noise, each a 1-tuple:
    calibration-like inputs whose outputs vary (test_a16, test_w4)."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    out = []
    for i in range(n):
        f = torch.rand(3, 1, 1, generator=g) * 0.6 + 0.2
        base = torch.sin(xx * f + i) * torch.cos(yy * f * 0.7)
        out.append(((base + 0.3 * torch.randn(3, 16, 16, generator=g))[None],))
    return out


def host_steps_from_float(model, res, inputs, workdir) -> float:
    """The largest |ptec - float| in output steps over `inputs`, after
    checking that ptec-run gives the reference interpreter's bytes for each."""
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for (x,) in inputs:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(workdir))[0]
        assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
        with torch.no_grad():
            worst = max(worst, float(np.abs(got - model(x).numpy()).max() / step))
    print(f"worst |ptec - float|: {worst:.2f} output steps")
    return worst


def board_matches_reference(data: bytes, x: np.ndarray, target: str, workdir) -> None:
    """The program runs in `target`'s runner firmware under QEMU and prints
    the reference interpreter's output bytes for input x."""
    elf = runner_elf(target)
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target}")
    prog = parse_program(data)
    plan = prog.plan()
    t_in, t_out = plan.values[plan.inputs[0]].val, plan.values[plan.outputs[0]].val
    want = run_program(prog, [x])[0]
    (workdir / "m.pte").write_bytes(data)
    # the input in its tensor's dtype: float32, or int64 token ids (nn.Embedding)
    in_dtype = NUMPY_DTYPE[ScalarType(t_in.scalar_type)]
    (workdir / "in.bin").write_bytes(np.ascontiguousarray(x.transpose(list(t_in.dim_order)), in_dtype).tobytes())
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf,
                          "--model", str(workdir / "m.pte"), "--input", str(workdir / "in.bin"),
                          "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    hex_bytes = "".join(line.split()[2] for line in run.stdout.splitlines() if line.startswith("@out0 "))
    assert bytes.fromhex(hex_bytes) == np.ascontiguousarray(want.transpose(list(t_out.dim_order))).tobytes(), \
        run.stdout[-2000:]


def cli_refusal(tmp_path, source: str) -> str:
    """`python3 -m ptec compile` of models.py (source, with a factory
    `model()` returning the module and its example inputs): asserts exit
    status 2, one line on stderr and no output file; returns that line."""
    import sys
    (tmp_path / "models.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/models.py:model", "-o",
                        str(tmp_path / "m.pte")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and not (tmp_path / "m.pte").exists(), r.stderr
    return lines[0]
