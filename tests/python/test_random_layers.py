"""Layers that draw random numbers on the device (issue 15, "the refusal
list shrinks to what the hardware truly cannot do"): F.dropout / dropout2d
called with training=True and nn.FractionalMaxPool2d / 3d built without
_random_samples run on ptec's random kernels (ptec::random_dropout,
ptec::random_fractional_pick), with torch's semantics in distribution.

Oracles, none sharing code with what they check:
  - PCG32's published outputs (the pcg32 demo: seed 42, stream 54) for the
    numpy generator of the reference;
  - the numpy reference (ptec.reference.random_ops, written apart from the C
    kernels) streamed over several executes of one loaded method gives the
    bytes of the C runtime on the host (ptec-run --steps) and on the
    emulated M55 / M33 (the runner's batch mode); a reload repeats the draws;
  - torch: each fractional-pool output plane is F.fractional_max_pool2d /
    3d's output for some samples (all the outputs torch can give: one
    sample per interval between the points where a window start changes),
    and 50 executes give more than one output; each dropout element is 0 or
    torch's x * (1 / (1 - p)) (bit for bit in float32, within output steps
    of torch's float layer in int8), and the dropped fraction is within a
    binomial bound of p."""
import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.backends.portable import PortableBackend
from ptec.capture import CaptureError
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import Session
from ptec.pte import parse_program
from ptec.reference.random_ops import Pcg32

from model_checks import board_streams_reference


def test_pcg32_gives_the_published_stream():
    # pcg32-demo (pcg-c-basic): pcg32_srandom_r(&rng, 42u, 54u), first six outputs
    rng = Pcg32(42, stream=54)
    assert [rng.next_u32() for _ in range(6)] == [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293,
                                                  0xbfa4784b, 0xcbed606e]


class Dropout(nn.Module):
    def __init__(self, p=0.3, channels=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.p, self.channels = p, channels

    def forward(self, x):
        y = self.conv(x)
        return F.dropout2d(y, self.p) if self.channels else F.dropout(y, self.p)


class Fractional(nn.Module):
    def __init__(self, three=False):
        super().__init__()
        self.pool = (nn.FractionalMaxPool3d(2, output_size=(3, 3, 4)) if three
                     else nn.FractionalMaxPool2d((2, 3), output_size=(5, 4)))

    def forward(self, x):
        return self.pool(x)


SHAPES = {"dropout": [1, 3, 8, 8], "dropout2d": [1, 3, 8, 8], "frac2d": [2, 3, 9, 8], "frac3d": [1, 2, 5, 6, 7]}
_COMPILED = {}


def _model(kind):
    torch.manual_seed(0)
    if kind.startswith("frac"):
        return Fractional(kind == "frac3d").eval()
    return Dropout(0.3, kind == "dropout2d").eval()


def _compiled(kind, target="cortex-m55", float32=False):
    key = (kind, target, float32)
    if key not in _COMPILED:
        model = _model(kind)
        g = torch.Generator().manual_seed(1)
        calib = [(torch.randn(*SHAPES[kind], generator=g),) for _ in range(8)]
        lines = []
        res = compile_model(model, [calib[0][0]], calib, target=target, int8_io=_int8_io(kind, float32),
                            backends=[PortableBackend()] if float32 else None, log=lines.append)
        _COMPILED[key] = (model, res, lines)
    return _COMPILED[key]


def _int8_io(kind, float32):
    """The int8 fractional pools take and give int8 codes: torch's pool of
    the codes is then the exact oracle."""
    return kind.startswith("frac") and not float32


def _input(kind, float32=False, seed=2):
    x = torch.randn(*SHAPES[kind], generator=torch.Generator().manual_seed(seed))
    if _int8_io(kind, float32):
        return torch.clamp(torch.round(x * 40), -128, 127).to(torch.int8)
    return x


def _host_stream(res, x, steps):
    prog = parse_program(res.data)
    return [np.asarray(out[0]) for out in host_runtime.run_stream(prog, res.data, [[x.numpy()]] * steps)]


@pytest.mark.parametrize("kind", list(SHAPES))
@pytest.mark.parametrize("float32", [False, True])
def test_host_bytes_equal_the_reference_over_executes(kind, float32):
    """One loaded method, several executes: the stream advances (outputs
    differ) and every execute's bytes are the reference Session's; a
    reload starts the stream again."""
    _, res, _ = _compiled(kind, float32=float32)
    x = _input(kind, float32)
    session = Session(parse_program(res.data))
    want = [session.run([x.numpy()])[0] for _ in range(6)]
    got = _host_stream(res, x, 6)
    for k in range(6):
        assert got[k].tobytes() == want[k].tobytes(), k
    assert len({w.tobytes() for w in want}) > 1, "the stream does not advance between executes"
    assert _host_stream(res, x, 2)[0].tobytes() == want[0].tobytes(), "a reload must repeat the draws"


def _kernels(res):
    return {op.key for op in parse_program(res.data).plan().operators}


@pytest.mark.parametrize("float32", [False, True])
def test_the_layers_run_on_the_random_kernels(float32):
    for kind in SHAPES:
        _, res, lines = _compiled(kind, float32=float32)
        want = "ptec::random_fractional_pick.out" if kind.startswith("frac") else "ptec::random_dropout.out"
        assert want in _kernels(res)
        if float32:
            assert not any(k.startswith("cortex_m::") for k in _kernels(res))
        else:
            assert not res.lowered.fallbacks, res.lowered.fallbacks       # int8 throughout
        # one line at compile time says that the layer draws random numbers
        notes = [s for s in lines if s.startswith("note:") and "random" in s]
        assert len(notes) == 1, lines
        assert ("training=self.training" in notes[0]) == kind.startswith("dropout")


def _breakpoint_samples(n, k, m):
    """One sample u in [0, 1) inside each interval on which torch's window
    starts along a dim (input n, kernel k, output m) do not change: they
    change only where (i + u) * alpha or u * alpha crosses an integer."""
    if m == 1:
        return [0.5]
    alpha = (n - k) / (m - 1)
    cuts = {0.0, 1.0}
    for i in range(m):
        for j in range(int(math.ceil(i * alpha)), int((i + 1) * alpha) + 1):
            u = j / alpha - i
            if 0.0 < u < 1.0:
                cuts.add(u)
    cuts = sorted(cuts)
    return [(a + b) / 2 for a, b in zip(cuts, cuts[1:]) if b - a > 1e-6]


def _torch_outputs(plane, kernel, out_size):
    """Every output torch's fractional max pool gives for this [H, W] or
    [T, H, W] plane, as a set of bytes."""
    three = plane.dim() == 3
    per_dim = [_breakpoint_samples(int(plane.shape[i]), kernel[i], out_size[i]) for i in range(plane.dim())]
    # torch's sample order: 2-D [0] W, [1] H; 3-D [0] T, [1] H, [2] W
    combos = [c for c in itertools.product(*per_dim)]
    samples = torch.tensor([c if three else (c[1], c[0]) for c in combos], dtype=torch.float32)[None]
    x = plane.float().expand(len(combos), *plane.shape)[None]
    pool = F.fractional_max_pool3d if three else F.fractional_max_pool2d
    y = pool(x, kernel, output_size=out_size, _random_samples=samples)[0]
    return {y[i].to(torch.int8).numpy().tobytes() for i in range(len(combos))}


@pytest.mark.parametrize("kind", ["frac2d", "frac3d"])
def test_every_fractional_output_is_one_torch_gives(kind):
    model, res, _ = _compiled(kind)
    x = _input(kind)
    outs = _host_stream(res, x, 50)
    pool = model.pool
    kernel = list(pool.kernel_size)
    out_size = list(pool.output_size)
    candidates = {}
    for b, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        candidates[b, c] = _torch_outputs(x[b, c], kernel, out_size)
    for y in outs:
        for (b, c), allowed in candidates.items():
            assert y[b, c].astype(np.int8).tobytes() in allowed, (b, c)
    assert len({y.tobytes() for y in outs}) > 1, "50 executes gave one output"
    # the check has teeth: torch gives each plane several outputs
    assert all(len(a) > 1 for a in candidates.values())


def _binomial_ok(dropped, total, p):
    return abs(dropped - total * p) <= 5.0 * math.sqrt(total * p * (1 - p))


def test_float32_dropout_is_torch_noise_times_x():
    """Portable float32: each element is x * 0 or x * (1 / (1 - p)) as torch
    computes its noise (bit for bit), the dropped fraction near p."""
    class OnInput(nn.Module):
        def forward(self, x):
            return F.dropout(x, 0.3)
    x = _input("dropout")
    res = compile_model(OnInput(), [x], [(x,)], backends=[PortableBackend()])
    kept = (x * torch.ones_like(x).div_(1 - 0.3)).numpy()
    dropped = total = 0
    for out in _host_stream(res, x, 8):
        zero = out == 0
        assert np.array_equal(out[~zero], kept[~zero])
        dropped += int(zero.sum())
        total += out.size
    assert _binomial_ok(dropped, total, 0.3), (dropped, total)


@pytest.mark.parametrize("kind", ["dropout", "dropout2d"])
def test_int8_dropout_keeps_or_zeroes(kind):
    """int8: each element is 0 or torch's x / (1 - p) within 1.5 output steps
    (the kept code is the input's, on a grid scaled by 1 / (1 - p)); the
    dropped fraction of elements (dropout) or of whole channels (dropout2d,
    whose channels are all dropped or all kept) is near p."""
    model, res, _ = _compiled(kind)
    x = _input(kind)
    with torch.no_grad():
        scaled = (model.conv(x) / (1 - model.p)).numpy()
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    clear = np.abs(scaled) > 2 * step       # kept and dropped are told apart
    dropped = total = 0
    worst = 0.0
    for out in _host_stream(res, x, 40):
        zero = out == 0
        worst = max(worst, float(np.abs(out[~zero] - scaled[~zero]).max() / step))
        if kind == "dropout":
            dropped += int((zero & clear).sum())
            total += int(clear.sum())
            continue
        for b, c in itertools.product(range(out.shape[0]), range(out.shape[1])):
            z = zero[b, c][clear[b, c]]
            assert z.all() or not z.any(), (b, c)
            dropped += int(z.all())
            total += 1
    print(f"worst |kept - torch x / (1 - p)|: {worst:.2f} output steps; dropped {dropped} of {total}")
    # the int8 conv's own error (weights and rounding: 1.18 measured); the
    # dropout adds none, its kept codes are the conv's
    assert worst <= 1.5
    assert _binomial_ok(dropped, total, model.p), (dropped, total)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("kind", ["dropout", "dropout2d", "frac2d", "frac3d"])
def test_boards_stream_the_reference(kind, target, tmp_path):
    """The emulated M55 / M33 runner keeps the method loaded over a batch of
    executes: each one's bytes are the reference Session's, the stream
    advancing (a reset leaves the generators going: the rerun is the next
    execute)."""
    _, res, _ = _compiled(kind, target)
    chunks = [_input(kind, seed=s) for s in (2, 2, 3, 2)]
    board_streams_reference(res.data, chunks, target, tmp_path, random=True)


@pytest.mark.parametrize("kind", ["frac2d", "frac3d"])
def test_torch_given_the_draws_gives_the_same_pool(kind):
    """The generator's draws, taken in torch's layout of _random_samples
    ([N, C, dims], row-major: the kernel draws plane by plane), given to
    torch's own fractional max pool, give the program's output over
    several executes: the mapping of samples to dims and the window starts
    are torch's."""
    model, res, _ = _compiled(kind)
    x = _input(kind)
    node = next(n for n in res.graph.nodes if n.op == "random_fractional_pick")
    rng = Pcg32(node.attrs["seed"])
    dims = x.dim() - 2
    pool = F.fractional_max_pool3d if dims == 3 else F.fractional_max_pool2d
    for out in _host_stream(res, x, 5):
        draws = [float(rng.next_float()) for _ in range(x.shape[0] * x.shape[1] * dims)]
        samples = torch.tensor(draws, dtype=torch.float32).reshape(x.shape[0], x.shape[1], dims)
        want = pool(x.float(), model.pool.kernel_size, output_size=model.pool.output_size, _random_samples=samples)
        assert np.array_equal(out, want.to(torch.int8).numpy())


def test_cli_notes_the_random_layer_and_seeds_it(tmp_path):
    """`compile` says in one line that the layer draws random numbers on
    the device; --seed changes the stream the program starts from."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    src = tmp_path / "random_pool.py"
    src.write_text("import torch.nn as nn\n"
                   "def make():\n"
                   "    m = nn.Sequential(nn.FractionalMaxPool2d(2, output_size=3))\n"
                   "    m.input_shape = (1, 4, 6, 6)\n"
                   "    return m\n")
    firsts = []
    for seed in (0, 0, 5):
        out = tmp_path / f"out{seed}.pte"
        r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:make", "--calib", "2", "--seed",
                            str(seed), "-o", str(out)], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
        assert r.returncode == 0, r.stderr
        notes = [s for s in (r.stdout + r.stderr).splitlines() if "draws random pooling regions on the device" in s]
        assert len(notes) == 1 and "note: 0 (nn.FractionalMaxPool2d) draws" in notes[0], r.stdout + r.stderr
        data = out.read_bytes()
        x = np.linspace(-2, 2, 4 * 36, dtype=np.float32).reshape(1, 4, 6, 6)
        firsts.append(np.concatenate([o[0].ravel() for o in host_runtime.run_stream(
            parse_program(data), data, [[x]] * 4)]).tobytes())
    assert firsts[0] == firsts[1] and firsts[0] != firsts[2]
