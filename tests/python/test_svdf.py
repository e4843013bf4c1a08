"""SVDF layers (issue 15, "Sequence models"): ptec.nn.SVDF computes TFLite's
SVDF in float; compile captures it as one layer and lowers it to
ptec::quantized_svdf (CMSIS-NN arm_svdf_s8's numerics: int8 state, int8
time weights). A keyword-spotter-like model (Conv1d front end, two SVDF
layers, linear head) runs byte-identical to the numpy reference interpreter
on the host and on the emulated M55 and M33, and close to PyTorch float."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference, board_streams_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.nn import SVDF
from ptec.pte import parse_program
from ptec.reference import cortex_m as ref


def tflite_svdf(x, wf, wt, bias, rank, relu):
    """TFLite's SVDF step by step (float64, batch 1, zero initial state):
    the state [rows, memory] shifts one column left, the newest column
    (memory - 1) takes weights_feature @ x_t, each row's dot with its
    weights_time row is summed over the unit's rank rows, plus the bias."""
    rows, memory = wt.shape
    units = rows // rank
    state = np.zeros((rows, memory))
    out = []
    for frame in x:
        state[:, :-1] = state[:, 1:].copy()
        state[:, -1] = wf @ frame
        per_row = (state * wt).sum(axis=1)
        y = np.array([per_row[u * rank:(u + 1) * rank].sum() for u in range(units)])
        y = y + (0.0 if bias is None else bias)
        out.append(np.maximum(y, 0.0) if relu else y)
    return np.array(out)


@pytest.mark.parametrize("rank,memory,relu,bias,steps", [(1, 4, False, True, 9), (3, 5, True, True, 7),
                                                          (2, 10, False, False, 4), (2, 1, True, True, 3)])
def test_float_layer_is_tflites_svdf(rank, memory, relu, bias, steps):
    torch.manual_seed(rank * 10 + memory)
    layer = SVDF(6, 5, rank, memory, activation="relu" if relu else None, bias=bias)
    if bias:
        nn.init.normal_(layer.bias)
    x = torch.randn(1, steps, 6)
    with torch.no_grad():
        got = layer(x)[0].double().numpy()
    d = lambda t: t.detach().double().numpy()
    want = tflite_svdf(d(x[0]), d(layer.weights_feature), d(layer.weights_time),
                       d(layer.bias) if bias else None, rank, relu)
    assert got.shape == (steps, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_layer_refuses_bad_arguments():
    with pytest.raises(ValueError, match="rank"):
        SVDF(4, 3, 0, 2)
    with pytest.raises(ValueError, match="activation"):
        SVDF(4, 3, 1, 2, activation="tanh")
    with pytest.raises(ValueError, match=r"\[1, T, 4\]"):
        SVDF(4, 3, 1, 2)(torch.zeros(2, 5, 4))


def test_reference_carries_state_between_calls():
    """reset_state=False (streaming): two calls over halves of a sequence,
    the state carried from the first, give the whole sequence's output."""
    rng = np.random.default_rng(1)
    wf = rng.integers(-127, 128, (6, 5)).astype(np.int8)
    wt = rng.integers(-127, 128, (6, 4)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 3).astype(np.int32)
    x = rng.integers(-128, 128, (8, 5)).astype(np.int8)
    q = (2, 3, 1 << 30, -6, 4, 1 << 30, -9, -128, 127)
    whole, _ = ref.svdf_frames(x, wf, wt, bias, np.zeros((6, 4), np.int8), *q)
    first, state = ref.svdf_frames(x[:3], wf, wt, bias, np.zeros((6, 4), np.int8), *q)
    second = ref.quantized_svdf(x[3:], wf, wt, bias, state, *q, False)
    assert np.array_equal(np.concatenate([first, second]), whole)
    assert not np.array_equal(ref.quantized_svdf(x[3:], wf, wt, bias, state, *q, True), second)


class Spotter(nn.Module):
    """A keyword spotter's shape: 10 features per frame, a Conv1d front end,
    two SVDF layers (rank 2 then 1), a linear head over every frame."""

    def __init__(self):
        super().__init__()
        self.front = nn.Conv1d(10, 24, 3, padding=1)
        self.svdf1 = SVDF(24, 32, 2, 8, activation="relu")
        self.svdf2 = SVDF(32, 16, 1, 6, activation="relu")
        self.head = nn.Linear(16, 6)

    def forward(self, x):                       # x [1, 10, T]
        h = torch.relu(self.front(x)).transpose(1, 2)
        return self.head(self.svdf2(self.svdf1(h)))


def features(n, seed, frames=20):
    """Calibration-like inputs: smooth per-band envelopes plus noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(float(frames))
    out = []
    for i in range(n):
        f = torch.rand(10, 1, generator=g) * 0.5 + 0.1
        base = torch.sin(t[None] * f + i)
        out.append(((base + 0.4 * torch.randn(10, frames, generator=g))[None],))
    return out


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(5)
    m = Spotter().eval()
    with torch.no_grad():
        for layer in (m.svdf1, m.svdf2):
            layer.bias.normal_(0.0, 0.1)
    return m


@pytest.fixture(scope="module")
def compiled(model):
    return compile_model(model, [features(1, 0)[0][0]], features(24, 0))


def test_each_svdf_is_one_kernel_call(compiled):
    svdf = [n for n in compiled.graph.nodes if n.op == "svdf"]
    assert len(svdf) == 2
    prog = parse_program(compiled.data)
    plan = prog.plan()
    keys = [plan.operators[i.instr_args.op_index].key for i in plan.chains[0].instructions]
    assert keys.count("ptec::quantized_svdf.out") == 2, keys
    for n in svdf:
        assert np.abs(n.attrs["weights_feature_q"]).max() == 127
        assert np.abs(n.attrs["weights_time_q"]).max() == 127
        assert n.attrs["bias_q"].dtype == np.int32


def test_host_equals_reference_and_float(model, compiled, tmp_path):
    prog = parse_program(compiled.data)
    worst = 1.0
    for (x,) in features(12, 7):
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, compiled.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes(), "ptec-run differs from the reference interpreter"
        with torch.no_grad():
            f = model(x).numpy().ravel()
        cos = float(np.dot(got.ravel(), f) / (np.linalg.norm(got) * np.linalg.norm(f)))
        worst = min(worst, cos)
    print(f"worst cosine ptec vs float: {worst:.5f}")
    assert worst >= 0.99, worst         # measured 0.99998 (docs/aot.md)


def test_each_execute_starts_from_a_zero_state(compiled, tmp_path):
    """reset_state (what compile emits): the third execute of one loaded
    method gives the first's output, no state left over from before."""
    prog = parse_program(compiled.data)
    x = features(1, 3)[0][0].numpy()
    once = host_runtime.run(prog, compiled.data, [x], workdir=str(tmp_path))[0]
    thrice = host_runtime.run(prog, compiled.data, [x], workdir=str(tmp_path), repeat=3)[0]
    assert once.tobytes() == thrice.tobytes()


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(model, tmp_path, target):
    data = compile_model(model, [features(1, 0)[0][0]], features(24, 0), target=target).data
    board_matches_reference(data, features(1, 9)[0][0].numpy(), target, tmp_path)


def test_requirements_match_the_runtime(compiled, tmp_path):
    """ptec.requirements counts the kernel's scratch (4 * units * rank bytes)
    as the host runtime measures it; one byte less scratch fails to load."""
    import re
    import subprocess
    from ptec.requirements import requirements
    path = tmp_path / "m.pte"
    path.write_bytes(compiled.data)
    r = requirements(parse_program(compiled.data), target="host")
    assert r.scratch_bytes == 4 * 32 * 2          # svdf1: 32 units of rank 2, the largest
    run = subprocess.run([host_runtime.ptec_run_path(), str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    measured = {k: int(v) for k, v in re.findall(r"^(metadata|scratch|total):\s+(\d+) bytes", run.stdout, re.M)}
    assert measured == {"metadata": r.metadata_bytes, "scratch": r.scratch_bytes, "total": r.total_bytes}, run.stdout
    regions = [f"metadata={r.metadata_bytes}", f"scratch={r.scratch_bytes - 1}"] + \
        [f"planned{i + 1}={n}" for i, n in enumerate(r.planned_bytes)]
    short = subprocess.run([host_runtime.ptec_run_path(), str(path)] + [a for g in regions for a in ("--region", g)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert short.returncode == 1 and "short by 1" in short.stderr, short.stderr


@pytest.mark.parametrize("option", ["a16", "w4"])
def test_a16_and_w4_keep_the_int8_svdf(model, option, tmp_path):
    """--a16 and --w4 change the layers around the SVDF; the SVDF keeps its
    int8 kernel (8-bit weights, int8 state and activations) and the program
    still gives the reference's bytes on the host."""
    res = compile_model(model, [features(1, 0)[0][0]], features(24, 0), **{option: True})
    prog = parse_program(res.data)
    plan = prog.plan()
    keys = [plan.operators[i.instr_args.op_index].key for i in plan.chains[0].instructions]
    assert keys.count("ptec::quantized_svdf.out") == 2, keys
    x = features(1, 4)[0][0].numpy()
    want = run_program(prog, [x])[0]
    got = host_runtime.run(prog, res.data, [x], workdir=str(tmp_path))[0]
    assert got.tobytes() == want.tobytes()


def test_report_counts_the_svdf_macs(compiled):
    """ptec report: per frame, rows x input_size for the feature filter and
    rows x memory for the time filter (20 frames; svdf1 64 rows of 24
    features and 8 columns, svdf2 16 rows of 32 and 6)."""
    from ptec.report import collect
    rows = [r for r in collect(compiled.data, target="host")["instructions"] if r["op"] == "ptec::quantized_svdf.out"]
    assert [r["macs"] for r in rows] == [20 * (64 * 24 + 64 * 8), 20 * (16 * 32 + 16 * 6)]
    assert all(r["placed"] == "CPU int8" for r in rows)


def test_cli_compiles_the_svdf_spotter(tmp_path):
    """`ptec compile python/ptec/models/sequence.py:svdf_kws` (the bench's
    model, loaded from its file) lowers both SVDF layers to the kernel and
    says the program runs on ptec only."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    out = tmp_path / "svdf.pte"
    r = subprocess.run([sys.executable, "-m", "ptec", "compile",
                        os.path.join(ROOT, "python", "ptec", "models", "sequence.py") + ":svdf_kws",
                        "--calib", "4", "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert r.returncode == 0, r.stderr
    assert "runs on ptec's runtime only" in r.stdout + r.stderr
    plan = parse_program(out.read_bytes()).plan()
    keys = [plan.operators[i.instr_args.op_index].key for i in plan.chains[0].instructions]
    assert keys.count("ptec::quantized_svdf.out") == 2


def _one_svdf_program(reset: bool, memory: int = 4):
    """One ptec::quantized_svdf over 7 frames: 3 units of rank 2, 5 features."""
    from ptec.pte.program_builder import ProgramBuilder
    from ptec.pte.schema import ScalarType
    from ptec.pte.writer import serialize_program
    rng = np.random.default_rng(4)
    wf = rng.integers(-127, 128, (6, 5)).astype(np.int8)
    wt = rng.integers(-127, 128, (6, memory)).astype(np.int8)
    bias = rng.integers(-5000, 5000, 3).astype(np.int32)
    q = dict(rank=2, input_offset=3, feature_multiplier=1 << 30, feature_shift=-6, output_offset=2,
             output_multiplier=1 << 30, output_shift=-8, activation_min=-128, activation_max=127)
    b = ProgramBuilder()
    xv, state, out = (b.tensor(ScalarType.CHAR, s) for s in ((1, 7, 5), (6, memory), (1, 7, 3)))
    b.call("ptec::quantized_svdf.out", input=xv, weights_feature=b.constant(wf), weights_time=b.constant(wt),
           bias=b.constant(bias), activation_state=state, reset_state=reset, out=out, **q)
    b.set_io([xv], [out])
    args = (wf, wt, bias, q["rank"], q["input_offset"], q["feature_multiplier"], q["feature_shift"],
            q["output_offset"], q["output_multiplier"], q["output_shift"], q["activation_min"], q["activation_max"])
    return serialize_program(b.build()), args


@pytest.mark.parametrize("reset", [True, False])
def test_streaming_state_carries_over_between_executes(reset, tmp_path):
    """reset_state=False keeps the state the previous execute left: on the
    second execute of one loaded method the output is the reference's from
    the state the first left (7 frames >= memory 4 fill every column, so
    it does not depend on the memory's first contents). reset_state=True
    gives the zero-state output again."""
    data, (wf, wt, bias, *q) = _one_svdf_program(reset)
    x = np.random.default_rng(5).integers(-128, 128, (1, 7, 5)).astype(np.int8)
    prog = parse_program(data)
    got = host_runtime.run(prog, data, [x], workdir=str(tmp_path), repeat=2)[0]
    zero = np.zeros((6, 4), np.int8)
    first, after = ref.svdf_frames(x, wf, wt, bias, zero, *q)
    _, after_any = ref.svdf_frames(x, wf, wt, bias, np.full((6, 4), 77, np.int8), *q)
    assert np.array_equal(after, after_any)
    want = first if reset else ref.svdf_frames(x, wf, wt, bias, after, *q)[0]
    assert np.array_equal(got.reshape(7, 3), want), (got, want)
    assert not np.array_equal(first, ref.svdf_frames(x, wf, wt, bias, after, *q)[0])
    if reset:   # the interpreter runs one execute: the zero-state output
        assert np.array_equal(run_program(prog, [x])[0].reshape(7, 3), first)


class FrameSpotter(nn.Module):
    """A spotter without a conv front end: every op but the SVDFs works
    frame by frame, so streaming the frames in chunks (with the SVDF states
    carried) gives exactly the whole sequence's outputs, a float oracle."""

    def __init__(self):
        super().__init__()
        self.front = nn.Linear(10, 24)
        self.svdf1 = SVDF(24, 32, 2, 8, activation="relu")
        self.svdf2 = SVDF(32, 16, 1, 6, activation="relu")
        self.head = nn.Linear(16, 6)

    def forward(self, x):                       # x [1, T, 10]
        return self.head(self.svdf2(self.svdf1(torch.relu(self.front(x)))))


CHUNK, CHUNKS = 5, 6


def frame_chunks(seed):
    """CHUNKS chunks of CHUNK frames of one calibration-like sequence."""
    whole = features(1, seed, CHUNK * CHUNKS)[0][0][0].t()[None]        # [1, T, 10]
    return whole, [whole[:, k * CHUNK:(k + 1) * CHUNK] for k in range(CHUNKS)]


def test_stateful_svdf_streams(tmp_path):
    """--stateful: each SVDF's activation state is a state tensor (planned,
    initial value zero) that ptec::quantized_svdf carries across executes
    (reset_state false). Streamed in chunks, the host gives the streamed
    reference's bytes, reset repeats the first chunk, and the chunks follow
    PyTorch float on the whole sequence."""
    from ptec.interpreter import Session
    torch.manual_seed(7)
    model = FrameSpotter().eval()
    calib = [(frame_chunks(s)[1][0],) for s in range(16)]
    res = compile_model(model, [calib[0][0]], calib, stateful=True)
    prog = parse_program(res.data)
    plan = prog.plan()
    states = [v.val for v in plan.values if type(v.val).__name__ == "Tensor" and v.val.has_initial_value]
    assert len(states) == 2 and all(prog.initial_bytes(t) == bytes(t.nbytes) for t in states)
    whole, chunks = frame_chunks(99)
    session = Session(prog)
    want = [session.run([c.numpy()])[0] for c in chunks]
    got = host_runtime.run_stream(prog, res.data, [[c.numpy()] for c in chunks + [chunks[0]]],
                                  reset_before=[CHUNKS], workdir=str(tmp_path))
    for k in range(CHUNKS):
        assert np.asarray(got[k][0]).tobytes() == np.asarray(want[k]).tobytes(), k
    assert np.asarray(got[CHUNKS][0]).tobytes() == np.asarray(want[0]).tobytes()
    # the state is used: a later chunk run after load differs from the stream's
    fresh = run_program(prog, [chunks[3].numpy()])[0]
    assert np.asarray(fresh).tobytes() != np.asarray(want[3]).tobytes()
    with torch.no_grad():
        f = model(whole).numpy()
    streamed = np.concatenate([np.asarray(g[0]).reshape(1, CHUNK, 6) for g in got[:CHUNKS]], axis=1)
    cos = float((streamed * f).sum() / np.sqrt((streamed ** 2).sum() * (f ** 2).sum()))
    print(f"stateful SVDF spotter streamed in {CHUNKS} chunks: cosine {cos:.5f} to float on the whole sequence")
    assert cos >= 0.99, cos


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_stateful_svdf_streams_on_the_boards(target, tmp_path):
    """The runner's batch mode is a stream (test_stateful.py): each block's
    output bytes are the streamed reference's, and after the batch the
    runner resets the states and block 0 repeats."""
    torch.manual_seed(7)
    model = FrameSpotter().eval()
    calib = [(frame_chunks(s)[1][0],) for s in range(16)]
    res = compile_model(model, [calib[0][0]], calib, target=target, stateful=True)
    board_streams_reference(res.data, frame_chunks(99)[1], target, tmp_path)
