"""A bool value cast into uint8 / int8 / int16 and used as a number
(capture_narrow_ints._bool_casts_via_long): `(x > 0).byte() + 1`,
`(x > 0).to(torch.uint8) * 3`, `(x > 0).byte().sum(-1)`,
`(x > 0).byte() << 2`, `(x > 0).byte() - 2` (torch's uint8 wrap: 254 /
255). Oracle: torch 1.13, exact and of torch's dtype; the host runtime's
bytes equal the numpy reference interpreter's."""
import numpy as np
import torch

from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program


class BoolNarrow(torch.nn.Module):
    def forward(self, x):
        m = x > 0
        return ((m).byte() + 1, m.to(torch.uint8) * 3, m.byte().sum(-1), m.byte() << 2, m.byte() - 2,
                m.char() - 3, m.short() * -7, m.type(torch.uint8) * 200, m.byte(), (x < 0.5).byte() + m.byte())


def test_bool_casts_used_as_numbers_are_torchs_exactly(tmp_path):
    g = torch.Generator().manual_seed(18)
    feeds = [(torch.randn(4, 6, generator=g),) for _ in range(4)]
    model = BoolNarrow().eval()
    res = compile_model(model, list(feeds[0]), feeds)
    assert not res.lowered.fallbacks
    prog = parse_program(res.data)
    for feed in feeds:
        arrays = [t.numpy() for t in feed]
        got = host_runtime.run(prog, res.data, arrays, workdir=str(tmp_path))
        assert [np.asarray(a).tobytes() for a in got] == [np.asarray(w).tobytes() for w in run_program(prog, arrays)]
        with torch.no_grad():
            want = model(*feed)
        assert len(got) == len(want)
        for at, (a, w) in enumerate(zip(got, want)):
            assert a.dtype == w.numpy().dtype, (at, a.dtype, w.dtype)
            assert np.array_equal(a, w.numpy()), (at, a, w)
            assert np.ptp(np.asarray(a, np.float64)) > 0, at            # both 0 and 1 rows
    assert set(np.unique(got[4]).tolist()) == {254, 255}                  # (x > 0).byte() - 2 wraps
    assert set(np.unique(got[7]).tolist()) == {0, 200}
