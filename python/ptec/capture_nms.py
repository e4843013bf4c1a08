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
then nms. Past that torchvision runs nms per class and orders the kept boxes
by torch's unstable CPU sort of their scores (std::sort: equal scores in an
order no stable sort gives), so more boxes are refused in one line
(BATCHED_LARGE) rather than answered in another order.
"""
from __future__ import annotations

import operator
import sys
from typing import Iterable, List, Optional

import torch
import torch.fx

from .ir import Node, UnsupportedOperator

NMS_FP32 = "nms's box areas, overlaps and keep/suppress recurrence, computed in fp32 (ptec::nms.out)"
# torchvision 0.14 batched_nms on CPU: the per-class loop past this many box elements (boxes.numel())
VANILLA_NUMEL = 4000
BATCHED_LARGE = ("torchvision.ops.batched_nms is not supported on {k} boxes: above 1000 torchvision's CPU path "
                 "runs nms per class and orders the kept boxes by an unstable sort of their scores (equal scores "
                 "in an order ptec does not reproduce); keep at most 1000 boxes (topk of the scores), or offset "
                 "each class's boxes and call torchvision.ops.nms")


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


def nms_keep(boxes: torch.Tensor, order: torch.Tensor, t: float) -> torch.Tensor:
    """The float graph's value of ptec::nms.out: float32 [K], 1 where the
    box at sorted position p (box order[p]) is kept. The same float32
    operations as the kernel, one sorted row of overlaps at a time."""
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



def nms_rewrite(gm: torch.fx.GraphModule, fn: torch.fx.Node, tv_fn, shape) -> bool:
    """torchvision.ops.nms(boxes [K, 4], scores [K], t) and batched_nms(boxes,
    scores, idxs, t) with a constant t: the module doc's nodes in place of
    the call. False for another form (refused by name by the caller)."""
    if fn.op != "call_function" or not any(tv_fn(n) is not None and fn.target is tv_fn(n)
                                           for n in ("nms", "batched_nms")):
        return False
    batched = fn.target is tv_fn("batched_nms")
    names = ("boxes", "scores", "idxs", "iou_threshold") if batched else ("boxes", "scores", "iou_threshold")
    if len(fn.args) > len(names) or set(fn.kwargs) - set(names):
        return False
    got = dict(zip(names, fn.args))
    got.update(fn.kwargs)
    boxes, scores, t, idxs = got.get("boxes"), got.get("scores"), got.get("iou_threshold"), got.get("idxs")
    bs, ss = shape(boxes), shape(scores)
    if (not isinstance(boxes, torch.fx.Node) or not isinstance(scores, torch.fx.Node) or bs is None or ss is None
            or len(bs) != 2 or bs[1] != 4 or ss != bs[:1] or not isinstance(t, (int, float)) or isinstance(t, bool)
            or (batched and (not isinstance(idxs, torch.fx.Node) or shape(idxs) != bs[:1]))):
        return False
    k = bs[0]
    if k == 0:
        return False
    if batched and 4 * k > VANILLA_NUMEL:
        raise UnsupportedOperator(BATCHED_LARGE.format(k=k))
    g = gm.graph

    def fp32(node):
        node.meta["ptec_fp32"] = NMS_FP32
        return node

    with g.inserting_before(fn):
        order = g.call_function(torch.argsort, (scores,), {"descending": True})
        if batched:
            # torchvision's coordinate trick: each class's boxes moved by idx * (max coordinate + 1)
            top = fp32(g.call_function(operator.add, (fp32(g.call_method("max", (boxes,))), 1.0)))
            shift = fp32(g.call_function(operator.mul, (g.call_method("float", (idxs,)), top)))
            boxes = fp32(g.call_function(operator.add, (boxes, fp32(g.call_method("view", (shift, k, 1))))))
        keep = fp32(g.call_function(nms_keep, (boxes, order, float(t))))
        # the 0/1 compare and the int64 selection run outside fp32 (exact: integers, 0 and 1)
        out = g.call_function(operator.getitem, (order, g.call_function(operator.gt, (keep, 0.5))))
    # a reader of the selection is refused naming the user's call, not this getitem (refuse_readers)
    out.meta["ptec_nms"] = f"{fn.name} (torchvision.ops.{'batched_nms' if batched else 'nms'})"
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
    and order, attrs t."""
    if fn.op != "call_function" or fn.target is not nms_keep or len(fn.args) != 3 or fn.kwargs:
        return None
    boxes, order, t = fn.args
    return [Node(fn.name, "nms", [boxes.name, order.name], dict(t=float(t)))]


def eval_nms(a, xs) -> torch.Tensor:
    """ir.eval_node's value of an `nms` node (order carried as float32 like every index)."""
    return nms_keep(xs[0], xs[1], a["t"])
