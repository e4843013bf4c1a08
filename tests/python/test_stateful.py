"""--stateful recurrent layers (issue 15, "Sequence models"): the hidden
state of each nn.GRU (and the hidden and cell state of each nn.LSTM) lives in
a planned tensor with an initial value (the .pte's mutable data, zero),
read at the start of an execute and written back at its end, so a long
sequence streams through the program in chunks. A GRU's h (and an
unrolled LSTM's h and c) is a float32 tensor, its hidden steps fp32
(capture_state_precision; test_stateful_precision measures the drift). An
nn.LSTM layer stays one ptec::quantized_lstm whose initial_hidden (int8)
and initial_cell (int16) are those state tensors (the kernel reads and
overwrites them); with --unrolled-lstm it is unrolled with state nodes.

Oracles, none sharing code with what they check:
  - PyTorch: nn.GRU fed the whole sequence equals nn.GRU fed the chunks with
    its hidden state carried (float, exact up to rounding); the compiled
    program streamed chunk by chunk is close to the latter (cosine >= 0.99
    per chunk);
  - the numpy int8 reference (ptec.interpreter.Session, which keeps the
    planned memory across runs) streamed the same way gives the bytes the C
    runtime gives on the host (ptec-run --steps) and on the emulated boards
    (the runner's batch mode keeps the method loaded: a stream);
  - a reset (ptec_method_reset_state; the boards' runner resets before its
    profiled rerun of block 0) gives the first chunk's output again, while
    the same chunk without a reset gives another one (the state is used)."""
import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.capture_modules import with_traceable_modules
from ptec.compiler import compile_model
from ptec.interpreter import Session, run_program
from ptec.pte import parse_program

from model_checks import board_streams_reference
from runtime_util import ROOT

STEPS, FEATURES, HIDDEN, CLASSES, CHUNKS = 12, 10, 24, 6, 5


class Spotter(nn.Module):
    """A keyword spotter's back end: a recurrent layer, its last output, a classifier."""

    def __init__(self, kind="gru", layers=1):
        super().__init__()
        self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(FEATURES, HIDDEN, num_layers=layers,
                                                         batch_first=True)
        self.fc = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, STEPS, FEATURES, generator=g),) for _ in range(16)]


def _stream():
    """A long calibration-like sequence, cut into CHUNKS chunks of STEPS."""
    g = torch.Generator().manual_seed(7)
    long = torch.randn(1, STEPS * CHUNKS, FEATURES, generator=g)
    return long, [long[:, k * STEPS:(k + 1) * STEPS] for k in range(CHUNKS)]


def _float_streamed(model, chunks):
    """nn.GRU / nn.LSTM with its state carried from chunk to chunk."""
    outs, state = [], None
    with torch.no_grad():
        for c in chunks:
            y, state = model.rnn(c, state)
            outs.append(model.fc(y[:, -1]).numpy())
    return outs


def _cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


_COMPILED = {}


def _compiled(kind, layers=1, target="cortex-m55"):
    """kind "lstm": each layer one ptec::quantized_lstm with state tensors;
    "lstm-unrolled" (--unrolled-lstm): the per-step ops with state nodes."""
    key = (kind, layers, target)
    if key not in _COMPILED:
        torch.manual_seed(0)
        model = Spotter(kind.split("-")[0], layers).eval()
        calib = _calib()
        res = compile_model(model, [calib[0][0]], calib, target=target, stateful=True,
                            unrolled_lstm=kind == "lstm-unrolled")
        _COMPILED[key] = (model, res)
    return _COMPILED[key]


def _lstm_calls(prog):
    """The ptec::quantized_lstm calls: (initial_hidden, initial_cell) value
    indices of each (-1 for None)."""
    from ptec.interpreter import SIGNATURES
    plan = prog.plan()
    key = "ptec::quantized_lstm.out"
    names = [p for p, _ in SIGNATURES[key]]
    calls = []
    for ins in plan.chains[0].instructions:
        call = ins.instr_args
        if plan.operators[call.op_index].key == key:
            named = dict(zip(names, call.args))
            calls.append(tuple(named[p] if type(plan.values[named[p]].val).__name__ == "Tensor" else -1
                               for p in ("initial_hidden", "initial_cell")))
    return calls


def test_the_float_oracle_streams():
    """The oracle itself: whole sequence == chunks with the state carried, in
    PyTorch; and the stateful stand-in, run eagerly, carries its state too."""
    torch.manual_seed(0)
    model = Spotter("gru").eval()
    long, chunks = _stream()
    with torch.no_grad():
        y_all, _ = model.rnn(long)
        h, ys = None, []
        for c in chunks:
            y, h = model.rnn(c, h)
            ys.append(y)
        assert torch.allclose(torch.cat(ys, 1), y_all, atol=1e-6)
        stand_in = with_traceable_modules(model, [chunks[0]], stateful=True)
        for c, want in zip(chunks, _float_streamed(model, chunks)):
            assert np.allclose(stand_in(c).numpy(), want, atol=1e-5)


@pytest.mark.parametrize("kind, layers", [("gru", 1), ("gru", 2), ("lstm", 1), ("lstm", 2),
                                          ("lstm-unrolled", 1)])
def test_streaming_matches_reference_and_pytorch(kind, layers, tmp_path):
    model, res = _compiled(kind, layers)
    prog = parse_program(res.data)
    plan = prog.plan()
    states = [i for i, v in enumerate(plan.values)
              if type(v.val).__name__ == "Tensor" and v.val.has_initial_value]
    assert len(states) == layers * (2 if kind.startswith("lstm") else 1)
    calls = _lstm_calls(prog)
    if kind == "lstm":
        # the native kernel, one call per layer, its h and c the state tensors
        # (int8 and int16 [1, HIDDEN]; h starts at the output's zero point)
        assert len(calls) == layers and sorted(i for c in calls for i in c) == sorted(states), calls
        for h, c in calls:
            th, tc = plan.values[h].val, plan.values[c].val
            assert list(th.sizes) == list(tc.sizes) == [1, HIDDEN]
            assert (int(th.scalar_type), int(tc.scalar_type)) == (1, 2)
            assert prog.initial_bytes(tc) == bytes(2 * HIDDEN)
            assert len(set(prog.initial_bytes(th))) == 1
        assert not any(n.op == "state" for n in res.graph.nodes)
    else:
        assert calls == []
    _, chunks = _stream()
    # The int8 reference, streamed; then the C runtime on the host, streamed,
    # and reset before a last step that repeats chunk 0.
    session = Session(prog)
    want = [session.run([c.numpy()])[0] for c in chunks]
    session.reset()
    want_after_reset = session.run([chunks[0].numpy()])[0]
    got = host_runtime.run_stream(prog, res.data, [[c.numpy()] for c in chunks + [chunks[0]]],
                                  reset_before=[CHUNKS], workdir=str(tmp_path))
    for k in range(CHUNKS):
        assert np.asarray(got[k][0]).tobytes() == np.asarray(want[k]).tobytes(), k
    assert np.asarray(got[CHUNKS][0]).tobytes() == np.asarray(want[0]).tobytes()
    assert np.asarray(want_after_reset).tobytes() == np.asarray(want[0]).tobytes()
    # One run after load is the first chunk of the stream.
    once = host_runtime.run(prog, res.data, [chunks[0].numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(once).tobytes() == np.asarray(want[0]).tobytes()
    assert np.asarray(run_program(prog, [chunks[0].numpy()])[0]).tobytes() == np.asarray(want[0]).tobytes()
    # The state is used: after a run it holds other bytes than its initial
    # value, and (GRU: its state decays slowly enough to show in 12 steps)
    # some chunk run mid-stream gives another output than run after load.
    for i in states:
        t = plan.values[i].val
        assert bytes(session.memory.buffer(i, t)) != prog.initial_bytes(t)
    if kind in ("gru", "lstm"):
        fresh = [run_program(prog, [c.numpy()])[0] for c in chunks]
        assert any(np.asarray(got[k][0]).tobytes() != np.asarray(fresh[k]).tobytes()
                   for k in range(1, CHUNKS))
    # Close to PyTorch with the state carried, chunk after chunk.
    ref = _float_streamed(model, chunks)
    for k in range(CHUNKS):
        assert _cosine(got[k][0], ref[k]) >= 0.99, (k, _cosine(got[k][0], ref[k]))


def test_state_is_planned_alone_with_a_zero_initial_value():
    """Each state's bytes overlap no other planned tensor (its lifetime is the
    whole run), its initial value is zero (a GRU's h is a float32 tensor:
    its hidden steps run in fp32, capture_state_precision; an int8 state's
    would be its zero point's bytes), and the write-back is the last
    instruction that touches it."""
    _, res = _compiled("gru")
    prog = parse_program(res.data)
    plan = prog.plan()
    tensors = [(i, v.val) for i, v in enumerate(plan.values) if type(v.val).__name__ == "Tensor"]
    states = [(i, t) for i, t in tensors if t.has_initial_value]
    graph_states = [n for n in res.graph.nodes if n.op == "state"]
    assert len(states) == len(graph_states) == 1
    i, s = states[0]
    lo = s.allocation_info.offset
    hi = lo + s.nbytes
    for j, t in tensors:
        if j == i or t.allocation_info is None or t.nbytes == 0:
            continue
        o = t.allocation_info.offset
        assert o + t.nbytes <= lo or hi <= o, (i, j)
    assert graph_states[0].attrs.get("fp32_state") and int(s.scalar_type) == 6     # float32
    assert prog.initial_bytes(s) == np.zeros(s.numel, np.float32).tobytes()
    instrs = plan.chains[0].instructions
    touching = [k for k, ins in enumerate(instrs) if i in (ins.instr_args.args or [])]
    last = instrs[touching[-1]].instr_args
    assert plan.operators[last.op_index].key == "aten::view_copy.out"
    assert last.args[-2] == i     # view_copy(self, size, out, <return>): the state is out


@pytest.mark.parametrize("kind", ["gru", "lstm", "lstm-unrolled"])
@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_streaming_on_the_boards(target, kind, tmp_path):
    """The runner's batch mode keeps the method loaded: K blocks are a stream
    of K chunks. Each block's output bytes are the reference's streamed; after
    the batch the runner resets the state and reruns block 0."""
    _, res = _compiled(kind, 1, target)
    assert len(_lstm_calls(parse_program(res.data))) == (kind == "lstm")
    board_streams_reference(res.data, _stream()[1], target, tmp_path)


def test_stateful_cli(tmp_path):
    """`ptec compile --stateful` writes a program with state; without a
    recurrent layer, or for the NPU, it is refused in one line (exit 2)."""
    import sys
    model_py = tmp_path / "spotter.py"
    model_py.write_text(
        "import torch, torch.nn as nn\n"
        "class Spotter(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        f"        self.rnn = nn.GRU({FEATURES}, {HIDDEN}, batch_first=True)\n"
        f"        self.fc = nn.Linear({HIDDEN}, {CLASSES})\n"
        "    def forward(self, x):\n"
        "        return self.fc(self.rnn(x)[0][:, -1])\n"
        "def build():\n"
        f"    return Spotter().eval(), (torch.randn(1, {STEPS}, {FEATURES}),)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))

    def compile_(*extra):
        return subprocess.run([sys.executable, "-m", "ptec", "compile", *extra],
                              capture_output=True, text=True, env=env, cwd=str(tmp_path))
    out = tmp_path / "s.pte"
    r = compile_(f"{model_py}:build", "-o", str(out), "--stateful", "--calib", "4")
    assert r.returncode == 0, r.stderr
    prog = parse_program(out.read_bytes())
    assert sum(1 for v in prog.plan().values
               if type(v.val).__name__ == "Tensor" and v.val.has_initial_value) == 1
    r = compile_(f"{model_py}:build", "-o", str(tmp_path / "n.pte"), "--stateful", "--target", "ethos-u55-128")
    assert r.returncode == 2 and "--stateful" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_stateful_without_a_recurrent_layer_is_refused():
    class Plain(nn.Module):
        def forward(self, x):
            return x * 2
    x = torch.randn(1, 4)
    with pytest.raises(CaptureError, match="--stateful") as e:
        compile_model(Plain().eval(), [x], [(x,)], stateful=True)
    assert "\n" not in str(e.value)
