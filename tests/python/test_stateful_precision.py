"""--stateful recurrent layers on long streams of fresh inputs (issue 15):
the state a layer keeps from one execute to the next carries whatever
rounding it holds into every later execute. A GRU's h kept as int8 on
[-1, 1] drifted from torch float over a stream; its hidden steps now run
in fp32 with a float32 h (an unrolled LSTM's h and c too), and
calibration runs its samples as one stream, the state carried
(capture_state_precision, quantize.calibrate). An nn.LSTM on the
ptec::quantized_lstm kernel keeps its int8 h and int16 cell state.

Oracle: the torch float layer stepped over the same chunks with its state
carried (nn.GRU / nn.LSTM given the last call's h_n / (h_n, c_n)), then
the model's linear head; against it the C runtime streaming one loaded
method (host_runtime.run_stream: ptec-run --steps), in output
quantization steps. The inputs are fresh: drawn after the calibration's
samples, clamped to 1.1 times the calibration's range (slightly beyond
it). A torch output past the program's int8 output grid is measured at
the grid's end: the calibration's coverage of the outputs, not the
state's carried error (the figures without that clamp are in
docs/aot.md, "Stateful recurrent layers").

Measured, worst output steps over 24 executes of 8 steps, seeds 0..3
(before: int8 h and c, calibration from the zero state each sample ->
after; the bounds below are just above the after figures):
  GRU 1 layer:          5.77 11.07 5.49 2.86 -> 2.27 2.05 1.73 2.34
  GRU 1 layer seq-first:     11.07 (seed 1)  -> 2.05
  GRU 2 layers:         7.61 3.49 4.45 4.45  -> 5.65 2.62 2.32 2.27
  LSTM unrolled 1:      2.93 5.04 4.91 3.76  -> 3.05 2.51 2.12 2.44
  LSTM unrolled 2:      4.10 3.62 (0, 1)     -> 2.94 2.66
(seed 0 of the unrolled LSTM, 2.93 -> 3.05, is no case here: it did not
drift before). The kernel LSTM is unchanged: 1.13 1.28 1.29 1.16, two
layers 2.05 1.62 0.89 1.32."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

FEATURES, HIDDEN, CLASSES, STEPS, CALIB, EXECUTES = 10, 24, 6, 8, 48, 24


class Head(nn.Module):
    """A recurrent layer, its last step's output, a linear head."""

    def __init__(self, kind, layers, batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(FEATURES, HIDDEN, num_layers=layers,
                                                         batch_first=batch_first)
        self.fc = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1] if self.batch_first else y[-1])


def _float_stream(model, xs):
    """torch float, the layer's state carried from chunk to chunk."""
    outs, state = [], None
    with torch.no_grad():
        for x in xs:
            y, state = model.rnn(x, state)
            outs.append(model.fc(y[:, -1] if model.batch_first else y[-1]).numpy())
    return outs


def streamed_steps(kind, layers, seed, batch_first=True, tmp_path=None):
    """Worst |ptec - torch| over the stream, in output steps (torch's
    output clamped to the int8 output grid's range), and the compiled result."""
    torch.manual_seed(seed)
    model = Head(kind.split("-")[0], layers, batch_first).eval()
    g = torch.Generator().manual_seed(1000 + seed)
    shape = (1, STEPS, FEATURES) if batch_first else (STEPS, 1, FEATURES)
    calib = [(torch.randn(*shape, generator=g),) for _ in range(CALIB)]
    lo = 1.1 * min(float(c[0].min()) for c in calib)
    hi = 1.1 * max(float(c[0].max()) for c in calib)
    xs = [torch.randn(*shape, generator=g).clamp(lo, hi) for _ in range(EXECUTES)]
    res = compile_model(model, [calib[0][0]], calib, stateful=True, unrolled_lstm=kind == "lstm-unrolled")
    got = [o[0] for o in host_runtime.run_stream(parse_program(res.data), res.data, [[x.numpy()] for x in xs],
                                                 workdir=None if tmp_path is None else str(tmp_path))]
    want = _float_stream(model, xs)
    s, z = res.graph.node(res.graph.outputs[0]).qparams
    olo, ohi = (-128 - z) * s, (127 - z) * s
    assert np.ptp(np.concatenate([w.ravel() for w in want])) > 20 * s      # the outputs vary
    return max(float(np.abs(o - np.clip(w, olo, ohi)).max()) for o, w in zip(got, want)) / s, res


# (kind, layers, seed, batch_first): bound in output steps, just above the measured figure
CASES = {
    ("gru", 1, 0, True): 2.5, ("gru", 1, 1, True): 2.3, ("gru", 1, 2, True): 2.0, ("gru", 1, 3, True): 2.6,
    ("gru", 1, 1, False): 2.3,
    ("gru", 2, 0, True): 6.0, ("gru", 2, 1, True): 2.9, ("gru", 2, 2, True): 2.6, ("gru", 2, 3, True): 2.5,
    ("lstm-unrolled", 1, 1, True): 2.8, ("lstm-unrolled", 1, 2, True): 2.4, ("lstm-unrolled", 1, 3, True): 2.7,
    ("lstm-unrolled", 2, 0, True): 3.2, ("lstm-unrolled", 2, 1, True): 2.9,
}


@pytest.mark.parametrize("case", list(CASES), ids=[f"{k}-L{n}-s{s}-{'bf' if b else 'sf'}" for k, n, s, b in CASES])
def test_a_stateful_layer_streams_fresh_inputs_close_to_torch(case, tmp_path):
    kind, layers, seed, batch_first = case
    worst, res = streamed_steps(kind, layers, seed, batch_first, tmp_path)
    assert worst <= CASES[case], f"{worst:.2f} output steps from torch over {EXECUTES} executes"
    states = [n for n in res.graph.nodes if n.op == "state"]
    assert len(states) == layers * (2 if kind.startswith("lstm") else 1)
    assert all(n.attrs.get("fp32_state") for n in states)
