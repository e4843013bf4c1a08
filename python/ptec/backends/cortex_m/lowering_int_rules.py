"""torch.mode / cummax / cummin of int64 / int32 values (capture_int_sort;
int16 / uint8 / int8 ones read their int64 copy, capture_narrow_ints),
composed of kernels that take integers and the float32 rule kernels
(aten::mode.values, cummax.out, cummin.out, whose rules are torch's):

The rules only compare elements of a row, for order and equality. The
row's dense ranks (0 for its smallest value, one more for each larger
distinct value) order and equal the elements as the integers do, and are
exact float32 whole numbers (a row holds fewer than 2^24 elements), so
the float32 kernel run on the ranks picks the positions torch picks on the
integers (mode: torch's libstdc++ std::sort of the row, whose every step is
a comparison of two elements, so it moves the ranks as torch moves the
integers, then the last position of the first longest run; cummax /
cummin: the last position of the running extreme). The values are the
integers at those positions.

Per row along dim, on the contiguous integer tensor x:
  s, p  = aten::sort.values(x)                     the stable ascending order
  new   = s != s shifted one place (first: itself)  aten::slice_copy, cat, ne
  r     = cumsum(new as int64)                     the sorted element's rank
  q     = the positions of a sort of p             the inverse permutation
  rank  = gather(r, q) as float32                  element i's rank
  (v, i) = mode / cummax / cummin of rank; values = gather(x, i)
Every step is exact for any integer (no arithmetic on the values)."""
from __future__ import annotations

from ...ir import Node
from ...lowered import Act, clone_dim_order, layout, needs_relayout, new_act, raw_view
from ...pte.program_builder import CHANNELS_LAST
from ...pte.schema import ScalarType

RANKED_RULES = ("mode", "cummax", "cummin")


def _tensor(ctx, dtype, sizes) -> Act:
    return new_act(ctx.b, dtype, sizes, dim_order=list(range(len(sizes))))


def _dense_rank(ctx, x: Act, dim: int) -> Act:
    """Each element's dense rank in its row along dim, float32 (x contiguous)."""
    sizes, n = list(x.sizes), x.sizes[dim]
    s, p = _tensor(ctx, x.dtype, sizes), _tensor(ctx, ScalarType.LONG, sizes)
    ctx.b.call("aten::sort.values", self=x.value, dim=dim, descending=False, values=s.value, indices=p.value)
    before = s
    if n > 1:
        # each sorted value's predecessor (the first its own)
        head = _tensor(ctx, x.dtype, [1 if d == dim else v for d, v in enumerate(sizes)])
        rest = _tensor(ctx, x.dtype, [n - 1 if d == dim else v for d, v in enumerate(sizes)])
        ctx.b.call("aten::slice_copy.Tensor_out", self=s.value, dim=dim, start=0, end=1, step=1, out=head.value)
        ctx.b.call("aten::slice_copy.Tensor_out", self=s.value, dim=dim, start=0, end=n - 1, step=1,
                   out=rest.value)
        before = _tensor(ctx, x.dtype, sizes)
        ctx.b.call("aten::cat.out", tensors=[head.value, rest.value], dim=dim, out=before.value)
    new = _tensor(ctx, ScalarType.BOOL, sizes)
    ctx.b.call("aten::ne.Tensor_out", self=s.value, other=before.value, out=new.value)
    steps = _tensor(ctx, ScalarType.LONG, sizes)
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=new.value, non_blocking=False, dim_order=None,
               out=steps.value)
    ranks = _tensor(ctx, ScalarType.LONG, sizes)
    ctx.b.call("aten::cumsum.out", self=steps.value, dim=dim, dtype=None, out=ranks.value)
    # where each element went: a sort of the positions p gives, at i, the place holding i
    placed, back = _tensor(ctx, ScalarType.LONG, sizes), _tensor(ctx, ScalarType.LONG, sizes)
    ctx.b.call("aten::sort.values", self=p.value, dim=dim, descending=False, values=placed.value,
               indices=back.value)
    mine = _tensor(ctx, ScalarType.LONG, sizes)
    ctx.b.call("aten::gather.out", self=ranks.value, dim=dim, index=back.value, sparse_grad=False, out=mine.value)
    rank = _tensor(ctx, ScalarType.FLOAT, sizes)
    ctx.b.call("dim_order_ops::_to_dim_order_copy.out", self=mine.value, non_blocking=False, dim_order=None,
               out=rank.value)
    return rank


def ranked_order(ctx, n: Node, x: Act):
    """(values, indices) of n (a sort node with attrs rule mode / cummax /
    cummin) over the int64 / int32 value x, laid out as every value of
    their rank."""
    a = n.attrs
    rule = a["rule"]
    order = list(range(len(x.sizes)))
    x = clone_dim_order(ctx.b, x, order) if needs_relayout(x.sizes) else raw_view(ctx.b, x, x.sizes, order)
    if not x.sizes:                                  # a 0-d value: one row of one element
        x = raw_view(ctx.b, x, [1], [0])
    dim = int(a["dim"])
    sizes = list(x.sizes)
    rank = _dense_rank(ctx, x, dim)
    kept = sizes if rule != "mode" else [1 if d == dim else v for d, v in enumerate(sizes)]
    picked, indices = _tensor(ctx, ScalarType.FLOAT, kept), _tensor(ctx, ScalarType.LONG, kept)
    if rule == "mode":
        ctx.b.call("aten::mode.values", self=rank.value, dim=dim, keepdim=True, values=picked.value,
                   indices=indices.value)
    else:
        ctx.b.call(f"aten::{rule}.out", self=rank.value, dim=dim, values=picked.value, indices=indices.value)
    values = _tensor(ctx, x.dtype, kept)
    ctx.b.call("aten::gather.out", self=x.value, dim=dim, index=indices.value, sparse_grad=False, out=values.value)
    out = []
    for r in (values, indices):
        if list(r.sizes) != list(n.shape):           # mode without keepdim, a 0-d input: torch's shape
            r = raw_view(ctx.b, r, n.shape, list(range(len(n.shape))))
        out.append(clone_dim_order(ctx.b, r, CHANNELS_LAST) if needs_relayout(r.sizes)
                   else raw_view(ctx.b, r, r.sizes, layout(r.sizes)))
    return tuple(out)
