"""Deterministic synthetic tasks for the zoo models, so that their outputs
depend on their inputs (no download, each generated in milliseconds).

  - images: sinusoidal gratings; the class is the orientation (and, with
    more classes, the spatial frequency), with random phase, colour mix,
    contrast and noise;
  - MFCC-like frames [1, 49, 10]: the class fixes a temporal modulation
    frequency and a profile over the 10 coefficients;
  - machine-sound frames [640]: a few harmonic spectra with random weights
    (the normal operating sound an anomaly-detection autoencoder learns).

Every generator returns float32 x [n, ...] and int64 labels [n] (labels are
zeros for the autoencoder data), and is a pure function of (n, seed)."""
from __future__ import annotations

import math

import torch

_FIXED = 4242          # seed of the fixed parts of every task (profiles, spectra)


def gratings(n: int, seed: int, channels: int, size: int, classes: int):
    """Class c: orientation (c % orientations) * pi / orientations, frequency
    index c // orientations (2 frequencies when there are more than 4 classes)."""
    g = torch.Generator().manual_seed(seed)
    freqs = [3.0, 7.0] if classes > 4 else [4.0]
    orientations = classes // len(freqs)
    y = torch.randint(0, classes, (n,), generator=g)
    theta = (y % orientations).float() * math.pi / orientations
    freq = torch.tensor(freqs)[y // orientations]
    coords = torch.arange(size, dtype=torch.float32) / size
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    phase = torch.rand(n, generator=g) * 2 * math.pi
    along = (xx[None] * torch.cos(theta)[:, None, None] + yy[None] * torch.sin(theta)[:, None, None])
    wave = torch.sin(2 * math.pi * freq[:, None, None] * along + phase[:, None, None])
    colour = 0.5 + torch.rand(n, channels, 1, 1, generator=g)
    x = colour * wave[:, None] + 0.3 * torch.randn(n, channels, size, size, generator=g)
    return x.float(), y


def mfcc_frames(n: int, seed: int, classes: int = 12, frames: int = 49, coeffs: int = 10):
    """Class c: coefficient profile c % 4 (fixed random), modulated over time
    at 1 + c // 4 periods per clip, random phase and amplitude, plus noise."""
    profiles = torch.randn(4, coeffs, generator=torch.Generator().manual_seed(_FIXED))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    t = torch.arange(frames, dtype=torch.float32) / frames
    phase = torch.rand(n, 1, generator=g) * 2 * math.pi
    periods = (1 + y // 4).float()[:, None]
    envelope = torch.sin(2 * math.pi * periods * t[None] + phase)            # [n, T]
    amp = 1.0 + torch.rand(n, 1, 1, generator=g)
    x = amp * envelope[:, :, None] * profiles[y % 4][:, None, :]
    x = x + 0.4 * torch.randn(n, frames, coeffs, generator=g)
    return x[:, None].float(), y


def machine_frames(n: int, seed: int, frames: int = 5, bins: int = 128, sources: int = 6):
    """Each sample mixes `sources` fixed harmonic spectra with random weights;
    the same spectrum repeats over the 5 frames with small changes."""
    fixed = torch.Generator().manual_seed(_FIXED)
    k = torch.arange(bins, dtype=torch.float32)
    base = torch.rand(sources, generator=fixed) * 12 + 4
    spectra = torch.stack([sum(torch.exp(-0.5 * ((k - h * f) / 1.5) ** 2) / h for h in range(1, 8))
                           for f in base.tolist()])                        # [sources, bins]
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(n, sources, generator=g) * 2
    frame = w @ spectra                                                   # [n, bins]
    x = frame[:, None, :] * (1 + 0.1 * torch.randn(n, frames, 1, generator=g))
    x = x + 0.05 * torch.randn(n, frames, bins, generator=g)
    x = (x - 0.5) * 2.0
    return x.reshape(n, frames * bins).float(), torch.zeros(n, dtype=torch.long)


def colour_scenes(n: int, seed: int, weakest_light: float = 0.3, size: int = 96):
    """Two classes, a Visual-Wake-Words-sized stand-in: textured scenes
    (random gratings and noise) lit by a warm (class 0) or cool (class 1) light,
    i.e. a red/blue balance of random strength between `weakest_light` and 1."""
    x, _ = gratings(n, seed + 7919, 3, size, 4)
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    strength = weakest_light + (1 - weakest_light) * torch.rand(n, generator=g)
    tint = strength * (1 - 2 * y.float())                                   # + warm, - cool
    light = torch.stack([tint, torch.zeros(n), -tint], 1)[:, :, None, None]
    return (x + light).float(), y
