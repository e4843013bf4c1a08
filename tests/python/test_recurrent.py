"""nn.GRU, nn.LSTM, nn.RNN (tanh or relu; one or both directions,
batch-first or not, one or two layers) and nn.GRUCell / nn.LSTMCell compile
to int8 (issue 15). nn.LSTM becomes one
ptec::quantized_lstm per layer (CMSIS-NN's int8 LSTM numerics: int16 gates
and cell, docs/kernels.md "LSTM"); nn.GRU, nn.RNN and the cells are unrolled by
capture over the traced sequence length into linear, sigmoid/tanh LUTs, add
and mul (ptec.capture_modules), and so is an nn.LSTM whose final cell state
c_n the model uses or that runs both directions (the backward direction
walks the steps from the last). Checks: the stand-ins equal PyTorch's layers in float;
the program runs on the C runtime with the bytes of the numpy int8
reference and the M55 and M33 boards; its result is close to PyTorch's
(cosine >= 0.99, the LSTM's whole output sequence >= 0.999); the hidden
weights are stored once however many steps use them. An initial state given
to a --stateful layer is refused in one line (an initial state, proj_size and
packed sequences otherwise run: test_sequence_forms.py)."""
from collections import Counter

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.capture import CaptureError
from ptec.capture_modules import with_traceable_modules
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.pte.upstream_rules import ptec_only_operators, require_compatible, upstream_needs

STEPS, FEATURES, HIDDEN = 12, 10, 24


class Spotter(nn.Module):
    """A keyword spotter's back end: a recurrent layer, its last output, a classifier."""

    def __init__(self, kind, layers=1, batch_first=True, bidirectional=False):
        super().__init__()
        extra = {"rnn_relu": dict(nonlinearity="relu")}.get(kind, {})
        rnn = {"gru": nn.GRU, "lstm": nn.LSTM}.get(kind, nn.RNN)
        self.rnn = rnn(FEATURES, HIDDEN, num_layers=layers, batch_first=batch_first,
                       bidirectional=bidirectional, **extra)
        self.fc = nn.Linear(HIDDEN * (2 if bidirectional else 1), 6)
        self.batch_first = batch_first

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        y, _ = self.rnn(x)
        return self.fc(y[:, -1] if self.batch_first else y[-1])


class FinalHidden(nn.Module):
    """A classifier on h_n of the last layer (the LSTM's last output)."""

    def __init__(self, layers=2):
        super().__init__()
        self.rnn = nn.LSTM(FEATURES, HIDDEN, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(HIDDEN, 6)

    def forward(self, x):
        _, (h, _) = self.rnn(x)
        return self.fc(h[-1])


class Cells(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRUCell(FEATURES, HIDDEN)
        self.lstm = nn.LSTMCell(HIDDEN, HIDDEN)

    def forward(self, x):
        h = self.gru(x[:, 0])
        h = self.gru(x[:, 1], h)
        h2, c2 = self.lstm(h)
        h2, c2 = self.lstm(h, (h2, c2))
        return h2 + c2


CASES = {
    "gru": lambda: Spotter("gru"),
    "lstm": lambda: Spotter("lstm"),
    "gru_2_layers_seq_first": lambda: Spotter("gru", 2, False),
    "lstm_2_layers": lambda: Spotter("lstm", 2),
    "lstm_2_layers_seq_first": lambda: Spotter("lstm", 2, False),
    "lstm_2_layers_h_n": lambda: FinalHidden(2),
    "cells": lambda: Cells(),
    "rnn": lambda: Spotter("rnn"),
    "rnn_relu_2_layers": lambda: Spotter("rnn_relu", 2),
    "gru_bidirectional": lambda: Spotter("gru", bidirectional=True),
    "lstm_2_layers_bidirectional_seq_first": lambda: Spotter("lstm", 2, False, bidirectional=True),
}


def _calib():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(1, STEPS, FEATURES, generator=g),) for _ in range(16)]


@pytest.mark.parametrize("case", list(CASES))
def test_recurrent_layers_run_int8(case, tmp_path):
    torch.manual_seed(0)
    model = CASES[case]().eval()
    calib = _calib()
    x = calib[3][0]
    with torch.no_grad():
        ref = model(x)
        assert torch.allclose(with_traceable_modules(model, [x])(x), ref, atol=1e-5)
        assert torch.allclose(with_traceable_modules(model, [x], lstm_kernel=True)(x), ref, atol=1e-5)
    res = compile_model(model, [x], calib)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    want = run_program(prog, [x.numpy()])[0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    r, g = ref.numpy().ravel(), np.asarray(got, np.float64).ravel()
    assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.99
    layers = 2 if "2_layers" in case else 1
    dirs = 2 if "bidirectional" in case else 1
    ops = [op.name for op in prog.execution_plan[0].operators]
    if "lstm" in case and dirs == 1:      # one kernel call per layer, nothing per step
        calls = Counter(ops[ins.instr_args.op_index] for ins in prog.execution_plan[0].chains[0].instructions)
        assert calls["ptec::quantized_lstm"] == layers, calls
        # h_n concatenates the layers' last outputs: one requantization to
        # the concatenation's grid per layer, nothing per step
        assert "cortex_m::quantized_mul" not in calls, calls
        assert calls["cortex_m::quantized_activation"] == (layers if "h_n" in case else 0), calls
        assert ptec_only_operators(prog) == ["ptec::quantized_lstm.out"]
        assert "runs on ptec's runtime only" in upstream_needs(prog)[0]
    else:
        assert "ptec::quantized_lstm" not in ops
    if case != "cells":     # W_hh, quantized alike every step, is one constant
        gates = 3 if "gru" in case else (4 if "lstm" in case else 1)
        buffers = [v.val.data_buffer_idx for v in prog.execution_plan[0].values
                   if type(v.val).__name__ == "Tensor" and list(v.val.sizes) == [gates * HIDDEN, HIDDEN]
                   and v.val.data_buffer_idx]
        # unrolled: per layer W_hh (used by every step but the zero-state
        # one); the kernel: W_hh once per layer. The second layer's W_ih has
        # the same shape and is used once.
        # Both directions: a W_hh per layer and direction; the second layer's
        # W_ih then takes both directions' features, another shape.
        steps = 1 if "lstm" in case and dirs == 1 else STEPS - 1
        uses = sorted(Counter(buffers).values())
        assert uses == sorted([steps] * layers * dirs + ([1] * (layers - 1) if dirs == 1 else [])), uses


class LSTMSequence(nn.Module):
    """The LSTM's whole output sequence (no classifier to hide its error);
    final_cell: the model also returns c_n."""

    def __init__(self, layers=1, batch_first=True, final_cell=False):
        super().__init__()
        self.rnn = nn.LSTM(FEATURES, HIDDEN, num_layers=layers, batch_first=batch_first)
        self.batch_first, self.final_cell = batch_first, final_cell

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        y, (h, c) = self.rnn(x)
        return y + c[-1].unsqueeze(1 if self.batch_first else 0) if self.final_cell else y


@pytest.mark.parametrize("layers, batch_first, batch", [(1, True, 1), (2, False, 1), (1, True, 3)])
def test_lstm_kernel_output_sequence_close_to_float(layers, batch_first, batch, tmp_path):
    """Every calibration input: cosine >= 0.999 against PyTorch over the
    whole output, and no value more than 3 output steps (of about 2/255)
    off; the C runtime gives the reference's bytes. Batch 3: the kernel runs
    the three sequences one after the other."""
    torch.manual_seed(0)
    model = LSTMSequence(layers, batch_first).eval()
    g = torch.Generator().manual_seed(0)
    calib = [(torch.randn(batch, STEPS, FEATURES, generator=g),) for _ in range(16)]
    res = compile_model(model, [calib[0][0]], calib)
    prog = parse_program(res.data)
    assert ptec_only_operators(prog) == ["ptec::quantized_lstm.out"]
    want = run_program(prog, [calib[1][0].numpy()])[0]
    got = host_runtime.run(prog, res.data, [calib[1][0].numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    for (x,) in calib:
        with torch.no_grad():
            r = model(x).numpy().ravel().astype(np.float64)
        g = np.asarray(run_program(prog, [x.numpy()])[0], np.float64).ravel()
        assert float(g @ r / np.linalg.norm(g) / np.linalg.norm(r)) >= 0.999
        assert np.abs(g - r).max() <= 3 * 2.0 / 255


def test_an_lstm_whose_final_cell_is_used_keeps_the_kernel(tmp_path):
    """c_n is not an output of the kernel: the layer's output is the
    kernel's and c_n alone is the layer unrolled (capture_lstm_final_cell);
    --unrolled-lstm unrolls it all, as before."""
    torch.manual_seed(0)
    model = LSTMSequence(final_cell=True).eval()
    calib = _calib()
    x = calib[3][0]
    with torch.no_grad():
        assert torch.allclose(with_traceable_modules(model, [x], lstm_kernel=True)(x), model(x), atol=1e-5)
    for unrolled, operators, bound in ((False, ["ptec::quantized_lstm.out"], 2.0), (True, [], 2.5)):   # 1.84, 2.10
        res = compile_model(model, [x], calib, unrolled_lstm=unrolled)
        prog = parse_program(res.data)
        assert ptec_only_operators(prog) == operators
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        for (c,) in calib:
            with torch.no_grad():
                r = model(c).numpy().astype(np.float64)
            g = np.asarray(run_program(prog, [c.numpy()])[0], np.float64)
            assert np.abs(g - r).max() <= bound * step, (unrolled, np.abs(g - r).max() / step)


@pytest.mark.parametrize("kind", ["gru", "lstm", "lstm_2_layers_seq_first", "rnn"])
@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_spotters_on_the_boards(kind, target, tmp_path):
    torch.manual_seed(0)
    model = CASES[kind]().eval()
    calib = _calib()
    data = compile_model(model, [calib[0][0]], calib, target=target).data
    board_matches_reference(data, calib[5][0].numpy(), target, tmp_path)


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_bidirectional_on_the_boards(target, tmp_path):
    """Both directions of a GRU on a short sequence (each unrolled step's
    values take runtime metadata: the 12-step spotters, doubled, outgrow the
    runner's 64 KB metadata buffer; the host test runs them)."""
    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(FEATURES, 8, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(16, 6)

        def forward(self, x):
            return self.fc(self.gru(x)[0][:, -1])
    torch.manual_seed(0)
    model = Both().eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 5, FEATURES, generator=g),) for _ in range(16)]
    data = compile_model(model, [calib[0][0]], calib, target=target).data
    board_matches_reference(data, calib[5][0].numpy(), target, tmp_path)


def test_bidirectional_with_stateful_is_refused():
    class Bi(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(8, 8, batch_first=True, bidirectional=True)

        def forward(self, x):
            return self.rnn(x)[0]
    x = torch.randn(1, 4, 8)
    with pytest.raises(CaptureError, match="bidirectional nn.GRU with --stateful") as e:
        compile_model(Bi().eval(), [x], [(x,)], stateful=True)
    assert "\n" not in str(e.value)


def test_an_initial_state_with_stateful_is_refused_in_one_line():
    class WithState(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(8, 8, batch_first=True)

        def forward(self, x):
            return self.rnn(x, torch.zeros(1, 1, 8))[0]
    x = torch.randn(1, 4, 8)
    with pytest.raises(CaptureError, match="initial state with --stateful") as e:
        compile_model(WithState().eval(), [x], [(x,)], stateful=True)
    assert "\n" not in str(e.value)


def test_unrolled_lstm_keeps_upstreams_operators(tmp_path):
    """compile_model(unrolled_lstm=True) (`--unrolled-lstm`): no ptec
    operator, the program passes upstream's rules and still runs bit-exact."""
    torch.manual_seed(0)
    model = Spotter("lstm").eval()
    calib = _calib()
    x = calib[3][0]
    res = compile_model(model, [x], calib, unrolled_lstm=True)
    prog = parse_program(res.data)
    assert not ptec_only_operators(prog)
    assert "runs on ptec's runtime only" not in " ".join(upstream_needs(prog))
    require_compatible(prog)
    want = run_program(prog, [x.numpy()])[0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("flag", [[], ["--unrolled-lstm"]])
def test_cli_lstm_kernel_and_unrolled_flag(flag, tmp_path):
    """`compile` says the LSTM kernel makes the program ptec-only, and
    `--unrolled-lstm` gives upstream's operators."""
    import os
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    src = tmp_path / "lstm_model.py"
    src.write_text("import torch, torch.nn as nn\n"
                   "class M(nn.Module):\n"
                   "    def __init__(self):\n"
                   "        super().__init__(); self.r = nn.LSTM(6, 8, batch_first=True)\n"
                   "    def forward(self, x):\n"
                   "        return self.r(x)[0]\n"
                   "def get_model():\n"
                   "    return M().eval(), [torch.randn(1, 5, 6)]\n")
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{src}:get_model", *flag,
                        "-o", str(tmp_path / "m.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env={**os.environ, "PYTHONPATH": os.path.join(root, "python")})
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    if flag:
        assert "ptec::quantized_lstm" not in text and "runs on ptec's runtime only" not in text, text
    else:
        assert "ptec::quantized_lstm.out" in text and "runs on ptec's runtime only" in text, text
