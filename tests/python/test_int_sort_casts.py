"""Ordering and narrow casts of int values a program computes (issue 15,
capture_int_sort and capture_int_casts): sort / argsort / msort / topk /
kthvalue / median of int64 and int32 values, max / min along a dim, and
`.short()` / `.byte()` / `.char()` / `.double()` / `.to(torch.int16)` of
them and back.

Oracle: torch on the program's own integers (an int64 input, counts of a
comparison, an int32 cast of it): every value exact (0 steps) in torch's
dtype, inputs with ties and values beyond float32's and float64's exact
integers (2^24 + 1, 2^53 + 1, the int64 extremes); the host runtime's bytes
equal the numpy reference interpreter's. Indices: sort / argsort are
torch's stable sort (equal values in their order; torch's default sort on
the CPU agrees on rows of up to 16 elements and is unspecified beyond), the
median's is torch's own (the stable order's lower middle); topk /
kthvalue's tie order torch leaves unspecified, so their indices are
checked to point at the values, and to be the stable order's. Casts wrap as
torch's (300 as uint8 is 44, 40000 as int16 is -25536)."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program
from model_checks import exact_runs

BIG = [2 ** 53 + 1, 2 ** 53, 2 ** 24 + 1, 2 ** 24, -2 ** 63, 2 ** 63 - 1, -(2 ** 53) - 1, -(2 ** 53)]




class Orders(torch.nn.Module):
    """Orderings of an int64 input i [4, 20] (ties), its int32 copy k, and
    counts c = (x > 0).sum(-1) [4, 20] of a float input x [4, 20, 6]."""

    def forward(self, x, i):
        k = (i - 3).int()
        c = (x > 0).sum(-1)
        s, si = i.sort(-1)
        d, di = torch.sort(k, 1, descending=True)
        t, ti = torch.topk(i, 5)
        u, ui = k.topk(3, 0, largest=False)
        v, vi = torch.kthvalue(c, 4, -1)
        w, wi = torch.kthvalue(i, 2, 0, True)
        m, mi = i.median(-1)
        n, ni = torch.median(k, 0, keepdim=True)
        mx, mxi = c.max(-1)
        mn, mni = k.min(0)
        return (s, si, d, di, t, ti, u, ui, v, vi, w, wi, m, mi, n, ni, mx, mxi, mn, mni,
                torch.argsort(c, -1), c.argsort(0, descending=True), torch.msort(k), i.median(), (c * 5 - i * 3).median(),
                torch.nanmedian(k), (s * 2 - 1).sort(-1, descending=True)[0], s[:, -1] - s[:, 0], c)


def _feeds(n, seed, hi=6):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(4, 20, 6, generator=g), torch.randint(-hi, hi, (4, 20), generator=g)) for _ in range(n)]


def _torch_on(c, i):
    """Orders' outputs with torch on the program's own counts c (the float input's comparisons)."""
    class On(Orders):
        def forward(self, x, i):
            return super().forward(x, i)
    # c as counts of a fake x: ones where the count says
    x = (torch.arange(6)[None, None, :] < c[..., None]).float() * 2 - 1
    with torch.no_grad():
        return On()(x, i)


def test_orders_of_integers_are_torchs(tmp_path):
    feeds = _feeds(8, 3)
    feeds[-1][1][0, :8] = torch.tensor(BIG)                        # exact compares beyond float64's integers
    res, runs = exact_runs(Orders().eval(), feeds, tmp_path)
    assert [o.dtype for o in res.lowered.outputs][:4] == ["int64", "int64", "int32", "int64"]
    varied = {}
    for feed, (got, _) in zip(feeds, runs):
        i = feed[1]
        c = torch.from_numpy(got[-1].copy())
        want = _torch_on(c, i)
        assert torch.equal(want[-1], c)
        for at, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.numpy().dtype, at
            if at in (5, 7, 9, 11):                 # topk / kthvalue indices: ties unordered in torch
                continue
            if at in (1, 3, 20, 21):                # sort / argsort indices: torch's stable sort
                src, dim, desc = {1: (i, -1, False), 3: ((i - 3).int(), 1, True), 20: (c, -1, False),
                                  21: (c, 0, True)}[at]
                w = torch.sort(src, dim=dim, descending=desc, stable=True)[1]
            assert np.array_equal(g, w.numpy()), (at, g, w)             # 0 steps
            varied.setdefault(at, set()).add(np.asarray(g).tobytes())
        # topk / kthvalue: the indices point at the values, and are the stable order's
        k = (i - 3).int()
        for vat, iat, src, dim, take in ((4, 5, i, -1, lambda s: s[:, :5]), (6, 7, k, 0, lambda s: s[:3])):
            assert np.array_equal(np.take_along_axis(src.numpy(), got[iat], dim), got[vat])
            largest = vat == 4
            assert np.array_equal(got[iat], take(torch.sort(src, dim=dim, descending=largest, stable=True)[1]).numpy())
        for vat, iat, src, dim, kk in ((8, 9, c, -1, 4), (10, 11, i, 0, 2)):
            assert np.array_equal(np.take_along_axis(src.numpy(), got[iat].reshape(
                got[iat].shape if dim == 0 else got[iat].shape + (1,)), dim).reshape(got[vat].shape), got[vat])
            stable = torch.sort(src, dim=dim, stable=True)[1].narrow(dim, kk - 1, 1)
            assert np.array_equal(got[iat].reshape(-1), stable.reshape(-1).numpy())
    assert all(len(v) >= 3 for v in varied.values()), sorted((len(v), k) for k, v in varied.items())   # outputs vary
    # the values beyond float64's integers: 2^53 + 1 sorts above 2^53 (a double compare would tie them)
    last = runs[-1][0][0][0]
    assert list(last[:2]) == [-2 ** 63, -(2 ** 53) - 1] and list(last[-3:]) == [2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1]


class Short(torch.nn.Module):
    def forward(self, i):
        return (*torch.sort(i, -1, descending=True), torch.argsort(i.int()))


def test_rows_of_up_to_16_match_torchs_default_sort(tmp_path):
    # torch's default (unstable) CPU sort keeps equal values in order on rows of up to 16 elements
    g = torch.Generator().manual_seed(4)
    feeds = [(torch.randint(0, 3, (5, 16), generator=g),) for _ in range(4)]
    _, runs = exact_runs(Short().eval(), feeds, tmp_path)
    for got, want in runs:
        for g_, w in zip(got, want):
            assert g_.dtype == w.numpy().dtype and np.array_equal(g_, w.numpy())


class Casts(torch.nn.Module):
    def forward(self, i):
        k = i.int()
        s, b, ch, d = i.short(), i.byte(), i.char(), i.double()
        return (s, b, ch, d, k.to(torch.int16), i.type(torch.uint8), s.long(), b.int(), ch.long(), s.float(),
                b.float(), d.float(), b.short(), ch.byte(), s.char(), i.sort(-1)[0].short(),
                (i > 0).sum(-1).byte(), i.argmax(-1).double(), s.short(), ch.double())


def test_casts_wrap_as_torchs(tmp_path):
    edges = torch.tensor([0, -1, 255, 256, 300, -129, 32767, 32768, 40000, -40000, 2 ** 31 + 5, -2 ** 31 - 1,
                          2 ** 40 - 1, 2 ** 53 + 1, 2 ** 24 + 1, -2 ** 63, 2 ** 63 - 1, 127, 128, -128])
    g = torch.Generator().manual_seed(6)
    feeds = [(edges.view(4, 5),)] + [(torch.randint(-70000, 70000, (4, 5), generator=g),) for _ in range(6)]
    res, runs = exact_runs(Casts().eval(), feeds, tmp_path)
    assert [o.dtype for o in res.lowered.outputs][:4] == ["int16", "uint8", "int8", "float64"]
    varied = 0
    for got, want in runs:
        for at, (g_, w) in enumerate(zip(got, want)):
            assert g_.dtype == w.numpy().dtype, (at, g_.dtype, w.dtype)
            assert np.array_equal(g_, w.numpy()), (at, g_, w)              # exact: torch's wrap
            varied += int(np.ptp(np.asarray(g_, np.float64)) > 0)
    assert varied >= 18 * len(runs) - 1
    want = runs[0][1]
    assert want[0][0, 4].item() == 300 and want[1][0, 4].item() == 44 and want[0][1, 2].item() == -32768
    assert want[1][0, 1].item() == 255 and want[0][1, 3].item() == -25536 and want[2][1, 0].item() == 127
    assert want[3][2, 3].item() == 2.0 ** 53              # 2^53 + 1 as a double: the tie to even


@pytest.mark.parametrize("call, shown, why", [
    # calls on int16 / uint8 / int8 values run (capture_narrow_ints, test_narrow_ints.py) but for these
    (lambda i: i.masked_scatter(i.byte() % 2, i), r"masked_scatter \(Tensor\.masked_scatter\)",
     "ptec has no kernel for it in this form"),            # a uint8 mask is a bool's (test_uint8_masks.py)
    (lambda i: i.char() << (i.char() & 3), r"lshift \(operator\.lshift\)", "a shift of an int16 / uint8 / int8 value by a tensor"),
    (lambda i: torch.unique(i, dim=0), r"unique \(torch\.unique\)", "of an integer tensor it runs without dim"),
    (lambda i: i.double().long(), r"long \(Tensor\.long\)", "a float64 value back into integers"),
])
def test_what_stays_refused_in_one_line(call, shown, why):
    class Refused(torch.nn.Module):
        def forward(self, i):
            return call(i)
    i = torch.randint(-5, 5, (3, 6))
    with pytest.raises(Exception, match=rf"^[^\n]*{shown}[^\n]*{why}[^\n]*$"):
        compile_model(Refused().eval(), [i], [(i,)])


def test_a_float64_result_of_float_math_is_a_double_output(tmp_path):
    """i.double() * 2 returned: float math on the double's float32 copy (int8 steps), returned as float64
    (capture_casts; test_float64_outputs.py)."""
    class Doubled(torch.nn.Module):
        def forward(self, i):
            return i.double() * 2
    g = torch.Generator().manual_seed(3)
    feeds = [(torch.randint(-5, 5, (3, 6), generator=g),) for _ in range(4)]
    res = compile_model(Doubled().eval(), list(feeds[0]), feeds)
    assert [o.dtype for o in res.lowered.outputs] == ["float64"]
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    for (i,) in feeds:
        got = host_runtime.run(prog, res.data, [i.numpy()], workdir=str(tmp_path))[0]
        assert got.dtype == np.float64
        assert np.abs(got - (i.double() * 2).numpy()).max() <= 0.5 * step + 1e-9


class DoubleMath(torch.nn.Module):
    def forward(self, x, i):
        return (i.double() * 0.5 + x).float()


def test_float_math_on_a_double_is_its_float32_copys(tmp_path):
    # torch computes in float64, ptec in float32 like every float value (int8 steps): the bound of float math on
    # a promoted int value (test_integer_math: 1.5 output steps; 0.98 measured here)
    g = torch.Generator().manual_seed(8)
    feeds = [(torch.randn(3, 8, generator=g), torch.randint(-40, 40, (3, 8), generator=g)) for _ in range(6)]
    res, runs = exact_runs(DoubleMath().eval(), feeds, tmp_path)
    assert [o.dtype for o in res.lowered.outputs] == ["float32"]
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = max(np.abs(got[0] - want[0].numpy()).max() / step for got, want in runs)
    assert worst <= 1.5, worst
    assert np.ptp(runs[0][1][0].numpy()) > 16 * step


def test_the_cli_lists_narrow_outputs_in_their_dtype(tmp_path):
    # `python3 -m ptec compile` names each output's dtype; an int value's int8 copy has no int8 grid
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (tmp_path / "models.py").write_text(
        "import torch\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        i = (x * 100).round().long()\n"
        "        return i.char(), i.sort(-1)[0].double(), i.byte()\n\n\n"
        "def model():\n    return M(), (torch.randn(2, 5),)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"), HOME=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "ptec", "compile", f"{tmp_path}/models.py:model", "-o",
                        str(tmp_path / "m.pte")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    shown = r.stdout + r.stderr
    for line in ("output char: int8 [2, 5]", "output double: float64 [2, 5]", "output byte: uint8 [2, 5]"):
        assert line in shown, shown
    assert (tmp_path / "m.pte").exists()


class OnBoard(torch.nn.Module):
    def __init__(self, which):
        super().__init__()
        self.which = which

    def forward(self, x):
        i = (x * 40).round().long()
        if self.which == "sort":
            return torch.cat([i.sort(-1, descending=True)[0], torch.topk(i.int(), 3)[0].long()], 1).short()
        return torch.cat([i.sort(-1)[1], (i * 2 ** 40 + 1).median(-1, keepdim=True)[0]], 1).double()


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
@pytest.mark.parametrize("which", ["sort", "double"])
def test_integer_sorts_and_casts_on_boards(which, target, tmp_path):
    # the emulated boards print the reference's bytes (an int16 output; a float64 one, soft-float on the M33)
    from model_checks import board_matches_reference
    g = torch.Generator().manual_seed(9)
    xs = [(torch.randn(3, 10, generator=g),) for _ in range(4)]
    res = compile_model(OnBoard(which).eval(), [xs[0][0]], xs)
    board_matches_reference(res.data, xs[2][0].numpy(), target, tmp_path)
