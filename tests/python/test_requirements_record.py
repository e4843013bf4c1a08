"""The requirements record (ptec.requirements_record, docs/pte-format.md):
the AOT writes each method's requirements per build kind into the program,
the runtime reads them instead of walking the method. The oracle for the
figures is the host runtime's own measuring walk (ptec-run on the same
program with its record removed), which shares no code with the Python
sizing; the fingerprints are what tools/ptec-layout prints on each build
(runtime_layout.json, checked against the builds by test_requirements.py)."""
import copy
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from ptec.backends.cortex_m.sample_programs import ds_cnn_program
from ptec.pte import parse_program, serialize_program
from ptec.pte.schema import BackendDelegate, NamedData
from ptec.requirements import load_layouts, requirements
from ptec.requirements_record import (CONFIG, KEY, SIZES, _entries, decode_record, describe_record, encode_record,
                                      layout_fingerprint, method_fingerprint, record_entries, record_of,
                                      with_record)

PTEC_RUN = os.path.join(ROOT, "build", "host", "tools", "ptec-run", "ptec-run")


def test_fingerprint_is_the_runtimes():
    """Python's fingerprint of each build kind's layout equals the one the
    runtime of that kind computes (record_fingerprint, printed by
    tools/ptec-layout), and the facts it covers are every size and limit
    the layout has: one added to ptec-layout must be added to both."""
    for kind, lay in load_layouts().items():
        assert layout_fingerprint(lay) == lay["record_fingerprint"], kind
        assert set(SIZES) == set(lay["sizes"]) and set(CONFIG) == set(lay["config"]), kind
        # kernels' state sizes and prepared arguments are in each entry's key
        # (method_fingerprint), for the method's kernels only; a backend's
        # bytes are in none (methods with delegate calls get no entry).
        assert set(lay) == {"isa", "pointer", "meta_align", "buffer_align", "record_fingerprint", "sizes", "config",
                            "backends", "kernels", "prepared_args"}, kind
    assert len({lay["record_fingerprint"] for lay in load_layouts().values()}) == len(load_layouts())


def test_record_round_trip_and_refusals():
    entries = [(1, 0, 5, 100, 200, 0), (2, 1, 6, 1 << 40, 0, 16)]
    data = encode_record(entries)
    assert len(data) == 16 + 36 * 2
    got = decode_record(data)
    assert [tuple(e.values()) for e in got] == entries
    for n in range(len(data)):          # a truncated record is not read
        assert decode_record(data[:n]) is None or len(decode_record(data[:n])) < 2
    assert decode_record(b"PTRX" + data[4:]) is None
    assert decode_record(data[:4] + b"\x02" + data[5:]) is None
    assert decode_record(data[:12] + b"\x03\x00\x00\x00" + data[16:]) is None   # count past the end


def _strip(program):
    """The program without its record (what an older AOT wrote)."""
    out = copy.copy(program)
    i = next(k for k, nd in enumerate(out.named_data) if nd.key == KEY)
    assert out.named_data[i].segment_index == len(out.segment_data) - 1
    out.named_data = out.named_data[:i] + out.named_data[i + 1:] or None
    out.segment_data = out.segment_data[:-1]
    out.segments = None
    return out


def _run(path):
    run = subprocess.run([PTEC_RUN, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.returncode == 0, run.stderr
    found = {k: int(v) for k, v in re.findall(r"^(metadata|scratch|total):\s+(\d+) bytes", run.stdout, re.M)}
    return found, "read from the program's record" in run.stdout, run.stdout


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33", "cortex-m3"])
def test_ds_cnn_record_equals_the_runtimes_walk(tmp_path, target):
    """The sample DS-CNN carries entries for its core's build and the host's;
    on the host the runtime reads them (ptec-run says so) and they are what
    its measuring walk gives the same program without a record; the load
    (which verifies the record, kept values included) succeeds and the
    outputs are the same bytes."""
    program, _ = ds_cnn_program(seed=2, target=target, channels=8, blocks=1)
    entries = decode_record(record_of(program))
    lays = load_layouts()
    plan = program.execution_plan[0]
    kinds = {e["fingerprint"]: k for k, lay in lays.items() for e in entries
             if e["fingerprint"] == method_fingerprint(lay, plan)}
    assert sorted(kinds.values()) == sorted({"lp64-SCALAR", "ilp32-" + {"cortex-m55": "MVE", "cortex-m33": "DSP",
                                                                        "cortex-m3": "SCALAR"}[target]})
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    with_rec, without = tmp_path / "rec.pte", tmp_path / "walk.pte"
    with_rec.write_bytes(serialize_program(program))
    without.write_bytes(serialize_program(_strip(program)))
    rec, from_record, out_rec = _run(with_rec)
    walk, walked_from_record, out_walk = _run(without)
    assert from_record and not walked_from_record
    assert rec == walk
    (host,) = [e for e in entries if kinds[e["fingerprint"]] == "lp64-SCALAR"]
    assert host["metadata_bytes"] == walk["metadata"] and host["scratch_bytes"] == walk["scratch"]
    assert re.findall(r"^output.*$", out_rec, re.M) == re.findall(r"^output.*$", out_walk, re.M)


def test_entries_are_requirements_and_delegates_get_none():
    program, _ = ds_cnn_program(seed=1, target="cortex-m55", channels=8, blocks=1)
    bare = _strip(program)
    lays = load_layouts()
    for e in decode_record(record_of(program)):
        kind = next(k for k, lay in lays.items() if method_fingerprint(lay, bare.execution_plan[0]) == e["fingerprint"])
        r = requirements(bare, "forward", "host" if kind == "lp64-SCALAR" else "cortex-m55", layout=lays[kind])
        assert (e["metadata_bytes"], e["scratch_bytes"], e["fast_scratch_bytes"]) == \
            (r.metadata_bytes, r.scratch_bytes, r.fast_scratch_bytes)
    assert with_record(program, "cortex-m55") is program          # one record only
    delegated = copy.deepcopy(bare)
    delegated.execution_plan[0].delegates = [BackendDelegate(id="EthosUBackend")]
    assert record_entries(delegated, "cortex-m55") == []
    assert with_record(delegated, "cortex-m55") is delegated       # no entry: no record at all
    assert record_entries(bare, "ethos-u55") != []                 # an unknown core: the host's entry alone


def test_inspect_shows_the_record(tmp_path):
    program, _ = ds_cnn_program(seed=1, target="cortex-m33", channels=8, blocks=1)
    path = tmp_path / "p.pte"
    path.write_bytes(serialize_program(program))
    lines = describe_record(parse_program(path.read_bytes()))
    assert lines[0].endswith("2 entries") and any("ilp32-DSP 'forward'" in s for s in lines)
    run = subprocess.run([sys.executable, "-m", "ptec", "inspect", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert run.returncode == 0 and "lp64-SCALAR 'forward': metadata" in run.stdout, run.stderr


def test_compile_writes_the_record_and_the_host_loads_it(tmp_path):
    """`compile` output carries entries for its core and the host; the host
    runtime reads its entry, the load (which refuses a record that
    disagrees) succeeds, and the output is the one the same program without
    its record gives (the walk's requirements)."""
    import torch
    from ptec.compiler import compile_model
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    r = compile_model(m, (torch.randn(1, 8),), [(torch.randn(1, 8),) for _ in range(8)], target="cortex-m33")
    lays = load_layouts()
    got = {e["fingerprint"] for e in decode_record(record_of(r.program))}
    plan = r.program.execution_plan[0]
    assert got == {method_fingerprint(lays["ilp32-DSP"], plan), method_fingerprint(lays["lp64-SCALAR"], plan)}
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    (tmp_path / "rec.pte").write_bytes(r.data)
    (tmp_path / "walk.pte").write_bytes(serialize_program(_strip(r.program)))
    rec, from_record, out_rec = _run(tmp_path / "rec.pte")
    walk, walked_from_record, out_walk = _run(tmp_path / "walk.pte")
    assert from_record and not walked_from_record and rec == walk
    assert re.findall(r"^output.*$", out_rec, re.M) == re.findall(r"^output.*$", out_walk, re.M)


def _other_kernels(lay, how):
    """A copy of layout `lay` as a runtime whose conv kernel differs from
    this build's: it declares no prepared arguments, or keeps 8 state
    bytes fewer."""
    out = copy.deepcopy(lay)
    name = "cortex_m::quantized_conv2d.out"
    if how == "prepared_args":
        del out["prepared_args"][name]
    else:
        out["kernels"][name] -= 8
    return out


def test_key_covers_the_methods_kernels():
    """An entry's key changes with the state bytes or prepared arguments of a
    kernel the method calls, and with no other kernel (a build with a
    selection of kernels keys the same entries as one with all)."""
    program, _ = ds_cnn_program(seed=1, target="cortex-m55", channels=8, blocks=1)
    plan = program.execution_plan[0]
    lay = load_layouts()["lp64-SCALAR"]
    key = method_fingerprint(lay, plan)
    assert key != layout_fingerprint(lay)
    for how in ("prepared_args", "state"):
        assert method_fingerprint(_other_kernels(lay, how), plan) != key, how
    unused = copy.deepcopy(lay)
    unused["kernels"]["aten::add.out"] += 8
    del unused["kernels"]["aten::mul.out"]
    assert method_fingerprint(unused, plan) == key


@pytest.mark.parametrize("how", ["prepared_args", "state"])
def test_record_of_other_kernels_is_not_read(tmp_path, how):
    """A record the compiler wrote from a layout whose conv kernel is not the
    host runtime's (other prepared arguments: other kept values; fewer state
    bytes: a smaller metadata figure) has no entry for the host: it measures
    the method, the figures and outputs are the walk's, and the load in
    memory of the reported size succeeds (it failed when the key covered
    the layout alone)."""
    program, _ = ds_cnn_program(seed=3, target="cortex-m55", channels=8, blocks=1)
    bare = _strip(program)
    lays = load_layouts()
    other = {"lp64-SCALAR": _other_kernels(lays["lp64-SCALAR"], how)}
    (entry,) = _entries(bare, ["lp64-SCALAR"], other)
    (truth,) = _entries(bare, ["lp64-SCALAR"], lays)
    assert entry[2:4] != truth[2:4]                   # the figures are not the host's
    with_other = copy.copy(bare)
    data = encode_record([entry])
    with_other.segment_data = list(bare.segment_data) + [data]
    with_other.named_data = list(bare.named_data or []) + [
        NamedData(key=KEY, segment_index=len(with_other.segment_data) - 1)]
    if not os.path.exists(PTEC_RUN):
        pytest.skip("no ptec-run (make host)")
    (tmp_path / "other.pte").write_bytes(serialize_program(with_other))
    (tmp_path / "walk.pte").write_bytes(serialize_program(bare))
    got, from_record, out = _run(tmp_path / "other.pte")
    walk, _, out_walk = _run(tmp_path / "walk.pte")
    assert not from_record and got == walk
    assert re.findall(r"^output.*$", out, re.M) == re.findall(r"^output.*$", out_walk, re.M)
