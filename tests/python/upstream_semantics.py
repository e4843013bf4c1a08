"""ptec.interpreter with the indexing of upstream ExecuTorch's portable
kernels, to see what a program computes on upstream's runtime (issue 18).

Facts (kernels/portable/cpu, v1.5): `_softmax`, `cat`, `permute_copy`,
`slice_copy` and `view_copy` index their tensors as contiguous arrays of
their sizes whatever the dim order; the element-wise binary ops, when the
shapes differ (ignoring leading 1s), read their inputs by their strides
(right) but write the output at its linear index, as if it were contiguous;
with equal shapes they walk the buffers. Every other operator addresses
tensors through their dim order, as the interpreter does. The layout rules
that make upstream refuse a call are ptec.pte.upstream_rules' business; this
module only shows the numbers."""
import contextlib

import numpy as np

from ptec import interpreter

AS_CONTIGUOUS = ("aten::_softmax.out", "aten::cat.out", "aten::permute_copy.out",
                 "aten::slice_copy.Tensor_out", "aten::view_copy.out")
BROADCASTING = ("aten::add.out", "aten::sub.out", "aten::mul.out", "aten::div.out")


def _strip_leading_ones(sizes):
    sizes = list(sizes)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    return sizes


class _UpstreamMemory(interpreter._Memory):
    mode = None             # None, "contiguous" or "broadcast", for the current call
    read_sizes = []

    def logical(self, index, t):
        if _UpstreamMemory.mode == "contiguous":
            return self.physical(index, t).reshape(t.sizes)
        if _UpstreamMemory.mode == "broadcast":
            _UpstreamMemory.read_sizes.append(list(t.sizes))
        return super().logical(index, t)

    def write_logical(self, index, t, arr):
        mode, reads = _UpstreamMemory.mode, _UpstreamMemory.read_sizes
        _UpstreamMemory.mode, _UpstreamMemory.read_sizes = None, []
        linear = mode == "contiguous" or (mode == "broadcast" and any(
            _strip_leading_ones(s) != _strip_leading_ones(t.sizes) for s in reads))
        if linear:
            self.write_physical(index, t, np.asarray(arr).reshape(t.sizes))
        else:
            super().write_logical(index, t, arr)


def _in_mode(fn, mode):
    def run(arg, named, out):
        _UpstreamMemory.mode, _UpstreamMemory.read_sizes = mode, []
        return fn(arg, named, out)
    return run


@contextlib.contextmanager
def upstream_indexing():
    """Within the block, ptec.interpreter.run_program indexes as upstream's
    portable kernels do."""
    saved_memory, saved_table = interpreter._Memory, dict(interpreter._PORTABLE)
    interpreter._Memory = _UpstreamMemory
    for key in AS_CONTIGUOUS:
        interpreter._PORTABLE[key] = _in_mode(saved_table[key], "contiguous")
    for key in BROADCASTING:
        interpreter._PORTABLE[key] = _in_mode(saved_table[key], "broadcast")
    try:
        yield
    finally:
        interpreter._Memory = saved_memory
        interpreter._PORTABLE.clear()
        interpreter._PORTABLE.update(saved_table)
        _UpstreamMemory.mode, _UpstreamMemory.read_sizes = None, []


def run_as_upstream(program, inputs):
    with upstream_indexing():
        return interpreter.run_program(program, inputs)
