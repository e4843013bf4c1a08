"""person_detect's oracle inputs and ptec's reference outputs for them
(issue 11, docs/tflite-import.md): the two TFLM test images fed as TFLM feeds
them, and seeded random int8 inputs; the reference is person_detect.tflite
imported by ptec.tflite.import_int8 and run on the host runtime's cortex_m
kernels. The NPU oracle compares the Vela model's output with these bytes."""
import os
import sys

import numpy as np

from conftest import SHARED
from ptec import host_runtime
from ptec.tflite import reader
from ptec.tflite.import_int8 import import_int8

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from person_detect_data import bmp_top_down  # noqa: E402

TFLM = os.path.join(SHARED, "models", "ethos-u", "tflm")
PERSON_DETECT = os.path.join(TFLM, "person_detect.tflite")
RANDOM_SEED = 11


def bmp_pixels_top_down(path):
    """TFLM's test input: the 8-bit BMP's pixel indices, top row first
    (scripts/person_detect_data.py reads it, for the demo and the QEMU test too)."""
    return np.frombuffer(bmp_top_down(path), np.uint8).reshape(96, 96)


def tflm_input(bmp_name):
    """[1,96,96,1] int8: the BMP's bytes copied raw into the int8 input (TFLM's convention)."""
    return bmp_pixels_top_down(os.path.join(TFLM, bmp_name)).view(np.int8).reshape(1, 96, 96, 1)


def random_inputs(count=100, seed=RANDOM_SEED):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, (1, 96, 96, 1)).astype(np.int8) for _ in range(count)]


def oracle_inputs():
    """(name, [1,96,96,1] int8 NHWC) for person.bmp, no_person.bmp and 100 random inputs."""
    named = [("person.bmp", tflm_input("person.bmp")), ("no_person.bmp", tflm_input("no_person.bmp"))]
    return named + [(f"random {RANDOM_SEED}/{k}", x) for k, x in enumerate(random_inputs())]


def reference_program():
    return import_int8(reader.read_model(PERSON_DETECT))


def reference_outputs(inputs, program=None):
    """The two int8 output bytes of ptec's reference run for each NHWC input."""
    result = program or reference_program()
    return [host_runtime.run(result.program, result.data, [x.transpose(0, 3, 1, 2)])[0]
            .reshape(2) for x in inputs]
