"""c_n of an nn.LSTM whose output runs on the LSTM kernel (nn.LSTM as the
whole model returns (out, (h_n, c_n))).

ptec::quantized_lstm gives each step's h but not the last cell state. A
model reading c_n used to be unrolled whole, which costs its out and h_n
accuracy too (out 1.6 against 0.9 output steps). Here only c_n is
unrolled: each LSTMFinalCell call of the traced graph is replaced by the
graph of an nn.LSTM layer of the same weights traced unrolled (capture's
stand-in, as a model reading c_n gets), reading the same input sequence,
its c_n taken; out and h_n stay the kernel's."""
from __future__ import annotations

from typing import Callable

import torch
import torch.fx
import torch.nn as nn


class _FinalCell(nn.Module):
    """c_n [B, H] of one unrolled nn.LSTM layer from the zero state."""

    def __init__(self, cell):
        super().__init__()
        hidden, inputs = cell.weight_hh.shape[1], cell.weight_ih.shape[1]
        self.lstm = nn.LSTM(inputs, hidden, batch_first=True)
        with torch.no_grad():
            self.lstm.weight_ih_l0.copy_(cell.weight_ih)
            self.lstm.weight_hh_l0.copy_(cell.weight_hh)
            self.lstm.bias_ih_l0.copy_(cell.bias)
            self.lstm.bias_hh_l0.zero_()

    def forward(self, seq):
        return self.lstm(seq)[1][1][0]


def _values(gm: torch.fx.GraphModule, example_inputs, wanted):
    """The example values of the nodes in wanted, gm run on the example."""
    found = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            if n in wanted:
                found[n] = result
            return result
    with torch.no_grad():
        Recorder(gm).run(*[x.clone() for x in example_inputs])
    return found


def unrolled_final_cells(gm: torch.fx.GraphModule, example_inputs, final_cell_type,
                         trace: Callable[[nn.Module, list], torch.fx.GraphModule]) -> bool:
    """Replaces each call of a final_cell_type module in gm by the graph
    trace() gives of its layer unrolled; False (gm unchanged) when a call
    does not fit (its example value, or the unrolled graph's, is not the
    layer's c_n)."""
    calls = [fn for fn in gm.graph.nodes if fn.op == "call_module"
             and isinstance(gm.get_submodule(fn.target), final_cell_type)]
    seqs = {fn.args[0] for fn in calls}
    if any(len(fn.args) != 1 or fn.kwargs or not isinstance(fn.args[0], torch.fx.Node) for fn in calls):
        return False
    try:
        values = _values(gm, example_inputs, seqs)
    except Exception:                   # noqa: BLE001 - no example value: the caller unrolls the whole model
        return False
    made = []
    for k, fn in enumerate(calls):
        cell = gm.get_submodule(fn.target)
        seq = values.get(fn.args[0])
        if not isinstance(seq, torch.Tensor) or seq.dim() != 3:
            return False
        stand_in = _FinalCell(cell).eval()
        with torch.no_grad():
            want = cell(seq)
            if not torch.allclose(stand_in(seq), want, atol=1e-5):
                return False
        try:
            sub = trace(stand_in, [seq])
        except Exception:               # noqa: BLE001
            return False
        outputs = [n for n in sub.graph.nodes if n.op == "output"]
        if len(outputs) != 1 or not isinstance(outputs[0].args[0], torch.fx.Node):
            return False
        made.append((fn, f"ptec_final_cell_{k}", sub))
    for fn, prefix, sub in made:
        gm.add_submodule(prefix, sub)
        env = {}
        with gm.graph.inserting_before(fn):
            for n in sub.graph.nodes:
                if n.op == "placeholder":
                    env[n] = fn.args[0]
                elif n.op == "output":
                    fn.replace_all_uses_with(env[n.args[0]])
                else:
                    copied = gm.graph.node_copy(n, lambda a: env[a])
                    if n.op in ("get_attr", "call_module"):
                        copied.target = f"{prefix}.{n.target}"
                    env[n] = copied
        gm.graph.erase_node(fn)
    gm.recompile()
    return True
