"""Edits of a read Program that take it to a layout the tests need and no
writer emits on its own."""
from ptec.pte.schema import DataLocation


def move_delegate_blob_to_segment(program, delegate_index=0):
    """Moves the inline blob of delegate `delegate_index` of the first plan
    into a new segment (the layout of modern exports) and drops the inline
    table, which the programs edited this way hold that blob alone in.
    Returns the blob."""
    delegate = program.execution_plan[0].delegates[delegate_index]
    blob = program.backend_delegate_data[delegate.processed.index].data
    program.segment_data.append(blob)
    program.segments = list(program.segments or []) + [None]
    delegate.processed.location = DataLocation.SEGMENT
    delegate.processed.index = len(program.segment_data) - 1
    program.backend_delegate_data = []
    return blob
