"""capture_isinstance's answers by caller (its shim narrowed: the caller's
file looked up once per file, proxies' callers asked before their shadow
values). Oracle: the rule its module doc states, written out here: while a
trace runs, isinstance of a proxy whose value is known, or of a stand-in,
answers as for that value / the original module only when called from the
model's code; torch's and fx's own code (files in torch's folder) keep
Python's answer, whatever order and however often the two ask."""
import torch
import torch.nn as nn

from ptec.capture_isinstance import isinstance_as_torch
from ptec.capture_tracer import KnownValuesTracer, _TORCH_DIR

_ASK = "def ask(obj, cls):\n    return isinstance(obj, cls)\n"


def _asker(filename):
    scope = {}
    exec(compile(_ASK, filename, "exec"), scope)
    return scope["ask"]


def _known_proxy():
    tracer = KnownValuesTracer()
    tracer.graph = torch.fx.Graph()
    tracer.start([torch.zeros(2)])
    node = tracer.graph.placeholder("x")
    tracer._values[node] = torch.zeros(2)
    return torch.fx.Proxy(node, tracer)


class _StandIn(nn.Module):
    def __init__(self, original):
        super().__init__()
        self.__dict__["_ptec_original"] = original


def test_answers_depend_on_the_caller_not_on_who_asked_first(tmp_path):
    torch_code = _asker(_TORCH_DIR + "fx/_ptec_test_caller.py")
    model_code = _asker(str(tmp_path / "model.py"))
    proxy, stand_in, plain = _known_proxy(), _StandIn(nn.LSTMCell(2, 3)), nn.Linear(2, 2)
    asked = []
    with isinstance_as_torch():
        for _ in range(2):                          # the second round reads the per-file answers kept
            for ask in (torch_code, model_code, torch_code):
                asked.append((ask is model_code, ask(proxy, torch.Tensor), ask(stand_in, nn.LSTMCell),
                              ask(plain, nn.LSTMCell), ask(stand_in, nn.GRUCell), ask(3, torch.Tensor)))
    for from_model, proxy_is_tensor, stand_in_is_cell, plain_is_cell, stand_in_is_gru, int_is_tensor in asked:
        assert proxy_is_tensor is from_model and stand_in_is_cell is from_model
        assert not plain_is_cell and not stand_in_is_gru and not int_is_tensor
    # outside the trace Python's own answers
    assert not model_code(proxy, torch.Tensor) and not model_code(stand_in, nn.LSTMCell)
