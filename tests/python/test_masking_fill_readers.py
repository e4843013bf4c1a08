"""A masking fill (-1e9, -1e4, a filled tensor, an additive mask) read by
max / amax, exp, sum / mean, logsumexp, sigmoid or a softmax over another
dim than the last (issue 15, ptec.capture_masking_readers): refused before
("one int8 grid holding -1e9 and the kept values gives every kept value
one code"; silently 128 to 255 output steps off before that), now the fill
and its reader run in fp32 on the host runtime.

Oracle: torch float. The kept values' results are measured in output
steps (the span of torch's kept results over the feeds / 255); a result
torch gives from the fill alone (a row masked entirely: -1e9 for max /
amax / logsumexp, n * fill for a sum) must come out as torch's float32
number itself, not clipped onto a grid. Masks computed from an input
(`m > 0`), given as a bool program input, or a constant buffer."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program

BOUND = 1.0         # output steps of the kept results (each is one fp32 step of the dequantized input)

FORMS = {
    "amax": lambda x, k: torch.where(k, x, -1e9).amax(-1),
    "max_pool_sequence": lambda x, k: x.masked_fill(~k, -1e9).max(1)[0],
    "max_values": lambda x, k: torch.max(x.masked_fill(~k, -1e9), dim=-1).values,
    "max_indices": lambda x, k: x.masked_fill(~k, -1e9).max(1).indices.float(),
    "full_like_amax": lambda x, k: torch.where(k, x, torch.full_like(x, -1e9)).amax(-1),
    "additive_amax": lambda x, k: (x + (1 - k.float()) * -1e9).amax(-1),
    "exp": lambda x, k: torch.exp(x.masked_fill(~k, -1e9)),
    "logsumexp": lambda x, k: torch.logsumexp(torch.where(k, x, torch.full_like(x, -1e9)), -1),
    "sigmoid": lambda x, k: torch.sigmoid(torch.where(k, x, torch.ones_like(x) * -1e4)),
    "softmax_dim0": lambda x, k: torch.softmax(x.masked_fill(~k, -1e9), 0),
    "sum": lambda x, k: x.masked_fill(~k, -1e9).sum(-1),
    "mean": lambda x, k: x.masked_fill(~k, -1e4).mean(-1),
}
# exp(...).sum(-1) as ptec's int8 sum of an exp, as unmasked (torch.exp(x).sum(-1): 6.0 steps)
SUM_OF_EXP_BOUND = 6.0


class Fn(nn.Module):
    def __init__(self, fn, **buffers):
        super().__init__()
        self.fn = fn
        for k, v in buffers.items():
            self.register_buffer(k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def _feeds(seed, mask, n=16, shape=(4, 10), whole=True):
    """[x, mask] feeds (mask: float values kept where > 0, or the bool itself);
    each feed keeps one position only in one row, and with whole, every
    other feed masks one row entirely."""
    g = torch.Generator().manual_seed(seed)
    feeds = []
    for i in range(n):
        x = torch.randn(*shape, generator=g) * 3
        m = torch.randn(*shape, generator=g)
        r = i % shape[0]
        m[r] = -1.0
        m[r, i % shape[1]] = 1.0
        if whole and i % 2:
            m[(r + 1) % shape[0]] = -1.0
        feeds.append([x, m > 0 if mask == "input" else m])
    return feeds


def _outputs(model, res, feeds):
    """The first output of program res on the host and of torch's model, per feed, stacked."""
    prog = parse_program(res.data)
    got, want = [], []
    for f in feeds:
        got.append(np.asarray(host_runtime.run(prog, res.data, [t.numpy() for t in f])[0], np.float64))
        with torch.no_grad():
            want.append(model(*[t.clone() for t in f]).numpy().astype(np.float64))
    return np.stack(got), np.stack(want)


def _check(model, feeds, bound=BOUND, calibration=None):
    """Compile on calibration (feeds), run each feed on the host: the kept
    results' worst error in output steps (asserted under bound), the fill's
    results exact."""
    model = model.eval()
    calibration = calibration or feeds
    res = compile_model(model, calibration[0], calibration)
    got, want = _outputs(model, res, feeds)
    fill = want <= -500             # results of the fill (a kept value's max or logsumexp is above -20)
    assert np.array_equal(fill, got <= -500)
    assert np.allclose(got[fill], want[fill], rtol=1e-6, atol=0), (got[fill], want[fill])
    if fill.all():                  # a sum of every row reads the fill: n * fill + the kept values, all checked
        return 0.0, fill, res
    step = float(np.ptp(want[~fill])) / 255
    worst = float(np.abs(got[~fill] - want[~fill]).max()) / step
    assert worst <= bound, worst
    return worst, fill, res


@pytest.mark.parametrize("mask", ["computed", "input"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_reader_of_masking_fill_runs(form, mask):
    """Before: refused (UnsupportedOperator "gives every kept value one code")."""
    model = Fn(lambda s, x, m: FORMS[form](x, m if m.dtype == torch.bool else m > 0))
    worst, fill, res = _check(model, _feeds(0, mask))
    print(f"{form} ({mask} mask): {worst:.2f} output steps")
    if form in ("amax", "max_pool_sequence", "max_values", "full_like_amax", "additive_amax", "logsumexp", "sum"):
        assert fill.any()                       # the rows masked entirely: torch's -1e9 (n * fill), exactly


def test_all_masked_rows_give_torchs_fill_exactly():
    """A row masked entirely: max / amax / logsumexp give -1e9 as torch does
    (float32 -1e9 + log(10) is -1e9), not a value clipped onto a grid."""
    for form in ("amax", "max_pool_sequence", "additive_amax", "logsumexp"):
        model = Fn(lambda s, x, m, form=form: FORMS[form](x, m > 0)).eval()
        feeds = _feeds(1, "computed")
        res = compile_model(model, feeds[0], feeds)
        prog = parse_program(res.data)
        x, m = feeds[1]
        got = host_runtime.run(prog, res.data, [x.numpy(), m.numpy()])[0]
        whole = ~(m > 0).any(-1)
        assert whole.any()
        assert (got[whole.numpy()] == np.float32(-1e9)).all(), (form, got)


@pytest.mark.parametrize("form", ["additive_amax", "amax", "logsumexp", "sigmoid"])
def test_calibration_that_masks_nothing(form):
    """Calibrated on feeds that keep every position (the additive mask's
    factor `(1 - keep.float()) * -1e9` never -1e9 there: its fp32 steps, not
    a grid of [0, 0]), run on feeds masking rows entirely."""
    model = Fn(lambda s, x, m: FORMS[form](x, m > 0))
    feeds = _feeds(8, "computed")
    calibration = [[x, m.abs() + 0.5] for x, m in feeds]
    _, fill, _ = _check(model, feeds, calibration=calibration)
    assert fill.any() or form == "sigmoid"


def test_sum_of_masked_exp():
    """exp(masked).sum(-1): the exp in fp32 (exactly 0 where masked), its sum
    ptec's int8 sum of an exp, as unmasked."""
    model = Fn(lambda s, x, m: torch.exp(x.masked_fill(~(m > 0), -1e9)).sum(-1))
    worst, _, _ = _check(model, _feeds(0, "computed"), SUM_OF_EXP_BOUND)
    print(f"exp sum: {worst:.2f} output steps")


def test_constant_mask_buffer():
    """A constant mask (a buffer) with a row masked entirely, read by amax,
    sigmoid and a softmax over dim 0."""
    keep = torch.rand(4, 10, generator=torch.Generator().manual_seed(3)) > 0.5
    keep[0], keep[1] = False, False
    keep[1, 4] = True
    feeds = [[x] for x, _ in _feeds(2, "computed", whole=False)]
    for form in ("amax", "sigmoid", "softmax_dim0"):
        model = Fn(lambda s, x, form=form: FORMS[form](x, s.keep), keep=keep)
        _, fill, _ = _check(model, feeds)
        if form == "amax":
            assert fill[:, 0].all() and not fill[:, 1:].any()


def test_constant_bias_and_modules():
    """x + a constant bias of 0 and -1e9 read by amax (a row masked
    entirely), a masked fill read by nn.Softmax(dim=0) and nn.Sigmoid."""
    bias = torch.where(torch.rand(4, 10, generator=torch.Generator().manual_seed(5)) > 0.5, 0.0, -1e9)
    bias[2] = -1e9
    feeds = [[x] for x, _ in _feeds(6, "computed", whole=False)]
    _, fill, _ = _check(Fn(lambda s, x: (x + s.bias).amax(-1), bias=bias), feeds)
    assert fill[:, 2].all() and not fill[:, [0, 1, 3]].any()
    for module in (nn.Softmax(dim=0), nn.Sigmoid()):
        model = Fn(lambda s, x, m: s.reader(x.masked_fill(~(m > 0), -1e9)))
        model.reader = module
        _check(model, _feeds(7, "computed"))


def test_masked_max_pool_then_linear():
    """Masked max-pooling over a sequence read by an int8 Linear (no row
    masked entirely): the pooled values quantized onto the Linear's grid."""
    torch.manual_seed(0)
    model = Fn(lambda s, x, m: s.head(x.masked_fill(~(m > 0).unsqueeze(-1), -1e9).max(1)[0]))
    model.head = nn.Linear(6, 3)
    g = torch.Generator().manual_seed(4)
    feeds = []
    for i in range(16):
        m = torch.randn(2, 7, generator=g)
        m = m.sign() * (m.abs() + 0.5)          # (a mask value at 0 compares on its int8 code: not this test's)
        m[:, i % 7] = 1.0
        feeds.append([torch.randn(2, 7, 6, generator=g) * 2, m])
    worst, _, _ = _check(model, feeds, 2.0)
    print(f"pooled head: {worst:.2f} output steps")


# -inf fills (masked max-pooling with float('-inf')): refused before ("no int8 value holds -inf" with a constant
# mask, "gives infinite values on the calibration inputs" with a computed one); now fp32 holding -inf
NEG = float("-inf")
NEG_FORMS = {
    "amax": lambda x, k: torch.where(k, x, NEG).amax(-1),
    "max_pool_sequence": lambda x, k: x.masked_fill(~k, NEG).max(1)[0],
    "max_values": lambda x, k: torch.max(x.masked_fill(~k, NEG), dim=-1).values,
    "max_indices": lambda x, k: x.masked_fill(~k, NEG).max(1).indices.float(),
    "exp": lambda x, k: torch.exp(x.masked_fill(~k, NEG)),
    "logsumexp": lambda x, k: torch.logsumexp(x.masked_fill(~k, NEG), -1),
    "sigmoid": lambda x, k: torch.sigmoid(torch.where(k, x, NEG)),
    "softmax_dim0": lambda x, k: torch.softmax(x.masked_fill(~k, NEG), 0),
    "sum": lambda x, k: x.masked_fill(~k, NEG).sum(-1),
    "mean": lambda x, k: x.masked_fill(~k, NEG).mean(-1),
}
# torch's float32 value where a row (softmax_dim0: a column) is masked entirely
NEG_WHOLE = {"amax": -np.inf, "max_pool_sequence": -np.inf, "max_values": -np.inf, "logsumexp": -np.inf,
             "sum": -np.inf, "mean": -np.inf, "softmax_dim0": np.nan}


def _neg_feeds(seed, mask):
    """_feeds, with a column masked entirely too on every fourth feed (a softmax over dim 0's whole masking)."""
    feeds = _feeds(seed, mask)
    for i, (x, m) in enumerate(feeds):
        if i % 4 == 1:
            m[:, (i + 3) % m.shape[1]] = False if m.dtype == torch.bool else -1.0
    return feeds


def _check_nonfinite(model, feeds, calibration=None):
    """As _check, the results torch gives as -inf or NaN the same (NaN equal
    to NaN), the finite ones within BOUND output steps; (worst, whether any
    result was -inf / NaN)."""
    model = model.eval()
    res = compile_model(model, (calibration or feeds)[0], calibration or feeds)
    got, want = _outputs(model, res, feeds)
    odd = ~np.isfinite(want)
    np.testing.assert_array_equal(got[odd], want[odd])
    assert np.isfinite(got[~odd]).all()
    if odd.all():               # a sum / mean of every row reads a -inf
        return 0.0, True
    step = float(np.ptp(want[~odd])) / 255
    worst = float(np.abs(got[~odd] - want[~odd]).max()) / step
    assert worst <= BOUND, worst
    return worst, bool(odd.any())


@pytest.mark.parametrize("mask", ["computed", "input", "constant"])
@pytest.mark.parametrize("form", sorted(NEG_FORMS))
def test_minus_inf_fill_reader_runs(form, mask):
    """A -inf fill read by each reader: rows (columns) masked entirely give
    torch's -inf / 0 / NaN, the kept results within 1 output step."""
    if mask == "constant":
        keep = torch.rand(4, 10, generator=torch.Generator().manual_seed(3)) > 0.5
        keep[0], keep[:, 5] = False, False
        keep[1, 4] = True
        model = Fn(lambda s, x: NEG_FORMS[form](x, s.keep), keep=keep)
        feeds = [[x] for x, _ in _feeds(2, "computed", whole=False)]
    else:
        model = Fn(lambda s, x, m: NEG_FORMS[form](x, m if m.dtype == torch.bool else m > 0))
        feeds = _neg_feeds(0, mask)
    worst, odd = _check_nonfinite(model, feeds)
    print(f"-inf {form} ({mask} mask): {worst:.2f} output steps")
    assert odd == (form in NEG_WHOLE)
    if form in NEG_WHOLE:       # the whole-masked results are torch's value itself
        with torch.no_grad():
            want = model(*feeds[1]).numpy()
        assert np.isnan(want).any() if np.isnan(NEG_WHOLE[form]) else (want == NEG_WHOLE[form]).any()


def test_minus_inf_calibration_that_masks_no_row():
    """Calibrated on feeds masking no row entirely (every result finite), run
    on feeds that do: -inf there all the same (nothing rests on a grid)."""
    for form in ("max_pool_sequence", "logsumexp"):
        model = Fn(lambda s, x, m, form=form: NEG_FORMS[form](x, m > 0))
        feeds = _neg_feeds(8, "computed")
        calibration = [[x, m.abs() + 0.5] for x, m in feeds]
        _, odd = _check_nonfinite(model, feeds, calibration)
        assert odd


@pytest.mark.parametrize("whole", [True, False])
def test_minus_inf_max_pool_read_by_int8_linear_refused(whole):
    """A -inf masked max-pool read by an int8 Linear: refused in one line
    naming the max (no int8 value holds -inf), whether or not calibration
    masks a row entirely; with -1e9 it runs (test_masked_max_pool_then_linear)."""
    torch.manual_seed(0)
    model = Fn(lambda s, x, m: s.head(x.masked_fill(~(m > 0).unsqueeze(-1), NEG).max(1)[0])).eval()
    model.head = nn.Linear(6, 3)
    g = torch.Generator().manual_seed(4)
    feeds = [[torch.randn(2, 7, 6, generator=g), torch.randn(2, 7, generator=g).abs() + 0.5] for _ in range(8)]
    if whole:
        feeds[0][1][0] = -1.0
    why = r"getitem.* is -inf .*an int8 step \(head \(nn\.Linear\)\) reads it: no int8 value holds -inf"
    with pytest.raises(Exception, match=why) as e:
        compile_model(model, feeds[0], feeds)
    assert "\n" not in str(e.value)
