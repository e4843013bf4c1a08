"""Functional layers whose weight is computed in the forward (issue 15):
F.conv1d / conv2d / conv3d / conv_transpose1d / 2d / 3d, F.linear,
F.bilinear, F.layer_norm / group_norm / instance_norm / batch_norm and
F.prelu given a weight, bias or affine that is a value of the program
(`F.conv1d(x, w(x))`), not a constant ptec quantizes ahead of time. Each
is a stand-in the fx tracer runs instead of the call (capture_modules'
FUNCTIONAL_STAND_INS), writing torch's formula in ops that take two
varying operands:

* conv: the input's windows as columns (F.unfold: a copy of its int8
  bytes, zero padding), then one matmul of the weight [O/g, C/g k..] by
  each group's columns, the bias added per channel; conv1d as a conv2d of
  height 1; conv3d per output depth: the kernel's depth slices joined as
  channels, a conv2d of them. String padding ("same", "valid") as torch;
  an unbatched input [C, ...] as a batch of one.
* conv_transpose: the equal convolution: the input spread by the stride
  (zeros between its elements: a 4-D pad of a view, exact), padded by
  dilation (k - 1) - padding each side (plus output_padding at the end;
  a negative pad crops), convolved at stride 1 with the weight's spatial
  dims flipped and [C_in, C_out/g] swapped per group.
* linear with a computed bias: the linear (a constant weight: the layer;
  a computed one: capture_rewrites' matmul), then the bias added.
* bilinear with a computed weight W [O, I1, I2]: x1 @ W viewed
  [I1, O I2], then per output a batch matmul by x2; a computed bias added.
* the norms: the normalization without its affine (ptec's layer), then
  times the weight and plus the bias, broadcast on their dim (the
  trailing normalized dims, or dim 1). Running statistics computed in
  the program (batch_norm, instance_norm with use_input_stats=False):
  (x - mean) rsqrt(var + eps) per channel; instance_norm with
  use_input_stats ignores them in its output (torch only updates them),
  and so does batch_norm with training=True, when nothing reads the
  written statistics after the call (refuse_written_stats_read).
* prelu: torch.where(x >= 0, x, weight x), the weight (one value, or one
  per channel, dim 1) broadcast.

* F.multi_head_attention_forward called directly: torch's formula
  (projections constant or computed, bias_k / bias_v and add_zero_attn
  rows appended to K and V, constant masks as ptec's masked softmax,
  computed bool masks as capture_attention_masks' softmax of the kept
  positions, the weights averaged or per head); nn.MultiheadAttention
  by it (FormulaAttention) where capture_modules' stand-in does not go.

A call whose weight and bias are constants is not touched (its layer as
before). What these do not cover stays the call, refused by name:
batch_norm with training=True and computed running statistics read
after the call or viewing its input (torch writes them in place), and
attention with dropout in training, bias_k beside static_k / static_v
(torch asserts) (each naming the argument). static_k / static_v ([N h, S,
d] per-head keys / values) stand in for the projected ones, as torch's; a
computed float attn_mask or key_padding_mask is added to the scores (the
key padding mask as [N h, 1, S], torch 1.13's view of it), its
`masked_fill(b, -inf)` / `where(b, -inf, ...)` / `b.float() * -1e9` (a
fill <= -1e4) read as the bool b masking (the softmax of the kept
positions): one additive step before the masked softmax
(_additive_softmax). Beside a bool attn_mask a float key_padding_mask's
nonzeros mask (torch's logical_or), and so on torch's inference fast path
(FormulaAttention.bool_padding, capture_encoder_masks)."""
from __future__ import annotations

import inspect
import math

import torch
import torch.fx
import torch.nn.functional as F
from .capture_module_forms import OriginalAttributes     # a stand-in answers the original's attributes


def _computed(*values) -> bool:
    """Some value is a tensor the program computes (a traced proxy)."""
    return any(isinstance(v, torch.fx.Proxy) for v in values)


def _tuple(v, n):
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _channel_shape(x, dim=1):
    """[1, C, 1, ...]: a per-channel value broadcast over x."""
    return [1] * dim + [-1] + [1] * (x.dim() - dim - 1)


def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


# ---------------------------------------------------------------------------
# convolutions

def _conv_nd(x, weight, bias, stride, padding, dilation, groups, n):
    """conv{n}d (n = 1, 2) of a batched input by windows and a matmul."""
    k = [int(d) for d in weight.shape[2:]]
    stride, dilation = _tuple(stride, n), _tuple(dilation, n)
    pads = _pads(padding, k, dilation, n)
    if pads is None:
        return None
    if any(lo != hi for lo, hi in pads):          # "same" with an even window: pad first, unevenly
        flat = [v for lo_hi in reversed(pads) for v in lo_hi]
        x = F.pad(x, flat)
        pads = [(0, 0)] * n
    if n == 1:
        x, k, stride, dilation = x.unsqueeze(2), [1] + k, (1,) + stride, (1,) + dilation
        pads = [(0, 0)] + pads
    batch, channels = int(x.shape[0]), int(x.shape[1])
    out_spatial = [(int(x.shape[2 + i]) + 2 * pads[i][0] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
                   for i in range(2)]
    cols = F.unfold(x, tuple(k), dilation=dilation, padding=tuple(p for p, _ in pads), stride=stride)
    out_ch, per_group = int(weight.shape[0]), channels // groups
    rows = per_group * k[0] * k[1]
    w = weight.reshape(out_ch, rows)
    og = out_ch // groups
    parts = [w[g * og:(g + 1) * og] @ cols[:, g * rows:(g + 1) * rows] for g in range(groups)]
    y = parts[0] if groups == 1 else torch.cat(parts, 1)
    y = y.reshape([batch, out_ch] + (out_spatial[1:] if n == 1 else out_spatial))
    if bias is not None:
        y = y + bias.reshape(_channel_shape(y))
    return y


def _pads(padding, k, dilation, n):
    """(low, high) per spatial dim of a conv's padding (ints, a tuple, "same", "valid"), None for another."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * n
        if padding == "same":
            return [(d * (kk - 1) // 2, d * (kk - 1) - d * (kk - 1) // 2) for d, kk in zip(dilation, k)]
        return None
    return [(p, p) for p in _tuple(padding, n)]


def _conv3d(x, weight, bias, stride, padding, dilation, groups):
    """conv3d: for each output depth, the kernel's depth slices of the
    input joined as channels (a copy), a conv2d (_conv_nd) of them by the
    weight viewed [O/g, k_d C/g, k_h, k_w]; the depths stacked."""
    k = [int(d) for d in weight.shape[2:]]
    stride, dilation = _tuple(stride, 3), _tuple(dilation, 3)
    pads = _pads(padding, k, dilation, 3)
    if pads is None:
        return None
    if any(pads[i] != (0, 0) for i in range(3)):
        x = F.pad(x, [v for lo_hi in reversed(pads) for v in lo_hi])
    depth, per_group = int(x.shape[2]), int(x.shape[1]) // groups
    out_ch = int(weight.shape[0])
    og = out_ch // groups
    out_depth = (depth - dilation[0] * (k[0] - 1) - 1) // stride[0] + 1
    parts = []
    for g in range(groups):
        xg = x if groups == 1 else x[:, g * per_group:(g + 1) * per_group]
        wg = weight[g * og:(g + 1) * og].permute(0, 2, 1, 3, 4).reshape(og, k[0] * per_group, k[1], k[2])
        planes = []
        for od in range(out_depth):
            slab = [xg[:, :, od * stride[0] + j * dilation[0]] for j in range(k[0])]
            slab = slab[0] if len(slab) == 1 else torch.cat(slab, 1)
            planes.append(_conv_nd(slab, wg, None, stride[1:], 0, dilation[1:], 1, 2))
        parts.append(torch.stack(planes, 2) if len(planes) > 1 else planes[0].unsqueeze(2))
    y = parts[0] if groups == 1 else torch.cat(parts, 1)
    if bias is not None:
        y = y + bias.reshape(_channel_shape(y))
    return y


def _conv(n):
    def call(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if _computed(weight, bias) and input.dim() == n + 1:        # unbatched [C, ...]: as a batch of one
            y = call(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups)
            return None if y is None else y.squeeze(0)
        if not _computed(weight, bias) or input.dim() != n + 2:
            return None
        if not _computed(weight):             # a computed bias only: the layer, then the bias
            return _affine(getattr(F, f"conv{n}d")(input, weight, None, stride, padding, dilation, groups),
                           None, bias, _channel_shape(input))
        if n == 3:
            return _conv3d(input, weight, bias, stride, padding, dilation, int(groups))
        return _conv_nd(input, weight, bias, stride, padding, dilation, int(groups), n)
    return call


def _spread(x, stride, dim):
    """x with stride - 1 zeros after each element along dim (the last one's
    dropped): x viewed [before, size, 1, after], padded to [before, size,
    stride, after] (a 4-D pad at any rank), viewed back with size * stride."""
    if stride == 1:
        return x
    shape = [int(d) for d in x.shape]
    size = shape[dim]
    before, after = 1, 1
    for d in shape[:dim]:
        before *= d
    for d in shape[dim + 1:]:
        after *= d
    y = F.pad(x.reshape(before, size, 1, after), [0, 0, 0, stride - 1])
    y = y.reshape(before, size * stride, after).narrow(1, 0, (size - 1) * stride + 1)
    shape[dim] = (size - 1) * stride + 1
    return y.reshape(shape)


def _conv_transpose(n):
    def call(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        if _computed(weight, bias) and input.dim() == n + 1:        # unbatched [C, ...]: as a batch of one
            y = call(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation)
            return None if y is None else y.squeeze(0)
        if not _computed(weight, bias) or input.dim() != n + 2:
            return None
        if not _computed(weight):
            return _affine(getattr(F, f"conv_transpose{n}d")(input, weight, None, stride, padding, output_padding,
                                                              groups, dilation), None, bias, _channel_shape(input))
        stride, padding, dilation = _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n)
        output_padding, groups = _tuple(output_padding, n), int(groups)
        k = [int(d) for d in weight.shape[2:]]
        x = input
        for i in range(n):
            x = _spread(x, stride[i], 2 + i)
        pad = []
        for i in reversed(range(n)):
            edge = dilation[i] * (k[i] - 1) - padding[i]
            pad += [edge, edge + output_padding[i]]
        if any(pad):
            x = F.pad(x, pad)                 # a negative pad crops, as torch's
        in_g = int(weight.shape[0]) // groups
        flipped = weight.flip(list(range(2, 2 + n)))
        w = torch.cat([flipped[g * in_g:(g + 1) * in_g].transpose(0, 1) for g in range(groups)], 0) \
            if groups > 1 else flipped.transpose(0, 1)
        if n == 3:
            return _conv3d(x, w, bias, 1, 0, dilation, groups)
        return _conv_nd(x, w, bias, 1, 0, dilation, groups, n)
    return call


# ---------------------------------------------------------------------------
# linear, bilinear

def _linear(input, weight, bias=None):
    if not _computed(bias):
        return None          # a computed weight with a constant bias: capture_rewrites' matmul
    return F.linear(input, weight) + bias


def _bilinear(input1, input2, weight, bias=None, _before=None):
    if not _computed(weight, bias):
        return _before(input1, input2, weight, bias) if _before else None
    if not _computed(weight):
        y = _before(input1, input2, weight) if _before else None
        return None if y is None else y + bias
    out, in1, in2 = (int(d) for d in weight.shape)
    t = input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    t = t.reshape(list(t.shape[:-1]) + [out, in2])
    y = (t @ input2.unsqueeze(-1)).squeeze(-1)
    return y if bias is None else y + bias


# ---------------------------------------------------------------------------
# norms, prelu

def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if not _computed(weight, bias):
        return None
    shape = [int(d) for d in normalized_shape] if isinstance(normalized_shape, (tuple, list, torch.Size)) \
        else [int(normalized_shape)]
    return _affine(F.layer_norm(input, shape, eps=eps), weight, bias, shape)


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if not _computed(weight, bias) or input.dim() < 2:
        return None
    if input.dim() == 2:        # [N, C]: as [N, C, 1], which ptec's layer takes
        y = F.group_norm(input.unsqueeze(-1), num_groups, eps=eps).squeeze(-1)
    else:
        y = F.group_norm(input, num_groups, eps=eps)
    return _affine(y, weight, bias, _channel_shape(input))


def _by_statistics(input, mean, var, eps):
    """(x - mean) / sqrt(var + eps), mean and var per channel (dim 1)."""
    shape = _channel_shape(input)
    return (input - mean.reshape(shape)) * torch.rsqrt(var.reshape(shape) + eps)


def _instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                   momentum=0.1, eps=1e-5):
    if not _computed(weight, bias, running_mean, running_var) or input.dim() < 3:
        return None
    if use_input_stats:         # the output is the input's statistics' (torch only updates the running ones)
        y = F.instance_norm(input, None, None, None, None, True, momentum, eps)
    elif _computed(running_mean, running_var):
        y = _by_statistics(input, running_mean, running_var, eps)
    else:
        y = F.instance_norm(input, running_mean, running_var, None, None, False, momentum, eps)
    return _affine(y, weight, bias, _channel_shape(input))


def _batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                eps=1e-5, _before=None):
    if not _computed(weight, bias, running_mean, running_var) or input.dim() < 2:
        return None if _before is None else \
            _before(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training:         # the batch's statistics: capture_losses' stand-in, without the affine
        written = [t for t in (running_mean, running_var) if _computed(t)]
        if written:     # torch writes them in place; the output is the batch's (refused if read later)
            running_mean = running_var = None
        y = _before(input, running_mean, running_var, None, None, training, momentum, eps) if _before else None
        if y is None:
            return None
        for t in written:
            t.node.meta.setdefault("ptec_stats_written", []).append((y.node, input.node))
    elif _computed(running_mean, running_var):
        y = _by_statistics(input, running_mean, running_var, eps)
    else:
        y = F.batch_norm(input, running_mean, running_var, None, None, False, momentum, eps)
    return _affine(y, weight, bias, _channel_shape(input))


_VIEWS = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute", "expand", "detach",
          "narrow", "select", "t", "view_as", "expand_as", "unflatten", "__getitem__", "getitem", "movedim",
          "swapaxes", "swapdims", "diagonal", "unbind", "split", "chunk", "as_strided", "real", "imag",
          "view_as_real", "view_as_complex"}


def _is_view(fn: torch.fx.Node) -> bool:
    name = fn.target if isinstance(fn.target, str) else getattr(fn.target, "__name__", "")
    return fn.op in ("call_function", "call_method") and name in _VIEWS


def refuse_written_stats_read(graph: torch.fx.Graph) -> None:
    """F.batch_norm(training=True) with computed running statistics writes
    them in place (torch: running = (1 - momentum) running + momentum
    batch); its output does not read them. Runs when nothing reads the
    written tensors (or a view of them, or what they view) after the call;
    else one line naming why."""
    order = {fn: i for i, fn in enumerate(graph.nodes)}
    for stat in list(graph.nodes):
        for after, source in stat.meta.get("ptec_stats_written", ()):
            base = stat
            while _is_view(base) and base.args and isinstance(base.args[0], torch.fx.Node):
                base = base.args[0]
            family, todo = set(), [base]
            while todo:
                fn = todo.pop()
                if fn not in family:
                    family.add(fn)
                    todo.extend(u for u in fn.users if _is_view(u))
            # a view made after the call, or any other reader after it (the output: after everything)
            late = [fn for fn in family if order[fn] > order[after]] + \
                [u for fn in family for u in fn.users if u not in family and order[u] > order[after]]
            from .capture_modules import CaptureModuleError
            if source in family or any(fn.op == "placeholder" for fn in family):
                raise CaptureModuleError(
                    f"F.batch_norm(training=True): its running_mean / running_var ({stat.name}) is a view of "
                    f"{'its input' if source in family else 'a model input'}, which torch's in-place update of "
                    f"the statistics writes (and its output reads): pass a copy (.clone())")
            if late:
                raise CaptureModuleError(
                    f"F.batch_norm(training=True): its running_mean / running_var "
                    f"({stat.name}) are computed in the program and torch updates them in place, and "
                    f"{late[0].name} reads them after the call: ptec runs it only when nothing reads the "
                    f"updated statistics")


def _prelu(input, weight):
    if not _computed(weight):
        return None
    w = weight if int(weight.numel()) == 1 or input.dim() < 2 else weight.reshape(_channel_shape(input))
    return torch.where(input >= 0, input, input * w)


# ---------------------------------------------------------------------------
# F.multi_head_attention_forward called directly

def _lin(x, weight, bias):
    """F.linear with any of weight and bias computed (nested stand-ins do
    not run: a computed bias is added here)."""
    if _computed(bias):
        return F.linear(x, weight) + bias
    return F.linear(x, weight, bias)


def _refuse(arg: str, why: str):
    from .capture_modules import CaptureModuleError
    raise CaptureModuleError(f"F.multi_head_attention_forward: {arg} {why}")


def _with_false_columns(m, n: int, dtype=None):
    """A mask (bool or additive float, constant or computed) with n more
    last-dim columns that mask nothing (torch's pad of the masks when it
    appends bias_k / bias_v or the zero attention)."""
    if m is None or not n:
        return m
    shape = tuple(int(d) for d in m.shape[:-1]) + (n,)
    return torch.cat([m, torch.zeros(shape, dtype=dtype or m.dtype)], -1)


def _computed_mask(attn_mask, key_padding_mask, batch: int, h: int, length: int, source: int):
    """torch's combined mask [N h or 1, L, S] as one computed bool (True:
    masked), or None when neither mask is computed."""
    if not _computed(attn_mask, key_padding_mask):
        return None
    masks = []
    for arg, m in (("attn_mask", attn_mask), ("key_padding_mask", key_padding_mask)):
        if m is None:
            continue
        if m.dtype == torch.uint8:
            m = m != 0          # torch's deprecated byte mask, as a compare
        if m.dtype != torch.bool:          # (a computed float mask was split by _split_float_mask)
            from .capture_modules import _as_bool_mask
            m = _as_bool_mask(m, arg, "F.multi_head_attention_forward")
        if arg == "attn_mask":  # [L, S] or [N h, L, S]
            m = m.reshape(1, length, source) if m.dim() == 2 else m
        else:                   # [N, S]: each element's heads, [N, h, L, S] by an or (broadcast), then [N h, L, S]
            m = (m.reshape(batch, 1, 1, source) | torch.zeros(batch, h, length, source, dtype=torch.bool)) \
                .reshape(batch * h, length, source)
        masks.append(m)
    return masks[0] if len(masks) == 1 else masks[0] | masks[1]


_MASKING = -1e4       # a fill at or below it masks (capture_attention_masks' rule for additive masks)


def _split_float_mask(m, fills=None):
    """A computed float attn_mask or key_padding_mask as (bool part,
    additive part): torch adds it to the scores. Written as
    `base.masked_fill(b, -inf)`, `torch.where(b, -inf, base)` /
    `torch.where(b, base, -inf)` or `b.float() * -1e9` (a fill <= -1e4) of
    a bool b: b masks (the softmax of the kept positions) and base is
    added (None when it is made of zeros). fills: a list given the fill of
    a pattern read (its bool part's value). Any other float mask holding a
    value <= -1e4 on the example (a 0 / -1e9 model input): m <= -1e4 masks
    (its fill the example's one masking value, recorded in fills; several
    values record none: -inf) and the rest is added (None when the example's rest is zeros: the int8
    grid of such an m, its step above 39, holds no smaller bias anyway);
    else it is added as it is (a finite bias: a -inf in it on the
    calibration inputs is refused, as any int8 value holding -inf)."""
    b, base = _pattern_split(m, fills)
    if b is not None or base is not m:
        return b, base
    tracer = getattr(m, "tracer", None)
    known = getattr(tracer, "known", None)
    v = tracer.value(m.node) if known is not None and known(m.node) else None
    if not isinstance(v, torch.Tensor) or not v.is_floating_point() or not bool((v <= _MASKING).any()):
        return None, m
    b = m <= _MASKING
    masking = torch.unique(v[v <= _MASKING])
    if fills is not None and masking.numel() == 1:
        # one fill on the example (a model input: its run-time value is unknown): assumed that fill, so a
        # row masked whole is 1/S, torch's where float32 rounds score + fill to the fill (-1e9: |score| < 32)
        fills.append(float(masking[0]))
    rest = v.masked_fill(v <= _MASKING, 0.0)
    return b, (m.masked_fill(b, 0.0) if bool(rest.any()) else None)


def _pattern_split(m, fills):
    """_split_float_mask's patterns: (b, base), or (None, m) when m is none of them."""
    node = m.node if isinstance(m, torch.fx.Proxy) else None
    known = getattr(m.tracer, "known", None) if node is not None else None
    if known is None:
        return None, m

    def value(a):            # the tracer's shadow value of a node (capture_tracer), or None
        return m.tracer.value(a) if isinstance(a, torch.fx.Node) and known(a) else None

    def masking(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v <= _MASKING

    def bool_node(a):
        return isinstance(value(a), torch.Tensor) and value(a).dtype is torch.bool

    def cast_of_bool(a):     # a bool, or its float cast (pad.float(), pad.to(torch.float32)): the bool node
        if bool_node(a):
            return a
        if isinstance(a, torch.fx.Node) and a.op == "call_method" and a.target in ("float", "to", "type") \
                and a.args and bool_node(a.args[0]):
            return a.args[0]
        return None

    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    args = list(node.args) + [node.kwargs[k] for k in ("mask", "value") if k in node.kwargs]
    if name in ("mul", "__mul__", "__rmul__") and len(node.args) == 2 and not node.kwargs:
        for a, c in (node.args, node.args[::-1]):        # pad.float() * -1e9: pad masks, nothing is added
            if masking(c) and cast_of_bool(a) is not None:
                if fills is not None:
                    fills.append(float(c))
                return m.tracer.proxy(cast_of_bool(a)), None
        return None, m
    if name in ("masked_fill", "masked_fill_") and len(args) == 3 and masking(args[2]):
        cond, base, keep_where_true, fill = args[1], args[0], False, args[2]
    elif name == "where" and len(node.args) == 3 and not node.kwargs \
            and masking(node.args[1]) != masking(node.args[2]):
        cond, keep_where_true = node.args[0], masking(node.args[2])
        base, fill = node.args[1:] if keep_where_true else node.args[:0:-1]
    else:
        return None, m
    if not bool_node(cond):
        return None, m
    b = (m.tracer.proxy(cond) == 0) if keep_where_true else m.tracer.proxy(cond)      # (a bool's not: == 0)
    if isinstance(base, torch.fx.Node):
        zeros = isinstance(value(base), torch.Tensor) and not bool(value(base).any()) and m.tracer.fixed(base)
        base = None if zeros else m.tracer.proxy(base)
    elif isinstance(base, (int, float)) and not isinstance(base, bool):
        base = None if base == 0 else torch.full(tuple(int(d) for d in m.shape), float(base))
    else:
        return None, m
    if fills is not None:
        fills.append(float(fill))
    return b, base


def nonzero_mask(m):
    """A computed float key_padding_mask read as a bool, True at its nonzero
    values: torch's merge into a bool attn_mask (logical_or) and its fast
    paths (a bool of the mask). The masking part of _split_float_mask as
    it is (a -inf never made), the rest compared to 0."""
    b, rest = _split_float_mask(m)
    nonzero = None if rest is None else rest != 0
    if b is None or nonzero is None:
        return nonzero if b is None else b
    return b | nonzero


def _constant_bias(m):
    """A constant float attn_mask beside a computed key_padding_mask (an
    ALiBi buffer with `tok == 0` as padding) as (bool part, additive part):
    torch adds it to the scores and sets the padded keys to -inf; its
    finite values are added to the scores (capture_attention_bias), its
    -inf entries (None when none) or-ed into the computed mask. A bool,
    byte or 0/-inf mask is returned as it is, with no bias."""
    from .capture_attention_bias import additive_bias, split_additive
    if additive_bias(m, "F.multi_head_attention_forward") is None:
        return m, None
    masked, bias = split_additive(m)
    return masked, bias.reshape((-1,) + tuple(int(n) for n in bias.shape[-2:]))


def _additive_softmax(scores, added, mask, fill=float("-inf")):
    """The one step of every mask of _mha: torch adds its float masks to
    the scores (added: the biases, [1 or N h, L or 1, S], each expanded to
    the scores' shape: an int8 add takes one shape; the appended keys'
    columns add nothing), then the softmax of the kept positions: a
    constant bool mask ptec's masked softmax, a computed one
    capture_attention_masks' masked_fill softmax (fill: -inf, or the masks'
    finite fill: a row masked whole is then 1/n, as torch's of equal
    values), None the softmax."""
    from .capture_modules import masked_softmax
    shape = tuple(int(n) for n in scores.shape)
    for bias in added:
        if tuple(int(n) for n in bias.shape) != shape:
            bias = bias.expand(shape)
        scores = scores + bias
    if mask is None:
        return torch.softmax(scores, -1)
    if isinstance(mask, torch.fx.Proxy):
        return scores.masked_fill(mask, fill).softmax(-1)
    return masked_softmax(scores, mask)


def _full(mask, shape):
    """The full shape through a logical op: the softmax of the kept
    positions reads a computed bool (capture_attention_masks) of the
    scores' shape [N h, L, S]."""
    return mask | torch.zeros(shape, dtype=torch.bool)


def _mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
         add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
         need_weights=True, attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
         v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True, is_causal=False):
    """torch's formula on [L, N, E] (or unbatched [L, E]) query and [S, N, E]
    key / value: the projections (constant or computed weights), bias_k /
    bias_v a row appended to K and V (the masks a column that masks
    nothing), heads as the [N h, L, d] batch of the matmuls (torch's order),
    add_zero_attn a zero row appended to each head's K and V (and a column
    to the masks), softmax of the scaled scores (a constant mask: ptec's
    masked softmax; a computed bool mask: capture_attention_masks' softmax
    of the kept positions), the output projection; the weights [N, L, S]
    averaged over the heads or [N, h, L, S]. What it does not run is
    refused in one line naming the argument."""
    from .capture_modules import attention_mask
    from .capture_attention_bias import general_padding, padding, split_additive
    if bias_k is not None and (static_k is not None or static_v is not None):
        _refuse("bias_k with static_k / static_v", "(torch asserts: bias cannot be added to a static key or value)")
    if training and dropout_p:
        _refuse(f"dropout_p={dropout_p} with training=True", "(a random dropout of the attention weights): "
                                                               "call it with training=False for inference")
    if query.dim() not in (2, 3):
        _refuse(f"a query of rank {query.dim()}", "(torch takes [L, E] or [L, N, E])")
    if (bias_k is None) != (bias_v is None):
        _refuse("bias_k without bias_v (or bias_v without bias_k)", "(torch requires both or neither)")
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = (t.unsqueeze(1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.reshape(1, -1)
    e, h = int(embed_dim_to_check), int(num_heads)
    d = e // h
    if use_separate_proj_weight:
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        ws = tuple(in_proj_weight[i * e:(i + 1) * e] for i in range(3))
    bs = (None,) * 3 if in_proj_bias is None else tuple(in_proj_bias[i * e:(i + 1) * e] for i in range(3))
    length, batch, source = int(query.shape[0]), int(query.shape[1]), int(key.shape[0])
    q = _lin(query, ws[0], bs[0])
    # static_k / static_v [N h, S, d]: given in place of the projected (and head-split) key / value
    k = _lin(key, ws[1], bs[1]) if static_k is None else None
    v = _lin(value, ws[2], bs[2]) if static_v is None else None
    added = []          # additive biases of the scores, [1 or N h, L or 1, S] (_additive_softmax)
    fills = []          # the fills of the float masks' masking parts (_split_float_mask)
    float_attn = attn_mask is not None and attn_mask.dtype not in (torch.bool, torch.uint8)
    if general_padding(key_padding_mask) and key_padding_mask.numel() == batch * source:
        # a constant float one with other values: torch or-s its nonzeros into a bool attn_mask, else adds it
        key_padding_mask, bias = padding(key_padding_mask, attn_mask is not None and not float_attn,
                                         "F.multi_head_attention_forward")
        if bias is not None:
            added.append(bias.reshape(batch, 1, 1, source).expand(batch, h, 1, source).reshape(batch * h, 1, source))
    if _computed(key_padding_mask) and key_padding_mask.dtype not in (torch.bool, torch.uint8):
        if attn_mask is not None and not float_attn:
            key_padding_mask = nonzero_mask(key_padding_mask)   # torch or-s its nonzeros into a bool attn_mask
        else:
            key_padding_mask, bias = _split_float_mask(key_padding_mask, fills)
            if bias is not None:    # [N, S] added to every head's rows: [N h, 1, S] (torch's view and expand)
                added.append(bias.reshape(batch, 1, 1, source).expand(batch, h, 1, source)
                             .reshape(batch * h, 1, source))
    if _computed(attn_mask) and float_attn:
        attn_mask, bias = _split_float_mask(attn_mask, fills)   # torch adds it to the scores
        if bias is not None:
            added.append(bias.reshape((-1,) + tuple(int(n) for n in bias.shape[-2:])))
    elif _computed(key_padding_mask) and isinstance(attn_mask, torch.Tensor) and not _computed(attn_mask):
        attn_mask, bias = _constant_bias(attn_mask)
        if bias is not None:
            added.append(bias)
    extra = 0
    if bias_k is not None:      # [1, 1, E] each: one more key and value per batch element
        k = torch.cat([k] + [bias_k.reshape(1, 1, e)] * batch, 0) if batch == 1 else \
            torch.cat([k, torch.cat([bias_k.reshape(1, 1, e)] * batch, 1)], 0)
        v = torch.cat([v] + [bias_v.reshape(1, 1, e)] * batch, 0) if batch == 1 else \
            torch.cat([v, torch.cat([bias_v.reshape(1, 1, e)] * batch, 1)], 0)
        extra += 1
    q = q.reshape(length, batch * h, d).transpose(0, 1) * (1.0 / math.sqrt(d))
    k = static_k if k is None else k.reshape(source + extra, batch * h, d).transpose(0, 1)
    v = static_v if v is None else v.reshape(source + extra, batch * h, d).transpose(0, 1)
    if static_k is not None:
        source = int(static_k.shape[1])       # torch's src_len: the static keys'
    if add_zero_attn:           # a zero key and value per head
        k = torch.cat([k, torch.zeros(batch * h, 1, d)], 1)
        v = torch.cat([v, torch.zeros(batch * h, 1, d)], 1)
        extra += 1
    scores = q @ k.transpose(1, 2)
    fill = float("-inf")
    computed = _computed_mask(attn_mask, key_padding_mask, batch, h, length, source)
    if computed is not None:
        if extra:               # as 0 / 1 values joined with zero columns, compared back to a bool
            computed = _with_false_columns(computed.float(), extra, torch.float32) > 0.5
        mask = _full(computed, (batch * h, length, source + extra))
        masks = sum(m is not None for m in (attn_mask, key_padding_mask))
        if len(fills) == masks and len(set(fills)) == 1 and math.isfinite(fills[0]):
            fill = fills[0]     # every masked position holds the same finite fill: a row masked whole is 1/n
    else:
        attn_mask, key_padding_mask = (_with_false_columns(m, extra) for m in (attn_mask, key_padding_mask))
        mask = attention_mask(attn_mask, key_padding_mask, bool(is_causal), h, length,
                              "F.multi_head_attention_forward", batch, source + extra)
        if isinstance(mask, torch.Tensor) and mask.is_floating_point():
            # torch's additive form of a constant float mask (capture_attention_bias): its bias, its -inf mask
            mask, bias = split_additive(mask)
            added.append(bias)
    p = _additive_softmax(scores, [_with_false_columns(b, extra, torch.float32) for b in added], mask, fill)
    source += extra
    a = (p @ v).transpose(0, 1).reshape(length, batch, e)
    y = _lin(a, out_proj_weight, out_proj_bias)
    w = None
    if need_weights:
        w = p.reshape(batch, h, length, source)
        w = w.mean(1) if average_attn_weights else w
        for t in (p, w):            # traced: dropped when the model does not read the weights
            if isinstance(t, torch.fx.Proxy):
                t.node.meta["ptec_if_read"] = True
    if unbatched:
        y = y.squeeze(1)
        w = None if w is None else w.squeeze(0)
    return y, w


class FormulaAttention(OriginalAttributes, torch.nn.Module):
    """nn.MultiheadAttention by _mha (torch's formula): the module's
    weights as plain tensors (constants to the tracer), for what
    capture_modules.SelfAttention does not take: add_bias_kv,
    add_zero_attn, or a mask computed from the input."""

    def __init__(self, m: torch.nn.MultiheadAttention):
        super().__init__()
        self.what = "nn.MultiheadAttention"
        self.e, self.h, self.batch_first, self.zero = m.embed_dim, m.num_heads, m.batch_first, m.add_zero_attn
        self.separate = not m._qkv_same_embed_dim
        c = (lambda t: None if t is None else t.detach().clone())
        self.w_in, self.b_in = c(m.in_proj_weight), c(m.in_proj_bias)
        self.ws = (c(m.q_proj_weight), c(m.k_proj_weight), c(m.v_proj_weight))
        self.bias_k, self.bias_v = c(m.bias_k), c(m.bias_v)
        self.w_out, self.b_out = c(m.out_proj.weight), c(m.out_proj.bias)
        self.fast = fast_path(m)

    def bool_padding(self, query, key, value, key_padding_mask, attn_mask):
        """The key_padding_mask as torch reads it: a float one computed in the
        program is a bool of its nonzeros where torch's inference fast path
        runs (self-attention of one batched value, no attn_mask: fast_path),
        else as given (added to the scores: _mha)."""
        if self.fast and isinstance(key_padding_mask, (torch.Tensor, torch.fx.Proxy)) \
                and key_padding_mask.dtype.is_floating_point \
                and attn_mask is None and query.dim() == 3 and (key is None or key is query) \
                and (value is None or value is query):
            return nonzero_mask(key_padding_mask) if _computed(key_padding_mask) else key_padding_mask != 0
        return key_padding_mask

    def forward(self, query, key=None, value=None, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        key_padding_mask = self.bool_padding(query, key, value, key_padding_mask, attn_mask)
        key = query if key is None else key
        value = query if value is None else value
        if self.batch_first and query.dim() == 3:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        y, w = _mha(query, key, value, self.e, self.h, self.w_in, self.b_in, self.bias_k, self.bias_v, self.zero,
                    0.0, self.w_out, self.b_out, False, key_padding_mask, need_weights, attn_mask,
                    self.separate, *self.ws, average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and query.dim() == 3:
            y = y.transpose(0, 1)
        return y, w


def fast_path(m: torch.nn.MultiheadAttention) -> bool:
    """Whether torch 1.13's inference fast path (eval, no grad) runs this
    module's self-attention when no attn_mask is given: the conditions of
    nn.MultiheadAttention.forward that do not depend on the call. That
    path reads a float key_padding_mask as a bool (its nonzeros mask);
    the ordinary one adds it to the scores."""
    return bool(m.batch_first and m._qkv_same_embed_dim and m.bias_k is None and m.bias_v is None
                and not m.add_zero_attn and not m.dropout and m.num_heads % 2 == 0 and not m.training)


def formula_attention(m):
    """The stand-in of an nn.MultiheadAttention capture_modules does not
    cover (add_bias_kv, add_zero_attn), else None."""
    if isinstance(m, torch.nn.MultiheadAttention) and m.embed_dim % m.num_heads == 0:
        return FormulaAttention(m)
    return None


_CONV = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
_CONV_T = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
_BN = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
# function -> (parameter names, leading traced tensors, stand-in); each returns None (the call as
# before) when nothing it covers is computed
STAND_INS = {
    torch.conv1d: (_CONV, 1, _conv(1)),
    torch.conv2d: (_CONV, 1, _conv(2)),
    torch.conv_transpose1d: (_CONV_T, 1, _conv_transpose(1)),
    torch.conv_transpose2d: (_CONV_T, 1, _conv_transpose(2)),
    torch.conv3d: (_CONV, 1, _conv(3)),
    torch.conv_transpose3d: (_CONV_T, 1, _conv_transpose(3)),
    F.linear: (("input", "weight", "bias"), 1, _linear),
    torch.bilinear: (("input1", "input2", "weight", "bias"), 2, _bilinear),
    F.layer_norm: (("input", "normalized_shape", "weight", "bias", "eps"), 1, _layer_norm),
    F.group_norm: (("input", "num_groups", "weight", "bias", "eps"), 1, _group_norm),
    F.instance_norm: (("input", "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum",
                       "eps"), 1, _instance_norm),
    F.batch_norm: (_BN, 1, _batch_norm),
    torch.prelu: (("input", "weight"), 1, _prelu),
    "prelu": (("input", "weight"), 1, _prelu),         # x.prelu(w)
    F.multi_head_attention_forward: (tuple(inspect.signature(F.multi_head_attention_forward).parameters), 3, _mha),
}


def add_computed_weight_stand_ins(table: dict) -> None:
    """Adds STAND_INS to capture_modules' table. A call that already has a
    stand-in (F.bilinear's constant weight, F.batch_norm's training
    statistics) keeps it for what it covered: the one here is given it as
    _before and calls it when no weight is computed. Every entry takes the
    computed values (a 4th item True: passed as traced values)."""
    for target, (names, traced, call) in STAND_INS.items():
        before = table.get(target)
        if before is not None:
            old_names, old_traced, old_call = before[:3]
            assert old_names == names[:len(old_names)] and old_traced == traced and before[3:] != (True,)
            table[target] = (names, traced, _chained(call, old_call, traced), True)
        else:
            table[target] = (names, traced, call, True)


def _chained(call, before, traced):
    def chained(*args, **kwargs):
        # a constant leading tensor: the earlier stand-in never took those
        leading = all(isinstance(a, torch.fx.Proxy) for a in args[:traced])
        return call(*args, _before=before if leading else None, **kwargs)
    return chained


# ---------------------------------------------------------------------------
# weights computed from the parameters alone: constants

_RANDOM = ("rand", "normal", "bernoulli", "multinomial", "dropout", "poisson", "uniform", "exponential",
           "cauchy", "geometric", "random")


def _parameter_or_constant(root, target: str) -> bool:
    """get_attr target is a parameter of root or a tensor fx made a constant
    (not a buffer: --stateful may make it a state the program writes)."""
    val = root
    for part in target.split("."):
        found = [d[part] for d in (val._parameters, val._buffers, val._modules, vars(val)) if part in d] \
            if isinstance(val, torch.nn.Module) else []
        if not found:
            return False
        if isinstance(val, torch.nn.Module) and part in val._buffers:
            return False
        val = found[0]
    return isinstance(val, torch.Tensor) and (isinstance(val, torch.nn.Parameter) or
                                              target.split(".")[-1].startswith("_tensor_constant"))


def fixed_weight(tracer, v):
    """v's value when v is a tensor the forward computes from the model's
    parameters alone (Weight Standardization's `(w - w.mean()) / w.std()`):
    the same on every run, so a constant ptec quantizes per channel like a
    layer's own weight, not a value the program computes on the int8 grid.
    None for anything else (an input, a buffer, a random draw, an in-place
    write among its ancestors, a value the tracer does not know)."""
    if not isinstance(v, torch.fx.Proxy) or v.node.op == "get_attr" or not hasattr(tracer, "fixed"):
        return None
    if not tracer.fixed(v.node):
        return None
    seen, todo = set(), [v.node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "get_attr":
            if not _parameter_or_constant(tracer.root, str(n.target)):
                return None
            continue
        if n.op not in ("call_function", "call_method"):
            return None
        name = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", "")
        if any(r in name for r in _RANDOM) or (name.endswith("_") and not name.endswith("__")):
            return None
        todo.extend(n.all_input_nodes)
    value = tracer.value(v.node)
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return None
    for n in seen:              # dropped after tracing when nothing else reads them (drop_traced_leftovers)
        n.meta["ptec_value_taken" if n.op == "get_attr" else "ptec_decided"] = True
    return value.detach().clone()


def fixed_weight_call(tracer, kind: str, target, args, kwargs):
    """(args, kwargs) of a call in STAND_INS with every weight, bias or
    statistic computed from the parameters alone made its constant value
    (fixed_weight), or None when there is none: the call is then the
    layer with a constant weight, as if the model had stored it."""
    if kind not in ("call_function", "call_method") or (kind == "call_method") != isinstance(target, str):
        return None
    try:
        entry = STAND_INS.get(target)
    except TypeError:           # an unhashable target
        return None
    if entry is None or getattr(tracer, "_evaluating", False):
        return None
    names, traced = entry[0], entry[1]
    new_args, new_kwargs, folded = list(args), dict(kwargs), False
    for i, a in enumerate(args):
        if i >= traced and (value := fixed_weight(tracer, a)) is not None:
            new_args[i], folded = value, True
    for k, a in kwargs.items():
        if k in names[traced:] and (value := fixed_weight(tracer, a)) is not None:
            new_kwargs[k], folded = value, True
    return (tuple(new_args), new_kwargs) if folded else None
