"""Shape numbers used as numbers (capture_shape_numbers): `x * x.size(1)`,
`x.sum() / x.shape[2]`, `x + x.numel()`, attention's `/ q.size(-1) ** 0.5`
compile as the constants the trace gave them (ptec's shapes are static),
where capture used to drop the operand and fail with "list index out of
range". A size of a selection x[mask], which changes per run, is refused
naming the call.

Oracles: the float graph is torch's model; the host runtime's output is
the numpy reference interpreter's bytes and within a bound of torch in
output steps, on inputs whose outputs vary."""
import numpy as np
import pytest
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.ir import UnsupportedOperator, evaluate
from ptec.pte import parse_program
from model_checks import Call


def _inputs(n, seed, top=0.85):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 4, 8, generator=g) * 6 - 3) * float(s) for s in np.linspace(0.3, top, n)]


# call -> bound in output steps (measured)
CALLS = {
    "x * x.size(1)": (lambda x: x * x.size(1), 0.5),                                       # 0.50
    "x.sum() / x.shape[2]": (lambda x: x.sum() / x.shape[2], 2.5),                        # 2.36: x.sum()'s
    "x + x.numel()": (lambda x: x + x.numel(), 1.0),                                       # 0.57
    "x @ x.T / x.size(-1) ** 0.5": (lambda x: (x @ x.transpose(-2, -1)) / x.size(-1) ** 0.5, 1.0),   # 0.64
    "x.view(x.size(0), -1) * 2": (lambda x: x.view(x.size(0), -1) * 2, 0.5),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_shape_numbers_are_the_traced_constants(name, tmp_path):
    fn, bound = CALLS[name]
    calibration = [(x,) for x in _inputs(24, 1, top=1.0)]
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst, wants = 0.0, []
    for x in _inputs(8, 2):
        with torch.no_grad():
            want = fn(x)
        assert torch.equal(evaluate(res.graph, [x])[0].reshape(want.shape), want) or \
            torch.allclose(evaluate(res.graph, [x])[0].reshape(want.shape), want, rtol=1e-5, atol=1e-5)
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == run_program(prog, [x.numpy()])[0].tobytes()
        worst = max(worst, float(np.abs(got - want.numpy().reshape(got.shape)).max()) / step)
        wants.append(want.numpy().ravel())
    values = np.concatenate(wants)
    print(f"{name}: worst {worst:.2f} output steps over {(values.max() - values.min()) / step:.0f}")
    assert values.max() - values.min() >= 16 * step
    assert worst <= bound + 1e-3, f"{name}: {worst:.2f} output steps (bound {bound})"


LITERAL = {
    "x * x.size(1)": lambda x: x * 4,
    "x.sum() / x.shape[2]": lambda x: x.sum() / 8,
    "x + x.numel()": lambda x: x + 32,
    "x @ x.T / x.size(-1) ** 0.5": lambda x: (x @ x.transpose(-2, -1)) / 8 ** 0.5,
}


@pytest.mark.parametrize("name", sorted(LITERAL))
def test_the_program_is_the_literal_ones(name):
    """The same bytes as the model written with the number itself."""
    calibration = [(x,) for x in _inputs(6, 1, top=1.0)]
    spelled = compile_model(Call(CALLS[name][0]).eval(), [calibration[0][0]], calibration)
    literal = compile_model(Call(LITERAL[name]).eval(), [calibration[0][0]], calibration)
    assert spelled.data == literal.data


@pytest.mark.parametrize("fn,call", [(lambda x: x[x > 0] * x[x > 0].size(0), "size"),
                                     (lambda x: x[x > 0].sum() / x[x > 0].shape[0], "getitem"),
                                     (lambda x: x[x > 0] + x[x > 0].numel(), "numel")])
def test_a_size_of_a_selection_is_refused_by_name(fn, call):
    x = torch.linspace(-1, 2, 32).reshape(1, 4, 8)
    with pytest.raises(UnsupportedOperator) as e:
        compile_model(Call(fn).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"operator not supported: {call}") and "mask.sum()" in message


def test_a_view_spelled_with_a_selections_size_keeps_its_rows():
    """x[m].view(x[m].size(0), 1) is x[m].view(-1, 1) (capture_selection_rows)."""
    fn = lambda x: x[x > 0].view(x[x > 0].size(0), 1)      # noqa: E731
    calibration = [(x,) for x in _inputs(24, 1, top=1.0)]
    res = compile_model(Call(fn).eval(), [calibration[0][0]], calibration)
    prog = parse_program(res.data)
    for x in _inputs(4, 3):
        got = run_program(prog, [x.numpy()])[0]
        assert got.shape == tuple(fn(x).shape)
