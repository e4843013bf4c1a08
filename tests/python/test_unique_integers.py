"""torch.unique / unique_consecutive of int64 / int32 values
(ptec.capture_unique_integers, issue 15) and of int16 / uint8 / int8 ones
(ptec.capture_unique_narrow): values, inverse and counts are
torch's exactly, in torch's dtypes, on the host runtime and the reference;
what stays out is refused in one line."""
import pytest
import torch

from ptec.compiler import CompileError, compile_model
from ptec.ir import UnsupportedOperator
from model_checks import Call
from test_counts_readers import run_all
from test_unique_counts import grid_inputs


def ids(x):
    """int64 values with repeats, their number varying: x on a grid of halves, doubled."""
    return (x * 2).round().long()


CALLS = {
    "x.long().unique()": lambda x: ids(x).unique(),
    "torch.unique(inverse, counts)": lambda x: torch.unique(ids(x), return_inverse=True, return_counts=True),
    "unique(return_inverse)": lambda x: torch.unique(ids(x), return_inverse=True),
    "unique(return_counts)[1]": lambda x: torch.unique(ids(x), return_counts=True)[1],
    "int32 unique(inverse, counts)": lambda x: torch.unique((x * 2).round().int(), return_inverse=True,
                                                            return_counts=True),
    "unique_consecutive(inverse, counts)": lambda x: ids(x).unique_consecutive(return_inverse=True,
                                                                               return_counts=True),
    "int32 unique_consecutive()": lambda x: torch.unique_consecutive((x * 2).round().int()),
    "argmax ids unique()": lambda x: torch.unique(x.reshape(4, 8).argmax(1)),
    "argmax ids unique_consecutive(counts)": lambda x: torch.unique_consecutive(x.reshape(8, 4).argmax(1),
                                                                                return_counts=True),
    "values[counts.argmax()]": lambda x: (lambda v, c: v[c.argmax()])(*torch.unique(ids(x), return_counts=True)),
    "unique().float()": lambda x: ids(x).unique().float(),
    "unique() * 2 - 1": lambda x: ids(x).unique() * 2 - 1,
    "unique().max() / sum()": lambda x: (ids(x).unique().max(), ids(x).unique().sum()),
    "of a 2-D ids value": lambda x: torch.unique(ids(x).reshape(4, 8)[:, 1:], return_inverse=True),
    # int16 / uint8 / int8 (capture_unique_narrow): on the int64 copy, the values cast back; wrapped values
    "int16 unique()": lambda x: torch.unique((ids(x) * 9000).to(torch.int16)),
    "uint8 unique(counts)": lambda x: torch.unique((ids(x) * 3 + 2).byte(), return_counts=True),
    "int8 unique(inverse, counts)": lambda x: torch.unique((ids(x) * 50).char(), return_inverse=True,
                                                           return_counts=True),
    "int16 unique(inverse)": lambda x: (ids(x) - 3).short().unique(return_inverse=True),
    "int8 unique_consecutive(inverse, counts)": lambda x: torch.unique_consecutive(
        (ids(x) * 40).to(torch.int8), return_inverse=True, return_counts=True),
    "uint8 unique_consecutive()": lambda x: (ids(x) * 70).byte().unique_consecutive(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_integer_unique_is_torchs(name, tmp_path):
    cal = grid_inputs(7, 6) + [(torch.full((1, 4, 8), 1.0),)]
    seen = run_all(CALLS[name], cal, tmp_path)
    assert len(seen) >= 3, seen


@pytest.mark.parametrize("reps", [(1, 2, 4), (1, 6, 8)])
def test_many_elements_exact(reps, tmp_path):
    """256 and 1,536 elements (the sort has no limit; 256 was the [n, n]
    tables' before it), values far apart in int64 (no int8 grid), negative
    ones, and beyond float64's integers (2^53 + k)."""
    fn = lambda x: torch.unique((lambda r: r * 1000003 + (r > 2).long() * 2 ** 53)(ids(x).repeat(*reps)),  # noqa: E731
                                return_inverse=True, return_counts=True)
    seen = run_all(fn, grid_inputs(2, 6), tmp_path)
    assert len(seen) >= 3, seen


def test_consecutive_many_elements_exact(tmp_path):
    fn = lambda x: torch.unique_consecutive(ids(x).view(1, 32, 1).repeat(1, 1, 10) - 7,  # noqa: E731
                                            return_inverse=True, return_counts=True)
    seen = run_all(fn, grid_inputs(2, 6), tmp_path)
    assert len(seen) >= 3, seen


@pytest.mark.parametrize("call,why", [
    ("torch.unique(ids(x), dim=1)", "(torch.unique): of an integer tensor it runs without dim"),
    ("torch.unique(ids(x), sorted=False)", "sorted (sorted=True)"),
    # (a 1-D selection's dim 0 runs: test_unique_selection_dim.py; an integer row selection is refused)
    ("ids(x)[0][ids(x)[0, :, 0] > 0].unique_consecutive(dim=0)", "or a selection x[m] with m of x's shape"),
    ("ids(x).short().unique(dim=1)", "(Tensor.unique): of an integer tensor it runs without dim"),
    ("ids(x).unique().argmax()", "(Tensor.argmax): it reads"),
    ("ids(x).unique().cumsum(0)", "(Tensor.cumsum): it reads"),
])
def test_left_refused_in_one_line(call, why):
    x = grid_inputs(0, 6, n=1)[0][0]
    with pytest.raises((CompileError, UnsupportedOperator)) as e:
        compile_model(Call(eval(f"lambda x: {call}")).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and why in message, message
    print(message)
