"""torchvision.ops.nms and batched_nms (issue 15) on ptec's ptec-only
portable kernel ptec::nms.out (src/kernels/portable/op_nms.c), any number
of boxes.

torchvision's CPU nms: order = the descending sort of the scores (equal
scores keep index order: torch's CPU sort is stable), area = (x2 - x1) *
(y2 - y1) (no + 1), and walking that order, each box not yet suppressed is
kept and suppresses every later box j with iou > t, iou = inter / (area_i
+ area_j - inter) in float32, inter = max(0, min(x2) - max(x1)) * max(0,
min(y2) - max(y1)), the comparison in double (t is a double there).

The fx rewrite (`nms_rewrite`, before the graph is read): order =
torch.argsort(scores, descending=True) (aten::sort, stable, int64), then
`nms_keep(boxes, order, t)`: the 0/1 keep flag of each sorted
position (one `nms` IR node, fp32, on ptec::nms.out), and the result is
order[keep > 0.5], the existing int64 selection (aten::masked_select.out
into a bound-dynamic program output of at most K). The kernel's only
temporary is K float32 areas of planned scratch (runtime_scratch.nms).

batched_nms: torchvision 0.14's CPU path up to 1,000 boxes (boxes.numel()
<= 4,000), the coordinate trick, boxes + idxs * (max coordinate + 1) in fp32
then nms. Past that (_batched_nms_vanilla) torchvision runs nms on each
class's boxes, marks the kept ones and orders their indices (ascending) by
torch.sort(scores[kept], descending=True): stable=False, on CPU libstdc++'s
std::sort of (value, index) pairs compared by value alone, so equal scores
come out in an order no stable sort gives. One ptec-only kernel runs all of
it (`batched_nms_indices`: a `batched_nms` IR node on ptec::batched_nms.out,
src/kernels/portable/op_batched_nms.c): a class's nms sorts its scores
stably, so its order is the stable order of all scores restricted to the
class, and one walk over that order in which a kept box suppresses only
later boxes of its class is every class's nms; the kept indices are then
sorted by the same std::sort steps as libstdc++'s (std_sort.c) with
torch's descending comparison. Its int64 [K] out holds the result, then -1
per box not kept; the program's result is out[out >= 0] (an int64
comparison and the same bound-dynamic selection). Scratch: K float32
areas and K uint32 kept indices (runtime_scratch.batched_nms).

No boxes (K = 0, not a selection's): torch's empty int64, the descending
order of no scores. nms(B[m], S[m], t) after a score filter m, and
batched_nms(B[m], S[m], I[m], t) (`_selection_rewrite`, element-wise
steps of the selections allowed, any threshold): over all K boxes, those
m drops made empty and, for a threshold that may be negative, ordered
after the others, so any count at run (0 too) gives torch's indices into
B[m]; batched_nms's coordinate trick with the maximum over B[m] alone.

The threshold (`_threshold`): a number as it is; a tensor attribute or
buffer of one element folded to float(it), the constant torchvision reads;
t.item() taken as t; any other value of one element (computed in forward,
a program input) stays a node, the last input of the `nms` /
`batched_nms` IR node, and runs on the kernels' Tensor_out overloads,
which read its float32 value at each run (torchvision's float(t) of a
float32 tensor: that value as a double; iou > t in double as before).
"""
from __future__ import annotations

import operator
import sys
from typing import Iterable, List, Optional

import torch
import torch.fx

from .fp32_ancestry import mark_fp32_ancestry
from .ir import Node, UnsupportedOperator

NMS_FP32 = "nms's box areas, overlaps and keep/suppress recurrence, computed in fp32 (ptec::nms.out)"
# torchvision 0.14 batched_nms on CPU: the per-class loop past this many box elements (boxes.numel())
VANILLA_NUMEL = 4000


# why a size of an nms result cannot be traced, after "it reads a size of the result of <call>"
KEPT_COUNT = ("how many boxes it keeps changes from run to run (its indices are a selection, a bound-dynamic "
              "program output): return the indices and count them outside the program")
READERS = ("its result (the kept boxes' int64 indices, how many changes from run to run) runs as a program output "
           "only, here read by {reader}: return the indices and use them outside the program")


def nms_call(target) -> Optional[str]:
    """"torchvision.ops.nms" / "torchvision.ops.batched_nms" when target is
    that function of the torchvision the model imported, else None (ptec
    never imports torchvision itself)."""
    if "torchvision" not in sys.modules:
        return None
    from .capture_torchvision import _tv_fn
    for name in ("nms", "batched_nms"):
        f = _tv_fn(name)
        # while fx traces, torchvision.ops holds its wrapper of the function (autowrap), the node the function
        if f is not None and (target is f or target is getattr(f, "__wrapped__", None)):
            return f"torchvision.ops.{name}"
    return None


def kept_count_why(nodes: Iterable[torch.fx.Node]) -> Optional[str]:
    """Why a size read of an nms result cannot be traced, when one of nodes
    (the reader and its ancestors) is an nms call: naming that call; None
    otherwise (a size of an x[mask] keeps its own words)."""
    for n in nodes:
        call = nms_call(n.target) if n.op == "call_function" else None
        if call:
            return f"the result of {n.name} ({call}): " + KEPT_COUNT
    return None


def _pick_max(a, b):
    return torch.where(a < b, b, a)          # std::max(a, b)


def _pick_min(a, b):
    return torch.where(b < a, b, a)          # std::min(a, b)


def threshold_value(t) -> float:
    """The threshold the kernels compare against: a constant as it is, a
    computed one (a tensor of one element: ptec::nms.Tensor_out) as its
    float32 value read as a double (torchvision reads a tensor threshold
    with float(); the program holds it in float32)."""
    if isinstance(t, torch.Tensor):
        return float(t.detach().to(torch.float32).reshape(-1)[0])
    return float(t)


def nms_keep(boxes: torch.Tensor, order: torch.Tensor, t) -> torch.Tensor:
    """The float graph's value of ptec::nms.out (t a number) and
    ptec::nms.Tensor_out (t a tensor of one element): float32 [K], 1 where
    the box at sorted position p (box order[p]) is kept. The same float32
    operations as the kernel, one sorted row of overlaps at a time."""
    t = threshold_value(t)
    k = int(boxes.shape[0])
    keep = torch.ones(k, dtype=torch.float32)
    if k == 0:
        return keep
    b = boxes.to(torch.float32)
    o = order.long()
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    sb, sa = b[o], area[o]
    alive = torch.ones(k, dtype=torch.bool)
    for p in range(k - 1):
        if not alive[p]:
            continue
        r = sb[p + 1:]
        w = _pick_max(torch.zeros(()), _pick_min(sb[p, 2], r[:, 2]) - _pick_max(sb[p, 0], r[:, 0]))
        h = _pick_max(torch.zeros(()), _pick_min(sb[p, 3], r[:, 3]) - _pick_max(sb[p, 1], r[:, 1]))
        inter = w * h
        iou = inter / ((sa[p] + sa[p + 1:]) - inter)
        hit = iou.double() > float(t)
        alive[p + 1:] &= ~hit
    keep[~alive] = 0.0
    return keep


def batched_nms_indices(boxes: torch.Tensor, scores: torch.Tensor, order: torch.Tensor, idxs: torch.Tensor,
                        t) -> torch.Tensor:
    """The float graph's value of ptec::batched_nms.out (.Tensor_out for a
    tensor t, as nms_keep): int64 [K],
    torchvision's kept indices in its order, then -1 per box not kept. The
    kernel's walk (nms_keep's float32 steps, a kept box suppressing later
    boxes of its own class), then torch's own unstable sort of the kept
    scores, as torchvision calls it."""
    t = threshold_value(t)
    k = int(boxes.shape[0])
    b = boxes.to(torch.float32)
    o = order.long()
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    alive = idxs == idxs                     # a NaN class is none of torchvision's loop's classes
    for p in range(k):
        i = int(o[p])
        if not alive[i]:
            continue
        js = o[p + 1:]
        js = js[alive[js] & (idxs[js] == idxs[i])]
        if js.numel() == 0:
            continue
        r = b[js]
        w = _pick_max(torch.zeros(()), _pick_min(b[i, 2], r[:, 2]) - _pick_max(b[i, 0], r[:, 0]))
        h = _pick_max(torch.zeros(()), _pick_min(b[i, 3], r[:, 3]) - _pick_max(b[i, 1], r[:, 1]))
        inter = w * h
        iou = inter / ((area[i] + area[js]) - inter)
        alive[js[iou.double() > float(t)]] = False
    kept = torch.where(alive)[0]
    kept = kept[scores.to(torch.float32)[kept].sort(descending=True)[1]]
    return torch.cat([kept, torch.full((k - kept.numel(),), -1, dtype=torch.long)])


def _attr_value(gm: torch.fx.GraphModule, node: torch.fx.Node):
    """The value a get_attr node reads (a buffer, parameter or tensor
    attribute of the model), None when it cannot be found."""
    v = gm
    for part in str(node.target).split("."):
        v = getattr(v, part, None)
        if v is None:
            return None
    return v


def _threshold(gm: torch.fx.GraphModule, t, shape):
    """nms's iou_threshold as the rewrite takes it: a number (a constant,
    or a tensor attribute or buffer of one element folded to float(it), the
    value torchvision reads), a node of one element (computed in forward
    or a program input: ptec::nms.Tensor_out), else None. x.item() is x
    (torchvision reads the same value from either)."""
    if isinstance(t, bool):
        return None
    if isinstance(t, (int, float)):
        return t
    if not isinstance(t, torch.fx.Node):
        return None
    if t.op == "call_method" and t.target == "item" and len(t.args) == 1 and not t.kwargs \
            and isinstance(t.args[0], torch.fx.Node):
        t = t.args[0]
    if t.op == "get_attr":
        v = _attr_value(gm, t)
        if isinstance(v, torch.Tensor) and v.numel() == 1 and not v.is_complex() and v.dtype != torch.bool:
            return float(v)
        return None
    s = shape(t)
    if s is None or int(torch.Size(s).numel()) != 1:
        return None
    return t


SELECTION = ("its boxes or scores are a selection x[mask], whose length depends on the values: ptec runs "
             "nms(f(boxes[m]), h(scores[m]), t) and batched_nms(f(boxes[m]), h(scores[m]), idxs[m], t) for one "
             "bool mask m and element-wise f and h (a threshold computed from no selection); other steps after "
             "the selection (a sort, a slice, another mask) are not supported")
CHANGED_FP32 = ("the boxes or scores of nms, changed after a selection: in fp32 (an int8 grid would move an "
                "overlap across the threshold or reorder equal scores)")
THRESHOLD_FP32 = "nms's computed iou_threshold, in fp32 from the layers' outputs (torchvision reads the float's value)"


def _dtype(n: torch.fx.Node):
    meta = n.meta.get("tensor_meta")
    return getattr(meta, "dtype", None)


def refuse_float64_threshold(fn: torch.fx.Node, t: torch.fx.Node, batched: bool) -> None:
    """A threshold computed in float64: torchvision compares iou > the
    double itself, ptec's kernel reads a float32 (rounded: a pair at a near
    tie kept where torchvision suppresses it). Refused in one line."""
    if _dtype(t) == torch.float64:
        raise UnsupportedOperator(
            f"operator not supported: {fn.name} (torchvision.ops.{'batched_nms' if batched else 'nms'}): its "
            f"iou_threshold ({t.name}) is computed in float64, which ptec would round to float32 (torchvision "
            f"compares with the double); compute the threshold in float32")


def threshold_in_fp32(t: torch.fx.Node) -> None:
    """The steps computing a threshold marked fp32 (fp32_ancestry): an int8
    grid would move it, and with it which pairs are suppressed."""
    mark_fp32_ancestry(t, lambda n: None if _dtype(n) is None else _dtype(n).is_floating_point,
                       THRESHOLD_FP32)


def _named(fn: torch.fx.Node, first: torch.fx.Node, last: torch.fx.Node) -> None:
    """The rewrite's steps, first to last, named as the user's call (ir.origin: a refusal of one of them, as
    a selection's reader, names the nms call, not nms_keep)."""
    at = first
    while True:
        at.meta["ptec_source"] = f"{fn.name} (torchvision.ops.{fn.target.__name__})"
        if at is last:
            return
        at = at.next


def _bool_selection(n) -> bool:
    """n is x[m], m a bool tensor (a selection whose length depends on the values)."""
    return (isinstance(n, torch.fx.Node) and n.op == "call_function" and n.target is operator.getitem
            and len(n.args) == 2 and isinstance(n.args[1], torch.fx.Node) and _dtype(n.args[1]) == torch.bool)


def _data_shaped(n: torch.fx.Node) -> bool:
    """n or a value it is computed from is a bool selection: its traced length is one run's."""
    seen, todo = set(), [n]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if _bool_selection(v):
            return True
        todo.extend(v.all_input_nodes)
    return False


# element-wise steps a selection x[m] may go through before nms: f(x[m]) is f(x)[m]
_POINTWISE_FUNCTIONS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, torch.add,
                        torch.sub, torch.mul, torch.div, torch.neg, torch.sigmoid, torch.exp, torch.abs,
                        torch.clamp, torch.relu, torch.tanh, torch.sqrt, torch.log, torch.round}
_POINTWISE_METHODS = {"add", "sub", "mul", "div", "neg", "sigmoid", "exp", "abs", "clamp", "relu", "tanh", "sqrt",
                      "log", "round", "float", "contiguous"}


def _pointwise(v: torch.fx.Node) -> bool:
    """v is an element-wise step of _POINTWISE_*, or unsqueeze(d) with d >= 1 (rows kept)."""
    if v.op == "call_method" and v.target == "unsqueeze":
        return len(v.args) == 2 and not v.kwargs and isinstance(v.args[1], int) and v.args[1] >= 1
    return (v.op == "call_function" and v.target in _POINTWISE_FUNCTIONS) or (
        v.op == "call_method" and v.target in _POINTWISE_METHODS)


def _mask_of(n, shape):
    """The bool mask m of the selections x[m] an element-wise chain n starts from (one m for all), None
    when n is not such a chain. An operand that is not a selection must be a number or a value broadcast
    along the rows (fewer dims than n, or a first size of 1) computed from no selection."""
    masks = set()

    def walk(v, rank):
        if not isinstance(v, torch.fx.Node):
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        if _bool_selection(v):
            masks.add(v.args[1])
            return True
        known = _pointwise(v)
        if known and not [k for k in v.kwargs if k not in ("min", "max", "alpha")]:
            if v.target == "unsqueeze":
                return walk(v.args[0], rank - 1)
            return all(walk(a, rank) for a in list(v.args) + list(v.kwargs.values()))
        s = shape(v)                               # a row-broadcast operand: the rows of x[m] meet the same values
        return s is not None and (len(s) < rank or (len(s) == rank and s[0] == 1)) and not _data_shaped(v)
    s = shape(n)
    if s is None or not walk(n, len(s)) or len(masks) != 1:
        return None
    return masks.pop()


def _unmasked(g, n, mask, done):
    """A copy of element-wise chain n (_mask_of's) over all K rows: each x[mask] read as x."""
    if not isinstance(n, torch.fx.Node):
        return n
    if n in done:
        return done[n]
    if _bool_selection(n) and n.args[1] is mask:
        out = n.args[0]
    elif _pointwise(n):
        args = tuple(_unmasked(g, a, mask, done) for a in n.args)
        kwargs = {k: _unmasked(g, a, mask, done) for k, a in n.kwargs.items()}
        out = g.create_node(n.op, n.target, args, kwargs)
        out.meta.update({k: v for k, v in n.meta.items() if k != "tensor_meta"})    # (its shape is x[m]'s)
        if _dtype(n) is not None and _dtype(n).is_floating_point:
            out.meta["ptec_fp32"] = CHANGED_FP32
    else:
        out = n                                    # a row-broadcast operand, as it is
    done[n] = out
    return out


def _filtered_rewrite(g, fn: torch.fx.Node, boxes, scores, mask, t, idxs=None) -> bool:
    """nms(B[m], S[m], t) over all K boxes: the boxes m drops made
    [0, 0, 0, 0] (no area: their overlap with any box is 0 (or 0 / 0), never
    above a t >= 0, so they suppress nothing), the order of all of S (torch's
    stable sort restricted to m is the order of S[m]), and the kept positions
    whose box m keeps, as indices into B[m]: the count of m up to the box,
    less one. Any count at run, 0 too (an empty int64 result).

    A t that may be negative (a computed threshold, read at each run, or a
    negative number): an overlap of 0 is above it, so a dropped box placed
    before a kept one would suppress it; the order is then sorted again,
    stably, by m descending, so that every dropped box comes after every box
    of B[m] (which keep their score order) and suppresses none of them.

    batched_nms(B[m], S[m], I[m], t) (idxs = I): torchvision's coordinate
    trick on the selection, B[m] + I[m] * (max(B[m]) + 1), is that trick
    over all K rows with the maximum taken over the rows m keeps (the
    others read as -inf), then the same nms."""
    def fp32(node):
        node.meta["ptec_fp32"] = NMS_FP32
        return node

    with g.inserting_before(fn):
        first = g.call_method("unsqueeze", (mask, 1))
        if idxs is not None:
            ceiling = fp32(g.call_function(torch.where, (first, boxes, float("-inf"))))
            top = fp32(g.call_function(operator.add, (fp32(g.call_method("max", (ceiling,))), 1.0)))
            shift = fp32(g.call_function(operator.mul, (g.call_method("float", (idxs,)), top)))
            boxes = fp32(g.call_function(operator.add, (boxes, fp32(g.call_method("unsqueeze", (shift, 1))))))
        kept_boxes = fp32(g.call_function(torch.where, (first, boxes, 0.0)))
        order = g.call_function(torch.argsort, (scores,), {"descending": True})
        if isinstance(t, torch.fx.Node) or t < 0:
            dropped_last = g.call_function(torch.argsort, (g.call_function(
                operator.getitem, (g.call_method("long", (mask,)), order)),), {"descending": True})
            order = g.call_function(operator.getitem, (order, dropped_last))
        keep = fp32(g.call_function(nms_keep, (kept_boxes, order, t)))
        in_mask = g.call_function(operator.getitem, (g.call_method("long", (mask,)), order))
        picked = g.call_function(operator.and_, (g.call_function(operator.gt, (keep, 0.5)),
                                                 g.call_function(operator.gt, (in_mask, 0))))
        rank = g.call_function(operator.sub, (g.call_method("cumsum", (g.call_method("long", (mask,)), 0)), 1))
        out = g.call_function(operator.getitem, (g.call_function(operator.getitem, (rank, order)), picked))
    name = "batched_nms" if idxs is not None else "nms"
    out.meta["ptec_nms"] = f"{fn.name} (torchvision.ops.{name})"
    _named(fn, first, out)
    fn.replace_all_uses_with(out)
    g.erase_node(fn)
    return True


def _selection_rewrite(gm, fn: torch.fx.Node, boxes, scores, idxs, t, shape) -> Optional[bool]:
    """nms / batched_nms (idxs not None) of a selection by one mask m,
    each of boxes, scores (and idxs) x[m] or an element-wise chain of it,
    t a number or a computed value (_threshold): _filtered_rewrite's nodes
    in place of the call, True; None when the call is not of that form."""
    g = gm.graph
    values = (boxes, scores) if idxs is None else (boxes, scores, idxs)
    if not any(_data_shaped(v) for v in values):
        return None
    m = _mask_of(boxes, shape)
    if m is None or any(_mask_of(v, shape) is not m for v in values[1:]):
        return None
    if idxs is not None and 4 * int(shape(m)[0]) > VANILLA_NUMEL:
        # torchvision picks the coordinate trick or its per-class loop by the selection's count at run
        raise UnsupportedOperator(
            f"operator not supported: {fn.name} (torchvision.ops.batched_nms): its boxes are a selection of "
            f"up to {int(shape(m)[0])} boxes, and torchvision runs its coordinate trick up to "
            f"{VANILLA_NUMEL // 4} boxes and a per-class loop (another order) past that, chosen by the count "
            f"at run; keep the selection to {VANILLA_NUMEL // 4} boxes or fewer (a topk before the filter)")
    if isinstance(t, torch.fx.Node):
        if _data_shaped(t):
            return None
        refuse_float64_threshold(fn, t, idxs is not None)
        threshold_in_fp32(t)
    with g.inserting_before(fn):
        done = {}
        plain = [_unmasked(g, v, m, done) for v in values]
    for v, w in zip(values, plain):
        if not _bool_selection(v) and _dtype(w) is not None and _dtype(w).is_floating_point:
            # a selection changed before nms, f(B[m]): f(B)[m], in fp32 as nms's own (its steps: _unmasked)
            mark_fp32_ancestry(w, lambda n: None if _dtype(n) is None else _dtype(n).is_floating_point,
                               CHANGED_FP32)
    return _filtered_rewrite(g, fn, plain[0], plain[1], m, t, plain[2] if idxs is not None else None)


def nms_rewrite(gm: torch.fx.GraphModule, fn: torch.fx.Node, tv_fn, shape) -> bool:
    """torchvision.ops.nms(boxes [K, 4], scores [K], t) and batched_nms(boxes,
    scores, idxs, t), t a constant or a value of one element (_threshold):
    the module doc's nodes in place of the call. False for another form
    (refused by name by the caller)."""
    if fn.op != "call_function" or not any(tv_fn(n) is not None and fn.target is tv_fn(n)
                                           for n in ("nms", "batched_nms")):
        return False
    batched = fn.target is tv_fn("batched_nms")
    names = ("boxes", "scores", "idxs", "iou_threshold") if batched else ("boxes", "scores", "iou_threshold")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    boxes, scores, idxs = got.get("boxes"), got.get("scores"), got.get("idxs")
    t = _threshold(gm, got.get("iou_threshold"), shape)
    bs, ss = shape(boxes), shape(scores)
    if (not isinstance(boxes, torch.fx.Node) or not isinstance(scores, torch.fx.Node) or bs is None or ss is None
            or len(bs) != 2 or bs[1] != 4 or ss != bs[:1] or t is None
            or (batched and (not isinstance(idxs, torch.fx.Node) or shape(idxs) != bs[:1]))):
        return False
    k = bs[0]
    g = gm.graph
    selected = _selection_rewrite(gm, fn, boxes, scores, idxs if batched else None, t, shape)
    if selected is not None:
        return selected
    if k == 0 and not any(_data_shaped(v) for v in (boxes, scores)):
        # no boxes: torchvision's empty int64 result, the descending order of no scores (aten::sort of [0])
        with g.inserting_before(fn):
            out = g.call_function(torch.argsort, (scores,), {"descending": True})
        _named(fn, out, out)
        fn.replace_all_uses_with(out)
        g.erase_node(fn)
        return True
    if any(_data_shaped(v) for v in ((boxes, scores, idxs) if batched else (boxes, scores))):
        raise UnsupportedOperator(f"operator not supported: {fn.name} (torchvision.ops."
                                  f"{'batched_nms' if batched else 'nms'}): {SELECTION}")
    if isinstance(t, torch.fx.Node):
        refuse_float64_threshold(fn, t, batched)
        threshold_in_fp32(t)
    t = t if isinstance(t, torch.fx.Node) else float(t)

    def fp32(node):
        node.meta["ptec_fp32"] = NMS_FP32
        return node

    with g.inserting_before(fn):
        order = g.call_function(torch.argsort, (scores,), {"descending": True})
        if batched and 4 * k > VANILLA_NUMEL:
            # torchvision's per-class loop and its unstable sort of the kept scores, in one kernel
            res = fp32(g.call_function(batched_nms_indices, (boxes, scores, order, idxs, t)))
            out = g.call_function(operator.getitem, (res, g.call_function(operator.ge, (res, 0))))
            _named(fn, order, out)
            fn.replace_all_uses_with(out)
            g.erase_node(fn)
            return True
        if batched:
            # torchvision's coordinate trick: each class's boxes moved by idx * (max coordinate + 1)
            top = fp32(g.call_function(operator.add, (fp32(g.call_method("max", (boxes,))), 1.0)))
            shift = fp32(g.call_function(operator.mul, (g.call_method("float", (idxs,)), top)))
            boxes = fp32(g.call_function(operator.add, (boxes, fp32(g.call_method("view", (shift, k, 1))))))
        keep = fp32(g.call_function(nms_keep, (boxes, order, t)))
        # the 0/1 compare and the int64 selection run outside fp32 (exact: integers, 0 and 1)
        out = g.call_function(operator.getitem, (order, g.call_function(operator.gt, (keep, 0.5))))
    # a reader of the selection is refused naming the user's call, not this getitem (refuse_readers)
    out.meta["ptec_nms"] = f"{fn.name} (torchvision.ops.{'batched_nms' if batched else 'nms'})"
    _named(fn, order, out)
    fn.replace_all_uses_with(out)
    g.erase_node(fn)
    return True


def refuse_readers(fn: torch.fx.Node) -> None:
    """The int64 selection nms_rewrite made, read by a layer (anything but
    the program's outputs): refused naming the user's nms call and the
    first reader (capture_masked_select's integer selections are program
    outputs only)."""
    if not fn.meta.get("ptec_nms"):
        return
    readers = [u for u in fn.users if u.op != "output"]
    if readers:
        from .capture import _source, _written            # capture imports this module's importer
        r = readers[0]
        reader = _written(r) if r.meta.get("ptec_site") else (
            _source(r, {}) if r.op != "call_module" else str(r.target))
        raise UnsupportedOperator(f"operator not supported: {fn.meta['ptec_nms']}: "
                                  + READERS.format(reader=reader))


def nms_nodes(fn: torch.fx.Node) -> Optional[List[Node]]:
    """The `nms` IR node of an nms_keep call (nms_rewrite's): inputs boxes
    and order, attrs t; the `batched_nms` node of a batched_nms_indices
    call: inputs boxes, scores, order and idxs, attrs t. A computed
    threshold is one more input (last) in place of attrs t."""
    if fn.op != "call_function" or fn.kwargs:
        return None
    if fn.target is nms_keep and len(fn.args) == 3:
        boxes, order, t = fn.args
        if isinstance(t, torch.fx.Node):
            return [Node(fn.name, "nms", [boxes.name, order.name, t.name], {})]
        return [Node(fn.name, "nms", [boxes.name, order.name], dict(t=float(t)))]
    if fn.target is batched_nms_indices and len(fn.args) == 5:
        boxes, scores, order, idxs, t = fn.args
        if isinstance(t, torch.fx.Node):
            return [Node(fn.name, "batched_nms", [boxes.name, scores.name, order.name, idxs.name, t.name], {})]
        return [Node(fn.name, "batched_nms", [boxes.name, scores.name, order.name, idxs.name], dict(t=float(t)))]
    return None


def eval_nms(a, xs) -> torch.Tensor:
    """ir.eval_node's value of an `nms` node (order carried as float32 like every index)."""
    return nms_keep(xs[0], xs[1], xs[2] if len(xs) > 2 else a["t"])


def eval_batched_nms(a, xs) -> torch.Tensor:
    """ir.eval_node's value of a `batched_nms` node: the indices (and -1s)
    carried as float32 like every index (order too; exact below 2^24)."""
    return batched_nms_indices(xs[0], xs[1], xs[2], xs[3], xs[4] if len(xs) > 4 else a["t"]).to(torch.float32)
