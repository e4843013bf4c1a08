"""A uint8 (or, for masked_fill / masked_scatter, int8 / int16) value read
as a mask or condition (issue 15, capture_narrow_ints): torch 1.13 reads
x[b], torch.where(b, ...), masked_fill / masked_scatter / masked_select's
mask b of uint8 as booleans (nonzero: True, with a deprecation warning);
ptec reads `b.long() != 0` there (or the bool b was cast from).

Oracle: torch on the program's own integers, exact, on masks holding 0, 1
and larger values (where and indexing read 3 as True; masked_fill raises on
3, so its masks hold 0 and 1); on float inputs, within the int8 path's
output steps (test_function_coverage's rows). An int8 / int16 index or
condition torch itself refuses; ptec keeps its one-line refusal."""
import warnings

import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.capture import CaptureError
from ptec.compiler import CompileError
from ptec.interpreter import run_program
from ptec.pte import parse_program


class Masks(torch.nn.Module):
    """Integer calls reading masks of an int64 input i [4, 5]."""

    def forward(self, i):
        b = (i % 4).byte()                       # 0 ... 3: where and indexing read 3 as True
        m = (i % 2).to(torch.uint8)              # 0 or 1
        return (torch.where(b, i, -i), torch.where(b > 1, i * 2, i), i.masked_fill(m, 7),
                i.masked_fill((i % 2).char(), -1), i.masked_fill((i % 2).short(), 5),
                torch.where((i > 0).byte(), i, i * 3))


def _feeds():
    g = torch.Generator().manual_seed(64)
    return [(torch.randint(-50, 50, (4, 5), generator=g),) for _ in range(4)]


def _run(model, feeds, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # torch's deprecation of uint8 masks
        res = compile_model(model, list(feeds[0]), feeds)
        assert not res.lowered.fallbacks
        prog = parse_program(res.data)
        for feed in feeds:
            arrays = [t.numpy() for t in feed]
            got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
            assert [np.asarray(g).tobytes() for g in got] == \
                [np.asarray(w).tobytes() for w in run_program(prog, arrays)]
            with torch.no_grad():
                want = model(*feed)
            yield got, want


def test_masks_are_torchs_exactly(tmp_path):
    varied = 0
    for got, want in _run(Masks().eval(), _feeds(), tmp_path):
        assert len(got) == len(want)
        for at, (g_, w) in enumerate(zip(got, want)):
            assert g_.dtype == w.numpy().dtype and np.array_equal(g_, w.numpy()), (at, g_, w)
            varied += int(np.ptp(g_) > 0)
    assert varied == 6 * 4


@pytest.mark.parametrize("fn", [lambda x: x[(x > 0).byte()], lambda x: torch.masked_select(x, (x > 0).to(torch.uint8)),
                                lambda x: x[(x[..., 0] > 0).byte()]])
def test_selections_by_a_uint8_mask_are_torchs(fn, tmp_path):
    """The count torch's (inputs an input step or more from the threshold 0), the values within half a step."""
    from model_checks import Call
    model = Call(fn).eval()
    g = torch.Generator().manual_seed(2)
    cal = [(torch.rand(1, 4, 8, generator=g) * 6 - 3,) for _ in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal)
        prog = parse_program(res.data)
        step = res.graph.node(res.graph.outputs[0]).qparams[0]
        in_step = res.graph.node(res.graph.inputs[0]).qparams[0]
        counts = set()
        for (x,) in cal + [(torch.full((1, 4, 8), -2.5),)]:
            x = torch.where(x.abs() < in_step, x + 2 * in_step, x)
            got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
            assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
            want = model(x).numpy()
            assert got.shape == want.shape
            assert want.size == 0 or np.abs(got - want).max() <= 0.5 * step + 1e-6
            counts.add(want.size)
    assert 0 in counts and len(counts) >= 3


def test_float_masks_within_a_step(tmp_path):
    """torch.where, masked_fill, masked_scatter of uint8 masks on float x: the int8 path, as a bool mask's."""
    from test_module_coverage import worst_steps
    from model_checks import Call
    model = Call(lambda x: torch.where((x > 0.5).byte(), x, x * -0.5) + x.masked_fill((x < -1).byte(), 2.0)
                 + x.masked_scatter((x > 1).to(torch.uint8), x * 0.5)).eval()
    g = torch.Generator().manual_seed(1)
    cal = [(torch.rand(1, 4, 8, generator=g) * 6 - 3,) for _ in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compile_model(model, [cal[0][0]], cal)
        assert worst_steps(model, res, cal[:4], tmp_path) <= 1.5      # 1.46: three rounded terms added


@pytest.mark.parametrize("fn", [lambda i: i[(i % 2).char()], lambda i: torch.where((i % 2).short(), i, -i)])
def test_int8_index_or_condition_still_refused(fn):
    """torch refuses them ("tensors used as indices must be long, byte or bool", "where expected condition
    to be a boolean tensor"): so does ptec, in one line."""
    from model_checks import Call
    i = torch.arange(20).view(4, 5)
    with pytest.raises(Exception) as e:
        fn(i)
    with pytest.raises((CompileError, CaptureError)) as e:
        compile_model(Call(fn).eval(), [i], [(i,)])
    assert "\n" not in str(e.value)
