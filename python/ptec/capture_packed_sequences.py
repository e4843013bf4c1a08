"""nn.utils.rnn's packing functions while torch.fx traces a model (issue 15,
"audio, sequence and transformer models compile").

pack_padded_sequence builds a PackedSequence from the padded batch with
data-dependent ops (_pack_padded_sequence gives the time-major rows of
the sequences still running), pad_packed_sequence turns it back with a
Python int total_length, and pad_sequence takes a Python list of tensors:
none traces ("total_length must be int, not a traced value", "expected
Tensor as element 0 but got Node"). A ptec program has static shapes, so
with lengths that are constants at trace time (a list, a tensor made in
forward from no input, a buffer) the packed batch is the padded batch and
its lengths (PackedInput): the recurrent stand-ins
(capture_modules.Recurrent) run each sequence for its own length (the
output zero past it, the state held, so h_n is the state at its own last
step), and pad_packed_sequence gives that output back in the layout asked
for, padded with padding_value to total_length. pad_sequence of traced
values pads each to the longest and stacks them. Lengths computed from the
model's input run too (capture_packed_lengths).

`patched(model)` puts the stand-ins in place of torch's functions for one
trace: in torch.nn.utils.rnn and in the globals of the model's forwards
(`from torch.nn.utils.rnn import pack_padded_sequence`). Given no traced
value they call torch's own function."""
from __future__ import annotations

import contextlib
from typing import List

import torch
import torch.nn.functional as F
import torch.nn.utils.rnn as rnn_utils

from .capture_modules import CaptureModuleError
from .capture_packed_lengths import computed as computed_lengths, pad_computed

_ORIGINAL = {name: getattr(rnn_utils, name) for name in ("pack_padded_sequence", "pad_packed_sequence",
                                                          "pad_sequence")}


class PackedInput:
    """A packed batch at trace time: the padded tensor (cut to the longest
    length; batch first or not) and each sequence's length, in batch order."""

    def __init__(self, padded, lengths: List[int], batch_first: bool, zeroed: bool = False):
        # zeroed: the values past each length are zero (a recurrent layer's output)
        self.padded, self.lengths, self.batch_first, self.zeroed = padded, lengths, batch_first, zeroed

    def again(self, out, batch_first: bool) -> "PackedInput":
        """A recurrent layer's output over the same sequences (zero past each length)."""
        return PackedInput(out, self.lengths, batch_first, zeroed=True)


def _constant_lengths(lengths) -> List[int]:
    if isinstance(lengths, torch.fx.Proxy):
        tracer, node = lengths.tracer, lengths.node
        if not (hasattr(tracer, "fixed") and tracer.fixed(node)):
            raise CaptureModuleError("pack_padded_sequence with lengths computed from the model's input: ptec "
                                     "takes lengths that are constants at trace time (a list, a buffer)")
        lengths = tracer.value(node)
    if isinstance(lengths, torch.Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    if not isinstance(input, torch.fx.Proxy):
        return _ORIGINAL["pack_padded_sequence"](input, lengths, batch_first, enforce_sorted)
    if computed_lengths(lengths):       # lengths of the input: each step's factors computed (capture_packed_lengths)
        return PackedInput(input, lengths, batch_first)
    lengths = _constant_lengths(lengths)
    if enforce_sorted and any(a < b for a, b in zip(lengths, lengths[1:])):
        raise CaptureModuleError("pack_padded_sequence: lengths not sorted in decreasing order with "
                                 "enforce_sorted=True (torch refuses them too)")
    steps = input.shape[1 if batch_first else 0]
    if not lengths or min(lengths) < 1 or max(lengths) > steps:
        raise CaptureModuleError(f"pack_padded_sequence: lengths {lengths} for {steps} steps")
    longest = max(lengths)
    if longest < steps:         # the packed batch has no step past the longest sequence
        input = input[:, :longest] if batch_first else input[:longest]
    return PackedInput(input, lengths, batch_first)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    if not isinstance(sequence, PackedInput):
        return _ORIGINAL["pad_packed_sequence"](sequence, batch_first, padding_value, total_length)
    if isinstance(sequence.lengths, torch.fx.Proxy):
        return pad_computed(sequence, batch_first, padding_value, total_length)
    out = sequence.padded if sequence.batch_first else sequence.padded.transpose(0, 1)    # [B, T, ...]
    batch, steps = len(sequence.lengths), max(sequence.lengths)
    if not sequence.zeroed and min(sequence.lengths) < steps:      # packed and padded again: zero past each length
        keep = torch.tensor([[1.0 if t < n else 0.0 for t in range(steps)] for n in sequence.lengths])
        out = out * keep.reshape((batch, steps) + (1,) * (out.dim() - 2)).expand(out.shape).contiguous()
    if padding_value:           # the outputs past each length are zero: add the padding value there
        past = torch.tensor([[0.0 if t < n else 1.0 for t in range(steps)] for n in sequence.lengths])
        out = out + (past * float(padding_value)).reshape((batch, steps) + (1,) * (out.dim() - 2)).expand(
            out.shape).contiguous()
    if total_length is not None:
        total_length = int(total_length)
        if total_length < steps:
            raise CaptureModuleError(f"pad_packed_sequence: total_length {total_length} is less than the longest "
                                     f"sequence ({steps}) (torch refuses it too)")
        if total_length > steps:
            out = F.pad(out, (0, 0) * (out.dim() - 2) + (0, total_length - steps), value=float(padding_value))
    out = out if batch_first else out.transpose(0, 1)
    return out, torch.tensor(sequence.lengths, dtype=torch.int64)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    sequences = list(sequences)
    if not any(isinstance(s, torch.fx.Proxy) for s in sequences):
        return _ORIGINAL["pad_sequence"](sequences, batch_first, padding_value)
    longest = max(int(s.shape[0]) for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - int(s.shape[0])
        padded.append(s if extra == 0 else
                      F.pad(s, (0, 0) * (s.dim() - 1) + (0, extra), value=float(padding_value)))
    return torch.stack(padded, 0 if batch_first else 1)


_STAND_INS = {"pack_padded_sequence": pack_padded_sequence, "pad_packed_sequence": pad_packed_sequence,
              "pad_sequence": pad_sequence}


@contextlib.contextmanager
def patched(model: torch.nn.Module):
    """torch's packing functions replaced by the stand-ins while tracing
    `model`: in torch.nn.utils.rnn and in its modules' forward globals."""
    originals = {id(f): name for name, f in _ORIGINAL.items()}
    undo = []
    spaces = [vars(rnn_utils)]
    for m in model.modules():
        g = getattr(getattr(type(m), "forward", None), "__globals__", None)
        if g is not None and all(g is not s for s in spaces):
            spaces.append(g)
    for space in spaces:
        for key, value in list(space.items()):
            if id(value) in originals:
                undo.append((space, key, value))
                space[key] = _STAND_INS[originals[id(value)]]
    try:
        yield
    finally:
        for space, key, value in undo:
            space[key] = value


def packed_lstm_layers(rnn, seq, lengths: List[int]):
    """An nn.LSTM stand-in's (capture_modules.Recurrent with lstm_kernel:
    unidirectional, no projection) run over a packed batch of constant
    lengths from the zero state, on its LSTMLayer kernels (one
    ptec::quantized_lstm per layer, as the unpacked layer; unrolled int8
    steps were up to 5 output steps off where the kernel is within 2). An
    LSTM is causal, so each sequence's outputs before its length do not read
    the padded steps after it: every layer runs all the steps of the padded
    batch [B, T, I] (T the longest length), and the last layer's outputs are
    zeroed past each length (a constant 0/1 mul); h_n is each sequence's
    output at its own last step, c_n its final cell over its own steps
    (an LSTMFinalCell: a model reading c_n is unrolled, as unpacked).
    Returns (out [B, T, H] batch first, (h_n, c_n))."""
    batch, steps = len(lengths), max(lengths)
    last_h, last_c = [], []
    for k in range(rnn.layers):
        out = rnn.layer[k](seq)
        last_h.append(torch.cat([out[b:b + 1, n - 1] for b, n in enumerate(lengths)], 0).unsqueeze(0))
        last_c.append(torch.cat([rnn.final_cell[k](seq[b:b + 1, :n]) for b, n in enumerate(lengths)], 0)
                      .unsqueeze(0))
        seq = out
    if min(lengths) < steps:
        keep = torch.tensor([[1.0 if t < n else 0.0 for t in range(steps)] for n in lengths])
        seq = seq * keep.reshape(batch, steps, 1).expand(batch, steps, rnn.hidden).contiguous()
    return seq, (torch.cat(last_h, 0), torch.cat(last_c, 0))
