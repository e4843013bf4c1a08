"""Residual adds whose every reader computes in fp32 anyway: the add in
fp32 too (attrs["fp32"], aten::add.out of the two dequantized operands).

A residual add's int8 grid spans its whole calibrated range, over every
token. A token whose row is small there (a class token concatenated as a
row of zeros before nn.TransformerEncoderLayer: its residual is the
attention's output alone, a few hundredths) sits on a few codes of that
grid, and a layer norm (fp32 by default) divides that row by its own small
standard deviation: the rounding is magnified to a tenth of the unit row.
The class token's output was 21.2 output steps off (post-norm) and 14.5
(norm_first: the residual read through the token's slice as the output).

So an add of two computed values whose readers are all fp32 anyway (a
layer norm without --int8-layernorm, another add made fp32 here, a data
move read by the program's float output, a node another pass made fp32)
is computed in fp32: its operands' own grids (the attention output's,
the feed-forward's) are far finer than the sum's, and the sum is never
rounded. Readers are decided from the output up (an add read by an add
made fp32 joins it). Runs after calibration, before quantize; not with
int8 inputs and outputs, nor for adds --a16 makes int16 (their grid is
fine already). The class token after this: see docs/aot.md (the attention
context, softmax @ v of a near-uniform row, rounded on v's grid, is what
remains)."""
from __future__ import annotations

from typing import Callable

from .ir import Graph, origin

REASON = ("a residual add read only by fp32 steps (a layer norm, the float output): computed in fp32 "
          "(its int8 grid, over every token, is coarse for a token of small values that a layer norm magnifies)")
_MOVES = ("reshape", "permute", "slice")


def _float_reader(g: Graph, name: str, int8_layernorm: bool, seen: set) -> bool:
    n = g.node(name)
    if n.attrs.get("fp32") or name in seen:
        return True
    if n.op == "layer_norm":
        return not int8_layernorm
    if n.op in _MOVES:        # a move read by the program's float output or by fp32 readers
        readers = g.users(name)
        return (bool(readers) or name in g.outputs) and \
            all(_float_reader(g, u.name, int8_layernorm, seen) for u in readers)
    return False


def _narrow_slice(g: Graph, observer, add: str, name: str) -> bool:
    """name slices rows (a token) out of the add whose calibrated range is
    under half the add's: the slice is quantized on its own, finer grid
    (an int8 reader's copy of the fp32 value) instead of the add's."""
    n = g.node(name)
    if n.op != "slice" or name not in observer.lo or add not in observer.lo:
        return False
    lo, hi = observer.range(name)
    a, b = observer.range(add)
    return 0 < hi - lo < 0.5 * (b - a)


def residuals_in_fp32(g: Graph, observer, log: Callable[[str], None], int8_io: bool,
                      int8_layernorm: bool, a16) -> None:
    if int8_io or a16:
        return
    made: set = set()
    for n in reversed(g.nodes):
        if n.op != "add" or len(n.inputs) != 2 or n.attrs.get("fp32") or n.attrs.get("act") \
                or any(g.node(i).op in ("constant", "input") for i in n.inputs) or n.name in g.outputs:
            continue
        readers = g.users(n.name)
        if not readers or not all(_float_reader(g, u.name, int8_layernorm, made)
                                  or _narrow_slice(g, observer, n.name, u.name) for u in readers):
            continue
        moves = []
        todo = [u.name for u in readers]
        while todo:             # the moves between the add and the output run on the float value
            m = g.node(todo.pop())
            if m.op in _MOVES and not m.attrs.get("fp32") and all(g.node(i).attrs.get("fp32") or i == n.name
                                                                   or i in {v.name for v in moves} for i in m.inputs):
                moves.append(m)
                todo.extend(u.name for u in g.users(m.name))
        for m in [n] + moves:
            m.attrs["fp32"] = REASON
        made.add(n.name)
        log(f"{origin(n)}: {REASON}")
