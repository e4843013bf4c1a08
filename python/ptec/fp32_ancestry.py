"""Marking the steps that compute a value fp32, back to where they start.

Some values decide a discrete choice in a float kernel: an nms threshold
decides which pairs are suppressed, a computed image height decides a
MultiScaleRoIAlign level's scale. An int8 grid on the steps computing
them would move such a value across the choice, so those steps run in
fp32. The walk goes back through calls to the program's inputs,
attributes and submodules (a layer's output keeps its own grid), and
leaves integer steps, and an integer's cast to float, as they are (ptec
computes integers exactly)."""
from typing import Callable, Optional

import torch


def mark_fp32_ancestry(node: torch.fx.Node, floating: Callable[[torch.fx.Node], Optional[bool]],
                       reason: str) -> None:
    """Marks node and the calls computing it ptec_fp32 (reason), where
    floating(n) says n is a float tensor (True), an integer one (False) or
    unknown (None): a float step whose inputs hold no integer is marked."""
    todo, seen = [node], set()
    while todo:
        n = todo.pop()
        if n in seen or n.op not in ("call_function", "call_method"):
            continue
        seen.add(n)
        ins = n.all_input_nodes
        if floating(n) is True and not any(floating(i) is False for i in ins):
            n.meta.setdefault("ptec_fp32", reason)
        todo.extend(ins)
