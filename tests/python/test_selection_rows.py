"""Layers after a selection x[mask] (issue 15): views, layers that treat
each row alone, sort / topk / kthvalue, cat, and sums / means / maxima over
dims of it (capture_selection_rows), compiled over x with the rows picked
after, so no kernel reads the variable-length value.

Oracles: PyTorch on the input (the float model), with elements kept an
input step away from every threshold so the selection is torch's; the host
runtime gives the numpy reference interpreter's bytes; the emulated boards
print them. Where torch raises (topk or kthvalue of a selection shorter
than k, max of no rows) the documented fill, x's far end, is checked."""
import numpy as np
import pytest
import torch

from model_checks import board_matches_reference
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from model_checks import Call
from test_masked_select import _no_kernel_reads_a_bound_dynamic_tensor


def rows(x):
    return x.reshape(8, 4)


def keep(x):
    """boxes[scores > 0]: the rows of x viewed [8, 4] whose first column is positive."""
    return rows(x)[rows(x)[:, 0] > 0]


# call -> (bound in output steps, measured); thresholds are 0 and 0.5
CALLS = {
    # views
    "x[x > 0].view(-1, 1)": (lambda x: x[x > 0].view(-1, 1), 0.5),
    "x[x > 0].flatten()": (lambda x: x[x > 0].flatten(), 0.5),
    "x[x > 0].unsqueeze(1) * 2": (lambda x: x[x > 0].unsqueeze(1) * 2, 0.5),
    "keep(x).view(-1, 2)": (lambda x: keep(x).view(-1, 2), 0.5),
    "keep(x).flatten()": (lambda x: keep(x).flatten(), 0.5),
    # row by row
    "softmax(keep(x), -1)": (lambda x: torch.softmax(keep(x), -1), 1.5),              # 1.19
    "keep(x) @ w": (lambda x: keep(x) @ torch.linspace(-1, 1, 12).reshape(4, 3), 1.0),
    "keep(x).amin(1)": (lambda x: keep(x).amin(1), 1.0),                              # 0.94: -max(-x)
    "cat([keep(x), keep(x)[:, :1] * 2], 1)": (lambda x: torch.cat([keep(x), keep(x)[:, :1] * 2], 1), 1.0),
    "keep(x) - keep(x).mean(1, keepdim=True)": (lambda x: keep(x) - keep(x).mean(1, keepdim=True), 1.0),  # 0.80
    "x[x > 0].norm(dim=0)": (lambda x: x[x > 0].norm(dim=0), 1.0),                    # 0.84
    # a selection of a selection, a column of one, where of one
    "x[x > 0][x[x > 0] > 1]": (lambda x: x[x > 0][x[x > 0] > 1], 0.5),
    "keep(x)[:, 1]": (lambda x: keep(x)[:, 1], 0.5),
    "keep(x)[keep(x)[:, 1] > 0]": (lambda x: keep(x)[keep(x)[:, 1] > 0], 0.5),
    "keep(x)[keep(x) > 0.5]": (lambda x: keep(x)[keep(x) > 0.5], 0.5),
    "where(x[x > 0] > 1, x[x > 0], 0)": (lambda x: torch.where(x[x > 0] > 1, x[x > 0], 0.0), 1.5),   # 1.35
    # across the rows
    "x[x > 0].sort()": (lambda x: x[x > 0].sort()[0], 1.5),                # 1.18: where's grid, then x's
    "x[x > 0].sort(descending=True)": (lambda x: torch.sort(x[x > 0], descending=True)[0], 1.0),
    "keep(x).sort(0)": (lambda x: keep(x).sort(0)[0], 1.0),
    "x[x > 0].topk(3)": (lambda x: x[x > 0].topk(3)[0], 1.0),
    "x[x > 0].kthvalue(2)": (lambda x: x[x > 0].kthvalue(2)[0], 1.0),
    "cat([x[x > 0], rows(x)[:, 1]])": (lambda x: torch.cat([x[x > 0], rows(x)[:, 1]]), 0.5),
    "cat([x[x > 0.5], x[x < -0.5]])": (lambda x: torch.cat([x[x > 0.5], x[x < -0.5]]), 0.5),
    "x[x > 0].sum(0)": (lambda x: x[x > 0].sum(0), 1.5),
    "keep(x).sum(0)": (lambda x: keep(x).sum(0), 1.5),
    "keep(x).mean(0)": (lambda x: keep(x).mean(0), 2.0),                              # 1.50
    "keep(x).amax(0)": (lambda x: keep(x).amax(0), 0.5),
    "keep(x).max(0)": (lambda x: keep(x).max(0)[0], 0.5),
    "keep(x).sum()": (lambda x: keep(x).sum(), 2.0),                                  # 1.77
}


def _inputs(n, seed, top=0.85):
    """Uniform in [-3, 3] times a scale from 0.3 to top (calibration: 1, so
    tests stay inside its range), every element at least 0.1 from the
    thresholds 0, 0.5 and -0.5; then none and all positive."""
    g = torch.Generator().manual_seed(seed)
    xs = [(torch.rand(1, 4, 8, generator=g) * 6 - 3) * float(s) for s in np.linspace(0.3, top, n)]
    xs += [-torch.linspace(0.7, 2.5, 32).reshape(1, 4, 8), torch.linspace(0.7, 2.5, 32).reshape(1, 4, 8)]
    out = []
    for x in xs:
        for t in (0.0, 0.5, -0.5):
            x = torch.where((x - t).abs() < 0.1, x + 0.2 * torch.where(x >= t, 1.0, -1.0), x)
        out.append(x)
    return out


def _compiled(fn):
    calibration = [(x,) for x in _inputs(24, 1, top=1.0)]
    return compile_model(Call(fn).eval(), [calibration[0][0]], calibration)


def _fill_value(name, x, got):
    """The documented answer where torch raises (a short selection)."""
    if "topk" in name or "max(0)" in name or "amax(0)" in name:
        far = float(x.min())
    elif "kthvalue" in name:
        far = float(x.max())
    else:
        raise AssertionError(f"{name}: torch raised where ptec documents no fill")
    return np.full(got.shape, far, np.float32)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_layers_after_a_selection_run_within_their_bound(name, tmp_path):
    fn, bound = CALLS[name]
    res = _compiled(fn)
    prog = parse_program(res.data)
    if any(n.op == "masked_select" for n in res.graph.nodes):
        _no_kernel_reads_a_bound_dynamic_tensor(prog)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, shapes, spread = 0.0, set(), []
    for x in _inputs(8, 2):
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        try:
            with torch.no_grad():
                want = fn(x).numpy()
        except (RuntimeError, IndexError):
            want = _fill_value(name, x, got)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        shapes.add(got.shape)
        # NaN where torch's is: a mean over no rows (fp32 0 / 0, as torch)
        assert np.array_equal(np.isnan(got), np.isnan(want)), (name, got, want)
        if np.isfinite(want).any():
            worst = max(worst, float(np.abs(got - want)[np.isfinite(want)].max()) / step)
            spread.append(want[np.isfinite(want)])
    values = np.concatenate(spread)
    print(f"{name}: worst {worst:.2f} output steps, outputs spanning {(values.max() - values.min()) / step:.0f}")
    assert values.max() - values.min() >= 16 * step
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps from float (bound {bound})"


@pytest.mark.parametrize("layer", [lambda t: t.std(1), lambda t: torch.nn.functional.layer_norm(t, [4])],
                         ids=["std(1)", "layer_norm"])
def test_row_layers_give_the_rows_of_the_whole_layer(layer):
    """std and layer_norm over 4 values amplify the input's rounding (22
    and 10 output steps from torch whether or not a selection precedes
    them), so the oracle here is torch's mask: the program of
    layer(keep(x)) gives layer(rows(x))'s program output at the rows torch
    keeps, byte for byte."""
    picked = _compiled(lambda x: layer(keep(x)))
    whole = _compiled(lambda x: layer(rows(x)))
    for x in _inputs(6, 7):
        got = run_program(parse_program(picked.data), [x.numpy()])[0]
        every = run_program(parse_program(whole.data), [x.numpy()])[0]
        assert got.tobytes() == every[(rows(x)[:, 0] > 0).numpy()].tobytes()


def test_lengths_follow_the_run():
    """The shapes are the run's: a view, a sort and a cat of a selection
    give as many rows as torch, from none to all."""
    for fn in (lambda x: x[x > 0].view(-1, 1), lambda x: x[x > 0].sort()[0],
               lambda x: torch.cat([x[x > 0.5], x[x < -0.5]]), lambda x: keep(x).view(-1, 2)):
        res = _compiled(fn)
        prog = parse_program(res.data)
        lengths = {run_program(prog, [x.numpy()])[0].shape[0] for x in _inputs(8, 3)}
        assert lengths == {fn(x).shape[0] for x in _inputs(8, 3)} and len(lengths) >= 4, lengths


def test_an_empty_selection_gives_the_documented_fills():
    """topk of a selection shorter than k and max over no rows (torch
    raises): x's smallest value; kthvalue past the length: x's largest; a
    sum over no rows 0, a mean NaN (torch's: the fp32 mean's 0 / 0)."""
    x = -torch.linspace(0.7, 2.5, 32).reshape(1, 4, 8)
    for fn, want in ((lambda x: x[x > 0].topk(3)[0], float(x.min())),
                     (lambda x: keep(x).amax(0), float(x.min())),
                     (lambda x: x[x > 0].kthvalue(2)[0], float(x.max())),
                     (lambda x: keep(x).sum(0), 0.0)):
        res = _compiled(fn)
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        got = run_program(parse_program(res.data), [x.numpy()])[0]
        assert np.abs(got - want).max() <= 0.5 * step + 1e-6, (got, want)
    mean = _compiled(lambda x: keep(x).mean(0))
    assert np.isnan(run_program(parse_program(mean.data), [x.numpy()])[0]).all()


def test_a_scalar_constant_keeps_its_rank():
    """x.flatten().sum(0): a mean times a 0-d count on the fp32 path; the
    count was stored as a [1] tensor (numpy's ascontiguousarray makes 0-d
    arrays 1-d), which the runtime's mul refused at load."""
    res = _compiled(lambda x: x.flatten().sum(0))
    prog = parse_program(res.data)
    x = _inputs(1, 4)[0]
    got = host_runtime.run(prog, res.data, [x.numpy()])[0]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    assert got.shape == () and abs(float(got) - float(x.sum())) <= 1.5 * step


BOARD_CALLS = {
    "view, sort and cat": lambda x: torch.cat([x[x > 0].sort()[0], x[x < -0.5]]).view(-1, 1),
    "rows: matmul, sum(0)": lambda x: (keep(x) @ torch.linspace(-1, 1, 12).reshape(4, 3)).sum(0),
}


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("name", sorted(BOARD_CALLS))
def test_board_prints_the_reference_bytes(name, target, tmp_path):
    res = _compiled(BOARD_CALLS[name])
    board_matches_reference(res.data, _inputs(1, 5)[0].numpy(), target, tmp_path)


def test_a_bool_selection_is_refused_as_an_output():
    """x[x > 0] > 1 as a program output would come out as float 0/1 where
    torch gives bool: refused naming the comparison."""
    x = _inputs(1, 6)[0]
    with pytest.raises(Exception) as e:
        compile_model(Call(lambda x: x[x > 0] > 1).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message and "gt" in message, message
    assert "selects bool values" in message, message
