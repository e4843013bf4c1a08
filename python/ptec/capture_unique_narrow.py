"""torch.unique / unique_consecutive (and the Tensor methods) of int16 /
uint8 / int8 values, without dim, sorted (issue 15:
`torch.unique((x * 4).to(torch.int16))`), with any of return_inverse and
return_counts: capture_unique_integers' stand-in on the int64 copy of the
values (`s.long()`: every narrow value fits int64 exactly, and int64 orders
and compares them as the narrow type does), the sorted values cast back into
the input's dtype (`.to(dtype)`, exact: they are the input's own values)
before the marked selection picks them (`aten::masked_select.out` copies
any element size, so capture_narrow_ints leaves it unwidened); counts and
inverse stay int64, as torch's. A selection x[m] of narrow values is left to capture_nonzero
(refused in one line), as dim= and sorted=False."""
from __future__ import annotations

import torch

NARROW = (torch.int16, torch.uint8, torch.int8)


def narrow_unique(input, ordered: bool, return_inverse: bool, return_counts: bool):
    """capture_unique_integers' result on input.long(), the sorted values
    cast back into input's dtype before they are picked; None when the
    int64 stand-in declines."""
    from .capture_unique_integers import integer_unique
    return integer_unique(input.long(), ordered, return_inverse, return_counts, input.dtype)
