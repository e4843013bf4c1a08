"""Fully connected autoencoder for machine-sound anomaly detection (MLPerf
Tiny AD shape): 640 inputs (5 frames x 128 mel bins), 128-wide layers, an
8-wide bottleneck, 640 outputs."""
import torch.nn as nn


def _dense(i, o):
    return [nn.Linear(i, o), nn.BatchNorm1d(o), nn.ReLU()]


class FCAutoencoder(nn.Module):
    def __init__(self, inputs: int = 640, hidden: int = 128, bottleneck: int = 8):
        super().__init__()
        layers = []
        dims = [inputs, hidden, hidden, hidden, hidden, bottleneck,
                hidden, hidden, hidden, hidden]
        for i, o in zip(dims[:-1], dims[1:]):
            layers += _dense(i, o)
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(hidden, inputs)

    def forward(self, x):
        return self.out(self.body(x))
