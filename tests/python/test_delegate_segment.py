"""A delegate blob stored in a segment (the default of modern exports) is
found as well as an inline one: the upstream Ethos-U sample, rewritten with
its blob moved to a segment, fails to load naming the backend and the same
blob size."""
import os
import subprocess

from ptec.pte.reader import read_program
from ptec.pte.schema import DataLocation
from ptec.pte.writer import write_program

from pte_edits import move_delegate_blob_to_segment
from runtime_util import PTEC_RUN


def test_segment_delegate_blob_is_found(upstream, tmp_path):
    program = read_program(os.path.join(upstream, "ethos_u_minimal_example.pte"))
    delegate = program.execution_plan[0].delegates[0]
    assert delegate.processed.location == DataLocation.INLINE
    blob = move_delegate_blob_to_segment(program)
    assert delegate.processed.location == DataLocation.SEGMENT
    path = os.path.join(str(tmp_path), "segment_delegate.pte")
    write_program(program, path)
    assert open(path, "rb").read()[8:12] == b"eh00"
    ops = subprocess.run([PTEC_RUN, "--list-ops"], capture_output=True, text=True).stdout
    proc = subprocess.run([PTEC_RUN, path], capture_output=True, text=True)
    if "\n  EthosUBackend" in ops:
        # The build has the backend (the host default): the segment blob runs,
        # ones + ones = 2 (spec ethos-u-npu.md §8.1).
        assert proc.returncode == 0, proc.stderr
        assert "output 0: float32 [1, 1, 1, 1] = 2" in proc.stdout
    else:
        assert proc.returncode == 1
        assert f"backend EthosUBackend not available in this build (delegate 0, {len(blob)}-byte blob)" in proc.stderr
