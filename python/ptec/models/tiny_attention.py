"""A tiny transformer-encoder classifier for sensor or keyword features:
16 time steps x 12 features are embedded to 32 dims plus a learned
position embedding, one single-head
self-attention block (linear q/k/v, q @ k^T scaled, softmax over keys,
@ v, output projection, residual), one GELU feed-forward block (residual),
and a linear head over all time steps to 6 classes. No layer norm: ptec has no
int8 kernel for it, and a model this shallow trains without it."""
import functools

import torch
import torch.nn as nn


class TinyAttention(nn.Module):
    def __init__(self, tokens: int = 16, features: int = 12, dim: int = 32, classes: int = 6):
        super().__init__()
        self.embed = nn.Linear(features, dim)
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.1)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ff1 = nn.Linear(dim, 2 * dim)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(2 * dim, dim)
        self.head = nn.Linear(tokens * dim, classes)
        self.scale = dim ** -0.5

    def forward(self, x):                                      # x: [N, tokens, features]
        h = self.embed(x) + self.position
        q, k, v = self.q(h), self.k(h), self.v(h)
        attention = torch.softmax(q @ k.transpose(1, 2) * self.scale, dim=-1)
        h = h + self.proj(attention @ v)
        h = h + self.ff2(self.act(self.ff1(h)))
        return self.head(torch.flatten(h, 1))


TOKENS, FEATURES, CLASSES = 16, 12, 6


def synthetic_sequences(n: int, seed: int = 0):
    """A stand-in sensor task with no download: class c is a sinusoid with
    c + 1 periods over the 16 steps, seen through a fixed random mix of 12
    channels with per-sample phase, amplitude and noise. Returns float32
    x [n, 16, 12] and int64 labels [n]."""
    mix = torch.randn(2, FEATURES, generator=torch.Generator().manual_seed(12345))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    t = torch.arange(TOKENS, dtype=torch.float32) / TOKENS
    phase = torch.rand(n, 1, generator=g) * 6.2832
    angle = 6.2832 * (y.float() + 1).unsqueeze(1) * t + phase          # [n, T]
    wave = torch.stack([torch.sin(angle), torch.cos(angle)], -1)         # [n, T, 2]
    amp = 0.5 + torch.rand(n, 1, 1, generator=g)
    x = amp * (wave @ mix) + 0.2 * torch.randn(n, TOKENS, FEATURES, generator=g)
    return x, y


def train_tiny_attention(steps: int = 120, seed: int = 0) -> TinyAttention:
    """Trained in about 2 s; the weights are kept per process (tests load the
    zoo model many times), each call returns a fresh module."""
    model = TinyAttention(TOKENS, FEATURES, 32, CLASSES)
    model.load_state_dict(_trained_weights(steps, seed))
    return model.eval()


@functools.lru_cache(maxsize=4)
def _trained_weights(steps: int, seed: int):
    torch.manual_seed(seed)
    model = TinyAttention(TOKENS, FEATURES, 32, CLASSES)
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    x, y = synthetic_sequences(2048, seed)
    g = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, len(y), (64,), generator=g)
        opt.zero_grad()
        # label smoothing keeps the logits moderate, as a deployed classifier would want
        nn.functional.cross_entropy(model(x[idx]), y[idx], label_smoothing=0.1).backward()
        opt.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def calibration(n: int, seed: int = 0):
    x, _ = synthetic_sequences(n, 7000 + seed)
    return [(x[i:i + 1],) for i in range(n)]
