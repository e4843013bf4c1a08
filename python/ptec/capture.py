"""Stage 1: capture an eval-mode nn.Module as a ptec float Graph (ptec.ir).

torch.fx.symbolic_trace is the path that works on every supported torch
(1.13 included). On torch 2.x, torch.export is tried first when asked for
(method="auto" or "export"); any op it produces that ptec does not map makes
capture fall back to fx, so the result is the same graph either way.
Anything neither path understands becomes an `unsupported` node: it still
evaluates in float, and lowering reports it.

The fx tracer (_Tracer) knows the example's values as it traces
(capture_tracer): shapes are Python ints, the pieces of chunk / split /
unbind a tuple, so Python control on shapes and iteration over pieces
trace; control on the input's values is refused in one line naming the
module, the source line and the fix.
"""
from __future__ import annotations

import contextlib
import dis
import io
import inspect
import operator
from typing import Optional, List, Sequence, Set

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .capture_modules import (FUNCTIONAL_STAND_INS, CaptureModuleError, LSTMFinalCell, LSTMLayer, masked_softmax,
                              ptec_state, ptec_state_write, with_traceable_modules)
from .adaptive_max_pool import adaptive_max_pool_nodes
from .circular_pad import circular_pad_nodes, sliced_pad_nodes
from .conv3d import conv3d_nodes, functional_conv3d_nodes
from .capture_bool import bool_nodes
from .capture_masked_select import refuse_consumers, through_selections
from .capture_selection_more import selection_call_nodes
from .capture_selection_lead import lift_leading_ones, literal_views
from .capture_sort import order_call_node, order_node, order_of
from .capture_indices import (arg_call_node, argmax_node, as_traced, computed_gather_node, embedding_nodes,
                              index_input_attrs, traced_integer_dtypes,
                              to_float_node, to_index_node)
from .capture_grid import grid_nodes
from .capture_item_assignment import drop_markers
from .capture_item import item_lowering_refusal, item_readers, item_value
from .capture_unique_counts import unique_slices_nodes, without_unused_values
from .capture_counts_readers import counts_readers
from .capture_index_forms import mask_with_rest
from .capture_in_place import AugmentedProxy, refuse_written_tensors, tensors_of, without_dead_code
from .capture_distributions import note_skipped_checks
from .capture_integer_states import integer_state
from .capture_train_norms import cumulative_forward, evaluated, trained_norm
from .capture_buffer_state import (INIT, STATE, as_states, copy_with_buffers, kept_states,
                                   restore_tensors, states_in, with_state_reads, written_tensors)
from .capture_view_writes import writes_through_views
from .capture_state_precision import fp32_state_loops
from .capture_composed import composed_calls
from .capture_torchvision import roi_align_node, torchvision_calls, torchvision_leaves
from .capture_trace_patches import trace_patches
from .capture_made_tensors import empty_read_refusal, made_constant_node, written_factories
from .capture_wrapped import unmark_traced_through
from .capture_constant_ids import constant_lookup_nodes
from .capture_view_elements import elements_alone
from .capture_bool_calls import bool_calls_as_tensors
from .capture_bool_moves import cast_bools_first, compares_after_moves
from .capture_moved_bools import moved_bools_compared
from .capture_narrow_ints import widen_narrow_ints
from .capture_bincount import bincount_as_one_hot
from .capture_index_put_flat import flatten_index_puts
from .capture_int_math import int_extreme_element, int_math_nodes, int_view_nodes
from .capture_int_sort import int_order
from .capture_int_promotion import promote_int_operands
from .capture_binary_math import binary_math_node
from .capture_casts import float_cast_node, output_dtype
from .capture_plumbing import tidy_plumbing
from .capture_input_dtypes import as_captured, float_copy, mark_half_inputs
from .capture_outputs import flatten_outputs, note_dropped_outputs
from .capture_dtype_forms import dtype_forms
from .capture_int_spellings import int_clamp_sides, type_as_to
from .capture_out_arguments import out_arguments_as_results
from .capture_unbatched import function_call as unbatched_function, module_call as unbatched_module
from .capture_call_forms import method_call, positional_form, root_arguments
from .capture_tracer import (KnownValuesProxy, KnownValuesTracer, TracedControlError, drop_traced_leftovers,
                             trace_refusal)
from .capture_spellings import respelled, spelling_nodes
from .capture_calls import (refuse_call, _amax_nodes, _copying_nodes, _cumsum_node, _elementwise_node, _functional_module,
                            _index_select_nodes, _meta_shape, _norm_nodes, _normalize_nodes, _reduce_max_nodes,
                            _scalar_arg, _sum_nodes, _values_of)
from .capture_tensor_index import computed_index_select_nodes, tensor_index_nodes
from .embedding_bag import embedding_bag_nodes
from .capture_linalg import linalg_nodes
from .capture_matrix_functions import matrix_function_nodes, without_unread_factors
from .capture_ldl import ldl_nodes
from .capture_constant_rows import constant_rows_norm
from .capture_gem_pool import gem_pool
from .capture_computed_weights import fixed_weight_call, refuse_written_stats_read
from .capture_fp32_distances import fp32_distance_nodes
from .capture_rewrites import einsum_refusal, rewrite_nodes
from .capture_unary_tables import unary_table_nodes
from .capture_float_bits import WHOLE_WHY as FREXP_WHOLE_WHY, frexp_elements, mark_bit_level_readers
from .capture_nms import nms_nodes
from .capture_fp32_norms import fp32_norm_nodes, lp_pool_fp32_nodes
from .capture_sign import difference_sign_nodes, exact_operands, sign_nodes
from .capture_nms_rows import float_rows_for_nms
from .capture_order_keeping import indices_of_logits
from .capture_pool_peaks import pool_peaks_in_fp32
from .capture_norm_chains import norm_chains_as_calls
from .capture_hand_hypot import hand_hypots_as_calls
from .capture_fp32_buckets import fp32_bucket_nodes
from .capture_fp32_histc import fp32_histc_nodes
from .capture_dtype_view import dtype_view_nodes, mark_viewed_producers
from .capture_binary_tables import binary_table_nodes
from .capture_matrix_compositions import matrix_composition_nodes
from .capture_reductions import reduction_nodes
from .capture_norms import norm_nodes
from .capture_spectral import spectral_nodes
from .capture_complex import complex_nodes, complex_module_nodes
from .capture_fft_dims import real_nodes
from .capture_trapezoid import trapezoid_nodes
from .capture_attention_masks import (feeds_masked_softmax, masked_softmax_nodes, minus_inf_elsewhere,
                                      minus_inf_log_softmax_nodes)
from .capture_masking_readers import masking_readers_in_fp32, minus_inf_constant_nodes
from .capture_list_index import list_index_nodes
from .capture_log_softmax import log_of_softmax
from .conv_transpose3d import (conv_transpose3d_nodes, conv_transpose3d_planes, dense_groups,
                               fold_dilation_and_output_padding,
                               functional_conv_transpose3d_nodes)
from .fractional_max_pool import fractional_max_pool_nodes
from .pool_indices import (check_batched, is_pool_with_indices, module_of_call, unpool_default_shape, unpool_node,
                           unpool_spatial, window_node, without_indices)
from .random_layers import dropout_node, fractional_random_nodes
from .interpolate import expand_adaptive_avg_pools, interpolate_nodes
from .pool3d import (PADS_3D, POOLS_3D, functional_pool3d_module, module_pad3d_nodes, module_pool3d_nodes,
                     pad3d_nodes)
from .ir import Graph, Node, UnsupportedOperator, infer_shapes
from .capture_module_forms import conv_output_size, with_module_forms


class CaptureError(RuntimeError):
    pass


def _np(t) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32).copy()


def _pair(v) -> List[int]:
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


ONE_D = (nn.Conv1d, nn.ConvTranspose1d, nn.MaxPool1d, nn.AvgPool1d)

# A max pool with return_indices is a pair (pool_indices): its values and
# its indices are taken apart by getitem; the pair as one value has no form.
INDICES_PAIR = ("return_indices=True: take the pair apart (values, indices = pool(x)); "
                "the pair itself is not a tensor")


def _adaptive_size(v) -> list:
    """An adaptive pool's output_size as [oh, ow]; None (keep that dim)
    stays until the shapes are known (expand_adaptive_avg_pools)."""
    return [int(v), int(v)] if isinstance(v, int) else [None if x is None else int(x) for x in v]


def _single(v) -> int:
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


def _conv_padding(name: str, m: nn.Module, spatial: int):
    """How a convolution module pads: (None, its padding per spatial dim)
    when the convolution's own zero padding does it, else (a pad node's
    attrs, zeros) for a pad before a convolution without padding: torch's
    padding="same" with an odd total (the extra row or column at the end,
    as torch puts it), or padding_mode reflect / replicate / circular (torch
    pads with F.pad, then convolves unpadded; circular as wrapped slices,
    python/ptec/circular_pad.py). padding="valid" is no padding."""
    k, d = list(m.kernel_size), list(m.dilation)
    if isinstance(m.padding, str):
        total = [0] * spatial if m.padding == "valid" else [d[i] * (k[i] - 1) for i in range(spatial)]
        lo, hi = [t // 2 for t in total], [t - t // 2 for t in total]
    else:
        lo = hi = [int(p) for p in m.padding][:spatial]
    if m.padding_mode == "zeros" and lo == hi:
        return None, lo
    pads: List[int] = []
    for i in reversed(range(spatial)):          # F.pad's order: the last dim first
        pads += [lo[i], hi[i]]
    mode = "constant" if m.padding_mode == "zeros" else m.padding_mode
    return dict(pad=pads, mode=mode, value=0.0), [0] * spatial


def _pad_nodes(name: str, x: str, pad: dict, shape, source: str) -> List[Node]:
    """The nodes of a convolution's own pad (_conv_padding's attrs) of node
    x, the last named `name`: one pad node, or for circular the wrapped
    slices and joins."""
    if pad["mode"] == "circular":
        if shape is None:
            raise CaptureError(f"{source}: circular padding needs a traced input shape")
        return circular_pad_nodes(name, x, pad["pad"], shape, source, CaptureError)
    return [Node(name, "pad", [x], pad)]


def _padded_conv2d_nodes(name: str, source: str, m: nn.Conv2d, ins: List[str], shape) -> List[Node]:
    """nn.Conv2d whose padding needs a pad of its own (_conv_padding)."""
    pad, padding = _conv_padding(source, m, 2)
    conv = Node(name, "conv2d", [f"{name}_padded"] if pad else ins[:1], dict(
        weight=_np(m.weight), bias=None if m.bias is None else _np(m.bias), stride=_pair(m.stride),
        padding=padding, dilation=_pair(m.dilation), groups=int(m.groups)))
    return (_pad_nodes(f"{name}_padded", ins[0], pad, shape, source) if pad else []) + [conv]


def _one_d_nodes(name: str, source: str, m: nn.Module, ins: List[str], shape) -> List[Node]:
    """A 1-D (transposed) convolution or pool over [N, C, L] as its 2-D form over a unit
    height, [N, C, 1, L]: unsqueeze(2), the 2-D node with a 1 x K kernel,
    squeeze(2), which keeps the module's name (its users refer to it).
    prepare() folds a batch-norm or an activation after the squeeze into the
    2-D node, as it does after a 2-D convolution."""
    lifted, core = f"{name}_as_2d_in", f"{name}_as_2d"
    pre: List[Node] = []
    if shape is not None and len(shape) != 3:       # the lift takes dim 2 as the unit height
        raise CaptureError(f"{source}: an input of shape {list(shape)} is not supported ([N, C, L] is: "
                           "add the batch dim)")
    if isinstance(m, nn.Conv1d):
        pad, padding = _conv_padding(source, m, 1)
        if pad:         # on the unit-height [N, C, 1, L]: pad W only
            pre = _pad_nodes(f"{name}_padded", lifted, dict(pad, pad=pad["pad"] + [0, 0]),
                             None if shape is None else [shape[0], shape[1], 1, shape[2]], source)
        node = Node(core, "conv2d", [pre[-1].name if pre else lifted], dict(
            weight=_np(m.weight)[:, :, None, :], bias=None if m.bias is None else _np(m.bias),
            stride=[1, _single(m.stride)], padding=[0, padding[0]],
            dilation=[1, _single(m.dilation)], groups=int(m.groups)))
    elif isinstance(m, nn.ConvTranspose1d):
        if m.padding_mode != "zeros":
            raise CaptureError(f"{source}: padding_mode {m.padding_mode} is not supported")
        node = Node(core, "conv_transpose2d", [lifted], dict(
            weight=_np(m.weight)[:, :, None, :], bias=None if m.bias is None else _np(m.bias),
            stride=[1, _single(m.stride)], padding=[0, _single(m.padding)],
            output_padding=[0, _single(m.output_padding)], dilation=[1, _single(m.dilation)],
            groups=int(m.groups)))
    elif isinstance(m, nn.MaxPool1d):
        node = Node(core, "max_pool2d", [lifted], dict(
            kernel=[1, _single(m.kernel_size)], stride=[1, _single(m.stride or m.kernel_size)],
            padding=[0, _single(m.padding)], dilation=[1, _single(m.dilation)], ceil_mode=bool(m.ceil_mode)))
    else:
        node = Node(core, "avg_pool2d", [lifted], dict(
            kernel=[1, _single(m.kernel_size)], stride=[1, _single(m.stride or m.kernel_size)],
            padding=[0, _single(m.padding)], ceil_mode=bool(m.ceil_mode),
            count_include_pad=bool(m.count_include_pad), divisor_override=None))
    return [Node(lifted, "reshape", ins[:1], dict(unsqueeze=2))] + pre + [
        node, Node(name, "reshape", [core], dict(squeeze=2))]


def _cross_map_band(size: int, c: int) -> np.ndarray:
    """The [C, C] 0/1 window of nn.CrossMapLRN2d (torch's _functions.py),
    which differs from nn.LocalResponseNorm's: channel 0 sums channels
    0 .. p - 1 (p = int((size - 1) / 2 + 1)); each next channel adds channel
    c + p - 1 while it exists and, only once c > p, drops channel c - p, so
    channel 0 is never dropped and stays in every window. Built by running
    that recurrence on indicator rows."""
    p = int((size - 1) / 2 + 1)
    band = np.zeros((c, c), np.float32)
    band[0, :min(c, p)] = 1.0
    for ch in range(1, c):
        band[ch] = band[ch - 1]
        if ch < c - p + 1:
            band[ch, ch + p - 1] += 1.0
        if ch > p:
            band[ch, ch - p] -= 1.0
    return band


def _lrn_nodes(name: str, source: str, size: int, alpha: float, beta: float, k: float, ins: List[str],
               shape, cross_map: bool = False) -> List[Node]:
    """nn.LocalResponseNorm / F.local_response_norm over [N, C, H, W] (or
    [N, C, L], lifted to a unit height, or [N, C, D, ..., W], its middle
    dims joined into one: the window runs over channels only, as torch's
    view of a 5-D input does): y = x * (k + alpha * avg)^-beta,
    where avg is the mean of x * x over a window of `size` channels, zero
    padded as torch pads it (size // 2 in front, (size - 1) // 2 behind,
    divided by size). The window mean is a 1 x 1 convolution whose C x C
    weight is a band of 1 / size, the scale a 256-entry LUT (lrn_scale) and
    the products int8 muls; the last node keeps the layer's name.
    cross_map: nn.CrossMapLRN2d, the same formula over its own window
    (_cross_map_band), on 4-D input only as torch asserts."""
    rank = len(shape or [])
    if (rank != 4) if cross_map else (rank < 3):
        raise CaptureError(f"{source}: local_response_norm on a rank-{rank} input is not supported "
                           f"(torch's {'4' if cross_map else '3 or more'})")
    c = int(shape[1])
    band = np.zeros((c, c, 1, 1), np.float32)
    if cross_map:
        band[:, :, 0, 0] = _cross_map_band(int(size), c) / size
    else:
        for o in range(c):
            band[o, max(0, o - size // 2):min(c, o + (size - 1) // 2 + 1)] = 1.0 / size
    x = ins[0]
    nodes: List[Node] = []
    if rank == 3:
        nodes.append(Node(f"{name}_as_2d_in", "reshape", [x], dict(unsqueeze=2)))
        x = f"{name}_as_2d_in"
    elif rank > 4:
        nodes.append(Node(f"{name}_as_2d_in", "reshape", [x], dict(
            target_shape=[int(shape[0]), c, int(np.prod(shape[2:-1])), int(shape[-1])])))
        x = f"{name}_as_2d_in"
    back = {3: dict(squeeze=2), 4: None}.get(rank, dict(target_shape=[int(v) for v in shape]))
    return nodes + [Node(f"{name}_square", "mul", [x, x], {}),
                    Node(f"{name}_window", "conv2d", [f"{name}_square"], dict(
                        weight=band, bias=None, stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1)),
                    Node(f"{name}_scale", "lrn_scale", [f"{name}_window"],
                         dict(alpha=float(alpha), beta=float(beta), k=float(k))),
                    Node(f"{name}_as_2d" if back else name, "mul", [x, f"{name}_scale"], {})] + (
        [Node(name, "reshape", [f"{name}_as_2d"], back)] if back else [])


def _conv3d_nodes(name: str, fn: torch.fx.Node, mods, ins: List[str], by_name,
                  module_shape=None) -> Optional[List[Node]]:
    """nn.Conv3d, or F.conv3d by constant weights, as one conv2d per output
    depth (python/ptec/conv3d.py); None for an F.conv3d it cannot take.
    module_shape: the module's input shape when it is not the traced one
    (_called_module_nodes' batch 1)."""
    x = fn.args[0] if fn.args else fn.kwargs.get("input")
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    if fn.op == "call_module":
        return conv3d_nodes(name, _source(fn, mods), mods[fn.target], ins, module_shape or shape, CaptureError)
    constants = {k: v.attrs["value"] for k, v in by_name.items() if v.op == "constant"}
    return functional_conv3d_nodes(name, _source(fn, mods), fn.args, fn.kwargs, ins, constants, shape,
                                   CaptureError)


def _conv_transpose3d_nodes(name: str, fn: torch.fx.Node, mods, ins: List[str], by_name,
                            module_shapes=None) -> Optional[List[Node]]:
    """nn.ConvTranspose3d, or F.conv_transpose3d by constant weights, as one
    conv_transpose2d per output depth (python/ptec/conv_transpose3d.py);
    None for an F.conv_transpose3d it cannot take. module_shapes: the
    module's (input, output) shapes when they are not the traced ones
    (_called_module_nodes' batch 1)."""
    x = fn.args[0] if fn.args else fn.kwargs.get("input")
    shape = _meta_shape(x) if isinstance(x, torch.fx.Node) else None
    if fn.op == "call_module":
        m = mods[fn.target]
        shape, out = module_shapes or (shape, _meta_shape(fn))
        if (len(fn.args) > 1 or fn.kwargs.get("output_size") is not None) and out is not None and shape is not None:
            # m(x, output_size=...): torch picks the output_padding that gives
            # that size; the traced output holds it
            k, s, p, d = (list(v) for v in (m.kernel_size, m.stride, m.padding, m.dilation))
            extra = [out[2 + i] - ((shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1) for i in range(3)]
            return conv_transpose3d_planes(_source(fn, mods), name, ins[0], m.weight, m.bias, s, p, extra, d,
                                           m.groups, shape, CaptureError)
        return conv_transpose3d_nodes(name, _source(fn, mods), m, ins, shape, CaptureError)
    constants = {k: v.attrs["value"] for k, v in by_name.items() if v.op == "constant"}
    return functional_conv_transpose3d_nodes(name, _source(fn, mods), fn.args, fn.kwargs, ins, constants, shape,
                                             CaptureError)


def _interpolate_nodes(name: str, fn: torch.fx.Node, ins: List[str]) -> Optional[List[Node]]:
    """F.interpolate in a mode python/ptec/interpolate.py builds; None otherwise."""
    x = fn.args[0] if fn.args else fn.kwargs.get("input")
    if not isinstance(x, torch.fx.Node):
        return None
    return interpolate_nodes(name, _scalar_arg(fn, 3, "mode", "nearest"), _scalar_arg(fn, 4, "align_corners"),
                             _scalar_arg(fn, 2, "scale_factor"), _scalar_arg(fn, 5, "recompute_scale_factor"),
                             ins, _meta_shape(x), _meta_shape(fn), bool(_scalar_arg(fn, 6, "antialias", False)))


def _pad3d_call(name: str, fn: torch.fx.Node, mods, ins: List[str]) -> Optional[List[Node]]:
    """F.pad by int pads of a 5-D input, or of an unbatched 4-D one by
    reflection or replication in three dims (python/ptec/pool3d.py); None
    for any other, which stays a plain pad node."""
    pads, value = _scalar_arg(fn, 1, "pad"), _scalar_arg(fn, 3, "value")
    x = fn.args[0] if fn.args else None
    if not isinstance(x, torch.fx.Node) or not all(isinstance(p, int) for p in pads or []) \
            or isinstance(value, torch.fx.Node):
        return None
    return pad3d_nodes(name, _source(fn, mods), ins[0], _meta_shape(x), pads,
                       str(_scalar_arg(fn, 2, "mode", "constant")), 0.0 if value is None else float(value),
                       CaptureError)


def _unfold_nodes(name: str, source: str, m: nn.Unfold, ins: List[str], shape) -> List[Node]:
    """nn.Unfold (im2col) over [N, C, H, W]: a convolution whose one-hot
    weights copy each patch position to its own output channel (channel
    c * KH * KW + i * KW + j takes input channel c at tap (i, j), PyTorch's
    order), then a reshape to [N, C * KH * KW, blocks]. A copy: on the
    input's int8 grid each output is the input value exactly."""
    if len(shape or []) != 4:
        raise CaptureError(f"{source}: a rank-{len(shape or [])} input is not supported (4-D [N, C, H, W] is)")
    c = int(shape[1])
    kh, kw = _pair(m.kernel_size)
    weight = np.zeros((c * kh * kw, c, kh, kw), np.float32)
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                weight[ch * kh * kw + i * kw + j, ch, i, j] = 1.0
    conv = Node(f"{name}_patches", "conv2d", ins[:1], dict(
        weight=weight, bias=None, stride=_pair(m.stride), padding=_pair(m.padding),
        dilation=_pair(m.dilation), groups=1))
    return [conv, Node(name, "reshape", [conv.name], dict(flatten=(2, 3)))]


def _adaptive_avg_pool1d_nodes(name: str, ins: List[str], out: int) -> List[Node]:
    """Adaptive average pooling of [N, C, L] to `out`: the 2-D pool of a
    unit height (the average pool when out divides L, else the window
    matrix of python/ptec/interpolate.py's expand_adaptive_avg_pools)."""
    return [Node(f"{name}_as_2d_in", "reshape", ins[:1], dict(unsqueeze=2)),
            Node(f"{name}_as_2d", "adaptive_avg_pool2d", [f"{name}_as_2d_in"], dict(output_size=[1, int(out)])),
            Node(name, "reshape", [f"{name}_as_2d"], dict(squeeze=2))]


def _reshaping_module_nodes(name: str, source: str, m: nn.Module, ins: List[str], shape) -> List[Node]:
    """Modules that are other ops once the input's shape is known:
    nn.AdaptiveMaxPool2d / 1d (a max pool of kernel = stride = input /
    output where the output divides the input, else
    python/ptec/adaptive_max_pool.py's windows axis by axis), nn.GLU (a * sigmoid(b) of the two
    halves along its dim: two slices, a sigmoid LUT, a mul) and nn.Fold
    (col2im: a transposed convolution whose one-hot weights put each
    patch channel back at its position, summing overlaps: the adjoint of
    nn.Unfold's)."""
    rank = len(shape or [])
    if isinstance(m, nn.AdaptiveMaxPool2d):
        out = _adaptive_size(m.output_size)
        if rank != 4:
            raise CaptureError(f"{source}: takes [N, C, H, W] (input {list(shape or [])})")
        out = [shape[2 + i] if out[i] is None else int(out[i]) for i in range(2)]
        if any(shape[2 + i] % out[i] for i in range(2)):
            return adaptive_max_pool_nodes(name, ins[0], shape[2:], out)
        k = [shape[2] // out[0], shape[3] // out[1]]
        return [Node(name, "max_pool2d", ins[:1], dict(kernel=k, stride=k, padding=[0, 0], dilation=[1, 1],
                                                      ceil_mode=False))]
    if isinstance(m, nn.AdaptiveAvgPool1d):
        if rank != 3:
            raise CaptureError(f"{source}: nn.AdaptiveAvgPool1d takes [N, C, L] (input {list(shape or [])})")
        return _adaptive_avg_pool1d_nodes(name, ins, _single(m.output_size))
    if isinstance(m, nn.AdaptiveMaxPool1d):
        # over [N, C, L]: the 2-D pool of a unit height, kernel = stride = L / output
        out = _single(m.output_size)
        if rank != 3:
            raise CaptureError(f"{source}: takes [N, C, L] (input {list(shape or [])})")
        return ([Node(f"{name}_as_2d_in", "reshape", ins[:1], dict(unsqueeze=2))]
                + adaptive_max_pool_nodes(f"{name}_as_2d", f"{name}_as_2d_in", [1, int(shape[2])], [1, out])
                + [Node(name, "reshape", [f"{name}_as_2d"], dict(squeeze=2))])
    if isinstance(m, nn.LPPool1d):
        # over [N, C, L]: nn.LPPool2d of a unit height (torch's steps are the same)
        if rank != 3:
            raise CaptureError(f"{source}: nn.LPPool1d takes [N, C, L] (input {list(shape or [])})")
        k, stride = _single(m.kernel_size), _single(m.stride or m.kernel_size)
        two = nn.LPPool2d(m.norm_type, (1, k), (1, stride), m.ceil_mode)
        return ([Node(f"{name}_as_2d_in", "reshape", ins[:1], dict(unsqueeze=2))]
                + _reshaping_module_nodes(f"{name}_as_2d", source, two, [f"{name}_as_2d_in"], [shape[0], shape[1], 1, shape[2]])
                + [Node(name, "reshape", [f"{name}_as_2d"], dict(squeeze=2))])
    if isinstance(m, nn.LPPool2d):
        # torch: avg_pool2d(x^p) * (KH * KW), then its 1/p power: two LUTs around an int8 average
        k = _pair(m.kernel_size)
        p = float(m.norm_type)
        if np.isinf(p):
            # torch computes x^p, the window's sum, then its 1/p = (-)0th power
            # literally: pow(anything, 0) is 1, NaN included, so the layer's
            # output is ones of the pooled shape whatever the input
            with torch.no_grad():
                ones = m(torch.zeros([int(d) for d in shape])).numpy()
            return [Node(name, "constant", [], dict(value=ones.astype(np.float32), note=(
                f"note: {source}: torch's LPPool with norm_type={p} is not a max pool: it gives ones "
                f"whatever the input (x.pow({p}), then .pow(1 / {p}) = .pow(0)), and so does ptec; "
                "for the largest |x| of each window use nn.MaxPool2d on x.abs()")))]
        if not np.isfinite(p) or p == 0:
            # torch computes x^p and its 1/p power literally: 0 divides by zero
            raise CaptureError(f"{source}: norm_type {p} is not supported (a finite, nonzero power is)")
        return lp_pool_fp32_nodes(name, ins[0], p, k, _pair(m.stride or m.kernel_size), bool(m.ceil_mode),
                                  source)
    if isinstance(m, nn.GLU):
        dim = int(m.dim) % max(rank, 1)
        half = int(shape[dim]) // 2
        if int(shape[dim]) % 2:
            raise CaptureError(f"{source}: nn.GLU over an odd dim of size {shape[dim]}")
        return [Node(f"{name}_a", "slice", ins[:1], dict(dim=dim, start=0, end=half)),
                Node(f"{name}_b", "slice", ins[:1], dict(dim=dim, start=half, end=2 * half)),
                Node(f"{name}_gate", "sigmoid", [f"{name}_b"]),
                Node(name, "mul", [f"{name}_a", f"{name}_gate"])]
    # nn.Fold: [N, C*KH*KW, L] -> [N, C, H, W]
    kh, kw = _pair(m.kernel_size)
    (oh_, ow_), (sh, sw), (ph, pw), (dh, dw) = (_pair(m.output_size), _pair(m.stride), _pair(m.padding),
                                                _pair(m.dilation))
    if rank != 3 or shape[1] % (kh * kw):
        raise CaptureError(f"{source}: nn.Fold takes [N, C*KH*KW, L] (input {list(shape or [])})")
    c = int(shape[1]) // (kh * kw)
    bh = (oh_ + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (ow_ + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if bh * bw != int(shape[2]):
        raise CaptureError(f"{source}: nn.Fold of {shape[2]} blocks for a {bh} x {bw} grid")
    weight = np.zeros((c * kh * kw, c, kh, kw), np.float32)            # [Cin, Cout, KH, KW]
    for ch in range(c):
        for i in range(kh):
            for j in range(kw):
                weight[ch * kh * kw + i * kw + j, ch, i, j] = 1.0
    extra = [oh_ - ((bh - 1) * sh - 2 * ph + dh * (kh - 1) + 1), ow_ - ((bw - 1) * sw - 2 * pw + dw * (kw - 1) + 1)]
    return [Node(f"{name}_grid", "reshape", ins[:1], dict(shape=[int(shape[0]), c * kh * kw, bh, bw])),
            Node(name, "conv_transpose2d", [f"{name}_grid"], dict(
                weight=weight, bias=None, stride=[sh, sw], padding=[ph, pw], output_padding=extra,
                dilation=[dh, dw], groups=1))]


def _prelu_nodes(name: str, m: nn.PReLU, ins: List[str], rank: int = 4) -> List[Node]:
    """nn.PReLU with a slope per channel: relu(x) + slope * min(x, 0), the
    slopes a [1, C, 1, ...] constant (a channel broadcast the int8 mul
    takes); the add keeps the module's name."""
    w = _np(m.weight).reshape(-1)
    pos, neg, slope, scaled = (f"{name}_{k}" for k in ("pos", "neg", "slope", "scaled"))
    at = [1, -1] + [1] * (rank - 2)                 # the slopes along dim 1 of a rank-`rank` input
    return [Node(pos, "clamp", ins[:1], dict(lo=0.0, hi=None)),
            Node(neg, "clamp", ins[:1], dict(lo=None, hi=0.0)),
            Node(slope, "constant", [], dict(value=w.reshape(at).astype(np.float32))),
            Node(scaled, "mul", [neg, slope], {}),
            Node(name, "add", [pos, scaled], {})]


def _upsample_node(name: str, mode: str, align_corners, ins: List[str], shape, antialias: bool = False) -> Node:
    """nn.Upsample / F.interpolate that python/ptec/interpolate.py (tried
    first, int8) did not take, which needs the traced input shape: nearest,
    bilinear and bicubic on 4-D tensors as the resize to the traced output
    size (bilinear and bicubic the fp32 portable kernels); other modes stay
    an operator ptec reports, as does an antialiased resize (which
    interpolate.py takes whenever the shapes were traced)."""
    if antialias:
        return Node(name, "unsupported", ins[:1], dict(
            fn=lambda x, _s=shape, _m=mode, _a=align_corners: F.interpolate(x, size=_s[2:], mode=_m,
                                                                             align_corners=_a, antialias=True),
            what=f"interpolate ({mode}, antialias)"))
    if mode == "nearest" and shape is not None and len(shape) == 4 and not align_corners:
        return Node(name, "upsample_nearest", ins[:1], dict(size=[int(shape[2]), int(shape[3])]))
    if mode in ("bilinear", "bicubic") and shape is not None and len(shape) == 4:
        return Node(name, "upsample_" + mode, ins[:1], dict(size=[int(shape[2]), int(shape[3])],
                                                            align_corners=bool(align_corners)))
    return Node(name, "unsupported", ins[:1], dict(fn=lambda x, _s=shape, _m=mode, _a=align_corners:
                                                    F.interpolate(x, size=_s[2:], mode=_m, align_corners=_a),
                                                    what=f"interpolate ({mode})"))


def _module_node(name: str, m: nn.Module, ins: List[str]) -> Node:
    if type(m) is LSTMLayer:
        return Node(name, "lstm", ins, dict(weight_ih=_np(m.weight_ih), weight_hh=_np(m.weight_hh),
                                            bias=_np(m.bias), hidden=int(m.weight_hh.shape[1])))
    if isinstance(m, nn.Conv2d):
        if isinstance(m.padding, str):
            raise CaptureError(f"{name}: string padding {m.padding!r} is not supported")
        if m.padding_mode != "zeros":
            raise CaptureError(f"{name}: padding_mode {m.padding_mode} is not supported")
        return Node(name, "conv2d", ins, dict(
            weight=_np(m.weight), bias=None if m.bias is None else _np(m.bias),
            stride=_pair(m.stride), padding=_pair(m.padding), dilation=_pair(m.dilation),
            groups=int(m.groups)))
    if isinstance(m, nn.ConvTranspose2d):
        if m.padding_mode != "zeros":
            raise CaptureError(f"{name}: padding_mode {m.padding_mode} is not supported")
        return Node(name, "conv_transpose2d", ins, dict(
            weight=_np(m.weight), bias=None if m.bias is None else _np(m.bias),
            stride=_pair(m.stride), padding=_pair(m.padding),
            output_padding=_pair(m.output_padding), dilation=_pair(m.dilation),
            groups=int(m.groups)))
    if isinstance(m, nn.Linear):
        return Node(name, "linear", ins, dict(weight=_np(m.weight),
                                              bias=None if m.bias is None else _np(m.bias)))
    if isinstance(m, (nn.BatchNorm3d, nn.BatchNorm2d, nn.BatchNorm1d)):
        return Node(name, "batch_norm", ins, dict(
            mean=_np(m.running_mean), var=_np(m.running_var),
            gamma=None if m.weight is None else _np(m.weight),
            beta=None if m.bias is None else _np(m.bias), eps=float(m.eps)))
    if isinstance(m, nn.GroupNorm):
        return Node(name, "group_norm", ins, dict(
            groups=int(m.num_groups), eps=float(m.eps),
            weight=_np(m.weight) if m.affine else None, bias=_np(m.bias) if m.affine else None))
    if isinstance(m, (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)) and m.track_running_stats:
        # In eval, an instance norm that tracks running statistics normalizes
        # with them (torch's use_input_stats is training or no running stats):
        # a batch-norm, which folds into the layer before it or runs alone.
        return Node(name, "batch_norm", ins, dict(
            mean=_np(m.running_mean), var=_np(m.running_var),
            gamma=_np(m.weight) if m.affine else None, beta=_np(m.bias) if m.affine else None, eps=float(m.eps)))
    if isinstance(m, (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)) and not m.track_running_stats:
        # Instance statistics (what eval uses without running stats): a group per channel.
        return Node(name, "group_norm", ins, dict(
            groups=int(m.num_features), eps=float(m.eps),
            weight=_np(m.weight) if m.affine else None, bias=_np(m.bias) if m.affine else None))
    if isinstance(m, nn.LayerNorm):
        return Node(name, "layer_norm", ins, dict(
            normalized_shape=[int(s) for s in m.normalized_shape], eps=float(m.eps),
            weight=None if m.weight is None else _np(m.weight), bias=None if m.bias is None else _np(m.bias)))
    if isinstance(m, nn.ReLU):
        return Node(name, "clamp", ins, dict(lo=0.0, hi=None))
    if isinstance(m, nn.ReLU6):
        return Node(name, "clamp", ins, dict(lo=0.0, hi=6.0))
    if isinstance(m, nn.Hardtanh):
        return Node(name, "clamp", ins, dict(lo=float(m.min_val), hi=float(m.max_val)))
    if isinstance(m, (nn.Dropout, nn.Identity, nn.AlphaDropout, nn.FeatureAlphaDropout, nn.Dropout1d,
                      nn.Dropout2d, nn.Dropout3d)):
        return Node(name, "identity", ins)              # eval: every dropout passes its input
    if isinstance(m, nn.Threshold):
        return Node(name, "threshold", ins, dict(threshold=float(m.threshold), value=float(m.value)))
    if isinstance(m, nn.Softmax2d):
        return Node(name, "softmax", ins, dict(dim=-3))
    if isinstance(m, nn.ChannelShuffle):
        return Node(name, "channel_shuffle", ins, dict(groups=int(m.groups)))
    if isinstance(m, nn.AvgPool2d):
        return Node(name, "avg_pool2d", ins, dict(
            kernel=_pair(m.kernel_size), stride=_pair(m.stride or m.kernel_size),
            padding=_pair(m.padding), ceil_mode=bool(m.ceil_mode),
            count_include_pad=bool(m.count_include_pad), divisor_override=m.divisor_override))
    if isinstance(m, nn.AdaptiveAvgPool2d):
        return Node(name, "adaptive_avg_pool2d", ins, dict(output_size=_adaptive_size(m.output_size)))
    if isinstance(m, nn.MaxPool2d):
        return Node(name, "max_pool2d", ins, dict(
            kernel=_pair(m.kernel_size), stride=_pair(m.stride or m.kernel_size),
            padding=_pair(m.padding), dilation=_pair(m.dilation), ceil_mode=bool(m.ceil_mode)))
    if isinstance(m, nn.Flatten):
        return Node(name, "reshape", ins, dict(flatten=(m.start_dim, m.end_dim)))
    if isinstance(m, nn.Softmax):
        return Node(name, "softmax", ins, dict(dim=m.dim if m.dim is not None else -1))
    if isinstance(m, nn.LogSoftmax):
        return Node(name, "log_softmax", ins, dict(dim=m.dim if m.dim is not None else -1))
    if isinstance(m, nn.Sigmoid):
        return Node(name, "sigmoid", ins)
    if isinstance(m, nn.Tanh):
        return Node(name, "tanh", ins)
    if isinstance(m, nn.SiLU):
        return Node(name, "silu", ins)
    if isinstance(m, nn.GELU):
        return Node(name, "gelu", ins, dict(approximate=getattr(m, "approximate", "none")))
    if isinstance(m, nn.Hardswish):
        return Node(name, "hardswish", ins)
    if isinstance(m, nn.Hardsigmoid):
        return Node(name, "hardsigmoid", ins)
    if isinstance(m, nn.PixelShuffle):
        return Node(name, "pixel_shuffle", ins, dict(factor=int(m.upscale_factor), unshuffle=False))
    if isinstance(m, nn.PixelUnshuffle):
        return Node(name, "pixel_shuffle", ins, dict(factor=int(m.downscale_factor), unshuffle=True))
    if isinstance(m, nn.Softplus):
        return Node(name, "softplus", ins, dict(beta=float(m.beta), threshold=float(m.threshold)))
    if isinstance(m, nn.PReLU) and m.weight.numel() == 1:
        # One slope: a function of one tensor, like LeakyReLU. A slope per
        # channel is not: it stays a refusal.
        return Node(name, "prelu", ins, dict(weight=float(m.weight.detach().reshape(-1)[0])))
    if isinstance(m, nn.LeakyReLU):
        return Node(name, "leaky_relu", ins, dict(negative_slope=float(m.negative_slope)))
    if isinstance(m, nn.ELU):
        return Node(name, "elu", ins, dict(alpha=float(m.alpha)))
    if isinstance(m, (nn.Hardshrink, nn.Softshrink)):
        return Node(name, type(m).__name__.lower(), ins, dict(lambd=float(m.lambd)))
    if isinstance(m, (nn.Softsign, nn.Tanhshrink, nn.Mish, nn.SELU, nn.LogSigmoid)):
        return Node(name, type(m).__name__.lower(), ins)
    if isinstance(m, nn.CELU):
        return Node(name, "celu", ins, dict(alpha=float(m.alpha)))
    if isinstance(m, nn.RReLU):
        # eval: a leaky ReLU whose slope is the middle of [lower, upper]
        return Node(name, "leaky_relu", ins, dict(negative_slope=(float(m.lower) + float(m.upper)) / 2.0))
    if isinstance(m, (nn.ZeroPad2d, nn.ConstantPad1d, nn.ConstantPad2d, nn.ConstantPad3d)):
        return Node(name, "pad", ins, dict(pad=[int(p) for p in m.padding], mode="constant",
                                           value=float(m.value)))
    if isinstance(m, (nn.ReflectionPad1d, nn.ReflectionPad2d, nn.ReplicationPad1d, nn.ReplicationPad2d)):
        mode = "reflect" if isinstance(m, (nn.ReflectionPad1d, nn.ReflectionPad2d)) else "replicate"
        return Node(name, "pad", ins, dict(pad=[int(p) for p in m.padding], mode=mode, value=0.0))
    from .nn import SVDF
    if isinstance(m, SVDF):
        # One layer (ptec::quantized_svdf); its relu is the node's fused clamp.
        return Node(name, "svdf", ins, dict(
            weights_feature=_np(m.weights_feature), weights_time=_np(m.weights_time),
            bias=None if m.bias is None else _np(m.bias), rank=int(m.rank), units=int(m.units),
            memory=int(m.memory), act=(0.0, None) if m.activation == "relu" else None))
    return Node(name, "unsupported", ins, dict(fn=m, what=type(m).__name__))


_ACT_FUNCS = {F.relu: (0.0, None), torch.relu: (0.0, None), F.relu6: (0.0, 6.0)}


# Modules whose stand-ins take a batched input, with its rank. PyTorch also
# takes each without the batch dim (one rank less): capture runs those as
# batch 1 (_called_module_nodes), so no stand-in needs an unbatched form.
BATCHED_RANK = ((nn.Conv3d, 5), (nn.ConvTranspose3d, 5), (nn.InstanceNorm3d, 5), (nn.AdaptiveMaxPool2d, 4),
                (nn.Unfold, 4), (nn.AdaptiveMaxPool1d, 3), (nn.AdaptiveAvgPool1d, 3)) + tuple((t, 3) for t in ONE_D)


def _unbatched(m: nn.Module, in_shape, out_shape) -> bool:
    """Whether module m is called on an input without its batch dim."""
    rank = next((r for t, r in BATCHED_RANK if isinstance(m, t)), None)
    return rank is not None and in_shape is not None and out_shape is not None and len(in_shape) == rank - 1


def _bag_rows(name: str, table, ids: str) -> Node:
    """The embedding node of a bag's rows (embedding_bag_nodes' lookup)."""
    return Node(name, "embedding", [ids], dict(weight=table))


def _bag_nodes(name: str, m: nn.EmbeddingBag, fn: torch.fx.Node, ins: List[str], by_name, ids_shape):
    """nn.EmbeddingBag called as m(ids), m(ids, offsets, per_sample_weights)
    (also by keyword), or F.embedding_bag rebuilt as one (FUNCTIONAL_MODULES):
    ptec.embedding_bag's nodes for constant offsets, offsets that are an
    int64 value of the program (a model input) and per_sample_weights (a
    float value), else None."""
    if fn.op == "call_function":
        names = ("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq", "mode", "sparse",
                 "per_sample_weights", "include_last_offset", "padding_idx")
    else:
        names = ("input", "offsets", "per_sample_weights")
    args = dict(zip(names, fn.args))
    args.update(fn.kwargs)
    if set(args) - set(names):
        return None
    offsets, weights, count = args.get("offsets"), args.get("per_sample_weights"), None
    if isinstance(weights, torch.fx.Node):
        if _meta_shape(weights) != (list(ids_shape) if ids_shape is not None else None):
            return None
        weights = weights.name
    elif weights is not None:
        return None
    if isinstance(offsets, torch.fx.Node):
        const = by_name.get(offsets.name)
        if const is not None and const.op == "constant":
            offsets = np.asarray(const.attrs["value"])
        else:
            shape = _meta_shape(offsets)
            count = int(shape[0]) if shape is not None and len(shape) == 1 else None
            offsets = offsets.name
    elif offsets is not None:
        return None
    return embedding_bag_nodes(name, m, ins, by_name, ids_shape, offsets, _reduce_max_nodes,
                               _bag_rows, weights, count)


def _called_module_nodes(name: str, m: nn.Module, fn: torch.fx.Node, mods, ins: List[str],
                         by_name, shapes=None) -> List[Node]:
    """The nodes of module m called by fx node fn (a call_module, or a
    functional call that capture rebuilt as its module: _functional_module).
    shapes: (input shape, output shape) when they are not fn's traced ones
    (a call taken as batch 1)."""
    nodes: List[Node] = []
    in_shape, out_shape = shapes or (
        _meta_shape(fn.args[0]) if fn.args and isinstance(fn.args[0], torch.fx.Node) else None, _meta_shape(fn))
    if getattr(m, "return_indices", False):
        # a pair: the call stays one unsupported node (refused naming the
        # module if used whole), whose getitems are the values and indices
        # (pool_indices); a fractional pool without samples stays refused
        attrs = dict(fn=m, what=type(m).__name__)
        if is_pool_with_indices(m):
            attrs.update(why=INDICES_PAIR, pool_indices=in_shape)
        return [Node(name, "unsupported", ins[:1], attrs)]
    if unpool_spatial(m) is not None:
        return [unpool_node(name, ins, out_shape, in_shape, unpool_spatial(m), _source(fn, mods), CaptureError,
                            unpool_default_shape(in_shape, unpool_spatial(m), m.kernel_size, m.stride, m.padding,
                                                 _scalar_arg(fn, 2, "output_size", None)))]
    if shapes is None and _unbatched(m, in_shape, out_shape):
        # torch's unbatched form is the batch-1 call without its batch dim:
        # unsqueeze(0), the batched stand-in nodes, squeeze(0) (which keeps
        # the module's name: its users refer to it)
        core = _called_module_nodes(f"{name}_batched", m, fn, mods, [f"{name}_in"] + ins[1:], by_name,
                                    ([1] + in_shape, [1] + out_shape))
        return [Node(f"{name}_in", "reshape", ins[:1], dict(unsqueeze=0))] + core + [
            Node(name, "reshape", [f"{name}_batched"], dict(squeeze=0))]
    m = conv_output_size(m, fn, in_shape, out_shape)    # ConvTranspose1d / 2d(x, output_size)
    ids_shape = in_shape
    if isinstance(m, nn.Embedding) and constant_lookup_nodes(name, m, ins, by_name) is not None:
        return constant_lookup_nodes(name, m, ins, by_name)    # ids the program fixes (capture_constant_ids)
    if isinstance(m, nn.Embedding) and embedding_nodes(name, m, ins, by_name, ids_shape) is not None:
        return embedding_nodes(name, m, ins, by_name, ids_shape)
    if isinstance(m, nn.EmbeddingBag) and _bag_nodes(name, m, fn, ins, by_name, ids_shape) is not None:
        return _bag_nodes(name, m, fn, ins, by_name, ids_shape)
    if isinstance(m, (nn.Softmax, nn.Softmin, nn.LogSoftmax)):
        implicit_softmax_dim(fn, m.dim)     # torch's implicit dim was made explicit while tracing, or refused
    if isinstance(m, nn.Unflatten) and out_shape is not None:
        nodes.append(Node(name, "reshape", ins[:1], dict(target_shape=out_shape)))
    elif isinstance(m, nn.Upsample):
        nodes.extend(interpolate_nodes(name, m.mode, m.align_corners, m.scale_factor,
                                       getattr(m, "recompute_scale_factor", None), ins,
                                       in_shape, out_shape)
                     or [_upsample_node(name, m.mode, m.align_corners, ins, out_shape)])
    elif isinstance(m, nn.Conv3d):
        nodes.extend(_conv3d_nodes(name, fn, mods, ins, by_name, in_shape))
    elif isinstance(m, (nn.FractionalMaxPool2d, nn.FractionalMaxPool3d)) and m._random_samples is not None:
        nodes.extend(fractional_max_pool_nodes(name, _source(fn, mods), m, ins, in_shape,
                                               out_shape, CaptureError))
    elif isinstance(m, (nn.FractionalMaxPool2d, nn.FractionalMaxPool3d)):
        # no samples: drawn on the device on every call (random_layers)
        nodes.extend(fractional_random_nodes(name, _source(fn, mods), m, ins, in_shape, out_shape, CaptureError))
    elif isinstance(m, nn.ConvTranspose3d):
        nodes.extend(_conv_transpose3d_nodes(name, fn, mods, ins, by_name, (in_shape, out_shape)))
    elif isinstance(m, ONE_D):
        nodes.extend(_one_d_nodes(name, _source(fn, mods), m, ins, in_shape))
    elif isinstance(m, POOLS_3D):
        nodes.extend(module_pool3d_nodes(name, _source(fn, mods), m, ins, in_shape, CaptureError))
    elif isinstance(m, PADS_3D) and module_pad3d_nodes(name, _source(fn, mods), m, ins, in_shape,
                                                       CaptureError):
        nodes.extend(module_pad3d_nodes(name, _source(fn, mods), m, ins, in_shape, CaptureError))
    elif isinstance(m, (nn.AdaptiveMaxPool2d, nn.GLU, nn.Fold, nn.LPPool2d, nn.LPPool1d, nn.AdaptiveAvgPool1d,
                        nn.AdaptiveMaxPool1d)):
        nodes.extend(_reshaping_module_nodes(name, _source(fn, mods), m, ins, in_shape))
    elif isinstance(m, nn.Conv2d) and (isinstance(m.padding, str) or m.padding_mode != "zeros"):
        nodes.extend(_padded_conv2d_nodes(name, _source(fn, mods), m, ins, in_shape))
    elif (isinstance(m, (nn.ZeroPad2d, nn.ConstantPad1d, nn.ConstantPad2d, nn.ConstantPad3d))
          and sliced_pad_nodes(name, _source(fn, mods), _module_node(name, m, ins).attrs, ins[0],
                               in_shape, CaptureError) is not None):
        nodes.extend(sliced_pad_nodes(name, _source(fn, mods), _module_node(name, m, ins).attrs, ins[0],
                                      in_shape, CaptureError))
    elif isinstance(m, nn.Unfold):
        nodes.extend(_unfold_nodes(name, _source(fn, mods), m, ins, in_shape))
    elif isinstance(m, nn.ChannelShuffle) and len(in_shape or [4]) != 4:
        nodes.extend(_channel_shuffle_nodes(name, _source(fn, mods), m, ins, in_shape))
    elif isinstance(m, nn.Softmin):
        # softmin(x) = softmax(-x): the negation a LUT, then the int8 softmax
        nodes.extend([Node(f"{name}_neg", "neg", ins[:1]),
                      Node(name, "softmax", [f"{name}_neg"], dict(dim=int(m.dim)))])
    elif isinstance(m, nn.LocalResponseNorm):
        nodes.extend(_lrn_nodes(name, _source(fn, mods), m.size, m.alpha, m.beta, m.k, ins, out_shape))
    elif isinstance(m, nn.CrossMapLRN2d):
        nodes.extend(_lrn_nodes(name, _source(fn, mods), m.size, m.alpha, m.beta, m.k, ins, out_shape,
                                cross_map=True))
    elif isinstance(m, nn.PReLU) and m.weight.numel() > 1 and len(out_shape or []) >= 2:
        nodes.extend(_prelu_nodes(name, m, ins, len(out_shape)))
    else:
        nodes.append(_module_node(name, m, ins))
    return nodes


def _channel_shuffle_nodes(name: str, source: str, m: nn.ChannelShuffle, ins: List[str], shape) -> List[Node]:
    """nn.ChannelShuffle of [N, C, *rest] other than 4-D (torch takes 3-D
    and up): the 4-D shuffle of [N, C, prod(rest), 1], which moves whole
    channels as on an image, viewed back to the input's shape."""
    if len(shape) < 3:
        raise CaptureError(f"{source}: a channel shuffle needs an input of 3 or more dims [N, C, ...], "
                           f"got {len(shape)}-D (torch refuses it too)")
    nodes, cur = [], ins[0]
    if len(shape) > 3:
        nodes.append(Node(f"{name}_flat", "reshape", [cur], dict(flatten=(2, len(shape) - 1))))
        cur = nodes[-1].name
    nodes += [Node(f"{name}_as_2d_in", "reshape", [cur], dict(unsqueeze=3)),
              Node(f"{name}_as_2d", "channel_shuffle", [f"{name}_as_2d_in"], dict(groups=int(m.groups))),
              Node(name if len(shape) == 3 else f"{name}_flat_out", "reshape", [f"{name}_as_2d"], dict(squeeze=3))]
    if len(shape) > 3:
        nodes.append(Node(name, "reshape", [nodes[-1].name], dict(target_shape=list(shape))))
    return nodes


def _fx_to_graph(gm: torch.fx.GraphModule) -> Graph:
    nodes: List[Node] = []
    inputs: List[str] = []
    outputs: List[str] = []
    mods = dict(gm.named_modules())

    by_name = {}
    tuple_sources = set()
    shape_nodes = set()
    state_of_buffer = {}        # buffer path -> its state node (--stateful)
    state_buffers = set()       # get_attr nodes read only as a state's buffer

    def ref(a):
        return a.name if isinstance(a, torch.fx.Node) else None

    for fn in gm.graph.nodes:
        name = fn.name
        ins = [a.name for a in fn.args if isinstance(a, torch.fx.Node)
               and a.name not in shape_nodes]
        before = len(nodes)
        masking_readers_in_fp32(fn, mods, by_name)      # a -1e9 / -inf fill read by max / exp / sum ... (its module)
        if fn.op == "placeholder":
            nodes.append(Node(name, "input", [], index_input_attrs(fn)))
            inputs.append(name)
        elif fn.op == "output":
            res = fn.args[0]        # a flat tuple (capture_outputs.flatten_outputs)
            res = res if isinstance(res, (tuple, list)) else [res]
            outputs = [ref(r) for r in res]
            if any(o is None for o in outputs):
                raise CaptureError("model outputs must be tensors")
            for r in res:
                if output_dtype(r) is not None and r.name in by_name:
                    by_name[r.name].attrs["out_dtype"] = output_dtype(r)
        elif fn.op == "get_attr" and fn.users and all(u.target is masked_softmax for u in fn.users):
            shape_nodes.add(name)          # a mask: the masked softmax node holds it
        elif fn.op == "call_function" and fn.target is masked_softmax:
            mask = fn.args[1]
            val = gm
            for part in mask.target.split("."):
                val = getattr(val, part)
            nodes.append(Node(name, "masked_softmax", ins[:1],
                              dict(dim=-1, mask=val.detach().cpu().numpy().astype(bool))))
        elif fn.op == "get_attr":
            val = gm
            for part in fn.target.split("."):
                val = getattr(val, part)
            # integer and bool constants (indices, masks) keep their dtype for
            # the float graph's own evaluation; the rest is float32
            exact = isinstance(val, torch.Tensor) and not val.is_floating_point()
            nodes.append(Node(name, "constant", [], dict(
                value=val.detach().cpu().resolve_conj().resolve_neg().numpy().copy() if exact else _np(val))))
        elif feeds_masked_softmax(fn, mods, by_name):
            shape_nodes.add(name)       # scores.masked_fill(mask, -inf) read by softmaxes: they take scores and mask
            torch.fx.node.map_arg(fn.args, lambda a: tuple_sources.add(a.name))     # a mask: dropped unless read
        elif (masked := masked_softmax_nodes(fn, mods, by_name, CaptureError, _source(fn, mods))) is not None:
            nodes.extend(masked)        # (capture_attention_masks)
        elif (masked := minus_inf_log_softmax_nodes(fn, mods, by_name)) is not None:
            nodes.extend(masked)        # masked_fill(eye, -inf) read by log_softmax (capture_attention_masks)
        elif (masked := minus_inf_constant_nodes(fn, by_name)) is not None:
            nodes.extend(masked)        # masked_fill(constant, -inf) read by max / sum ... (capture_masking_readers)
        elif minus_inf_elsewhere(fn, mods, by_name) is not None and _function_node(fn, ins).op == "unsupported":
            nodes.append(_function_node(fn, ins))       # read by others: refused saying why
            nodes[-1].attrs["why"] = minus_inf_elsewhere(fn, mods, by_name)
        elif _is_shape_value(fn):
            # x.size(0), x.shape, B * T: plain integers, used only to spell
            # static shapes; the consumers read their shapes from tracing.
            shape_nodes.add(name)
        elif fn.op == "call_module":
            viewed = complex_module_nodes(fn, mods[fn.target], _source(fn, mods))   # a layer of a complex value
            nodes.extend(viewed or _called_module_nodes(name, mods[fn.target], fn, mods, ins, by_name))
            if isinstance(mods[fn.target], nn.EmbeddingBag) and nodes[-1].op != "unsupported":
                # the constant offsets: now in the bags' slices (dropped unless read elsewhere)
                torch.fx.node.map_arg((fn.args[1:], fn.kwargs), lambda a: tuple_sources.add(a.name))
        elif (nms := nms_nodes(fn)) is not None:     # torchvision's nms keep flags (capture_nms: ptec::nms.out)
            nodes.extend(nms)
        elif fn.op == "call_function" and fn.target is F.local_response_norm:
            nodes.extend(_lrn_nodes(name, _source(fn, mods), *(_scalar_arg(fn, i, key, d) for i, key, d in (
                (1, "size", None), (2, "alpha", 1e-4), (3, "beta", 0.75), (4, "k", 1.0))), ins, _meta_shape(fn)))
        elif fn.op == "call_function" and fn.target in (ptec_state, ptec_state_write):
            buffer = fn.args[0]
            if not isinstance(buffer, torch.fx.Node) or buffer.op != "get_attr":
                raise CaptureError(f"{fn.target.__name__} needs a module buffer")
            state_buffers.add(buffer.name)
            if fn.target is ptec_state:
                val = gm
                for part in buffer.target.split("."):
                    val = getattr(val, part)
                bound = fn.args[2] if len(fn.args) > 2 else fn.kwargs.get("bound")
                kept = {STATE: fn.meta[STATE]} if STATE in fn.meta else {}     # a written buffer's
                nodes.append(Node(name, "state", [], dict(init=_np(fn.meta.get(INIT, val)), bound=bound, **kept)))
                integer_state(nodes[-1], fn.meta.get(INIT, val))    # an int / bool buffer (capture_integer_states)
                state_of_buffer[buffer.target] = name
            else:
                if buffer.target not in state_of_buffer:
                    raise CaptureError(f"state {buffer.target} written before it is read")
                kept = {STATE: fn.meta[STATE]} if STATE in fn.meta else {}
                nodes.append(Node(name, "state_write", [state_of_buffer[buffer.target], ins[1]], kept))
        elif fn.op in ("call_function", "call_method"):
            scalar = _scalar_binary(fn)
            integer = int_math_nodes(fn, by_name)
            source = (by_name.get(ins[0]) if ins and fn.target in (operator.getitem, getattr)
                      else None)
            if (viewed := dtype_view_nodes(fn, ins, by_name)) is not None:
                nodes.extend(viewed)            # x.view(torch.int32): its bytes (capture_dtype_view)
            elif (behind := unique_slices_nodes(fn, by_name)) is not None:
                nodes.extend(behind)            # unique(x, dim=2) of [1, 4, 8]: x[:, :, m] (capture_unique_counts)
            elif spectral_nodes(fn, ins, by_name) is not None:
                nodes.extend(spectral_nodes(fn, ins, by_name))     # rfft, stft and their readers
                torch.fx.node.map_arg((fn.args, fn.kwargs), lambda a: tuple_sources.add(a.name))  # a window, a filter
            elif (pairs := complex_nodes(fn, ins, by_name)) is not None:
                nodes.extend(pairs)                                 # complex values as [..., 2] pairs
                torch.fx.node.map_arg((fn.args, fn.kwargs), lambda a: tuple_sources.add(a.name))  # constants in them
            elif (shifted := real_nodes(fn, ins)) is not None:
                nodes.extend(shifted)                               # fftshift, hfft of a real value (capture_fft_dims)
            elif trapezoid_nodes(fn, ins, by_name) is not None or norm_nodes(fn, ins) is not None:
                nodes.extend(trapezoid_nodes(fn, ins, by_name) or norm_nodes(fn, ins))
            elif (source is not None and source.op == "unsupported" and "pieces" in source.attrs
                    and isinstance(fn.args[1], int)):
                # One piece of a chunk or split: a slice of the input. A piece
                # of unbind is a one-wide slice without its dim: a reshape.
                dim, bounds = source.attrs["pieces"]
                start, end = bounds[fn.args[1]]
                if source.attrs.get("drop_dim"):
                    nodes.append(Node(name + "_slice", "slice", list(source.inputs[:1]),
                                      dict(dim=dim, start=start, end=end)))
                    nodes.append(Node(name, "reshape", [name + "_slice"], dict(target_shape=_meta_shape(fn))))
                else:
                    nodes.append(Node(name, "slice", list(source.inputs[:1]), dict(dim=dim, start=start, end=end)))
                for n in nodes[before:]:
                    n.attrs["source"] = source.attrs.get("source")
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "pool_indices" in source.attrs
                  and fn.args[1] in (0, 1)):
                # a max pool's values (the pool without its indices) or indices (window_argmax)
                m, in_shape = source.attrs["fn"], source.attrs["pool_indices"]
                what = source.attrs.get("source") or source.attrs["what"]
                if fn.args[1] == 1:
                    nodes.append(window_node(name, "window_argmax", m, source.inputs[0], in_shape,
                                             _meta_shape(fn), what, CaptureError))
                else:
                    check_batched(m, in_shape, what, CaptureError)
                    nodes.extend(_called_module_nodes(name, without_indices(m), fn, mods, source.inputs[:1],
                                                      by_name, (in_shape, _meta_shape(fn))))
                for n in nodes[before:]:
                    n.attrs["source"] = source.attrs.get("source")
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "values_of" in source.attrs
                  and int_extreme_element(name, source, fn.args[1], by_name) is not None):
                nodes.extend(int_extreme_element(name, source, fn.args[1], by_name))    # of an int value
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "values_of" in source.attrs
                  and fn.args[1] in (1, "indices")):
                # the indices of x.max(dim) / x.min(dim): an argmax node (ties: the first, as torch)
                dim, keepdim, negate, shape = source.attrs["values_of"]
                nodes.append(argmax_node(name, source.inputs[0], shape, dim, keepdim, negate))
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "values_of" in source.attrs
                  and fn.args[1] in (0, "values")):
                # the values of x.max(dim) / x.min(dim): a reduction ptec lowers (the indices stay unsupported)
                dim, keepdim, negate, shape = source.attrs["values_of"]
                nodes.extend(_reduce_max_nodes(name, source.inputs[0], shape, [dim], keepdim, negate))
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "order_of" in source.attrs
                  and fn.args[1] in (0, "values", 1, "indices")):
                # the values or indices of torch.sort / topk: sort, sort_indices (capture_sort)
                nodes.append(int_order(order_node(name, source.inputs[0], source.attrs["order_of"],
                                                  fn.args[1] in (1, "indices")), by_name))
                tuple_sources.add(source.name)
            elif (source is not None and source.op == "unsupported" and "elements" in source.attrs
                  and source.attrs["elements"](fn, fn.args[1]) is not None):
                # an element of torch.aminmax / var_mean / std_mean (capture_reductions)
                nodes.extend(source.attrs["elements"](fn, fn.args[1]))
                tuple_sources.add(source.name)
            elif source is not None and source.op == "unsupported":
                # One element of a multi-output call (torch.sort(x)[0], topk(...).values):
                # keep it as one unsupported node named after that call, so
                # lowering reports the operator the model really used.
                nodes.append(_element_of(name, source, fn.args[1]))
                tuple_sources.add(source.name)
            elif selection_call_nodes(fn, ins, by_name) is not None:      # over a selection's table
                nodes.extend(selection_call_nodes(fn, ins, by_name))
            elif integer is not None:
                # arithmetic on int64 / int32 values: in integers, as torch (capture_int_math)
                nodes.extend(integer)
            elif scalar is not None:
                nodes.extend(scalar)
            elif made_constant_node(fn) is not None:      # torch.zeros(2, 8) written in forward (capture_made_tensors)
                nodes.append(made_constant_node(fn))
            elif spelling_nodes(fn, ins, by_name) is not None:
                nodes.extend(spelling_nodes(fn, ins, by_name))
            elif bool_nodes(fn, by_name) is not None:
                nodes.extend(bool_nodes(fn, by_name))
            elif sign_nodes(fn, ins) is not None:                     # capture_sign: by comparisons
                nodes.extend(sign_nodes(fn, ins))
            elif difference_sign_nodes(fn) is not None:     # sign(a - b): (a > b) - (a < b) (capture_sign)
                nodes.extend(difference_sign_nodes(fn))
                tuple_sources.add(fn.args[0].name)      # the int8 difference: dropped unless read elsewhere
            elif reduction_nodes(fn, ins, by_name) is not None:
                made = reduction_nodes(fn, ins, by_name)         # capture_reductions; a tuple: per element
                nodes.extend(made if isinstance(made, list) else [_function_node(fn, ins)])
                if not isinstance(made, list):
                    nodes[-1].attrs["elements"] = made
            elif tensor_index_nodes(fn, by_name, _source(fn, mods), CaptureError) is not None:
                nodes.extend(tensor_index_nodes(fn, by_name, _source(fn, mods), CaptureError))
                # the index constants: now in the slices (a refused getitem reads them, so keeps them)
                torch.fx.node.map_arg(fn.args[1], lambda a: tuple_sources.add(a.name))
            elif (listed := list_index_nodes(fn, by_name, _source(fn, mods), CaptureError)) is not None:
                nodes.extend(listed)        # x[:, [0, 2]]: the list as torch's constant index tensor
            elif (fn.target is operator.getitem and source is not None
                  and _basic_index_nodes(name, fn, ins[0]) is not None):
                nodes.extend(_basic_index_nodes(name, fn, ins[0]))
            elif fn.target in (torch.narrow, "narrow") and _narrow_node(name, fn, ins) is not None:
                nodes.append(_narrow_node(name, fn, ins))
            elif (fn.op == "call_function" and fn.target is F.pad and _function_node(fn, ins).op == "pad"
                  and sliced_pad_nodes(name, _source(fn, mods), _function_node(fn, ins).attrs, ins[0],
                                       _meta_shape(fn.args[0]), CaptureError) is not None):
                nodes.extend(sliced_pad_nodes(name, _source(fn, mods), _function_node(fn, ins).attrs, ins[0],
                                              _meta_shape(fn.args[0]), CaptureError))
            elif fn.target is F.adaptive_avg_pool1d and len(_meta_shape(fn) or []) == 3:
                nodes.extend(_adaptive_avg_pool1d_nodes(name, ins, int(_meta_shape(fn)[2])))
            elif fn.target is F.interpolate and _interpolate_nodes(name, fn, ins) is not None:
                nodes.extend(_interpolate_nodes(name, fn, ins))
            elif (fn.args and isinstance(fn.args[0], torch.fx.Node)
                  and functional_pool3d_module(fn.target, lambda i, k, d: _scalar_arg(fn, i, k, d)) is not None):
                m = functional_pool3d_module(fn.target, lambda i, k, d: _scalar_arg(fn, i, k, d))
                nodes.extend(module_pool3d_nodes(name, _source(fn, mods), m, ins[:1], _meta_shape(fn.args[0]),
                                                 CaptureError))
            elif fn.target is F.pad and _pad3d_call(name, fn, mods, ins) is not None:
                nodes.extend(_pad3d_call(name, fn, mods, ins))
            elif module_of_call(fn, lambda i, k, d: _scalar_arg(fn, i, k, d)) is not None:
                # F.max_pool2d(x, 2, return_indices=True) and kin: the module's pair
                nodes.extend(_called_module_nodes(name, module_of_call(fn, lambda i, k, d: _scalar_arg(fn, i, k, d)),
                                                  fn, mods, ins[:1], by_name))
            elif unpool_spatial(fn.target) is not None and len(ins) == 2:
                nodes.append(unpool_node(name, ins, _meta_shape(fn), _meta_shape(fn.args[0]),
                                         unpool_spatial(fn.target), _source(fn, mods), CaptureError,
                                         unpool_default_shape(_meta_shape(fn.args[0]), unpool_spatial(fn.target),
                                                              *(_scalar_arg(fn, i, k, d) for i, k, d in (
                                                                  (2, "kernel_size", None), (3, "stride", None),
                                                                  (4, "padding", 0), (5, "output_size", None))))))
            elif _functional_module(fn, by_name) is not None:
                module, taken = _functional_module(fn, by_name)
                nodes.extend(_called_module_nodes(name, module, fn, mods, ins[:1], by_name))
                tuple_sources.update(taken)          # constants now in the module's node: dropped unless read elsewhere
            elif fn.target is F.conv3d and _conv3d_nodes(name, fn, mods, ins, by_name) is not None:
                nodes.extend(_conv3d_nodes(name, fn, mods, ins, by_name))
                tuple_sources.update(a.name for a in list(fn.args[1:]) + list(fn.kwargs.values())
                                     if isinstance(a, torch.fx.Node))    # weights now in the convs: dropped unless read elsewhere
            elif (fn.target is F.conv_transpose3d
                  and _conv_transpose3d_nodes(name, fn, mods, ins, by_name) is not None):
                nodes.extend(_conv_transpose3d_nodes(name, fn, mods, ins, by_name))
                tuple_sources.update(a.name for a in list(fn.args[1:]) + list(fn.kwargs.values())
                                     if isinstance(a, torch.fx.Node))    # as for F.conv3d
            elif roi_align_node(fn, ins) is not None:       # torchvision's roi_align (capture_torchvision)
                nodes.append(roi_align_node(fn, ins))
            elif grid_nodes(fn, ins, by_name) is not None:
                nodes.extend(grid_nodes(fn, ins, by_name))
            elif _sum_nodes(fn, ins) is not None:
                nodes.extend(_sum_nodes(fn, ins))
            elif _copying_nodes(fn, ins) is not None:
                nodes.extend(_copying_nodes(fn, ins))
            elif arg_call_node(fn, ins) is not None:
                nodes.append(arg_call_node(fn, ins))
            elif order_call_node(fn, ins) is not None:
                nodes.append(int_order(order_call_node(fn, ins), by_name))     # of an int value: capture_int_sort
            elif computed_gather_node(fn, ins, by_name) is not None:
                nodes.append(computed_gather_node(fn, ins, by_name))
            elif computed_index_select_nodes(fn, by_name) is not None:
                nodes.extend(computed_index_select_nodes(fn, by_name))
            elif to_float_node(fn, ins, by_name) is not None:
                nodes.append(to_float_node(fn, ins, by_name))
            elif to_index_node(fn, ins, by_name) is not None:
                nodes.append(to_index_node(fn, ins, by_name))
            elif float_cast_node(fn, ins, by_name) is not None:
                nodes.append(float_cast_node(fn, ins, by_name))
            elif binary_math_node(fn, ins) is not None:
                nodes.append(binary_math_node(fn, ins))
            elif _amax_nodes(fn, ins) is not None:
                nodes.extend(_amax_nodes(fn, ins))
            elif _norm_nodes(fn, ins) is not None:
                nodes.extend(_norm_nodes(fn, ins))
            elif _cumsum_node(fn, ins) is not None:
                nodes.append(_cumsum_node(fn, ins))
            elif _index_select_nodes(fn, ins, by_name) is not None:
                nodes.extend(_index_select_nodes(fn, ins, by_name))
                tuple_sources.add(fn.args[2].name)          # the index constant: now in the slices
            elif _normalize_nodes(fn, ins) is not None:
                nodes.extend(_normalize_nodes(fn, ins))
            elif fp32_distance_nodes(fn, ins, by_name) is not None:
                nodes.extend(fp32_distance_nodes(fn, ins, by_name))      # capture_fp32_distances
            elif fp32_bucket_nodes(fn, ins, by_name) is not None:     # capture_fp32_buckets: computed boundaries
                nodes.extend(fp32_bucket_nodes(fn, ins, by_name))
            elif fp32_histc_nodes(fn, ins, by_name) is not None:      # capture_fp32_histc: x's own range
                nodes.extend(fp32_histc_nodes(fn, ins, by_name))
            elif fp32_norm_nodes(fn, ins, by_name) is not None:       # capture_fp32_norms: ord < 0 in fp32
                nodes.extend(fp32_norm_nodes(fn, ins, by_name))
            elif matrix_function_nodes(fn, ins, by_name) is not None:
                made = matrix_function_nodes(fn, ins, by_name)    # capture_matrix_functions; a tuple: per element
                nodes.extend(made if isinstance(made, list) else [_function_node(fn, ins)])
                if not isinstance(made, list):
                    nodes[-1].attrs["elements"] = made
            elif (made := ldl_nodes(fn, ins, by_name)) is not None:      # capture_ldl; a tuple: per element
                nodes.extend(made if isinstance(made, list) else [_function_node(fn, ins)])
                if not isinstance(made, list):
                    nodes[-1].attrs["elements"] = made
            elif linalg_nodes(fn, ins, by_name) is not None:
                nodes.extend(linalg_nodes(fn, ins, by_name))
            elif (composed := matrix_composition_nodes(fn, ins, by_name)) is not None:
                nodes.extend(composed)      # tensorinv, householder_product, ... (capture_matrix_compositions)
            elif rewrite_nodes(fn, ins, by_name) is not None:
                rewritten, taken = rewrite_nodes(fn, ins, by_name)
                nodes.extend(rewritten)
                tuple_sources.update(taken)          # masks and indices now in constants of their own
            elif (frexp := frexp_elements(fn, ins)) is not None:      # capture_float_bits: per element
                nodes.append(_function_node(fn, ins))
                nodes[-1].attrs.update(elements=frexp, why=FREXP_WHOLE_WHY)
            elif _function_node(fn, ins).op == "unsupported" and unary_table_nodes(fn, ins, by_name) is not None:
                # last: any other element-wise torch function of one value, a LUT (capture_unary_tables)
                nodes.extend(unary_table_nodes(fn, ins, by_name))
            elif (tabled := binary_table_nodes(fn, ins, by_name)) is not None:
                nodes.extend(tabled)        # igamma / zeta of two values (capture_binary_tables)
            else:
                nodes.append(_function_node(fn, ins))
                if einsum_refusal(fn):
                    nodes[-1].attrs["why"] = einsum_refusal(fn)
        else:
            raise CaptureError(f"unexpected fx node {fn.op}")
        for n in nodes[before:]:
            # (a rewrite's steps name the user's call they stand for: capture_nms)
            n.attrs.setdefault("source", fn.meta.get("ptec_source") or _source(fn, mods))
            if fn.meta.get("ptec_site") and n.written is None:
                n.written = _written(fn)
            if fn.meta.get("ptec_fp32"):
                n.attrs.setdefault("fp32", fn.meta["ptec_fp32"])    # capture_torchvision's steps
        if fn.meta.get("ptec_note") and len(nodes) > before:     # once per call (capture_torchvision's istft)
            nodes[-1].attrs["note"] = f"{nodes[-1].attrs['note']}; {fn.meta['ptec_note']}" \
                if nodes[-1].attrs.get("note") else fn.meta["ptec_note"]
        nodes[before:] = int_view_nodes(fn, nodes[before:], by_name)      # i.unsqueeze(1): still an integer
        by_name.update((n.name, n) for n in nodes[before:])
    used = {i for n in nodes for i in n.inputs} | set(outputs)
    nodes = [n for n in nodes if (n.name not in tuple_sources and n.name not in state_buffers)
             or n.name in used]
    nodes = without_unread_factors(nodes, outputs)
    mark_bit_level_readers(nodes)      # arithmetic on nextafter / frexp results in fp32 (capture_float_bits)    # an LU only lu_unpack / lu_solve read (their A is refactored)
    mark_viewed_producers(nodes)   # the float a view(dtype) reads made in fp32 (capture_dtype_view)
    for n in nodes:
        if n.op == "conv_transpose2d":
            dense_groups(n)
            fold_dilation_and_output_padding(n)
    return Graph(nodes, inputs, outputs)


def _source(fn: torch.fx.Node, mods) -> str:
    """How the user's model names fx node `fn` (ir.origin): a submodule by its
    path and class, a function or method by its traced name and callee."""
    if fn.op == "call_module":
        cls = type(mods[fn.target])
        prefix = "nn." if cls.__module__.startswith("torch.nn") else ""
        return f"{fn.target} ({prefix}{cls.__name__})"
    if fn.op == "call_method":
        return f"{fn.name} (Tensor.{fn.target})"
    if fn.op == "call_function":
        module = getattr(fn.target, "__module__", None) or ""
        name = getattr(fn.target, "__name__", str(fn.target))
        where = ("F." if module.startswith("torch.nn.functional") else
                 "torch." if module.startswith("torch") else
                 "operator." if module in ("_operator", "operator") else "")
        return f"{fn.name} ({where}{name})"
    return fn.name


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "matmul": "@", "neg": "unary -", "and_": "&", "or_": "|", "xor": "^", "invert": "~", "lt": "<",
            "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _index_text(i) -> str:
    if isinstance(i, tuple):
        return ", ".join(_index_text(k) for k in i)
    if i is Ellipsis:
        return "..."
    if isinstance(i, slice):
        return ":".join("" if v is None else str(v) for v in (i.start, i.stop, i.step)).rstrip(":") or ":"
    return str(i) if i is None or isinstance(i, (int, bool)) else "a tensor"


def _written(fn: torch.fx.Node) -> str:
    """An operator call (x[0], a * b) as the user wrote it, for refusals
    (ir.written): the indexing or the operator and the model's source line
    (fx's names getitem_1, mul_2 are none of the user's)."""
    name = getattr(fn.target, "__name__", str(fn.target))
    what = f"the indexing [{_index_text(fn.args[1])}]" if name == "getitem" and len(fn.args) == 2 else \
        f"the operator {_SYMBOLS.get(name, name)}"
    return what + fn.meta["ptec_site"]


def _is_shape_value(fn: torch.fx.Node) -> bool:
    """A node whose traced value is an int or a torch.Size (set by ShapeProp),
    or a float computed from them (`x.size(-1) ** 0.5`: capture_shape_numbers
    wrote it into its readers)."""
    return fn.op in ("call_function", "call_method") and fn.meta.get("type") in (int, float, torch.Size)


def _basic_index_nodes(name: str, fn: torch.fx.Node, src: str) -> Optional[List[Node]]:
    """x[i, a:b, ..., None]: ints, slices, one Ellipsis and None as one
    `slice` node per narrowed dim (a slice with a step k: one-wide slices
    every k joined by a cat) and, when dims go (an int) or come (None), a
    reshape to the traced shape. None for anything else (tensors as
    indices), which stays an unsupported getitem."""
    idx = fn.args[1] if isinstance(fn.args[1], tuple) else (fn.args[1],)
    shape = _meta_shape(fn.args[0]) if isinstance(fn.args[0], torch.fx.Node) else None
    out_shape = _meta_shape(fn)
    if shape is None or out_shape is None or sum(i is Ellipsis for i in idx) > 1:
        return None
    if any(not (i is None or i is Ellipsis or isinstance(i, slice)
                or (isinstance(i, int) and not isinstance(i, bool))) for i in idx):
        return None
    real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if real > len(shape):
        return None
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - real) + idx[k + 1:]
    nodes: List[Node] = []
    cur, dim, sliced = src, 0, []          # sliced: the shape after the slice nodes
    # dim 0's index as written: a selection's s[-1] is not s[count - 1] of the example's count (capture_selection_mix)
    first = next((i for i in idx if i is not None), None)
    spelled = (first.start, first.stop, first.step) if isinstance(first, slice) else first
    for i in idx:
        if i is None:
            continue
        size = shape[dim]
        if isinstance(i, slice):
            if any(v is not None and (not isinstance(v, int) or isinstance(v, bool))
                   for v in (i.start, i.stop, i.step)) or (i.step is not None and i.step < 1):
                return None
            start, end, step = i.indices(size)
            end = max(end, start)
            picks = range(start, end, step)
            if len(picks) > 1 and step > 1:
                # x[a:b:k]: one-wide slices at a, a + k, ... joined along the dim
                for j in picks:
                    nodes.append(Node(f"{name}_d{dim}_{j}", "slice", [cur], dict(dim=dim, start=j, end=j + 1)))
                nodes.append(Node(f"{name}_d{dim}", "cat", [n.name for n in nodes[-len(picks):]], dict(dim=dim)))
                if dim == 0:
                    nodes[-1].attrs["spelled"] = spelled
                cur = nodes[-1].name
                sliced.append(len(picks))
                dim += 1
                continue
            end = min(end, start + 1) if step > 1 else end
        else:
            start = i + size if i < 0 else i
            if not 0 <= start < size:
                return None
            end = start + 1
        if (start, end) != (0, size):
            nodes.append(Node(f"{name}_d{dim}", "slice", [cur], dict(dim=dim, start=start, end=end)))
            if dim == 0:
                nodes[-1].attrs["spelled"] = spelled
            cur = nodes[-1].name
        sliced.append(end - start)
        dim += 1
    sliced += shape[dim:]
    if sliced != out_shape or not nodes:
        nodes.append(Node(f"{name}_view", "reshape", [cur], dict(target_shape=out_shape)))
        if len(nodes) == 1 and spelled not in (None, (None, None, None)):      # s[:3] of an example of 3 or less
            nodes[0].attrs["spelled"] = spelled
    last = nodes[-1]
    last.name = name
    return nodes


def _narrow_node(name: str, fn: torch.fx.Node, ins: List[str]) -> Optional[Node]:
    """torch.narrow(x, dim, start, length), x.narrow(...): a slice."""
    args = list(fn.args[1:]) + [fn.kwargs[k] for k in ("dim", "start", "length") if k in fn.kwargs]
    shape = _meta_shape(fn.args[0]) if isinstance(fn.args[0], torch.fx.Node) else None
    if shape is None or len(args) != 3 or not all(isinstance(v, int) for v in args):
        return None
    dim, start, length = args
    dim %= len(shape)
    start = start + shape[dim] if start < 0 else start
    return Node(name, "slice", ins[:1], dict(dim=dim, start=start, end=start + length))


def _element_of(name: str, source: Node, index) -> Node:
    fn = source.attrs["fn"]
    return Node(name, "unsupported", list(source.inputs),
                dict(fn=lambda *xs, _fn=fn, _i=index: _element(_fn(*xs), _i),
                     what=source.attrs.get("what", "unknown"), source=source.attrs.get("source"),
                     **({"why": source.attrs["why"]} if source.attrs.get("element_why") else {})))


def _element(result, index):
    """result[0] or result.values: one output of a multi-output call."""
    return getattr(result, index) if isinstance(index, str) else result[index]


_BINARY = {operator.add: "add", torch.add: "add", "add": "add",
           operator.mul: "mul", torch.mul: "mul", "mul": "mul",
           operator.sub: "sub", torch.sub: "sub", "sub": "sub",
           operator.truediv: "div", torch.div: "div", "div": "div", torch.true_divide: "div"}


def _scalar_binary(fn: torch.fx.Node):
    """`x + c`, `c * x`: the Python number becomes a constant node."""
    try:
        op = _BINARY.get(fn.target)
    except TypeError:
        return None
    if op is None or len(fn.args) != 2 or fn.kwargs:
        return None
    a, b = fn.args
    if isinstance(a, torch.fx.Node) == isinstance(b, torch.fx.Node):
        return None
    x, c = (a, b) if isinstance(a, torch.fx.Node) else (b, a)
    if not isinstance(c, (int, float)):
        return None
    const = Node(fn.name + "_const", "constant", [], dict(value=np.array(c, np.float32)))
    # sub and div keep the operands' order (`1.0 - x`); add and mul do not care
    ins = [x.name, const.name] if isinstance(a, torch.fx.Node) else [const.name, x.name]
    return [const, Node(fn.name, op, ins)]


def implicit_softmax_dim(fn: torch.fx.Node, dim) -> int:
    """A softmax call's dim. Without one (F.softmax / log_softmax / softmin,
    nn.Softmax()) torch's legacy implicit dim is made explicit while tracing
    (capture_unbatched._implicit_dim); a call still without one is on a
    value of which the trace knew no rank: refused."""
    if dim is None:
        raise CaptureError(f"{fn.name}: a softmax without dim, on a value of unknown rank")
    return int(dim)


def _function_node(fn: torch.fx.Node, ins: List[str]) -> Node:
    t = fn.target
    name = fn.name
    tensor_args = [a for a in fn.args if isinstance(a, torch.fx.Node)]
    if t is F.interpolate:
        return _upsample_node(name, _scalar_arg(fn, 3, "mode", "nearest"), _scalar_arg(fn, 4, "align_corners"), ins,
                              _meta_shape(fn), bool(_scalar_arg(fn, 6, "antialias", False)))
    if t in _ACT_FUNCS:
        lo, hi = _ACT_FUNCS[t]
        return Node(name, "clamp", ins[:1], dict(lo=lo, hi=hi))
    if t in (F.hardtanh,):
        return Node(name, "clamp", ins[:1], dict(lo=float(_scalar_arg(fn, 1, "min_val", -1.0)),
                                                hi=float(_scalar_arg(fn, 2, "max_val", 1.0))))
    if t in (torch.clamp, "clamp") or t == "clamp":
        lo = _scalar_arg(fn, 1, "min")
        hi = _scalar_arg(fn, 2, "max")
        if not isinstance(lo, torch.fx.Node) and not isinstance(hi, torch.fx.Node):
            return Node(name, "clamp", ins[:1], dict(lo=None if lo is None else float(lo),
                                                    hi=None if hi is None else float(hi)))
    if t in ("relu",):
        return Node(name, "clamp", ins[:1], dict(lo=0.0, hi=None))
    if t in (operator.neg, torch.neg, "neg"):
        return Node(name, "neg", ins[:1])
    if t in (operator.add, torch.add, "add") and len(tensor_args) == 2 and len(fn.args) == 2:
        return Node(name, "add", ins)
    if t in (operator.mul, torch.mul, "mul") and len(tensor_args) == 2 and len(fn.args) == 2:
        return Node(name, "mul", ins)
    if t in (operator.sub, torch.sub, "sub") and len(tensor_args) == 2 and len(fn.args) == 2 \
            and not fn.kwargs:
        return Node(name, "sub", ins)
    if t in (operator.truediv, torch.div, "div") and len(tensor_args) == 2 and len(fn.args) == 2 \
            and not fn.kwargs:
        return Node(name, "div", ins)
    if t in ("permute", torch.permute):
        dims = fn.args[1:] if t == "permute" else [fn.args[1]]
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = dims[0]
        if all(isinstance(d, int) for d in dims):
            return Node(name, "permute", ins[:1], dict(dims=[int(d) for d in dims]))
    if t in ("unsqueeze", torch.unsqueeze) and isinstance(_scalar_arg(fn, 1, "dim"), int):
        return Node(name, "reshape", ins[:1], dict(unsqueeze=int(_scalar_arg(fn, 1, "dim"))))
    if t in ("squeeze", torch.squeeze) and isinstance(_scalar_arg(fn, 1, "dim"), (int, type(None))):
        return Node(name, "reshape", ins[:1], dict(squeeze=_scalar_arg(fn, 1, "dim")))
    if t in (torch.flatten, "flatten"):
        return Node(name, "reshape", ins[:1], dict(flatten=(int(_scalar_arg(fn, 1, "start_dim", 0)),
                                                            int(_scalar_arg(fn, 2, "end_dim", -1)))))
    if t in ("view", "reshape", torch.reshape):
        shape = fn.args[1:] if t != torch.reshape else fn.args[1]
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if t == "view" and any(isinstance(s, torch.dtype) for s in shape):
            # its own dtype: the value itself, a reshape to its own shape (another: capture_dtype_view and
            # capture_complex; one they left, a complex value's other views, is refused)
            src = getattr(fn.args[0].meta.get("tensor_meta"), "dtype", None)
            if src is None or shape[0] != src:
                refuse_call(fn, "a view as another dtype reinterprets the value's bytes, and ptec holds this "
                                "value as no such bytes; for a conversion of the values, write .to(dtype)")
            return Node(name, "reshape", ins[:1], dict(target_shape=_meta_shape(fn)))
        if all(isinstance(s, int) for s in shape):
            return Node(name, "reshape", ins[:1], dict(target_shape=[int(s) for s in shape]))
        if _meta_shape(fn) is not None:       # sizes spelled with x.size(0), x.shape[1], ...
            return Node(name, "reshape", ins[:1], dict(target_shape=_meta_shape(fn)))
    if t in ("squeeze", "unsqueeze", torch.squeeze, torch.unsqueeze) and _meta_shape(fn):
        return Node(name, "reshape", ins[:1], dict(target_shape=_meta_shape(fn)))
    if t in (torch.matmul, torch.bmm, torch.mm, operator.matmul, "matmul", "bmm", "mm") \
            and len(tensor_args) == 2 and len(ins) == 2:
        return Node(name, "matmul", ins)
    if t in (operator.truediv, torch.div, torch.true_divide, "div", "true_divide") \
            and len(tensor_args) == 2 and len(ins) == 2 and fn.kwargs.get("rounding_mode") is None:
        return Node(name, "div", ins)
    if t in (torch.minimum, torch.maximum, torch.min, torch.max, "minimum", "maximum", "min",
             "max") and len(tensor_args) == 2 and len(fn.args) == 2 and not fn.kwargs:
        op = "minimum" if t in (torch.minimum, torch.min, "minimum", "min") else "maximum"
        return Node(name, op, ins)
    if t in (torch.transpose, torch.swapaxes, torch.swapdims, "transpose", "swapaxes",
             "swapdims"):
        d0, d1 = _scalar_arg(fn, 1, "dim0"), _scalar_arg(fn, 2, "dim1")
        if isinstance(d0, int) and isinstance(d1, int):
            return Node(name, "permute", ins[:1], dict(transpose=(d0, d1)))
    if t in (torch.t, "t") and _meta_shape(fn) is not None:
        if len(_meta_shape(fn)) == 2:
            return Node(name, "permute", ins[:1], dict(dims=[1, 0]))
        return Node(name, "identity", ins[:1])
    if t in (F.pad,):
        pads = _scalar_arg(fn, 1, "pad")
        value = _scalar_arg(fn, 3, "value")
        if all(isinstance(p, int) for p in pads) and not isinstance(value, torch.fx.Node):
            return Node(name, "pad", ins[:1], dict(
                pad=[int(p) for p in pads], mode=str(_scalar_arg(fn, 2, "mode", "constant")),
                value=0.0 if value is None else float(value)))
    if t in (F.silu,):
        return Node(name, "silu", ins[:1])
    if t in (F.gelu,):
        return Node(name, "gelu", ins[:1], dict(approximate=str(fn.kwargs.get("approximate",
                                                                               "none"))))
    if t in (F.hardswish,):
        return Node(name, "hardswish", ins[:1])
    if t in (F.pixel_shuffle, F.pixel_unshuffle):
        return Node(name, "pixel_shuffle", ins[:1], dict(factor=int(_scalar_arg(fn, 1, "upscale_factor" if t is
                                                                               F.pixel_shuffle else "downscale_factor")),
                                                        unshuffle=t is F.pixel_unshuffle))
    if t in (F.softplus,):
        return Node(name, "softplus", ins[:1], dict(beta=float(_scalar_arg(fn, 1, "beta", 1.0)),
                                                    threshold=float(_scalar_arg(fn, 2, "threshold", 20.0))))
    if t in (F.hardsigmoid,):
        return Node(name, "hardsigmoid", ins[:1])
    if t in (F.leaky_relu,):
        return Node(name, "leaky_relu", ins[:1],
                    dict(negative_slope=float(_scalar_arg(fn, 1, "negative_slope", 0.01))))
    if t in (F.elu,):
        return Node(name, "elu", ins[:1], dict(alpha=float(_scalar_arg(fn, 1, "alpha", 1.0))))
    if t in (F.hardshrink, F.softshrink):
        return Node(name, t.__name__, ins[:1], dict(lambd=float(_scalar_arg(fn, 1, "lambd", 0.5))))
    if t in (F.softsign, F.tanhshrink, F.mish, F.selu, F.logsigmoid):
        return Node(name, "logsigmoid" if t is F.logsigmoid else t.__name__, ins[:1])
    if t in (F.celu,):
        return Node(name, "celu", ins[:1], dict(alpha=float(_scalar_arg(fn, 1, "alpha", 1.0))))
    if t in (F.adaptive_avg_pool2d,):
        return Node(name, "adaptive_avg_pool2d", ins[:1],
                    dict(output_size=_adaptive_size(_scalar_arg(fn, 1, "output_size"))))
    if t in (F.avg_pool2d,):
        k = _pair(_scalar_arg(fn, 1, "kernel_size"))
        s = _scalar_arg(fn, 2, "stride")
        return Node(name, "avg_pool2d", ins[:1], dict(
            kernel=k, stride=_pair(s) if s else k, padding=_pair(_scalar_arg(fn, 3, "padding", 0)),
            ceil_mode=bool(_scalar_arg(fn, 4, "ceil_mode", False)),
            count_include_pad=bool(_scalar_arg(fn, 5, "count_include_pad", True)),
            divisor_override=_scalar_arg(fn, 6, "divisor_override")))
    if t in (F.max_pool2d,):
        k = _pair(_scalar_arg(fn, 1, "kernel_size"))
        s = _scalar_arg(fn, 2, "stride")
        return Node(name, "max_pool2d", ins[:1], dict(
            kernel=k, stride=_pair(s) if s else k, padding=_pair(_scalar_arg(fn, 3, "padding", 0)),
            dilation=_pair(_scalar_arg(fn, 4, "dilation", 1)),
            ceil_mode=bool(_scalar_arg(fn, 5, "ceil_mode", False))))
    if t in (F.softmax, torch.softmax, "softmax", F.log_softmax, torch.log_softmax, "log_softmax"):
        kind = "softmax" if t in (F.softmax, torch.softmax, "softmax") else "log_softmax"
        return Node(name, kind, ins[:1], dict(dim=implicit_softmax_dim(fn, _scalar_arg(fn, 1, "dim"))))
    if t in (torch.sigmoid, "sigmoid"):
        return Node(name, "sigmoid", ins[:1])
    if t in (torch.tanh, "tanh"):
        return Node(name, "tanh", ins[:1])
    if t in ("mean", torch.mean) and _scalar_arg(fn, 1, "dim") is not None:
        dim = _scalar_arg(fn, 1, "dim")
        dim = [dim] if isinstance(dim, int) else list(dim)
        return Node(name, "mean", ins[:1], dict(dim=dim, keepdim=bool(
            _scalar_arg(fn, 2, "keepdim", False))))
    if t in ("contiguous",):
        return Node(name, "identity", ins[:1])
    # torch's default `training`: True for the dropouts, False for the alpha ones
    dropouts = {F.dropout: True, F.dropout2d: True, F.dropout3d: True, getattr(F, "dropout1d", F.dropout): True,
                F.alpha_dropout: False, F.feature_alpha_dropout: False}
    if callable(t) and t in dropouts and _scalar_arg(fn, 2, "training", dropouts[t]) is False:
        return Node(name, "identity", ins[:1])          # the eval form passes its input
    if callable(t) and t in dropouts and dropouts[t] and _scalar_arg(fn, 2, "training", True) is True:
        # training=True (F.dropout's default) drops at random on every call,
        # even in eval: ptec's random kernel draws on the device (random_layers)
        p = _scalar_arg(fn, 1, "p", 0.5)
        if not isinstance(p, torch.fx.Node):
            return dropout_node(name, t.__name__, ins, float(p), _meta_shape(fn.args[0]), CaptureError)
    elementwise = _elementwise_node(fn, ins)
    if elementwise is not None:
        return elementwise
    if t in (torch.cat,):
        seq = fn.args[0]
        return Node(name, "cat", [a.name for a in seq], dict(dim=int(_scalar_arg(fn, 1, "dim", 0))))

    # Anything else keeps its float semantics for calibration and is reported
    # by lowering as an operator ptec cannot run.
    arg_template = fn.args
    kwargs = dict(fn.kwargs)
    # tensors passed by keyword (x.clamp(min=y)) are inputs after the positional ones
    tensor_keys = [k for k, v in kwargs.items() if isinstance(v, torch.fx.Node)]
    ins = list(ins) + [kwargs[k].name for k in tensor_keys]

    def run(*xs, _t=t, _tmpl=arg_template, _kw=kwargs, _keys=tensor_keys, _method=(fn.op == "call_method"),
            _dtypes=traced_integer_dtypes(fn)):
        it = iter(as_traced(xs, _dtypes))      # index values in torch's dtype, not the graph's float32
        args = [next(it) if isinstance(a, torch.fx.Node) else a for a in _tmpl]
        kw = dict(_kw, **{k: next(it) for k in _keys})
        if _method:
            return getattr(args[0], _t)(*args[1:], **kw)
        return _t(*args, **kw)
    what = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    attrs = dict(fn=run, what=what)
    if _values_of(fn) is not None:
        attrs["values_of"] = _values_of(fn) + (_meta_shape(fn.args[0]),)
    if order_of(fn) is not None:
        attrs["order_of"] = order_of(fn)
        # returned or used whole (a tuple): only its elements are tensors
        attrs["why"] = "take its values ([0], .values) or indices ([1], .indices), which ptec runs"
    pieces = _pieces(fn)
    if pieces is not None:
        attrs["pieces"] = pieces
        attrs["drop_dim"] = t in ("unbind", torch.unbind)
    return Node(name, "unsupported", ins, attrs)


def _pieces(fn: torch.fx.Node):
    """(dim, [(start, end), ...]) of a chunk, split or unbind over a traced
    shape, whose elements the graph then takes as slices (unbind's without
    their dim); None otherwise."""
    t = fn.target
    if t not in ("chunk", torch.chunk, "split", torch.split, "unbind", torch.unbind, "split_with_sizes",
                 torch.split_with_sizes) or not fn.args \
            or not isinstance(fn.args[0], torch.fx.Node):
        return None
    shape = _meta_shape(fn.args[0])
    if t in ("unbind", torch.unbind):
        dim = _scalar_arg(fn, 1, "dim", 0)
        if shape is None or not isinstance(dim, int):
            return None
        dim %= len(shape)
        return dim, [(i, i + 1) for i in range(shape[dim])]
    size_arg = _scalar_arg(fn, 1, {"chunk": "chunks", torch.chunk: "chunks", "split_with_sizes": "split_sizes",
                                   torch.split_with_sizes: "split_sizes"}.get(t, "split_size_or_sections"))
    dim = _scalar_arg(fn, 2, "dim", 0)
    if shape is None or not isinstance(dim, int) or size_arg is None:
        return None
    dim %= len(shape)
    length = shape[dim]
    if t in ("chunk", torch.chunk):
        step = -(-length // int(size_arg))
        sizes = [min(step, length - s) for s in range(0, length, step)]
    elif isinstance(size_arg, int):
        sizes = [min(size_arg, length - s) for s in range(0, length, size_arg)]
    else:
        sizes = [int(s) for s in size_arg]
        if sum(sizes) != length:
            return None
    bounds, start = [], 0
    for s in sizes:
        bounds.append((start, start + s))
        start += s
    return dim, bounds


def _resolve_permutes(g: Graph) -> None:
    """transpose(d0, d1) as the full permutation `dims`, now that ranks are known."""
    from .ir import permutation
    for n in g.nodes:
        if n.op == "permute" and "transpose" in n.attrs:
            n.attrs = {"dims": permutation(n, len(g.node(n.inputs[0]).shape))}


def _propagate_shapes(gm: torch.fx.GraphModule, example_inputs) -> None:
    """Record every fx node's traced value type and tensor shape (node.meta),
    so that shapes spelled with x.size(0) or x.shape resolve to constants."""
    try:
        from .capture_shape_numbers import ShapeNumbers
        # ShapeProp prints a traceback for a failing node; capture reports it.
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            ShapeNumbers(gm).propagate(*example_inputs)
    except Exception:                   # noqa: BLE001 - shapes are then taken from int args only
        for fn in gm.graph.nodes:
            fn.meta.pop("type", None)
            fn.meta.pop("number", None)


def _propagate_kept(gm: torch.fx.GraphModule, example_inputs, initial) -> None:
    """Shapes propagated again (nodes a pass made), the buffers as they were."""
    _propagate_shapes(gm, example_inputs)
    with torch.no_grad():
        for k, v in gm.named_buffers():
            if k in initial and not torch.equal(v, initial[k]):
                v.copy_(initial[k])


def _resolve_reshapes(g: Graph) -> None:
    """Turn flatten(start, end) and view(-1 ...) into concrete target shapes."""
    for n in g.nodes:
        if n.op == "reshape":
            n.attrs = {"shape": list(n.shape),
                       **{k: n.attrs[k] for k in ("act", "source", "fp32") if k in n.attrs}}


class _UnpackingProxy(KnownValuesProxy, AugmentedProxy):
    """`v, i = torch.sort(x)` traced as two getitem nodes. torch 1.13's Proxy
    finds the UNPACK_SEQUENCE by instruction index, which Python 3.11's
    inline caches break (IndexError); the instruction's byte offset does not
    move. Other iteration and len() ask the traced values (capture_tracer)."""

    def __iter__(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self):
        # abs(x): torch 1.13's Proxy has no __abs__ (built-in abs raises)
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __setitem__(self, index, value):
        # x[idx] = v: its out-of-place value, marked as a write of x (capture_item_assignment)
        from .capture_item_assignment import record
        record(self, index, value)


def _stand_in(kind, target):
    """FUNCTIONAL_STAND_INS' entry of a call: a function's by the function, a
    Tensor method's by its name (x.index_reduce)."""
    if kind not in ("call_function", "call_method") or (kind == "call_method") != isinstance(target, str):
        return None
    try:
        return FUNCTIONAL_STAND_INS.get(target)
    except TypeError:           # an unhashable target
        return None


class _Tracer(KnownValuesTracer):
    def proxy(self, node: torch.fx.Node) -> torch.fx.Proxy:
        return _UnpackingProxy(node, self)

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        # forward(x, mask=None) given x: mask bound to None; forward(*xs) (capture_call_forms)
        made = root_arguments(self, root_fn, len(getattr(self, "_examples", ()))) \
            if is_module and concrete_args is None and getattr(self, "_examples", None) else None
        return made if made is not None else super().create_args_for_root(root_fn, is_module, concrete_args)

    def create_proxy(self, kind, target, args, kwargs, *rest, **kw):
        """F.cosine_similarity, F.pairwise_distance, F.bilinear, F.pdist: the
        stand-in's ops (capture_modules.FUNCTIONAL_STAND_INS) where their
        other arguments are numbers or constant tensors; else the call."""
        kind, target = method_call(kind, target)                 # torch.Tensor.add(x, 1.5): x.add(1.5)
        args, kwargs = positional_form(kind, target, args, kwargs)   # torch.cat(tensors=[x, y]) (capture_call_forms)
        if (spelled := respelled(kind, target, args, kwargs)) is not None:    # x.greater(y): x.gt(y) (capture_spellings)
            return spelled
        if (item := item_value(self, kind, target, args)) is not None:    # x.max().item(): the tensor (capture_item)
            return item
        if kind == "call_function" and getattr(self, "_values", None) is not None:   # [C, H, W]: capture_unbatched
            made = unbatched_function(self, target, args, kwargs, lambda a, k: self.create_proxy(kind, target, a, k))
            if made is not None:
                return made
        if (gem := gem_pool(self, kind, target, args, kwargs)) is not None:
            return gem                  # GeM: pool(x^p)^(1/p) as F.lp_pool2d, in fp32 (capture_gem_pool)
        if (rows := constant_rows_norm(self, kind, target, args, kwargs)) is not None:
            return rows                 # LN(cat([cls, x], 1)): the CLS row's norm in float (capture_constant_rows)
        if (fixed := fixed_weight_call(self, kind, target, args, kwargs)) is not None:
            args, kwargs = fixed        # WSConv's (w - w.mean()) / w.std(): a constant weight (capture_computed_weights)
        entry = _stand_in(kind, target)
        if entry is not None and not getattr(self, "_in_stand_in", False):
            names, traced, call = entry[:3]
            # a 4th item True: the leading tensors may be constants too (a loss's constant target)
            tensor = (torch.fx.Proxy, torch.Tensor) if entry[3:] == (True,) else torch.fx.Proxy
            bound = dict(zip(names, args))
            bound.update(kwargs)
            values = list(bound.items())
            if (len(args) <= len(names) and set(bound) <= set(names) and len(values) >= traced
                    and all(isinstance(v, tensor) for _, v in values[:traced])):
                # (with the 4th item: a computed tensor among the rest is passed as traced, the stand-in's to judge)
                extra = {k: v if tensor is not torch.fx.Proxy and isinstance(v, torch.fx.Proxy)
                         and v.node.op != "get_attr" else self._constant(v) for k, v in values[traced:]}
                if all(v is not None or bound[k] is None for k, v in extra.items()):
                    self._in_stand_in = True
                    try:
                        got = call(*(v for _, v in values[:traced]), **extra)
                    finally:
                        self._in_stand_in = False
                    if got is not None:
                        return got
        return super().create_proxy(kind, target, args, kwargs, *rest, **kw)

    def _constant(self, v):
        """v as a value known while tracing (a number, a tensor, a
        parameter or buffer of the root), else None."""
        if isinstance(v, torch.fx.Proxy):
            if v.node.op != "get_attr":
                return None
            val = self.root
            for part in v.node.target.split("."):
                # the module's own dicts: fx patches nn.Module.__getattr__ to give proxies while tracing
                found = [d[part] for d in (val._parameters, val._buffers, val._modules, vars(val)) if part in d]
                if not found:
                    return None
                val = found[0]
            v.node.meta["ptec_value_taken"] = True       # the stand-in holds it: dropped if unused
            return val
        return v

    def call_module(self, m, forward, args, kwargs):
        if not getattr(self, "_evaluating", False) and getattr(self, "_values", None) is not None:
            # a layer called unbatched: the batched layer on x.unsqueeze(0) (capture_unbatched)
            made = unbatched_module(self, m, args, kwargs,
                                    lambda a, k: super(_Tracer, self).call_module(m, forward, a, k))
            if made is not None:
                return made
        forward = cumulative_forward(m, forward)      # a batch norm in training, momentum=None (capture_train_norms)
        return super().call_module(m, forward, args, kwargs)

    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        # one graph node each: an LSTM layer (ptec::quantized_lstm), an SVDF (ptec::quantized_svdf)
        from .nn import SVDF
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is None:
            return False    # batch statistics in eval too: traced into F.batch_norm(x, None, None, training=True)
        if trained_norm(m):
            return False    # in training mode under an eval root: its F.batch_norm(training=True) (capture_train_norms)
        if isinstance(m, nn.MultiLabelMarginLoss):
            return False    # its forward, F.multilabel_margin_loss: capture_margin_losses' stand-in
        return isinstance(m, (LSTMLayer, SVDF)) or super().is_leaf_module(m, qualname)


def _symbolic_trace(model: nn.Module, example_inputs=(), states=None) -> torch.fx.GraphModule:
    """model traced by torch.fx, knowing the example's values (capture_tracer).
    states: {id(tensor): path} of the tensors the forward writes, read and
    written as state nodes (capture_buffer_state)."""
    leaves, searched = torchvision_leaves()      # roi_align, ... as one call each (capture_torchvision)
    made_traced: Set[int] = set()
    while True:
        tracer = (with_state_reads(_Tracer) if states else _Tracer)(
            autowrap_functions=(F.local_response_norm,) + leaves)   # one node: _lrn_nodes
        tracer._autowrap_search.extend(searched)     # spelled ops.roi_align(...)
        tracer.start(example_inputs)
        tracer.ptec_made_traced = made_traced
        unchecked: List[str] = []
        if states:
            tracer.ptec_states = states_in(model, states)   # a stand-ins' copy's tensors (capture_buffer_state)
        try:
            with trace_patches(tracer, model, bool(states), unchecked):
                graph = tracer.trace(model)
        except Exception as e:
            if not hasattr(e, "ptec_where"):
                e.ptec_where = tracer.where()
            if getattr(tracer, "ptec_item_read", None):
                e.ptec_item_read = tracer.ptec_item_read       # torch refusing it: named (capture_item)
            refusal = tracer.sequence_refusal(e)        # torch.cat(x[mask].split(2), 0): named in one line
            if refusal:
                raise TracedControlError(refusal) from e
            raise
        # torch.zeros(2, 8) in forward written by a traced value: traced again with it a node (capture_made_tensors)
        more = written_factories(graph, tracer) - made_traced
        if not more or len(made_traced) > 64:
            break
        made_traced |= more
    drop_traced_leftovers(graph)
    unmark_traced_through(graph)        # a torch.fx.wrap function's body: plain nodes (capture_wrapped)
    norm_chains_as_calls(graph)         # x.abs().pow(p).sum(d).pow(1 / p): vector_norm (capture_norm_chains)
    hand_hypots_as_calls(graph)         # sqrt(a ** 2 + b ** 2): torch.hypot (capture_hand_hypot)
    refuse_written_stats_read(graph)        # F.batch_norm(training=True) of computed stats
    if states:
        as_states(graph, tracer, CaptureError)     # the written tensors as state nodes (capture_buffer_state)
    # The nodes that only made a constant attention mask (the stand-ins took
    # its value), and attention weights no one reads: dropped, so that
    # nothing reports them.
    for fn in reversed(list(graph.nodes)):
        if (fn.meta.get("ptec_mask_only") or fn.meta.get("ptec_value_taken") or fn.meta.get("ptec_if_read")) \
                and fn.op != "placeholder" \
                and not fn.users:
            graph.erase_node(fn)
    gm = torch.fx.GraphModule(tracer.root, graph, type(model).__name__)
    gm.ptec_unchecked = unchecked
    return gm


def _unrolled(model: nn.Module, example_inputs) -> torch.fx.GraphModule:
    """model traced with its recurrent layers unrolled, its dead code dropped."""
    gm = _symbolic_trace(with_traceable_modules(model, example_inputs), example_inputs)
    without_dead_code(gm)
    return gm


def _lstm_layers_traced(model: nn.Module, example_inputs, stateful: bool = False,
                        states=None) -> Optional[torch.fx.GraphModule]:
    """The model traced with its nn.LSTM layers as LSTMLayer leaves (one
    ptec::quantized_lstm each; a final cell state c_n, which the kernel
    does not give, unrolled alone: capture_lstm_final_cell), or None when
    that does not fit (the caller unrolls the whole model instead).
    stateful: the other recurrent layers (nn.GRU) get their state nodes;
    the LSTM layers' nodes are marked stateful by the caller."""
    if not any(isinstance(m, nn.LSTM) for m in model.modules()):
        return None
    stand_in = with_traceable_modules(model, example_inputs, stateful, lstm_kernel=True)
    if not any(isinstance(m, LSTMLayer) for m in stand_in.modules()):
        return None
    gm = _symbolic_trace(stand_in, example_inputs, states)
    without_dead_code(gm)               # h_n, c_n and their pieces when unused
    mods = dict(gm.named_modules())
    if any(fn.op == "call_module" and isinstance(mods.get(fn.target), LSTMFinalCell) for fn in gm.graph.nodes):
        # c_n read: that alone unrolled, out and h_n the kernel's (capture_lstm_final_cell)
        from .capture_lstm_final_cell import unrolled_final_cells
        if stateful or states or not unrolled_final_cells(gm, example_inputs, LSTMFinalCell, _unrolled):
            return None
    gm.recompile()
    return gm


def _traced(model: nn.Module, example_inputs, stateful: bool, lstm_kernel: bool,
            states=None) -> torch.fx.GraphModule:
    """The model traced by torch.fx (its LSTM layers as kernels when
    lstm_kernel); one-line CaptureError when tracing fails."""
    try:
        gm = _lstm_layers_traced(model, example_inputs, stateful, states) if lstm_kernel else None
        if gm is None:
            stand_in = with_traceable_modules(model, example_inputs, stateful)     # a copy: its own tensors
            gm = _symbolic_trace(stand_in, example_inputs, states)
    except CaptureModuleError as e:
        raise CaptureError(str(e)) from e
    except CaptureError:
        raise
    except Exception as e:          # noqa: BLE001
        # one line naming the module (capture_tracer), or the model's own failure
        raise CaptureError(trace_refusal(e, model, example_inputs)) from e
    return gm


@with_module_forms      # TorchScript refused; hooks, pruned / normalized weights (capture_module_forms)
def capture(model: nn.Module, example_inputs: Sequence[torch.Tensor], method: str = "auto",
            name: str = "model", stateful: bool = False, lstm_kernel: bool = True,
            int8_io: bool = False) -> Graph:
    """int8_io: the program's inputs arrive as int8 (capture_sign.exact_operands).
    stateful: nn.GRU / nn.LSTM keep their hidden (and cell) state from one
    run to the next, in state nodes (torch.fx capture: the stand-ins), and
    ptec.nn.SVDF layers their activation state (attrs["stateful"]).
    lstm_kernel: nn.LSTM layers (fx capture) become one `lstm` node each
    (ptec::quantized_lstm) rather than being unrolled into per-step ops;
    with stateful such a node is marked attrs["stateful"] (the lowering
    gives the kernel state tensors for h and c). A model that uses c_n is
    unrolled, stateful or not."""
    model = evaluated(model)        # a batch norm in training mode under an eval root kept so (capture_train_norms)
    # float16 / bfloat16 examples: Half / BFloat16 inputs computed as float32, model.half()'s weights
    # as float32 (capture_input_dtypes)
    originals = list(example_inputs)
    model, weights_note = float_copy(model)
    # int64 examples are token ids (nn.Embedding), integer and bool ones keep their dtype (capture_input_dtypes)
    example_inputs = as_captured(example_inputs, CaptureError)
    example_inputs = [x.clone() for x in example_inputs]   # x.relu_() in the model: the caller's x stays
    g = None
    eager = None        # torch's outputs of the model, when the capture ran it (the export check)
    if any(x.dtype != torch.float32 for x in example_inputs) and method == "auto":
        method = "fx"       # the id inputs' embeddings are captured from fx's module calls (capture_indices)
    from .nn import SVDF
    if any(isinstance(m, SVDF) for m in model.modules()):
        if method == "export":
            raise CaptureError("ptec.nn.SVDF is captured with torch.fx only (use method 'auto' or 'fx')")
        method = "fx"       # torch.export would decompose the layer; fx keeps it as one node
    if stateful and method == "export":
        raise CaptureError("--stateful captures with torch.fx (its recurrent stand-ins); "
                           "use --capture fx or auto")
    if method in ("auto", "export") and hasattr(torch, "export") and not stateful:
        try:
            from .capture_export import capture_with_export
            g, eager = capture_with_export(model, example_inputs)
            g.source = "export"
        except Exception as e:          # noqa: BLE001 - any failure means "use fx"
            if method == "export":
                raise CaptureError(f"torch.export capture failed: {e}") from e
            g = None
    if g is None:
        before = tensors_of(model)      # a write fx runs while tracing leaves no node (capture_in_place)
        attributes = set(vars(model))
        try:
            return mark_half_inputs(_finished(_fx_graph(model, example_inputs, stateful, lstm_kernel, before,
                                                        int8_io=int8_io),
                                              example_inputs, name, model), originals, weights_note)
        except (CaptureError, UnsupportedOperator):
            # the forward writes its own tensors: they become state tensors,
            # traced on a copy of the model (capture_buffer_state)
            restore_tensors(before, model, attributes)
            written = written_tensors(model, example_inputs)
            if not written:
                raise
        twin, states = copy_with_buffers(model, written)
        g = _fx_graph(twin, example_inputs, stateful, lstm_kernel, tensors_of(twin), states, int8_io=int8_io)
    return mark_half_inputs(_finished(g, example_inputs, name, model, eager), originals, weights_note)


def _fx_graph(model: nn.Module, example_inputs, stateful: bool, lstm_kernel: bool, before,
              states=None, int8_io: bool = False) -> Graph:
    """The model captured with torch.fx (before: capture_in_place.tensors_of
    the model; states: capture_buffer_state's written tensors)."""
    gm = _traced(model, example_inputs, stateful, lstm_kernel, states)
    out_arguments_as_results(gm)    # torch.add(x, 1, out=torch.empty(...)): the result (capture_out_arguments)
    refuse_written_tensors(model, gm, before, CaptureError)
    log_of_softmax(gm)          # x.softmax(-1).log(): x.log_softmax(-1) (capture_log_softmax)
    # Shape propagation runs the module, which writes its states: the
    # initial values are the buffers' values before it.
    initial = {k: v.detach().clone() for k, v in gm.named_buffers()}
    _propagate_shapes(gm, example_inputs)
    flatten_outputs(gm, CaptureError)       # dict / nested / None outputs: a flat tuple (capture_outputs)
    with torch.no_grad():
        for k, v in gm.named_buffers():
            # only the states it wrote: a constant made in forward may be
            # an expanded view (fx keeps it as a buffer), which no copy
            # can write
            if not torch.equal(v, initial[k]):
                v.copy_(initial[k])
    bool_calls_as_tensors(gm, lambda: _propagate_kept(gm, example_inputs, initial))  # torch.equal: 0-d bool
    from .capture_shape_numbers import fold_shape_numbers
    fold_shape_numbers(gm, UnsupportedOperator)
    torchvision_calls(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # roi_align (capture_torchvision)
    cast_bools_first(gm, lambda: _propagate_kept(gm, example_inputs, initial))  # (x > 0).t().float()
    compares_after_moves(gm, lambda: _propagate_kept(gm, example_inputs, initial))  # (x > 0).t(): x.t() > 0
    moved_bools_compared(gm, lambda: _propagate_kept(gm, example_inputs, initial))  # cat([z, m]) | m2
    type_as_to(gm)              # x.type_as(i): x.to(i's dtype) (capture_int_spellings)
    tidy_plumbing(gm, CaptureError)
    dtype_forms(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # sum(dtype=), where(c, 1, 0)
    bincount_as_one_hot(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # int64 counts (capture_bincount)
    composed_calls(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # x.select_scatter, torch.gradient
    # x[mask, 1:], x[:, mask, 0]: the basic indexing, then the selection (capture_index_forms)
    mask_with_rest(gm, lambda: _propagate_kept(gm, example_inputs, initial))
    writes_through_views(gm, example_inputs)    # y.relu_(), y[0].mul_(2): out of place, written back (capture_view_writes)
    drop_markers(gm)            # y[idx] = v: its out-of-place value (capture_item_assignment)
    int_clamp_sides(gm)         # i.clamp_min(1), i.clamp_max_(3): torch.clamp (capture_int_spellings)
    flatten_index_puts(gm, lambda: _propagate_kept(gm, example_inputs, initial))  # x.index_put((i, j), v, True)
    refusal = empty_read_refusal(gm, example_inputs)     # torch.empty's undefined values read (capture_made_tensors)
    if refusal:
        raise CaptureError(refusal)
    counts_readers(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # counts * 2 (capture_counts_readers)
    without_unused_values(gm)   # unique(x, dim=d)'s slices when only its counts / inverse are read
    elements_alone(gm)          # torch.hsplit(x, 2)[0]: that piece alone (capture_view_elements)
    widen_narrow_ints(gm, lambda: _propagate_kept(gm, example_inputs, initial))   # s + 1, s int16 (capture_narrow_ints)
    promote_int_operands(gm)    # i + x, i < 2.5: the int value's float copy, as torch (capture_int_promotion)
    # s[None].sum(1), torch.sigmoid(s.unsqueeze(0)): readers of s (capture_selection_lead)
    lift_leading_ones(gm, lambda: _propagate_kept(gm, example_inputs, initial))
    literal_views(gm, UnsupportedOperator)
    try:
        g = _fx_to_graph(gm)
    except (TypeError, ValueError) as e:        # F.leaky_relu(x, x.mean().item()): one line (capture_item)
        refusal = item_lowering_refusal(e)
        if refusal:
            raise UnsupportedOperator(refusal) from e
        raise
    g.item_readers = item_readers(gm)       # named if one then fails (capture_own_failure)
    note_dropped_outputs(g, gm)
    note_skipped_checks(g, getattr(gm, "ptec_unchecked", ()))  # torch.distributions' checks (capture_distributions)
    kept_states(g)              # a written buffer's state: its note, or dropped when never read
    fp32_state_loops(g)         # a state computed from itself: fp32, no rounding carried (capture_state_precision)
    pool_peaks_in_fp32(g, int8_io)  # max_pool2d(h, 3, 1, 1) == h: in fp32 (capture_pool_peaks)
    exact_operands(g, int8_io)  # a sign's compared operands from the float inputs in fp32 (capture_sign)
    float_rows_for_nms(g)       # nms(boxes[idx], scores[idx], t): the float rows picked (capture_nms_rows)
    if stateful:
        # An SVDF keeps its activation state in the kernel's own tensor,
        # an LSTM layer its h and c in the kernel's in/out state tensors:
        # made states (planned, with an initial value) by the lowering.
        for n in g.nodes:
            if n.op in ("svdf", "lstm"):
                n.attrs["stateful"] = True
        if not any(n.op in ("state", "svdf", "lstm") for n in g.nodes):
            raise CaptureError("--stateful: the model has no nn.GRU, nn.LSTM or ptec.nn.SVDF layer to keep "
                               "a state for")
    return g


def _finished(g: Graph, example_inputs, name: str, model: Optional[nn.Module] = None, eager=None) -> Graph:
    """The captured graph with its shapes, selections and reshapes resolved
    (eager: torch's outputs of the model on the example inputs, when the
    capture ran it already)."""
    g.name = name
    try:
        infer_shapes(g, example_inputs)
    except UnsupportedOperator:
        raise
    except Exception as e:              # noqa: BLE001 - the model's own error, or ptec's (capture_own_failure)
        from .capture_own_failure import own_failure
        ours = own_failure(g, example_inputs, model, e)
        if ours:
            raise CaptureError(ours) from e
        shapes = ", ".join("x".join(map(str, x.shape)) for x in example_inputs)
        first = (str(e).strip().splitlines() or [""])[0]       # torch's argument errors: one line each overload
        raise CaptureError(f"the model fails on its example inputs ({shapes}): "
                           f"{type(e).__name__}: {first} (check input_shape / example_inputs)") from e
    from .capture_empty import undefined_never_read, without_zero_size_layers
    without_zero_size_layers(g, CaptureError)     # nn.Linear(8, 0) -> nn.Linear(0, 10): bias rows
    undefined_never_read(g, example_inputs)       # x.new_empty(n, c) filled whole (AdaptiveLogSoftmaxWithLoss)
    from .capture_own_failure import wrong_shape
    wrong = wrong_shape(g, example_inputs, model, eager)      # an output shape torch does not give: refused
    if wrong:
        raise CaptureError(wrong)
    if through_selections(g, UnsupportedOperator):
        infer_shapes(g, example_inputs)     # the nodes it moved or made
    refuse_consumers(g, UnsupportedOperator)
    if expand_adaptive_avg_pools(g):
        infer_shapes(g, example_inputs)     # the nodes it made
    _resolve_reshapes(g)
    _resolve_permutes(g)
    indices_of_logits(g)        # softmax(x, d).argmax(d): the logits' positions (capture_order_keeping)
    return g
