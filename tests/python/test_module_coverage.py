"""Every public nn.Module class of torch.nn has a known fate in ptec (issue
15: the refusal list shrinks to what the hardware truly cannot do, and it is
complete). The classes are found by walking torch.nn.modules, not listed by
hand, and the table below must hold exactly them: a torch release that adds a
module fails test_every_module_class_is_in_the_table until it is placed.

Each class is in one of four groups:
- RUNS: ptec compiles it (alone, as a submodule) and the host runtime gives
  the numpy reference interpreter's output, which stays within the row's
  bound of PyTorch float in output steps on the calibration inputs (uniform
  in [-3, 3]), whose float outputs span many steps. The row also says
  whether the program is int8 throughout or runs an fp32 kernel;
- RUNS_RANDOM: ptec compiles it and it draws random numbers on the device
  (a FractionalMaxPool without _random_samples): checked against torch's
  layer given the device's draws (the group's comment says why);
- REFUSED: compiling it is refused in one line that names it by module path
  and class, and docs/refused-operators.md lists it;
- NOT_INFERENCE: losses, containers and the like, each with its reason,
  which the test checks where it can (a loss is a torch _Loss, a container
  has no forward of its own).
Functions and tensor methods a forward calls: test_function_coverage.py."""
import inspect
import os
import re

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from ptec import host_runtime
from ptec.capture import CaptureError, capture
from ptec.compiler import CompileError, compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator, evaluate
from ptec.pte import parse_program


class Body(nn.Module):
    """The layer as a submodule, as in a real model (capture keeps a
    submodule whole; the root module itself is traced through)."""

    def __init__(self, layer):
        super().__init__()
        self.body = layer

    def forward(self, x):
        return self.body(x)


class Halves(nn.Module):
    """A two-input layer on the two halves of x along dim 1."""

    def __init__(self, layer):
        super().__init__()
        self.m = layer

    def forward(self, x):
        a, b = x.chunk(2, 1)
        return self.m(a, b)


class FirstOutput(nn.Module):
    """A layer returning (output, state): the output."""

    def __init__(self, layer):
        super().__init__()
        self.m = layer

    def forward(self, x):
        return self.m(x)[0]


class SelfAttention(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.m = layer

    def forward(self, x):
        return self.m(x, x, x)[0]


class SourceIsTarget(nn.Module):
    """nn.Transformer and its decoder on (x, x): the decoder's cross-attention."""

    def __init__(self, layer):
        super().__init__()
        self.m = layer

    def forward(self, x):
        return self.m(x, x)


class Unpool(nn.Module):
    def __init__(self, pool, unpool):
        super().__init__()
        self.pool, self.unpool = pool, unpool

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i)


class TokenShape(tuple):
    """The shape of an int64 input of token ids in [0, vocab) (nn.Embedding)."""

    def __new__(cls, vocab, shape):
        t = super().__new__(cls, shape)
        t.vocab = vocab
        return t


def encoder_layer():
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


def decoder_layer():
    return nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)


N3, N4, N5 = (1, 3, 8), (1, 3, 4, 4), (1, 2, 3, 4, 4)

# class: (layer, input shape, bound in output steps, "int8": every op an
# int8 kernel, or "fp32": an fp32 kernel between a dequantize and a quantize).
# Bounds: the measured worst (seeded inputs) rounded up to a half step. A
# copy of int8 bytes is off by the input's own rounding, half a step; a
# requantization or LUT adds half a step and the input's rounding times the
# function's slope; a chain adds them.
RUNS = {
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d(1), (1, 2, 2, 2, 2), 0.5, "int8"),
    "AdaptiveMaxPool3d": (lambda: nn.AdaptiveMaxPool3d(1), (1, 2, 2, 2, 2), 0.5, "int8"),
    "AvgPool3d": (lambda: nn.AvgPool3d(2), (1, 1, 2, 2, 2), 1.0, "int8"),
    "BatchNorm3d": (lambda: nn.BatchNorm3d(2), (1, 2, 2, 2, 2), 0.5, "int8"),
    "ConstantPad3d": (lambda: nn.ConstantPad3d(1, 0.5), (1, 1, 2, 2, 2), 0.5, "int8"),
    "InstanceNorm3d": (lambda: nn.InstanceNorm3d(2), (1, 2, 2, 2, 2), 0.5, "fp32"),
    "LazyBatchNorm3d": (lambda: nn.LazyBatchNorm3d(), (1, 2, 2, 2, 2), 0.5, "int8"),
    "LazyInstanceNorm3d": (lambda: nn.LazyInstanceNorm3d(), (1, 2, 2, 2, 2), 0.5, "int8"),
    "MaxPool3d": (lambda: nn.MaxPool3d(2), (1, 1, 2, 2, 2), 0.5, "int8"),
    "ReflectionPad3d": (lambda: nn.ReflectionPad3d(1), (1, 1, 2, 2, 2), 0.5, "int8"),
    "ReplicationPad3d": (lambda: nn.ReplicationPad3d(1), (1, 1, 2, 2, 2), 0.5, "int8"),
    "ConvTranspose3d": (lambda: nn.ConvTranspose3d(1, 1, 2), (1, 1, 2, 2, 2), 1.5, "int8"),
    "CrossMapLRN2d": (lambda: nn.CrossMapLRN2d(2), (1, 4, 2, 2), 1.0, "int8"),
    "LazyConvTranspose3d": (lambda: nn.LazyConvTranspose3d(1, 2), (1, 1, 2, 2, 2), 1.5, "int8"),
    "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(2), N3, 1.0, "int8"),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d(2), N4, 1.0, "int8"),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(2), N3, 0.5, "int8"),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(2), N4, 0.5, "int8"),
    "AlphaDropout": (lambda: nn.AlphaDropout(0.2), N3, 0.5, "int8"),
    "AvgPool1d": (lambda: nn.AvgPool1d(2), N3, 1.0, "int8"),
    "AvgPool2d": (lambda: nn.AvgPool2d(2), N4, 1.0, "int8"),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(3), N3, 0.5, "int8"),
    "Bilinear": (lambda: Halves(nn.Bilinear(4, 4, 5)), (1, 8), 1.5, "int8"),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3), N4, 0.5, "int8"),
    "CELU": (lambda: nn.CELU(0.7), N3, 1.5, "int8"),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), (1, 4, 2, 2), 0.5, "int8"),
    "ConstantPad1d": (lambda: nn.ConstantPad1d(1, 0.5), N3, 0.5, "int8"),
    "ConstantPad2d": (lambda: nn.ConstantPad2d(1, 0.5), N4, 0.5, "int8"),
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3), N3, 1.0, "int8"),
    "Conv2d": (lambda: nn.Conv2d(3, 4, 3), N4, 1.5, "int8"),
    "Conv3d": (lambda: nn.Conv3d(2, 3, 2), N5, 1.5, "int8"),
    "ConvTranspose1d": (lambda: nn.ConvTranspose1d(3, 4, 3, stride=2), N3, 1.0, "int8"),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), N4, 1.0, "int8"),
    "CosineSimilarity": (lambda: Halves(nn.CosineSimilarity(dim=1)), (1, 8, 4), 1.5, "fp32"),     # 1.10
    "Dropout": (lambda: nn.Dropout(), N3, 0.5, "int8"),
    "Dropout1d": (lambda: nn.Dropout1d(), N3, 0.5, "int8"),
    "Dropout2d": (lambda: nn.Dropout2d(), N4, 0.5, "int8"),
    "Dropout3d": (lambda: nn.Dropout3d(), N5, 0.5, "int8"),
    "ELU": (lambda: nn.ELU(), N3, 1.5, "int8"),
    "FeatureAlphaDropout": (lambda: nn.FeatureAlphaDropout(), N4, 0.5, "int8"),
    "Flatten": (lambda: nn.Flatten(), N4, 0.5, "int8"),
    "Fold": (lambda: nn.Fold((4, 4), 2, stride=2), (1, 12, 4), 0.5, "int8"),
    "GELU": (lambda: nn.GELU(), N3, 1.5, "int8"),
    "GLU": (lambda: nn.GLU(), N3, 1.0, "int8"),
    "GRU": (lambda: FirstOutput(nn.GRU(4, 5, batch_first=True)), (1, 3, 4), 3.0, "int8"),
    "GRUCell": (lambda: nn.GRUCell(4, 5), (1, 4), 1.5, "int8"),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (1, 4, 2, 2), 0.5, "fp32"),
    "Hardshrink": (lambda: nn.Hardshrink(0.3), N3, 0.5, "int8"),
    "Hardsigmoid": (lambda: nn.Hardsigmoid(), N3, 1.0, "int8"),
    "Hardswish": (lambda: nn.Hardswish(), N3, 1.5, "int8"),
    # the input, read by the clamp alone, is calibrated to its range (ptec.narrow_clamps): 0.92 of that
    # grid's steps, 4.6x finer than the input's own (0.48 of those): 0.0113 -> 0.0047 from float
    "Hardtanh": (lambda: nn.Hardtanh(-0.5, 0.8), N3, 1.0, "int8"),
    "Identity": (lambda: nn.Identity(), N3, 0.5, "int8"),
    "InstanceNorm1d": (lambda: nn.InstanceNorm1d(3), N3, 0.5, "fp32"),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3), N4, 0.5, "fp32"),
    "LPPool1d": (lambda: nn.LPPool1d(2, 2), N3, 1.5, "fp32"),     # x^p, mean, root in fp32
    "LPPool2d": (lambda: nn.LPPool2d(2, 2), N4, 1.5, "fp32"),
    "LSTM": (lambda: FirstOutput(nn.LSTM(4, 5, batch_first=True)), (1, 3, 4), 1.0, "int8"),
    "LSTMCell": (lambda: FirstOutput(nn.LSTMCell(4, 5)), (1, 4), 1.5, "int8"),
    "LayerNorm": (lambda: nn.LayerNorm(8), N3, 0.5, "fp32"),
    # lazy modules take their shapes on the first call (the test calls
    # each layer once before compiling): then they are the plain module
    "LazyBatchNorm1d": (lambda: nn.LazyBatchNorm1d(), N3, 0.5, "int8"),
    "LazyBatchNorm2d": (lambda: nn.LazyBatchNorm2d(), N4, 0.5, "int8"),
    "LazyConv1d": (lambda: nn.LazyConv1d(4, 3), N3, 1.0, "int8"),
    "LazyConv2d": (lambda: nn.LazyConv2d(4, 3), N4, 1.5, "int8"),
    "LazyConv3d": (lambda: nn.LazyConv3d(3, 2), N5, 1.5, "int8"),
    "LazyConvTranspose1d": (lambda: nn.LazyConvTranspose1d(4, 3, stride=2), N3, 1.0, "int8"),
    "LazyConvTranspose2d": (lambda: nn.LazyConvTranspose2d(4, 3, stride=2), N4, 1.0, "int8"),
    # (the lazy instance norms default to running statistics: in eval a batch-norm)
    "LazyInstanceNorm1d": (lambda: nn.LazyInstanceNorm1d(), N3, 0.5, "int8"),
    "LazyInstanceNorm2d": (lambda: nn.LazyInstanceNorm2d(), N4, 0.5, "int8"),
    "LazyLinear": (lambda: nn.LazyLinear(5), (1, 8), 1.0, "int8"),
    "LeakyReLU": (lambda: nn.LeakyReLU(0.1), N3, 1.5, "int8"),
    "Linear": (lambda: nn.Linear(8, 5), (1, 8), 1.0, "int8"),
    "LocalResponseNorm": (lambda: nn.LocalResponseNorm(2), (1, 4, 2, 2), 0.5, "int8"),
    "LogSigmoid": (lambda: nn.LogSigmoid(), N3, 1.5, "int8"),
    "LogSoftmax": (lambda: nn.LogSoftmax(-1), N3, 0.5, "fp32"),
    "MaxPool1d": (lambda: nn.MaxPool1d(2), N3, 0.5, "int8"),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), N4, 0.5, "int8"),
    "Mish": (lambda: nn.Mish(), N3, 1.5, "int8"),
    "MultiheadAttention": (lambda: SelfAttention(nn.MultiheadAttention(8, 2, batch_first=True)), (1, 4, 8),
                           2.5, "int8"),
    "PReLU": (lambda: nn.PReLU(3), N4, 1.5, "int8"),
    "PairwiseDistance": (lambda: Halves(nn.PairwiseDistance()), (1, 8), 1.0, "fp32"),   # ptec.fp32_statistics
    "PixelShuffle": (lambda: nn.PixelShuffle(2), (1, 4, 2, 2), 0.5, "int8"),
    "PixelUnshuffle": (lambda: nn.PixelUnshuffle(2), (1, 1, 4, 4), 0.5, "int8"),
    "RNN": (lambda: FirstOutput(nn.RNN(4, 5, batch_first=True)), (1, 3, 4), 2.0, "int8"),
    "RNNCell": (lambda: nn.RNNCell(4, 5), (1, 4), 1.5, "int8"),
    "RReLU": (lambda: nn.RReLU(), N3, 1.5, "int8"),
    "ReLU": (lambda: nn.ReLU(), N3, 0.5, "int8"),
    "ReLU6": (lambda: nn.ReLU6(), N3, 0.5, "int8"),
    "ReflectionPad1d": (lambda: nn.ReflectionPad1d(1), N3, 0.5, "int8"),
    "ReflectionPad2d": (lambda: nn.ReflectionPad2d(1), N4, 0.5, "int8"),
    "ReplicationPad1d": (lambda: nn.ReplicationPad1d(1), N3, 0.5, "int8"),
    "ReplicationPad2d": (lambda: nn.ReplicationPad2d(1), N4, 0.5, "int8"),
    "SELU": (lambda: nn.SELU(), N3, 1.5, "int8"),
    "Sequential": (lambda: nn.Sequential(nn.Linear(8, 5), nn.ReLU()), (1, 8), 1.0, "int8"),
    "SiLU": (lambda: nn.SiLU(), N3, 1.5, "int8"),
    "Sigmoid": (lambda: nn.Sigmoid(), N3, 1.5, "int8"),
    "Softmax": (lambda: nn.Softmax(-1), N3, 1.5, "int8"),
    "Softmax2d": (lambda: nn.Softmax2d(), N4, 1.5, "int8"),
    "Softmin": (lambda: nn.Softmin(-1), N3, 1.5, "int8"),
    "Softplus": (lambda: nn.Softplus(), N3, 1.5, "int8"),
    "Softshrink": (lambda: nn.Softshrink(0.3), N3, 1.5, "int8"),
    "Softsign": (lambda: nn.Softsign(), N3, 2.0, "int8"),
    "Tanh": (lambda: nn.Tanh(), N3, 2.0, "int8"),
    "Tanhshrink": (lambda: nn.Tanhshrink(), N3, 1.5, "int8"),
    "Threshold": (lambda: nn.Threshold(0.1, -1.0), N3, 1.5, "int8"),
    "Transformer": (lambda: SourceIsTarget(nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True)),
                    (1, 4, 8), 3.5, "fp32"),
    "TransformerDecoder": (lambda: SourceIsTarget(nn.TransformerDecoder(decoder_layer(), 1)), (1, 4, 8), 2.0, "fp32"),
    "TransformerDecoderLayer": (lambda: SourceIsTarget(decoder_layer()), (1, 4, 8), 2.0, "fp32"),
    "TransformerEncoder": (lambda: nn.TransformerEncoder(encoder_layer(), 1), (1, 4, 8), 2.5, "fp32"),
    "TransformerEncoderLayer": (encoder_layer, (1, 4, 8), 2.5, "fp32"),
    "Unflatten": (lambda: nn.Unflatten(1, (2, 4)), (1, 8, 3), 0.5, "int8"),
    "Unfold": (lambda: nn.Unfold(2, stride=2), N4, 0.5, "int8"),
    "Upsample": (lambda: nn.Upsample(scale_factor=2), N4, 0.5, "int8"),
    "UpsamplingBilinear2d": (lambda: nn.UpsamplingBilinear2d(scale_factor=2), N4, 1.5, "int8"),
    "UpsamplingNearest2d": (lambda: nn.UpsamplingNearest2d(scale_factor=2), N4, 0.5, "int8"),
    "ZeroPad2d": (lambda: nn.ZeroPad2d(1), N4, 0.5, "int8"),
    # the pool's int64 indices (ptec::window_max.out) and the values put back at them (ptec::max_unpool.out)
    "MaxUnpool1d": (lambda: Unpool(nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)), N3, 0.5, "int8"),
    "MaxUnpool2d": (lambda: Unpool(nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)), N4, 0.5, "int8"),
    "MaxUnpool3d": (lambda: Unpool(nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)), (1, 1, 2, 4, 4), 0.5,
                    "int8"),
    # an int64 input of token ids: rows of the int8 table (aten::embedding.out)
    "Embedding": (lambda: nn.Embedding(10, 4), TokenShape(10, (2, 5)), 0.5, "int8"),
    # [B, L] ids: B bags of L ids (no offsets), their rows' mean
    "EmbeddingBag": (lambda: nn.EmbeddingBag(10, 4), TokenShape(10, (2, 5)), 1.0, "int8"),
}

# class: (layer, input shape, bound in output steps). Layers that draw random
# numbers on every call (ptec.random_layers: no _random_samples given). They
# run, but RUNS' check cannot apply: the float model draws its own regions,
# so ptec's output and the model's differ by design. Their own check: the
# host gives the reference interpreter's bytes, and torch's layer given the
# device's draws as _random_samples (ptec.reference.random_ops's PCG32
# stream from the node's seed, in torch's [N, C, dims] order) is within the
# bound of ptec's output (the int8 grid of the input: the pool copies).
RUNS_RANDOM = {
    "FractionalMaxPool2d": (lambda: nn.FractionalMaxPool2d(2, output_size=(3, 3)), (1, 2, 6, 6), 0.5),
    "FractionalMaxPool3d": (lambda: nn.FractionalMaxPool3d(2, output_size=(2, 3, 3)), (1, 2, 4, 6, 6), 0.5),
}

# class: (layer, input shape). Refused by module path; docs/refused-operators.md
# says why and what to use instead.
REFUSED = {
}

# ---- Owned by other branches (issue 15's 3-D pools, norms, pads, LRN, ...).
# The expectation is today's main: "refused". Update a row to a RUNS-style
# (bound, "int8"/"fp32") pair when the branch that makes it run merges.
LOSS = "a training loss: compares outputs with targets"
NO_FORWARD = "a container or base class with no forward of its own"

# class: reason. Kept short and checked below where a check exists.
NOT_INFERENCE = {
    **{name: LOSS for name in (
        "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
        "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss",
        "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "NLLLoss2d",
        "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss")},
    **{name: NO_FORWARD for name in (
        "Container", "Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "RNNBase",
        "RNNCellBase")},
    "AdaptiveLogSoftmaxWithLoss": "forward takes targets and returns a loss (its log_prob/predict are not forward)",
    "SyncBatchNorm": "multi-GPU training form of BatchNorm: its forward refuses CPU tensors in PyTorch itself",
}


def module_classes():
    """The public nn.Module classes torch.nn.modules exports."""
    import torch.nn.modules as mods
    return {name for name, obj in vars(mods).items()
            if inspect.isclass(obj) and issubclass(obj, nn.Module) and not name.startswith("_")}


GROUPS = {"RUNS": RUNS, "RUNS_RANDOM": RUNS_RANDOM, "REFUSED": REFUSED, "NOT_INFERENCE": NOT_INFERENCE}


def test_every_module_class_is_in_the_table():
    found = module_classes()
    assert len(found) > 100, len(found)                # the walk itself works
    placed = [name for group in GROUPS.values() for name in group]
    assert len(placed) == len(set(placed)), "a class is in two groups"
    new = sorted(found - set(placed))
    assert not new, f"torch.nn classes with no row here (place them in a group): {new}"
    gone = sorted(set(placed) - found)
    assert not gone, f"rows for classes this torch does not have: {gone}"


def inputs(shape, n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    if isinstance(shape, TokenShape):
        return [(torch.randint(0, shape.vocab, tuple(shape), generator=g),) for _ in range(n)]
    return [(torch.rand(shape, generator=g) * 6.0 - 3.0,) for _ in range(n)]


def compiled(make, shape):
    torch.manual_seed(0)
    model = Body(make()).eval()
    calibration = inputs(shape)
    with torch.no_grad():
        model(calibration[0][0])                      # lazy modules take their shapes here
    return model, calibration, compile_model(model, [calibration[0][0]], calibration)


def worst_steps(model, res, samples, workdir) -> float:
    """The largest |ptec - float| over samples in output steps, after
    checking ptec-run against the numpy reference interpreter: byte for byte
    when every kernel is int8; with an fp32 kernel, within one output step
    (the C library's expf/logf and numpy's differ in the last bits, which can
    move a value across a rounding edge)."""
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, low, high = 0.0, np.inf, -np.inf
    for (x,) in samples:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(workdir))[0]
        if res.lowered.outputs[0].dtype == "bfloat16":     # uint16 bit patterns: the top halves of float32s
            want, got = [(np.asarray(a, np.uint32) << 16).view(np.float32) for a in (want, got)]
        got = got.astype(np.float64)
        if res.lowered.fallbacks:
            assert np.abs(got - want).max() <= step * 1.001, "ptec-run is not the reference interpreter"
        else:
            assert got.tobytes() == want.astype(np.float64).tobytes(), "ptec-run differs from the reference interpreter"
        with torch.no_grad():
            ref = model(x)
            ref = (ref.float() if ref.dtype == torch.bfloat16 else ref).numpy().astype(np.float64)  # or float16
        low, high = min(low, ref.min()), max(high, ref.max())
        worst = max(worst, float(np.abs(got - ref).max() / step))
    assert high - low >= 16 * step, f"float outputs span only {(high - low) / step:.1f} steps"
    return worst


@pytest.mark.parametrize("cls", sorted(RUNS))
def test_runs_within_its_bound(cls, tmp_path):
    make, shape, bound, kind = RUNS[cls]
    model, calibration, res = compiled(make, shape)
    assert kind == ("fp32" if res.lowered.fallbacks else "int8"), res.lowered.fallbacks
    worst = worst_steps(model, res, calibration[:4], tmp_path)
    assert worst <= bound + 1e-3, f"{cls}: {worst:.2f} output steps from float (bound {bound})"


@pytest.mark.parametrize("cls", sorted(RUNS_RANDOM))
def test_random_layer_is_torch_given_the_device_draws(cls, tmp_path):
    from ptec.reference.random_ops import Pcg32
    make, shape, bound = RUNS_RANDOM[cls]
    model, calibration, res = compiled(make, shape)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    (x,) = calibration[0]
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes(), "ptec-run is not the reference"
    seeds = [n.attrs["seed"] for n in res.graph.nodes if n.op == "random_fractional_pick"]
    assert len(seeds) == 1
    rng, dims = Pcg32(seeds[0]), x.dim() - 2
    samples = torch.tensor([float(rng.next_float()) for _ in range(x.shape[0] * x.shape[1] * dims)])
    layer = model.body
    with torch.no_grad():
        want = type(layer)(layer.kernel_size, output_size=layer.output_size,
                           _random_samples=samples.reshape(x.shape[0], x.shape[1], dims))(x).numpy()
    worst = float(np.abs(got - want).max() / step)
    assert worst <= bound + 1e-3, f"{cls}: {worst:.2f} output steps from torch given the draws"


def refused_docs() -> str:
    with open(os.path.join(ROOT, "docs", "refused-operators.md")) as f:
        return f.read()


def assert_refused(make, shape, cls):
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compiled(make, shape)
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message, message
    # a lazy module is its plain class once it has its shapes
    assert re.search(rf"body(\.\w+)* \(nn\.{cls.replace('Lazy', '')}\)", message), message


def test_refused_by_name_and_listed():
    # a loop, not a parametrization: the group may be empty (every class runs
    # or is not inference), and an empty parametrization would be a skip
    for cls, (make, shape) in sorted(REFUSED.items()):
        assert_refused(make, shape, cls)
        assert f"`nn.{cls}" in refused_docs(), f"nn.{cls} is refused but docs/refused-operators.md does not list it"


@pytest.mark.parametrize("cls", sorted(NOT_INFERENCE))
def test_not_inference_reason_holds(cls):
    import torch.nn.modules.loss as loss
    obj = getattr(torch.nn.modules, cls)
    reason = NOT_INFERENCE[cls]
    if reason == LOSS:
        assert issubclass(obj, loss._Loss)
    elif reason == NO_FORWARD:
        assert "forward" not in {k for c in obj.__mro__ if c is not nn.Module for k in vars(c)}, cls
    elif cls == "SyncBatchNorm":
        with pytest.raises(ValueError):
            nn.SyncBatchNorm(2).eval()(torch.randn(1, 2, 2, 2))
    elif cls == "AdaptiveLogSoftmaxWithLoss":
        assert any(p.startswith("target") for p in inspect.signature(obj.forward).parameters)
    else:
        pytest.fail(f"no check for {cls}'s reason")


@pytest.mark.parametrize("shape", [(1, 6, 5), (1, 4, 2, 3, 2)], ids=["3-D", "5-D"])
def test_channel_shuffle_of_other_ranks(shape, tmp_path):
    """torch's ChannelShuffle takes [N, C, ...] of 3 or more dims: ptec's
    float graph is torch's, and its int8 program moves bytes (half a step)."""
    make = lambda: nn.ChannelShuffle(2)                     # noqa: E731
    model, calibration, res = compiled(make, shape)
    got = evaluate(capture(model, calibration[0]), [calibration[1][0]])
    with torch.no_grad():
        assert torch.equal(got[0], model(calibration[1][0]))
    assert not res.lowered.fallbacks
    assert worst_steps(model, res, calibration[:4], tmp_path) <= 0.5 + 1e-3


def test_channel_shuffle_of_2d_is_refused_in_one_line():
    x = torch.randn(4, 6)                                   # torch refuses it too: not run here
    with pytest.raises(CaptureError) as e:
        compile_model(Body(nn.ChannelShuffle(2)).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and message.startswith("body (nn.ChannelShuffle): "), message
