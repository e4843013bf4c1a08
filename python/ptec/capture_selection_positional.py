"""Layers after a selection x[mask] whose rows depend on the run's count n
(issue 15): computed over the selection made compact, C = X's selected rows
moved to the front in order (capture_selection_mix._compact: a stable
sort of the mask), a fixed-length table whose first n rows are the
selection. A positional layer is then a fixed layer of C, and which of its
rows are the result's is a constant function of n: the count is found as a
one-hot [L] (the sorted mask is 1 at n - 1 and 0 at n: one linear of its
0/1, compared, exact; all 0 when none is selected), and one linear of that
one-hot by a constant 0/1 table [n, rows] gives the rows kept (exact: one
term), picked by a selection of the fixed result again:

- a slice with a negative start and a step (`s[-5::2]`: which rows it
  keeps, its phase, moves with n), kept where p is in range(n)[a:b:k]
  (`_slice_by_count`; other slices are capture_selection_more's);
- a view merging the selection's elements into groups (`s.view(-1, 3)`,
  a row selection's `b.view(-1, 3)`): C flattened, padded to whole groups,
  viewed, groups kept while whole (`_groups`). torch raises when n * row
  size does not divide by the group size; so does ptec's execute, a
  checked lookup failing the run there (`whole_groups_or_fail`);
- mode along dim 0 (`_mode_rows`): its values of a row selection, column
  by column as capture_selection_more._mode of a 1-D one; its indices (1-D
  or rows) the last position in the selection holding that value: torch's
  on selections of up to 16 values without NaN. Beyond, torch's index is
  its libstdc++ std::sort's (op_median_mode.c), which depends on the
  count, known only at run time: a fixed graph over C cannot run that sort
  on the first n rows, so the rule stays the last position. C compared
  with the mode and kept where C is selected, its 0/1 sorted ascending
  stably, the last position of that order.

quantile along dim 0 of a row selection is capture_selection_more._quantile's
(the same rows picked for every column). unsqueeze(0) of a 1-D selection
is capture_selection_row_output's (a program output); squeeze() (the rank
would follow the count) stays refused."""
from __future__ import annotations

import numpy as np

from .capture_masked_select import Steps, _numel
from .ir import Graph, Node, origin


def count_one_hot(s: Steps, M: str, L: int) -> str:
    """[L] float 0/1: 1 at n - 1 for the run's count n >= 1, all 0 for none
    (the sorted mask, 1s first, is 1 at n - 1 and 0 at n)."""
    from .capture_selection_mix import _as_float, _ordered
    ones = _ordered(s, "sort", _as_float(s, M, L), [L], True)
    down = np.eye(L, dtype=np.float32) - np.eye(L, k=1, dtype=np.float32)
    at = s("compare", [s("linear", [ones], [L], weight=down, bias=None)], [L], kind="gt", scalar=0.5)
    return s("bool_to", [at], [L], dtype="float32")


def by_count(s: Steps, counts: str, table: np.ndarray) -> str:
    """[W] bool: row n - 1 of the constant 0/1 table [L, W] at the count
    (all False for none)."""
    W = table.shape[1]
    got = s("linear", [counts], [W], weight=np.ascontiguousarray(table.T, dtype=np.float32), bias=None)
    return s("compare", [got], [W], kind="gt", scalar=0.5)


def whole_groups_or_fail(s: Steps, counts: str, L: int, r: int, size: int, P: int) -> str:
    """[P] bool, all True, that fails the execute where torch's view raises:
    a count n whose n * r elements do not fill whole groups of size. The
    one-hot count picks [1, 0] (whole, or none selected) or [0, 1] (a
    partial group) by one linear (exact 0/1); its argmax is row 0 or 1 of
    a one-row constant, the lookup (aten::embedding.out) checking it at run
    time: row 1 fails the run, InvalidArgument "an index is outside the
    table" (the float graph, which calibration runs, reads row 0 there)."""
    partial = np.zeros((L, 2), np.float32)
    for n in range(1, L + 1):
        partial[n - 1, int(n * r % size != 0)] = 1.0
    which = s("linear", [counts], [2], weight=np.ascontiguousarray(partial.T), bias=None)
    row = s("argmax", [which], [1], dim=0, keepdim=True, smallest=False)
    ones = s("embedding", [row], [1, P], weight=np.ones((1, P), np.float32), fails_past_table=True)
    flat_ones = s("reshape", [ones], [P], target_shape=[P])
    return s("compare", [flat_ones], [P], kind="gt", scalar=0.5)


def _slice_by_count(g: Graph, user: Node, sel: Node) -> bool:
    """s[a:b:k] along dim 0 with a < 0 and k > 1: C's rows kept where p is
    in range(n)[a:b:k] (a constant per n)."""
    from .capture_selection_mix import _compact
    from .capture_selection_more import _stepped_slice
    from .capture_selection_rows import _pick, _replace, flat, table
    found = _stepped_slice(g, user, sel)
    if found is None or table(g, sel) is None:
        return False
    names, (a, b, k), named = found
    if not isinstance(k, int) or k < 2 or a is None or a >= 0:
        return False
    L = table(g, sel)[3]
    keep = np.zeros((L, L), np.float32)
    for n in range(1, L + 1):
        keep[n - 1, list(range(n))[a:b:k]] = 1.0
    s = Steps(named.name)
    X, shape, M, _ = flat(s, g, sel)
    C, _ = _compact(s, X, shape, M, L)
    _pick(s, named.name, C, shape, by_count(s, count_one_hot(s, M, L), keep), origin(named))
    _replace(g, names, s.nodes)
    return True


def _groups(g: Graph, user: Node, sel: Node) -> bool:
    """A view [-1, t...] of a selection whose rows do not hold whole t's
    (`s.view(-1, 3)`; split_rows takes those that do): C flattened [L r],
    padded with zeros to P whole groups of t, viewed [P, t...], group q
    kept while (q + 1) numel(t) <= n r."""
    from .capture_selection_mix import _compact
    from .capture_selection_rows import _pick, _replace, flat, table
    a = user.attrs
    if user.op != "reshape" or user.inputs != [sel.name] or "target_shape" not in a or "spelled" in a \
            or table(g, sel) is None:
        return False
    t = [int(v) for v in a["target_shape"]]
    r = _numel(sel.shape[1:])
    if len(t) < 2 or -1 in t[1:] or _numel(t[1:]) <= 0 or (t[0] != -1 and t[0] < 2):
        return False
    size = _numel(t[1:])
    if r % size == 0:
        return False                # whole rows per group or groups per row: split_rows'
    L = table(g, sel)[3]
    P = -(-L * r // size)
    s = Steps(user.name)
    X, shape, M, _ = flat(s, g, sel)
    C, _ = _compact(s, X, shape, M, L)
    line = C if len(shape) == 1 else s("reshape", [C], [L * r], target_shape=[L * r])
    if P * size > L * r:
        line = s("cat", [line, s.const(np.zeros(P * size - L * r, np.float32))], [P * size], dim=0)
    out = [P] + t[1:]
    grouped = s("reshape", [line], out, target_shape=out)
    keep = np.zeros((L, P), np.float32)
    for n in range(1, L + 1):
        keep[n - 1, :n * r // size] = 1.0
    counts = count_one_hot(s, M, L)
    kept = s("logical", [by_count(s, counts, keep), whole_groups_or_fail(s, counts, L, r, size, P)], [P],
             kind="and")
    _pick(s, user.name, grouped, out, kept, origin(user))
    _replace(g, [user.name], s.nodes)
    return True


def _mode_column(s: Steps, X: str, M: str, L: int, indices: bool) -> str:
    """mode of the selection of the column X [L]: its value [1] (the
    smallest most frequent, over int8 codes), or for indices the 0/1 [L, 1]
    of the compact selection's rows holding it: a most frequent row none
    of whose like is smaller (compared on X's own codes, exact: the value
    found is on another grid)."""
    from .capture_calls import _reduce_max_nodes
    from .capture_selection_mix import _as_float, _compact
    from .capture_selection_more import _any_along_1, _most_frequent, _square
    from .capture_selection_rows import far_end
    best = _most_frequent(s, X, M, L)
    if indices:
        others = s("compare", [_square(s, _as_float(s, best, L), L, True)], [L, L], kind="gt", scalar=0.5)
        above = s("compare", [_square(s, X, L, False), _square(s, X, L, True)], [L, L], kind="gt")
        lower = _any_along_1(s, s("logical", [others, above], [L, L], kind="and"), L)
        hit = s("logical", [best, s("logical", [lower], [L], kind="not")], [L], kind="and")
        C, _ = _compact(s, _as_float(s, hit, L), [L], M, L)
        return s("reshape", [C], [L, 1], target_shape=[L, 1])
    kept = s("where", [best, X, far_end(s, X, [L], highest=True)], [L])
    s.nodes.extend(_reduce_max_nodes(f"{s.prefix}__min{len(s.nodes)}", s("reshape", [kept], [1, L],
                                                                           target_shape=[1, L]),
                                     [1, L], [1], False, True))
    return s.nodes[-1].name


def _mode_rows(g: Graph, user: Node, sel: Node) -> bool:
    """torch.mode along dim 0: the indices of a 1-D selection's, values and
    indices of a row selection's (each column's). An index: the stable
    ascending order of the hits' 0/1 (per column) ends at the last hit,
    its row L - 1 (exact; none selected: L - 1)."""
    from .capture_selection_mix import _ordered
    from .capture_selection_rows import _replace, flat, table
    a, rank = user.attrs, len(sel.shape)
    if user.op not in ("sort", "sort_indices") or a.get("rule") != "mode" or user.inputs != [sel.name] \
            or table(g, sel) is None or not isinstance(a.get("dim"), int) or a["dim"] % rank != 0:
        return False
    indices = user.op == "sort_indices"
    if rank == 1 and not indices:
        return False                # capture_selection_more._mode's
    s = Steps(user.name)
    X, shape, M, L = flat(s, g, sel)
    rest = list(shape[1:])
    W = _numel(rest)
    if rank == 1:
        parts = [_mode_column(s, X, M, L, indices)]
    else:
        wide = s("reshape", [X], [L, W], target_shape=[L, W])
        parts = [_mode_column(s, s("reshape", [s("slice", [wide], [L, 1], dim=1, start=j, end=j + 1)], [L],
                                   target_shape=[L]), M, L, indices) for j in range(W)]
    out = ([1] if a.get("keepdim") else []) + rest
    if indices:
        hits = parts[0] if W == 1 else s("cat", parts, [L, W], dim=1)
        order = _ordered(s, "sort_indices", hits, [L, W], False)
        picked = s("int_math", [order], [1, W], kind="slice", dtype="int64", dim=0, start=L - 1, end=L)
        s.nodes.append(Node(user.name, "int_math", [picked], dict(kind="view", dtype="int64", shape=out,
                                                                   source=origin(user)), shape=out))
    else:
        joined = parts[0] if W == 1 else s("cat", parts, [W], dim=0)
        s("reshape", [joined], out, target_shape=out)
        s.nodes[-1].name = user.name
        s.nodes[-1].attrs["source"] = origin(user)
    _replace(g, [user.name], s.nodes)
    return True


def positional_rows(g: Graph, user: Node, sel: Node) -> bool:
    """One of this module's rewrites of user, a reader of the selection
    sel; False when none applies."""
    return any(rewrite(g, user, sel) for rewrite in (_slice_by_count, _groups, _mode_rows))

