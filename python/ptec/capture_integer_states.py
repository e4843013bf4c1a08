"""Integer and bool buffers a forward writes (capture_buffer_state): a
counter (`self.count += 1`), a step index (`self.idx = (self.idx + 1) % n`,
read as `self.buf[self.idx % n] = x`), an int32 accumulator of argmaxes,
a bool flag (`self.flag = ~self.flag`).

torch keeps such a buffer in its dtype and computes on it in integers; so
does the program. The `state` node takes the buffer's dtype (attrs dtype:
int64, int32, int16, int8, uint8 or bool, as an input of that dtype,
capture_input_dtypes), so capture reads it as an integer value
(capture_indices.int_dtype: integer arithmetic on it is capture_int_math's
`int_math`, exact, with torch's wraparound; a uint8 / int16 / int8 one
through its int64 copy, cast back: capture_narrow_ints) or a bool value
(capture_bool.bool_valued). Its initial value is kept in its dtype (not
the float32 of a float state: int64 past 2^24 stays exact), the float
graph evaluates it as the other integer values (int64 carrier, bool as
torch.bool), and lowering plans a state tensor of that dtype, never
quantized, into which the value written is copied as it is.

Refused in one line naming the buffer: a value of another dtype written
into it (`self.count = self.count + x.argmax()` of an int32 buffer makes
it int64 in torch: the next call's dtype is not the first one's)."""
from __future__ import annotations

import numpy as np
import torch

from .capture_input_dtypes import KEPT

# numpy's dtype of each kept dtype
NUMPY = {"int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
         "bool": np.bool_}


def integer_state(node, tensor) -> None:
    """Marks a state node whose buffer is an integer / bool tensor with its
    dtype and keeps its initial value in it."""
    dtype = KEPT.get(tensor.dtype) if isinstance(tensor, torch.Tensor) else None
    if dtype is None:
        return
    node.attrs["dtype"] = dtype
    node.attrs["init"] = tensor.detach().cpu().numpy().astype(NUMPY[dtype]).copy()


def eval_state(attrs) -> torch.Tensor:
    """The state's value in the float graph: float32 for a float state,
    an integer one carried as int64 (as int_math's values), a bool as bool.
    (Calibration stores the value last written, in its carrier, as init.)"""
    init = torch.as_tensor(np.asarray(attrs["init"]))
    dtype = attrs.get("dtype")
    if dtype is None:
        return init.to(torch.float32)
    if dtype == "bool":
        return init.to(torch.bool)
    # the carrier may be float32 (a bool_to's .long()) or int64: wrap into the dtype as torch's copy does
    return init.to(torch.int64).to(getattr(torch, dtype)).to(torch.int64)


def lower_state(ctx, n, scalar_types):
    """A planned state tensor of the buffer's dtype holding its initial value."""
    from .lowered import Act
    dtype = n.attrs["dtype"]
    init = np.asarray(n.attrs["init"]).astype(NUMPY[dtype]).reshape(n.shape)
    v = ctx.b.state(scalar_types[dtype], n.shape, np.ascontiguousarray(init).tobytes())
    return Act(v, [int(d) for d in n.shape], scalar_types[dtype])


def state_source(ctx, n, error):
    """(value, state) of a write: the integer / bool value copied as it is."""
    state = ctx.state_tensors[n.inputs[0]]
    value = ctx.get(n.inputs[1])
    if value.dtype != state.dtype or list(value.sizes) != list(state.sizes):
        raise error(f"operator not supported: buffer {n.attrs.get('ptec_buffer_state', n.inputs[0])} is "
                    f"{state_dtype_name(ctx, n)} {list(state.sizes)} but the forward writes a value of another "
                    "dtype or shape into it (torch's next call would read that); keep the buffer's dtype and shape")
    return value, state


def state_dtype_name(ctx, n) -> str:
    return ctx.g.node(n.inputs[0]).attrs.get("dtype", "float32")
