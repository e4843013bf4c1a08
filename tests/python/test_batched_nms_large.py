"""torchvision.ops.batched_nms above 1,000 boxes on ptec::batched_nms.out
(capture_nms, src/kernels/portable/op_batched_nms.c, std_sort.c).

Oracle: torchvision 0.14's own CPU batched_nms on the program's inputs,
exact int64 indices in its order. Past boxes.numel() 4,000 it runs nms per
class, then orders the kept indices by torch.sort(descending=True), an
unstable sort (libstdc++'s std::sort of (value, index) pairs), so with
heavy score ties its order is not the stable one (asserted on the feeds:
the kernel's sort decides). 1,001, 1,500 and 3,000 boxes, 2 to 20 classes,
scores on 3 to 6 levels, duplicate boxes (IoU 1), class ids far apart and
negative, int32 classes, NaN scores; scores built against the sort
(McIlroy's adversary, merged into ties) so that it reaches its heapsort.
The float graph (capture_nms.batched_nms_indices) and the reference
interpreter (reference portable.batched_nms) are torchvision's too; the
kernel's 8 K bytes of scratch are planned exactly."""
import os
import random

import numpy as np
import pytest
import torch
import torchvision.ops as tv

from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference import portable as P
from ptec.reference.std_sort import descending_keys, sorted_positions
from ptec.requirements import requirements
from nms_models import run_feed as _run, BatchedNms  # noqa: E402


def _feed(g, k, classes, apart, levels, offset=0, dtype=torch.int64):
    """k boxes crowded in a square (so each class suppresses some), scores
    on `levels` values (heavy ties), a duplicated pair, classes
    id * apart + offset."""
    lo = torch.rand(k, 2, generator=g) * 40
    b = torch.cat([lo, lo + torch.rand(k, 2, generator=g) * 6 + 0.25], 1)
    b[1] = b[0]
    b[k // 2] = b[3]
    s = torch.randint(0, levels, (k,), generator=g).float() / levels
    idxs = (torch.randint(0, classes, (k,), generator=g) * apart + offset).to(dtype)
    return [b, s, idxs]


def _stable(want, scores):
    return np.asarray(sorted(want.tolist(), key=lambda j: (-float(scores[j]), j)), np.int64)


CASES = [(1001, 2, 1, 0, 3), (1500, 20, 10 ** 12, -7 * 10 ** 12, 4), (3000, 7, 997, -3000, 6)]


@pytest.mark.parametrize("k,classes,apart,offset,levels", CASES, ids=["K1001-c2", "K1500-c20-far-negative",
                                                                     "K3000-c7"])
def test_batched_nms_above_1000_boxes_is_torchvisions(k, classes, apart, offset, levels, tmp_path):
    g = torch.Generator().manual_seed(k + classes)
    t = 0.5
    calibration = [_feed(g, k, classes, apart, levels, offset) for _ in range(2)]
    res = compile_model(BatchedNms(t).eval(), calibration[0], calibration)
    ops = {f"{o.name}.{o.overload}" for o in parse_program(res.data).execution_plan[0].operators}
    assert "ptec::batched_nms.out" in ops and "ptec::nms.out" not in ops
    for _ in range(2):
        f = _feed(g, k, classes, apart, levels, offset)
        got = np.asarray(_run(res, f, tmp_path)[0])
        want = tv.batched_nms(*f, t).numpy()
        assert got.dtype == np.int64 and np.array_equal(got, want), (got[:20], want[:20])
        assert len(want) > len(tv.nms(f[0], f[1], t))                       # classes kept apart
        assert len(want) < k                                                 # and boxes suppressed
        assert not np.array_equal(_stable(want, f[1]), want)                 # the unstable sort decides


def test_int32_classes_and_nan_scores(tmp_path):
    """int32 class ids; NaN scores (torch sorts them first, stably in nms,
    unstably in the final sort)."""
    g = torch.Generator().manual_seed(5)

    def feed():
        return _feed(g, 1200, 5, 3, 4, 0, torch.int32)

    calibration = [feed(), feed()]                   # (calibration needs finite values)
    res = compile_model(BatchedNms(0.4).eval(), calibration[0], calibration)
    for _ in range(2):
        f = feed()
        f[1][torch.randint(0, 1200, (30,), generator=g)] = float("nan")
        want = tv.batched_nms(*f, 0.4).numpy()
        assert np.isnan(f[1][want[:5]].numpy()).all()
        assert np.array_equal(np.asarray(_run(res, f, tmp_path)[0]), want)


def _adversary(n):
    """McIlroy's adversary against the reference's sort under torch's
    descending comparison: ranks (0 first) decided as the comparisons ask,
    driving the introsort deep."""
    val = [None] * n
    state = {"solid": 0, "candidate": None}

    class Gas:
        def __init__(self, i):
            self.i = i

        def __lt__(self, other):
            a, b = self.i, other.i
            if val[a] is None and val[b] is None:
                val[a if a == state["candidate"] else b] = state["solid"]
                state["solid"] += 1
            if val[a] is None:
                state["candidate"] = a
            elif val[b] is None:
                state["candidate"] = b
            return (n if val[a] is None else val[a]) < (n if val[b] is None else val[b])

    sorted_positions([Gas(i) for i in range(n)])
    rest = iter(range(state["solid"], n))
    return [v if v is not None else next(rest) for v in val]


def test_final_sort_reaching_the_heapsort_is_torchvisions(tmp_path):
    """t = 1 keeps every box (no IoU is above 1), so the final sort runs on
    all 1,100 scores: scores from the adversary's ranks (rank r: score
    -r, the first rank the largest) merged into ties reach libstdc++'s
    heapsort, and the order it leaves (not the one without a depth limit)
    is torchvision's."""
    k = 1100
    rng = random.Random(3)
    ranks = _adversary(k)
    g = torch.Generator().manual_seed(3)
    feeds = []
    while len(feeds) < 3:
        level, table = 0, []
        keep = rng.choice([0.5, 0.8, 0.95])
        for r in range(k):
            level += r > 0 and rng.random() < keep
            table.append(level)
        s = torch.tensor([-float(table[r]) / 8 for r in ranks])
        keys = descending_keys(s.tolist())
        if sorted_positions(keys) == sorted_positions(keys, depth_limit=64):
            continue                                   # the heapsort changes nothing here
        lo = torch.rand(k, 2, generator=g) * 30
        feeds.append([torch.cat([lo, lo + 3], 1), s, torch.randint(-2, 2, (k,), generator=g)])
    res = compile_model(BatchedNms(1.0).eval(), feeds[0], feeds[:2])
    for f in feeds:
        want = tv.batched_nms(*f, 1.0).numpy()
        assert len(want) == k
        assert np.array_equal(np.asarray(_run(res, f, tmp_path)[0]), want)
        assert np.array_equal(P.batched_nms(f[0].numpy(), f[1].numpy(), f[1].sort(descending=True, stable=True)[1],
                                            f[2].numpy(), 1.0), want)


def test_float_graph_and_reference_interpreter_are_torchvisions():
    """ptec's two mirrors of the kernel: the captured graph's value
    (capture_nms.batched_nms_indices, the float model ptec checks against)
    and the reference interpreter's run of the program (reference
    portable.batched_nms), each torchvision's indices."""
    from ptec.capture import capture
    from ptec.ir import evaluate
    g = torch.Generator().manual_seed(11)
    feeds = [_feed(g, 1300, 9, 5, 3, -1) for _ in range(3)]
    model = BatchedNms(0.3).eval()
    graph = capture(model, feeds[0])
    program = parse_program(compile_model(model, feeds[0], feeds[:2]).data)
    for f in feeds:
        want = tv.batched_nms(*f, 0.3).numpy()
        assert not np.array_equal(_stable(want, f[1]), want)
        assert np.array_equal(np.asarray(evaluate(graph, f)[0]).astype(np.int64), want)
        assert np.array_equal(np.asarray(run_program(program, [x.numpy() for x in f])[0]), want)


def test_batched_nms_of_3000_boxes_plans_its_scratch(tmp_path):
    """The kernel's K float32 areas and K uint32 kept indices: ptec-run
    measures exactly the computed scratch (at least 8 * K bytes), loads
    with it and fails with one less."""
    from test_requirements import assert_exact_on_host, PTEC_RUN
    assert os.path.exists(PTEC_RUN), "no ptec-run (make host)"
    g = torch.Generator().manual_seed(2)
    feed = _feed(g, 3000, 4, 1, 5, 0)
    res = compile_model(BatchedNms(0.5).eval(), feed, [feed])
    path = tmp_path / "batched_nms.pte"
    path.write_bytes(res.data)
    r = requirements(parse_program(res.data), target="host")
    assert r.scratch_bytes >= 8 * 3000
    assert_exact_on_host(str(path), r)
