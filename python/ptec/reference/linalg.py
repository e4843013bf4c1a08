"""Reference numerics of ptec::linalg_svdvals.out, linalg_eigvalsh.out,
linalg_det.out, linalg_solve.out, linalg_lu.out and linalg_ldl_factor.out (numpy); det, solve and lu below by the
LU with partial pivoting of src/kernels/portable/linalg_lu.h. First: the singular values of each matrix of x [..., m, n], largest
first, by the one-sided Jacobi iteration
src/kernels/portable/op_linalg_svdvals.c's comment describes, and the
eigenvalues of symmetric ones, ascending, by op_linalg_eigvalsh.c's cyclic
Jacobi; step for step in float32 (+, -, *, / and sqrt are correctly
rounded in numpy as in C, sums taken in the same order), so its bytes are
the C kernel's. The matrices of a batch run in lockstep: a matrix whose
sweep rotated nothing stays unchanged by every later sweep, which is what
the kernel's early stop leaves.

The oracle of the tests is torch.linalg.svdvals / eigvalsh, not this module."""
from __future__ import annotations

import math

import numpy as np

F32 = np.float32
# the kernel's constants: MAX_SWEEPS, FLT_EPSILON, the |zeta| beyond which t = 1 / (2 zeta)
MAX_SWEEPS = 30
EPSILON = F32(2.0 ** -23)
ZETA_LIMIT = F32(2.0 ** 30)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[B, p] . [B, p] -> [B]: float32 sums over p in order, from 0.0 as
    the kernel's (np.add.accumulate rounds each partial sum; np.sum would
    add pairwise)."""
    terms = np.concatenate([np.zeros((a.shape[0], 1), F32), (a * b).astype(F32)], axis=1)
    return np.add.accumulate(terms, axis=1, dtype=F32)[:, -1]


def svdvals(x) -> np.ndarray:
    x = np.asarray(x, F32)
    w, _, e, bad = _one_sided(x, False)
    k = w.shape[1]
    norms = np.stack([np.sqrt(_dot(w[:, j, :], w[:, j, :])) for j in range(k)], axis=1).astype(F32)
    sv = np.ldexp(norms, e[:, None]).astype(F32)
    sv = np.sort(sv, axis=1)[:, ::-1]
    sv = np.where(bad[:, None], F32(np.nan), sv).astype(F32)
    return np.ascontiguousarray(sv).reshape(x.shape[:-2] + (k,))


def _one_sided(x: np.ndarray, vectors: bool):
    """op_linalg_svdvals.c's (and op_linalg_svd.c's) iteration on every
    matrix of x: (W [B, k, p] scaled, K [B, k, k] or None, the exponents
    [B], non-finite mask [B])."""
    if x.ndim < 2 or x.shape[-1] < 1 or x.shape[-2] < 1:
        raise ValueError("svdvals: x must be [..., m, n] with m, n >= 1")
    m, n = x.shape[-2:]
    a = x.reshape((-1, m, n))
    k, p = min(m, n), max(m, n)
    # W [B, k, p]: column j of A (row j when A is wide), as the kernel's scratch
    w = np.ascontiguousarray(np.swapaxes(a, 1, 2) if m >= n else a)
    bad = ~np.isfinite(a).all(axis=(1, 2))
    big = np.where(bad, F32(0), np.abs(np.where(np.isfinite(a), a, F32(0))).max(axis=(1, 2)))
    zero = big == 0
    _, e = np.frexp(np.where(zero, F32(1), big).astype(F32))
    e = e.astype(np.int32)
    w = np.where((bad | zero)[:, None, None], F32(0), w).astype(F32)
    w = np.ldexp(w, -e[:, None, None]).astype(F32)
    tol = F32(p) * EPSILON
    kv = np.broadcast_to(np.eye(k, dtype=F32), (w.shape[0], k, k)).copy() if vectors else None
    with np.errstate(all="ignore"):
        for _ in range(MAX_SWEEPS):
            rotated = np.zeros(w.shape[0], bool)
            for j in range(k - 1):
                for l in range(j + 1, k):
                    xj, yl = w[:, j, :], w[:, l, :]
                    alpha, beta, gamma = _dot(xj, xj), _dot(yl, yl), _dot(xj, yl)
                    rot = np.abs(gamma) > tol * np.sqrt(alpha) * np.sqrt(beta)
                    if not rot.any():
                        continue
                    zeta = (beta - alpha) / (F32(2) * gamma)
                    mag = F32(1) / (np.abs(zeta) + np.sqrt(F32(1) + zeta * zeta))
                    t = np.where(np.abs(zeta) > ZETA_LIMIT, F32(0.5) / zeta, np.where(zeta < 0, -mag, mag))
                    c = F32(1) / np.sqrt(F32(1) + t * t)
                    s = c * t
                    c, s = c[:, None], s[:, None]
                    nx, ny = c * xj - s * yl, s * xj + c * yl
                    w[:, j, :] = np.where(rot[:, None], nx, xj)
                    w[:, l, :] = np.where(rot[:, None], ny, yl)
                    if vectors:
                        vj, vl = kv[:, j, :].copy(), kv[:, l, :].copy()
                        kv[:, j, :] = np.where(rot[:, None], c * vj - s * vl, vj)
                        kv[:, l, :] = np.where(rot[:, None], s * vj + c * vl, vl)
                    rotated |= rot
            if not rotated.any():
                break
    return w, kv, e, bad


def eigvalsh(x, upper: bool) -> np.ndarray:
    """ptec::linalg_eigvalsh.out: the eigenvalues of each symmetric matrix
    of x [..., n, n] (its lower triangle read, or the upper one), ascending,
    by op_linalg_eigvalsh.c's cyclic Jacobi, step for step in float32."""
    x = np.asarray(x, F32)
    diag, _, bad = _jacobi(x, upper, False)
    ev = np.sort(diag, axis=1, kind="stable")
    ev = np.where(bad[:, None], F32(np.nan), ev).astype(F32)
    return np.ascontiguousarray(ev).reshape(x.shape[:-1])


def eigh_vectors(x, upper: bool) -> np.ndarray:
    """ptec::linalg_eigh_vectors.out: the eigenvectors (columns) of each
    symmetric matrix of x [..., n, n] in eigvalsh's ascending order, by
    op_linalg_eigh_vectors.c's Jacobi (eigvalsh's rotations, accumulated),
    each column's first largest-magnitude component made positive."""
    x = np.asarray(x, F32)
    diag, v, bad = _jacobi(x, upper, True)
    order = np.argsort(diag, axis=1, kind="stable")          # the kernel's stable insertion sort
    v = np.take_along_axis(v, order[:, None, :], axis=2)
    top = np.argmax(np.abs(v), axis=1)                         # the first largest |component| of each column
    flip = np.take_along_axis(v, top[:, None, :], axis=1) < 0
    v = np.where(flip, -v, v).astype(F32)
    v = np.where(bad[:, None, None], F32(np.nan), v).astype(F32)
    return np.ascontiguousarray(v).reshape(x.shape)


def _jacobi(x: np.ndarray, upper: bool, vectors: bool):
    """op_linalg_eigvalsh.c's (and op_linalg_eigh_vectors.c's) iteration:
    (the diagonal scaled back [B, n], V [B, n, n] or None, non-finite mask [B])."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 1:
        raise ValueError("eigvalsh: x must be [..., n, n] with n >= 1")
    n = x.shape[-1]
    a = x.reshape((-1, n, n))
    tri = np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool))
    read = np.where(tri, a, F32(0))
    bad = ~np.isfinite(read).all(axis=(1, 2))
    big = np.where(bad, F32(0), np.abs(np.where(np.isfinite(read), read, F32(0))).max(axis=(1, 2)))
    zero = big == 0
    frac, e = np.frexp(np.where(zero, F32(1), big).astype(F32))
    frac, e = frac.astype(F32), e.astype(np.int32)
    # the symmetric copy of the triangle read, scaled
    sym = np.where(tri, read, np.swapaxes(read, 1, 2))
    w = np.where((bad | zero)[:, None, None], F32(0), sym).astype(F32)
    w = np.ldexp(w, -e[:, None, None]).astype(F32)
    tol = F32(n) * EPSILON * frac
    v = np.broadcast_to(np.eye(n, dtype=F32), w.shape).copy() if vectors else None
    with np.errstate(all="ignore"):
        for _ in range(MAX_SWEEPS):
            rotated = np.zeros(w.shape[0], bool)
            for p in range(n - 1):
                for q in range(p + 1, n):
                    apq = w[:, p, q].copy()
                    rot = np.abs(apq) > tol
                    if not rot.any():
                        continue
                    app, aqq = w[:, p, p].copy(), w[:, q, q].copy()
                    theta = (aqq - app) / (F32(2) * apq)
                    mag = F32(1) / (np.abs(theta) + np.sqrt(F32(1) + theta * theta))
                    t = np.where(np.abs(theta) > ZETA_LIMIT, F32(0.5) / theta, np.where(theta < 0, -mag, mag))
                    c = F32(1) / np.sqrt(F32(1) + t * t)
                    s = c * t
                    shift = t * apq
                    w[:, p, p] = np.where(rot, app - shift, app)
                    w[:, q, q] = np.where(rot, aqq + shift, aqq)
                    w[:, p, q] = np.where(rot, F32(0), apq)
                    w[:, q, p] = np.where(rot, F32(0), apq)
                    others = [r for r in range(n) if r not in (p, q)]
                    if others:
                        ar, br = w[:, others, p].copy(), w[:, others, q].copy()
                        cc, ss, rr = c[:, None], s[:, None], rot[:, None]
                        ap = np.where(rr, cc * ar - ss * br, ar)
                        bq = np.where(rr, ss * ar + cc * br, br)
                        w[:, others, p] = ap
                        w[:, p, others] = ap
                        w[:, others, q] = bq
                        w[:, q, others] = bq
                    if vectors:
                        vp, vq = v[:, :, p].copy(), v[:, :, q].copy()
                        cc, ss, rr = c[:, None], s[:, None], rot[:, None]
                        v[:, :, p] = np.where(rr, cc * vp - ss * vq, vp)
                        v[:, :, q] = np.where(rr, ss * vp + cc * vq, vq)
                    rotated |= rot
            if not rotated.any():
                break
    diag = np.ldexp(np.diagonal(w, axis1=1, axis2=2).astype(F32), e[:, None]).astype(F32)
    return diag, v, bad


def _lu(a: np.ndarray, rhs=None, pivots=None) -> np.ndarray:
    """linalg_lu.h's ptec_lu_factor_rect on every matrix of a [B, m, n]
    (float32) in lockstep, in place (and on rhs [B, m, k]); each column's
    pivot row (0-based) into pivots [B, min(m, n)] when given; the parities
    of the row swaps [B]. The pivot is the first largest |a_ik| from row k
    down, a NaN never larger (the kernel's strict >: a NaN on the diagonal
    stays the pivot, a NaN below it is passed over)."""
    batch, m, n = a.shape
    at = np.arange(batch)
    parity = np.zeros(batch, bool)
    with np.errstate(all="ignore"):
        for k in range(min(m, n)):
            col = np.abs(a[:, k:, k])
            p = k + np.argmax(np.where(np.isnan(col), F32(-1), col), axis=1)
            p = np.where(np.isnan(col[:, 0]), k, p)
            if pivots is not None:
                pivots[:, k] = p
            for t in (a, rhs) if rhs is not None else (a,):
                row_k, row_p = t[at, k].copy(), t[at, p].copy()
                t[at, k], t[at, p] = row_p, row_k
            parity ^= p != k
            pivot = a[:, k, k].copy()
            live = np.abs(pivot) != 0
            if k + 1 == m or not live.any():
                continue
            l = (a[:, k + 1:, k] / pivot[:, None]).astype(F32)
            keep = live[:, None]
            a[:, k + 1:, k] = np.where(keep, l, a[:, k + 1:, k])
            a[:, k + 1:, k + 1:] = np.where(keep[:, :, None], a[:, k + 1:, k + 1:] - l[:, :, None] * a[:, k, None, k + 1:],
                                            a[:, k + 1:, k + 1:])
            if rhs is not None:
                rhs[:, k + 1:, :] = np.where(keep[:, :, None], rhs[:, k + 1:, :] - l[:, :, None] * rhs[:, k, None, :],
                                             rhs[:, k + 1:, :])
    return parity


def lu(x, which: int) -> np.ndarray:
    """ptec::linalg_lu.out: of each matrix of x [..., m, n], k = min(m, n),
    by op_linalg_lu.c's LU (linalg_lu.h's steps in float32): which 0 the
    packed LU [..., m, n], 1 the pivots [..., k] (int32, 1-based), 2 P
    [..., m, m], 3 L [..., m, k] (unit diagonal), 4 U [..., k, n]; entries
    copied as they are (a -0.0 stays -0.0, as the kernel's copies)."""
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-2] < 1 or x.shape[-1] < 1:
        raise ValueError("lu: x must be [..., m, n] with m, n >= 1")
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    a = np.array(x.reshape((-1, m, n)), F32)
    piv = np.zeros((a.shape[0], k), np.int64)
    _lu(a, pivots=piv)
    which = int(which)
    if which == 0:
        return a.reshape(x.shape)
    if which == 1:
        return (piv + 1).astype(np.int32).reshape(batch + (k,))
    if which == 2:
        out = np.broadcast_to(np.eye(m, dtype=F32), (a.shape[0], m, m)).copy()
        at = np.arange(a.shape[0])
        for j in range(k - 1, -1, -1):
            row_j, row_p = out[at, j].copy(), out[at, piv[:, j]].copy()
            out[at, j], out[at, piv[:, j]] = row_p, row_j
        return out.reshape(batch + (m, m))
    r, c = np.arange(m)[:, None], np.arange(n)[None, :]
    if which == 3:
        low = np.where(c < r, a, np.where(c == r, F32(1), F32(0)).astype(F32))[:, :, :k]
        return low.astype(F32).reshape(batch + (m, k))
    up = np.where(c >= r, a, F32(0))[:, :k, :]
    return up.astype(F32).reshape(batch + (k, n))


# Bunch-Kaufman's alpha, (1 + sqrt(17)) / 8 evaluated in float32 (the kernel's LDL_ALPHA)
LDL_ALPHA = F32((F32(1) + np.sqrt(F32(17))) / F32(8))


def _first_max(v: np.ndarray):
    """(position, value) of v's first largest entry by a strict > scan from
    the first (a NaN never larger; a NaN first stays): the kernel's scan."""
    if np.isnan(v[0]):
        return 0, v[0]
    w = np.where(np.isnan(v), F32(-1), v)
    p = int(np.argmax(w))
    return p, v[p]


def _ldl_one(a: np.ndarray):
    """op_linalg_ldl_factor.c's Bunch-Kaufman LDL^T on one n x n float32
    matrix (its lower triangle read), in place: (pivots 1-based, LAPACK's
    convention, info). The same float32 operations, each column's update
    vectorised over its rows (element-wise, as the kernel's loop)."""
    n = a.shape[0]
    piv = np.zeros(n, np.int64)
    info = 0
    k = 0
    with np.errstate(all="ignore"):
        while k < n:
            step = 1
            absakk = np.abs(a[k, k])
            imax, colmax = k, F32(0)
            if k + 1 < n:
                p, colmax = _first_max(np.abs(a[k + 1:, k]))
                imax = k + 1 + p
            if (absakk == 0 and colmax == 0) or np.isnan(absakk):
                if info == 0:
                    info = k + 1
                piv[k] = k + 1
                k += 1
                continue
            kp = k
            if not absakk >= LDL_ALPHA * colmax:
                # the largest |entry| of row / column imax off its diagonal, within the trailing matrix
                _, rowmax = _first_max(np.abs(a[imax, k:imax]))
                if imax + 1 < n:
                    _, below = _first_max(np.abs(a[imax + 1:, imax]))
                    if below > rowmax:
                        rowmax = below
                if absakk >= F32(LDL_ALPHA * colmax) * F32(colmax / rowmax):
                    kp = k
                elif np.abs(a[imax, imax]) >= LDL_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:
                # swap rows and columns kk and kp of the trailing lower triangle
                t = a[kp + 1:, kk].copy()
                a[kp + 1:, kk] = a[kp + 1:, kp]
                a[kp + 1:, kp] = t
                t = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
                a[kp, kk + 1:kp] = t
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if step == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if step == 1:
                r = F32(F32(1) / a[k, k])
                x = a[k + 1:, k].copy()
                w = (x * r).astype(F32)
                for j in range(k + 1, n):
                    a[j:, j] = (a[j:, j] - (x[j - k - 1:] * w[j - k - 1]).astype(F32)).astype(F32)
                a[k + 1:, k] = w
                piv[k] = kp + 1
            else:
                if k + 2 < n:
                    d21 = a[k + 1, k]
                    d11 = F32(a[k + 1, k + 1] / d21)
                    d22 = F32(a[k, k] / d21)
                    t = F32(F32(1) / F32(F32(d11 * d22) - F32(1)))
                    d21 = F32(t / d21)
                    x, y = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                    wk = (d21 * ((d11 * x).astype(F32) - y).astype(F32)).astype(F32)
                    wk1 = (d21 * ((d22 * y).astype(F32) - x).astype(F32)).astype(F32)
                    for j in range(k + 2, n):
                        o = j - k - 2
                        upd = ((x[o:] * wk[o]).astype(F32) + (y[o:] * wk1[o]).astype(F32)).astype(F32)
                        a[j:, j] = (a[j:, j] - upd).astype(F32)
                    a[k + 2:, k] = wk
                    a[k + 2:, k + 1] = wk1
                piv[k] = piv[k + 1] = -(kp + 1)
            k += step
    return piv, info


def ldl_factor(x, which: int) -> np.ndarray:
    """ptec::linalg_ldl_factor.out: of each matrix of x [..., n, n] (its
    lower triangle read, as symmetric), by op_linalg_ldl_factor.c's
    Bunch-Kaufman LDL^T in float32: which 0 LD [..., n, n] (L's multipliers
    and D's blocks on and below the diagonal, zeros above it), 1 the pivots
    [..., n] (int32, 1-based, a 2x2 block's two negative), 2 info [...]
    (int32: the first zero column, 1-based, or 0)."""
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 1:
        raise ValueError("ldl_factor: x must be [..., n, n] with n >= 1")
    n = x.shape[-1]
    batch = x.shape[:-2]
    mats = np.array(x.reshape((-1, n, n)), F32)
    piv = np.zeros((mats.shape[0], n), np.int64)
    info = np.zeros(mats.shape[0], np.int64)
    for b in range(mats.shape[0]):
        piv[b], info[b] = _ldl_one(mats[b])
    which = int(which)
    if which == 1:
        return piv.astype(np.int32).reshape(batch + (n,))
    if which == 2:
        return info.astype(np.int32).reshape(batch)
    low = np.tril(np.ones((n, n), bool))
    return np.where(low, mats, F32(0)).astype(F32).reshape(x.shape)


def _square(x, what: str):
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 1:
        raise ValueError(f"{what}: x must be [..., n, n] with n >= 1")
    n = x.shape[-1]
    a = x.reshape((-1, n, n))
    return x, n, a, ~np.isfinite(a).all(axis=(1, 2))


def det(x, mode: int) -> np.ndarray:
    """ptec::linalg_det.out: mode 0 det, 1 its sign, 2 log |det|, 3 log det
    of each matrix of x [..., n, n], by op_linalg_det.c's LU in float32
    (log |det|: the double sum of math.log |pivot|, the C library's log as
    the kernel's, rounded once)."""
    x, n, a, bad = _square(x, "det")
    w = np.where(bad[:, None, None], F32(0), a).astype(F32)
    parity = _lu(w)
    out = np.empty(w.shape[0], F32)
    for b in range(w.shape[0]):
        d, logabs, negative, zero = F32(1), 0.0, bool(parity[b]), False
        for k in range(n):
            u = w[b, k, k]
            with np.errstate(all="ignore"):
                d = F32(d * u)
            if u == 0:
                zero = True
            else:
                negative ^= bool(u < 0)
                logabs += math.log(float(abs(u)))
        sign = F32(0) if zero else F32(-1 if negative else 1)
        logabsdet = F32(-np.inf) if zero else F32(logabs)
        value = [-d if parity[b] else d, sign, logabsdet, F32(np.nan) if sign < 0 else logabsdet][int(mode)]
        out[b] = F32(np.nan) if bad[b] else value
    return out.reshape(x.shape[:-2])


def solve(x, rhs) -> np.ndarray:
    """ptec::linalg_solve.out: A^-1 B for A of x [..., n, n] and B of rhs
    [..., n, k] (x's batch dims or all 1), by op_linalg_solve.c's LU and
    back substitution in float32."""
    x, n, a, bad = _square(x, "solve")
    rhs = np.asarray(rhs, F32)
    k = rhs.shape[-1]
    bs = rhs.reshape((-1, n, k))
    if bs.shape[0] != a.shape[0]:
        bs = np.broadcast_to(bs, (a.shape[0], n, k))
    w = np.where(bad[:, None, None], F32(0), a).astype(F32)
    y = np.array(bs, F32)
    _lu(w, y)
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1):
            v = y[:, i, :].copy()
            for j in range(i + 1, n):
                v = (v - w[:, i, j, None] * y[:, j, :]).astype(F32)
            y[:, i, :] = v / w[:, i, i, None]
    y = np.where(bad[:, None, None], F32(np.nan), y).astype(F32)
    return y.reshape(x.shape[:-2] + (n, k))


def _cholesky_columns(low: np.ndarray):
    """linalg_cholesky.h's ptec_cholesky_columns on every lower triangle of
    low [B, n, n] (float32 in its order): (L with NaN in the lower triangle
    from the first pivot <= 0 or NaN on, info int32 [B]: that pivot's
    1-based order, or 0)."""
    B, n = low.shape[0], low.shape[-1]
    L = np.zeros_like(low)
    info = np.zeros(B, np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            d = low[:, j, j].copy()
            for k in range(j):
                d = (d - L[:, j, k] * L[:, j, k]).astype(F32)
            fail = ~(d > 0) & (info == 0)
            info[fail] = j + 1
            ljj = np.sqrt(np.where(d > 0, d, F32(1))).astype(F32)
            L[:, j, j] = ljj
            if j + 1 < n:
                v = low[:, j + 1:, j].copy()
                for k in range(j):
                    v = (v - L[:, j + 1:, k] * L[:, j, k, None]).astype(F32)
                L[:, j + 1:, j] = (v / ljj[:, None]).astype(F32)
    cols = np.arange(n)
    gone = (info[:, None] > 0) & (cols[None, :] >= info[:, None] - 1)          # [B, column]
    nan = gone[:, None, :] & np.tril(np.ones((n, n), bool))[None]
    return np.where(nan, F32(np.nan), L).astype(F32), info


def cholesky(x, upper: bool) -> np.ndarray:
    """ptec::linalg_cholesky.out: L of each matrix of x [..., n, n] (its
    lower triangle read), or U = L^T (its upper one read), by
    op_linalg_cholesky.c's column order in float32 (linalg_cholesky.h: NaN
    in the factor's triangle from the first pivot <= 0 on); NaN for a
    matrix whose read triangle holds an inf or a NaN."""
    x, n, a, _ = _square(x, "cholesky")
    low = np.swapaxes(a, 1, 2) if upper else a
    tri = np.tril(np.ones((n, n), bool))
    bad = ~np.isfinite(np.where(tri, low, F32(0))).all(axis=(1, 2))
    low = np.where(bad[:, None, None], F32(0), low).astype(F32)
    L, _ = _cholesky_columns(low)
    out = np.swapaxes(L, 1, 2) if upper else L
    out = np.where(bad[:, None, None], F32(np.nan), out).astype(F32)
    return np.ascontiguousarray(out).reshape(x.shape)


def cholesky_info(x, upper: bool) -> np.ndarray:
    """ptec::linalg_cholesky_info.out: torch.linalg.cholesky_ex's info of
    each matrix of x [..., n, n] (int32 x.shape[:-2]): 0, or the 1-based
    order of the first pivot <= 0 or NaN of linalg_cholesky.h's columns
    (an inf or a NaN computed through)."""
    x, n, a, _ = _square(x, "cholesky")
    low = np.swapaxes(a, 1, 2) if upper else a
    _, info = _cholesky_columns(np.ascontiguousarray(low).astype(F32))
    return info.reshape(x.shape[:-2])


def triangular_solve(x, rhs, upper: bool, transpose: bool, unitriangular: bool) -> np.ndarray:
    """ptec::linalg_triangular_solve.out: op(T)^-1 B for T of x [..., n, n]
    (its upper or lower triangle read; op(T) = T^T when transpose; a unit
    diagonal not read when unitriangular) and B of rhs [..., n, k] (x's
    batch dims or all 1), by op_linalg_triangular_solve.c's substitution
    order in float32."""
    x, n, t, _ = _square(x, "triangular_solve")
    rhs = np.asarray(rhs, F32)
    k = rhs.shape[-1]
    bs = rhs.reshape((-1, n, k))
    if bs.shape[0] != t.shape[0]:
        bs = np.broadcast_to(bs, (t.shape[0], n, k))
    read = np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool))
    if unitriangular:
        read &= ~np.eye(n, dtype=bool)
    bad = ~np.isfinite(np.where(read, t, F32(0))).all(axis=(1, 2))
    op = np.swapaxes(t, 1, 2) if transpose else t
    forward = bool(upper) == bool(transpose)
    order = list(range(n)) if forward else list(range(n - 1, -1, -1))
    y = np.zeros((t.shape[0], n, k), F32)
    with np.errstate(all="ignore"):
        for step, i in enumerate(order):
            v = bs[:, i, :].copy()
            for j in order[:step]:
                v = (v - op[:, i, j, None] * y[:, j, :]).astype(F32)
            y[:, i, :] = v if unitriangular else v / op[:, i, i, None]
    y = np.where(bad[:, None, None], F32(np.nan), y).astype(F32)
    return y.reshape(x.shape[:-2] + (n, k))



def _first_top_negative(v: np.ndarray) -> bool:
    """Whether column v's first largest |component| is negative."""
    return bool(v[int(np.argmax(np.abs(v)))] < 0)


def _complete(cols: np.ndarray, c: int) -> None:
    """op_linalg_svd.c's complete(): column c of cols [C, len] (rows are
    columns here) the first e_i keeping a norm above 1/2 after Gram-Schmidt
    against columns 0..c-1 (twice), normalised; float32 in the kernel's order."""
    length = cols.shape[1]
    for i in range(length):
        v = np.zeros(length, F32)
        v[i] = F32(1)
        for _ in range(2):
            for j in range(c):
                d = _dot(cols[j][None], v[None])[0]
                v = (v - d * cols[j]).astype(F32)
        norm = np.sqrt(_dot(v[None], v[None])[0]).astype(F32)
        if norm > F32(0.5):
            cols[c] = (v / norm).astype(F32)
            return


def svd(x, which: int, full_matrices: bool, rtol: float) -> np.ndarray:
    """ptec::linalg_svd.out: U (which 0), Vh (1) or the pseudo-inverse (2)
    of each matrix of x [..., m, n], by op_linalg_svd.c: svdvals' Jacobi
    with K accumulated, the columns ordered as the values, completed and
    sign-normalised, float32 in the kernel's order."""
    x = np.asarray(x, F32)
    m, n = x.shape[-2:]
    k, p = min(m, n), max(m, n)
    tall = m >= n
    w, kv, e, bad = _one_sided(x, True)
    out_shape = {0: (m, m if full_matrices else k), 1: (n if full_matrices else k, n), 2: (n, m)}[int(which)]
    outs = []
    with np.errstate(all="ignore"):
        for b in range(w.shape[0]):
            if bad[b]:
                outs.append(np.full(out_shape, np.nan, F32))
                continue
            nrm = np.sqrt(_dot(w[b], w[b])).astype(F32)
            sv = np.ldexp(nrm, e[b]).astype(F32)
            order = np.argsort(-sv, kind="stable")           # the stable insertion sort, largest first
            sv = sv[order]
            small = F32(p) * EPSILON * nrm[order[0]]
            p_count = p if full_matrices and int(which) == (0 if tall else 1) else k
            pc = np.zeros((p_count, p), F32)
            for t in range(p_count):
                if t < k and nrm[order[t]] > small:
                    pc[t] = (w[b, order[t]] / nrm[order[t]]).astype(F32)
                else:
                    _complete(pc, t)
            kc = kv[b, order].copy()
            for t in range(p_count):
                u = (pc[t] if tall else kc[t]) if t < k else pc[t]
                if _first_top_negative(u):
                    pc[t] = -pc[t]
                    if t < k:
                        kc[t] = -kc[t]
            U = (pc if tall else kc).T                       # [m, columns]
            V = (kc if tall else pc).T                       # [n, columns]
            if int(which) == 0:
                outs.append(np.ascontiguousarray(U[:, :out_shape[1]]))
            elif int(which) == 1:
                outs.append(np.ascontiguousarray(V[:, :out_shape[0]].T))
            else:
                limit = F32(rtol) * sv[0]
                inv = np.where(sv > limit, F32(1) / np.where(sv > limit, sv, F32(1)), F32(0)).astype(F32)
                acc = np.zeros((n, m), F32)
                for t in range(k):
                    acc = (acc + (V[:, t, None] * inv[t]).astype(F32) * U[None, :, t]).astype(F32)
                outs.append(acc)
    out = np.stack(outs).astype(F32) if outs else np.zeros((0,) + out_shape, F32)
    return out.reshape(x.shape[:-2] + out_shape)


def svd_signs(u, vh):
    """torch tensors U [..., m, c], Vh [..., r, n] with op_linalg_svd.c's
    signs: each u_j's first largest-|component| positive, v_j flipped with
    it (columns of U past Vh's rows alone)."""
    import torch
    top = u.abs().argmax(dim=-2, keepdim=True)
    flip = torch.where(u.gather(-2, top) < 0, -1.0, 1.0).to(u.dtype)
    k = min(u.shape[-1], vh.shape[-2])
    return u * flip, vh * torch.cat([flip[..., :k].mT, torch.ones_like(vh[..., k:, :1])], -2)


def qr(x, which: int, complete: bool) -> np.ndarray:
    """ptec::linalg_qr.out: Q (which 0), R (1), torch.geqrf's a (2: R with
    the reflectors' vectors below it, LAPACK's normalisation) or tau (3) of
    each matrix of x [..., m, n] by op_linalg_qr.c's Householder
    reflections (LAPACK's sign convention), float32 in the kernel's order."""
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-1] < 1 or x.shape[-2] < 1:
        raise ValueError("qr: x must be [..., m, n] with m, n >= 1")
    m, n = x.shape[-2:]
    k = min(m, n)
    a = x.reshape((-1, m, n))
    which = int(which)
    shape = {0: (m, m if complete else k), 1: (m if complete else k, n), 2: (m, n), 3: (k,)}[which]
    outs = []
    with np.errstate(all="ignore"):
        for b in range(a.shape[0]):
            if not np.isfinite(a[b]).all():
                outs.append(np.full(shape, np.nan, F32))
                continue
            big = np.abs(a[b]).max()
            e = int(np.frexp(big)[1]) if big > 0 else 0
            w = np.ldexp(a[b], -e).astype(F32)
            tau = np.zeros(k, F32)
            for j in range(k):
                if not (w[j + 1:, j] != 0).any():
                    continue
                f = int(np.frexp(np.abs(w[j:, j]).max())[1])
                y = np.ldexp(w[j:, j], -f).astype(F32)
                sub = _dot(y[1:][None], y[1:][None])[0]
                y0 = y[0]
                norm = np.sqrt(F32(F32(y0 * y0) + sub)).astype(F32)
                alpha = norm if np.signbit(y0) else -norm
                tau[j] = F32(F32(alpha - y0) / alpha)
                inv = F32(F32(1) / F32(y0 - alpha))
                w[j + 1:, j] = (y[1:] * inv).astype(F32)
                for c in range(j + 1, n):
                    d = F32(w[j, c])
                    for i in range(j + 1, m):
                        d = F32(d + F32(w[i, j] * w[i, c]))
                    g = F32(tau[j] * d)
                    w[j, c] = F32(w[j, c] - g)
                    w[j + 1:, c] = (w[j + 1:, c] - (g * w[j + 1:, j]).astype(F32)).astype(F32)
                w[j, j] = np.ldexp(alpha, f).astype(F32)
            if which == 3:
                outs.append(tau)
                continue
            if which == 2:
                r = np.ldexp(w, e).astype(F32)
                for c in range(k):
                    r[c + 1:, c] = w[c + 1:, c]
                outs.append(r)
                continue
            if which == 1:
                r = np.zeros(shape, F32)
                for i in range(min(k, shape[0])):
                    r[i, i:] = np.ldexp(w[i, i:], e).astype(F32)
                outs.append(r)
                continue
            q = np.eye(m, shape[1], dtype=F32)
            for j in range(k - 1, -1, -1):
                if tau[j] == 0:
                    continue
                for c in range(shape[1]):
                    d = F32(q[j, c])
                    for i in range(j + 1, m):
                        d = F32(d + F32(w[i, j] * q[i, c]))
                    g = F32(tau[j] * d)
                    q[j, c] = F32(q[j, c] - g)
                    q[j + 1:, c] = (q[j + 1:, c] - (g * w[j + 1:, j]).astype(F32)).astype(F32)
            outs.append(q)
    out = np.stack(outs).astype(F32) if outs else np.zeros((0,) + shape, F32)
    return out.reshape(x.shape[:-2] + shape)


# op_linalg_eigvals.c's constants: QR steps per matrix at most ITERATIONS_PER_N * n, and the
# per-eigenvalue step counts at which an exceptional shift is taken
ITERATIONS_PER_N = 30
EXCEPTIONAL = (10, 20)


def _sign(a, b):
    """|a| with b's sign (b >= 0: positive), float32."""
    return F32(abs(a)) if b >= 0 else F32(-abs(a))


def _hessenberg(a, n: int) -> None:
    """op_linalg_eigvals.c's reduction of a (n x n, lists of float32, in
    place) to upper Hessenberg form: Gaussian elimination with the first
    largest |pivot| of each column below the subdiagonal, each swap of rows
    i, m followed by the swap of columns i, m, each row elimination by its
    column update (a similarity), the multipliers' entries set to 0."""
    for m in range(1, n - 1):
        x, i = F32(0), m
        for j in range(m, n):
            if abs(a[j][m - 1]) > abs(x):
                x, i = a[j][m - 1], j
        if i != m:
            for j in range(m - 1, n):
                a[i][j], a[m][j] = a[m][j], a[i][j]
            for j in range(n):
                a[j][i], a[j][m] = a[j][m], a[j][i]
        if x != 0:
            for i in range(m + 1, n):
                y = a[i][m - 1]
                if y != 0:
                    y = F32(y / x)
                    a[i][m - 1] = F32(0)
                    for j in range(m, n):
                        a[i][j] = F32(a[i][j] - F32(y * a[m][j]))
                    for j in range(n):
                        a[j][m] = F32(a[j][m] + F32(y * a[j][i]))


def _francis(a, n: int):
    """op_linalg_eigvals.c's implicit double-shift QR of the Hessenberg a:
    the eigenvalues (wr, wi) in the order deflation finds them, or None when
    more than ITERATIONS_PER_N * n steps are taken."""
    wr, wi = [F32(0)] * n, [F32(0)] * n
    norm = F32(0)
    for i in range(n):
        for j in range(max(i - 1, 0), n):
            norm = F32(norm + abs(a[i][j]))
    nn, t, its, total = n - 1, F32(0), 0, 0
    x = y = z = p = q = r = F32(0)
    while nn >= 0:
        l = nn
        while l >= 1:
            s = F32(abs(a[l - 1][l - 1]) + abs(a[l][l]))
            if s == 0:
                s = norm
            if F32(abs(a[l][l - 1]) + s) == s:
                a[l][l - 1] = F32(0)
                break
            l -= 1
        x = a[nn][nn]
        if l == nn:                                     # one root
            wr[nn], wi[nn] = F32(x + t), F32(0)
            nn, its = nn - 1, 0
            continue
        y, w = a[nn - 1][nn - 1], F32(a[nn][nn - 1] * a[nn - 1][nn])
        if l == nn - 1:                                 # two roots
            p = F32(F32(0.5) * F32(y - x))
            q = F32(F32(p * p) + w)
            z = F32(np.sqrt(F32(abs(q))))
            x = F32(x + t)
            if q >= 0:
                z = F32(p + _sign(z, p))
                wr[nn - 1] = wr[nn] = F32(x + z)
                if z != 0:
                    wr[nn] = F32(x - F32(w / z))
                wi[nn - 1] = wi[nn] = F32(0)
            else:
                wr[nn - 1] = wr[nn] = F32(x + p)
                wi[nn - 1], wi[nn] = z, F32(-z)
            nn, its = nn - 2, 0
            continue
        if total >= ITERATIONS_PER_N * n:
            return None
        if its in EXCEPTIONAL:
            t = F32(t + x)
            for i in range(nn + 1):
                a[i][i] = F32(a[i][i] - x)
            s = F32(abs(a[nn][nn - 1]) + abs(a[nn - 1][nn - 2]))
            x = y = F32(F32(0.75) * s)
            w = F32(F32(F32(-0.4375) * s) * s)
        its, total = its + 1, total + 1
        m = nn - 2
        while True:
            z = a[m][m]
            r, s = F32(x - z), F32(y - z)
            p = F32(F32(F32(F32(r * s) - w) / a[m + 1][m]) + a[m][m + 1])
            q = F32(F32(F32(a[m + 1][m + 1] - z) - r) - s)
            r = a[m + 2][m + 1]
            s = F32(F32(abs(p) + abs(q)) + abs(r))
            p, q, r = F32(p / s), F32(q / s), F32(r / s)
            if m == l:
                break
            u = F32(abs(a[m][m - 1]) * F32(abs(q) + abs(r)))
            v = F32(abs(p) * F32(F32(abs(a[m - 1][m - 1]) + abs(z)) + abs(a[m + 1][m + 1])))
            if F32(u + v) == v:
                break
            m -= 1
        for i in range(m + 2, nn + 1):
            a[i][i - 2] = F32(0)
            if i != m + 2:
                a[i][i - 3] = F32(0)
        for k in range(m, nn):
            if k != m:
                p, q = a[k][k - 1], a[k + 1][k - 1]
                r = a[k + 2][k - 1] if k != nn - 1 else F32(0)
                x = F32(F32(abs(p) + abs(q)) + abs(r))
                if x != 0:
                    p, q, r = F32(p / x), F32(q / x), F32(r / x)
            s = _sign(np.sqrt(F32(F32(F32(p * p) + F32(q * q)) + F32(r * r))), p)
            if s == 0:
                continue
            if k == m:
                if l != m:
                    a[k][k - 1] = F32(-a[k][k - 1])
            else:
                a[k][k - 1] = F32(F32(-s) * x)
            p = F32(p + s)
            x, y, z = F32(p / s), F32(q / s), F32(r / s)
            q, r = F32(q / p), F32(r / p)
            for j in range(k, nn + 1):
                p = F32(a[k][j] + F32(q * a[k + 1][j]))
                if k != nn - 1:
                    p = F32(p + F32(r * a[k + 2][j]))
                    a[k + 2][j] = F32(a[k + 2][j] - F32(p * z))
                a[k + 1][j] = F32(a[k + 1][j] - F32(p * y))
                a[k][j] = F32(a[k][j] - F32(p * x))
            for i in range(l, min(nn, k + 3) + 1):
                p = F32(F32(x * a[i][k]) + F32(y * a[i][k + 1]))
                if k != nn - 1:
                    p = F32(p + F32(z * a[i][k + 2]))
                    a[i][k + 2] = F32(a[i][k + 2] - F32(p * r))
                a[i][k + 1] = F32(a[i][k + 1] - F32(p * q))
                a[i][k] = F32(a[i][k] - p)
    return wr, wi


def _before(re, im, re2, im2) -> bool:
    """ptec's eigenvalue order: real part ascending, then imaginary part
    descending (a conjugate pair's positive one first)."""
    return re < re2 or (re == re2 and im > im2)


def _eig_values(m):
    """linalg_eig.h's ptec_eig_values of one float32 matrix m [n, n]:
    ("nan" | "zero" | "values", the (re, im) values in ptec's order, e: m
    was scaled by 2^-e, the values before their scaling back, same order)."""
    n = m.shape[-1]
    if not np.isfinite(m).all():
        return "nan", None, 0, None
    big = F32(np.abs(m).max())
    if big == 0:
        return "zero", None, 0, None
    _, e = np.frexp(big)
    e = int(e)
    a = [[F32(np.ldexp(F32(v), -e)) for v in row] for row in m]
    _hessenberg(a, n)
    got = _francis(a, n)
    if got is None:
        return "nan", None, e, None
    vals, scaled = [], []
    for sr, si in zip(*got):
        re, im = F32(np.ldexp(sr, e)), F32(np.ldexp(si, e))
        at = len(vals)
        while at > 0 and _before(re, im, *vals[at - 1]):
            at -= 1
        vals.insert(at, (re, im))
        scaled.insert(at, (F32(sr), F32(si)))
    return "values", vals, e, scaled


def eigvals(x) -> np.ndarray:
    """ptec::linalg_eigvals.out: the eigenvalues of each matrix of x
    [..., n, n] as [..., n, 2] (real, imaginary), by op_linalg_eigvals.c's
    power-of-two scaling, Hessenberg reduction and Francis double-shift QR,
    step for step in float32, sorted by real part ascending, then imaginary
    part descending (a stable insertion sort); NaN for a matrix with a
    non-finite entry or whose QR did not converge in 30 n steps."""
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 1:
        raise ValueError("eigvals: x must be [..., n, n] with n >= 1")
    n = x.shape[-1]
    mats = x.reshape((-1, n, n))
    out = np.zeros((mats.shape[0], n, 2), F32)
    with np.errstate(all="ignore"):
        for b, m in enumerate(mats):
            kind, vals, _, _ = _eig_values(m)
            if kind == "nan":
                out[b] = F32(np.nan)
            elif kind == "values":
                out[b] = np.array(vals, F32)
    return out.reshape(x.shape[:-2] + (n, 2))


# op_linalg_eig_vectors.c's constants: inverse iteration's solves per vector, the back substitution's
# rescaling threshold and factor
EIG_ITERATIONS = 3
GROWTH, SHRINK = F32(2.0 ** 64), F32(2.0 ** -64)
TIE = F32(4)                # a tie: |re - re'| + |im - im'| <= TIE n eps on the scaled values, both real or not
KEPT = F32(2.0 ** -10)      # what orthogonalisation must leave of v's largest part (else v kept as solved)


def _cdiv(ar, ai, br, bi):
    """op_linalg_eig_vectors.c's cdiv: (ar + i ai) / (br + i bi), Smith's order."""
    if abs(br) >= abs(bi):
        r = F32(bi / br)
        d = F32(br + F32(bi * r))
        return F32(F32(ar + F32(ai * r)) / d), F32(F32(ai - F32(ar * r)) / d)
    r = F32(br / bi)
    d = F32(bi + F32(br * r))
    return F32(F32(F32(ar * r) + ai) / d), F32(F32(F32(ai * r) - ar) / d)


def _cmul(ar, ai, br, bi):
    """(ar + i ai)(br + i bi) in float32: (ar br - ai bi, ar bi + ai br)."""
    return F32(F32(ar * br) - F32(ai * bi)), F32(F32(ar * bi) + F32(ai * br))


def _eig_factor(m, e, mr, mi, eps3, n):
    """op_linalg_eig_vectors.c's factor: m 2^-e - mu I by complex Gaussian
    elimination with partial pivoting (|re| + |im|), small pivots EPS3."""
    lu = [[[F32(np.ldexp(F32(m[i][j]), -e)), F32(0)] for j in range(n)] for i in range(n)]
    piv = []
    for i in range(n):
        lu[i][i] = [F32(lu[i][i][0] - mr), F32(lu[i][i][1] - mi)]
    for k in range(n):
        p, best = k, F32(abs(lu[k][k][0]) + abs(lu[k][k][1]))
        for i in range(k + 1, n):
            v = F32(abs(lu[i][k][0]) + abs(lu[i][k][1]))
            if v > best:
                best, p = v, i
        piv.append(p)
        if p != k:                                      # columns k .. n - 1 only
            lu[p][k:], lu[k][k:] = lu[k][k:], lu[p][k:]
        if best < eps3:
            lu[k][k] = [eps3, F32(0)]
        pr, pi = lu[k][k]
        for i in range(k + 1, n):
            lr, li = _cdiv(lu[i][k][0], lu[i][k][1], pr, pi)
            lu[i][k] = [lr, li]
            for j in range(k + 1, n):
                ur, ui = lu[k][j]
                tr, ti = _cmul(lr, li, ur, ui)
                lu[i][j] = [F32(lu[i][j][0] - tr), F32(lu[i][j][1] - ti)]
    return lu, piv


def _eig_solve(lu, piv, v, n):
    """op_linalg_eig_vectors.c's solve: v = (L U)^-1 P v up to a power of two."""
    for k in range(n):
        p = piv[k]
        if p != k:
            v[p], v[k] = v[k], v[p]
        for i in range(k + 1, n):
            tr, ti = _cmul(lu[i][k][0], lu[i][k][1], v[k][0], v[k][1])
            v[i] = [F32(v[i][0] - tr), F32(v[i][1] - ti)]
    for i in range(n - 1, -1, -1):
        rr, ri = v[i]
        for j in range(i + 1, n):
            tr, ti = _cmul(lu[i][j][0], lu[i][j][1], v[j][0], v[j][1])
            rr, ri = F32(rr - tr), F32(ri - ti)
        v[i] = list(_cdiv(rr, ri, lu[i][i][0], lu[i][i][1]))
        if F32(abs(v[i][0]) + abs(v[i][1])) > GROWTH:
            for t in range(n):
                v[t] = [F32(v[t][0] * SHRINK), F32(v[t][1] * SHRINK)]


def _eig_orthogonalize(out, tie, v, n):
    """op_linalg_eig_vectors.c's orthogonalize: v less u (u^H v) for each unit column u of tie, in order."""
    for k in tie:
        dr = di = F32(0)
        for i in range(n):
            ur, ui = out[i][k]
            dr = F32(dr + F32(F32(ur * v[i][0]) + F32(ui * v[i][1])))
            di = F32(di + F32(F32(ur * v[i][1]) - F32(ui * v[i][0])))
        for i in range(n):
            ur, ui = out[i][k]
            tr, ti = _cmul(dr, di, ur, ui)
            v[i] = [F32(v[i][0] - tr), F32(v[i][1] - ti)]


def _eig_largest(v):
    big = F32(0)
    for c in v:
        for part in c:
            if abs(part) > big:
                big = F32(abs(part))
    return big


def _eig_rescale(v, n) -> bool:
    big = _eig_largest(v)
    if big == 0:
        return False
    for c in v:
        c[0], c[1] = F32(c[0] / big), F32(c[1] / big)
    return True


def _eig_store(v, out, j, real, n):
    """op_linalg_eig_vectors.c's store: v's first largest-modulus component made real positive, unit norm."""
    top, best = 0, F32(-1)
    for i in range(n):
        m = F32(F32(v[i][0] * v[i][0]) + F32(v[i][1] * v[i][1]))
        if m > best:
            best, top = m, i
    mod = F32(np.sqrt(best))
    cr, ci = F32(v[top][0] / mod), F32(-v[top][1] / mod)
    for i in range(n):
        v[i] = list(_cmul(v[i][0], v[i][1], cr, ci))
    v[top][1] = F32(0)
    total = F32(0)
    for i in range(n):
        total = F32(total + F32(F32(v[i][0] * v[i][0]) + F32(v[i][1] * v[i][1])))
    norm = F32(np.sqrt(total))
    for i in range(n):
        out[i][j] = [F32(v[i][0] / norm), F32(0) if real else F32(v[i][1] / norm)]


def _eig_vectors_one(m, n):
    kind, vals, e, scaled = _eig_values(m)
    if kind == "nan":
        return np.full((n, n, 2), np.nan, F32)
    if kind == "zero":
        out = np.zeros((n, n, 2), F32)
        out[np.arange(n), np.arange(n), 0] = 1
        return out
    eps3 = F32(F32(n) * F32(np.finfo(F32).eps))
    close = F32(TIE * eps3)
    out = [[None] * n for _ in range(n)]
    for j, (re, im) in enumerate(vals):
        sr, si = scaled[j]
        tie = [k for k in range(j) if (scaled[k][1] == 0) == (si == 0)
               and F32(F32(abs(F32(scaled[k][0] - sr))) + F32(abs(F32(scaled[k][1] - si)))) <= close]
        same = sum(1 for k in range(j) if vals[k][0] == re and vals[k][1] == im)
        if im < 0:
            partners = [k for k in range(j) if vals[k][0] == re and vals[k][1] == -im]
            if len(partners) > same:
                k = partners[same]
                for i in range(n):
                    out[i][j] = [out[i][k][0], F32(-out[i][k][1])]
                continue
        lu, piv = _eig_factor(m, e, sr, si, eps3, n)
        v = [[F32(F32(1) / F32(1 + (i * len(tie)) % n)), F32(0)] for i in range(n)]
        for _ in range(EIG_ITERATIONS):
            _eig_solve(lu, piv, v, n)
            if tie:
                solved = [list(c) for c in v]
                _eig_orthogonalize(out, tie, v, n)
                if _eig_largest(v) < F32(KEPT * _eig_largest(solved)):
                    v = solved
            if not _eig_rescale(v, n):
                v = [[F32(0), F32(0)] for _ in range(n)]
                v[j % n][0] = F32(1)
        _eig_store(v, out, j, im == 0, n)
    return np.array(out, F32)


def eig_vectors(x) -> np.ndarray:
    """ptec::linalg_eig_vectors.out: the eigenvectors of each matrix of x
    [..., n, n] as [..., n, n, 2] (column j: eigenvalue j of eigvals(x), its
    real and imaginary parts), by op_linalg_eig_vectors.c's inverse
    iteration in complex float32, step for step: unit norm, the first
    largest-modulus component real positive, a conjugate pair's vectors
    conjugates; NaN for a matrix eigvals gives NaN, I for a zero matrix."""
    x = np.asarray(x, F32)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] < 1:
        raise ValueError("eig_vectors: x must be [..., n, n] with n >= 1")
    n = x.shape[-1]
    mats = x.reshape((-1, n, n))
    out = np.zeros((mats.shape[0], n, n, 2), F32)
    with np.errstate(all="ignore"):
        for b, m in enumerate(mats):
            out[b] = _eig_vectors_one(m, n)
    return out.reshape(x.shape[:-2] + (n, n, 2))
