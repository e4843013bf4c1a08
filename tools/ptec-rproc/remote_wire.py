"""The model server's messages (firmware/remote/remote_protocol.h, the one
statement of the layout), restated for Python: struct formats, kinds,
statuses. tests/python/test_imx93.py checks this copy against the header."""
import struct

REQUEST_MAGIC = 0x31515450  # "PTQ1"
REPLY_MAGIC = 0x31525450    # "PTR1"
REQUEST = struct.Struct("<IIHHII")   # magic, seq, kind, index, offset, length
REPLY = struct.Struct("<IIHHI")      # magic, seq, kind, status, length
MAX_MESSAGE = 496
MAX_BODY = MAX_MESSAGE - REPLY.size
MAX_DATA = MAX_MESSAGE - REQUEST.size
ENDPOINT = 30

KINDS = {"PING": 1, "LOAD": 2, "INFO": 3, "REQUIREMENTS": 4, "INPUT": 5, "RUN": 6, "OUTPUT": 7,
         "PROFILE": 8, "STATS": 9, "ERROR": 0x7F}
RUN_PROFILE = 1
ERRORS = {0x101: "E_MAGIC", 0x102: "E_KIND", 0x103: "E_LENGTH", 0x104: "E_RPMSG", 0x105: "E_ENDPOINT",
          0x106: "E_NO_MODEL", 0x107: "E_RANGE"}

INFO = struct.Struct("<IIIIHHI32s32s")  # address, capacity, program bytes, instructions, inputs, outputs, unit, method, board
TENSOR = struct.Struct("<BBBBI4i")      # dtype, rank, planned, dim order (2 bits each), nbytes, sizes[4]
MEMORY = struct.Struct("<14I")
MEMORY_FIELDS = ("metadata_bytes", "planned_count", "planned0", "planned1", "planned2", "planned3",
                 "scratch_bytes", "fast_scratch_bytes", "metadata_pool", "planned_pool", "scratch_pool",
                 "fast_scratch_pool", "io_pool", "io_bytes")
RESULT = struct.Struct("<IIiIII")       # cost lo, hi, label, outputs, output 0 bytes, instructions
OP = struct.Struct("<II40s")
STATS = struct.Struct("<8I")
STATS_FIELDS = ("requests", "replies", "error_replies", "ring_errors", "send_failures", "stack_unused",
                "loads", "runs")
TICK_UNITS = {0: "ticks", 1: "instructions", 2: "cycles", 3: "ns"}
DTYPES = {0: ("uint8", "|u1", 1), 1: ("int8", "|i1", 1), 2: ("int16", "<i2", 2), 3: ("int32", "<i4", 4),
          4: ("int64", "<i8", 8), 6: ("float32", "<f4", 4), 7: ("float64", "<f8", 8), 11: ("bool", "|b1", 1)}


def request(seq, kind, index=0, offset=0, length=0, data=b""):
    return REQUEST.pack(REQUEST_MAGIC, seq, KINDS[kind] if isinstance(kind, str) else kind,
                        index, offset, length) + data


class Reply:
    def __init__(self, payload):
        if len(payload) < REPLY.size:
            raise ValueError("reply shorter than its head (%d bytes)" % len(payload))
        magic, self.seq, self.kind, self.status, length = REPLY.unpack_from(payload)
        if magic != REPLY_MAGIC:
            raise ValueError("reply magic 0x%08x" % magic)
        self.body = bytes(payload[REPLY.size:REPLY.size + length])
        if len(self.body) != length:
            raise ValueError("reply body shorter than its head says")

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def status_name(self):
        return ERRORS.get(self.status, "0x%02x" % self.status)


def parse_info(body):
    f = INFO.unpack_from(body)
    info = {"model_address": f[0], "model_capacity": f[1], "program_bytes": f[2], "instructions": f[3],
            "inputs": f[4], "outputs": f[5], "tick_unit": TICK_UNITS.get(f[6], str(f[6])),
            "method": f[7].split(b"\0")[0].decode(), "board": f[8].split(b"\0")[0].decode()}
    tensors = []
    for i in range(info["inputs"] + info["outputs"]):
        off = INFO.size + TENSOR.size * i
        if off + TENSOR.size > len(body):
            break
        dtype, rank, planned, order, nbytes, *sizes = TENSOR.unpack_from(body, off)
        tensors.append({"dtype": dtype, "rank": rank, "planned": bool(planned), "nbytes": nbytes,
                        "sizes": sizes[:rank], "dim_order": [(order >> (2 * d)) & 3 for d in range(rank)]})
    info["input_tensors"] = tensors[:info["inputs"]]
    info["output_tensors"] = tensors[info["inputs"]:]
    return info
