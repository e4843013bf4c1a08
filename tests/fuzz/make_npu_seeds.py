"""Writes the seed corpus of fuzz_npu_stream (tests/fuzz/fuzz_npu_stream.c):
the command streams of the three Vela oracles in shared/models, and
hand-made streams that each reach one operation family and NPU_OP_STOP
inside the harness's regions (0: 8 KiB constants, 1: 64 KiB scratch).

Seed format: byte 0 = configuration index (0 u55-32 .. 3 u55-256, 4 u65-256,
5 u65-512), 3 zero bytes, then the stream's little-endian words.

Usage: make_npu_seeds.py <shared dir> <out dir>"""
import os
import struct
import sys

U55_128, U55_256, U65_256 = 2, 3, 4


def cop_stream(data):
    """The COMMAND_STREAM words of the first COP1 payload in `data`."""
    pos = data.find(b"COP1")
    if pos < 0:
        raise SystemExit("no COP1 payload")
    pos += 4
    while True:
        (header,) = struct.unpack_from("<I", data, pos)
        action = header & 0xFF
        if action == 1:
            pos += 12
        elif action == 5:
            pos += 4
        elif action == 2:
            length = ((header >> 8) & 0xFF) << 16 | header >> 16
            return list(struct.unpack_from("<%dI" % length, data, pos + 4))
        else:
            raise SystemExit("unexpected COP record %d" % action)


def cmd0(op, param=0):
    return [op | (param & 0xFFFF) << 16]


def cmd1(op, payload, param=0):
    return [op | 0x4000 | (param & 0xFFFF) << 16, payload & 0xFFFFFFFF]


def fmap(precision_op, region_op, base0_op, w0_op, zp_op, precision, base, w, h, d, e):
    return (cmd0(precision_op, precision) + cmd0(region_op, 1) + cmd1(base0_op, base) +
            cmd1(base0_op + 4, d * e) + cmd1(base0_op + 5, w * d * e) + cmd1(base0_op + 6, 16 * e * w) +
            cmd0(w0_op, w - 1) + cmd0(w0_op + 1, h - 1) + cmd0(w0_op + 2, h - 1) + cmd0(zp_op, 0))


def maps(ifm_precision=1, ofm_precision=0x101, w=8, h=8, d=8):
    s = fmap(0x105, 0x10F, 0x000, 0x10A, 0x109, ifm_precision, 0, w, h, d, 1) + cmd0(0x104, d - 1)
    s += fmap(0x185, 0x18F, 0x080, 0x18A, 0x189, ifm_precision, 1024, w, h, d, 1)
    s += fmap(0x114, 0x11F, 0x010, 0x11A, 0x118, ofm_precision, 4096, w, h, d, 1)
    s += cmd0(0x111, w - 1) + cmd0(0x112, h - 1) + cmd0(0x113, d - 1)
    s += cmd0(0x126, 0x8000) + cmd0(0x127, 0x7FFF) + cmd1(0x024, 1 << 30, 30)
    s += cmd1(0x025, 1) + cmd1(0x026, 1)
    return s


STOP = cmd0(0x000, 0xFFFF)


def hand_made():
    dma = cmd0(0x130, 0) + cmd0(0x131, 1) + cmd1(0x030, 0) + cmd1(0x031, 0) + cmd1(0x032, 2048) + cmd0(0x010)
    lut = (cmd0(0x130, 0) + cmd0(0x131, 0x103) + cmd1(0x030, 0) + cmd1(0x031, 0x5800) + cmd1(0x032, 256) +
           cmd0(0x010) + cmd0(0x011))
    pool = cmd0(0x120, 2) + cmd0(0x121, 2) + cmd0(0x100, 1) + cmd0(0x101, 1) + cmd0(0x102, 1) + cmd0(0x103, 1)
    return {
        "dma_then_add": dma + maps() + cmd0(0x006, 1) + STOP,
        "lut_add": lut + maps() + cmd0(0x125, 16) + cmd0(0x180, 0x80) + cmd0(0x006, 1) + STOP,
        "pool_average": dma + maps() + pool + cmd0(0x005, 1) + STOP,
        "pool_max_sum": maps() + pool + cmd0(0x005, 0) + cmd0(0x005, 2) + STOP,
        "sub_broadcast_min": dma + maps() + cmd0(0x180, 0x45) + cmd0(0x006, 2) + cmd0(0x006, 3) + STOP,
        "int32_shr_clz": maps(9, 0x8105, 4, 4, 4) + cmd0(0x006, 8) + cmd0(0x006, 7) + cmd0(0x006, 9) + STOP,
    }


def write(out, name, config, words):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([config, 0, 0, 0]) + struct.pack("<%dI" % len(words), *words))


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    oracles = [
        ("minimal_example", U55_128, "models/upstream/ethos_u_minimal_example.pte"),
        ("person_detect", U55_256, "models/ethos-u/tflm/person_detect_vela.tflite"),
        ("kws_cnn_small_u65", U65_256, "models/ethos-u/arm/kws_cnn_small-ethos-u65-256/model.tflite"),
    ]
    for name, config, path in oracles:
        with open(os.path.join(shared, path), "rb") as f:
            write(out, name, config, cop_stream(f.read()))
    for name, words in hand_made().items():
        write(out, name, U55_128, words)


if __name__ == "__main__":
    main()
