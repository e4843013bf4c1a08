"""Index forms probe3 found refused (capture_index_forms, capture_masked_select,
capture_scatter's gathered write, the tracer's range): advanced indexing by
constant lists and ranges in several dims and by a computed int64 index
beside a constant one (`x[torch.arange(B), labels]`), a computed bool mask
beside basic indices (`x[mask, 1:]`, `x[mask, 0]`, `x[:, mask]`), a
selection of int64 / int32 values (`a[a != 0]`), and the Temporal Shift
Module's slice writes into zeros_like. torch is the oracle: int8 results
bounded in output steps, integer results exact, selections of several
counts (none, all and some between) of torch's length."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


from call_model import Call as Fn


def _runs(model, res, xs, tmp_path):
    """ptec-run's first output on xs, checked byte for byte against the
    reference interpreter, and torch's."""
    prog = parse_program(res.data)
    arrays = [x.numpy() for x in xs]
    got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))[0]
    assert got.tobytes() == run_program(prog, arrays)[0].tobytes(), "ptec-run differs from the reference interpreter"
    with torch.no_grad():
        return got, model(*xs)


def _steps(model, samples, tmp_path, compiled_on=None):
    """Compiled on the samples (calibration), the worst |ptec - torch| over
    them in output steps; the float outputs must vary over 16 steps."""
    res = compile_model(model.eval(), list(samples[0]), compiled_on or samples)
    assert not res.lowered.fallbacks, res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, refs = 0.0, []
    for xs in samples[:4]:
        got, ref = _runs(model, res, xs, tmp_path)
        assert got.shape == tuple(ref.shape), (got.shape, ref.shape)
        refs.append(ref.numpy())
        worst = max(worst, float(np.abs(got.astype(np.float64) - ref.double().numpy()).max() / step))
    spread = max(r.max() for r in refs) - min(r.min() for r in refs)
    assert spread >= 16 * step, f"float outputs span only {spread / step:.1f} steps"
    return worst


def _uniform(shape, n=8, seed=0, lo=-3.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(shape, generator=g) * (hi - lo) + lo,) for _ in range(n)]


# --- constant indices in several dims, and a computed index beside a constant one ---------------------------------

CONSTANT = {
    "x[range(3), [0, 1, 2]]": (lambda x: x[range(3), [0, 1, 2]], (3, 4)),
    "x[range(1, 4), range(3)]": (lambda x: x[range(1, 4), range(3)], (5, 4)),
    "x[:, range(0, 6, 2)]": (lambda x: x[:, range(0, 6, 2)], (3, 6)),
    "x[torch.arange(3), idx_const]": (lambda x: x[torch.arange(3), torch.tensor([2, 0, 3])], (3, 4)),
    "x[[0, 2], [1, 3]]": (lambda x: x[[0, 2], [1, 3]], (4, 4)),
    "x[0, [1, 3], range(2)]": (lambda x: x[0, [1, 3], range(2)], (2, 4, 3)),
}


@pytest.mark.parametrize("name", sorted(CONSTANT))
def test_constant_indices_in_several_dims(name, tmp_path):
    fn, shape = CONSTANT[name]
    worst = _steps(Fn(fn), _uniform(shape), tmp_path)
    assert worst <= 0.5 + 1e-3, f"{name}: {worst:.2f} output steps"


def _labelled(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(6, 5, generator=g) * 6 - 3, torch.randint(0, 5, (6,), generator=g)) for _ in range(n)]


@pytest.mark.parametrize("form", ["labels input", "argmax", "labels[:, None] columns"])
def test_each_rows_target(form, tmp_path):
    """The classic "pick each row's target": x[torch.arange(B), labels]
    (labels an int64 input, or an argmax computed in the program)."""
    samples = _labelled()
    if form == "labels input":
        model = Fn(lambda x, lab: x[torch.arange(6), lab])
    elif form == "argmax":       # each row's smallest, at the argmax of its negation
        model, samples = Fn(lambda x: x[torch.arange(6), (x * -1.0).argmax(1)]), [s[:1] for s in samples]
    else:
        model = Fn(lambda x, lab: x[torch.arange(6)[:, None], torch.stack([lab, 4 - lab], 1)])
    worst = _steps(model, samples, tmp_path)
    assert worst <= 0.5 + 1e-3, f"{form}: {worst:.2f} output steps"


# --- a computed bool mask beside basic indices: a selection of varying length ------------------------------------

# (call of x, shape of x, the mask's threshold on x's column / row 0, bound in output steps)
MASKED = {
    "x[mask, 1:]": (lambda x: x[x[:, 0] > 0, 1:], (8, 5)),
    "x[mask, 0]": (lambda x: x[x[:, 0] > 0, 0], (8, 5)),
    "x[mask, ::2]": (lambda x: x[x[:, 0] > 0, ::2], (8, 5)),
    "x[mask, -1, None]": (lambda x: x[x[:, 0, 0] > 0, -1, None], (6, 3, 4)),
    "x[mask, ..., 1:3]": (lambda x: x[x[:, 0, 0] > 0, ..., 1:3], (6, 3, 4)),
    "x[mask, 1:] * 2 - 1": (lambda x: x[x[:, 0] > 0, 1:] * 2.0 - 1.0, (8, 5)),
    "x[:, mask]": (lambda x: x[:, x[0] > 0], (5, 8)),
    "x[:, mask, None]": (lambda x: x[:, x[0, :, 0] > 0, None], (3, 8, 2)),
    "x[:, mask, 0]": (lambda x: x[:, x[0, :, 0] > 0, 0], (3, 8, 2)),
}


def _mask_samples(shape, threshold_at):
    """Random inputs (kept an input step off the threshold by the caller),
    then a mask none of, then all of."""
    samples = _uniform(shape)
    none, every = torch.full(shape, -2.5), torch.full(shape, 2.5)
    g = torch.Generator().manual_seed(1)
    none = none + torch.rand(shape, generator=g) * 0.4    # values that vary beside the mask's
    every = every - torch.rand(shape, generator=g) * 0.4
    return samples, [(none,), (every,)]


@pytest.mark.parametrize("name", sorted(MASKED))
def test_mask_beside_basic_indices(name, tmp_path):
    fn, shape = MASKED[name]
    model = Fn(fn).eval()
    samples, extremes = _mask_samples(shape, 0.0)
    res = compile_model(model, [samples[0][0]], samples + extremes)
    assert not res.lowered.fallbacks
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
    counts, worst = set(), 0.0
    for (x,) in samples[:4] + extremes:
        x = torch.where(x.abs() < in_step, x + 2 * in_step, x)     # the mask torch's: no value at its edge
        got, ref = _runs(model, res, [x], tmp_path)
        assert got.shape == tuple(ref.shape), (got.shape, ref.shape)
        counts.add(ref.numel())
        if ref.numel():
            worst = max(worst, float(np.abs(got.astype(np.float64) - ref.double().numpy()).max() / step))
    assert 0 in counts and len(counts) >= 3, counts
    assert worst <= 0.5 + 1e-3 if "* 2" not in name else worst <= 1.0 + 1e-3, f"{name}: {worst:.2f} steps"


# --- selections of integer values: exact -------------------------------------------------------------------------

INTEGER = {
    "a[a != 0]": (lambda a: a[a != 0], torch.int64, (12,)),
    "a[a > 1] int32": (lambda a: a[a > 1], torch.int32, (3, 5)),
    "torch.masked_select(a, a < 0)": (lambda a: torch.masked_select(a, a < 0), torch.int64, (2, 6)),
    "a[(a > 0).byte()]": (lambda a: a[(a > 0).byte()], torch.int64, (12,)),
    "a[a[:, 0] > 0] rows": (lambda a: a[a[:, 0] > 0], torch.int64, (6, 3)),
    "a[a[:, 0] > 0, 1:]": (lambda a: a[a[:, 0] > 0, 1:], torch.int64, (6, 3)),
    "a.float()[a != 0]": (lambda a: a.float()[a != 0], torch.int64, (12,)),
}


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_selection_is_exact(name, tmp_path):
    fn, dtype, shape = INTEGER[name]
    model = Fn(fn).eval()
    g = torch.Generator().manual_seed(0)
    samples = [(torch.randint(-3, 4, shape, generator=g).to(dtype),) for _ in range(4)]
    samples += [(torch.zeros(shape, dtype=dtype),), (torch.full(shape, 2, dtype=dtype),)]    # none, all
    res = compile_model(model, [samples[0][0]], samples)
    counts = set()
    for (a,) in samples:
        got, ref = _runs(model, res, [a], tmp_path)
        assert got.shape == tuple(ref.shape) and got.dtype == ref.numpy().dtype, (got, ref)
        assert np.array_equal(got, ref.numpy()), (got, ref)
        counts.add(ref.numel())
    assert 0 in counts and len(counts) >= 3, counts


def test_argmax_selection_is_exact(tmp_path):
    """a[a != 0] of an argmax computed in the program (the probe's second form)."""
    model = Fn(lambda x: (lambda a: a[a != 0])(x.argmax(-1))).eval()
    g = torch.Generator().manual_seed(0)
    samples = [(torch.randn(12, 3, generator=g),) for _ in range(4)]
    first = torch.zeros(12, 3)
    first[:, 0] = 1.0
    samples += [(first,), (first.flip(1),)]          # none (every argmax 0), all (every argmax 2)
    res = compile_model(model, [samples[0][0]], samples)
    counts = set()
    for (x,) in samples:
        got, ref = _runs(model, res, [x], tmp_path)
        assert np.array_equal(got, ref.numpy()), (got, ref)
        counts.add(ref.numel())
    assert 0 in counts and len(counts) >= 3, counts


@pytest.mark.parametrize("call", [lambda a: a[a > 0] + 1, lambda a: a[a > 0].sum(), lambda a: a[a != 0].sort()[0],
                                  lambda a: a[a != 0].float()])
def test_integer_selection_read_further_is_refused_in_one_line(call):
    a = torch.randint(-3, 4, (12,))
    with pytest.raises(Exception, match=r"^[^\n]*getitem \(operator\.getitem\)[^\n]*a selection of integer values"
                                        r"[^\n]*$"):
        compile_model(Fn(call).eval(), [a], [(a,)])


# --- the Temporal Shift Module: slice writes into zeros_like, as a gather (no pick matrix) -----------------------

def shift(x, n_segment, fold_div):
    """TSM's shift as its authors wrote it (channels folded, shifted along time)."""
    nt, c, h, w = x.size()
    x = x.view(nt // n_segment, n_segment, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(x)
    out[:, :-1, :fold] = x[:, 1:, :fold]
    out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]
    out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
    return out.view(nt, c, h, w)


@pytest.mark.parametrize("shape,n_segment,fold_div", [((4, 8, 5, 5), 4, 4), ((8, 64, 14, 14), 8, 8),
                                                      ((16, 16, 7, 7), 8, 8)])
def test_temporal_shift(shape, n_segment, fold_div, tmp_path):
    worst = _steps(Fn(lambda x: shift(x, n_segment, fold_div)), _uniform(shape, n=4), tmp_path)
    assert worst <= 0.5 + 1e-3, f"{worst:.2f} output steps"


def test_temporal_shift_before_a_conv(tmp_path):
    torch.manual_seed(0)
    conv = nn.Conv2d(8, 8, 3, padding=1)
    model = Fn(lambda x: conv(shift(x, 4, 4)))
    worst = _steps(model, _uniform((4, 8, 5, 5), n=4), tmp_path)
    assert worst <= 1.5 + 1e-3, f"{worst:.2f} output steps"


def test_scattered_large_write_is_refused_in_one_line():
    """Writes landing in more runs than a gather joins stay refused."""
    def alternate(x):
        out = torch.zeros_like(x)
        out[..., ::2] = x[..., 1::2]
        return out
    x = torch.randn(40, 64)
    with pytest.raises(Exception, match=r"^[^\n]*index_put[^\n]*separate runs[^\n]*$"):
        compile_model(Fn(alternate).eval(), [x], [(x,)])
