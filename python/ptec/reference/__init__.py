"""Integer reference implementations of ptec's kernels, in numpy.

`ptec.reference.cortex_m` holds the `cortex_m::` operators, written from
docs/shared spec cortex-m-ops.md (not from the C code), so that the C
kernels and the AOT compiler's numerics checks have an independent oracle.
"""

from . import cortex_m  # noqa: F401
