"""One boot of the simulated i.MX93 M33 (boards/imx93_m33_sim) with this
process as Linux: the firmware ELF checked as remoteproc would and its
segments loaded as remoteproc loads them (QEMU's generic loader at each
p_paddr; the core starts from the vector table), QEMU's mps2-an505 with
its DDR backed by a file in /dev/shm that we map too, the vdev set up,
the name-service announcement awaited, then requests.

    with SimSession("ptec_remote.elf") as s:
        s.place_model(open("m.pte", "rb").read())   # as dd would
        s.load(size)                                # the server reads it
        s.set_input(0, raw); result = s.run(); s.output(0, n)
"""
import itertools
import mmap
import os
import shutil
import subprocess
import tempfile

import remote_wire as wire
import rproc_checks
from rproc_elf import PT_LOAD, Elf
from virtio_host import RpmsgHost, Timeout

DDR_BASE = 0x80000000
DDR_BYTES = 16 << 20
_serial = itertools.count()


class RemoteError(Exception):
    """A reply with a non-zero status: .status, .reply."""

    def __init__(self, reply, what):
        self.status, self.reply = reply.status, reply
        super().__init__("%s: status %s: %s" % (what, reply.status_name(), reply.text))


def board_map(elf):
    """The board record's rproc_* entries (board_config.h's addresses)."""
    raw = elf.section_bytes(".ptec_board_info") or b""
    out = {}
    for item in raw.split(b"\0"):
        key, _, value = item.decode("ascii", "replace").partition("=")
        if key.startswith("rproc_") or key in ("board", "qemu_machine"):
            out[key] = int(value.rstrip("uU"), 0) if key.startswith("rproc_") else value
    needed = ("rproc_model", "rproc_model_bytes", "rproc_live_table", "rproc_shared", "rproc_shared_bytes")
    missing = [k for k in needed if k not in out]
    if missing:
        raise rproc_checks.CheckError("ptec-rproc: the ELF's board record lacks %s: not a remoteproc build"
                                      % ", ".join(missing))
    return out


class SimSession:
    def __init__(self, elf_path, timeout_s=60.0, qemu="qemu-system-arm", console=None):
        self.elf_path, self.timeout_s, self.qemu = elf_path, timeout_s, qemu
        with open(elf_path, "rb") as f:
            self.elf = Elf(f.read())
        self.table = rproc_checks.check_resource_table(self.elf, rproc_checks.SIM)
        rproc_checks.check_segments(self.elf, rproc_checks.SIM)
        rproc_checks.check_vectors(self.elf, rproc_checks.SIM)
        self.map = board_map(self.elf)
        self.console_path = console
        self.proc = None
        self.mem = None
        self.seq = 0
        self.announce = None

    # Boot ---------------------------------------------------------------
    def __enter__(self):
        fd, self.ddr_path = tempfile.mkstemp(prefix="ptec-ddr-%d-%d-" % (os.getpid(), next(_serial)),
                                             dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.ftruncate(fd, DDR_BYTES)
        self.mem = mmap.mmap(fd, DDR_BYTES, mmap.MAP_SHARED)
        os.close(fd)
        self._console_tmp = self.console_path is None
        if self._console_tmp:
            cfd, self.console_path = tempfile.mkstemp(prefix="ptec-console-")
            os.close(cfd)
        self._console_file = open(self.console_path, "wb")
        # Load the segments as remoteproc does: each PT_LOAD's bytes at its
        # p_paddr, memsz - filesz zeroed, e_entry ignored; the core then
        # starts from the vector table at the start of code memory (QEMU's
        # M-profile reset reads SP and PC there), not from the ELF's entry.
        self._segments_dir = tempfile.mkdtemp(prefix="ptec-rproc-segments-")
        loaders = []
        for i, seg in enumerate(s for s in self.elf.segments if s.type == PT_LOAD and s.memsz):
            path = os.path.join(self._segments_dir, "segment%d.bin" % i)
            with open(path, "wb") as f:
                f.write(self.elf.data[seg.offset:seg.offset + seg.filesz] + bytes(seg.memsz - seg.filesz))
            loaders += ["-device", "loader,file=%s,addr=0x%x,force-raw=on" % (path, seg.paddr)]
        args = [self.qemu, "-M", "mps2-an505", "-nographic", "-semihosting-config", "enable=on,target=native",
                "-icount", "shift=10,align=off,sleep=off",
                "-object", "memory-backend-file,id=ddr,size=16M,mem-path=%s,share=on" % self.ddr_path,
                "-machine", "memory-backend=ddr"] + loaders
        try:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._console_file,
                                         stderr=subprocess.STDOUT)
            shared = self.map["rproc_shared"]
            self.host = RpmsgHost(self.mem, DDR_BASE, self.map["rproc_live_table"], self.table.raw,
                                  self.table.vdev, buffers_da=shared + 0x10000)
            for ring in (self.host.rx, self.host.tx):
                if not shared <= ring.da and ring.da + ring.size <= shared + self.map["rproc_shared_bytes"]:
                    raise rproc_checks.CheckError("vring at 0x%x is outside the board's shared memory" % ring.da)
            self.host.setup()
            self.announce = self.host.wait_announce(self.timeout_s)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        if getattr(self, "_segments_dir", None):
            shutil.rmtree(self._segments_dir, ignore_errors=True)
            self._segments_dir = None
        if self.mem is not None:
            for ring in (self.host.rx, self.host.tx) if hasattr(self, "host") else ():
                ring.words.release()
            self.mem.close()
            self.mem = None
            os.unlink(self.ddr_path)
        if getattr(self, "_console_file", None) is not None:
            self._console_file.close()
            self._console_file = None
            self.console_text = self.console()
            if self._console_tmp:
                os.unlink(self.console_path)
        return False

    def console(self):
        """What the firmware printed on its UART so far."""
        with open(self.console_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    # DDR, as dd would write it ------------------------------------------
    def place_model(self, data, fill_rest=None):
        """Writes `data` at the model address; `fill_rest` (a byte) first
        overwrites the whole region, so nothing of an earlier model stays."""
        capacity = self.map["rproc_model_bytes"]
        if len(data) > capacity:
            raise ValueError("model of %d bytes; the model region holds %d" % (len(data), capacity))
        off = self.map["rproc_model"] - DDR_BASE
        if fill_rest is not None:
            self.mem[off:off + capacity] = bytes([fill_rest]) * capacity
        self.mem[off:off + len(data)] = data

    # Requests -----------------------------------------------------------
    def call(self, kind, index=0, offset=0, length=0, data=b"", check=True):
        self.seq = (self.seq + 1) & 0xFFFFFFFF
        self.host.send(wire.request(self.seq, kind, index, offset, length, data))
        reply = self.reply()
        if reply.seq != self.seq and reply.kind != wire.KINDS["ERROR"]:
            raise ValueError("reply to request %d, expected %d" % (reply.seq, self.seq))
        if check and reply.status != 0:
            raise RemoteError(reply, kind if isinstance(kind, str) else "kind %d" % kind)
        return reply

    def reply(self):
        src, dst, payload = self.host.receive(self.timeout_s)
        if src != self.host.remote_addr or dst != self.host.local:
            raise ValueError("message from %d to %d, expected %d to %d"
                             % (src, dst, self.host.remote_addr, self.host.local))
        return wire.Reply(payload)

    def load(self, size=0):
        return wire.parse_info(self.call("LOAD", offset=size).body)

    def info(self):
        return wire.parse_info(self.call("INFO").body)

    def requirements(self):
        return dict(zip(wire.MEMORY_FIELDS, wire.MEMORY.unpack(self.call("REQUIREMENTS").body)))

    def set_input(self, index, raw, chunk=200):
        # 200-byte pieces: NXP's tty driver splits writes at 256 bytes.
        for at in range(0, max(len(raw), 1), chunk):
            piece = raw[at:at + chunk]
            self.call("INPUT", index=index, offset=at, length=len(piece), data=piece)

    def run(self, profile=False):
        lo, hi, label, outputs, out0, instructions = wire.RESULT.unpack(
            self.call("RUN", index=wire.RUN_PROFILE if profile else 0).body)
        return {"cost": lo | hi << 32, "label": label, "outputs": outputs, "output0_bytes": out0,
                "instructions": instructions}

    def output(self, index, nbytes):
        out = b""
        while len(out) < nbytes:
            piece = self.call("OUTPUT", index=index, offset=len(out),
                              length=min(wire.MAX_BODY, nbytes - len(out))).body
            if not piece:
                raise ValueError("output %d ended at %d of %d bytes" % (index, len(out), nbytes))
            out += piece
        return out

    def profile(self, count):
        ops = []
        while len(ops) < count:
            body = self.call("PROFILE", offset=len(ops)).body
            if not body:
                break
            for at in range(0, len(body), wire.OP.size):
                lo, hi, name = wire.OP.unpack_from(body, at)
                ops.append((name.split(b"\0")[0].decode("ascii", "replace"), lo | hi << 32))
        return ops

    def stats(self):
        return dict(zip(wire.STATS_FIELDS, wire.STATS.unpack(self.call("STATS").body)))

    def ping(self, data):
        return self.call("PING", length=len(data), data=data).body


__all__ = ["SimSession", "RemoteError", "Timeout", "board_map"]
