"""torch.as_tensor(t) / torch.tensor(t) of a traced tensor keep t's dtype,
as torch does (as_tensor is t itself, tensor a copy); an explicit dtype= is a
cast. The Python-number rule (float -> float32, int -> int64) is only for
numbers read by item()/tolist() (test_item_and_outputs.py). Torch is the oracle:
integer results exact."""
import numpy as np
import pytest
import torch

from model_checks import Call
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.pte import parse_program


def _run(fn, calib, feed, tmp_path):
    model = Call(fn).eval()
    res = compile_model(model, list(calib[0]), calib)
    got = host_runtime.run(parse_program(res.data), res.data, [t.numpy() for t in feed], workdir=str(tmp_path))[0]
    with torch.no_grad():
        want = model(*feed)
    return np.asarray(got), want


CASES = {
    # uint8 + 100 wraps at 256 in torch (int64 would not)
    "as_tensor(uint8) + 100": (lambda x: (torch.as_tensor(x) + 100).float(), torch.uint8),
    "tensor(uint8) + 100": (lambda x: (torch.tensor(x) + 100).float(), torch.uint8),
    # int32 * 3: exact in int32 (dtype of the result follows the input's)
    "as_tensor(int32) * 3": (lambda x: torch.as_tensor(x) * 3, torch.int32),
    "tensor(int32) // 7": (lambda x: torch.tensor(x) // 7, torch.int32),
    # bool stays bool: ~ is logical not (on int64 it would be bitwise -1 / -2)
    "as_tensor(bool) invert": (lambda x: (~torch.as_tensor(x)).to(torch.int32), torch.bool),
    "tensor(bool) invert": (lambda x: (~torch.tensor(x)).to(torch.int32), torch.bool),
    # an explicit dtype= is a cast: uint8 -> int32 no longer wraps
    "as_tensor(uint8, dtype=int32) + 100": (lambda x: torch.as_tensor(x, dtype=torch.int32) + 100, torch.uint8),
}


def _ints(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, (1, 16), generator=g).bool()
    lo, hi = (0, 256) if dtype == torch.uint8 else (-100000, 100000)
    return torch.randint(lo, hi, (1, 16), generator=g).to(dtype)


@pytest.mark.parametrize("name", CASES)
def test_traced_tensor_keeps_its_integer_dtype(name, tmp_path):
    fn, dtype = CASES[name]
    calib = [(_ints(dtype, s),) for s in range(4)]
    feed = (_ints(dtype, 9),)
    if dtype == torch.uint8:
        feed = (torch.tensor([[0, 100, 155, 156, 200, 255, 3, 50, 1, 2, 254, 157, 99, 128, 129, 10]],
                             dtype=torch.uint8),)
    got, want = _run(fn, calib, feed, tmp_path)
    assert got.reshape(want.shape).tolist() == want.tolist(), (name, got, want)

