"""pack_padded_sequence(x, lengths) with lengths computed in the program (a
model input, `(tok != 0).sum(1)`; probe finding R2).

capture_packed_sequences takes constant lengths: each step of a recurrent
stand-in (capture_modules.Recurrent) then knows which sequences still run.
With computed lengths the packed batch is the whole padded batch and the
stand-in runs all its T steps (not the example's longest length, which
torch's packed batch had when capture recorded the steps: a longer row at
run time would stop there), and each step's factor is computed: keep_t =
(lengths > t) as 0/1 per sequence, widened to the state's [batch, H]; the
step's output is h_t * keep_t and the state h_t * keep_t + h * (1 -
keep_t) (held past the sequence's length), so h_n (and the LSTM's c_n)
is each sequence's state at its own last step, as torch's.
pad_packed_sequence gives the outputs back with zeros (or padding_value) past each length; torch's padded length is
then max(lengths), which depends on the input: ptec needs
total_length=<the padded steps> (torch's spelling for a fixed length) and
refuses without it, in one line. Lengths outside 1..steps (torch raises)
are not checked: such a sequence runs all steps."""
from __future__ import annotations

import torch
import torch.fx

from .capture_modules import CaptureModuleError


def computed(lengths) -> bool:
    """Whether pack_padded_sequence's lengths are a traced value of the input."""
    if not isinstance(lengths, torch.fx.Proxy):
        return False
    tracer = lengths.tracer
    return not (hasattr(tracer, "fixed") and tracer.fixed(lengths.node))


def _widen(keep, size: int):
    """keep [B] (0/1 float) as [B, size]."""
    return keep.unsqueeze(1).expand(-1, size).contiguous()


def step_keeps(lengths, t: int, sizes):
    """The 0/1 factors [B, size] for each of `sizes` at step t (the
    sequences still running), or None when every sequence runs (no lengths,
    or constant lengths all above t)."""
    if lengths is None:
        return None
    if isinstance(lengths, torch.fx.Proxy):
        keep = (lengths > t).to(torch.float32)
        return [_widen(keep, n) for n in sizes]
    live = [t < n for n in lengths]
    if all(live):
        return None
    keep = torch.tensor([[1.0] if k else [0.0] for k in live])
    return [keep.expand(len(live), n).contiguous() for n in sizes]


def pad_computed(sequence, batch_first: bool, padding_value, total_length):
    """pad_packed_sequence of a PackedInput whose lengths are computed."""
    out = sequence.padded if sequence.batch_first else sequence.padded.transpose(0, 1)    # [B, T, ...]
    steps = int(out.shape[1])
    if total_length is None or isinstance(total_length, torch.fx.Proxy):
        raise CaptureModuleError("pad_packed_sequence of lengths computed from the model's input: torch's output "
                                 "is max(lengths) steps long, which depends on the input: give "
                                 f"total_length={steps} (the padded steps)")
    total_length = int(total_length)
    if total_length < steps:
        raise CaptureModuleError(f"pad_packed_sequence: total_length {total_length} is less than the padded "
                                 f"steps ({steps}), which lengths computed from the input may reach")
    lengths = sequence.lengths
    if not sequence.zeroed or padding_value:
        # [B, T] 0/1: step t of sequence b runs
        keep = torch.stack([(lengths > t).to(torch.float32) for t in range(steps)], 1)
        keep = keep.reshape(keep.shape + (1,) * (out.dim() - 2)).expand(out.shape).contiguous()
        if not sequence.zeroed:
            out = out * keep
        if padding_value:
            out = out + (1.0 - keep) * float(padding_value)
    if total_length > steps:
        import torch.nn.functional as F
        out = F.pad(out, (0, 0) * (out.dim() - 2) + (0, total_length - steps), value=float(padding_value))
    out = out if batch_first else out.transpose(0, 1)
    return out, lengths
