"""--a16 covers nn.LSTM (issue 15): a layer --a16 selects becomes one
ptec::quantized_lstm_a16 (CMSIS-NN's int16 LSTM numerics: int16 input,
hidden state and output, int8 weights, int64 biases; docs/kernels.md
"int16 LSTM") instead of the int8 ptec::quantized_lstm. Checks: the
compiled classifier calls the int16 kernel and no int8 LSTM; it runs with
the numpy reference's bytes on the C runtime and on the M55 and M33
boards; on the calibration inputs it is closer to PyTorch float than the
int8 LSTM (the whole output sequence and the classifier's logits, bounds
measured below); a selection that leaves the LSTM out keeps the int8
kernel; two layers pass int16 between them with no conversion."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.pte.schema import KernelCall
from ptec.pte.upstream_rules import ptec_only_operators

STEPS, FEATURES, HIDDEN, CLASSES = 12, 10, 24, 6


class LSTMSequence(nn.Module):
    """The LSTM's whole output sequence: nothing after it hides its error."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(FEATURES, HIDDEN, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class Classifier(nn.Module):
    """An LSTM classifier over the whole output sequence (flattened, so
    that the int16 values reach the int16 linear layer unconverted)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
        self.fc = nn.Linear(STEPS * HIDDEN, CLASSES)

    def forward(self, x):
        y = self.rnn(x)[0]
        return self.fc(y.reshape(y.shape[0], -1))


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(FEATURES, HIDDEN, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def kernel_calls(prog):
    """The operator name of every kernel call, in order."""
    plan = prog.execution_plan[0]
    return [plan.operators[ins.instr_args.op_index].name for chain in plan.chains
            for ins in chain.instructions if isinstance(ins.instr_args, KernelCall)]


def calibration(n=16, batch=1):
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(batch, STEPS, FEATURES, generator=g),) for _ in range(n)]


def build(cls, **kw):
    torch.manual_seed(0)
    model = cls().eval()
    calib = calibration()
    return model, calib, compile_model(model, [calib[0][0]], calib, **kw)


def errors(model, prog, calib):
    """max |ptec - float| per calibration input."""
    out = []
    for (x,) in calib:
        with torch.no_grad():
            r = model(x).numpy().astype(np.float64)
        out.append(float(np.abs(np.asarray(run_program(prog, [x.numpy()])[0], np.float64) - r).max()))
    return np.array(out)


@pytest.fixture(scope="module")
def classifier():
    return build(Classifier, a16=True)


def test_the_classifier_uses_the_int16_lstm(classifier):
    _, _, res = classifier
    ops = ptec_only_operators(parse_program(res.data))
    assert "ptec::quantized_lstm_a16.out" in ops
    assert "ptec::quantized_lstm.out" not in ops


def test_host_runtime_gives_the_reference_bytes(classifier, tmp_path):
    _, calib, res = classifier
    prog = parse_program(res.data)
    for (x,) in calib[:4]:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_batch_of_three_on_host(tmp_path):
    """Three sequences in one call: the kernel runs them one after the other."""
    torch.manual_seed(0)
    model = LSTMSequence().eval()
    calib = calibration(8, batch=3)
    res = compile_model(model, [calib[0][0]], calib, a16=True)
    prog = parse_program(res.data)
    assert "ptec::quantized_lstm_a16.out" in ptec_only_operators(prog)
    want = run_program(prog, [calib[1][0].numpy()])[0]
    got = host_runtime.run(prog, res.data, [calib[1][0].numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_board_gives_the_reference_bytes(classifier, target, tmp_path):
    _, calib, _ = classifier
    torch.manual_seed(0)
    model = Classifier().eval()
    data = compile_model(model, [calib[0][0]], calib, target=target, a16=True).data
    assert "ptec::quantized_lstm_a16.out" in ptec_only_operators(parse_program(data))
    board_matches_reference(data, calib[2][0].numpy(), target, tmp_path)


@pytest.mark.parametrize("cls, ratio, bound", [(LSTMSequence, 0.5, 0.004), (Classifier, 0.5, 0.0012)])
def test_closer_to_float_than_the_int8_lstm(cls, ratio, bound):
    """Measured (seed 0, 16 calibration inputs): the output sequence's
    largest |error| per input averages 0.0017 with --a16 against 0.0039
    for the int8 LSTM (worst 0.0027 against 0.0047; outputs in [-1, 1]);
    the classifier's logits 0.0006 against 0.0016 (worst 0.0009 against
    0.0023). What remains is mostly the int8 weights, which both share.
    Bounds: the mean at most `ratio` of the int8 one, the worst below the
    int8 worst and below `bound`."""
    model, calib, res8 = build(cls)
    _, _, res16 = build(cls, a16=True)
    e8 = errors(model, parse_program(res8.data), calib)
    e16 = errors(model, parse_program(res16.data), calib)
    print(f"{cls.__name__}: int8 mean {e8.mean():.5f} worst {e8.max():.5f}; "
          f"a16 mean {e16.mean():.5f} worst {e16.max():.5f}")
    assert e16.mean() <= ratio * e8.mean()
    assert e16.max() < e8.max()
    assert e16.max() <= bound


def test_two_layers_pass_int16_between_them(tmp_path):
    """The second layer takes the first's int16 output as it is: the
    program quantizes the input once and dequantizes the output once.
    Measured: mean largest error 0.00055 against 0.0014 for int8."""
    model, calib, res8 = build(TwoLayers)
    _, _, res = build(TwoLayers, a16=True)
    prog = parse_program(res.data)
    assert kernel_calls(prog) == ["quantized_decomposed::quantize_per_tensor", "ptec::quantized_lstm_a16",
                                  "ptec::quantized_lstm_a16", "quantized_decomposed::dequantize_per_tensor"]
    want = run_program(prog, [calib[3][0].numpy()])[0]
    got = host_runtime.run(prog, res.data, [calib[3][0].numpy()], workdir=str(tmp_path))[0]
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert errors(model, prog, calib).mean() <= 0.5 * errors(model, parse_program(res8.data), calib).mean()


def test_a_selection_without_the_lstm_keeps_the_int8_kernel():
    _, _, res = build(Classifier, a16=["fc"])
    ops = ptec_only_operators(parse_program(res.data))
    assert "ptec::quantized_lstm.out" in ops and "ptec::quantized_lstm_a16.out" not in ops
    assert "ptec::quantized_linear_a16.out" in ops
