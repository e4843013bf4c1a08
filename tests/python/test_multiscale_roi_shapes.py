"""torchvision.ops.MultiScaleRoIAlign with image_shapes that are not
Python numbers (ptec.capture_torchvision: _heights, _computed_levels).

Oracle: torchvision's own module in eager torch, a fresh copy per input
(torchvision caches the scales of its first call; a fresh module computes
them from that input's image sizes, as the program does on every run).

* image sizes from shapes (`images.shape[-2:]`, `h, w = x.shape[-2:]`,
  `x.size(2)`, a list comprehension over the batch, a tensor of a shape,
  a buffer, numpy integers): constants at compile time (ptec's shapes are static), the
  constant path; maps and boxes float32 bit-equal to torchvision.
* image sizes computed from the data (an int64 or float32 input, a row of
  one, its .tolist(), per-image sizes of a batch of two, a product in the program): each
  level's scale 2^n found in the program from the height by fp32
  thresholds, times the boxes (exact: a power of two), pooled at spatial
  scale 1; bit-equal to torchvision on heights that change the scales and
  each box's level from run to run.
* behind int8 convs: torchvision on the program's own maps bit-equal;
  against torch float no more output steps off than the convs' own maps.
1, 2 and 4 levels, batch 1 and 2, three canonical scale / level pairs."""
import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn as nn

from model_checks import run_feed, smooth_images
from ptec.compiler import compile_model

tv = pytest.importorskip("torchvision.ops", reason="torchvision is not installed")

NAMES = ["p2", "p3", "p4", "p5"]


class Pool(nn.Module):
    """levels maps of sides 32 / 2^j (an image of 128: scales 1/4 ...)
    as inputs a, b, c, d; image sizes as `form` writes them."""

    def __init__(self, form, levels=3, canonical=(32, 4), ratio=2, size=2):
        super().__init__()
        self.form, self.levels = form, levels
        self.pool = tv.MultiScaleRoIAlign(NAMES[:levels], size, ratio, canonical_scale=canonical[0],
                                          canonical_level=canonical[1])
        self.register_buffer("hw_buffer", torch.tensor([128, 128]))

    def forward(self, img, maps, boxes, hw):
        x = OrderedDict(zip(NAMES, maps))
        f = self.form
        if f == "shape":
            shapes = [img.shape[-2:]] * len(boxes)
        elif f == "unpacked":
            h, w = img.shape[-2:]
            shapes = [(h, w)]
        elif f == "size":
            shapes = [(img.size(2), img.size(3))]
        elif f == "comprehension":
            shapes = [tuple(i.shape[-2:]) for i in img]
        elif f == "shape_tensor":
            shapes = [torch.tensor(img.shape[-2:])]
        elif f == "buffer":
            shapes = [(self.hw_buffer[0], self.hw_buffer[1])]
        elif f == "input":                  # hw [2] (int64 or float32): one image's height and width
            shapes = [(hw[0], hw[1])]
        elif f == "row":
            shapes = [hw]
        elif f == "tolist":
            shapes = [hw.tolist()]
        elif f == "numpy":
            shapes = [tuple(np.array(img.shape[-2:]))]
        elif f == "per_image":              # hw [2, 2]: each image's own (the largest height sets the scales)
            shapes = [(hw[i, 0], hw[i, 1]) for i in range(hw.shape[0])]
        elif f == "computed":               # sizes of the image before a 2x downsampling
            shapes = [(hw.float()[0] * 2, hw.float()[1] * 2)]
        return self.pool(x, boxes, shapes)


def _boxes(g, k, side=120.0):
    """Sides spanning the levels, and sides within ulps of the canonical
    thresholds of every level scale the tests' heights give."""
    lo = torch.rand(k, 2, generator=g) * side * 0.3
    wh = torch.rand(k, 2, generator=g) * side * 0.7 + 1
    near = []
    for t in (10.0, 16.0, 20.0, 32.0, 40.0, 64.0, 80.0):
        for d in (-3e-7, 0.0, 3e-7):
            near.append([1.0, 2.0, 1.0 + t, 2.0 + t * (1.0 + d)])
    return torch.cat([torch.cat([lo, lo + wh], 1), torch.tensor(near)], 0)


def _feed(seed, levels, batch, hw, img=128):
    g = torch.Generator().manual_seed(seed)
    maps = [torch.randn(batch, 3, 32 >> j, 32 >> j, generator=g) for j in range(levels)]
    boxes = [_boxes(g, 6 + i) for i in range(batch)]
    return [torch.zeros(batch, 1, img, img), maps, boxes, hw]


def _flat(feed):
    img, maps, boxes, hw = feed
    return [img] + list(maps) + list(boxes) + [hw]


class Flat(nn.Module):
    """Pool with flat inputs (the program's): img, maps..., boxes..., hw."""

    def __init__(self, inner, levels, batch):
        super().__init__()
        self.inner, self.levels, self.batch = inner, levels, batch

    def forward(self, *xs):
        img, rest = xs[0], xs[1:]
        maps, boxes, hw = rest[:self.levels], rest[self.levels:self.levels + self.batch], rest[-1]
        return self.inner(img, list(maps), list(boxes), hw)


def _make(form, levels, batch, **kw):
    return Flat(Pool(form, levels, **kw), levels, batch).eval()


def _check(form, levels, batch, feeds, tmp_path, **kw):
    """Compile on feeds[0]; every feed's output equal to a fresh torchvision
    module's, byte for byte (max abs difference 0, same zeros' signs)."""
    model = _make(form, levels, batch, **kw)
    flat = [_flat(f) for f in feeds]
    res = compile_model(model, flat[0], flat)
    levels_seen = set()
    for f in flat:
        got = np.asarray(run_feed(res, f, tmp_path)[0], np.float32)
        oracle = _make(form, levels, batch, **kw)
        with torch.no_grad():
            want = oracle(*f).numpy()
        assert got.shape == want.shape
        assert np.abs(got.astype(np.float64) - want).max() == 0, np.abs(got.astype(np.float64) - want).max()
        assert np.array_equal(got.view(np.int32), want.view(np.int32))
        assert np.std(want) > 0.1
        # each box's level as the oracle's own mapper (cached by that call) picks it
        levels_seen.add(tuple(sorted(set(oracle.inner.pool.map_levels(f[1 + levels:-1]).tolist()))))
    return levels_seen


@pytest.mark.parametrize("form", ["shape", "unpacked", "size", "comprehension", "shape_tensor", "buffer", "numpy"])
def test_sizes_from_shapes_are_constants(form, tmp_path):
    batch = 2 if form in ("shape", "comprehension") else 1
    feeds = [_feed(s, 3, batch, torch.tensor([0, 0])) for s in (0, 1)]
    seen = _check(form, 3, batch, feeds, tmp_path)
    assert any(len(s) == 3 for s in seen), seen


@pytest.mark.parametrize("levels,batch,canonical", [(1, 1, (32, 4)), (2, 2, (20, 4)), (4, 1, (32, 4)),
                                                    (4, 2, (224, 4)), (3, 1, (16, 3))])
def test_shape_forms_levels_batches_canonical(levels, batch, canonical, tmp_path):
    feeds = [_feed(s, levels, batch, torch.tensor([0, 0])) for s in (2, 3)]
    _check("shape", levels, batch, feeds, tmp_path, canonical=canonical, ratio=-1)


# image heights that move the scales: 32 / h rounds to 1/4 (100 .. 181), 1/8 (182 .. 362), 1/2 (46 .. 90)
HEIGHTS = [128, 100, 181, 182, 200, 90, 60, 362, 363]


@pytest.mark.parametrize("levels,batch,canonical", [(1, 1, (32, 4)), (2, 1, (20, 4)), (4, 1, (32, 4)),
                                                    (4, 1, (224, 4))])
def test_sizes_from_an_input_follow_each_run(levels, batch, canonical, tmp_path):
    feeds = [_feed(i, levels, batch, torch.tensor([h, 77])) for i, h in enumerate(HEIGHTS)]
    seen = _check("input", levels, batch, feeds, tmp_path, canonical=canonical)
    if levels == 4 and canonical == (32, 4):
        assert len(seen) >= 3 and any(len(s) == 4 for s in seen), seen


def test_float_row_of_sizes(tmp_path):
    feeds = [_feed(i, 3, 1, torch.tensor([float(h), 64.0])) for i, h in enumerate(HEIGHTS[:5] + [127.5, 181.25])]
    _check("row", 3, 1, feeds, tmp_path, canonical=(20, 4))


def test_sizes_as_python_list_of_an_input(tmp_path):
    """hw.tolist() (capture_item keeps it the tensor's elements)."""
    feeds = [_feed(i, 2, 1, torch.tensor([h, 64])) for i, h in enumerate([128, 60, 200, 90])]
    _check("tolist", 2, 1, feeds, tmp_path)


def test_per_image_sizes_of_a_batch_of_two(tmp_path):
    pairs = [[[128, 90], [60, 128]], [[200, 200], [100, 50]], [[60, 60], [70, 80]], [[100, 1], [400, 2]]]
    feeds = [_feed(i, 4, 2, torch.tensor(p)) for i, p in enumerate(pairs)]
    _check("per_image", 4, 2, feeds, tmp_path)


def test_sizes_computed_in_the_program(tmp_path):
    feeds = [_feed(i, 2, 1, torch.tensor([h, 3])) for i, h in enumerate([64, 50, 91, 100, 30])]
    _check("computed", 2, 1, feeds, tmp_path)


class ConvPyramid(nn.Module):
    """Three int8 convs (strides 1, 2, 4) as the pyramid; image sizes an input."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c = nn.ModuleList([nn.Conv2d(3, 4, 3, stride=s, padding=1) for s in (1, 2, 4)])
        self.m = tv.MultiScaleRoIAlign(["p0", "p1", "p2"], (2, 3), 2, canonical_scale=32, canonical_level=4)

    def forward(self, x, b0, b1, hw):
        maps = [c(x) for c in self.c]
        return (self.m(OrderedDict(zip(["p0", "p1", "p2"], maps)), [b0, b1], [(hw[0], hw[1])]),
                maps[0], maps[1], maps[2])


def test_behind_int8_convs_in_output_steps(tmp_path):
    """On the program's own int8 maps, torchvision's module bit-equal; against
    torch float, no more output steps off than the convs' maps themselves
    (one step: the largest |output| / 127)."""
    model = ConvPyramid().eval()
    g = torch.Generator().manual_seed(4)

    def feeds(count, seed):
        out = []
        for i, (x,) in enumerate(smooth_images(count, seed)):
            x = torch.cat([x[:, :3, :16, :16]] * 2, 0).contiguous()
            x[1] = x[1].flip(2)
            out.append([x, _boxes(g, 5, 60.0), _boxes(g, 3, 60.0), torch.tensor([(64, 40, 90)[i % 3], 64])])
        return out

    calibration, tests = feeds(10, 0), feeds(3, 5)
    res = compile_model(model, calibration[0], calibration)
    worst = conv_worst = on_maps = 0.0
    for feed in tests:
        outs = [torch.tensor(np.asarray(o)) for o in
                run_feed(res, feed, tmp_path)]
        with torch.no_grad():
            want = copy.deepcopy(model)(*feed)
            again = copy.deepcopy(model).m(OrderedDict(zip(["p0", "p1", "p2"], outs[1:])), feed[1:3],
                                           [(feed[3][0], feed[3][1])])
        on_maps = max(on_maps, float((outs[0] - again).abs().max()))
        step = float(want[0].abs().max()) / 127
        worst = max(worst, float((outs[0] - want[0]).abs().max()) / step)
        conv_worst = max(conv_worst, max(float((o - w).abs().max()) / step for o, w in zip(outs[1:], want[1:])))
        assert float(want[0].std()) > 0.05
    print(f"on the program's maps {on_maps:.2e}; vs torch float {worst:.2f} output steps, the convs' maps "
          f"{conv_worst:.2f}")
    assert on_maps == 0 and worst <= conv_worst and worst < 4, (on_maps, worst, conv_worst)


class FinestLast(nn.Module):
    """Maps in the order coarse to fine: torchvision's k_min (of the first
    map) is above its k_max, the clamp puts every box below level 0 and its
    result is all zeros; the program's too."""

    def __init__(self):
        super().__init__()
        self.pool = tv.MultiScaleRoIAlign(["c", "f"], 2, 2)

    def forward(self, img, coarse, fine, boxes):
        return self.pool(OrderedDict([("c", coarse), ("f", fine)]), [boxes], [img.shape[-2:]])


def test_maps_finest_last_pool_no_box(tmp_path):
    g = torch.Generator().manual_seed(9)
    feed = [torch.zeros(1, 1, 64, 64), torch.randn(1, 3, 8, 8, generator=g), torch.randn(1, 3, 16, 16, generator=g),
            _boxes(g, 4, 60.0)]
    model = FinestLast().eval()
    res = compile_model(model, feed, [feed])
    got = np.asarray(run_feed(res, feed, tmp_path)[0], np.float32)
    with torch.no_grad():
        want = FinestLast().eval()(*feed).numpy()
        pooled = FinestLast().eval().pool(OrderedDict([("c", feed[1]), ("f", feed[2])]), [feed[3]], [(64, 64)])
    assert float(pooled.abs().max()) == 0 and np.array_equal(got, want), np.abs(got - want).max()
