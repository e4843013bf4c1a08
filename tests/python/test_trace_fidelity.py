"""Python in a forward that torch.fx's trace did not see (probe: trace
fidelity), each compiled wrong silently or refused before:

1. `isinstance(x, torch.Tensor)` / `torch.is_tensor(x)` of a traced value
   was False (the program returned its input, 129 output steps off);
2. `isinstance(self.cell, nn.LSTMCell)` of a module ptec swaps for a
   stand-in while tracing was False (the identity again);
4. nn.quantized.FloatFunctional in a float model (torchvision's
   quantizable models, quantize=False) was refused as a converted module;
5. a function registered with torch.fx.wrap was refused ("no kernel for
   wrapped_fn") even when its body traces;

Oracle: PyTorch float, within a bound in output quantization steps on
inputs whose outputs vary; ptec-run gives the reference interpreter's
bytes (host_steps_from_float)."""
import pytest
import torch
import torch.nn as nn

from ptec.compiler import compile_model

from layer_fn_model import LayerFn, samples, steps




TENSOR_CHECKS = {
    "isinstance": lambda s, x: s.l(x) if isinstance(x, torch.Tensor) else x,
    "isinstance-tuple": lambda s, x: s.l(x) if isinstance(x, (list, torch.Tensor)) else x,
    "torch.is_tensor": lambda s, x: s.l(x) if torch.is_tensor(x) else x,
    "not-isinstance": lambda s, x: x if not isinstance(s.l(x), torch.Tensor) else s.l(x) * 2,
}


@pytest.mark.parametrize("check", list(TENSOR_CHECKS))
def test_isinstance_of_a_traced_tensor_is_true(check, tmp_path):
    assert steps(LayerFn(TENSOR_CHECKS[check]), tmp_path) <= 2.0


def _cell_or_identity(s, x):
    return s.l(x)[0] if isinstance(s.l, nn.LSTMCell) else x


def _lstm_or_identity(s, x):
    return s.l(x.unsqueeze(0))[0][0] if isinstance(s.l, nn.LSTM) else x


def _gru_cell_or_identity(s, x):
    return s.l(x) if isinstance(s.l, (nn.GRUCell, nn.LSTMCell)) else x


@pytest.mark.parametrize("fn,layer", [(_cell_or_identity, lambda: nn.LSTMCell(5, 8)),
                                      (_lstm_or_identity, lambda: nn.LSTM(5, 8)),
                                      (_gru_cell_or_identity, lambda: nn.GRUCell(5, 8))],
                         ids=["LSTMCell", "LSTM", "GRUCell"])
def test_isinstance_of_a_replaced_module_is_its_class(fn, layer, tmp_path):
    assert steps(LayerFn(fn, layer()), tmp_path) <= 3.0


def test_isinstance_of_a_traced_value_elsewhere_keeps_torchs_answer(tmp_path):
    # a traced tensor is no nn.Module and no tuple; a replaced LSTMCell is no GRUCell
    def fn(s, x):
        y = s.l(x)[0]
        bad = isinstance(y, (nn.Module, tuple)) or isinstance(s.l, nn.GRUCell)
        return y * 3 if bad else y
    assert steps(LayerFn(fn, nn.LSTMCell(5, 8)), tmp_path) <= 3.0


class _FloatFunctionals(nn.Module):
    def __init__(self, ff):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(5, 8)
        self.ff = ff()

    def forward(self, x):
        y = self.l(x)
        f = self.ff
        return (f.add(y, y) + f.mul(y, y) + f.add_relu(y, -y * 0.5) + f.add_scalar(y, 1.0)
                + f.mul_scalar(y, 0.5) + f.cat([y, -y], 1)[:, 4:12])


@pytest.mark.parametrize("ff", ["torch.nn.quantized", "torch.ao.nn.quantized"])
def test_float_functional_in_a_float_model_runs(ff, tmp_path):
    import importlib
    cls = importlib.import_module(ff).FloatFunctional
    assert steps(_FloatFunctionals(cls), tmp_path) <= 3.0     # six int8 ops summed: 2.47 measured


def test_prepared_float_functional_is_still_refused():
    import torch.ao.quantization as tq
    m = _FloatFunctionals(nn.quantized.FloatFunctional).eval()
    m.qconfig = tq.get_default_qconfig("fbgemm")
    tq.prepare(m, inplace=True)
    cal = samples()
    with pytest.raises(Exception, match="observer torch.ao.quantization's prepare inserted"):
        compile_model(m, cal[0], cal)


def test_qfunctional_is_still_refused():
    m = _FloatFunctionals(nn.quantized.QFunctional).eval()
    cal = samples()
    with pytest.raises(Exception, match="module ff .*QFunctional.* torch.ao.quantization made"):
        compile_model(m, cal[0], cal)


# 5. torch.fx.wrap: fx keeps these as one call, which ptec has no kernel for


def _columns_scaled(a, b):
    # a loop over a size and a dtype check: plain fx cannot trace it, ptec's known values can
    cols = [a[:, i:i + 1] * (i + 1) for i in range(a.shape[1])]
    out = torch.cat(cols, 1) + b
    return out if a.dtype == torch.float32 else out.double()


torch.fx.wrap("_columns_scaled")


@torch.fx.wrap
def _sign_chosen(a):
    return a if a.sum() > 0 else -a     # needs the input's values: stays one call, refused


class _Wrapped(nn.Module):
    def __init__(self, fn):
        super().__init__()
        torch.manual_seed(0)
        self.l = nn.Linear(5, 8)
        self.fn = fn

    def forward(self, x):
        y = self.l(x)
        return self.fn(y, y * 0.5) if self.fn is not _sign_chosen else _sign_chosen(y) + y


def test_fx_wrapped_function_runs_its_body(tmp_path):
    assert steps(_Wrapped(lambda a, b: _columns_scaled(a, b)), tmp_path) <= 2.0


def test_fx_wrapped_function_needing_values_is_refused_naming_it():
    m = _Wrapped(_sign_chosen).eval()
    cal = samples()
    with pytest.raises(Exception, match="_sign_chosen") as e:
        compile_model(m, cal[0], cal)
    assert "\n" not in str(e.value)



# 3. a tensor made in forward by a factory, then written by traced values


def _out_into_zeros(s, x):
    buf = torch.zeros(2, 8)
    torch.mul(s.l(x), 2, out=buf)
    return buf


def _out_into_empty(s, x):
    buf = torch.empty(2, 8)
    torch.mul(s.l(x), 2, out=buf)
    return buf - 1


def _slice_into_zeros(s, x):
    out = torch.zeros(2, 10)
    out[:, 1:9] = s.l(x)
    return out


def _slice_then_reads(s, x):
    out = torch.zeros(2, 10)
    out[:, 1:9] = s.l(x)
    return out * 2 + out        # every read after the write: was one frozen constant


def _add_into_ones(s, x):
    acc = torch.ones(2, 8)
    acc.add_(s.l(x))
    acc.relu_()
    return acc


def _view_written(s, x):
    out = torch.zeros(2, 10)
    out[:, 1:9] = s.l(x)
    v = out[:, :4]
    v.mul_(3)
    return out


def _empty_all_written(s, x):
    out = torch.empty(2, 8)
    out[:] = s.l(x)
    return out + 1


def _like_of_made(s, x):
    out = torch.zeros_like(torch.ones(2, 10))
    out[:, 1:9] = s.l(x)
    return torch.cat([out, torch.full((2, 3), 0.5)], 1)


def _rows_written(s, x):
    rows = torch.zeros(4, 8)
    rows[0] = s.l(x)[0]
    rows[3] = s.l(x)[1] * 2
    return rows.sum(0, keepdim=True) + rows[1:3]


def _eager_view_copied(s, x):
    out = torch.zeros(2, 10)
    v = out[:, 1:9]             # a view made before any traced write: eager too
    v.copy_(s.l(x))
    return out


MADE = {f.__name__: f for f in (_out_into_zeros, _out_into_empty, _slice_into_zeros, _slice_then_reads,
                                _add_into_ones, _view_written, _empty_all_written, _like_of_made, _rows_written,
                                _eager_view_copied)}


@pytest.mark.parametrize("name", list(MADE))
def test_write_into_a_tensor_made_in_forward_runs(name, tmp_path):
    assert steps(LayerFn(MADE[name]), tmp_path) <= 3.0


def _empty_partly_written(s, x):
    out = torch.empty(2, 10)
    out[:, 1:9] = s.l(x)
    return out


def test_read_of_unwritten_empty_memory_is_refused_naming_the_line():
    m = LayerFn(_empty_partly_written).eval()
    cal = samples()
    with pytest.raises(Exception, match=r"test_trace_fidelity.py:\d+ \(`out = torch.empty\(2, 10\)`\): a tensor "
                                        "made by torch.empty is read where nothing wrote it") as e:
        compile_model(m, cal[0], cal)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("net", ["mobilenet_v2", "resnet18"])
def test_torchvision_quantizable_float_model_captures_as_torch(net):
    """torchvision's quantizable networks with quantize=False hold
    FloatFunctional (skip_add.add / add_relu): captured, the float graph is
    torch's (fp32, 1e-4 of the output's range)."""
    import torchvision.models.quantization as tq
    from ptec.capture import capture
    from ptec.ir import evaluate
    torch.manual_seed(0)
    m = getattr(tq, net)(quantize=False).eval()
    x = torch.randn(1, 3, 64, 64)
    g = capture(m, [x], method="fx")
    with torch.no_grad():
        want = m(x)
    got = evaluate(g, [x])[0]
    assert got.shape == want.shape
    assert float((got - want).abs().max()) <= 1e-4 * float(want.max() - want.min())
