"""Moved bools read as bools (capture_moved_bools, probe items 7 and 8): a
computed bool or a bool model input moved by flip, roll, a slice with a
step, cat / stack (with constant or computed bools), F.pad with False /
True, t() / transpose / permute, expand / repeat, a piece of unbind, then
read by torch.where, masked_fill, logical ops, any / all / sum /
count_nonzero, as a program output, or as an attention's key padding mask
(a CLS token's `cat([zeros, mask])`), and the CTC greedy decode's
`cat([ones(1, bool), a[1:] != a[:-1]]) & (a != 0)`; gathers too:
index_select, gather, take, take_along_dim, m[:, [2, 0, 1]] and m[idx] by
constant or computed integer indices.

Oracle: torch. Bool and int64 results equal torch's exactly (value and
dtype); a float result of where / masked_fill equals torch's 0 / fill value
exactly where the moved mask holds and is within 1 output step of torch
elsewhere (x's input step and the output step; measured at most 1.19),
the attention models within the stated output steps. Inputs keep every
element at least two input steps from the comparisons' thresholds, so each
comparison is torch's; masks vary between inputs (checked), and the host
runtime gives the reference interpreter's bytes."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import cli_refusal
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


from call_model import Call as Fn


def _ctc_keep(x):
    a = x.argmax(-1)
    return torch.cat([torch.ones(1, dtype=torch.bool), a[1:] != a[:-1]]) & (a != 0)


def _ctc_keep_pad(x):
    a = x.argmax(-1)
    return F.pad(a[1:] != a[:-1], (1, 0), value=True) & (a != 0)


# computed bools: fn(x), x [2, 6] (the CTC cases [12, 4] argmax ids)
COMPUTED = {
    "where((x > 0).flip(1), x, 0)": lambda x: torch.where((x > 0).flip(1), x, 0.0),
    "x.masked_fill((x > 0).roll(1, 1), 0)": lambda x: x.masked_fill((x > 0).roll(1, 1), 0.0),
    "torch.roll(x > 0, (1, -2), (0, 1)) | (x > 1)": lambda x: torch.roll(x > 0, (1, -2), (0, 1)) | (x > 1),
    "where((x > 0)[:, ::2], x[:, 1::2], 0)": lambda x: torch.where((x > 0)[:, ::2], x[:, 1::2], 0.0),
    "where(cat([(x > 0)[:, 3:], (x > 0)[:, :3]], 1), x, -1)":
        lambda x: torch.where(torch.cat([(x > 0)[:, 3:], (x > 0)[:, :3]], 1), x, -1.0),
    "stack([x > 0, (x < 0).flip(1)]) | (x.abs() > 1)":
        lambda x: torch.stack([x > 0, (x < 0).flip(1)]) | (x.abs() > 1),
    "where(F.pad(x > 0, (1, 0))[:, :6], x, 0)": lambda x: torch.where(F.pad(x > 0, (1, 0))[:, :6], x, 0.0),
    "F.pad(x > 0, (0, 2), value=True) & F.pad(x < 1, (2, 0))":
        lambda x: F.pad(x > 0, (0, 2), value=True) & F.pad(x < 1, (2, 0)),
    "where((x > 0).t().reshape(2, 6), x, 1)": lambda x: torch.where((x > 0).t().reshape(2, 6), x, 1.0),
    "x.masked_fill((x[:, :1] > 0).expand(2, 6), 0)": lambda x: x.masked_fill((x[:, :1] > 0).expand(2, 6), 0.0),
    "where((x[:, :3] > 0).repeat(1, 2), x, 0)": lambda x: torch.where((x[:, :3] > 0).repeat(1, 2), x, 0.0),
    "(x > 0).transpose(0, 1).any(1)": lambda x: (x > 0).transpose(0, 1).any(1),
    "(x > 0)[:, ::2].all(1)": lambda x: (x > 0)[:, ::2].all(1),
    "cat([x > 0, x > 1], 1).sum(1)": lambda x: torch.cat([x > 0, x > 1], 1).sum(1),
    "count_nonzero((x > 0).roll(2, 1), 1)": lambda x: torch.count_nonzero((x > 0).roll(2, 1), 1),
    "where((x > 0).rot90(1, [0, 1]).reshape(2, 6), x, 0)":
        lambda x: torch.where((x > 0).rot90(1, [0, 1]).reshape(2, 6), x, 0.0),
    "where((x[:, :3] > 0).tile(1, 2), x, 0)": lambda x: torch.where((x[:, :3] > 0).tile(1, 2), x, 0.0),
    "where((x[:, :3] > 0).repeat_interleave(2, 1), x, 0)":
        lambda x: torch.where((x[:, :3] > 0).repeat_interleave(2, 1), x, 0.0),
    "where(hstack([(x > 0)[:, :2], (x < 0)[:, 2:]]), x > 1, x < -1)":
        lambda x: torch.where(torch.hstack([(x > 0)[:, :2], (x < 0)[:, 2:]]), x > 1, x < -1),
    "cat([x > 0, x < -1], 1).float() * 2": lambda x: torch.cat([x > 0, x < -1], 1).float() * 2,
    "(x > 0)[None].movedim(2, 0).narrow(0, 1, 3).squeeze(-1) | (x.t()[1:4] > 1)":
        lambda x: (x > 0)[None].movedim(2, 0).narrow(0, 1, 3).squeeze(-1) | (x.t()[1:4] > 1),
    "~(x > 0).flip(0) ^ (x < -1)": lambda x: ~(x > 0).flip(0) ^ (x < -1),
    "(x > 0).flip(1) (an output)": lambda x: (x > 0).flip(1),
    "where((x > 0).contiguous(), x, 0)": lambda x: torch.where((x > 0).contiguous(), x, 0.0),
    "where((x > 0).unbind(0)[1].flip(0), x[0], 0)": lambda x: torch.where((x > 0).unbind(0)[1].flip(0), x[0], 0.0),
    "where((x > 0).index_select(1, tensor([5, 4, 3, 2, 1, 0])), x, 0)":
        lambda x: torch.where((x > 0).index_select(1, torch.tensor([5, 4, 3, 2, 1, 0])), x, 0.0),
    "(x > 0).gather(1, idx) | (x > 1)": lambda x: (x > 0).gather(1, torch.tensor([[1, 0, 3, 2, 5, 4]] * 2)) | (x > 1),
    "torch.take(x > 0, tensor([0, 7, 3, 11, 5, 6])) (an output)":
        lambda x: torch.take(x > 0, torch.tensor([0, 7, 3, 11, 5, 6])),
    "(x > 0)[:, [2, 0, 1]].all(1)": lambda x: (x > 0)[:, [2, 0, 1]].all(1),
    "x[:, :3].masked_fill((x > 0)[:, [2, 0, 1]], 0)": lambda x: x[:, :3].masked_fill((x > 0)[:, [2, 0, 1]], 0.0),
    "where((x > 0)[x[:, 0].argmax()[None]], -1, x)": lambda x: torch.where((x > 0)[x[:, 0].argmax()[None]], -1.0, x),
    "(x > 0).take_along_dim(x.argsort(1), 1) ^ (x < -1)":
        lambda x: (x > 0).take_along_dim(x.argsort(1), 1) ^ (x < -1),
    "ctc keep: cat([ones(1, bool), a[1:] != a[:-1]]) & (a != 0)": _ctc_keep,
    "ctc keep: F.pad(a[1:] != a[:-1], (1, 0), value=True) & (a != 0)": _ctc_keep_pad,
}

# bool model inputs: fn(x, m), x [2, 6], m [2, 6] bool
INPUTS = {
    "stack([m.any(1), m.all(1)], 1)": lambda x, m: torch.stack([m.any(1), m.all(1)], 1),
    "count_nonzero(m, 1)": lambda x, m: torch.count_nonzero(m, 1),
    "m.sum(1)": lambda x, m: m.sum(1),
    "x.masked_fill(m[:, 1:], 0)": lambda x, m: x[:, :5].masked_fill(m[:, 1:], 0.0),
    "x.masked_fill(cat([zeros(2, 1, bool), m[:, :5]], 1), 0)":
        lambda x, m: x.masked_fill(torch.cat([torch.zeros(x.shape[0], 1, dtype=torch.bool), m[:, :5]], 1), 0.0),
    "m.flip(1) | (x > 0)": lambda x, m: m.flip(1) | (x > 0),
    "F.pad(m, (1, 0), value=True)[:, :6].t() & (x.t() > 0)":
        lambda x, m: F.pad(m, (1, 0), value=True)[:, :6].t() & (x.t() > 0),
    "m[:, :1].expand(2, 6) & (x > 0)": lambda x, m: m[:, :1].expand(2, 6) & (x > 0),
    "m[:, ::2].any(1)": lambda x, m: m[:, ::2].any(1),
    "m.index_select(1, tensor([1, 3, 5])).sum(1)": lambda x, m: m.index_select(1, torch.tensor([1, 3, 5])).sum(1),
    "x.masked_fill(m[:, [5, 4, 3, 2, 1, 0]], 0)": lambda x, m: x.masked_fill(m[:, [5, 4, 3, 2, 1, 0]], 0.0),
    "torch.gather(m, 1, x.argsort(1)) & (x > 0)": lambda x, m: torch.gather(m, 1, x.argsort(1)) & (x > 0),
    "where(cat([tensor([[True, False]]).repeat(2, 1), m[:, 2:]], 1).flip(1), x, 0)":
        lambda x, m: torch.where(torch.cat([torch.tensor([[True, False]]).repeat(2, 1), m[:, 2:]], 1).flip(1), x, 0.0),
}


def _away(x, step, thresholds=(0.0, 1.0, -1.0)):
    """x with every element at least two input steps from each threshold."""
    for t in thresholds:
        x = torch.where((x - t).abs() < 2 * step, x + 4 * step, x)
    return x


def _masks(n):
    """Bool masks [2, 6], each with its own share of set elements (0.1 to 0.9)."""
    g = torch.Generator().manual_seed(11)
    return [torch.rand(2, 6, generator=g) < 0.1 + 0.8 * k / max(n - 1, 1) for k in range(n)]


def _check(model, feeds, res, tmp_path):
    prog = parse_program(res.data)
    wants = []
    for feed in feeds:
        arrays = [t.numpy() for t in feed]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, arrays)[0].tobytes()
        with torch.no_grad():
            want = model(*feed).numpy()
        assert got.shape == want.shape
        if want.dtype.kind in "biu":
            assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
        else:
            step = res.graph.node(res.graph.outputs[0]).qparams[0]
            assert np.abs(got - want).max() <= 1.5 * step + 1e-6
        wants.append(want)
    assert len({w.tobytes() for w in wants}) >= 3, "outputs do not vary"
    return wants


@pytest.mark.parametrize("name", sorted(COMPUTED))
def test_moved_computed_bool_is_torchs(name, tmp_path):
    model = Fn(COMPUTED[name]).eval()
    g = torch.Generator().manual_seed(3)
    shape = (12, 4) if name.startswith("ctc") else (2, 6)
    cal = [(torch.randn(*shape, generator=g) * 1.5,) for _ in range(8)]
    res = compile_model(model, [cal[0][0]], cal)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    feeds = [(_away(x, step).clamp(-3.5, 3.5),) for (x,) in cal[:6]]
    res = compile_model(model, [feeds[0][0]], feeds)
    step2 = res.graph.node(res.graph.inputs[0]).qparams[0]
    feeds = [(_away(x, step2),) for (x,) in feeds]
    _check(model, feeds, res, tmp_path)


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_moved_bool_input_is_torchs(name, tmp_path):
    model = Fn(INPUTS[name]).eval()
    g = torch.Generator().manual_seed(4)
    masks = _masks(6)
    feeds = [((torch.randn(2, 6, generator=g) * 1.5).clamp(-3.5, 3.5), m) for m in masks]
    res = compile_model(model, list(feeds[0]), feeds)
    step = res.graph.node(res.graph.inputs[0]).qparams[0]
    feeds = [(_away(x, step), m) for x, m in feeds]
    _check(model, feeds, res, tmp_path)


def test_masks_calibrated_all_false_or_all_true(tmp_path):
    """A moved bool input whose calibration masks are all False (or all True):
    its float 0 / 1 grid saw one value, the other still reads back exactly."""
    model = Fn(lambda x, m: (m.flip(1) | (x > 5), F.pad(m, (1, 0), value=True)[:, 1:] & (x < 5))).eval()
    g = torch.Generator().manual_seed(8)
    for fill in (False, True):
        cal = [(torch.randn(2, 6, generator=g), torch.full((2, 6), fill)) for _ in range(3)]
        res = compile_model(model, list(cal[0]), cal)
        prog = parse_program(res.data)
        for m in _masks(4):
            x = torch.randn(2, 6, generator=g)
            got = host_runtime.run(prog, res.data, [x.numpy(), m.numpy()], workdir=str(tmp_path))
            for a, b in zip(got, model(x, m)):
                assert a.dtype == np.bool_ and np.array_equal(a, b.numpy())


def test_a_bool_moved_by_an_unknown_call_stays_refused(tmp_path):
    """unfold of a bool (windows) is no move the pass knows: its reader stays
    refused in one line, exit 2."""
    line = cli_refusal(tmp_path, "import torch\n"
                       "class M(torch.nn.Module):\n"
                       "    def forward(self, x):\n"
                       "        return torch.where((x > 0).unfold(1, 2, 2).flatten(1), x, 0.0)\n"
                       "def model():\n    return M(), torch.randn(2, 6)\n")
    assert "where" in line, line


def test_masked_mean_over_a_bool_input(tmp_path):
    """(x * m).sum(1) / m.sum(1): the count of a bool input as torch's int64
    (the bool read as a number first keeps its bool bytes), then divided;
    within 4 output steps (measured 2.96: the int8 sum's step, divided)."""
    model = Fn(lambda x, m: (x * m).sum(1) / m.sum(1)).eval()
    g = torch.Generator().manual_seed(6)
    masks = [m | (torch.arange(6) == 0) for m in _masks(6)]
    feeds = [(torch.randn(2, 6, generator=g), m) for m in masks]
    res = compile_model(model, list(feeds[0]), feeds)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for x, m in feeds:
        got = host_runtime.run(prog, res.data, [x.numpy(), m.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = model(x, m).numpy()
        assert np.abs(got - want).max() <= 4.0 * step, np.abs(got - want).max() / step


class ClsAttention(nn.Module):
    """A CLS token before the tokens; the key padding mask gets a False for it:
    `cat([zeros(n, 1, bool), mask], 1)`, read by nn.MultiheadAttention,
    nn.TransformerEncoderLayer or a 2-layer nn.TransformerEncoder (torch's
    nested fast path); the CLS token's output."""

    def __init__(self, body):
        super().__init__()
        torch.manual_seed(0)
        self.cls = nn.Parameter(torch.randn(1, 1, 16))
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.body = {"mha": lambda: nn.MultiheadAttention(16, 2, batch_first=True), "layer": lambda: layer,
                     "encoder": lambda: nn.TransformerEncoder(layer, 2)}[body]()
        self.kind = body

    def forward(self, x, mask):
        h = torch.cat([self.cls.expand(x.shape[0], 1, 16), x], 1)
        kpm = torch.cat([torch.zeros(x.shape[0], 1, dtype=torch.bool), mask], 1)
        if self.kind == "mha":
            return self.body(h, h, h, key_padding_mask=kpm, need_weights=False)[0][:, 0]
        return self.body(h, src_key_padding_mask=kpm)[:, 0]


@pytest.mark.parametrize("body,bound", [("mha", 4.0), ("layer", 4.0), ("encoder", 4.0)])
def test_cls_token_key_padding_mask(body, bound, tmp_path):
    """Measured: MHA 1.84, encoder layer 2.37, encoder 2.93 output steps (int8
    attention); ignoring the mask would be 21 to 89 steps off."""
    model = ClsAttention(body).eval()
    g = torch.Generator().manual_seed(1)
    lengths = [6, 3, 2, 5, 1, 4]
    masks = [torch.arange(6)[None] >= torch.tensor([[lengths[k]], [lengths[(k + 2) % 6]]]) for k in range(6)]
    feeds = [(torch.randn(2, 6, 16, generator=g), m) for m in masks]
    res = compile_model(model, list(feeds[0]), feeds)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, unmasked_apart = 0.0, 0.0
    for x, m in feeds:
        got = host_runtime.run(prog, res.data, [x.numpy(), m.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = model(x, m).numpy()
            unmasked = model(x, torch.zeros_like(m)).numpy()
        worst = max(worst, float(np.abs(got - want).max() / step))
        unmasked_apart = max(unmasked_apart, float(np.abs(unmasked - want).max() / step))
    print(f"worst {worst:.2f} output steps; the mask moves torch's output by {unmasked_apart:.1f} steps")
    assert worst <= bound
    assert unmasked_apart > 4 * bound          # the mask matters: ignoring it would fail


class SequenceFirst(nn.Module):
    """nn.MultiheadAttention (sequence first) whose key padding mask is a
    computed bool transposed to [batch, keys]: `(x[:, :, 0] > 0).t()`."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.mha = nn.MultiheadAttention(8, 2)

    def forward(self, x):
        kpm = (x[:, :, 0] > 0).t()
        return self.mha(x, x, x, key_padding_mask=kpm, need_weights=False)[0]


def test_transposed_computed_key_padding_mask(tmp_path):
    """Measured 1.95 output steps on rows with a kept key (a query whose keys
    are all masked is NaN in torch, zeros in ptec: docs/kernels.md)."""
    model = SequenceFirst().eval()
    g = torch.Generator().manual_seed(2)
    cal = [(torch.randn(5, 2, 8, generator=g),) for _ in range(6)]
    res = compile_model(model, [cal[0][0]], cal)
    step_in = res.graph.node(res.graph.inputs[0]).qparams[0]
    feeds = [(_away(x, step_in, (0.0,)),) for (x,) in cal]
    res = compile_model(model, [feeds[0][0]], feeds)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, checked = 0.0, 0
    for (x,) in feeds:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        with torch.no_grad():
            want = model(x).numpy()
        kept = ~np.isnan(want)
        checked += int(kept.sum())
        worst = max(worst, float(np.abs(got - want)[kept].max() / step))
    print(f"worst {worst:.2f} output steps")
    assert checked > 0 and worst <= 3.0
