"""Extracts the Vela oracles of spec §8.2/§8.3 for test_npu_vela_oracles.c:
for each model, the ethos-u operator's COP1 payload and flash (region 0) as
raw files, and one line of layout facts (the NPU it was compiled for, the
scratch size, where the input and the output sit in the scratch, from the
model's OfflineMemoryAllocation). Reads the .tflite with ptec's one TFLite
reader (python/ptec/tflite/reader.py); shares nothing with the NPU model.

Usage: make_npu_oracles.py <shared dir> <out dir>"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))

from ptec.tflite.reader import read_model  # noqa: E402

ORACLES = [
    # name, model, Vela accelerator
    ("kws_cnn_small_u65_256", "models/ethos-u/arm/kws_cnn_small-ethos-u65-256/model.tflite", "ethos-u65-256"),
    ("person_detect_u55_256", "models/ethos-u/tflm/person_detect_vela.tflite", "ethos-u55-256"),
]


def extract(path):
    model = read_model(path)
    graph = model.subgraphs[0]
    (op,) = [o for o in graph.operators if o.name == "ethos-u"]
    cop, flash, scratch = (graph.tensors[i] for i in op.inputs[:3])
    offsets = model.offline_memory_allocation()
    tin, tout = graph.tensors[graph.inputs[0]], graph.tensors[graph.outputs[0]]

    def nbytes(t):
        n = 1
        for d in t.shape:
            n *= d
        return n

    def in_scratch(t):
        # arena offset of the tensor minus the scratch tensor's
        return offsets[t.index] - offsets[scratch.index]

    layout = (nbytes(scratch), in_scratch(tin), nbytes(tin), in_scratch(tout), nbytes(tout))
    return cop.array().tobytes(), flash.array().tobytes(), layout


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name, rel, accelerator in ORACLES:
        cop, flash, layout = extract(os.path.join(shared, rel))
        write(os.path.join(out, name + ".cop"), cop)
        write(os.path.join(out, name + ".flash"), flash)
        line = "%s %d %d %d %d %d\n" % ((accelerator,) + layout)
        write(os.path.join(out, name + ".layout"), line.encode())


if __name__ == "__main__":
    main()
