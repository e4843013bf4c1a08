"""--a16 fixes (session 20): torch is the oracle throughout.

1. The int16 softmax saturates its last narrowing: a softmax over a dim of
   size 1 (nn.MultiheadAttention with one key) rounded to 32768 and came
   out -1.0; now 32767/32768, one int16 step below torch's 1.0. The host
   runtime gives the Python reference's bytes.
2. Transposes around int16 values stay int16 (aten::permute_copy): a
   seq-first nn.LSTM / nn.MultiheadAttention (torch's default layout) gets
   the batch_first layer's int16 accuracy instead of an int8 rounding
   before the program output.
3. A conv's reflect / replicate pad (aten::*_pad2d) and circular pad
   (slices and cats) carry int16, so padding_mode no longer costs the int16
   input.
Errors are in the int8 output's quantization steps (the program's output
node grid) unless said otherwise; measured values are in each docstring."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.pte.schema import KernelCall

INT16_STEP = 1.0 / 32768


def kernel_calls(prog):
    plan = prog.execution_plan[0]
    return [plan.operators[ins.instr_args.op_index].name for chain in plan.chains
            for ins in chain.instructions if isinstance(ins.instr_args, KernelCall)]


def host(res, inputs, tmp_path):
    return host_runtime.run(parse_program(res.data), res.data, [np.asarray(x) for x in inputs],
                            workdir=str(tmp_path))


def steps(model, res, calib, tmp_path):
    """Per output: the largest |ptec - torch| over the inputs, in steps of
    the output's int8 grid."""
    worst = None
    for xs in calib:
        with torch.no_grad():
            want = model(*xs)
        want = want if isinstance(want, tuple) else (want,)
        got = host(res, [x.numpy() for x in xs], tmp_path)
        e = [float(np.abs(np.asarray(g, np.float64) - w.numpy()).max()) / res.graph.node(o).qparams[0]
             for g, w, o in zip(got, want, res.graph.outputs)]
        worst = e if worst is None else [max(a, b) for a, b in zip(worst, e)]
    return worst


# -- 1. the int16 softmax's saturation ------------------------------------------

class OneWide(nn.Module):
    """A softmax over a dim of size 1: torch gives 1.0 everywhere."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 1)

    def forward(self, x):
        return torch.softmax(self.l(x), -1)


class EqualRow(nn.Module):
    """Three equal logits per row (equal weight rows and biases): 1/3 each."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 3)
        with torch.no_grad():
            self.l.weight[1:] = self.l.weight[0]
            self.l.bias[1:] = self.l.bias[0]

    def forward(self, x):
        return torch.softmax(self.l(x), -1)


class Dominant(nn.Module):
    """One logit far above the other (more than exp(10) apart): about [1, 0]."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 2)
        with torch.no_grad():
            self.l.weight.zero_()
            self.l.bias.copy_(torch.tensor([40.0, 0.0]))
            self.l.weight[0, 0] = 1.0

    def forward(self, x):
        return torch.softmax(self.l(x), -1)


def softmax_calib(n=8):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(3, 4, generator=g),) for _ in range(n)]


@pytest.mark.parametrize("cls, int16_steps", [(OneWide, 1), (EqualRow, 1), (Dominant, 1)])
def test_a16_softmax_rows_a_value_dominates(cls, int16_steps, tmp_path):
    """Measured: every output within one int16 step (1/32768) of torch
    (OneWide gives 32767/32768 where it gave -1.0); the host runtime gives
    the reference's bytes."""
    torch.manual_seed(0)
    model, calib = cls().eval(), softmax_calib()
    res = compile_model(model, [calib[0][0]], calib, a16=True)
    prog = parse_program(res.data)
    assert "ptec::softmax_a16" in kernel_calls(prog)
    for (x,) in calib:
        got = host(res, [x.numpy()], tmp_path)[0]
        assert np.asarray(got).tobytes() == np.asarray(run_program(prog, [x.numpy()])[0]).tobytes()
        with torch.no_grad():
            want = model(x).numpy()
        assert np.abs(got - want).max() <= int16_steps * INT16_STEP + 1e-7, (got, want)


def test_int8_softmax_of_one_value_is_one_step_from_one(tmp_path):
    """The int8 softmax clamps (CMSIS-NN's arm_softmax_s8 does too): 1.0 is
    127 on the 1/256 grid, one int8 step below."""
    torch.manual_seed(0)
    model, calib = OneWide().eval(), softmax_calib()
    res = compile_model(model, [calib[0][0]], calib)
    for (x,) in calib[:3]:
        got = host(res, [x.numpy()], tmp_path)[0]
        assert np.all(got > 0.99) and np.abs(got - 1.0).max() <= 1.0 / 256 + 1e-7


class Attention(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.a = nn.MultiheadAttention(16, 2, batch_first=batch_first)

    def forward(self, q, k):
        return self.a(q, k, k)


def attention_calib(keys, batch_first, n=8):
    g = torch.Generator().manual_seed(2)
    xs = [(torch.randn(2, 4, 16, generator=g), torch.randn(2, keys, 16, generator=g)) for _ in range(n)]
    return xs if batch_first else [tuple(t.transpose(0, 1).contiguous() for t in x) for x in xs]


def test_attention_with_one_key(tmp_path):
    """One key: every weight is 1.0 and the output is out_proj(v_proj(k)).
    Measured: a16 weights 0.0078 int8 steps (one int16 step) from 1.0,
    output 1.55 steps; int8 weights 1.0 step, output 1.89. Before the fix
    the a16 weights were -1.0 (512 steps) and the output 129 steps off."""
    torch.manual_seed(0)
    model, calib = Attention(False).eval(), attention_calib(1, False)
    e8 = steps(model, compile_model(model, list(calib[0]), calib), calib, tmp_path)
    e16 = steps(model, compile_model(model, list(calib[0]), calib, a16=True), calib, tmp_path)
    print("int8", e8, "a16", e16)
    assert e16[1] <= 256 * INT16_STEP + 1e-6      # one int16 step, in int8 steps of 1/256
    assert e16[0] <= 2.0 and e16[0] < e8[0]


# -- 2. transposes around int16 values ------------------------------------------

class LSTM(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.l = nn.LSTM(12, 24, batch_first=batch_first)

    def forward(self, x):
        return self.l(x)[0]


def lstm_calib(batch, batch_first, n=8):
    g = torch.Generator().manual_seed(3)
    xs = [torch.randn(batch, 5, 12, generator=g) for _ in range(n)]
    return [(x if batch_first else x.transpose(0, 1).contiguous(),) for x in xs]


@pytest.mark.parametrize("batch", [1, 2])
def test_seq_first_lstm_gets_the_batch_first_int16_accuracy(batch, tmp_path):
    """The seq-first layer's program is the batch_first one's with int16
    transposes (a view at B = 1), so on the same sequences it gives the same
    values exactly. Measured (steps, worst over 8 inputs): B=1 int8 1.33,
    a16 0.63 in both layouts; B=2 int8 1.15, a16 0.55 in both (before:
    seq-first a16 1.33 and 1.18, no better than int8: an int8 rounding
    before the output)."""
    torch.manual_seed(0)
    first = LSTM(False).eval()
    torch.manual_seed(0)
    bf = LSTM(True).eval()
    calib_sf, calib_bf = lstm_calib(batch, False), lstm_calib(batch, True)
    res8 = compile_model(first, [calib_sf[0][0]], calib_sf)
    res16 = compile_model(first, [calib_sf[0][0]], calib_sf, a16=True)
    res16_bf = compile_model(bf, [calib_bf[0][0]], calib_bf, a16=True)
    calls = kernel_calls(parse_program(res16.data))
    # no int8 on the way out: int16 LSTM, then the one dequantize of the output
    assert calls[calls.index("ptec::quantized_lstm_a16"):] == ["ptec::quantized_lstm_a16"] + \
        (["aten::permute_copy"] if batch > 1 else []) + ["quantized_decomposed::dequantize_per_tensor"]
    for (xs,), (xb,) in zip(calib_sf[:3], calib_bf[:3]):
        ys = host(res16, [xs.numpy()], tmp_path)[0]
        yb = host(res16_bf, [xb.numpy()], tmp_path)[0]
        assert np.array_equal(ys, yb.transpose(1, 0, 2))
        assert ys.tobytes() == np.asarray(run_program(parse_program(res16.data), [xs.numpy()])[0]).tobytes()
    e8 = steps(first, res8, calib_sf, tmp_path)[0]
    e16 = steps(first, res16, calib_sf, tmp_path)[0]
    e16_bf = steps(bf, res16_bf, calib_bf, tmp_path)[0]
    print(f"B={batch}: int8 {e8:.2f} a16 {e16:.2f} batch_first a16 {e16_bf:.2f}")
    assert e16 <= 1.05 * e16_bf + 0.01
    assert e16 <= 0.6 * e8 and e16 <= 0.8


def test_seq_first_attention_gets_the_batch_first_int16_accuracy(tmp_path):
    """Five keys, seq-first against batch_first on the same values: equal
    outputs. Measured (steps, worst over 8 inputs): int8 output 2.90,
    weights 1.13; a16 2.77 and 0.70 in both layouts (before: seq-first a16
    2.90 and 1.13, no better than int8). The output gains little: the two
    matmuls stay int8 (no int16 batch matmul)."""
    torch.manual_seed(0)
    first = Attention(False).eval()
    torch.manual_seed(0)
    bf = Attention(True).eval()
    calib_sf, calib_bf = attention_calib(5, False), attention_calib(5, True)
    res8 = compile_model(first, list(calib_sf[0]), calib_sf)
    res16 = compile_model(first, list(calib_sf[0]), calib_sf, a16=True)
    res16_bf = compile_model(bf, list(calib_bf[0]), calib_bf, a16=True)
    for xs, xb in zip(calib_sf[:2], calib_bf[:2]):
        ys = host(res16, [t.numpy() for t in xs], tmp_path)
        yb = host(res16_bf, [t.numpy() for t in xb], tmp_path)
        assert np.array_equal(ys[0], yb[0].transpose(1, 0, 2)) and np.array_equal(ys[1], yb[1])
    e8 = steps(first, res8, calib_sf, tmp_path)
    e16 = steps(first, res16, calib_sf, tmp_path)
    print("int8", e8, "a16", e16)
    assert e16[0] <= e8[0] and e16[1] <= 0.7 * e8[1]


# -- 3. conv padding modes ------------------------------------------------------

class PaddedConvs(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1, padding_mode=mode)
        self.d = nn.Conv2d(8, 4, 3, padding=1, padding_mode=mode)

    def forward(self, x):
        return self.d(torch.relu(self.c(x)))


@pytest.mark.parametrize("mode, pad_call", [("zeros", None), ("reflect", "aten::reflection_pad2d"),
                                            ("replicate", "aten::replication_pad2d"),
                                            ("circular", "aten::slice_copy")])
def test_padding_modes_keep_int16(mode, pad_call, tmp_path):
    """Measured (steps, worst over 8 inputs): int8 1.73 / 1.61 / 1.40 /
    1.75 for zeros / reflect / replicate / circular; a16 0.62 / 0.60 / 0.67
    / 0.62 (before: reflect, replicate and circular a16 1.41, 1.23 and 1.52:
    the padded input was int8). The pads run between the int16 conversion
    and the int16 conv: no int8 quantize in the program."""
    torch.manual_seed(0)
    model = PaddedConvs(mode).eval()
    g = torch.Generator().manual_seed(4)
    calib = [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(8)]
    e8 = steps(model, compile_model(model, [calib[0][0]], calib), calib, tmp_path)[0]
    res16 = compile_model(model, [calib[0][0]], calib, a16=True)
    calls = kernel_calls(parse_program(res16.data))
    assert "cortex_m::quantize_per_tensor" not in calls and "cortex_m::dequantize_per_tensor" not in calls
    if pad_call:
        assert pad_call in calls
    x = calib[0][0].numpy()     # the int16 moves in C give the reference interpreter's bytes
    assert host(res16, [x], tmp_path)[0].tobytes() == \
        np.asarray(run_program(parse_program(res16.data), [x])[0]).tobytes()
    e16 = steps(model, res16, calib, tmp_path)[0]
    print(f"{mode}: int8 {e8:.2f} a16 {e16:.2f}")
    assert e16 <= 0.6 * e8 and e16 <= 0.9


class Volume(nn.Module):
    """nn.Conv3d is per-depth 2-D convs over slices of the input's depths,
    joined by cats; the second layer pads reflect."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(2, 4, 3, padding=1)
        self.d = nn.Conv3d(4, 3, 3, padding=1, padding_mode="reflect")

    def forward(self, x):
        return self.d(torch.relu(self.c(x)))


def test_conv3d_slices_and_joins_in_int16(tmp_path):
    """The input's depth slices and their joins are int16; the join of the
    per-depth outputs (each on its own int16 grid) stays int8. Measured
    (steps, worst over 6 inputs): int8 1.97, a16 1.21 (before: 1.97)."""
    torch.manual_seed(0)
    model = Volume().eval()
    g = torch.Generator().manual_seed(0)
    calib = [(torch.randn(1, 2, 4, 6, 6, generator=g),) for _ in range(6)]
    e8 = steps(model, compile_model(model, [calib[0][0]], calib), calib, tmp_path)[0]
    e16 = steps(model, compile_model(model, [calib[0][0]], calib, a16=True), calib, tmp_path)[0]
    print(f"Conv3d: int8 {e8:.2f} a16 {e16:.2f}")
    assert e16 <= 0.75 * e8 and e16 <= 1.5
