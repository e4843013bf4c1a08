"""The factorisations torch returns with LAPACK's extra results
(issue 15), for capture_matrix_functions' element readers:

- torch.geqrf(A) / Tensor.geqrf (a, tau) of A [..., m, n], any m, n >= 1:
  one node `linalg_qr` on A viewed as [B, m, n], which 2 (a: R on and
  above the diagonal, each Householder vector below it, its leading 1 not
  stored) or 3 (tau [B, k], k = min(m, n)), lowered to ptec::linalg_qr.out:
  the same reflections as torch.linalg.qr's Q and R there, written in
  LAPACK dlarfg's normalisation (beta = -sign(alpha) ||x||, tau = (beta -
  alpha) / beta, v scaled by 1 / (alpha - beta); tau = 0 where the column
  below the diagonal is already 0), so torch.linalg.householder_product(a,
  tau) is Q;
- torch.linalg.cholesky_ex(A, upper=, check_errors=) (L, info) of A
  [..., n, n]: L a `linalg_cholesky` node (ptec::linalg_cholesky.out, as
  torch.linalg.cholesky), info a `linalg_cholesky_info` node (int32 [B],
  ptec::linalg_cholesky_info.out: the same columns, the 1-based order of
  the first pivot <= 0 or NaN, else 0), viewed to A's batch shape by an
  integer view. Where info > 0, ptec's L is NaN from that column on (its
  earlier columns the factor's); torch leaves LAPACK potrf's partial work
  there, which depends on the LAPACK it links (the reference LAPACK's
  recursive potrf2 differs from an unblocked potf2 or MKL's), so that part
  of L is not matched. check_errors=True does not raise in a program: info
  still says which matrices failed.
"""
from __future__ import annotations

from typing import List

import numpy as np

from .ir import Node

# result index or field -> ptec::linalg_qr.out's which (geqrf) / the node (cholesky_ex)
GEQRF_RESULTS = {0: 2, "a": 2, 1: 3, "tau": 3}
CHOLESKY_EX_RESULTS = {0: "L", "L": "L", 1: "info", "info": "info"}


def compact_element(s, family: str, got, index, out) -> List[Node]:
    """The nodes of result `index` of torch.geqrf or torch.linalg.cholesky_ex
    (family "geqrf" / "cholesky_ex"), made torch's shape `out`; s is
    capture_matrix_functions' fp32 steps (imported here lazily: that module
    calls this one)."""
    from . import capture_matrix_functions as M
    if family == "geqrf":
        which = GEQRF_RESULTS.get(index)
        if which is None:
            raise M._Refused(f"torch.geqrf()[{index!r}]: ptec computes a and tau")
        shape, m, n = M._matrices(got.get("A"), "torch.geqrf")
        batch = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        mats = s("reshape", [got["A"].name], target_shape=[batch, m, n])
        return M._finish(s, s("linalg_qr", [mats], which=which, complete=False), out)
    what = "torch.linalg.cholesky_ex"
    result = CHOLESKY_EX_RESULTS.get(index)
    if result is None:
        raise M._Refused(f"{what}()[{index!r}]: ptec computes L and info")
    M._flag(got, "check_errors", False, what)
    upper = M._flag(got, "upper", False, what)
    A = got.get("A")
    shape, n = M._square(A, what, M.LU_MAX_N)
    mats, batch = M._matrices_of(s, A, shape)
    if result == "L":
        return M._finish(s, s("linalg_cholesky", [mats], upper=upper), out)
    info = s("linalg_cholesky_info", [mats], upper=upper)
    if list(out) != [batch]:
        s.int8("int_math", [info], kind="view", dtype="int32", shape=list(out))
    return s.done()
