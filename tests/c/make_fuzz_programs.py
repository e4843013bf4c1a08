"""Writes the ptec-built programs that the hostile-file test corrupts, next
to the upstream samples: a DS-CNN for each ISA flavour (linear with bias, and
with kernel_sum), so that every cortex_m kernel's prepare() meets damaged
arguments; and a small fp32 network on the portable kernels (conv, max-pool
with indices, cat through a TensorList, mean, softmax, view, permute,
slice), so that theirs meet damaged arguments too; and a small program of
index results (argmax, argmin, the int64-to-float32 copy, an embedding of
int64 ids)."""
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
    b.set_io([x], [v])
    return b.build()


write_program(portable_program(), os.path.join(out_dir, "portable_small.pte"))


def index_program():
    """argmax over a dim into int64, converted to float32; argmin kept as an
    int64 output: the kernels of model outputs that are class indices; an
    embedding of int64 token ids; ids computed from floats, pow and atan2,
    and a half output."""
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
    # ids computed from the float input (x.long(): the fuzzer's 0x3F bytes are
    # 0.75, id 0), the float functions of two tensors and the half output
    k = b.tensor(i64, [2, 5], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=x, non_blocking=False, dim_order=None, out=k)
    picked = b.tensor(ScalarType.CHAR, [2, 5, 4], None)
    b.call("aten::embedding.out", weight=b.constant(np.arange(-20, 20, dtype=np.int8).reshape(10, 4)), indices=k,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=picked)
    p = b.tensor(f32, [2, 5], None)
    b.call("aten::pow.Tensor_Tensor_out", self=x, exponent=b.constant(np.full([5], 1.5, np.float32)), out=p)
    a = b.tensor(f32, [2, 5], None)
    b.call("aten::atan2.out", self=p, other=x, out=a)
    h = b.tensor(ScalarType.HALF, [2, 5], None)
    b.call("dim_order_ops::_to_dim_order_copy.out", self=a, non_blocking=False, dim_order=None, out=h)
    b.set_io([x], [f, j, rows, picked, h])
    return b.build()


write_program(index_program(), os.path.join(out_dir, "index_small.pte"))
