"""Fixes for probe 6's silent errors in transformer layers (issue 15):

1. nn.TransformerEncoderLayer / DecoderLayer given an activation function
   other than F.relu / F.gelu (torch.tanh, F.silu, a def, a lambda) ran as
   ReLU (7-23 output steps off); it is now called as the layer calls it;
2. a TransformerDecoderLayer whose activation is a module (nn.Tanh(),
   nn.GELU()) ran as ReLU too: torch 1.13's decoder layer __setstate__
   puts F.relu in the instance dict of every deepcopy, hiding the module,
   and ptec copies the user's model (model_copy removes such shadows).

Oracle: PyTorch float, within a bound in output quantization steps on
calibration-like inputs whose outputs vary (a wrong activation measured
7 steps or more on these layers); ptec-run gives the reference
interpreter's bytes (host_steps_from_float)."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec.compiler import compile_model
from ptec.model_copy import model_copy

from model_checks import host_steps_from_float


def _gelu_by_hand(x):
    return F.gelu(x)


ACTIVATIONS = {"torch.tanh": torch.tanh, "F.silu": F.silu, "a def": _gelu_by_hand,
               "a lambda": lambda v: F.relu(v) * 0.5 + torch.sigmoid(v), "nn.Tanh()": nn.Tanh(),
               "nn.GELU()": nn.GELU(), "nn.SiLU()": nn.SiLU()}


class _Decoder(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(8, 2, 16, activation=copy.deepcopy(act) if isinstance(act, nn.Module)
                                                else act, batch_first=True)

    def forward(self, x):
        return self.layer(x, x * 0.5)


def _samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 5, 8, generator=g),) for _ in range(n)]


@pytest.mark.parametrize("act", list(ACTIVATIONS), ids=list(ACTIVATIONS))
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_transformer_layer_runs_its_own_activation(kind, act, tmp_path):
    torch.manual_seed(0)
    a = ACTIVATIONS[act]
    m = (nn.TransformerEncoderLayer(8, 2, 16, activation=a, batch_first=True) if kind == "encoder"
         else _Decoder(a)).eval()
    cal = _samples(16, 1)
    res = compile_model(m, cal[0], cal)
    assert host_steps_from_float(m, res, cal[:4], tmp_path) <= 4.0


def test_model_copy_keeps_a_decoder_layers_module_activation():
    torch.manual_seed(0)
    m = _Decoder(nn.Tanh()).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        want = m(x)
        assert not torch.equal(copy.deepcopy(m)(x), want)      # torch's own deepcopy runs ReLU here
        assert torch.equal(model_copy(m)(x), want)
