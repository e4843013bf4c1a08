"""Writes the seed corpus of fuzz_mlw (tests/fuzz/fuzz_mlw.c): every CONV/DEPTHWISE weight
stream of the Vela oracles in shared/models (person_detect_vela.tflite, u55-256; the kws
U65-256 model), each behind the 8-byte layout header its op's registers give. A stream the
op reads from region 1 is taken from where the stream's own DMAs copied it (a shadow of
region 1 built from the DMA commands).

Usage: make_mlw_seeds.py <shared dir> <out dir>"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

from make_npu_seeds import cop_stream  # noqa: E402
from ptec.tflite.reader import read_model  # noqa: E402

MODELS = [
    "models/ethos-u/tflm/person_detect_vela.tflite",
    "models/ethos-u/arm/kws_cnn_small-ethos-u65-256/model.tflite",
]
CONV, DEPTHWISE, DMA_START = 0x002, 0x003, 0x010


def vela_tensors(path):
    g = read_model(path).subgraphs[0]
    (op,) = g.operators
    cop, flash, scratch = (g.tensors[i] for i in op.inputs[:3])
    return cop.array().tobytes(), flash.array().tobytes(), scratch.numel


def weight_seeds(cop, flash, scratch_bytes):
    """(header + stream) per CONV/DEPTHWISE op, in stream order."""
    words = cop_stream(cop)
    reg0, reg1 = {}, {}
    regions = {0: bytes(flash), 1: bytearray(scratch_bytes)}
    seeds, pos = [], 0
    while pos < len(words):
        w = words[pos]
        opcode, param = w & 0x3FF, w >> 16
        if w & 0x4000:
            reg1[opcode] = words[pos + 1]
            pos += 2
            continue
        pos += 1
        if opcode >= 0x100:
            reg0[opcode] = param
        elif opcode == DMA_START and not reg0.get(0x131, 0) & 0x100:  # not into SHRAM
            src = regions[reg0.get(0x130, 0) & 7]
            s, d, n = reg1.get(0x030, 0), reg1.get(0x031, 0), reg1.get(0x032, 0)
            regions[reg0.get(0x131, 0) & 7][d:d + n] = src[s:s + n]
        elif opcode in (CONV, DEPTHWISE):
            ks = reg0.get(0x122, 0)
            dil_x, dil_y = ((ks >> 3) & 1) + 1, ((ks >> 4) & 1) + 1
            flags = (opcode == DEPTHWISE) | ((ks >> 2) & 1) << 1 | \
                ((reg0.get(0x105, 0) >> 2) & 3 == 1) << 2 | (dil_x == 2) << 3 | (dil_y == 2) << 4
            header = struct.pack("<HHBBBB", reg0.get(0x113, 0), reg0.get(0x104, 0),
                                 reg0.get(0x121, 0) // dil_y, reg0.get(0x120, 0) // dil_x,
                                 reg0.get(0x117, 0), flags)
            base, length = reg1.get(0x020, 0), reg1.get(0x021, 0)
            seeds.append(header + bytes(regions[reg0.get(0x128, 0) & 7][base:base + length]))
    return seeds


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    total = 0
    for path in MODELS:
        name = os.path.splitext(os.path.basename(os.path.dirname(path) if path.endswith("model.tflite")
                                                 else path))[0]
        for k, seed in enumerate(weight_seeds(*vela_tensors(os.path.join(shared, path)))):
            with open(os.path.join(out, f"{name}-{k:02d}.bin"), "wb") as f:
                f.write(seed)
            total += 1
    print(f"make_mlw_seeds: {total} weight streams in {out}")


if __name__ == "__main__":
    main()
