"""Writes the ptec-built programs that the hostile-file test corrupts, next
to the upstream samples: a DS-CNN for each ISA flavour (linear with bias, and
with kernel_sum), so that every cortex_m kernel's prepare() meets damaged
arguments; and a small fp32 network on the portable kernels (conv, max-pool
with indices, cat through a TensorList, mean, softmax, view, permute,
slice, grid_sampler_2d and grid_sampler_3d at positions taken from the
input, the singular and symmetric eigenvalues of its bytes as matrices), so that theirs
meet damaged arguments too; and a small program of
index results (argmax, argmin, the int64-to-float32 copy, a max pool's
indices over listed windows and the unpool by them, an embedding of
int64 ids, a sort and a topk with their int64 indices, two index tensors
as one position (flat_index) and an EmbeddingBag's positions from
offsets (bag_positions), each looked up); a small
program of the random kernels; a small program of bool values
(comparisons, logical ops, where, casts of a bool, a masked_select into a
bound-dynamic output, an index by a bool mask over the rows); and a
--fuse-expansion inverted-residual block (ptec::quantized_expand_depthwise,
then the 1x1 projection); and igamma / igammac / special_zeta of two
float values, broadcast; float16 / bfloat16 inputs converted into float32,
added, and the sum a float16 output; nextafter (broadcast) and frexp of float
values; minimum, maximum, fmin and fmax of float and int8 values (broadcast);
a float value viewed as int32, uint8, int64 and back
(ptec::view_dtype.out); and torch.histc of a float value over its own range
and a given one (aten::histc.out); torchvision's nms (a sort, ptec::nms.out's
keep flags, the kept indices selected into a bound-dynamic output);
torchvision's batched_nms past 1,000 boxes as ptec runs it (a sort,
ptec::batched_nms.out's int64 indices then -1s, those >= 0 selected);
both with a threshold the program computes (ptec::nms.Tensor_out,
ptec::batched_nms.Tensor_out: the mean of an input);
ptec::roi_align.out of a float map by float boxes (adaptive, then position
sensitive); and exp, log1p, sin and sign of a float value
(op_float_unary_math.c)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import numpy as np  # noqa: E402

from ptec.backends.cortex_m.sample_programs import ds_cnn_program  # noqa: E402
from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder  # noqa: E402
from ptec.pte.schema import ScalarType  # noqa: E402
from ptec.pte.writer import write_program  # noqa: E402

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
for target in ("cortex-m55", "cortex-m33"):
    program, _ = ds_cnn_program(seed=11, target=target, channels=8, blocks=1)
    write_program(program, os.path.join(out_dir, f"ds_cnn_small_{target}.pte"))


def portable_program():
    rng = np.random.default_rng(5)
    f32, cl = ScalarType.FLOAT, CHANNELS_LAST
    b = ProgramBuilder()
    x = b.tensor(f32, [1, 2, 6, 6], cl)
    c = b.tensor(f32, [1, 3, 6, 6], cl)
    b.call("aten::convolution.out", input=x, weight=b.constant(rng.standard_normal((3, 2, 3, 3)).astype(np.float32)),
           bias=b.constant(np.ones(3, np.float32)), stride=[1, 1], padding=[1, 1], dilation=[1, 1],
           transposed=False, output_padding=[0, 0], groups=1, out=c)
    r = b.tensor(f32, [1, 3, 6, 6], cl)
    b.call("aten::relu.out", self=c, out=r)
    p, i = b.tensor(f32, [1, 3, 3, 3], cl), b.tensor(ScalarType.LONG, [1, 3, 3, 3], cl)
    b.call("aten::max_pool2d_with_indices.out", self=r, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
           dilation=[1, 1], ceil_mode=False, out=p, indices=i)
    a = b.tensor(f32, [1, 2, 3, 3], cl)
    b.call("aten::avg_pool2d.out", self=x, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], ceil_mode=False,
           count_include_pad=True, divisor_override=None, out=a)
    k = b.tensor(f32, [1, 5, 3, 3], cl)
    b.call("aten::cat.out", tensors=[p, a], dim=1, out=k)
    s_ = b.tensor(f32, [1, 5, 3, 3], cl)
    b.call("aten::_softmax.out", self=k, dim=1, half_to_float=False, out=s_)
    m = b.tensor(f32, [1, 5], None)
    b.call("aten::mean.out", self=s_, dim=[2, 3], keepdim=False, dtype=None, out=m)
    t = b.tensor(f32, [5, 1], None)
    b.call("aten::permute_copy.out", self=m, dims=[1, 0], out=t)
    sl = b.tensor(f32, [2, 1], None)
    b.call("aten::slice_copy.Tensor_out", self=t, dim=0, start=1, end=None, step=2, out=sl)
    v = b.tensor(f32, [2], None)
    b.call("aten::view_copy.out", self=sl, size=[-1], out=v)
    # a volume of the input's bytes sampled trilinearly at (x, y, z) of them,
    # y and z scaled far out (reflection computes the most from them); before
    # the 2-D sampler, which keeps the input alive to the end (the plan does
    # not reuse its bytes: test_input_reuse's "kept" case)
    vol, g3, gs3 = (b.tensor(f32, [1, 2, 3, 3, 4], None), b.tensor(f32, [1, 2, 3, 4, 3], None),
                    b.tensor(f32, [1, 2, 3, 4, 3], None))
    b.call("aten::view_copy.out", self=x, size=[1, 2, 3, 3, 4], out=vol)
    b.call("aten::view_copy.out", self=x, size=[1, 2, 3, 4, 3], out=g3)
    b.call("aten::mul.out", self=g3, other=b.constant(np.array([1.0, 3e9, -1e30], np.float32)), out=gs3)
    sampled3 = b.tensor(f32, [1, 2, 2, 3, 4], None)
    b.call("aten::grid_sampler_3d.out", input=vol, grid=gs3, interpolation_mode=0, padding_mode=2, align_corners=True,
           out=sampled3)
    # the singular values of the input's bytes as 3 tall and 2 wide matrices
    # (ptec::linalg_svdvals.out: sizes, batch and scratch for damage to meet;
    # NaN and huge bytes give NaN or a scaled Jacobi)
    tall, wide = b.tensor(f32, [3, 6, 4], None), b.tensor(f32, [2, 4, 9], None)
    b.call("aten::view_copy.out", self=x, size=[3, 6, 4], out=tall)
    b.call("aten::view_copy.out", self=x, size=[2, 4, 9], out=wide)
    sv_tall, sv_wide = b.tensor(f32, [3, 4], None), b.tensor(f32, [2, 4], None)
    b.call("ptec::linalg_svdvals.out", self=tall, out=sv_tall)
    b.call("ptec::linalg_svdvals.out", self=wide, out=sv_wide)
    # and the wide matrices' full Vh and the tall ones' pseudo-inverses (ptec::linalg_svd.out)
    vh_wide, pinv_tall = b.tensor(f32, [2, 9, 9], None), b.tensor(f32, [3, 4, 6], None)
    b.call("ptec::linalg_svd.out", self=wide, which=1, full_matrices=True, rtol=0.0, out=vh_wide)
    b.call("ptec::linalg_svd.out", self=tall, which=2, full_matrices=False, rtol=1e-6, out=pinv_tall)
    # and the tall ones' Householder R (ptec::linalg_qr.out)
    r_tall = b.tensor(f32, [3, 6, 4], None)
    b.call("ptec::linalg_qr.out", self=tall, which=1, complete=True, out=r_tall)
    # and the wide ones' geqrf a and tau (ptec::linalg_qr.out which 2, 3: 1 / (x0 - alpha) of any bytes)
    geqrf_a, geqrf_tau = b.tensor(f32, [2, 4, 9], None), b.tensor(f32, [2, 4], None)
    b.call("ptec::linalg_qr.out", self=wide, which=2, complete=False, out=geqrf_a)
    b.call("ptec::linalg_qr.out", self=wide, which=3, complete=False, out=geqrf_tau)
    # and pinv(A) A of the tall ones (aten::bmm.out: [3, 4, 6] times [3, 6, 4])
    pa_tall = b.tensor(f32, [3, 4, 4], None)
    b.call("aten::bmm.out", self=pinv_tall, mat2=tall, out=pa_tall)
    # the wide ones' LU pivots (int32) and the tall ones' P (ptec::linalg_lu.out: NaN never a pivot, a zero
    # column skipped)
    piv_wide, p_tall = b.tensor(ScalarType.INT, [2, 4], None), b.tensor(f32, [3, 6, 6], None)
    b.call("ptec::linalg_lu.out", self=wide, which=1, out=piv_wide)
    b.call("ptec::linalg_lu.out", self=tall, which=2, out=p_tall)
    # the eigenvalues of 2 of the input's 6x6 planes' upper triangles (ptec::linalg_eigvalsh.out; with the
    # singular values above and the LU and triangular kernels below, before the 2-D sampler, the input's
    # last reader: no tensor of theirs takes its bytes)
    square, ev = b.tensor(f32, [2, 6, 6], None), b.tensor(f32, [2, 6], None)
    b.call("aten::view_copy.out", self=x, size=[2, 6, 6], out=square)
    b.call("ptec::linalg_eigvalsh.out", self=square, upper=True, out=ev)
    evec = b.tensor(f32, [2, 6, 6], None)
    b.call("ptec::linalg_eigh_vectors.out", self=square, upper=False, out=evec)
    # and their general eigenvalues (ptec::linalg_eigvals.out: Hessenberg and Francis QR meet NaN, huge and
    # tiny bytes; the 30 n step limit bounds the run)
    eig_pairs = b.tensor(f32, [2, 6, 2], None)
    b.call("ptec::linalg_eigvals.out", self=square, out=eig_pairs)
    # and their lower triangles' LDL^T factors, pivots and info (ptec::linalg_ldl_factor.out: Bunch-Kaufman's
    # comparisons meet NaN, huge and tiny bytes; every swap stays inside the matrix)
    ldl_ld, ldl_piv, ldl_info = b.tensor(f32, [2, 6, 6], None), b.tensor(ScalarType.INT, [2, 6], None), \
        b.tensor(ScalarType.INT, [2], None)
    b.call("ptec::linalg_ldl_factor.out", self=square, which=0, out=ldl_ld)
    b.call("ptec::linalg_ldl_factor.out", self=square, which=1, out=ldl_piv)
    b.call("ptec::linalg_ldl_factor.out", self=square, which=2, out=ldl_info)
    # and their eigenvectors (ptec::linalg_eig_vectors.out: inverse iteration meets NaN values, zero and huge
    # pivots, the back substitution's rescaling)
    eig_vecs = b.tensor(f32, [2, 6, 6, 2], None)
    b.call("ptec::linalg_eig_vectors.out", self=square, out=eig_vecs)
    # and the same planes' log |det| and the solves of them for their first 2 columns
    # (ptec::linalg_det.out, linalg_solve.out: a zero pivot divides by 0, a NaN gives NaN)
    logdet, cols, solved = b.tensor(f32, [2], None), b.tensor(f32, [2, 6, 2], None), b.tensor(f32, [2, 6, 2], None)
    b.call("ptec::linalg_det.out", self=square, mode=2, out=logdet)
    b.call("aten::slice_copy.Tensor_out", self=square, dim=2, start=0, end=2, step=1, out=cols)
    b.call("ptec::linalg_solve.out", self=square, rhs=cols, out=solved)
    # their Cholesky factors from the upper triangles and the triangular solves of the lower ones
    # (ptec::linalg_cholesky.out, linalg_triangular_solve.out: negative pivots give NaN)
    factor, tri = b.tensor(f32, [2, 6, 6], None), b.tensor(f32, [2, 6, 2], None)
    b.call("ptec::linalg_cholesky.out", self=square, upper=True, out=factor)
    # their cholesky_ex info (ptec::linalg_cholesky_info.out: NaN, inf and huge pivots computed through)
    info = b.tensor(ScalarType.INT, [2], None)
    b.call("ptec::linalg_cholesky_info.out", self=square, upper=False, out=info)
    b.call("ptec::linalg_triangular_solve.out", self=square, rhs=cols, upper=False, transpose=True, unitriangular=False,
           out=tri)
    # the input's bytes as sampling positions, scaled far outside the plane:
    # grid_sampler_2d meets NaN, infinite and huge coordinates (bicubic
    # reflection computes the most from them)
    g, gs = b.tensor(f32, [1, 6, 6, 2], None), b.tensor(f32, [1, 6, 6, 2], None)
    b.call("aten::view_copy.out", self=x, size=[1, 6, 6, 2], out=g)
    b.call("aten::mul.out", self=g, other=b.constant(np.array([1.0, 3e9], np.float32)), out=gs)
    sampled = b.tensor(f32, [1, 2, 6, 6], cl)
    b.call("aten::grid_sampler_2d.out", input=x, grid=gs, interpolation_mode=2, padding_mode=2, align_corners=False,
           out=sampled)
    b.set_io([x], [v, sampled, sampled3, sv_tall, sv_wide, vh_wide, pinv_tall, r_tall, pa_tall, piv_wide, p_tall, ev, evec,
                   eig_pairs, eig_vecs, ldl_ld, ldl_piv, ldl_info, logdet, solved, factor, info, tri, geqrf_a, geqrf_tau])
    return b.build()


write_program(portable_program(), os.path.join(out_dir, "portable_small.pte"))


def index_program():
    """argmax over a dim into int64, converted to float32; argmin kept as an
    int64 output: the kernels of model outputs that are class indices; an
    embedding of int64 token ids; a sort and a topk (k, dim and the two
    outputs' sizes for damage to meet), a median, a mode and a cummax; a gather by argmin's index; ids
    computed from floats, pow and atan2, and a half output; argmax's
    indices floor-divided, remainder and fmod by int64 constants, the
    quotient as int32."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x = b.tensor(f32, [2, 5], None)
    i = b.tensor(i64, [2], None)
    b.call("aten::argmax.out", self=x, dim=1, keepdim=False, out=i)
    f = b.tensor(f32, [2], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=i, non_blocking=False, dim_order=None, out=f)
    j = b.tensor(i64, [1, 5], None)
    b.call("aten::argmin.out", self=x, dim=0, keepdim=True, out=j)
    # int64 ids looking up rows of an int8 table: argmax's, which are in
    # the table whatever the input (the fuzzer's inputs are 0x3F bytes, an
    # int64 input would hold an id far outside it and stop the run early)
    rows = b.tensor(ScalarType.CHAR, [2, 4], None)
    b.call("aten::embedding.out", weight=b.constant(np.arange(-20, 20, dtype=np.int8).reshape(10, 4)), indices=i,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=rows)
    sv, si = b.tensor(f32, [2, 5], None), b.tensor(i64, [2, 5], None)
    b.call("aten::sort.values", self=x, dim=-1, descending=True, values=sv, indices=si)
    tv, ti = b.tensor(f32, [1, 5], None), b.tensor(i64, [1, 5], None)
    b.call("aten::topk.values", self=x, k=1, dim=0, largest=False, sorted=True, values=tv, indices=ti)
    # one element per row (median, mode) and the running extremes: dim, keepdim and the outputs' sizes
    mv, mi = b.tensor(f32, [2, 1], None), b.tensor(i64, [2, 1], None)
    b.call("aten::median.dim_values", self=x, dim=1, keepdim=True, values=mv, indices=mi)
    ov, oi = b.tensor(f32, [5], None), b.tensor(i64, [5], None)
    b.call("aten::mode.values", self=x, dim=0, keepdim=False, values=ov, indices=oi)
    cv, ci = b.tensor(f32, [2, 5], None), b.tensor(i64, [2, 5], None)
    b.call("aten::cummax.out", self=x, dim=-1, values=cv, indices=ci)
    # a max pool's values and int64 indices over listed windows, unpooled
    # back by them (ptec::max_unpool checks each index against the plane)
    x3 = b.tensor(f32, [1, 2, 5], None)
    b.call("aten::view_copy.out", self=x, size=[1, 2, 5], out=x3)
    windows = b.constant(np.array([[[[0, 3, 1], [2, 5, 2]]]], np.int32))
    pooled, where = b.tensor(f32, [1, 2, 2], None), b.tensor(i64, [1, 2, 2], None)
    b.call("ptec::window_max.out", self=x3, windows=windows, out=pooled)
    b.call("ptec::window_max.out", self=x3, windows=windows, out=where)
    back = b.tensor(f32, [1, 2, 5], None)
    b.call("ptec::max_unpool.out", self=pooled, indices=where, zero_point=0, out=back)
    # x's entries picked along dim 0 by argmin's index (in range, as above)
    picked = b.tensor(f32, [1, 5], None)
    b.call("aten::gather.out", self=x, dim=0, index=j, sparse_grad=False, out=picked)
    # ids computed from the float input (x.long(): the fuzzer's 0x3F bytes are
    # 0.75, id 0), the float functions of two tensors and the half output
    k = b.tensor(i64, [2, 5], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=x, non_blocking=False, dim_order=None, out=k)
    embedded = b.tensor(ScalarType.CHAR, [2, 5, 4], None)
    b.call("aten::embedding.out", weight=b.constant(np.arange(-20, 20, dtype=np.int8).reshape(10, 4)), indices=k,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=embedded)
    p = b.tensor(f32, [2, 5], None)
    b.call("aten::pow.Tensor_Tensor_out", self=x, exponent=b.constant(np.full([5], 1.5, np.float32)), out=p)
    a = b.tensor(f32, [2, 5], None)
    b.call("aten::atan2.out", self=p, other=x, out=a)
    h = b.tensor(ScalarType.HALF, [2, 5], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=a, non_blocking=False, dim_order=None, out=h)
    a64 = b.tensor(ScalarType.DOUBLE, [2, 5], None)        # and as a Double output (float32 into float64)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=a, non_blocking=False, dim_order=None, out=a64)
    # x[i, j] by two computed index tensors: argmax's i as [2, 1] and
    # argmin's j [1, 5] broadcast to one position each in a [5, 5] block
    # (ptec::flat_index checks each index), whose rows are looked up
    i_col = b.tensor(i64, [2, 1], None)
    b.call("aten::view_copy.out", self=i, size=[2, 1], out=i_col)
    at = b.tensor(i64, [2, 5], None)
    b.call("ptec::flat_index.out", indices=[i_col, j], sizes=[5, 5], out=at)
    block = b.tensor(ScalarType.CHAR, [2, 5, 4], None)
    b.call("aten::embedding.out", weight=b.constant(np.arange(-50, 50, dtype=np.int8).reshape(25, 4)), indices=at,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=block)
    # nn.EmbeddingBag's bags from run-time offsets (argmax's, 0 and 0 for
    # the fuzzer's even inputs: ptec::bag_positions checks them), the
    # positions looking up 3 ids' rows and the filler row
    bags = b.tensor(i64, [2, 3], None)
    b.call("ptec::bag_positions.out", offsets=i, length=3, include_last_offset=False, out=bags)
    bagged = b.tensor(ScalarType.CHAR, [2, 3, 4], None)
    b.call("aten::embedding.out", weight=b.constant(np.arange(16, dtype=np.int8).reshape(4, 4)), indices=bags,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=bagged)
    # integer division of argmax's indices by constant divisors (a damaged
    # divisor of 0 fails the run), the quotient narrowed to int32
    divisor = b.constant(np.array([2, -3], np.int64))
    quot, rem, rest = b.tensor(i64, [2], None), b.tensor(i64, [2], None), b.tensor(i64, [2], None)
    b.call("aten::floor_divide.out", self=i, other=divisor, out=quot)
    b.call("aten::remainder.Tensor_out", self=i, other=divisor, out=rem)
    b.call("aten::fmod.Tensor_out", self=quot, other=divisor, out=rest)
    narrow = b.tensor(ScalarType.INT, [2], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=quot, non_blocking=False, dim_order=None, out=narrow)
    # gcd / lcm of the indices and divisors, their integer sum, amax, cumsum and argmax
    gcd, lcm = b.tensor(i64, [2], None), b.tensor(i64, [2], None)
    b.call("aten::gcd.out", self=i, other=divisor, out=gcd)
    b.call("aten::lcm.out", self=quot, other=divisor, out=lcm)
    total, top, running = b.tensor(i64, [], None), b.tensor(i64, [1], None), b.tensor(i64, [2], None)
    b.call("aten::sum.IntList_out", self=lcm, dim=None, keepdim=False, dtype=None, out=total)
    b.call("aten::amax.out", self=gcd, dim=[0], keepdim=True, out=top)
    b.call("aten::cumsum.out", self=rem, dim=0, dtype=None, out=running)
    first = b.tensor(i64, [], None)
    b.call("aten::argmax.out", self=running, dim=None, keepdim=False, out=first)
    # the integers sorted (int64) and their int32 topk, narrowed to int16 / uint8 and widened to float64
    isv, isi = b.tensor(i64, [2], None), b.tensor(i64, [2], None)
    b.call("aten::sort.values", self=lcm, dim=0, descending=True, values=isv, indices=isi)
    itv, iti = b.tensor(ScalarType.INT, [1], None), b.tensor(i64, [1], None)
    b.call("aten::topk.values", self=narrow, k=1, dim=0, largest=False, sorted=True, values=itv, indices=iti)
    short, byte, wide = (b.tensor(st, [2], None) for st in (ScalarType.SHORT, ScalarType.BYTE, ScalarType.DOUBLE))
    b.call("dim_order_ops::_to_dim_order_copy.out", self=isv, non_blocking=False, dim_order=None, out=short)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=short, non_blocking=False, dim_order=None, out=byte)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=rem, non_blocking=False, dim_order=None, out=wide)
    b.set_io([x], [f, j, rows, sv, si, tv, ti, mv, mi, ov, oi, cv, ci, back, picked, embedded, h, block,
                   bagged, rem, rest, narrow, total, top, first, isi, itv, iti, byte, wide, a64])
    return b.build()


write_program(index_program(), os.path.join(out_dir, "index_small.pte"))


def random_program():
    """The random kernels: a float32 dropout of whole channels of a
    channels-last value, then the fractional pick of its windows (every
    prepared argument a hostile file can damage: p, mask_dims, the seed,
    kernel_size, the sizes the starts are checked against)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x = b.tensor(f32, [1, 2, 5, 6], CHANNELS_LAST)
    d = b.tensor(f32, [1, 2, 5, 6], CHANNELS_LAST)
    b.call("ptec::random_dropout.out", self=x, p=0.25, mask_dims=2, zero_point=0, seed=99, out=d)
    y = b.tensor(f32, [1, 2, 3, 4], None)
    b.call("ptec::random_fractional_pick.out", windows=d, kernel_size=[2, 2], seed=5, out=y)
    b.set_io([x], [y])
    return b.build()


write_program(random_program(), os.path.join(out_dir, "random_small.pte"))


def special_program():
    """igamma, igammac and special_zeta of float32 values, broadcast (the
    shapes and dtypes their prepares check)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, y = b.tensor(f32, [2, 3]), b.tensor(f32, [3])
    g, c, z = b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3])
    b.call("aten::igamma.out", self=x, other=y, out=g)
    b.call("aten::igammac.out", self=x, other=g, out=c)
    b.call("aten::special_zeta.out", self=c, other=y, out=z)
    b.set_io([x, y], [z])
    return b.build()


write_program(special_program(), os.path.join(out_dir, "special_small.pte"))


def roi_program():
    """ptec::roi_align.out of a float map by float boxes: adaptive and
    aligned, then position sensitive with a fixed ratio on the same boxes
    (the fuzzer's bytes are the batch indices and corners: out-of-range
    indices, non-finite and huge boxes must fail the run, never read out
    of bounds)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, rois = b.tensor(f32, [2, 4, 5, 6]), b.tensor(f32, [3, 5])
    y, z = b.tensor(f32, [3, 4, 2, 2]), b.tensor(f32, [3, 1, 2, 2])
    b.call("ptec::roi_align.out", input=x, rois=rois, spatial_scale=0.5, pooled_height=2, pooled_width=2,
           sampling_ratio=-1, aligned=True, position_sensitive=False, out=y)
    b.call("ptec::roi_align.out", input=y, rois=rois, spatial_scale=1.0, pooled_height=2, pooled_width=2,
           sampling_ratio=2, aligned=True, position_sensitive=True, out=z)
    b.set_io([x, rois], [z])
    return b.build()


write_program(roi_program(), os.path.join(out_dir, "roi_small.pte"))


def float_bits_program():
    """nextafter of float32 values, broadcast, then frexp of the result
    (mantissa float32, exponent int32): the shapes and dtypes their
    prepares check."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, y, n = b.tensor(f32, [2, 3]), b.tensor(f32, [3]), b.tensor(f32, [2, 3])
    m, e = b.tensor(f32, [2, 3]), b.tensor(ScalarType.INT, [2, 3])
    b.call("aten::nextafter.out", self=x, other=y, out=n)
    b.call("aten::frexp.Tensor_out", self=n, mantissa=m, exponent=e)
    b.set_io([x, y], [m, e])
    return b.build()


write_program(float_bits_program(), os.path.join(out_dir, "float_bits_small.pte"))


def minimum_maximum_program():
    """minimum, fmax and maximum of float32 values, broadcast, and fmin of
    int8 values (op_minimum_maximum.c): the shapes and dtypes their
    prepares check."""
    f32, i8 = ScalarType.FLOAT, ScalarType.CHAR
    b = ProgramBuilder()
    x, y = b.tensor(f32, [2, 3]), b.tensor(f32, [3])
    a, m, c = b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3]), b.tensor(f32, [2, 3])
    i, j, k = b.tensor(i8, [2, 1]), b.tensor(i8, [4]), b.tensor(i8, [2, 4])
    b.call("aten::minimum.out", self=x, other=y, out=a)
    b.call("aten::fmax.out", self=a, other=x, out=m)
    b.call("aten::maximum.out", self=m, other=y, out=c)
    b.call("aten::fmin.out", self=i, other=j, out=k)
    b.set_io([x, y, i, j], [c, k])
    return b.build()


write_program(minimum_maximum_program(), os.path.join(out_dir, "minimum_maximum_small.pte"))


def view_dtype_program():
    """x.view(dtype) (ptec::view_dtype.out) of a float32 input as int32,
    uint8 and int64, and the int32 bits back as float32 (the sizes and
    dtypes its prepare checks before the byte copy)."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 4])
    i, u = b.tensor(ScalarType.INT, [2, 4]), b.tensor(ScalarType.BYTE, [2, 16])
    lo, f = b.tensor(ScalarType.LONG, [2, 2]), b.tensor(ScalarType.FLOAT, [2, 4])
    b.call("ptec::view_dtype.out", self=x, out=i)
    b.call("ptec::view_dtype.out", self=x, out=u)
    b.call("ptec::view_dtype.out", self=x, out=lo)
    b.call("ptec::view_dtype.out", self=i, out=f)
    b.set_io([x], [u, lo, f])
    return b.build()


write_program(view_dtype_program(), os.path.join(out_dir, "view_dtype_small.pte"))


def histc_program():
    """torch.histc of a float32 input over its own range and over a given
    one (aten::histc.out: the sizes its prepare checks before the counts)."""
    b = ProgramBuilder()
    x = b.tensor(ScalarType.FLOAT, [2, 5])
    h, g = b.tensor(ScalarType.FLOAT, [7]), b.tensor(ScalarType.FLOAT, [3])
    b.call("aten::histc.out", self=x, bins=7, min=0.0, max=0.0, out=h)
    b.call("aten::histc.out", self=x, bins=3, min=-2.0, max=2.0, out=g)
    b.set_io([x], [h, g])
    return b.build()


write_program(histc_program(), os.path.join(out_dir, "histc_small.pte"))


def unary_math_program():
    """exp, log1p, sin, sign of a float32 value (op_float_unary_math.c):
    the sizes and dtypes their prepares check."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, e, l, s, g = (b.tensor(f32, [2, 3]) for _ in range(5))
    b.call("aten::exp.out", self=x, out=e)
    b.call("aten::log1p.out", self=e, out=l)
    b.call("aten::sin.out", self=l, out=s)
    b.call("aten::sign.out", self=s, out=g)
    b.set_io([x], [g])
    return b.build()


write_program(unary_math_program(), os.path.join(out_dir, "unary_math_small.pte"))


def bool_program():
    """int8 comparisons into bools (a number, and a broadcast tensor),
    their logical and / not, a where picking int8 bytes by them, the bool
    as float32 and int64, and a masked_select by one into a bound-dynamic
    output (1-D, [1, bound] and [1, 1, bound]): every kernel of a model's bool values."""
    i8, b8 = ScalarType.CHAR, ScalarType.BOOL
    b = ProgramBuilder()
    x = b.tensor(i8, [2, 6], None)
    row = b.constant(np.arange(-3, 3, dtype=np.int8).reshape(1, 6))
    gt, le = b.tensor(b8, [2, 6], None), b.tensor(b8, [2, 6], None)
    b.call("aten::gt.Scalar_out", self=x, other=5, out=gt)
    b.call("aten::le.Tensor_out", self=x, other=row, out=le)
    both, neither = b.tensor(b8, [2, 6], None), b.tensor(b8, [2, 6], None)
    b.call("aten::logical_and.out", self=gt, other=le, out=both)
    b.call("aten::logical_not.out", self=both, out=neither)
    picked = b.tensor(i8, [2, 6], None)
    b.call("aten::where.self_out", condition=neither, self=x, other=row, out=picked)
    f, n = b.tensor(ScalarType.FLOAT, [2, 6], None), b.tensor(ScalarType.LONG, [2, 6], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=gt, non_blocking=False, dim_order=None, out=f)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=le, non_blocking=False, dim_order=None, out=n)
    # the selection by a bool: a bound-dynamic out whose size the kernel sets
    sel = b.tensor(i8, [12], None)
    b.values[sel].val.shape_dynamism = 1           # DYNAMIC_BOUND
    b.call("aten::masked_select.out", self=x, mask=gt, out=sel)
    # the same into a row [1, bound] (x[m].unsqueeze(0)): the kernel sets [1, count]
    sel_row = b.tensor(i8, [1, 12], None)
    b.values[sel_row].val.shape_dynamism = 1
    b.call("aten::masked_select.out", self=x, mask=le, out=sel_row)
    # and into [1, 1, bound] (x[m][None, None]): [1, 1, count]
    sel_deep = b.tensor(i8, [1, 1, 12], None)
    b.values[sel_deep].val.shape_dynamism = 1
    b.call("aten::masked_select.out", self=x, mask=gt, out=sel_deep)
    # the rows of x where a [2] mask is set (aten::index with one bool index)
    first = b.tensor(i8, [2, 1], None)
    b.call("aten::slice_copy.Tensor_out", self=x, dim=1, start=0, end=1, step=1, out=first)
    row_mask = b.tensor(b8, [2], None)
    b.call("aten::gt.Scalar_out", self=b.view(first, [2]), other=0, out=row_mask)
    rows = b.tensor(i8, [2, 6], None)
    b.values[rows].val.shape_dynamism = 1
    b.call("aten::index.Tensor_out", self=x, indices=[row_mask], out=rows)
    # and into [1, bound, 6] (rows' x[m].unsqueeze(0)): [1, count, 6]
    rows_lead = b.tensor(i8, [1, 2, 6], None)
    b.values[rows_lead].val.shape_dynamism = 1
    b.call("aten::index.Tensor_out", self=x, indices=[row_mask], out=rows_lead)
    # the columns of x where a [6] mask is set (x[:, m]: a None index first): [2, count]
    top = b.tensor(i8, [1, 6], None)
    b.call("aten::slice_copy.Tensor_out", self=x, dim=0, start=0, end=1, step=1, out=top)
    col_mask = b.tensor(b8, [6], None)
    b.call("aten::gt.Scalar_out", self=b.view(top, [6]), other=0, out=col_mask)
    cols = b.tensor(i8, [2, 6], None)
    b.values[cols].val.shape_dynamism = 1
    b.call("aten::index.Tensor_out", self=x, indices=[None, col_mask], out=cols)
    b.set_io([x], [picked, f, n, neither, sel, sel_row, sel_deep, rows, rows_lead, cols])
    return b.build()


write_program(bool_program(), os.path.join(out_dir, "bool_small.pte"))


def fused_program():
    """An inverted-residual block as --fuse-expansion writes it: the
    expansion and the stride-2 depthwise in one call, then the projection."""
    rng = np.random.default_rng(7)
    i8, cl = ScalarType.CHAR, CHANNELS_LAST
    b = ProgramBuilder()
    x, e, y = b.tensor(i8, [1, 4, 7, 5], cl), b.tensor(i8, [1, 12, 4, 3], cl), b.tensor(i8, [1, 6, 4, 3], cl)

    def quant(channels):
        return (b.constant(np.full(channels, 1 << 30, np.int32) - np.arange(channels, dtype=np.int32) * 9999),
                b.constant(np.full(channels, -6, np.int32)))
    mult, shift = quant(12)
    em, es = quant(12)
    b.call("ptec::quantized_expand_depthwise.out", input=x,
           weight=b.constant(rng.integers(-128, 128, (1, 3, 3, 12)).astype(np.int8)),
           bias=b.constant(rng.integers(-900, 900, 12).astype(np.int32)), stride=[2, 2], padding=[1, 1],
           dilation=[1, 1], input_offset=2, output_offset=-1, requantize_multipliers=mult, requantize_shifts=shift,
           activation_min=-1, activation_max=120, expand_weight=b.constant(
               rng.integers(-128, 128, (12, 1, 1, 4)).astype(np.int8)), expand_bias=None, expand_input_offset=3,
           expand_output_offset=-2, expand_multipliers=em, expand_shifts=es, expand_min=-2, expand_max=110, out=e)
    pm, ps = quant(6)
    b.call("ptec::quantized_conv2d.out", input=e,
           weight=b.constant(rng.integers(-128, 128, (6, 1, 1, 12)).astype(np.int8)),
           bias=b.constant(np.zeros(6, np.int32)), stride=[1, 1], padding=[0, 0], dilation=[1, 1],
           input_offset=1, output_offset=4, requantize_multipliers=pm, requantize_shifts=ps, activation_min=-128,
           activation_max=127, scratch=b.scratch(0), out=y)
    b.set_io([x], [y])
    return b.build()


write_program(fused_program(), os.path.join(out_dir, "fused_small.pte"))


def half_input_program():
    """A float16 and a bfloat16 model input converted into float32 first
    (_to_dim_order_copy from 16-bit floats), added, and the sum back into
    float16 (a Half output)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    h, g = b.tensor(ScalarType.HALF, [2, 3]), b.tensor(ScalarType.BFLOAT16, [3])
    f, e, s = b.tensor(f32, [2, 3]), b.tensor(f32, [3]), b.tensor(f32, [2, 3])
    out = b.tensor(ScalarType.HALF, [2, 3])
    b.call("dim_order_ops::_to_dim_order_copy.out", self=h, non_blocking=False, dim_order=None, out=f)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=g, non_blocking=False, dim_order=None, out=e)
    b.call("aten::add.out", self=f, other=e, alpha=1, out=s)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=s, non_blocking=False, dim_order=None, out=out)
    b.set_io([h, g], [out])
    return b.build()


write_program(half_input_program(), os.path.join(out_dir, "half_input_small.pte"))


def nms_program():
    """torchvision's nms as ptec runs it: the scores' descending sort, the
    keep flags of ptec::nms.out over that order, and the kept indices
    selected (aten::masked_select.out into a bound-dynamic int64 output)."""
    f32 = ScalarType.FLOAT
    b = ProgramBuilder()
    x, s = b.tensor(f32, [5, 4]), b.tensor(f32, [5])
    sv, o, k = b.tensor(f32, [5]), b.tensor(ScalarType.LONG, [5]), b.tensor(f32, [5])
    m, out = b.tensor(ScalarType.BOOL, [5]), b.tensor(ScalarType.LONG, [5])
    b.values[out].val.shape_dynamism = 1           # DYNAMIC_BOUND
    b.call("aten::sort.values", self=s, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::nms.out", boxes=x, order=o, iou_threshold=0.5, out=k)
    b.call("aten::gt.Scalar_out", self=k, other=0.5, out=m)
    b.call("aten::masked_select.out", self=o, mask=m, out=out)
    b.set_io([x, s], [out])
    return b.build()


write_program(nms_program(), os.path.join(out_dir, "nms_small.pte"))


def batched_nms_program():
    """torchvision's batched_nms past 1,000 boxes as ptec runs it (here 24
    boxes: more than 16 kept reach the introsort's partitions): the scores'
    descending sort, ptec::batched_nms.out's int64 [K] (the kept indices in
    torchvision's order, then -1) over int64 classes, compared >= 0 with an
    int64 constant and selected into a bound-dynamic int64 output."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x, s, c = b.tensor(f32, [24, 4]), b.tensor(f32, [24]), b.tensor(i64, [24])
    sv, o, k = b.tensor(f32, [24]), b.tensor(i64, [24]), b.tensor(i64, [24])
    m, out = b.tensor(ScalarType.BOOL, [24]), b.tensor(i64, [24])
    b.values[out].val.shape_dynamism = 1           # DYNAMIC_BOUND
    b.call("aten::sort.values", self=s, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::batched_nms.out", boxes=x, scores=s, order=o, idxs=c, iou_threshold=0.5, out=k)
    zero = np.zeros(1, np.int64)
    b.call("aten::ge.Tensor_out", self=k, other=b.constant(zero, sizes=zero.shape), out=m)
    b.call("aten::masked_select.out", self=k, mask=m, out=out)
    b.set_io([x, s, c], [out])
    return b.build()


write_program(batched_nms_program(), os.path.join(out_dir, "batched_nms_small.pte"))


def nms_threshold_program():
    """nms and batched_nms with a threshold the program computes (their
    Tensor_out overloads): t = the mean of a float32 input [1, 2] (the
    fuzzer's bytes: any float, NaN too), then the sort of the scores and
    ptec::nms.Tensor_out / ptec::batched_nms.Tensor_out over it."""
    f32, i64 = ScalarType.FLOAT, ScalarType.LONG
    b = ProgramBuilder()
    x, s, c, z = b.tensor(f32, [6, 4]), b.tensor(f32, [6]), b.tensor(i64, [6]), b.tensor(f32, [1, 2])
    t, sv, o = b.tensor(f32, []), b.tensor(f32, [6]), b.tensor(i64, [6])
    k, j = b.tensor(f32, [6]), b.tensor(i64, [6])
    b.call("aten::mean.out", self=z, dim=[0, 1], keepdim=False, dtype=None, out=t)
    b.call("aten::sort.values", self=s, dim=0, descending=True, values=sv, indices=o)
    b.call("ptec::nms.Tensor_out", boxes=x, order=o, iou_threshold=t, out=k)
    b.call("ptec::batched_nms.Tensor_out", boxes=x, scores=s, order=o, idxs=c, iou_threshold=t, out=j)
    b.set_io([x, s, c, z], [k, j])
    return b.build()


write_program(nms_threshold_program(), os.path.join(out_dir, "nms_threshold_small.pte"))
