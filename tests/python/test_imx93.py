"""The i.MX93 Cortex-M33 board (boards/imx93_m33) and its flow, emulated:
tools/ptec-rproc plays Linux against the firmware on QEMU's AN505
(boards/imx93_m33_sim) over DDR shared through a file.

- Static: both ELFs pass remoteproc's checks; corrupted resource tables and
  segments are refused with Linux's own messages.
- Flow: ds_cnn and the digits CNN, compiled for the M33, placed in DDR as
  `dd` would, run over RPMsg with output bytes identical to the host
  runtime's; requirements, cost and memory come back over RPMsg and the
  requirements equal what the AOT computes from the file.
- Models: a corrupted or truncated model gets an error reply naming the
  problem, and the next good model runs without a reboot.
- RPMsg: malformed headers, oversize lengths, unknown endpoints and
  non-requests get error replies; 10,000 round trips lose nothing.
Needs the imx93-m33 and imx93-m33-sim builds (`make cross`) and QEMU; a
skip otherwise (a failure under make test)."""
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.models import load_model
from ptec.pte import NUMPY_DTYPE, ScalarType, parse_program
from ptec.requirements import requirements

RPROC_DIR = os.path.join(ROOT, "tools", "ptec-rproc")
sys.path.insert(0, RPROC_DIR)
import remote_wire as wire  # noqa: E402
import rproc_checks  # noqa: E402
from rproc_elf import Elf  # noqa: E402
from sim_session import RemoteError, SimSession  # noqa: E402

SIM_ELF = os.path.join(ROOT, "build", "imx93-m33-sim", "firmware", "remote", "ptec_remote.elf")
BOARD_ELF = os.path.join(ROOT, "build", "imx93-m33", "firmware", "remote", "ptec_remote.elf")
RPROC = os.path.join(RPROC_DIR, "ptec-rproc")


def need(path):
    if not os.path.exists(path):
        pytest.skip("%s not built (make cross builds the imx93-m33 presets)" % os.path.relpath(path, ROOT))


def need_qemu():
    need(SIM_ELF)
    if shutil.which("qemu-system-arm") is None:
        pytest.skip("qemu-system-arm not found (scripts/setup.sh installs it)")


# The wire format: one statement in C, restated in Python -------------------
def test_python_wire_matches_the_header():
    header = open(os.path.join(ROOT, "firmware", "remote", "remote_protocol.h")).read()
    assert int(re.search(r"REQUEST_MAGIC (0x[0-9a-f]+)u", header).group(1), 16) == wire.REQUEST_MAGIC
    assert int(re.search(r"REPLY_MAGIC (0x[0-9a-f]+)u", header).group(1), 16) == wire.REPLY_MAGIC
    kinds = dict((k, int(v, 0)) for k, v in re.findall(r"PTEC_REMOTE_([A-Z]+) = (0x[0-9A-F]+|\d+),?", header))
    for name, value in wire.KINDS.items():
        assert kinds[name] == value, name
    errors = dict((int(v, 16), "E_" + k) for k, v in re.findall(r"PTEC_REMOTE_E_([A-Z_]+) = (0x[0-9a-f]+)", header))
    assert errors == wire.ERRORS
    sizes = dict(re.findall(r"\} ptec_remote_([a-z]+);\s+/\* (\d+) bytes", header))
    assert {k: int(v) for k, v in sizes.items()} == {
        "info": wire.INFO.size, "tensor": wire.TENSOR.size, "memory": wire.MEMORY.size,
        "result": wire.RESULT.size, "op": wire.OP.size, "stats": wire.STATS.size}
    assert "#define PTEC_REMOTE_REQUEST_HEAD %du" % wire.REQUEST.size in header
    assert "#define PTEC_REMOTE_REPLY_HEAD %du" % wire.REPLY.size in header


# Static checks -------------------------------------------------------------
@pytest.mark.parametrize("elf", [BOARD_ELF, SIM_ELF], ids=["board", "sim"])
def test_elf_passes_remoteproc_checks(elf):
    need(elf)
    got = subprocess.run([RPROC, "check", elf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert got.returncode == 0, got.stdout
    assert "all checks passed" in got.stdout
    if elf == BOARD_ELF:
        assert "vectors at 0x1ffe0000" in got.stdout
        assert "vrings 0xa4000000 x256 align 0x1000, 0xa4008000 x256 align 0x1000" in got.stdout


def _section(data, name):
    elf = Elf(data)
    return elf.section(name)


def _corrupt(data, name, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, _section(data, name).offset + offset, value)
    return bytes(out)


def _check_bytes(tmp_path, data):
    path = tmp_path / "fw.elf"
    path.write_bytes(data)
    got = subprocess.run([RPROC, "check", str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return got.returncode, got.stdout


def test_corrupted_tables_get_linux_reasons(tmp_path):
    need(BOARD_ELF)
    data = open(BOARD_ELF, "rb").read()
    vdev = 24                     # offset[0] of ptec's table
    vring0 = vdev + 4 + 24
    cases = [
        (_corrupt(data, ".resource_table", 0, "<I", 2), "unsupported fw ver: 2"),
        (_corrupt(data, ".resource_table", 8, "<I", 1), "non zero reserved bytes"),
        (_corrupt(data, ".resource_table", 4, "<I", 1000), "resource table incomplete"),
        (_corrupt(data, ".resource_table", 16, "<I", 4000), "rsc table is truncated"),
        (_corrupt(data, ".resource_table", vdev + 4 + 22, "<B", 1), "vdev rsc has non zero reserved bytes"),
        (_corrupt(data, ".resource_table", vdev + 4 + 21, "<B", 3), "too many vrings: 3"),
        (_corrupt(data, ".resource_table", vring0 + 8, "<I", 0), "invalid qsz (0) or alignment (4096)"),
        (_corrupt(data, ".resource_table", vdev + 4 + 16, "<I", 200), "vdev rsc is truncated"),
    ]
    for bad, reason in cases:
        rc, out = _check_bytes(tmp_path, bad)
        assert rc == 1 and reason in out, (reason, out)

    # The section itself: renamed (Linux boots it without RPMsg), or
    # claiming more bytes than the file has.
    elf = Elf(data)
    shoff = struct.unpack_from("<I", data, 32)[0]
    names = elf.sections[struct.unpack_from("<H", data, 50)[0]]
    index = [s.name for s in elf.sections].index(".resource_table")
    name_off = struct.unpack_from("<I", data, shoff + 40 * index)[0]
    renamed = bytearray(data)
    renamed[names.offset + name_off + 1] = ord("X")
    rc, out = _check_bytes(tmp_path, bytes(renamed))
    assert rc == 1 and "No resource table in elf" in out
    huge = bytearray(data)
    struct.pack_into("<I", huge, shoff + 40 * index + 20, len(data))
    rc, out = _check_bytes(tmp_path, bytes(huge))
    assert rc == 1 and "resource table truncated" in out


def test_segments_outside_the_address_table_are_refused(tmp_path):
    need(BOARD_ELF)
    data = open(BOARD_ELF, "rb").read()
    elf = Elf(data)
    phoff = struct.unpack_from("<I", data, 28)[0]
    code = next(i for i, s in enumerate(elf.segments) if s.type == 1 and s.paddr == 0x1FFE0000)
    # In DDR (only TCM is Linux's to load), and ending exactly at the end
    # of code TCM (imx_rproc's end check is strict).
    for paddr, memsz in ((0xA4000000, None), (0x20000000 - elf.segments[code].memsz, None)):
        bad = bytearray(data)
        struct.pack_into("<I", bad, phoff + 32 * code + 12, paddr)
        rc, out = _check_bytes(tmp_path, bytes(bad))
        assert rc == 1 and "bad phdr da 0x%x mem 0x%x" % (paddr, elf.segments[code].memsz) in out, out
    # The vector table not at the start of code TCM.
    assert rproc_checks.IMX93.da_to_region(0x1FFE0000, 0x1FFF0) is not None
    assert rproc_checks.IMX93.da_to_region(0x1FFE0000, 0x20000) is None


# The flow on QEMU ----------------------------------------------------------
def compiled(name, seed_count=3):
    m = load_model(name)
    res = compile_model(m.module, m.example_inputs, m.calibration(8), target="cortex-m33")
    prog = parse_program(res.data)
    t = prog.plan().values[prog.plan().inputs[0]].val
    samples = []
    for seed in range(seed_count):
        x = m.calibration(1, 100 + seed)[0][0].numpy()
        raw = np.ascontiguousarray(x.reshape(t.sizes).transpose(list(t.dim_order)),
                                   NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes()
        host = [np.ascontiguousarray(o).tobytes() for o in host_runtime.run(prog, res.data, [x])]
        samples.append((raw, host))
    return res.data, prog, samples


def run_model(session, pte, prog, samples):
    session.place_model(pte)
    info = session.load(len(pte))
    assert info["program_bytes"] == len(pte)
    assert info["board"] == "imx93_m33_sim" and info["tick_unit"] == "instructions"
    mem = session.requirements()
    want = requirements(prog, target="cortex-m33")
    assert mem["metadata_bytes"] == want.metadata_bytes
    assert [mem["planned%d" % i] for i in range(mem["planned_count"])] == want.planned_bytes
    assert mem["scratch_bytes"] == want.scratch_bytes
    for raw, host in samples:
        session.set_input(0, raw)
        result = session.run()
        assert result["cost"] > 1000
        outs = [session.output(i, t["nbytes"]) for i, t in enumerate(info["output_tensors"])]
        assert outs == host
    return info, mem


@pytest.fixture(scope="module")
def models():
    return {name: compiled(name) for name in ("ds_cnn", "digits_cnn")}


def test_models_over_rpmsg_match_the_host(models):
    need_qemu()
    with SimSession(SIM_ELF) as s:
        assert s.announce[0] == "rpmsg-virtual-tty-channel" and s.announce[1] == wire.ENDPOINT
        for name in ("ds_cnn", "digits_cnn", "ds_cnn"):
            pte, prog, samples = models[name]
            info, _ = run_model(s, pte, prog, samples)
            result = s.run(profile=True)
            ops = s.profile(info["instructions"])
            assert len(ops) == info["instructions"] and sum(t for _, t in ops) <= result["cost"]
        assert s.stats()["send_failures"] == 0
    assert "link up, channel rpmsg-virtual-tty-channel" in s.console_text


def test_bad_models_get_error_replies_and_the_next_one_works(models):
    need_qemu()
    pte, prog, samples = models["digits_cnn"]
    with SimSession(SIM_ELF) as s:
        # Booted with nothing at the model address.
        with pytest.raises(RemoteError) as e:
            s.info()
        assert e.value.status == 0x106 and "ET12" in e.value.reply.text
        bad = bytearray(pte)
        bad[4:8] = b"XX12"
        s.place_model(bytes(bad), fill_rest=0)
        with pytest.raises(RemoteError) as e:
            s.load(len(pte))
        assert e.value.status == 0x23 and "ET12" in e.value.reply.text
        s.place_model(pte[:len(pte) // 2], fill_rest=0xFF)
        with pytest.raises(RemoteError) as e:
            s.load(len(pte) // 2)
        assert e.value.status == 0x23
        assert "truncated: header says %d bytes, got %d" % (len(pte), len(pte) // 2) in e.value.reply.text
        with pytest.raises(RemoteError) as e:
            s.load(s.map["rproc_model_bytes"] + 1)
        assert "larger than the model region" in e.value.reply.text
        with pytest.raises(RemoteError):
            s.run()
        run_model(s, pte, prog, samples)
        assert s.alive()


def test_rpmsg_robustness_and_10000_round_trips():
    need_qemu()
    with SimSession(SIM_ELF) as s:
        host = s.host
        # A header whose length runs past its buffer, and one past 496 bytes.
        for claimed, desc_len in ((300, 64), (600, 512)):
            raw = struct.pack("<IIIHH", host.local, wire.ENDPOINT, 0, claimed, 0) + bytes(desc_len - 16)
            host.send_raw(raw, desc_len)
            reply = s.reply()
            assert reply.kind == wire.KINDS["ERROR"] and reply.status == 0x104, reply.text
        # Too short for a header, but with the sender's address.
        host.send_raw(struct.pack("<II", host.local, wire.ENDPOINT), 8)
        assert s.reply().status == 0x104
        # An endpoint that does not exist; a payload that is not a request.
        host.send(wire.request(1, "PING"), dst=31)
        assert s.reply().status == 0x105
        host.send(b"\x00\x01\x02\x03binary")
        assert s.reply().status == 0x101
        host.send(wire.request(2, "INPUT", length=10, data=b"abc"))
        assert s.reply().status == 0x103
        before = s.stats()
        lost = 0
        for i in range(10000):
            data = bytes((i * 7 + k) & 0xFF for k in range(1 + i % 64))
            if s.ping(data) != data:
                lost += 1
        after = s.stats()
        assert lost == 0
        assert after["requests"] - before["requests"] == 10001
        assert after["replies"] - before["replies"] == 10001
        assert after["error_replies"] == before["error_replies"]
        assert after["send_failures"] == 0 and after["ring_errors"] == 0
        assert after["stack_unused"] == before["stack_unused"] > 4096
        assert s.alive()


# Size -----------------------------------------------------------------------
def test_ds_cnn_firmware_fits_the_tcms_with_room_to_spare():
    """bench/imx93_size.sh's build: the runtime, ds_cnn's kernels only,
    RPMsg and the board, pools sized exactly for ds_cnn, for the real board.
    Printed next to upstream ExecuTorch's 52 KB code + 51 KB data."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not found (scripts/setup.sh installs it)")
    out = os.path.join(ROOT, "build", "test-artifacts", "imx93-ds_cnn")
    got = subprocess.run([os.path.join(ROOT, "bench", "imx93_size.sh"), out], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    print(got.stdout)
    assert got.returncode == 0, got.stdout
    figures = dict(re.findall(r"^figure imx93\.ds_cnn\.(\w+) (\d+)$", got.stdout, re.M))
    code, data = int(figures["code"]), int(figures["data"])
    assert code <= 0.75 * 0x1FFF0, "code %d B leaves too little of the 128 KiB code TCM" % code
    assert data <= 0.75 * 108 * 1024, "data %d B leaves too little of the 108 KiB system TCM" % data
    assert "ptec-rproc: all checks passed" in got.stdout


# The NPU on this board --------------------------------------------------------
def test_vela_u65_program_runs_through_the_same_flow(tmp_path):
    """Arm's keyword spotter, compiled by Vela for the i.MX93's
    Ethos-U65-256 and imported by ptec, over RPMsg on the simulation with
    the functional NPU model linked in: Arm's own expected output."""
    npu_elf = os.path.join(os.path.dirname(SIM_ELF), "ptec_remote_npu.elf")
    need(npu_elf)
    need_qemu()
    from conftest import SHARED
    from ptec.tflite import import_tflite
    kws = os.path.join(SHARED, "models", "ethos-u", "arm", "kws_cnn_small-ethos-u65-256")
    pte = import_tflite(os.path.join(kws, "model.tflite"))
    with SimSession(npu_elf) as s:
        s.place_model(pte)
        info = s.load(len(pte))
        assert info["instructions"] == 1  # one delegate call: the whole network on the NPU
        mem = s.requirements()
        assert mem["scratch_bytes"] <= mem["scratch_pool"]
        s.set_input(0, open(os.path.join(kws, "input.bin"), "rb").read())
        s.run()
        out = s.output(0, info["output_tensors"][0]["nbytes"])
    assert out == open(os.path.join(kws, "expected.bin"), "rb").read()


def test_ptec_compiled_u65_program_runs_on_the_imx93_npu(tmp_path):
    """ds_cnn compiled by ptec's own NPU compiler for the i.MX93's
    Ethos-U65-256 beside its M33 (the compile defaults): the whole network
    one delegate, run over RPMsg on the simulation with the NPU model, gives
    the bytes of the CPU-only program of the same quantized graph."""
    npu_elf = os.path.join(os.path.dirname(SIM_ELF), "ptec_remote_npu.elf")
    need(npu_elf)
    need_qemu()
    from ptec.backends.cortex_m import CortexMBackend
    from ptec.backends.ethos_u.backend import EthosUBackend
    from ptec.backends.portable import PortableBackend
    m = load_model("ds_cnn")
    calib = m.calibration(8)
    npu = EthosUBackend("ethos-u65-256")
    assert npu.cfg.default_cpu == "cortex-m33"
    res = compile_model(m.module, m.example_inputs, calib, target="cortex-m33",
                        backends=[npu, CortexMBackend(), PortableBackend()])
    ref = compile_model(m.module, m.example_inputs, calib, target="cortex-m33")
    assert [p.backend for p in res.lowered.placements if p.backend not in ("none", "ethos_u")] == []
    prog, ref_prog = parse_program(res.data), parse_program(ref.data)
    t = prog.plan().values[prog.plan().inputs[0]].val
    with SimSession(npu_elf) as s:
        s.place_model(res.data)
        info = s.load(len(res.data))
        for seed in range(3):
            x = m.calibration(1, 200 + seed)[0][0].numpy()
            raw = np.ascontiguousarray(x.reshape(t.sizes).transpose(list(t.dim_order)),
                                       NUMPY_DTYPE[ScalarType(t.scalar_type)]).tobytes()
            s.set_input(0, raw)
            s.run()
            out = s.output(0, info["output_tensors"][0]["nbytes"])
            want = np.ascontiguousarray(host_runtime.run(ref_prog, ref.data, [x])[0]).tobytes()
            assert out == want


# The Linux-side client ----------------------------------------------------------
CLIENT_DIR = os.path.join(ROOT, "tools", "imx93-client")


def build_client(out_dir, cross=""):
    got = subprocess.run(["make", "-s", "-C", CLIENT_DIR, "OUT=" + str(out_dir), "CROSS=" + cross],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert got.returncode == 0, got.stdout
    return os.path.join(str(out_dir), "ptec-imx93-client")


class TtyBridge:
    """What NXP's imx_rpmsg_tty does, on a pty: each write to the tty (cut
    at 256 bytes) becomes one RPMsg message to the firmware's endpoint, and
    each message from it is written to the tty. The client gets the pty's
    other end as its /dev/ttyRPMSG30."""

    def __init__(self, session):
        import threading
        self.session = session
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        self.slave = slave
        self.stop = False
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        import select
        while not self.stop:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            for at in range(0, len(data), 256):
                self.session.host.send(data[at:at + 256])
                _, _, payload = self.session.host.receive(self.session.timeout_s)
                os.write(self.master, payload)

    def close(self):
        self.stop = True
        self.thread.join()
        os.close(self.master)
        os.close(self.slave)


def test_linux_client_over_a_tty(tmp_path, models):
    need_qemu()
    client = build_client(tmp_path)
    pte, prog, samples = models["digits_cnn"]
    (tmp_path / "m.pte").write_bytes(pte)
    raw, host = samples[0]
    (tmp_path / "in.bin").write_bytes(raw)
    with SimSession(SIM_ELF) as s:
        s.place_model(pte)  # as dd would
        bridge = TtyBridge(s)
        try:
            def client_run(*args):
                return subprocess.run([client, "-d", bridge.path] + list(args), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, timeout=60)
            got = client_run("load", str(tmp_path / "m.pte"))
            assert got.returncode == 0, got.stderr
            assert "model at 0x80100000: %d bytes, method forward" % len(pte) in got.stdout
            got = client_run("mem")
            assert got.returncode == 0 and got.stdout.startswith("metadata "), got.stderr
            got = client_run("run", str(tmp_path / "in.bin"), "-o", str(tmp_path / "out.bin"), "--profile")
            assert got.returncode == 0, got.stderr
            assert re.match(r"label \d+, \d+ instructions", got.stdout)
            assert (tmp_path / "out.bin").read_bytes() == host[0]
            got = client_run("ping", "200")
            assert got.returncode == 0 and "200 round trips" in got.stdout, got.stderr
            (tmp_path / "short.bin").write_bytes(raw[:-1])
            got = client_run("run", str(tmp_path / "short.bin"))
            assert got.returncode == 2 and "the model takes one input of %d bytes" % len(raw) in got.stderr
        finally:
            bridge.close()


def test_linux_client_builds_for_aarch64(tmp_path):
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        pytest.skip("aarch64-linux-gnu-gcc not found (scripts/setup.sh installs gcc-aarch64-linux-gnu)")
    client = build_client(tmp_path, cross="aarch64-linux-gnu-")
    header = subprocess.run(["readelf", "-h", client], stdout=subprocess.PIPE, text=True).stdout
    assert re.search(r"Machine:\s+AArch64", header), header


# ptec-rproc's ELF reader on hostile input ------------------------------------------
def test_elf_reader_refuses_malformed_files(tmp_path):
    """Truncated and malformed ELF files: one line saying why, exit 1, no traceback."""
    need(BOARD_ELF)
    data = open(BOARD_ELF, "rb").read()
    phoff = struct.unpack_from("<I", data, 28)[0]
    shoff = struct.unpack_from("<I", data, 32)[0]
    load = phoff + 32 * next(i for i, s in enumerate(Elf(data).segments) if s.type == 1 and s.filesz)
    cases = [
        (data[:40], "Image is too small"),
        (b"\x7fELG" + data[4:], "bad magic"),
        (data[:4] + b"\x02" + data[5:], "Unsupported class"),
        (data[:5] + b"\x02" + data[6:], "Unsupported firmware endianness"),
        (data[:44] + struct.pack("<H", 0) + data[46:], "No loadable segments"),
        (data[:28] + struct.pack("<I", len(data) - 8) + data[32:], "program headers run past the end"),
        (data[:32] + struct.pack("<I", len(data) - 8) + data[36:], "section headers run past the end"),
        (data[:load + 4] + struct.pack("<I", len(data)) + data[load + 8:], "truncated fw: need"),
        (data[:shoff], "section headers run past the end"),
    ]
    for bad, reason in cases:
        path = tmp_path / "bad.elf"
        path.write_bytes(bad)
        got = subprocess.run([RPROC, "check", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert got.returncode == 1 and reason in got.stderr, (reason, got.stderr)
        assert "Traceback" not in got.stderr and len(got.stderr.strip().splitlines()) == 1, got.stderr


def test_elf_reader_survives_random_corruption():
    """A short fuzz of the reader and remoteproc's checks: 3,000 copies of the
    board ELF with bytes of the headers, program headers and resource table
    overwritten at random. Each must pass or be refused with ElfError or
    CheckError, never another exception."""
    import random
    from rproc_elf import ElfError
    need(BOARD_ELF)
    data = open(BOARD_ELF, "rb").read()
    elf = Elf(data)
    table = elf.section(".resource_table")
    phoff = struct.unpack_from("<I", data, 28)[0]
    hot = list(range(0, 52)) + list(range(phoff, phoff + 32 * len(elf.segments))) + \
        list(range(table.offset, table.offset + table.size))
    rng = random.Random(13)
    refused = 0
    for _ in range(3000):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            bad[rng.choice(hot)] = rng.randrange(256)
        try:
            e = Elf(bytes(bad))
            rproc_checks.check_resource_table(e, rproc_checks.IMX93)
            rproc_checks.check_segments(e, rproc_checks.IMX93)
            rproc_checks.check_vectors(e, rproc_checks.IMX93)
        except (ElfError, rproc_checks.CheckError):
            refused += 1
    assert refused > 1000, refused


def test_rproc_cli_errors_are_one_line(tmp_path):
    got = subprocess.run([RPROC, "check", str(tmp_path / "missing.elf")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert got.returncode == 2 and len(got.stderr.strip().splitlines()) == 1 and "Traceback" not in got.stderr
    got = subprocess.run([RPROC], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert got.returncode == 2
    need(SIM_ELF)
    got = subprocess.run([RPROC, "run", SIM_ELF, "--model", str(tmp_path / "missing.pte")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert got.returncode == 2 and "Traceback" not in got.stderr and len(got.stderr.strip().splitlines()) == 1
