"""A small CNN for sklearn's bundled 8x8 digits, trained deterministically
in a few seconds (no download). Input 1x1x8x8 (pixels scaled to [0, 1]),
10 classes."""
from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn as nn


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        return self.fc(self.flatten(x))


@functools.lru_cache(maxsize=1)
def digits_dataset():
    """(x_train, y_train, x_test, y_test): float32 [N,1,8,8] in [0,1], int64 labels.
    A fixed split: every 5th sample is a test sample."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = d.target.astype(np.int64)
    test = np.arange(len(y)) % 5 == 0
    return x[~test], y[~test], x[test], y[test]


def train_digits(epochs: int = 60, seed: int = 0) -> DigitsCNN:
    """The trained CNN. Trained once per process (tests load the zoo model
    many times, as ptec.models' _fitted_weights); each call returns a fresh
    module and leaves torch's global generator where training leaves it
    (seeded, then drawn from by the layers' initialisation)."""
    torch.manual_seed(seed)
    model = DigitsCNN()
    model.load_state_dict(_trained_state(epochs, seed))
    return model.eval()


@functools.lru_cache(maxsize=4)
def _trained_state(epochs: int, seed: int):
    torch.manual_seed(seed)
    xtr, ytr, _, _ = digits_dataset()
    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.from_numpy(xtr), torch.from_numpy(ytr)
    g = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(y), generator=g)
        for i in range(0, len(y), 128):
            idx = perm[i:i + 128]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def accuracy(fn, x: np.ndarray, y: np.ndarray) -> float:
    with torch.no_grad():
        pred = np.argmax(np.asarray(fn(torch.from_numpy(x))), axis=1)
    return float((pred == y).mean())
