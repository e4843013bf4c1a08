"""A model of one call: Call(fn) runs fn on its inputs, so a test can
compile any function of tensors as a module (shared by the tests that
compile lambdas)."""
import torch.nn as nn


class Call(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)
