"""Sequence models for the benchmarks and examples (issue 15): a GRU keyword
spotter and an LSTM sequence classifier over 49 frames of 10 MFCCs (the
MLPerf Tiny KWS input, shortened to 12 steps by a strided Conv1d), an SVDF
keyword spotter over the same input (ptec.nn.SVDF, no unrolling), and a
one-layer transformer encoder over 16 tokens.
Random weights (seeded): the figures they give are instruction counts and
sizes, which do not depend on the values.

    python3 -m ptec compile python/ptec/models/sequence.py:gru_kws --target cortex-m33 -o gru.pte
"""
import torch
import torch.nn as nn


class _Calibrated(nn.Module):
    def calibration_data(self, n, seed=0):
        g = torch.Generator().manual_seed(seed)
        return [(torch.randn(*self.input_shape, generator=g),) for _ in range(n)]


class RecurrentKWS(_Calibrated):
    """A CRNN keyword spotter: a strided Conv1d front end over the 49 MFCC
    frames (12 steps, as CRNN spotters shorten the sequence before the
    recurrent layer), then the GRU or LSTM, its last output, a classifier."""

    def __init__(self, kind: str, hidden: int, layers: int, classes: int = 12):
        super().__init__()
        rnn = nn.GRU if kind == "gru" else nn.LSTM
        self.front = nn.Sequential(nn.Conv1d(10, 32, 5, stride=4), nn.BatchNorm1d(32), nn.ReLU())
        self.rnn = rnn(32, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, classes)
        self.input_shape = (1, 10, 49)               # [batch, MFCC, frames]

    def forward(self, x):
        y, _ = self.rnn(self.front(x).transpose(1, 2))
        return self.fc(y[:, -1])


class SvdfKWS(_Calibrated):
    """The same front end, then two SVDF layers (64 units of rank 1 over 8
    steps, then 64 of rank 1 over 4; relu) and a classifier of the last
    step: a streaming spotter whose sequence model is one kernel call per
    layer."""

    def __init__(self, classes: int = 12):
        super().__init__()
        from ptec.nn import SVDF
        self.front = nn.Sequential(nn.Conv1d(10, 32, 5, stride=4), nn.BatchNorm1d(32), nn.ReLU())
        self.svdf1 = SVDF(32, 64, 1, 8, activation="relu")
        self.svdf2 = SVDF(64, 64, 1, 4, activation="relu")
        self.fc = nn.Linear(64, classes)
        self.input_shape = (1, 10, 49)

    def forward(self, x):
        y = self.svdf2(self.svdf1(self.front(x).transpose(1, 2)))
        return self.fc(y[:, -1])


class TinyTransformer(_Calibrated):
    def __init__(self, dim: int = 32, heads: int = 4, classes: int = 6):
        super().__init__()
        self.embed = nn.Linear(12, dim)
        self.encoder = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True,
                                                  activation="gelu", norm_first=True)
        self.fc = nn.Linear(dim, classes)
        self.input_shape = (1, 16, 12)

    def forward(self, x):
        return self.fc(self.encoder(self.embed(x)).mean(1))


def gru_kws():
    torch.manual_seed(0)
    return RecurrentKWS("gru", 64, 1).eval()


def lstm_classifier():
    torch.manual_seed(0)
    return RecurrentKWS("lstm", 32, 1).eval()


def svdf_kws():
    torch.manual_seed(0)
    return SvdfKWS().eval()


def transformer():
    torch.manual_seed(0)
    return TinyTransformer().eval()
