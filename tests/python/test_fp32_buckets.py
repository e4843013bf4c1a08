"""torch.bucketize / torch.searchsorted with boundaries computed in the
program (ptec.capture_fp32_buckets, issue 15). Oracle: torch's own call on
the values the program holds -- its int8 values dequantized in float32, each
on the grid the compiled graph gives it -- which the program must equal
exactly (an input rounding that moves an element across a boundary is
torch's answer for those values)."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import CompileError, compile_model
from ptec.pte import parse_program
from model_checks import Call
from test_function_coverage import inputs


def _on_grid(t, qparams):
    s, z = float(qparams[0]), int(qparams[1])
    q = torch.clamp(torch.round(t.double() / s) + z, -128, 127)
    return ((q - z).float() * torch.tensor(s, dtype=torch.float32))


def _compile(fn, shape=(2, 4, 8)):
    calibration = inputs(shape, -3.0, 3.0)
    return calibration, compile_model(Call(fn).eval(), [calibration[0][0]], calibration)


def _run(res, x, tmp_path):
    return np.asarray(host_runtime.run(parse_program(res.data), res.data, [x.numpy()], workdir=str(tmp_path))[0])


def _grid(res, op):
    return next(n for n in res.graph.nodes if n.op == op).qparams


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_rows_of_a_sort_by_values_on_another_grid(right, tmp_path):
    fn = lambda x: torch.searchsorted(x.sort(-1)[0], x * 0.5, right=right)      # noqa: E731
    calibration, res = _compile(fn)
    assert "compare" in [n.op for n in res.graph.nodes]
    seen = set()
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        xq = _on_grid(x, res.graph.node(res.graph.inputs[0]).qparams)
        vq = _on_grid(xq * 0.5, _grid(res, "mul"))
        want = torch.searchsorted(xq.sort(-1)[0], vq, right=right).numpy()
        assert got.dtype == np.int64 and got.shape == want.shape
        assert (got == want).all(), (got, want)
        seen.update(want.ravel().tolist())
    assert len(seen) >= 6                       # indices that vary: an off-by-one or a wrong side shows


def test_cumsum_of_a_softmax_is_taken_as_sorted(tmp_path):
    """searchsorted of a row's softmax cumsum (an inverse-CDF pick), each row against its own boundaries:
    torch's float answer wherever the value is further than the int8 roundings (the cumsum's and the
    sigmoid's steps and an input step) from every boundary (70% of them here)."""
    fn = lambda x: torch.searchsorted(torch.softmax(x, -1).cumsum(-1), torch.sigmoid(x))     # noqa: E731
    calibration, res = _compile(fn)
    tol = sum(next(n for n in res.graph.nodes if n.op == op).qparams[0] for op in ("linear", "sigmoid", "input"))
    far_total = 0
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        b, v = torch.softmax(x, -1).cumsum(-1), torch.sigmoid(x)
        far = ((v[..., :, None] - b[..., None, :]).abs() > tol).all(-1).numpy()
        assert (got[far] == fn(x).numpy()[far]).all()
        far_total += int(far.sum())
    assert far_total >= 0.5 * 4 * x.numel()           # 178 of 256 measured


@pytest.mark.parametrize("right,out_int32", [(False, False), (True, True)])
def test_bucketize_by_computed_boundaries(right, out_int32, tmp_path):
    fn = lambda x: torch.bucketize(torch.tanh(x), x[0, 0].sort()[0] * 0.3, right=right,    # noqa: E731
                                   out_int32=out_int32)
    calibration, res = _compile(fn)
    for (x,) in calibration[:4]:
        got = _run(res, x, tmp_path)
        xq = _on_grid(x, res.graph.node(res.graph.inputs[0]).qparams)
        vq = _on_grid(torch.tanh(xq), _grid(res, "tanh"))
        bq = _on_grid(xq[0, 0].sort()[0] * 0.3, _grid(res, "mul"))
        want = torch.bucketize(vq, bq, right=right, out_int32=out_int32).numpy()
        assert got.dtype == want.dtype and (got == want).all(), (got, want)
        assert len(set(want.ravel().tolist())) >= 5


def test_constant_boundaries_of_an_int8_value_keep_their_lut():
    # (of a float input they are compared with its float value: capture_exact_buckets, test_exact_buckets.py)
    _, res = _compile(lambda x: torch.bucketize(torch.tanh(x), torch.tensor([-1.0, 0.0, 1.0])))
    assert "compare" not in [n.op for n in res.graph.nodes]


@pytest.mark.parametrize("fn,words", [
    (lambda x: torch.searchsorted(x.sort(-1)[0], x, sorter=torch.arange(8).expand(2, 4, 8)).float(), "searchsorted"),
    (lambda x: torch.bucketize(x, x.reshape(-1).repeat(5).sort()[0]).float(), "bucketize"),     # 320 boundaries
    (lambda x: torch.bucketize(x[0, 0], x[0, 1]).float(), "sorted"),       # boundaries not known to be sorted
    (lambda x: torch.bucketize(x, x[0, 0].sort(descending=True)[0]).float(), "sorted"),
    (lambda x: torch.bucketize(x, x[0, 0].sort()[0] * -1.0).float(), "sorted"),
])
def test_refused_in_one_line(fn, words):
    with pytest.raises(CompileError) as e:
        _compile(fn)
    msg = str(e.value)
    assert "\n" not in msg and words in msg, msg
