"""Writes the cases test_npu_modes runs through both driver modes: for each
Vela network in shared/models, its COP1 command data, its flash (region 0)
and a layout file. Read with ptec's own readers (the .pte reader and the
vela_bin_stream reader for upstream's sample; the TFLite reader and the
Vela importer's blob extraction for the .tflite files).

<name>.cop, <name>.flash, <name>.txt where the .txt has the lines
    target <Vela accelerator>       scratch <bytes>       fast <bytes>
    inputs <n> (<scratch offset> <bytes>)*   outputs <n> (<offset> <bytes>)*

Also person_detect.images: person.bmp then no_person.bmp as TFLM's test
feeds them (the 8-bit pixels, rows top-down; the file stores them bottom-up
from the offset in header bytes 10..13).

Usage: make_mode_cases.py <shared dir> <out dir>"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))

from ptec.backends.ethos_u.blob import read_blob  # noqa: E402
from ptec.backends.ethos_u.command_stream import parse_cop  # noqa: E402
from ptec.backends.ethos_u.vela_import import vela_blob  # noqa: E402
from ptec.pte.inspect import delegate_data  # noqa: E402
from ptec.pte.reader import read_program  # noqa: E402
from ptec.tflite.reader import read_model  # noqa: E402


def write_case(out, name, blob, fast_size):
    with open(os.path.join(out, name + ".cop"), "wb") as f:
        f.write(blob.cmd_data)
    with open(os.path.join(out, name + ".flash"), "wb") as f:
        f.write(blob.weight_data)
    io = lambda entries: " ".join([str(len(entries))] + ["%d %d" % (e.offset, e.nbytes) for e in entries])
    with open(os.path.join(out, name + ".txt"), "w") as f:
        f.write("target %s\nscratch %d\nfast %d\ninputs %s\noutputs %s\n" % (
            parse_cop(blob.cmd_data).target, blob.scratch_size, fast_size, io(blob.inputs), io(blob.outputs)))


def upstream_case(path):
    program = read_program(path)
    for plan in program.execution_plan or []:
        for d in plan.delegates or []:
            if d.id == "EthosUBackend":
                return read_blob(delegate_data(program, d))
    raise SystemExit("%s: no EthosUBackend delegate" % path)


def vela_case(path):
    model = read_model(path)
    blob = vela_blob(model)[0]
    g = model.subgraphs[0]
    fast = g.tensors[g.operators[0].inputs[3]]
    return blob, fast.numel * fast.dtype.itemsize


def bmp_pixels(path, width=96, height=96):
    with open(path, "rb") as f:
        data = f.read()
    start = int.from_bytes(data[10:14], "little")
    rows = [data[start + width * r:start + width * (r + 1)] for r in range(height)]
    return b"".join(reversed(rows))


def main():
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    models = os.path.join(shared, "models")
    write_case(out, "minimal_example", upstream_case(os.path.join(models, "upstream", "ethos_u_minimal_example.pte")), 0)
    write_case(out, "kws_u65", *vela_case(os.path.join(models, "ethos-u", "arm", "kws_cnn_small-ethos-u65-256", "model.tflite")))
    tflm = os.path.join(models, "ethos-u", "tflm")
    write_case(out, "person_detect", *vela_case(os.path.join(tflm, "person_detect_vela.tflite")))
    with open(os.path.join(out, "person_detect.images"), "wb") as f:
        f.write(bmp_pixels(os.path.join(tflm, "person.bmp")) + bmp_pixels(os.path.join(tflm, "no_person.bmp")))


if __name__ == "__main__":
    main()
