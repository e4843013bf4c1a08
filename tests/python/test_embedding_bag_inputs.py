"""nn.EmbeddingBag / F.embedding_bag with offsets given as a program input
and with per_sample_weights (issue 15). The offsets are int64 data: the
program turns them into each bag's positions (ptec::bag_positions.out,
which checks them as torch does: the first 0, none decreasing, none past
the ids; include_last_offset as torch) and looks up the ids' rows, then a
filler row, by them, so every bag is reduced over the ids' length (sum: a
linear of ones; mean: that over the count of its ids; max: a max pool
times the bag's largest 0/1 flag). per_sample_weights (mode sum, as torch
requires) scale each id's row: a float input or a value computed in the
program, with runtime offsets, constant offsets or [B, L] ids.

Checks: the float graph is torch; the reference kernel's bags are torch's;
the C runtime's bytes equal the numpy reference interpreter's; the int8
values are torch's within a measured bound (calibrated on the checked
inputs, so the bound is the rounding's); offsets torch refuses fail the
run with an error (host and reference), never a read outside the ids; the
emulated M55 and M33 print the reference bytes."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model_checks import ROOT, runner_elf
from ptec import host_runtime
from ptec.capture import capture
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import evaluate
from ptec.pte import parse_program
from ptec.reference import index_blocks as PX

VOCAB, N = 20, 12


class Bags(torch.nn.Module):
    """nn.EmbeddingBag(mode, padding_idx 3 or none, include_last_offset) on
    ids [N] with offsets an int64 input."""

    def __init__(self, mode, padding_idx=None, include_last=False):
        super().__init__()
        torch.manual_seed(7)
        self.bag = torch.nn.EmbeddingBag(VOCAB, 8, mode=mode, padding_idx=padding_idx,
                                         include_last_offset=include_last)

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


class WeightedBags(Bags):
    """Bags of mode sum with per_sample_weights: a third input w
    (weights="input") or computed from it (weights="computed"); functional:
    F.embedding_bag with the module's table."""

    def __init__(self, padding_idx, weights, functional=False):
        super().__init__("sum", padding_idx)
        self.weights, self.functional = weights, functional

    def forward(self, ids, offsets, w):
        psw = w if self.weights == "input" else torch.sigmoid(2 * w) + 0.25
        if self.functional:
            return F.embedding_bag(ids, self.bag.weight, offsets, mode="sum", per_sample_weights=psw,
                                   padding_idx=self.bag.padding_idx)
        return self.bag(ids, offsets, per_sample_weights=psw)


def samples(n, seed, include_last, padding_idx=None):
    """ids [N], offsets of 4 bags (an empty one among them now and then),
    weights [N] in [-0.5, 1.5)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ids = torch.randint(0, VOCAB, (N,), generator=g)
        if padding_idx is not None:
            ids[torch.randint(0, N, (3,), generator=g)] = padding_idx
        cuts = torch.sort(torch.randint(0, N + 1, (3,), generator=g)).values
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), cuts] + ([torch.tensor([N])] if include_last else []))
        out.append((ids, offsets, torch.rand(N, generator=g) * 2 - 0.5))
    return out


def _host_checks(model, xs, bound, tmp_path):
    graph = capture(model, list(xs[0]))
    assert not [n for n in graph.nodes if n.op == "unsupported"]
    with torch.no_grad():
        for s in xs[:4]:
            assert torch.allclose(evaluate(graph, list(s))[0], model(*s), atol=1e-5)
    res = compile_model(model, list(xs[0]), xs)
    assert not res.lowered.fallbacks and not res.lowered.unsupported
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for s in xs[-6:]:
        args = [t.numpy() for t in s]
        want = run_program(prog, args)[0]
        got = host_runtime.run(prog, res.data, args, workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            ref = model(*s).numpy()
        assert np.ptp(ref) > 8 * step
        worst = max(worst, float(np.abs(got - ref).max() / step))
    assert worst <= bound, worst
    return res


@pytest.mark.parametrize("mode,padding_idx,include_last,bound", [
    ("sum", None, False, 1.5), ("mean", None, True, 3.0), ("max", None, False, 1.0),
    ("sum", 3, True, 1.5), ("mean", 3, False, 3.0), ("max", 3, True, 1.0)])
def test_offsets_as_an_input(mode, padding_idx, include_last, bound, tmp_path):
    """Bags by run-time offsets: int8 within `bound` output steps, measured:
    the max 0.5 (one row, times 0 or 1); the sum 1.05 (one linear's rounding
    of rows each rounded); the mean 1.8 to 2.85 (the sum's rounding, on a
    grid as wide as the largest bag's sum, divided by a count that can be
    1)."""
    xs = samples(20, 1, include_last, padding_idx)
    xs = [s[:2] for s in xs]
    res = _host_checks(Bags(mode, padding_idx, include_last).eval(), xs, bound, tmp_path)
    assert "ptec::bag_positions.out" in res.lowered.operators


@pytest.mark.parametrize("weights,functional", [("input", False), ("computed", False), ("input", True)])
def test_per_sample_weights(weights, functional, tmp_path):
    """mode sum with per_sample_weights: each row times its weight (a cat
    of copies and an int8 mul, one rounding), then the bag's sum: measured
    1.3 to 1.6 steps."""
    xs = samples(20, 2, False, 3)
    _host_checks(WeightedBags(3, weights, functional).eval(), xs, 2.0, tmp_path)


class FixedBags(torch.nn.Module):
    """per_sample_weights with constant offsets (a buffer) and with [B, L] ids."""

    def __init__(self, two_d):
        super().__init__()
        torch.manual_seed(8)
        self.bag = torch.nn.EmbeddingBag(VOCAB, 8, mode="sum")
        self.register_buffer("offsets", torch.tensor([0, 5, 5, 9]))
        self.two_d = two_d

    def forward(self, ids, w):
        if self.two_d:
            return self.bag(ids, per_sample_weights=w)
        return self.bag(ids, self.offsets, per_sample_weights=w)


@pytest.mark.parametrize("two_d", [False, True], ids=["constant offsets", "[B, L] ids"])
def test_per_sample_weights_without_offsets_inputs(two_d, tmp_path):
    g = torch.Generator().manual_seed(9)
    shape = (3, 4) if two_d else (N,)
    xs = [(torch.randint(0, VOCAB, shape, generator=g), torch.rand(shape, generator=g) * 2 - 0.5)
          for _ in range(20)]
    _host_checks(FixedBags(two_d).eval(), xs, 2.0, tmp_path)


def test_the_reference_bags_are_torchs():
    """bag_positions' reference, looked up and summed, is torch's bag sum,
    and its refusals are torch's."""
    table = torch.randn(VOCAB, 3)
    for include_last in (False, True):
        for ids, offsets, _ in samples(10, 4, include_last):
            pos = PX.bag_positions(offsets.numpy(), N, include_last)
            rows = torch.cat([table[ids], torch.zeros(1, 3)])[torch.from_numpy(pos)]     # the ids' rows, the filler
            want = F.embedding_bag(ids, table, offsets, mode="sum", include_last_offset=include_last)
            assert torch.allclose(rows.sum(1), want, atol=1e-5)
    for bad in ([1, 2, 3], [0, 5, 3], [0, 2, N + 1], [0, -1, 2]):
        with pytest.raises(Exception):
            F.embedding_bag(torch.arange(N), table, torch.tensor(bad), mode="sum")
        with pytest.raises(ValueError):
            PX.bag_positions(np.array(bad), N, False)


@pytest.mark.parametrize("bad,include_last", [
    ([1, 2, 3, 4], False), ([0, 5, 3, 6], False), ([0, 2, 4, N + 1], False), ([0, 1, 2, -3], False),
    ([0, 2, 4, 2 ** 40], False), ([0, 1, 2, 3, N + 1], True), ([-(2 ** 63), 0, 1, 2, 3], True)])
def test_offsets_torch_refuses_fail_the_run(bad, include_last, tmp_path):
    model = Bags("sum", None, include_last).eval()
    xs = [s[:2] for s in samples(4, 5, include_last)]
    res = compile_model(model, list(xs[0]), xs)
    prog = parse_program(res.data)
    ids = xs[0][0]
    with pytest.raises(Exception):
        model(ids, torch.tensor(bad))                         # torch refuses them too
    args = [ids.numpy(), np.array(bad, np.int64)]
    with pytest.raises(Exception, match="offsets must start at 0, never decrease and stay within the ids"):
        host_runtime.run(prog, res.data, args, workdir=str(tmp_path))
    with pytest.raises(ValueError, match="bag_positions"):
        run_program(prog, args)


def board_matches_reference_inputs(data: bytes, xs, target: str, workdir) -> None:
    """The program (several inputs, their bytes back to back in the input
    slot) runs in `target`'s runner firmware under QEMU and prints the
    reference interpreter's output bytes."""
    elf = runner_elf(target)
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target}")
    prog = parse_program(data)
    want = run_program(prog, xs)[0]
    (workdir / "m.pte").write_bytes(data)
    (workdir / "in.bin").write_bytes(b"".join(np.ascontiguousarray(x).tobytes() for x in xs))
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf,
                          "--model", str(workdir / "m.pte"), "--input", str(workdir / "in.bin"),
                          "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    hex_bytes = "".join(line.split()[2] for line in run.stdout.splitlines() if line.startswith("@out0 "))
    assert bytes.fromhex(hex_bytes) == np.ascontiguousarray(want).tobytes(), run.stdout[-2000:]


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_bags_on_boards(target, tmp_path):
    for weights in (None, "input"):
        xs = samples(12, 6, False, 3)
        model = Bags("mean", 3).eval() if weights is None else WeightedBags(3, weights).eval()
        xs = [s if weights else s[:2] for s in xs]
        res = compile_model(model, list(xs[0]), xs)
        board_matches_reference_inputs(res.data, [t.numpy() for t in xs[3]], target, tmp_path)


class WeightForms(torch.nn.Module):
    """Every form of per_sample_weights torch 1.13 accepts (mode sum, the
    ids' own shape: torch refuses any other, and any mode but sum), each
    summed with a float input x so the program has one: a constant buffer
    or Parameter, weights made in forward, an input expanded to the ids'
    shape, positional arguments, include_last_offset."""

    def __init__(self, form):
        super().__init__()
        torch.manual_seed(11)
        self.bag = torch.nn.EmbeddingBag(VOCAB, 8, mode="sum")
        self.form = form
        self.register_buffer("offsets", torch.tensor([0, 5, 5, 9]))
        self.register_buffer("w_buffer", torch.rand(N) * 2 - 0.5)
        self.w_param = torch.nn.Parameter(torch.rand(3, 4) + 0.5)

    def forward(self, ids, x):
        f, table = self.form, self.bag.weight
        if f == "buffer, constant offsets":
            return self.bag(ids, self.offsets, per_sample_weights=self.w_buffer) + x
        if f == "Parameter, [B, L] ids":
            return self.bag(ids, per_sample_weights=self.w_param) + x[:3]
        if f == "made in forward, positional":
            return self.bag(ids, self.offsets, torch.full((N,), 0.75)) + x
        if f == "input expanded to [B, L], offsets None":
            return self.bag(ids, None, x[0, :4].expand(3, 4)) + x[:3]
        if f == "F positional, include_last_offset":
            ends = torch.tensor([0, 3, 3, 7, N])
            return F.embedding_bag(ids, table, ends, None, 2.0, False, "sum", False, torch.sigmoid(x[:3].flatten()[:N]),
                                   True) + x
        raise ValueError(f)


WEIGHT_FORMS = ["buffer, constant offsets", "Parameter, [B, L] ids", "made in forward, positional",
                "input expanded to [B, L], offsets None", "F positional, include_last_offset"]


@pytest.mark.parametrize("form", WEIGHT_FORMS)
def test_per_sample_weights_forms_torch_accepts(form, tmp_path):
    """Each compiles without a fallback and runs: bytes the reference's,
    values torch's within the weighted sum's rounding."""
    g = torch.Generator().manual_seed(12)
    shape = (3, 4) if "[B, L]" in form else (N,)
    xs = [(torch.randint(0, VOCAB, shape, generator=g), torch.randn(4, 8, generator=g) * 0.5) for _ in range(20)]
    _host_checks(WeightForms(form).eval(), xs, 2.0, tmp_path)


@pytest.mark.parametrize("bad", ["other shape", "mode mean", "float64"])
def test_per_sample_weights_torch_refuses(bad):
    """The forms torch itself refuses (so ptec need not run them): weights
    of another shape than the ids, a mode other than sum, another dtype
    than the table's."""
    table, ids = torch.randn(VOCAB, 4), torch.randint(0, VOCAB, (3, 4))
    w = {"other shape": torch.rand(12), "mode mean": torch.rand(3, 4), "float64": torch.rand(3, 4).double()}[bad]
    with pytest.raises((ValueError, NotImplementedError, RuntimeError)):
        F.embedding_bag(ids, table, mode="mean" if bad == "mode mean" else "sum", per_sample_weights=w)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_constant_weights_on_boards(target, tmp_path):
    """A buffer's per_sample_weights with constant offsets: the boards print
    the reference's bytes."""
    g = torch.Generator().manual_seed(13)
    xs = [(torch.randint(0, VOCAB, (N,), generator=g), torch.randn(4, 8, generator=g) * 0.5) for _ in range(12)]
    res = compile_model(WeightForms("buffer, constant offsets").eval(), list(xs[0]), xs)
    board_matches_reference_inputs(res.data, [t.numpy() for t in xs[3]], target, tmp_path)
