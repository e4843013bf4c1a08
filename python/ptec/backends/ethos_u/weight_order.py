"""The order in which the NPU's weight decoder hands weights to the MAC array
("brick order", spec ethos-u-npu.md §4.4), for the depth-first weight order
ptec always writes (KERNEL_STRIDE[2] = 0).

From outer to inner: OFM block (the op's OFM_BLK_DEPTH) -> IFM block (32
channels for an 8-bit IFM; one for depthwise) -> 8x8 sub-kernel (8/dilation
on each axis) -> OFM micro-block -> kernel element (row-major in the
sub-kernel; padded to a multiple of 4 for depthwise) -> IFM micro-block (8)
-> channel in the OFM micro-block -> channel in the IFM micro-block (one for
depthwise). Positions outside the kernel or the channel ranges are padding:
the hardware never multiplies them with an input, and ptec writes 0 there,
which costs least in the compressed stream.

`brick_order` returns, for each position of the stream, the index into the
dense weights [OFM][KH][KW][IFM] (IFM = 1 for depthwise), or -1 for padding.
It is written from the spec, not from the NPU model's decoder, so the tests
that decode our streams with the model check one against the other.
"""
from __future__ import annotations

import numpy as np

SUB_KERNEL = 8
IFM_UBLOCK = 8
IFM_BLOCK_8BIT = 32


def _round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


def brick_order(ofm_depth: int, kernel_h: int, kernel_w: int, ifm_depth: int, *,
                depthwise: bool, block_depth: int, ofm_ublock: int,
                dilation=(1, 1)) -> np.ndarray:
    if depthwise:
        ifm_depth = 1
    if block_depth % ofm_ublock and block_depth < ofm_depth:
        raise ValueError(f"OFM block depth {block_depth} is not a multiple of the "
                         f"micro-block {ofm_ublock}")
    sub_h = SUB_KERNEL // dilation[0]
    sub_w = SUB_KERNEL // dilation[1]
    ifm_block = 1 if depthwise else IFM_BLOCK_8BIT
    ifm_inner = 1 if depthwise else IFM_UBLOCK            # channels per IFM micro-block
    ifm_ublocks = 1 if depthwise else IFM_BLOCK_8BIT // IFM_UBLOCK
    pieces = []
    for ob in range(0, ofm_depth, block_depth):
        obd = min(block_depth, ofm_depth - ob)
        for ib in range(0, ifm_depth, ifm_block):
            for sy in range(0, kernel_h, sub_h):
                sh = min(kernel_h - sy, sub_h)
                for sx in range(0, kernel_w, sub_w):
                    sw = min(kernel_w - sx, sub_w)
                    elements = _round_up(sh * sw, 4) if depthwise else sh * sw
                    # axes: OFM micro-block, element, IFM micro-block, OFM in ublock, IFM in ublock
                    ou = np.arange(0, obd, ofm_ublock).reshape(-1, 1, 1, 1, 1)
                    el = np.arange(elements).reshape(1, -1, 1, 1, 1)
                    iu = np.arange(ifm_ublocks).reshape(1, 1, -1, 1, 1) * IFM_UBLOCK
                    oc = np.arange(ofm_ublock).reshape(1, 1, 1, -1, 1)
                    ic = np.arange(ifm_inner).reshape(1, 1, 1, 1, -1)
                    ofm = ob + ou + oc
                    ifm = ib + iu + ic
                    ky = el // sw
                    kx = el % sw
                    valid = (ofm < ofm_depth) & (ifm < ifm_depth) & (ky < sh)
                    dense = ((ofm * kernel_h + sy + ky) * kernel_w + sx + kx) * ifm_depth + ifm
                    pieces.append(np.where(valid, dense, -1).ravel())
    return np.concatenate(pieces).astype(np.int64)


def ordered_weights(dense_ohwi: np.ndarray, *, depthwise: bool, block_depth: int,
                    ofm_ublock: int, dilation=(1, 1)) -> np.ndarray:
    """The stream's values: the dense weights [OFM][KH][KW][IFM] (IFM = 1 for
    depthwise) in brick order, 0 at padding positions."""
    o, kh, kw, i = dense_ohwi.shape
    order = brick_order(o, kh, kw, i, depthwise=depthwise, block_depth=block_depth,
                        ofm_ublock=ofm_ublock, dilation=dilation)
    flat = np.asarray(dense_ohwi, np.int64).ravel()
    return np.where(order >= 0, flat[np.maximum(order, 0)], 0)
