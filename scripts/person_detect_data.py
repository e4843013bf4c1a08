"""TFLM's person detection for the NPU runs (make demo NPU=1, tests/target):
person_detect_vela.tflite (Vela, ethos-u55-256) and person_detect.tflite
(int8, for ptec's cortex_m kernels) imported to .pte with ptec's importer,
and TFLM's two test images as TFLM feeds them: the 8-bit BMP's pixel bytes,
top row first, copied raw into the [1, 96, 96, 1] int8 input.

Usage: person_detect_data.py <shared dir> <out dir>
Writes person_detect_vela.pte, person_detect.pte, person.bin, no_person.bin
and images.bin (both images, one input block each)."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from ptec.tflite import import_tflite  # noqa: E402


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def bmp_top_down(path):
    with open(path, "rb") as f:
        data = f.read()
    offset, = struct.unpack_from("<I", data, 10)
    width, height = struct.unpack_from("<ii", data, 18)
    bpp, = struct.unpack_from("<H", data, 28)
    if (width, abs(height), bpp) != (96, 96, 8):
        raise SystemExit(f"{path}: not a 96x96 8-bit BMP")
    rows = [data[offset + r * width:offset + (r + 1) * width] for r in range(abs(height))]
    return b"".join(rows[::-1] if height > 0 else rows)  # a positive height is stored bottom-up


def main():
    shared, out = sys.argv[1], sys.argv[2]
    tflm = os.path.join(shared, "models", "ethos-u", "tflm")
    os.makedirs(out, exist_ok=True)
    for name in ("person_detect_vela", "person_detect"):
        write(os.path.join(out, name + ".pte"), import_tflite(os.path.join(tflm, name + ".tflite")))
    images = [bmp_top_down(os.path.join(tflm, name + ".bmp")) for name in ("person", "no_person")]
    for name, pixels in zip(("person", "no_person"), images):
        write(os.path.join(out, name + ".bin"), pixels)
    write(os.path.join(out, "images.bin"), b"".join(images))


if __name__ == "__main__":
    main()
