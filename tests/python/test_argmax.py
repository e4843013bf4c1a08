"""Index results (issue 15): argmax/argmin over a dim and the indices of
max/min over a dim, as the program's int64 output (a classifier returning
its class) or through `.float()` into later layers. Each program's host
bytes are the numpy reference interpreter's, its indices torch's wherever
the float logits are apart by more than their int8 rounding, on inputs
whose index varies, and the emulated boards print the reference bytes."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Classifier(torch.nn.Module):
    """Linear logits and their class index: argmax (or argmin, the indices
    of max/min over the dim) returned as int64."""

    def __init__(self, index, features=12, classes=6):
        super().__init__()
        torch.manual_seed(3)
        self.fc = torch.nn.Linear(features, classes)
        self.index = index

    def forward(self, x):
        return self.index(self.fc(x))


INDEX = {
    "argmax": lambda y: y.argmax(-1),
    "argmax keepdim": lambda y: y.argmax(-1, keepdim=True),
    "torch.argmin dim 1": lambda y: torch.argmin(y, 1),
    "max(dim)[1]": lambda y: y.max(-1)[1],
    "min(dim).indices keepdim": lambda y: y.min(-1, keepdim=True).indices,
}
SHAPE = (3, 4, 12)


def samples(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(SHAPE, generator=g) * 2.0,) for _ in range(n)]


def compiled(index):
    model = Classifier(index).eval()
    calibration = samples(16, 0)
    return model, compile_model(model, [calibration[0][0]], calibration)


@pytest.mark.parametrize("name", sorted(INDEX))
def test_index_output_is_int64_and_torchs(name, tmp_path):
    model, res = compiled(INDEX[name])
    assert [o.dtype for o in res.lowered.outputs] == ["int64"]
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    prog = parse_program(res.data)
    logits_step = res.graph.node(res.graph.node(res.graph.outputs[0]).inputs[0]).qparams[0]
    seen, clear, total = set(), 0, 0
    for (x,) in samples(6, 1):
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.dtype == np.int64 and got.tobytes() == want.tobytes()
        with torch.no_grad():
            logits = model.fc(x)
            ref = model.index(logits).numpy()
        assert got.shape == ref.shape
        # the reduced dim of this call: where the index's shape lost or kept-at-1 a dim
        dim = 1 if name == "torch.argmin dim 1" else 2
        ordered = np.sort(logits.numpy(), axis=dim)
        lead = np.abs(np.take(ordered, -1, axis=dim) - np.take(ordered, -2, axis=dim))
        lead_min = np.abs(np.take(ordered, 1, axis=dim) - np.take(ordered, 0, axis=dim))
        margin = lead_min if ("min" in name) else lead
        sure = (margin > 2 * logits_step).reshape(got.shape)
        assert np.array_equal(got[sure], ref[sure]), (got, ref)
        clear += int(sure.sum())
        total += sure.size
        seen.update(got.reshape(-1).tolist())
    assert len(seen) >= 3, seen               # the index varies over the inputs
    assert clear >= total // 2, (clear, total)


def test_ties_go_to_the_first_index(tmp_path):
    """Equal values (here equal inputs, so equal int8 codes): torch and ptec
    both give the first of them, for argmax and argmin."""
    class Ties(torch.nn.Module):
        def forward(self, x):
            return x.argmax(-1), x.argmin(-1)
    model = Ties().eval()
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(2, 8, generator=g),) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    x = torch.tensor([[0.5, 2.0, -1.0, 2.0, 0.0, -1.0, 1.0, 2.0],
                      [-2.0, 1.0, -2.0, 1.0, 0.3, 0.2, -2.0, 1.0]])
    got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
    assert [g.tobytes() for g in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
    assert [g.tolist() for g in got] == [t.tolist() for t in model(x)] == [[1, 1], [2, 0]]


def test_index_read_by_a_float_layer_is_torchs_float_copy(tmp_path):
    """An index read by a float layer: torch promotes it to float32 there,
    and so does the program (capture_int_promotion: the index's float
    copy, then the float add). The oracle is torch on the program's own
    argmax (an int8 tie may pick another position than torch's)."""
    class Sum(torch.nn.Module):
        def forward(self, x):
            i = x.argmax(-1)
            return i + x.amax(-1), i
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(2, 8, generator=g),) for _ in range(4)]
    res = compile_model(Sum().eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration:
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))
        assert [h.tobytes() for h in got] == [w.tobytes() for w in run_program(prog, [x.numpy()])]
        want = torch.from_numpy(got[1]).float() + x.amax(-1)
        assert np.abs(got[0] - want.numpy()).max() <= 1.0 * step, (got, want)


def test_index_into_later_layers(tmp_path):
    """`.float()` of an index feeds int8 layers (an int64-to-float32 copy,
    then quantized): bytes as the reference, values within the layers'
    rounding of torch's."""
    class Next(torch.nn.Module):
        def forward(self, x):
            return x.amax(-1) + x.argmax(-1).float() * 0.5
    model = Next().eval()
    g = torch.Generator().manual_seed(5)
    calibration = [(torch.rand(1, 6, 10, generator=g) * 6 - 3,) for _ in range(8)]
    res = compile_model(model, [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (x,) in calibration[:4]:
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        assert np.abs(got - model(x).numpy()).max() <= 2.5 * step


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_classifier_on_boards(target, tmp_path):
    _, res = compiled(INDEX["argmax"])
    for (x,) in samples(2, 7):
        board_matches_reference(res.data, x.numpy(), target, tmp_path)
