"""Positions read after a softmax (issue 15): `softmax(x, d).argmax(d)`,
`.topk(k, d).indices`, `.max(d).indices`, `.argsort(d)`, `.sort(d)[1]`,
`.kthvalue(k, d).indices`, argmin and the same after `log_softmax(x, d)`.
Along its own dim a softmax (log_softmax) keeps the order of its logits:
exp is increasing and every element of a row is divided by (has
subtracted) the same number. So those positions are the logits' own, and
the index node reads the logits instead of the softmax.

On the softmax's int8 grid (1/256 steps from 0) two probabilities less
than a step apart are equal codes and every small one is 0, so the
kernel's first-of-equals answer replaced torch's order: a Linear(16, 10)
head over 512 rows, 11 of 512 argmaxes off torch, 45 top-3 rows, 204
argsort rows (311 for logits three times wider), where the logits' int8
codes give 8, 26 and 102 (121): their own ties and rounding, which no
reading after them undoes
(tests/python/test_order_keeping_indices.py).

The values a call returns beside its indices (`topk(...).values`,
`max(d).values`, `sort(d)[0]`) still read the softmax: only the
positions move. A softmax no longer read by anything goes.

Where float32 itself makes two different logits equal after the softmax
(logits within about 3e-8 of each other, or more than about 103 below the
row's largest, whose exp underflows to 0), torch orders the equal
probabilities by position, the logits by value: no int8 grid resolves
either. Element-wise increasing functions are not taken: float32
saturates sigmoid and tanh within reach of ordinary logits
(`torch.sigmoid(x) == 1` from x = 16.7, tanh from 8.7), where torch's
answer is the first of the saturated positions (exp, infinite from 88.7,
is left with them)."""
from __future__ import annotations

from .ir import Node

# a softmax along its dim keeps the order of its input along that dim
ORDER_KEEPING = ("softmax", "log_softmax")
# nodes whose value is only positions along attrs["dim"] (sort_indices without a rule: sort / topk /
# argsort / kthvalue; the rules (median, mode, cummax) are left as they are)
INDEX_OPS = ("argmax", "sort_indices")


def _dim(n: Node, rank: int):
    d = n.attrs.get("dim")
    if not isinstance(d, int) or isinstance(d, bool) or not -rank <= d < rank:
        return None
    return d % rank


def _order_keeping_source(g, n: Node):
    """The softmax n's index node reads along the softmax's own dim, else None."""
    if n.op not in INDEX_OPS or len(n.inputs) != 1 or (n.op == "sort_indices" and n.attrs.get("rule") is not None):
        return None
    f = g.node(n.inputs[0])
    if f.op not in ORDER_KEEPING or len(f.inputs) != 1 or f.shape is None or not f.shape:
        return None
    rank = len(f.shape)
    d = _dim(n, rank)
    if d is None or d != _dim(f, rank):
        return None
    return f


def indices_of_logits(g) -> None:
    """Each argmax / sort_indices of a softmax (log_softmax) along the same
    dim reads the softmax's input (module doc); softmaxes left unread go."""
    moved = []
    for n in [n for n in g.nodes if n.op in INDEX_OPS]:
        while (f := _order_keeping_source(g, n)) is not None:
            n.inputs = [f.inputs[0]]
            moved.append(f.name)
    for name in moved:
        if any(m.name == name for m in g.nodes) and name not in g.outputs and not g.users(name):
            g.remove(name)
