"""Positions read after a softmax (issue 15, ptec.capture_order_keeping):
`softmax(y, -1).argmax(-1)`, its topk / max / sort / argsort indices and
log_softmax's are the logits' positions, since a softmax keeps the order
along its dim. The oracle is torch float (the same model called by
PyTorch): the rows whose indices differ from torch's, over 16 fresh
feeds of 32 rows a Linear(16, 10) head whose class varies, must be
exactly those of the same head returning the positions of its logits
(compiled on its own: the int8 logits' own near-ties, which no reading
after them can undo), where the softmax's 1/256 grid added ties of its
own (argsort 204 / 311 rows of 512 off torch, logits 102 / 121)."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from model_checks import run_feed
from ptec.compiler import compile_model


class Head(nn.Module):
    def __init__(self, fn):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(16, 10)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.fc(x))


def _feeds(n, seed, scale):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(32, 16, generator=g) * scale,) for _ in range(n)]


# form: (after the softmax, the same positions read from the logits)
FORMS = {
    "softmax argmax": (lambda y: F.softmax(y, -1).argmax(-1), lambda y: y.argmax(-1)),
    "softmax max indices": (lambda y: y.softmax(-1).max(-1).indices, lambda y: y.argmax(-1)),
    "torch.softmax topk indices": (lambda y: torch.softmax(y, dim=1).topk(3).indices, lambda y: y.topk(3).indices),
    "softmax argsort": (lambda y: y.softmax(-1).argsort(-1, descending=True),
                        lambda y: y.argsort(-1, descending=True)),
    "softmax sort indices": (lambda y: y.softmax(-1).sort(-1)[1], lambda y: y.sort(-1)[1]),
    "softmax argmin": (lambda y: y.softmax(-1).argmin(-1, keepdim=True), lambda y: y.argmin(-1, keepdim=True)),
    "log_softmax argmax": (lambda y: F.log_softmax(y, -1).argmax(1), lambda y: y.argmax(1)),
    "log_softmax kthvalue indices": (lambda y: y.log_softmax(-1).kthvalue(8, -1).indices,
                                     lambda y: y.kthvalue(8, -1).indices),
}


def _rows_off(fn, scale, tmp_path):
    """The compiled head's rows whose positions differ from torch's, and the
    compile's result."""
    model = Head(fn).eval()
    cal, test = _feeds(16, 0, scale), _feeds(16, 1, scale)
    res = compile_model(model, list(cal[0]), cal)
    off = []
    for feed in test:
        got = np.asarray(run_feed(res, feed, tmp_path)[0])
        with torch.no_grad():
            want = model(*feed).numpy()
        assert got.shape == want.shape
        off.append((got != want).reshape(len(want), -1).any(-1))
    return np.concatenate(off), res


@pytest.mark.parametrize("scale", [1.0, 3.0])
@pytest.mark.parametrize("name", sorted(FORMS))
def test_positions_after_softmax_are_the_logits(name, scale, tmp_path):
    after, logits = FORMS[name]
    off, res = _rows_off(after, scale, tmp_path)
    plain, _ = _rows_off(logits, scale, tmp_path)
    assert not any(n.op in ("softmax", "log_softmax") for n in res.graph.nodes), res.graph.summary()
    assert off.tolist() == plain.tolist(), (int(off.sum()), int(plain.sum()))
    assert off.sum() < len(off) // 4        # the head's class varies, its logits mostly apart


def test_argsort_measured_before_after(tmp_path):
    """The issue's measured loss: 204 of 512 argsort rows off torch on the
    softmax's grid, the logits' 102."""
    off, _ = _rows_off(lambda y: y.softmax(-1).argsort(-1, descending=True), 1.0, tmp_path)
    assert off.sum() <= 110, int(off.sum())


def test_values_beside_indices_stay_the_softmax(tmp_path):
    """topk's values and indices both returned: the values are the
    softmax's as before (within 2 steps of its 1/256 grid of torch's: the
    int8 logits' rounding too), the indices the logits' positions, each
    value torch's softmax at its index within the same."""
    model = Head(lambda y: torch.softmax(y, -1).topk(3)).eval()
    cal, test = _feeds(16, 0, 1.0), _feeds(4, 1, 1.0)
    res = compile_model(model, list(cal[0]), cal)
    for feed in test:
        values, indices = run_feed(res, feed, tmp_path)
        with torch.no_grad():
            want = model(*feed)
            probs = torch.softmax(model.fc(feed[0]), -1).numpy()
        assert np.abs(values - want.values.numpy()).max() <= 2 / 256
        assert np.abs(np.take_along_axis(probs, indices, -1) - values).max() <= 2 / 256
        assert (indices == want.indices.numpy()).mean() > 0.9


def test_other_dims_and_readers_keep_the_softmax(tmp_path):
    """An argmax along another dim than the softmax's reads the softmax
    (its order is not kept there); a softmax also returned stays."""
    x = _feeds(1, 0, 1.0)[0]
    across = compile_model(Head(lambda y: y.softmax(-1).argmax(0)).eval(), list(x), [x])
    arg = [n for n in across.graph.nodes if n.op == "argmax"][0]
    assert across.graph.node(arg.inputs[0]).op == "softmax"
    both = compile_model(Head(lambda y: (y.softmax(-1), y.softmax(-1).argmax(-1))).eval(), list(x), [x])
    arg = [n for n in both.graph.nodes if n.op == "argmax"][0]
    assert both.graph.node(arg.inputs[0]).op == "linear"
    assert any(n.op == "softmax" for n in both.graph.nodes)
