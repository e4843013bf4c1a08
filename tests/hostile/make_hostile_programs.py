#!/usr/bin/env python3
"""Write one hand-made hostile program per attack class, and the manifest
that says how the runtime must refuse each.

    make_hostile_programs.py OUT_DIR

Each case starts from the same small, valid program built with ptec's own
builder (z = x + c, x and z planned, c a constant) and breaks one thing the
format lets a file say. The manifest (OUT_DIR/cases.txt) has one line per
case and word size:

    <file> <bits> <step> <status> <words of the error detail>

<bits> is 32, 64 or any (the size_t the expectation is for); <step> is the
API call that must fail (init, requirements, load, execute) or `fits` for a
file that is valid on that word size but asks for more than the test gives;
<status> is upstream's status name. The words must appear in the detail, so
a case passes only when it is refused for its own reason.
"""
import copy
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import numpy as np  # noqa: E402

from ptec.pte import writer  # noqa: E402
from ptec.pte.program_builder import ProgramBuilder  # noqa: E402
from ptec.pte.schema import (AllocationDetails, BackendDelegate,  # noqa: E402
                             BackendDelegateDataReference, BackendDelegateInlineData,
                             DataLocation, DelegateCall, ExtraTensorInfo, Instruction, IntList, JumpFalseCall,
                             MoveCall, ScalarType, TensorList)

GIB = 1 << 30


def base():
    """z = x + c with x, z planned (arena 1) and c in the constant segment.
    Returns the builder's Program and the value indices."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [4])
    c = b.constant(np.arange(4, dtype=np.float32))
    z = b.tensor(ScalarType.FLOAT, [4])
    b.call("aten::add.out", self=x, other=c, alpha=1, out=z)
    b.set_io([x], [z])
    cond = b.bool(False)
    other = b.bool(False)
    program = b.build()
    return program, {"x": x, "c": c, "z": z, "cond": cond, "false": other}


def base_state():
    """z = x + s, then s = z: s a planned state tensor whose initial value
    [0, 1, 2, 3] is in mutable_data_segments[0] (the last segment). Each run
    adds x to the state; a reset puts [0, 1, 2, 3] back."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [4])
    s = b.state(ScalarType.FLOAT, [4], np.arange(4, dtype=np.float32).tobytes())
    z = b.tensor(ScalarType.FLOAT, [4])
    b.call("aten::add.out", self=x, other=s, alpha=1, out=z)
    b.call("aten::view_copy.out", self=z, size=[4], out=s)
    b.set_io([x], [z])
    program = b.build()
    return program, {"x": x, "s": s, "z": z}


def base_conv():
    """A depthwise 3x3, stride 1, padding 1, from a planned int8 [1,4,3,3]
    input x to z, called by its ptec:: name (--ptec-runtime-only): a layer
    that may run in place, planned here with x and z apart."""
    from ptec.backends.cortex_m.kernels import I8, conv2d
    from ptec.backends.cortex_m.scratch import plan_for_ptec_runtime_only
    from ptec.lowered import new_act
    b = ProgramBuilder()
    plan_for_ptec_runtime_only(b)
    b.in_place = False          # x is the method's input: the planner would not alias it anyway
    x = new_act(b, I8, [1, 4, 3, 3], 0.1, 0)
    z = conv2d(b, x, np.ones((4, 1, 3, 3), np.int8), np.zeros(4, np.int32), [0.01] * 4, 0.1, 0,
               padding=(1, 1), groups=4)
    b.set_io([x.value], [z.value])
    return b.build(), {"x": x.value, "z": z.value}


def base_index():
    """Rows of a [6, 2] int8 table at x[i, j] of a [2, 3] block, i and j
    int64 inputs (ptec::flat_index.out, then aten::embedding.out), and the
    bags of 4 ids' rows by offsets, an int64 input (ptec::bag_positions.out).
    The test's inputs are 0x3F bytes: int64 values far outside any dim."""
    i64 = ScalarType.LONG
    b = ProgramBuilder()
    i, j, offsets = b.tensor(i64, [2]), b.tensor(i64, [2]), b.tensor(i64, [2])
    at = b.tensor(i64, [2])
    b.call("ptec::flat_index.out", indices=[i, j], sizes=[2, 3], out=at)
    rows = b.tensor(ScalarType.CHAR, [2, 2])
    b.call("aten::embedding.out", weight=b.constant(np.arange(12, dtype=np.int8).reshape(6, 2)), indices=at,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=rows)
    bags = b.tensor(i64, [2, 4])
    b.call("ptec::bag_positions.out", offsets=offsets, length=4, include_last_offset=False, out=bags)
    b.set_io([i, j, offsets], [rows, bags])
    return b.build(), {"i": i, "j": j, "offsets": offsets}


def base_svd():
    """The singular values of x [2, 5, 4] (ptec::linalg_svdvals.out) into
    z [2, 4], both planned: the sizes its prepare checks before it asks for
    m * n floats of scratch; x's full U into u [2, 5, 5]
    (ptec::linalg_svd.out); its complete Q into q, its LU's P into lp [2, 5, 5] and pivots into lv [2, 4]
    (int32; ptec::linalg_lu.out), its geqrf a into ga [2, 5, 4] and tau into gt [2, 4] (ptec::linalg_qr.out
    which 2, 3). (base_eig: the same for ptec::linalg_eigvalsh.out.)"""
    b = ProgramBuilder()
    x, z = b.tensor(ScalarType.FLOAT, [2, 5, 4]), b.tensor(ScalarType.FLOAT, [2, 4])
    u, q = b.tensor(ScalarType.FLOAT, [2, 5, 5]), b.tensor(ScalarType.FLOAT, [2, 5, 5])
    lp, lv = b.tensor(ScalarType.FLOAT, [2, 5, 5]), b.tensor(ScalarType.INT, [2, 4])
    b.call("ptec::linalg_svdvals.out", self=x, out=z)
    b.call("ptec::linalg_svd.out", self=x, which=0, full_matrices=True, rtol=0.0, out=u)
    b.call("ptec::linalg_qr.out", self=x, which=0, complete=True, out=q)
    b.call("ptec::linalg_lu.out", self=x, which=2, out=lp)
    b.call("ptec::linalg_lu.out", self=x, which=1, out=lv)
    ga, gt = b.tensor(ScalarType.FLOAT, [2, 5, 4]), b.tensor(ScalarType.FLOAT, [2, 4])
    b.call("ptec::linalg_qr.out", self=x, which=2, complete=False, out=ga)
    b.call("ptec::linalg_qr.out", self=x, which=3, complete=False, out=gt)
    b.set_io([x], [z, u, q, lp, lv, ga, gt])
    return b.build(), {"x": x, "z": z, "u": u, "q": q, "lp": lp, "lv": lv, "ga": ga, "gt": gt}


def base_eig():
    """The eigenvalues of x [3, 6, 6]'s upper triangles (ptec::linalg_eigvalsh.out) into z [3, 6],
    their eigenvectors (ptec::linalg_eigh_vectors.out) into e [3, 6, 6], x's general eigenvalues
    (ptec::linalg_eigvals.out) into g [3, 6, 2] and their eigenvectors (ptec::linalg_eig_vectors.out,
    last: the others' faults come first) into gv [3, 6, 6, 2]."""
    b = ProgramBuilder()
    x, z = b.tensor(ScalarType.FLOAT, [3, 6, 6]), b.tensor(ScalarType.FLOAT, [3, 6])
    e, g = b.tensor(ScalarType.FLOAT, [3, 6, 6]), b.tensor(ScalarType.FLOAT, [3, 6, 2])
    gv = b.tensor(ScalarType.FLOAT, [3, 6, 6, 2])
    b.call("ptec::linalg_eigvalsh.out", self=x, upper=True, out=z)
    b.call("ptec::linalg_eigh_vectors.out", self=x, upper=True, out=e)
    b.call("ptec::linalg_eigvals.out", self=x, out=g)
    b.call("ptec::linalg_eig_vectors.out", self=x, out=gv)
    b.set_io([x], [z, e, g, gv])
    return b.build(), {"x": x, "z": z, "e": e, "g": g, "gv": gv}


def base_lu():
    """A^-1 B of x [2, 5, 5] and b [2, 5, 3] (ptec::linalg_solve.out) into
    z [2, 5, 3], the determinants of x into d [2] (ptec::linalg_det.out):
    the sizes their prepares check before each asks for n * n floats of
    scratch; x's Cholesky factors into c [2, 5, 5]
    (ptec::linalg_cholesky.out), their info into ci [2] (int32,
    ptec::linalg_cholesky_info.out) and T^-1 B of x's upper triangles into
    w [2, 5, 3] (ptec::linalg_triangular_solve.out)."""
    b = ProgramBuilder()
    x, r = b.tensor(ScalarType.FLOAT, [2, 5, 5]), b.tensor(ScalarType.FLOAT, [2, 5, 3])
    z, d = b.tensor(ScalarType.FLOAT, [2, 5, 3]), b.tensor(ScalarType.FLOAT, [2])
    c, w = b.tensor(ScalarType.FLOAT, [2, 5, 5]), b.tensor(ScalarType.FLOAT, [2, 5, 3])
    b.call("ptec::linalg_solve.out", self=x, rhs=r, out=z)
    b.call("ptec::linalg_det.out", self=x, mode=2, out=d)
    b.call("ptec::linalg_cholesky.out", self=x, upper=False, out=c)
    ci = b.tensor(ScalarType.INT, [2])
    b.call("ptec::linalg_cholesky_info.out", self=x, upper=False, out=ci)
    b.call("ptec::linalg_triangular_solve.out", self=x, rhs=r, upper=True, transpose=False, unitriangular=False,
           out=w)
    b.set_io([x, r], [z, d, c, ci, w])
    return b.build(), {"x": x, "r": r, "z": z, "d": d, "c": c, "ci": ci, "w": w}


def base_ldl():
    """The LDL^T factors of x [3, 6, 6]'s lower triangles (ptec::linalg_ldl_factor.out) into ld [3, 6, 6], their
    pivots into lp [3, 6] and info into li [3] (int32): the sizes its prepare checks before it asks for n * n
    floats of scratch and run writes each matrix's n * n, n or 1 results."""
    b = ProgramBuilder()
    x, ld = b.tensor(ScalarType.FLOAT, [3, 6, 6]), b.tensor(ScalarType.FLOAT, [3, 6, 6])
    lp, li = b.tensor(ScalarType.INT, [3, 6]), b.tensor(ScalarType.INT, [3])
    b.call("ptec::linalg_ldl_factor.out", self=x, which=0, out=ld)
    b.call("ptec::linalg_ldl_factor.out", self=x, which=1, out=lp)
    b.call("ptec::linalg_ldl_factor.out", self=x, which=2, out=li)
    b.set_io([x], [ld, lp, li])
    return b.build(), {"x": x, "ld": ld, "lp": lp, "li": li}


def base_bmm():
    """x [2, 4, 3] times y [2, 3, 5] into z [2, 4, 5] (aten::bmm.out), all
    planned: the sizes its prepare checks before run indexes them."""
    b = ProgramBuilder()
    x, y = b.tensor(ScalarType.FLOAT, [2, 4, 3]), b.tensor(ScalarType.FLOAT, [2, 3, 5])
    z = b.tensor(ScalarType.FLOAT, [2, 4, 5])
    b.call("aten::bmm.out", self=x, mat2=y, out=z)
    b.set_io([x, y], [z])
    return b.build(), {"x": x, "y": y, "z": z}


def base_special():
    """g = igamma(x, y), c = igammac(x, g), z = special_zeta(c, y) of float
    inputs x [2, 3] and y [3], broadcast (op_special_gamma.c): the shapes
    their prepares check before run walks them. The test's 0x3F bytes
    (0.75) are valid inputs (zeta of s < 1: NaN)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, y = b.tensor(f32, [2, 3]), b.tensor(f32, [3])
    g, c, z = b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3])
    b.call("aten::igamma.out", self=x, other=y, out=g)
    b.call("aten::igammac.out", self=x, other=g, out=c)
    b.call("aten::special_zeta.out", self=c, other=y, out=z)
    b.set_io([x, y], [z])
    return b.build(), {"x": x, "y": y, "g": g, "c": c, "z": z}


def base_bits():
    """n = nextafter(x, y) of float inputs x [2, 3] and y [3], broadcast, then
    (m, e) = frexp(n), m float32 and e int32 [2, 3] (op_float_bits.c): the
    shapes and dtypes their prepares check before run walks them. The
    test's 0x3F bytes (0.75) are valid inputs."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, y, n = b.tensor(f32, [2, 3]), b.tensor(f32, [3]), b.tensor(f32, [2, 3])
    m, e = b.tensor(f32, [2, 3]), b.tensor(ScalarType.INT, [2, 3])
    b.call("aten::nextafter.out", self=x, other=y, out=n)
    b.call("aten::frexp.Tensor_out", self=n, mantissa=m, exponent=e)
    b.set_io([x, y], [m, e])
    return b.build(), {"x": x, "y": y, "n": n, "m": m, "e": e}


def base_minmax():
    """a = minimum(x, y) of float inputs x [2, 3] and y [3], broadcast, then
    b = fmax(a, x) and c = maximum(b, y) (op_minimum_maximum.c), and int64
    inputs i [2, 3], j [3] into fmin k [2, 3]: the shapes and dtypes its
    prepare checks before run walks them. The test's 0x3F bytes are valid
    inputs."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x, y = b.tensor(f32, [2, 3]), b.tensor(f32, [3])
    a, m, c = b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3])
    i, j, k = b.tensor(i64, [2, 3]), b.tensor(i64, [3]), b.tensor(i64, [2, 3])
    b.call("aten::minimum.out", self=x, other=y, out=a)
    b.call("aten::fmax.out", self=a, other=x, out=m)
    b.call("aten::maximum.out", self=m, other=y, out=c)
    b.call("aten::fmin.out", self=i, other=j, out=k)
    b.set_io([x, y, i, j], [c, k])
    return b.build(), {"x": x, "y": y, "a": a, "m": m, "c": c, "i": i, "j": j, "k": k}



def base_viewdt():
    """x.view(dtype) (ptec::view_dtype.out) of a float input x [2, 6]: as
    int32 i [2, 6], uint8 u [2, 24], int64 l [2, 3], and i back as float32
    f [2, 6]: the sizes and dtypes its prepare checks before run copies
    x's 48 bytes."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 6])
    i, u = b.tensor(ScalarType.INT, [2, 6]), b.tensor(ScalarType.BYTE, [2, 24])
    lo, f = b.tensor(ScalarType.LONG, [2, 3]), b.tensor(ScalarType.FLOAT, [2, 6])
    b.call("ptec::view_dtype.out", self=x, out=i)
    b.call("ptec::view_dtype.out", self=x, out=u)
    b.call("ptec::view_dtype.out", self=x, out=lo)
    b.call("ptec::view_dtype.out", self=i, out=f)
    b.set_io([x], [u, lo, f])
    return b.build(), {"x": x, "i": i, "u": u, "l": lo, "f": f}


def base_histc():
    """torch.histc of a float input x [3, 4] over its own range in 16 bins
    into h [16] and over [-1, 1] in 8 bins into g [8] (aten::histc.out):
    the sizes its prepare checks before run writes bins counts."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [3, 4])
    h, g = b.tensor(ScalarType.FLOAT, [16]), b.tensor(ScalarType.FLOAT, [8])
    b.call("aten::histc.out", self=x, bins=16, min=0.0, max=0.0, out=h)
    b.call("aten::histc.out", self=x, bins=8, min=-1.0, max=1.0, out=g)
    b.set_io([x], [h, g])
    return b.build(), {"x": x, "h": h, "g": g}

def base_nms():
    """o = the descending sort's indices of scores s [4], k = ptec::nms.out of
    boxes x [4, 4] walked in that order (op_nms.c): the sizes and dtypes its
    prepare checks before run indexes boxes by order. The test's 0x3F bytes
    are valid inputs (equal scores, four equal boxes: the first kept)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, sc = b.tensor(f32, [4, 4]), b.tensor(f32, [4])
    sv, o, k = b.tensor(f32, [4]), b.tensor(ScalarType.LONG, [4]), b.tensor(f32, [4])
    b.call("aten::sort.values", self=sc, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::nms.out", boxes=x, order=o, iou_threshold=0.5, out=k)
    b.set_io([x, sc], [k])
    return b.build(), {"x": x, "s": sc, "o": o, "k": k}


def base_roi():
    """z = ptec::roi_align.out(x [2, 3, 4, 5], rois [3, 5]) into [3, 3, 2, 2],
    adaptive, aligned (op_roi_align.c): the sizes its prepare checks before
    run walks the boxes. The test's 0x3F bytes (0.75) are a valid batch
    index (it truncates to 0) and empty boxes (0 everywhere)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, rois, z = b.tensor(f32, [2, 3, 4, 5]), b.tensor(f32, [3, 5]), b.tensor(f32, [3, 3, 2, 2])
    b.call("ptec::roi_align.out", input=x, rois=rois, spatial_scale=0.5, pooled_height=2, pooled_width=2,
           sampling_ratio=-1, aligned=True, position_sensitive=False, out=z)
    b.set_io([x, rois], [z])
    return b.build(), {"x": x, "rois": rois, "z": z}


def base_unarymath():
    """e = exp(x), l = log1p(e), g = sign(l) of a float input x [2, 3]
    (op_float_unary_math.c): the sizes and dtypes their prepares check
    before run walks them (out has self's sizes and dtype)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, e, l, g = b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3])
    b.call("aten::exp.out", self=x, out=e)
    b.call("aten::log1p.out", self=e, out=l)
    b.call("aten::sign.out", self=l, out=g)
    b.set_io([x], [g])
    return b.build(), {"x": x, "e": e, "l": l, "g": g}


def base_bnms():
    """o = the descending sort's indices of scores s [4], k = ptec::batched_nms.out
    of boxes x [4, 4], s, o and int64 classes c [4] (op_batched_nms.c): the
    sizes and dtypes its prepare checks before run indexes boxes, scores and
    classes by order and writes K int64 indices. The test's 0x3F bytes are
    valid inputs (equal scores, boxes and classes: the first box kept)."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x, sc, c = b.tensor(f32, [4, 4]), b.tensor(f32, [4]), b.tensor(i64, [4])
    sv, o, k = b.tensor(f32, [4]), b.tensor(i64, [4]), b.tensor(i64, [4])
    b.call("aten::sort.values", self=sc, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::batched_nms.out", boxes=x, scores=sc, order=o, idxs=c, iou_threshold=0.5, out=k)
    b.set_io([x, sc, c], [k])
    return b.build(), {"x": x, "s": sc, "c": c, "o": o, "k": k}


def base_nmst():
    """o = the descending sort's indices of scores s [4]; k = ptec::nms.Tensor_out
    of boxes x [4, 4], o and a float32 threshold input t [] (op_nms.c), then
    j = ptec::batched_nms.Tensor_out of x, s, o, int64 classes c [4] and its
    own threshold input u [] (op_batched_nms.c): the threshold's dtype and
    element count their prepares check before run reads its one float. The
    test's 0x3F bytes are valid (a threshold of 0.747)."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x, sc, c, t, u = b.tensor(f32, [4, 4]), b.tensor(f32, [4]), b.tensor(i64, [4]), b.tensor(f32, []), b.tensor(f32, [])
    sv, o, k, j = b.tensor(f32, [4]), b.tensor(i64, [4]), b.tensor(f32, [4]), b.tensor(i64, [4])
    b.call("aten::sort.values", self=sc, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::nms.Tensor_out", boxes=x, order=o, iou_threshold=t, out=k)
    b.call("ptec::batched_nms.Tensor_out", boxes=x, scores=sc, order=o, idxs=c, iou_threshold=u, out=j)
    b.set_io([x, sc, c, t, u], [k, j])
    return b.build(), {"x": x, "s": sc, "c": c, "t": t, "u": u, "o": o, "k": k, "j": j}


def base_overlap():
    """x[i, j] of a [1, 3] block: i the argmax of a float input x [2, 3]
    (0 for the test's even 0x3F inputs), j the constant [2, 2], as one
    position (ptec::flat_index.out) whose rows of a [3, 2] table are
    looked up. Every planned tensor placed by hand in a 128-byte arena."""
    i64 = ScalarType.LONG
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 3])
    i = b.tensor(i64, [2])
    b.call("aten::argmax.out", self=x, dim=1, keepdim=False, out=i)
    at = b.tensor(i64, [2])
    b.call("ptec::flat_index.out", indices=[i, b.constant(np.array([2, 2], np.int64))], sizes=[1, 3], out=at)
    rows = b.tensor(ScalarType.CHAR, [2, 2])
    b.call("aten::embedding.out", weight=b.constant(np.arange(6, dtype=np.int8).reshape(3, 2)), indices=at,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=rows)
    b.set_io([x], [rows])
    program = b.build()
    plan(program).non_const_buffer_sizes = [0, 128]
    for value, offset in ((x, 0), (i, 32), (at, 48), (rows, 96)):
        plan(program).values[value].val.allocation_info = AllocationDetails(1, offset, 0)
    return program, {"i": i, "at": at}


def base_intdiv():
    """q = x // d and r = q % d of int64 inputs x, d [2] (aten::floor_divide.out,
    aten::remainder.Tensor_out on integers). The test's inputs are 0x3F bytes:
    a divisor that is not zero."""
    i64 = ScalarType.LONG
    b = ProgramBuilder()
    x, d = b.tensor(i64, [2]), b.tensor(i64, [2])
    q, r = b.tensor(i64, [2]), b.tensor(i64, [2])
    b.call("aten::floor_divide.out", self=x, other=d, out=q)
    b.call("aten::remainder.Tensor_out", self=q, other=d, out=r)
    b.set_io([x, d], [r])
    return b.build(), {"x": x, "d": d, "q": q, "r": r}


def base_intreduce():
    """g = gcd(x, d), l = lcm(g, d), s = l.sum(1), m = x.amax(0), c = cumsum(s, 0)
    of int64 inputs x, d [2, 3] (aten::gcd.out / lcm.out, sum.IntList_out,
    amax.out, cumsum.out on integers). The test's 0x3F bytes are valid inputs."""
    i64 = ScalarType.LONG
    b = ProgramBuilder()
    x, d = b.tensor(i64, [2, 3]), b.tensor(i64, [2, 3])
    g, l = b.tensor(i64, [2, 3]), b.tensor(i64, [2, 3])
    s, m, c = b.tensor(i64, [2]), b.tensor(i64, [3]), b.tensor(i64, [2])
    b.call("aten::gcd.out", self=x, other=d, out=g)
    b.call("aten::lcm.out", self=g, other=d, out=l)
    b.call("aten::sum.IntList_out", self=l, dim=[1], keepdim=False, dtype=None, out=s)
    b.call("aten::amax.out", self=x, dim=[0], keepdim=False, out=m)
    b.call("aten::cumsum.out", self=s, dim=0, dtype=None, out=c)
    b.set_io([x, d], [c, m])
    return b.build(), {"x": x, "d": d, "g": g, "l": l, "s": s, "m": m, "c": c}


def base_intsort():
    """v, i = sort(x, 1) of an int64 input x [2, 3] (aten::sort.values on
    integers), h = v as int16 and f = i as float64 (_to_dim_order_copy
    between integer types and into float64). The test's 0x3F bytes are
    valid inputs."""
    i64 = ScalarType.LONG
    b = ProgramBuilder()
    x, v, i = b.tensor(i64, [2, 3]), b.tensor(i64, [2, 3]), b.tensor(i64, [2, 3])
    h, f = b.tensor(ScalarType.SHORT, [2, 3]), b.tensor(ScalarType.DOUBLE, [2, 3])
    b.call("aten::sort.values", self=x, dim=1, descending=False, values=v, indices=i)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=v, non_blocking=False, dim_order=None, out=h)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=i, non_blocking=False, dim_order=None, out=f)
    b.set_io([x], [h, f])
    return b.build(), {"x": x, "v": v, "i": i, "h": h, "f": f}


def base_mode():
    """v, i = mode(x, 1) of x [3, 40] (aten::mode.values: its prepare asks
    4 bytes of scratch per element of a row)."""
    b = ProgramBuilder()
    x, v, i = b.tensor(ScalarType.FLOAT, [3, 40]), b.tensor(ScalarType.FLOAT, [3]), b.tensor(ScalarType.LONG, [3])
    b.call("aten::mode.values", self=x, dim=1, keepdim=False, values=v, indices=i)
    b.set_io([x], [v, i])
    return b.build(), {"x": x, "v": v, "i": i}


def base_halfin():
    """f = h as float32 of a Half input h [2, 3], e = g as float32 of a
    BFloat16 input g [3] (_to_dim_order_copy from 16-bit floats: a float16 /
    bfloat16 model input's first op). The test's 0x3F bytes are valid
    inputs (0x3F3F: 1.81 as half, 0.75 as bfloat16)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    h, g = b.tensor(ScalarType.HALF, [2, 3]), b.tensor(ScalarType.BFLOAT16, [3])
    f, e = b.tensor(f32, [2, 3]), b.tensor(f32, [3])
    b.call("dim_order_ops::_to_dim_order_copy.out", self=h, non_blocking=False, dim_order=None, out=f)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=g, non_blocking=False, dim_order=None, out=e)
    b.set_io([h, g], [f, e])
    return b.build(), {"h": h, "g": g, "f": f, "e": e}


def base_fused():
    """ptec::quantized_expand_depthwise (--fuse-expansion): a planned int8
    [1,4,5,5] x expanded to 8 channels, then a 3x3 depthwise, stride 2,
    padding 1, into z [1,8,3,3]. Returns the Program and the call's
    argument value indices by name (with x and z)."""
    from ptec.backends.cortex_m.kernels import I8
    from ptec.backends.cortex_m.scratch import plan_for_ptec_runtime_only
    from ptec.lowered import new_act
    from ptec.ops import signature
    b = ProgramBuilder()
    plan_for_ptec_runtime_only(b)
    x = new_act(b, I8, [1, 4, 5, 5], 0.1, 0)
    z = new_act(b, I8, [1, 8, 3, 3], 0.1, 0)
    mult = b.constant(np.full(8, 1 << 30, np.int32))
    shift = b.constant(np.full(8, -3, np.int32))
    b.call("ptec::quantized_expand_depthwise.out", input=x.value,
           weight=b.constant(np.ones((1, 3, 3, 8), np.int8)), bias=b.constant(np.zeros(8, np.int32)),
           stride=[2, 2], padding=[1, 1], dilation=[1, 1], input_offset=3, output_offset=0,
           requantize_multipliers=mult, requantize_shifts=shift, activation_min=-128, activation_max=127,
           expand_weight=b.constant(np.full((8, 1, 1, 4), 2, np.int8)), expand_bias=None,
           expand_input_offset=0, expand_output_offset=-3, expand_multipliers=mult, expand_shifts=shift,
           expand_min=-3, expand_max=100, out=z.value)
    b.set_io([x.value], [z.value])
    program = b.build()
    key = "ptec::quantized_expand_depthwise.out"
    named = dict(zip([n for n, _ in signature(key)], program.execution_plan[0].chains[0].instructions[0]
                     .instr_args.args))
    named.update(x=x.value, z=z.value)
    return program, named


def _set_ints(p, v, name, values):
    val = plan(p).values[v[name]].val
    items = getattr(val, "items", None)
    for i, x in zip(items if items is not None else [v[name]], values):
        plan(p).values[i].val.int_val = x


def case_fused_offsets_disagree(p, v):
    # The depthwise's input offset is not the expansion's negated zero point.
    _set_ints(p, v, "input_offset", [4])
    return [("any", "requirements", "InvalidArgument", "input_offset must be -expand_output_offset")]


def case_fused_expand_weight_shape(p, v):
    # The expansion weight names the depthwise's [1,3,3,8] weight.
    kernel_args(p)[12] = v["weight"]
    return [("any", "requirements", "InvalidArgument", "expand_weight must be [Cout, 1, 1, Cin]")]


def case_fused_depthwise_weight_shape(p, v):
    # The depthwise weight names the expansion's [8,1,1,4] weight.
    kernel_args(p)[1] = v["expand_weight"]
    return [("any", "requirements", "InvalidArgument", "weight must be [1, KH, KW, Cout]")]


def case_fused_padding_only_row(p, v):
    # padding.h 3 with a 3-tall kernel: out rows 0 and 4 read only padding
    # (out [1,8,5,3] is that geometry's), a window of no expanded rows.
    _set_ints(p, v, "padding", [3, 1])
    plan(p).values[v["z"]].val.sizes = [1, 8, 5, 3]
    plan(p).non_const_buffer_sizes = [0, 512]
    plan(p).values[v["z"]].val.allocation_info = AllocationDetails(1, 256, 0)
    return [("any", "requirements", "InvalidArgument", "an out row reads only padding")]


def case_fused_out_geometry(p, v):
    # A stride of 1 with out [1,8,3,3]: the depthwise makes 5x5.
    _set_ints(p, v, "stride", [1, 1])
    return [("any", "requirements", "InvalidArgument", "out height/width do not match")]


def case_fused_expand_clamp(p, v):
    # The expansion's clamp inverted (min above max).
    _set_ints(p, v, "expand_min", [101])
    return [("any", "requirements", "InvalidArgument", "activation range must satisfy")]


def case_fused_in_place(p, v):
    # Input and out planned over the same bytes: the fused kernel reads
    # input rows after writing out rows, so it never runs in place.
    plan(p).values[v["z"]].val.allocation_info = plan(p).values[v["x"]].val.allocation_info
    return [("any", "execute", "InvalidArgument", "input and out partly overlap")]


def plan(program):
    return program.execution_plan[0]


def instructions(program):
    return plan(program).chains[0].instructions


def kernel_args(program):
    return instructions(program)[0].instr_args.args


def with_lying_segments(mutate_segments):
    """Serialises with the flatbuffer's segment table changed, while the bytes
    are laid out (and the header written) as the true table says: what a
    lying writer would produce."""
    real = writer.encode

    def lying(program, identifier, prefix):
        program = copy.deepcopy(program)
        mutate_segments(program.segments)
        return real(program, identifier, prefix)

    def serialise(program):
        writer.encode = lying
        try:
            return writer.serialize_program(program)
        finally:
            writer.encode = real
    return serialise


def case_planned_sum_overflow_64(p, v):
    # Two planned buffers of almost 2^63 bytes: each passed the old per-size
    # cap (SIZE_MAX / 2), their aligned sum wraps a 64-bit size_t. z lives in
    # the second, so a wrapped total would place it outside the caller's buffer.
    huge = (1 << 63) - 256
    plan(p).non_const_buffer_sizes = [0, huge, huge]
    p.execution_plan[0].values[v["z"]].val.allocation_info = AllocationDetails(2, 0, 0)
    return [("any", "requirements", "InvalidProgram", "address space")]


def case_planned_sum_overflow_32(p, v):
    # Two buffers of 2 GiB - 8 bytes: aligned, they add up to exactly 2^32,
    # which a 32-bit size_t wraps to 0. On 64-bit the file is valid and asks
    # for 4 GiB.
    size = 2 * GIB - 8
    plan(p).non_const_buffer_sizes = [0, size, size]
    p.execution_plan[0].values[v["z"]].val.allocation_info = AllocationDetails(2, 0, 0)
    return [("32", "requirements", "InvalidProgram", "address space"),
            ("64", "fits", "Ok", "")]


def case_dims_product_overflow(p, v):
    # numel 65536 * 65536 * 2 does not fit the runtime's 32-bit numel.
    plan(p).values[v["z"]].val.sizes = [65536, 65536, 2]
    plan(p).values[v["z"]].val.dim_order = bytes([0, 1, 2])
    return [("any", "requirements", "InvalidProgram", "2^31 elements")]


def case_int8_2_31_elements(p, v):
    # 2^31 int8 elements: 2 GiB fits the 32-bit nbytes, but the kernels'
    # int32 element strides do not reach the last one.
    z = plan(p).values[v["z"]].val
    z.scalar_type = ScalarType.CHAR
    z.sizes = [32768, 65536]
    z.dim_order = bytes([0, 1])
    return [("any", "requirements", "InvalidProgram", "2^31 elements")]


def case_empty_tensor_of_huge_extents(p, v):
    # No element (a 0 extent), but the other extents multiply to 2^32: the
    # strides a kernel computes from them would not fit int32.
    z = plan(p).values[v["z"]].val
    z.sizes = [0, 65536, 65536]
    z.dim_order = bytes([0, 1, 2])
    return [("any", "requirements", "InvalidProgram", "2^31 elements")]


def _dynamic(p, v, sizes, dynamism=1):
    z = plan(p).values[v["z"]].val
    z.sizes = sizes
    z.dim_order = bytes(range(len(sizes)))
    z.shape_dynamism = dynamism
    return z


def case_dynamic_bound_loads(p, v):
    # A bound-dynamic out (upstream writes them): loads and runs, its sizes
    # kept in a writable copy of the method's own.
    _dynamic(p, v, [4])
    return [("any", "none", "Ok", "")]


def case_dynamic_dims_product_overflow(p, v):
    # The writable copy is taken before the shape is checked; the check
    # still refuses the file.
    _dynamic(p, v, [65536, 65536, 2])
    return [("any", "requirements", "InvalidProgram", "2^31 elements")]


def case_dynamic_negative_size(p, v):
    _dynamic(p, v, [-4])
    return [("any", "requirements", "InvalidProgram", "negative")]


def case_dynamic_rank_17(p, v):
    # 17 sizes: no copy is taken (it would pass PTEC_MAX_RANK), and the file is refused.
    _dynamic(p, v, [1] * 16 + [4])
    return [("any", "requirements", "NotSupported", "rank above 16")]


def case_dynamic_sizes_misaligned(p, v):
    # sizes without dim_order: refused before any copy is made
    z = _dynamic(p, v, [4])
    z.dim_order = b""
    return [("any", "requirements", "InvalidProgram", "dim_order")]


def case_dynamic_unbound(p, v):
    _dynamic(p, v, [4], dynamism=2)
    return [("any", "requirements", "NotSupported", "unbound")]


def case_back_edge_no_writer(p, v):
    # jump_false on a constant False back to instruction 0: an endless loop
    # that nothing inside it can end.
    instructions(p).append(Instruction(JumpFalseCall(v["cond"], 0)))
    return [("any", "requirements", "InvalidProgram", "backward jump")]


def case_back_edge_self(p, v):
    instructions(p).append(Instruction(JumpFalseCall(v["cond"], 1)))
    return [("any", "requirements", "InvalidProgram", "backward jump")]


def case_loop_budget(p, v):
    # A loop that passes the load check (its condition is written just before
    # the jump, as in upstream's torch.map loop) but never ends: the execution
    # budget stops it at the jump. One pass costs 67: the add is
    # 1 + 4 tensor arguments of 16 bytes (x, c, out, return slot), the move
    # and the jump 1 each; the default budget is 4 passes, 268.
    instructions(p).append(Instruction(MoveCall(v["false"], v["cond"])))
    instructions(p).append(Instruction(JumpFalseCall(v["cond"], 0)))
    return [("any", "execute", "OutOfResources", "execution budget spent (268; one pass costs 67), last jumped back at instruction 2")]


def case_move_into_constant(p, v):
    # Moving the constant c into z makes the add write its result into the
    # program's constant bytes.
    instructions(p).insert(0, Instruction(MoveCall(v["c"], v["z"])))
    return [("any", "requirements", "InvalidProgram", "constant tensor into a writable value")]


def case_kernel_out_constant(p, v):
    # The add's out and return slot name the constant.
    args = kernel_args(p)
    args[-1] = args[-2] = v["c"]
    return [("any", "requirements", "InvalidProgram", "out is a constant tensor")]


def case_input_constant(p, v):
    # The constant c as the method's input: a bound input would replace the
    # bytes the kernels checked at prepare (found by the fuzzer).
    plan(p).inputs = [v["c"]]
    return [("any", "requirements", "InvalidProgram", "input cannot be a constant")]


def case_value_index(p, v):
    kernel_args(p)[0] = len(plan(p).values) + 5
    return [("any", "requirements", "InvalidProgram", "names no value")]


def case_io_index(p, v):
    plan(p).inputs = [len(plan(p).values)]
    return [("any", "requirements", "InvalidProgram", "names no value")]


def case_list_item_index(p, v):
    plan(p).values[v["false"]].val = TensorList([v["x"], 1 << 20])
    return [("any", "requirements", "InvalidProgram", "list item names no value")]


# --- Hand-patched EValues: each breaks one check of value_member, payload_at
# (value_parse.c) or index_vector (method_load.c) in the serialised bytes,
# where the builder cannot go. Offsets below are flatbuffer positions (the
# program region starts at byte 0; fb size = the header's program_size).

def _u16(d, at):
    return struct.unpack_from("<H", d, at)[0]


def _u32(d, at):
    return struct.unpack_from("<I", d, at)[0]


def _field(d, table, fid):
    """Position of field `fid` of the table at `table` (None: absent)."""
    vt = table - struct.unpack_from("<i", d, table)[0]
    slot = 4 + 2 * fid
    off = _u16(d, vt + slot) if slot + 2 <= _u16(d, vt) else 0
    return table + off if off else None


def _deref(d, at):
    return at + _u32(d, at)


def _evalue(d, index):
    """The EValue table of plan 0's value `index`."""
    plans = _deref(d, _field(d, _u32(d, 0), 1))
    values = _deref(d, _field(d, _deref(d, plans + 4), 2))
    return _deref(d, values + 4 + 4 * index)


def _program_size(d):
    return struct.unpack_from("<Q", d, 16)[0]


def _with_tail(d, tail):
    """The file with `tail` appended to its flatbuffer region (program_size and
    segment_base_offset moved on; no offset inside the flatbuffer changes):
    returns the new bytes and where the tail starts."""
    assert bytes(d[8:12]) == b"eh00" and len(tail) % 16 == 0
    size, seg_base = struct.unpack_from("<QQ", d, 16)
    out = bytearray(d[:size]) + tail + bytearray(d[size:])
    struct.pack_into("<QQ", out, 16, size + len(tail), seg_base + len(tail))
    return out, size


def _point_member(d, index, target):
    """Value `index`'s EValue member uoffset set to reach `target` (mod 2^32)."""
    slot = _field(d, _evalue(d, index), 1)
    struct.pack_into("<I", d, slot, (target - slot) & 0xFFFFFFFF)


def _member_at_end(d, index, vt_len, field_off, room, tag=None):
    """Appends a member table for value `index` that ends the flatbuffer
    `room` bytes after its start: its vtable [vt_len, 4, field_off] just
    before it, the table's soffset, zeros. `tag`: a kind to give the EValue.
    Returns the new bytes."""
    assert room >= 4
    pad = (-(8 + room)) % 16
    tail = bytearray(pad) + struct.pack("<HHH", vt_len, 4, field_off) + bytearray(2)
    tail += struct.pack("<i", 8) + bytearray(room - 4)
    out, start = _with_tail(bytearray(d), tail)
    at = start + pad + 8
    if tag is not None:
        out[_field(out, _evalue(out, index), 0)] = tag
    _point_member(out, index, at)
    assert at + room == _program_size(out)
    return out


def _alpha(p):
    """Value index of the add's alpha (an Int)."""
    return kernel_args(p)[2]


def _patched(p, fn):
    def serialise(program):
        return bytes(fn(bytearray(writer.serialize_program(program))))
    return serialise


def case_evalue_tail_valid(p, v):
    # the control: alpha's member moved to a well-formed table ending the file (Int 1 at offset 4, 8 bytes
    # left) loads and runs, so each case below is refused for its own broken check, not for the move
    def fn(d):
        d = _member_at_end(d, _alpha(p), 6, 4, 12)
        struct.pack_into("<q", d, _program_size(d) - 8, 1)
        return d
    return [("any", "none", "Ok", "")], _patched(p, fn)


def case_evalue_member_outside(p, v):
    # alpha's member uoffset reaches 2^32 + 8: past the file (and in range if truncated to 32 bits)
    def fn(d):
        _point_member(d, _alpha(p), 1 << 32 | 8)
        return d
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_member_at_end(p, v):
    # alpha's member table starts 2 bytes before the end: no room for its soffset
    def fn(d):
        _point_member(d, _alpha(p), _program_size(d) - 2)
        return d
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_member_vtable_before(p, v):
    # the member's soffset puts its vtable 64 bytes before the file
    def fn(d):
        d = bytearray(_member_at_end(d, _alpha(p), 6, 4, 12))
        at = _program_size(d) - 12
        struct.pack_into("<i", d, at, at + 64)
        return d
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_member_vtable_beyond(p, v):
    # the member's soffset puts its vtable 256 MiB past the file
    def fn(d):
        d = bytearray(_member_at_end(d, _alpha(p), 6, 4, 12))
        struct.pack_into("<i", d, _program_size(d) - 12, -(1 << 28))
        return d
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_member_vtable_past_end(p, v):
    # the member's vtable is the file's last 4 bytes but says it is 8 long
    def fn(d):
        d = bytearray(_member_at_end(d, _alpha(p), 6, 4, 12))
        size = _program_size(d)
        at = size - 12
        struct.pack_into("<i", d, at, at - (size - 4))
        struct.pack_into("<HH", d, size - 4, 8, 4)
        return d
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_member_vtable_short(p, v):
    # the member's vtable says it is 2 bytes long (not even its own header)
    def fn(d):
        return _member_at_end(d, _alpha(p), 2, 4, 12)
    return [("any", "requirements", "InvalidProgram", "malformed EValue")], _patched(p, fn)


def case_evalue_int_payload_past_end(p, v):
    # alpha's 8-byte Int at the table's offset 4 with 4 bytes left in the file
    def fn(d):
        return _member_at_end(d, _alpha(p), 6, 4, 8)
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_double_payload_past_end(p, v):
    # the same bytes as a Double (kind 4): 8 bytes read, 4 left
    def fn(d):
        return _member_at_end(d, _alpha(p), 6, 4, 8, tag=4)
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_bool_payload_past_end(p, v):
    # cond's Bool at the table's offset 4, which is the file's end
    def fn(d):
        return _member_at_end(d, v["cond"], 6, 4, 4)
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_payload_offset_far(p, v):
    # alpha's Int at offset 0xFFF8 of a table 12 bytes from the end
    def fn(d):
        return _member_at_end(d, _alpha(p), 6, 0xFFF8, 12)
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_int_list_vector_past_end(p, v):
    # an IntList whose vector uoffset (field 0) has 2 of its 4 bytes in the file
    def fn(d):
        return _member_at_end(d, v["false"], 6, 4, 6, tag=7)
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_int_list_items_past_end(p, v):
    # an IntList of 4 items whose vector ends the file after 2
    def fn(d):
        d = bytearray(_member_at_end(d, v["false"], 6, 4, 24, tag=7))
        size = _program_size(d)
        at = size - 24
        struct.pack_into("<II", d, at + 4, 4, 4)   # uoffset to a count of 4 at size - 16, 12 bytes after it
        return d
    return [("any", "requirements", "InvalidProgram", "malformed or missing EValue payload")], _patched(p, fn)


def case_evalue_int_list_item_index(p, v):
    # an IntList whose second item names no value
    plan(p).values[v["false"]].val = IntList([v["x"], len(plan(p).values)])
    return [("any", "requirements", "InvalidProgram", "list item names no value")]


def case_evalue_output_second_index(p, v):
    # the outputs' second entry names no value (index_vector checks past the first)
    plan(p).outputs = [v["z"], len(plan(p).values)]
    return [("any", "requirements", "InvalidProgram", "names no value")]


def case_operator_index(p, v):
    instructions(p)[0].instr_args.op_index = 7
    return [("any", "requirements", "InvalidProgram", "names no valid operator")]


def case_jump_destination(p, v):
    instructions(p).append(Instruction(JumpFalseCall(v["cond"], 1000)))
    return [("any", "requirements", "InvalidProgram", "malformed instruction")]


def case_delegate_index(p, v):
    instructions(p).append(Instruction(DelegateCall(3, [v["x"], v["z"]])))
    return [("any", "requirements", "InvalidProgram", "malformed instruction")]


def case_constant_index(p, v):
    plan(p).values[v["c"]].val.data_buffer_idx = 9
    return [("any", "requirements", "InvalidProgram", "constant index out of range")]


def case_constant_offset(p, v):
    p.constant_segment.offsets[1] = (1 << 64) - 8
    return [("any", "requirements", "InvalidProgram", "outside the constant segment")]


def case_segment_index(p, v):
    p.constant_segment.segment_index = 5
    return [("any", "init", "InvalidProgram", "segment 5 does not exist")]


def case_argument_without_memory(p, v):
    """A call's argument that could never get memory. The requirements pass
    checks call arguments with their call (it decodes them there anyway),
    the load up front; the detail is the same, without instruction context."""
    plan(p).values[v["x"]].val.allocation_info = None
    plan(p).inputs = []
    return [("any", "requirements", "InvalidProgram", f"value {v['x']}: tensor has no memory")]


def case_argument_value_before_call(p, v):
    """A defect in a call's argument is reported as the value's, before the
    kernel ever prepares (the out tensor here would also fail prepare)."""
    plan(p).values[v["z"]].val.allocation_info = AllocationDetails(1, 0xFFFFFFF0, 0xFFFFFFFF)
    plan(p).values[v["z"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "InvalidProgram", f"value {v['z']}: tensor lies outside its planned buffer")]


def case_memory_id(p, v):
    plan(p).values[v["z"]].val.allocation_info = AllocationDetails(3, 0, 0)
    return [("any", "requirements", "InvalidProgram", "memory_id names no planned buffer")]


def case_planned_offset(p, v):
    plan(p).values[v["z"]].val.allocation_info = AllocationDetails(1, 0xFFFFFFF0, 0xFFFFFFFF)
    return [("any", "requirements", "InvalidProgram", "outside its planned buffer")]


def _delegate(p, v, location, index):
    plan(p).delegates = [BackendDelegate(id="EthosUBackend",
                                         processed=BackendDelegateDataReference(location, index))]
    instructions(p).append(Instruction(DelegateCall(0, [v["x"], v["z"]])))


def _delegate_in_segment_0(p, v):
    """A 64-byte blob in segment 0, the constants moved to segment 1."""
    p.segment_data.insert(0, bytes(range(64)))
    p.segments = None  # the writer lays the segments out again
    p.constant_segment.segment_index = 1
    _delegate(p, v, DataLocation.SEGMENT, 0)


def case_delegate_segment_size(p, v):
    # The blob's segment entry claims 1 GiB; the file holds 64 bytes of it.
    _delegate_in_segment_0(p, v)

    def lie(segments):
        segments[0].size = GIB
    return [("any", "requirements", "InvalidProgram", "segment 0 lies outside the file")], with_lying_segments(lie)


def case_delegate_segment_offset(p, v):
    # The blob's segment starts 32 bytes before 2^64: past any file.
    _delegate_in_segment_0(p, v)

    def lie(segments):
        segments[0].offset = (1 << 64) - 32
    return [("any", "requirements", "InvalidProgram", "segment 0 lies outside the file")], with_lying_segments(lie)


def case_delegate_inline_index(p, v):
    p.backend_delegate_data = [BackendDelegateInlineData(bytes(16))]
    _delegate(p, v, DataLocation.INLINE, 4)
    return [("any", "requirements", "InvalidProgram", "inline delegate data missing")]


# Initial values of state tensors (mutable_data_segments[0]): each case
# starts from base_state(). The segment holds 16 bytes: the one state.
def case_state_index(p, v):
    plan(p).values[v["s"]].val.data_buffer_idx = 2
    return [("any", "requirements", "InvalidProgram", f"value {v['s']}: initial value index out of range")]


def case_state_index_wrap(p, v):
    plan(p).values[v["s"]].val.data_buffer_idx = 0xFFFFFFFF
    return [("any", "requirements", "InvalidProgram", "initial value index out of range")]


def case_state_without_segments(p, v):
    p.mutable_data_segments = None
    return [("any", "requirements", "InvalidProgram", "initial value index out of range")]


def case_state_offset_wrap(p, v):
    p.mutable_data_segments[0].offsets[1] = (1 << 64) - 8
    return [("any", "requirements", "InvalidProgram", "initial value lies outside the mutable data segment")]


def case_state_offset_by_one(p, v):
    # 16 bytes from offset 1 end one byte past the 16-byte segment.
    p.mutable_data_segments[0].offsets[1] = 1
    return [("any", "requirements", "InvalidProgram", "initial value lies outside the mutable data segment")]


def case_state_offset_past_end(p, v):
    p.mutable_data_segments[0].offsets[1] = 17
    return [("any", "requirements", "InvalidProgram", "initial value lies outside the mutable data segment")]


def case_state_nbytes_beyond(p, v):
    # The state grows to 8 floats (32 bytes) over the 16-byte initial value;
    # the view and add are the plan's (the arena has room), not the segment's.
    t = plan(p).values[v["s"]].val
    t.sizes = [8]
    plan(p).non_const_buffer_sizes = [0, 256]
    t.allocation_info = AllocationDetails(1, 128, 0)
    return [("any", "requirements", "InvalidProgram", "initial value lies outside the mutable data segment")]


def case_state_segment_index(p, v):
    p.mutable_data_segments[0].segment_index = 7
    return [("any", "init", "InvalidProgram", "segment 7 does not exist")]


def case_state_segment_size(p, v):
    def lie(segments):
        segments[-1].size = GIB
    return [("any", "init", "InvalidProgram", "lies outside the file")], with_lying_segments(lie)


def case_state_other_entry(p, v):
    plan(p).values[v["s"]].val.extra_tensor_info = ExtraTensorInfo(mutable_data_segments_idx=1)
    return [("any", "requirements", "NotSupported", "mutable_data_segments entry other than 0")]


def _conv_out_at(p, v, offset):
    """z placed `offset` bytes after x, in an arena with room for both."""
    x = plan(p).values[v["x"]].val
    z = plan(p).values[v["z"]].val
    plan(p).non_const_buffer_sizes = [0, 256]
    x.allocation_info = AllocationDetails(1, 64, 0)
    z.allocation_info = AllocationDetails(1, 64 + offset, 0)


def case_conv_partial_overlap(p, v):
    # The depthwise's out starts 16 bytes into its 36-byte input: the math
    # would read input pixels it has already overwritten.
    _conv_out_at(p, v, 16)
    return [("any", "execute", "InvalidArgument", "input and out partly overlap")]


def case_conv_partial_overlap_before(p, v):
    _conv_out_at(p, v, -8)
    return [("any", "execute", "InvalidArgument", "input and out partly overlap")]


def case_conv_same_bytes_upstream(p, v):
    # The same bytes, but under upstream's name, whose kernel never runs in place.
    for op in plan(p).operators:
        if op.name == "ptec::quantized_depthwise_conv2d":
            op.name = "cortex_m::quantized_depthwise_conv2d"
    _conv_out_at(p, v, 0)
    return [("any", "execute", "InvalidArgument", "same bytes: this convolution cannot run in place")]


def case_conv_same_bytes_strided(p, v):
    # ptec's kernel, the same bytes, but a 2x2 stride (out [1,4,2,2], 16 of
    # the input's 36 bytes): not a layer that can run in place.
    values = plan(p).values
    z = values[v["z"]].val
    z.sizes = [1, 4, 2, 2]
    call = instructions(p)[0].instr_args
    stride = values[call.args[3]].val
    for i in stride.items:
        values[i].val.int_val = 2
    _conv_out_at(p, v, 0)
    return [("any", "execute", "InvalidArgument", "input and out partly overlap")]


def case_intdiv_divisor_float(p, v):
    # the divisor's dtype changed to float32: no promotion in the integer kernel
    plan(p).values[v["d"]].val.scalar_type = ScalarType.FLOAT
    return [("any", "requirements", "NotSupported", "share one dtype")]


def case_intdiv_out_int32(p, v):
    # q as int32 (its bytes still fit): the integer kernels take one dtype for all three
    plan(p).values[v["q"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "NotSupported", "share one dtype")]


def case_intdiv_self_int8(p, v):
    # int8 operands: floor_divide takes int32 and int64 only
    for name in ("x", "d", "q"):
        plan(p).values[v[name]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "int32 or int64")]


def case_intdiv_out_shape(p, v):
    # q of 1 element (inside its planned bytes): x and d [2] do not broadcast to it
    plan(p).values[v["q"]].val.sizes = [1]
    return [("any", "requirements", "InvalidArgument", "does not broadcast")]


def case_intreduce_gcd_self_float(p, v):
    # x as float32: gcd and amax take int32 / int64 only, and no promotion
    plan(p).values[v["x"]].val.scalar_type = ScalarType.FLOAT
    return [("any", "requirements", "NotSupported", "int32 or int64")]


def case_intreduce_sum_out_int32(p, v):
    # the sum's out as int32 with no dtype asked: PyTorch's integer sum is int64
    plan(p).values[v["s"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "InvalidArgument", "out must be int64")]


def case_intreduce_amax_out_int32(p, v):
    # amax keeps self's dtype
    plan(p).values[v["m"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "InvalidArgument", "out must have self's dtype")]


def case_intreduce_cumsum_out_shape(p, v):
    # cumsum's out of 1 element (inside its planned bytes): not self's sizes
    plan(p).values[v["c"]].val.sizes = [1]
    return [("any", "requirements", "InvalidArgument", "out must have self's sizes")]


def case_intreduce_sum_out_shape(p, v):
    # the sum's out [1] where dim [1] of [2, 3] leaves [2]
    plan(p).values[v["s"]].val.sizes = [1]
    return [("any", "requirements", "InvalidArgument", "out's sizes do not match")]


def case_intsort_values_int32(p, v):
    # the sort's values as int32 of an int64 self: one dtype for both
    plan(p).values[v["v"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "NotSupported", "both be float32, int8, int64 or int32")]


def case_intsort_self_int16(p, v):
    # int16 self and values: no sort of int16 (ptec computes integers in int64 / int32)
    plan(p).values[v["x"]].val.scalar_type = ScalarType.SHORT
    plan(p).values[v["v"]].val.scalar_type = ScalarType.SHORT
    return [("any", "requirements", "NotSupported", "both be float32, int8, int64 or int32")]


def case_intsort_cast_into_half(p, v):
    # an integer into float16: no such conversion (only float32 into half)
    plan(p).values[v["h"]].val.scalar_type = ScalarType.HALF
    return [("any", "requirements", "NotSupported", "converts integers")]


def case_intsort_cast_out_shape(p, v):
    # the float64 out [2, 1] (inside its planned bytes): not self's sizes
    plan(p).values[v["f"]].val.sizes = [2, 1]
    return [("any", "requirements", "InvalidArgument", "self's sizes")]


def case_halfin_out_shape_lies(p, v):
    # f [3, 2] (its own 24 bytes): not h's sizes, run would walk h by f's
    _resize(p, v, "f", [3, 2])
    return [("any", "requirements", "InvalidArgument", "self's sizes")]


def case_halfin_self_rank_lies(p, v):
    # g [1, 3] (its own 6 bytes) into e [3]: another rank
    _resize(p, v, "g", [1, 3])
    return [("any", "requirements", "InvalidArgument", "self's sizes")]


def case_halfin_out_int32(p, v):
    # f's bytes as int32: a half into an integer has no conversion
    plan(p).values[v["f"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "NotSupported", "converts integers")]


def case_halfin_self_uint16(p, v):
    # g's bytes as uint16: no bfloat16, no conversion of it
    plan(p).values[v["g"]].val.scalar_type = ScalarType.UINT16
    return [("any", "requirements", "NotSupported", "converts integers")]


def case_index_outside_its_dim(p, v):
    # i and j read at run time: 0x3F3F... is outside [-2, 2); the kernel
    # fails before anything is written, and never hands the lookup a row
    return [("any", "execute", "InvalidArgument", "an index is outside its dim")]


def case_index_bag_offsets(p, v):
    # offsets read at run time: a first offset that is not 0 (torch's rule)
    # fails the run before a position is written; the bags' call moved
    # first, so it runs before the flat_index would fail
    chain = instructions(p)
    chain.insert(0, chain.pop())
    return [("any", "execute", "InvalidArgument", "offsets must start at 0")]


def case_nms_boxes_rank_lies(p, v):
    # boxes [16] (its own 64 bytes): no [K, 4] rows for order to index
    _resize(p, v, "x", [16])
    return [("any", "requirements", "NotSupported", "boxes must be float32 [K, 4]")]


def case_nms_boxes_fewer_rows(p, v):
    # boxes [3, 4] (inside its bytes) while order holds 4 indices: order's 3 would read past the rows
    _resize(p, v, "x", [3, 4])
    return [("any", "requirements", "InvalidArgument", "order must be int64 [K]")]


def case_nms_out_shape_lies(p, v):
    # out [2] (inside its bytes): run writes one flag per box
    _resize(p, v, "k", [2])
    return [("any", "requirements", "InvalidArgument", "out must be float32 [K]")]


def case_nms_out_int8(p, v):
    # out's bytes as int8 flags: run writes float32 ones
    plan(p).values[v["k"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "InvalidArgument", "out must be float32 [K]")]


def case_bnms_idxs_fewer(p, v):
    # classes [3] (inside their bytes) while order indexes 4 boxes: class 3 would be read past them
    _resize(p, v, "c", [3])
    return [("any", "requirements", "InvalidArgument", "idxs must be int64, int32 or float32 [K]")]


def case_bnms_idxs_int8(p, v):
    # the classes' bytes as int8: run reads them as their own dtype only when it is one of three
    plan(p).values[v["c"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "InvalidArgument", "idxs must be int64, int32 or float32 [K]")]


def case_bnms_idxs_rank_lies(p, v):
    # classes [2, 2] (their own 32 bytes): run reads one class per box by index
    _resize(p, v, "c", [2, 2])
    return [("any", "requirements", "InvalidArgument", "idxs must be int64, int32 or float32 [K]")]


def case_bnms_out_shape_lies(p, v):
    # out [2] (inside its bytes): run writes K int64 indices
    _resize(p, v, "k", [2])
    return [("any", "requirements", "InvalidArgument", "out must be int64 [K]")]


def case_bnms_out_float(p, v):
    # out's 32 bytes as float32 [4] (16): run writes int64 ones
    plan(p).values[v["k"]].val.scalar_type = ScalarType.FLOAT
    return [("any", "requirements", "InvalidArgument", "out must be int64 [K]")]


def case_nmst_threshold_empty(p, v):
    # nms's threshold [0] (inside its 4 bytes): no element for run to read
    _resize(p, v, "t", [0])
    return [("any", "requirements", "InvalidArgument", "iou_threshold must be float32 of one element")]


def case_nmst_threshold_int32(p, v):
    # nms's threshold bytes as int32: run reads a float32
    plan(p).values[v["t"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "InvalidArgument", "iou_threshold must be float32 of one element")]


def case_nmst_bnms_threshold_empty(p, v):
    # batched_nms's threshold [0, 1] (inside its bytes): no element for run to read
    _resize(p, v, "u", [0, 1])
    return [("any", "requirements", "InvalidArgument", "iou_threshold must be float32 of one element")]


def case_nmst_bnms_threshold_int8(p, v):
    # batched_nms's threshold bytes as int8: run reads a float32
    plan(p).values[v["u"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "InvalidArgument", "iou_threshold must be float32 of one element")]


def _resize(p, v, name, sizes):
    t = plan(p).values[v[name]].val
    t.sizes = sizes
    t.dim_order = bytes(range(len(sizes)))


def case_svd_scratch_overflow(p, v):
    # No matrix (a 0 batch), so no byte of x, but each would be 32768 x 32768:
    # m * n * 4 bytes of scratch is 2^32, past the kernel's 32-bit scratch size
    _resize(p, v, "x", [0, 32768, 32768])
    _resize(p, v, "z", [0, 32768])
    return [("any", "requirements", "NotSupported", "too large for the scratch")]


def case_mode_scratch_overflow(p, v):
    # No row (a 0 batch), but each 2^30 elements: 4 bytes of scratch per
    # element is 2^32, past the kernel's 32-bit scratch size
    _resize(p, v, "x", [0, 1 << 30])
    _resize(p, v, "v", [0])
    _resize(p, v, "i", [0])
    return [("any", "requirements", "NotSupported", "row too long for the scratch")]


def case_mode_huge_row(p, v):
    # No row, each 2^28 elements: a valid program asking 1 GiB of scratch
    _resize(p, v, "x", [0, 1 << 28])
    _resize(p, v, "v", [0])
    _resize(p, v, "i", [0])
    return [("any", "fits", "Ok", "")]


def case_svd_out_lies(p, v):
    # out claims 3 values a matrix where min(5, 4) is 4: the kernel would
    # write the last matrix's last value past out
    _resize(p, v, "z", [2, 3])
    return [("any", "requirements", "InvalidArgument", "min(m, n)")]


def case_svd_empty_matrices(p, v):
    _resize(p, v, "x", [2, 5, 0])
    _resize(p, v, "z", [2, 0])
    return [("any", "requirements", "InvalidArgument", "empty matrices")]


def case_svd_out_batch(p, v):
    # out's batch [1] against x's [2]: the second matrix's values would land outside out
    _resize(p, v, "z", [1, 4])
    return [("any", "requirements", "InvalidArgument", "self's batch")]


def case_svd_vectors_out_lies(p, v):
    # u [2, 5, 4] where full_matrices asks 5 columns: the completed column would land past each matrix
    _resize(p, v, "u", [2, 5, 4])
    return [("any", "requirements", "InvalidArgument", "out must be U")]


def case_svd_qr_out_lies(p, v):
    # q [2, 5, 4] where complete asks Q 5x5: Q's last column would land in the next matrix's (and past q)
    _resize(p, v, "q", [2, 5, 4])
    return [("any", "requirements", "InvalidArgument", "out must be Q")]


def case_svd_geqrf_a_out_lies(p, v):
    # ga [2, 4, 4] of x's 5x4 matrices: a's last row would land in the next matrix's (and past ga)
    _resize(p, v, "ga", [2, 4, 4])
    return [("any", "requirements", "InvalidArgument", "a [..., m, n]")]


def case_svd_geqrf_tau_out_lies(p, v):
    # gt [2, 3] where k = 4: the last tau of each matrix would land in the next one's (and past gt)
    _resize(p, v, "gt", [2, 3])
    return [("any", "requirements", "InvalidArgument", "tau [..., k]")]


def case_svd_geqrf_tau_rank_lies(p, v):
    # gt [2, 4, 1]: a rank tau does not have (the same bytes)
    _resize(p, v, "gt", [2, 4, 1])
    return [("any", "requirements", "InvalidArgument", "tau: one less")]


def case_svd_lu_p_out_lies(p, v):
    # lp [2, 5, 4] where P is 5x5: P's last column would land in the next matrix's (and past lp)
    _resize(p, v, "lp", [2, 5, 4])
    return [("any", "requirements", "InvalidArgument", "out must be LU")]


def case_svd_lu_pivots_out_lies(p, v):
    # lv [2, 3] where min(5, 4) = 4 pivots a matrix: the second matrix's last pivot would land past lv
    _resize(p, v, "lv", [2, 3])
    return [("any", "requirements", "InvalidArgument", "out must be LU")]


def case_svd_lu_pivots_batch(p, v):
    # lv [1, 4] of x's 2 matrices: the second matrix's pivots would land past lv
    _resize(p, v, "lv", [1, 4])
    return [("any", "requirements", "InvalidArgument", "out must be LU")]


def case_eig_scratch_overflow(p, v):
    # no matrix, but each 32768 x 32768: 2^32 bytes of scratch
    _resize(p, v, "x", [0, 32768, 32768])
    _resize(p, v, "z", [0, 32768])
    return [("any", "requirements", "NotSupported", "matrix too large")]


def case_eig_not_square(p, v):
    # [3, 6, 5]: the kernel would read a 6x6 matrix's last column past each 30-float one
    _resize(p, v, "x", [3, 6, 5])
    return [("any", "requirements", "InvalidArgument", "must be square")]


def case_eig_out_lies(p, v):
    _resize(p, v, "z", [3, 5])
    return [("any", "requirements", "InvalidArgument", "[..., n] of self's batch")]


def case_ldl_scratch_overflow(p, v):
    # no matrix (a 0 batch), but each 32768 x 32768: n * n * 4 bytes of scratch is 2^32
    for name, sizes in (("x", [0, 32768, 32768]), ("ld", [0, 32768, 32768]), ("lp", [0, 32768]), ("li", [0])):
        _resize(p, v, name, sizes)
    return [("any", "requirements", "NotSupported", "matrix too large")]


def case_ldl_not_square(p, v):
    # [3, 6, 5]: the factorisation would read a 6x6 matrix's last column past each 30-float one
    _resize(p, v, "x", [3, 6, 5])
    return [("any", "requirements", "InvalidArgument", "must be square")]


def case_ldl_ld_out_lies(p, v):
    # ld [3, 6, 5]: LD's rows of 6 would land past each matrix's 30 floats (and past ld)
    _resize(p, v, "ld", [3, 6, 5])
    return [("any", "requirements", "InvalidArgument", "out must be LD")]


def case_ldl_pivots_out_lies(p, v):
    # lp [3, 5]: the third matrix's last pivot would land past lp
    _resize(p, v, "lp", [3, 5])
    return [("any", "requirements", "InvalidArgument", "out must be LD")]


def case_ldl_info_batch(p, v):
    # li [2] of x's 3 matrices: the third info would land past li
    _resize(p, v, "li", [2])
    return [("any", "requirements", "InvalidArgument", "out must be LD")]


def case_lu_scratch_overflow(p, v):
    # no matrix (a 0 batch), but each 32768 x 32768: n * n * 4 bytes of scratch is 2^32
    for name, sizes in (("x", [0, 32768, 32768]), ("r", [0, 32768, 3]), ("z", [0, 32768, 3]), ("d", [0])):
        _resize(p, v, name, sizes)
    return [("any", "requirements", "NotSupported", "too large for the scratch")]


def case_lu_rhs_rows_lie(p, v):
    # b claims 4 rows of A's 5: the elimination would read b's row 4 past its end
    _resize(p, v, "r", [2, 4, 3])
    return [("any", "requirements", "InvalidArgument", "rhs must have n rows")]


def case_lu_out_lies(p, v):
    # out [2, 5, 2] of b's 3 columns: the copy of B would write past out
    _resize(p, v, "z", [2, 5, 2])
    return [("any", "requirements", "InvalidArgument", "[..., n, k] of self's batch")]


def case_lu_rhs_batch(p, v):
    # b's batch [3] of x's [2] (neither x's nor 1; one column, so inside its buffer): B read for
    # matrix 1 would not be the B of its batch position
    _resize(p, v, "r", [3, 5, 1])
    return [("any", "requirements", "InvalidArgument", "self's or all 1")]


def case_lu_det_out_batch(p, v):
    # d [3] of x's 2 matrices
    _resize(p, v, "d", [3])
    return [("any", "requirements", "InvalidArgument", "self's batch dims")]


def case_lu_cholesky_out_lies(p, v):
    # c [2, 5, 4] of x's 5x5 matrices: the factor's last column would land past each matrix of c
    _resize(p, v, "c", [2, 5, 4])
    return [("any", "requirements", "InvalidArgument", "self's sizes")]


def case_lu_cholesky_info_out_lies(p, v):
    # ci [1] of x's 2 matrices: the second info would be written past ci
    _resize(p, v, "ci", [1])
    return [("any", "requirements", "InvalidArgument", "batch sizes")]


def case_lu_cholesky_info_rank_lies(p, v):
    # ci [2, 1]: a rank info does not have (the same bytes)
    _resize(p, v, "ci", [2, 1])
    return [("any", "requirements", "InvalidArgument", "out [...]")]


def case_lu_triangular_out_lies(p, v):
    # w [2, 4, 3] of x's 5 rows: the last row of X would land past each matrix of w
    _resize(p, v, "w", [2, 4, 3])
    return [("any", "requirements", "InvalidArgument", "[..., n, k] of self's batch")]


def case_lu_not_square(p, v):
    _resize(p, v, "x", [2, 5, 4])
    return [("any", "requirements", "InvalidArgument", "must be square")]


def case_eig_vectors_out_lies(p, v):
    # e [3, 6, 5]: each matrix's last column of vectors would land in the next matrix's (and past e)
    _resize(p, v, "e", [3, 6, 5])
    return [("any", "requirements", "InvalidArgument", "self's sizes")]


def case_eig_eigvals_out_lies(p, v):
    # g [3, 6, 1]: each value's imaginary part would land on the next value's real part (the last past g)
    _resize(p, v, "g", [3, 6, 1])
    return [("any", "requirements", "InvalidArgument", "out must be [..., n, 2]")]


def case_eig_eigvals_out_batch(p, v):
    # g [2, 6, 2] of x's 3 matrices: the third matrix's values would land past g
    _resize(p, v, "g", [2, 6, 2])
    return [("any", "requirements", "InvalidArgument", "of self's batch")]


def case_eig_eigvals_out_rank(p, v):
    # g [3, 12] (rank 2 of x's 3): the same bytes, read as another shape
    _resize(p, v, "g", [3, 12])
    return [("any", "requirements", "InvalidArgument", "out [..., n, 2]")]


def case_eig_general_vectors_out_lies(p, v):
    # gv [3, 6, 6, 1]: each component's imaginary part would land on the next one's real part (the last past gv)
    _resize(p, v, "gv", [3, 6, 6, 1])
    return [("any", "requirements", "InvalidArgument", "out must be [..., n, n, 2]")]


def case_eig_general_vectors_out_batch(p, v):
    # gv [2, 6, 6, 2] of x's 3 matrices: the third matrix's vectors would land past gv
    _resize(p, v, "gv", [2, 6, 6, 2])
    return [("any", "requirements", "InvalidArgument", "of self's batch")]


def case_eig_general_vectors_out_rank(p, v):
    # gv [3, 6, 12] (rank 3 of x's 3 plus 1): the same bytes, read as another shape
    _resize(p, v, "gv", [3, 6, 12])
    return [("any", "requirements", "InvalidArgument", "out [..., n, n, 2]")]


def case_overlap_flat_index_out_over_index(p, v):
    # A hostile plan puts the positions' out 8 bytes into the index i: the
    # first position written (2) lands on i[1], read next. Checked as read,
    # it fails the run rather than making position 2 * 3 + 2 for the lookup.
    plan(p).values[v["at"]].val.allocation_info = AllocationDetails(1, 40, 0)
    return [("any", "execute", "InvalidArgument", "an index is outside its dim")]


def case_bmm_out_lies(p, v):
    # z [2, 4, 6] of y's 5 columns: each row's last product would land in the next row (and the last past z)
    _resize(p, v, "z", [2, 4, 6])
    return [("any", "requirements", "InvalidArgument", "out must be [B, n, m]")]


def case_bmm_inner_lies(p, v):
    # y [2, 2, 5]: x's third column would read past each matrix of y
    _resize(p, v, "y", [2, 2, 5])
    return [("any", "requirements", "InvalidArgument", "as many rows")]


def case_bmm_batch_lies(p, v):
    # y [1, 3, 5] of x's 2 matrices: the second product would read past y
    _resize(p, v, "y", [1, 3, 5])
    return [("any", "requirements", "InvalidArgument", "batch must equal")]


def case_bmm_rank(p, v):
    # x [8, 3]: a matrix, not a batch
    _resize(p, v, "x", [8, 3])
    return [("any", "requirements", "InvalidArgument", "rank 3")]


def case_bmm_mat2_int8(p, v):
    # y's bytes as int8: 4 times as many entries as its floats
    plan(p).values[v["y"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "dtype must be float32")]


def case_special_out_lies(p, v):
    # g [2, 4]: y's 3 values do not broadcast to it (run would read past y)
    _resize(p, v, "g", [2, 4])
    return [("any", "requirements", "InvalidArgument", "does not broadcast")]


def case_special_rank_lies(p, v):
    # y [1, 1, 3] (its own 3 floats): more dims than g [2, 3], out's walk has no index for y's first dim
    _resize(p, v, "y", [1, 1, 3])
    return [("any", "requirements", "InvalidArgument", "more dimensions than out")]


def case_special_int8(p, v):
    # x's bytes as int8: 4 times as many entries as its floats
    plan(p).values[v["x"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "dtype must be float32")]


def case_bits_out_lies(p, v):
    # n [2, 4]: y's 3 values do not broadcast to it (run would read past y)
    _resize(p, v, "n", [2, 4])
    return [("any", "requirements", "InvalidArgument", "does not broadcast")]


def case_bits_mantissa_lies(p, v):
    # m [2, 4]: more elements than n holds (run would read past n)
    _resize(p, v, "m", [2, 4])
    return [("any", "requirements", "InvalidArgument", "mantissa must have self's sizes")]


def case_bits_exponent_rank_lies(p, v):
    # e [2, 3, 1]: another rank than m (one walk serves both outs)
    _resize(p, v, "e", [2, 3, 1])
    return [("any", "requirements", "InvalidArgument", "exponent must have mantissa's")]


def case_bits_exponent_float(p, v):
    # e's bytes as float32 (its size in bytes kept): the run would write int32 codes into floats
    plan(p).values[v["e"]].val.scalar_type = ScalarType.FLOAT
    return [("any", "requirements", "InvalidArgument", "exponent must be int32")]


def case_bits_self_int8(p, v):
    # x's bytes as int8: 4 times as many entries as its floats
    plan(p).values[v["x"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "dtype must be float32")]

def case_minmax_out_lies(p, v):
    # a [2, 4]: y's 3 values do not broadcast to it (run would read past y)
    _resize(p, v, "a", [2, 4])
    return [("any", "requirements", "InvalidArgument", "does not broadcast")]


def case_minmax_rank_lies(p, v):
    # y [1, 1, 3]: more dims than a [2, 3], the walk has no index for y's first dim
    _resize(p, v, "y", [1, 1, 3])
    return [("any", "requirements", "InvalidArgument", "more dimensions than out")]


def case_minmax_out_int64(p, v):
    # c's bytes as int64 (twice the element size): run would write past c
    plan(p).values[v["c"]].val.scalar_type = ScalarType.LONG
    return [("any", "requirements", "NotSupported", "share one dtype")]


def case_minmax_int_other_int32(p, v):
    # j's bytes as int32 against int64 i: no promotion
    plan(p).values[v["j"]].val.scalar_type = ScalarType.INT
    return [("any", "requirements", "NotSupported", "share one dtype")]


def case_minmax_self_double(p, v):
    # x, y, a as float64: a dtype the kernel does not take
    for name in ("x", "y", "a"):
        plan(p).values[v[name]].val.scalar_type = ScalarType.DOUBLE
    return [("any", "requirements", "NotSupported", "dtype not supported")]



def case_viewdt_out_lies(p, v):
    # u [2, 28]: 56 bytes of x's 48, the copy would read past x
    _resize(p, v, "u", [2, 28])
    return [("any", "requirements", "InvalidArgument", "scaled by the element sizes")]


def case_viewdt_rank_lies(p, v):
    # i [12]: x's 12 int32 words under another rank
    _resize(p, v, "i", [12])
    return [("any", "requirements", "InvalidArgument", "self's rank")]


def case_viewdt_dtype_lies(p, v):
    # i as int16 [2, 6]: half of x's bytes (a copy of x's 48 bytes would write past i)
    plan(p).values[v["i"]].val.scalar_type = ScalarType.SHORT
    return [("any", "requirements", "InvalidArgument", "scaled by the element sizes")]


def case_viewdt_bool(p, v):
    # u as bool: bytes other than 0 or 1 are no bool values
    plan(p).values[v["u"]].val.scalar_type = ScalarType.BOOL
    return [("any", "requirements", "NotSupported", "1, 2, 4 or 8 bytes")]


def case_viewdt_leading_lies(p, v):
    # l [3, 2]: the same 48 bytes, not x's leading size
    _resize(p, v, "l", [3, 2])
    return [("any", "requirements", "InvalidArgument", "leading sizes")]


def case_histc_out_lies(p, v):
    # h [8] of 16 bins: counts of bins 8 to 15 would be written past h
    _resize(p, v, "h", [8])
    return [("any", "requirements", "InvalidArgument", "out must be [bins]")]


def case_histc_rank_lies(p, v):
    # g [2, 4]: its 8 floats under another rank
    _resize(p, v, "g", [2, 4])
    return [("any", "requirements", "InvalidArgument", "out must be [bins]")]


def case_histc_int8(p, v):
    # x's bytes as int8: 4 times as many entries as its floats
    plan(p).values[v["x"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "float32")]

def case_roi_out_lies(p, v):
    # z [3, 3, 2, 1]: one bin column where pooled_width is 2 (run would write past z's buffer)
    _resize(p, v, "z", [3, 3, 2, 1])
    return [("any", "requirements", "InvalidArgument", "out must be [K, C, PH, PW]")]


def case_roi_rank_lies(p, v):
    # rois [15] (its own 15 floats): no rows of 5 to read
    _resize(p, v, "rois", [15])
    return [("any", "requirements", "InvalidArgument", "rois 2-D float")]


def case_roi_rows_lie(p, v):
    # rois [5, 3] (its own 15 floats): rows of 3 values, neither (b, x1, y1, x2, y2) nor (x1, y1, x2, y2)
    _resize(p, v, "rois", [5, 3])
    return [("any", "requirements", "InvalidArgument", "rois must be [K, 5] or [K, 4]")]


def case_roi_int8(p, v):
    # x's bytes as int8: 4 times as many entries as its floats
    plan(p).values[v["x"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "InvalidArgument", "input and out must be 4-D float")]


def case_unarymath_out_lies(p, v):
    # e [2, 4]: 8 floats written from x's 6 (run would read past x)
    _resize(p, v, "e", [2, 4])
    return [("any", "requirements", "InvalidArgument", "out must have the dtype and sizes of self")]


def case_unarymath_rank_lies(p, v):
    # l [2, 3, 1]: as many floats, one more dim than e
    _resize(p, v, "l", [2, 3, 1])
    return [("any", "requirements", "InvalidArgument", "out must have the dtype and sizes of self")]


def case_unarymath_int8(p, v):
    # x and e as int8 bytes: a float kernel on them
    plan(p).values[v["x"]].val.scalar_type = ScalarType.CHAR
    plan(p).values[v["e"]].val.scalar_type = ScalarType.CHAR
    return [("any", "requirements", "NotSupported", "dtype must be float32")]


def header_length_wrap(valid):
    # A 16-byte file whose extended header says it is 2^32 - 1 bytes long:
    # 8 + that wrapped a 32-bit size_t to 7, and the header's u64 fields were
    # read from past the end of the file.
    data = bytearray(valid)
    struct.pack_into("<I", data, 12, 0xFFFFFFFF)
    return bytes(data[:16]), [("any", "init", "InvalidProgram", "extended header is shorter than 24 bytes or truncated")]


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    cases = [(name[len("case_"):], fn) for name, fn in sorted(globals().items()) if name.startswith("case_")]
    for name, fn in cases:
        program, values = base_state() if name.startswith("state_") else \
            base_conv() if name.startswith("conv_") else base_index() if name.startswith("index_") else \
            base_overlap() if name.startswith("overlap_") else base_fused() if name.startswith("fused_") else \
            base_svd() if name.startswith("svd_") else base_eig() if name.startswith("eig_") else \
            base_intdiv() if name.startswith("intdiv_") else base_lu() if name.startswith("lu_") else \
            base_intreduce() if name.startswith("intreduce_") else base_bmm() if name.startswith("bmm_") else \
            base_intsort() if name.startswith("intsort_") else base_ldl() if name.startswith("ldl_") else \
            base_special() if name.startswith("special_") else base_roi() if name.startswith("roi_") else base_mode() if name.startswith("mode_") else \
            base_halfin() if name.startswith("halfin_") else base_bits() if name.startswith("bits_") else \
            base_minmax() if name.startswith("minmax_") else base_viewdt() if name.startswith("viewdt_") else \
            base_histc() if name.startswith("histc_") else base_nms() if name.startswith("nms_") else \
            base_unarymath() if name.startswith("unarymath_") else base_bnms() if name.startswith("bnms_") else \
            base_nmst() if name.startswith("nmst_") else base()
        program = copy.deepcopy(program)
        result = fn(program, values)
        expectations, serialise = result if isinstance(result, tuple) else (result, writer.serialize_program)
        data = serialise(program)
        with open(os.path.join(out_dir, name + ".pte"), "wb") as f:
            f.write(data)
        manifest += [f"{name}.pte {bits} {step} {status} {words}".rstrip() for bits, step, status, words in expectations]
    program, _ = base()
    data, expectations = header_length_wrap(writer.serialize_program(program))
    with open(os.path.join(out_dir, "header_length_wrap.pte"), "wb") as f:
        f.write(data)
    manifest += [f"header_length_wrap.pte {b} {s} {st} {w}" for b, s, st, w in expectations]
    with open(os.path.join(out_dir, "valid.pte"), "wb") as f:
        f.write(writer.serialize_program(base()[0]))
    manifest.append("valid.pte any none Ok")
    with open(os.path.join(out_dir, "valid_state.pte"), "wb") as f:
        f.write(writer.serialize_program(base_state()[0]))
    manifest.append("valid_state.pte any none Ok")
    with open(os.path.join(out_dir, "valid_fused.pte"), "wb") as f:
        f.write(writer.serialize_program(base_fused()[0]))
    manifest.append("valid_fused.pte any none Ok")
    with open(os.path.join(out_dir, "valid_svd.pte"), "wb") as f:
        f.write(writer.serialize_program(base_svd()[0]))
    manifest.append("valid_svd.pte any none Ok")
    with open(os.path.join(out_dir, "valid_eig.pte"), "wb") as f:
        f.write(writer.serialize_program(base_eig()[0]))
    manifest.append("valid_eig.pte any none Ok")
    with open(os.path.join(out_dir, "valid_intdiv.pte"), "wb") as f:
        f.write(writer.serialize_program(base_intdiv()[0]))
    manifest.append("valid_intdiv.pte any none Ok")
    with open(os.path.join(out_dir, "valid_lu.pte"), "wb") as f:
        f.write(writer.serialize_program(base_lu()[0]))
    manifest.append("valid_lu.pte any none Ok")
    with open(os.path.join(out_dir, "valid_intreduce.pte"), "wb") as f:
        f.write(writer.serialize_program(base_intreduce()[0]))
    manifest.append("valid_intreduce.pte any none Ok")
    with open(os.path.join(out_dir, "valid_bmm.pte"), "wb") as f:
        f.write(writer.serialize_program(base_bmm()[0]))
    manifest.append("valid_bmm.pte any none Ok")
    with open(os.path.join(out_dir, "valid_intsort.pte"), "wb") as f:
        f.write(writer.serialize_program(base_intsort()[0]))
    manifest.append("valid_intsort.pte any none Ok")
    with open(os.path.join(out_dir, "valid_ldl.pte"), "wb") as f:
        f.write(writer.serialize_program(base_ldl()[0]))
    manifest.append("valid_ldl.pte any none Ok")
    with open(os.path.join(out_dir, "valid_unarymath.pte"), "wb") as f:
        f.write(writer.serialize_program(base_unarymath()[0]))
    manifest.append("valid_unarymath.pte any none Ok")
    with open(os.path.join(out_dir, "valid_special.pte"), "wb") as f:
        f.write(writer.serialize_program(base_special()[0]))
    manifest.append("valid_special.pte any none Ok")
    with open(os.path.join(out_dir, "valid_nms.pte"), "wb") as f:
        f.write(writer.serialize_program(base_nms()[0]))
    manifest.append("valid_nms.pte any none Ok")
    with open(os.path.join(out_dir, "valid_roi.pte"), "wb") as f:
        f.write(writer.serialize_program(base_roi()[0]))
    manifest.append("valid_roi.pte any none Ok")
    with open(os.path.join(out_dir, "valid_bnms.pte"), "wb") as f:
        f.write(writer.serialize_program(base_bnms()[0]))
    manifest.append("valid_bnms.pte any none Ok")
    with open(os.path.join(out_dir, "valid_nmst.pte"), "wb") as f:
        f.write(writer.serialize_program(base_nmst()[0]))
    manifest.append("valid_nmst.pte any none Ok")
    with open(os.path.join(out_dir, "valid_halfin.pte"), "wb") as f:
        f.write(writer.serialize_program(base_halfin()[0]))
    manifest.append("valid_halfin.pte any none Ok")
    with open(os.path.join(out_dir, "valid_bits.pte"), "wb") as f:
        f.write(writer.serialize_program(base_bits()[0]))
    manifest.append("valid_bits.pte any none Ok")
    with open(os.path.join(out_dir, "valid_minmax.pte"), "wb") as f:
        f.write(writer.serialize_program(base_minmax()[0]))
    manifest.append("valid_minmax.pte any none Ok")
    with open(os.path.join(out_dir, "valid_viewdt.pte"), "wb") as f:
        f.write(writer.serialize_program(base_viewdt()[0]))
    manifest.append("valid_viewdt.pte any none Ok")
    with open(os.path.join(out_dir, "valid_histc.pte"), "wb") as f:
        f.write(writer.serialize_program(base_histc()[0]))
    manifest.append("valid_histc.pte any none Ok")
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
