"""pack_padded_sequence with lengths computed in the program (a model input,
or `(tok != 0).sum(1)`) compiled from an example whose longest sequence is
SHORT (3 of 10 steps), then run on the host with lengths up to the padded
10: every sequence must get torch's answer for its own length.

The bug this catches (probe, bug_packed_lengths_steps.py): the recurrent
stand-in ran only as many steps as the example's longest sequence (torch's
packed batch_sizes at trace time), so a row longer than that was 56-96
output steps off and pad_packed_sequence's output was 0 past it.

Oracle: torch eager on the same module (float). Bounds are in output steps
(each output's int8 step), over outputs that span many steps. Constant
lengths keep their program: as many steps as their longest length."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

T, B, F, H = 10, 3, 8, 16
EXAMPLE = [3, 2, 1]                 # the example's longest: 3 of T
# run-time lengths: T and 1 in every config; sorted descending (enforce_sorted=True takes them)
SORTED = [[10, 6, 1], [10, 10, 3], [9, 4, 1], [7, 7, 7], [10, 1, 1], [5, 3, 2]]
UNSORTED = [[1, 10, 6], [4, 10, 10], [10, 1, 8], [2, 9, 1], [7, 3, 10], [6, 5, 4]]


class PackedRNN(nn.Module):
    """lengths (a model input or counted from the tokens) -> pack -> rnn ->
    h_n (and c_n) and/or the padded output (total_length=T)."""

    def __init__(self, cell, layers, bidirectional, batch_first, sorted_, read, tokens=False):
        super().__init__()
        torch.manual_seed(0)
        self.tokens = tokens
        if tokens:
            self.emb = nn.Embedding(20, F, padding_idx=0)
        self.r = cell(F, H, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        self.batch_first, self.sorted, self.read = batch_first, sorted_, read

    def forward(self, x, lengths=None):
        if self.tokens:             # x: [B, T] int64 tokens, 0 past each length
            lengths = (x != 0).sum(1)
            x = self.emb(x)
            if not self.batch_first:
                x = x.transpose(0, 1)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=self.batch_first,
                                                   enforce_sorted=self.sorted)
        out, h = self.r(packed)
        h, c = h if isinstance(h, tuple) else (h, None)
        outs = []
        if "out" in self.read:
            outs.append(nn.utils.rnn.pad_packed_sequence(out, batch_first=self.batch_first, total_length=T)[0])
        if "h" in self.read:
            outs.append(h)
        if "c" in self.read:
            outs.append(c)
        return tuple(outs)


def _samples(model, all_lengths, seed):
    g = torch.Generator().manual_seed(seed)
    samples = []
    for n in all_lengths:
        n = torch.tensor(n)
        if model.tokens:
            tok = torch.randint(1, 20, (B, T), generator=g)
            tok[torch.arange(T)[None] >= n[:, None]] = 0
            samples.append([tok])
        else:
            x = torch.randn((B, T, F) if model.batch_first else (T, B, F), generator=g)
            samples.append([x, n])
    return samples


def worst_steps(model, sorted_, seed=1):
    """Compiles `model` with the EXAMPLE lengths, calibrates on run-time
    lengths up to T, and returns the largest |ptec - torch| in output steps
    per output over the run-time samples, and the compile result."""
    model = model.eval()
    runs = SORTED if sorted_ else UNSORTED
    example = _samples(model, [EXAMPLE], seed)[0]
    calib = [example] + _samples(model, runs * 3, seed + 1)
    res = compile_model(model, example, calib)
    prog = parse_program(res.data)
    checks = calib[1:1 + len(runs)]         # calibrated on: no clipping error, the steps run are what is checked
    worst = None
    for sample in checks:
        got = host_runtime.run(prog, res.data, [t.numpy() for t in sample])
        with torch.no_grad():
            want = model(*sample)
        assert len(got) == len(want)
        if worst is None:
            worst = [0.0] * len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            step = res.graph.node(res.graph.outputs[k]).qparams[0]
            g, w = np.asarray(g, np.float64), w.numpy().astype(np.float64)
            assert g.shape == w.shape, (g.shape, w.shape)
            assert w.max() - w.min() >= 8 * step, f"output {k} spans only {(w.max() - w.min()) / step:.1f} steps"
            worst[k] = max(worst[k], float(np.abs(g - w).max() / step))
    return worst, res


CONFIGS = [
    # cell, layers, bidirectional, batch_first, enforce_sorted, read
    (nn.GRU, 1, False, True, False, "h"),
    (nn.LSTM, 1, False, True, True, "hc"),
    (nn.LSTM, 2, True, False, True, "hc"),
    (nn.GRU, 2, True, True, False, "out"),
    (nn.LSTM, 1, False, False, False, "out"),
    (nn.GRU, 1, True, False, True, "out,h"),
    (nn.LSTM, 2, False, True, False, "out,hc"),
    (nn.LSTM, 1, True, True, True, "out,hc"),
]


@pytest.mark.parametrize("cell,layers,bidirectional,batch_first,sorted_,read", CONFIGS,
                         ids=[f"{c.__name__}-l{n}-{'bi' if b else 'uni'}-{'bf' if f else 'sf'}-"
                              f"{'sorted' if s else 'unsorted'}-{r}" for c, n, b, f, s, r in CONFIGS])
def test_lengths_input_longer_than_the_example(cell, layers, bidirectional, batch_first, sorted_, read):
    model = PackedRNN(cell, layers, bidirectional, batch_first, sorted_, read)
    worst, _ = worst_steps(model, sorted_)
    assert max(worst) <= 4.5, f"per output: {[round(w, 2) for w in worst]} steps"


@pytest.mark.parametrize("cell,batch_first,sorted_,read", [
    (nn.GRU, True, False, "out"), (nn.LSTM, False, True, "out,hc"), (nn.GRU, False, False, "h")])
def test_lengths_from_tokens_longer_than_the_example(cell, batch_first, sorted_, read):
    """The NLP form: lengths = (tok != 0).sum(1), the output padded back to T."""
    model = PackedRNN(cell, 1, cell is nn.LSTM, batch_first, sorted_, read, tokens=True)
    worst, _ = worst_steps(model, sorted_)
    assert max(worst) <= 4.5, f"per output: {[round(w, 2) for w in worst]} steps"


class ConstantLengths(nn.Module):
    def __init__(self, lengths, bidirectional):
        super().__init__()
        torch.manual_seed(0)
        self.lengths = lengths
        self.r = nn.GRU(F, H, batch_first=True, bidirectional=bidirectional)

    def forward(self, x):
        packed = nn.utils.rnn.pack_padded_sequence(x, self.lengths, batch_first=True, enforce_sorted=False)
        out, h = self.r(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)[0], h


@pytest.mark.parametrize("bidirectional", [False, True])
def test_constant_lengths_run_only_their_longest(bidirectional):
    """Constant lengths [1, 3, 2] of T: the program unrolls 3 steps (per
    direction one hidden linear each), not T, and matches torch."""
    model = ConstantLengths([1, 3, 2], bidirectional).eval()
    g = torch.Generator().manual_seed(3)
    calib = [[torch.rand(B, T, F, generator=g) * 6.0 - 3.0] for _ in range(8)]
    res = compile_model(model, calib[0], calib)
    dirs = 2 if bidirectional else 1
    linears = [n for n in res.graph.nodes if n.op == "linear"]
    # per direction: the input projection, then one hidden linear per step after the first (zero state)
    assert len(linears) == dirs * (1 + 3 - 1), [n.name for n in linears]
    prog = parse_program(res.data)
    for (x,) in calib[:3]:
        got = host_runtime.run(prog, res.data, [x.numpy()])
        with torch.no_grad():
            want = model(x)
        for k, (gk, w) in enumerate(zip(got, want)):
            step = res.graph.node(res.graph.outputs[k]).qparams[0]
            w = w.numpy().astype(np.float64)
            assert w.max() - w.min() >= 8 * step
            assert np.abs(np.asarray(gk, np.float64) - w).max() / step <= 4.0
