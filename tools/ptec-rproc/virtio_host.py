"""The Linux side of RPMsg, as virtio_rpmsg_bus and remoteproc_virtio do
it, on memory shared with the remote core (a mmap of QEMU's DDR file):
rings zeroed, 256 empty 512-byte buffers posted on vring 0 for the remote
to fill, our messages posted on vring 1, the live resource table written
with DRIVER_OK last. Device addresses are the remote's; `base` is the
address the mapping starts at."""
import struct
import time

DESC = struct.Struct("<QIHH")
F_WRITE = 2
AVAIL_F_NO_INTERRUPT = 1
BUFFER = 512
STATUS_READY = 0x0F  # ACKNOWLEDGE | DRIVER | DRIVER_OK | FEATURES_OK


class Timeout(Exception):
    pass


class Ring:
    def __init__(self, mem, base, da, num, align):
        self.mem, self.base, self.da, self.num = mem, base, da, num
        # Ring indices are read and written as whole 16-bit words: struct's
        # "<H" moves them a byte at a time, and the other core can see half
        # of an update (255 -> 256 read as 0: an index jump).
        self.words = memoryview(mem).cast("H")
        self.avail = da + 16 * num
        avail_end = self.avail + 2 * (3 + num)
        self.used = (avail_end + align - 1) & ~(align - 1)
        self.size = self.used + 6 + 8 * num - da
        self.avail_idx = 0
        self.last_used = 0

    def _off(self, address):
        return address - self.base

    def zero(self):
        self.mem[self._off(self.da):self._off(self.da) + self.size] = bytes(self.size)

    def set_desc(self, i, address, length, flags):
        DESC.pack_into(self.mem, self._off(self.da + 16 * i), address, length, flags, 0)

    def desc(self, i):
        return DESC.unpack_from(self.mem, self._off(self.da + 16 * i))

    def publish(self, head):
        """Adds descriptor `head` to avail, then the index (what Linux's
        virtqueue_add + kick amount to when the other side polls)."""
        slot = self.avail_idx % self.num
        self.words[self._off(self.avail + 4 + 2 * slot) // 2] = head
        self.avail_idx = (self.avail_idx + 1) & 0xFFFF
        self.words[self._off(self.avail + 2) // 2] = self.avail_idx

    def set_avail_flags(self, flags):
        self.words[self._off(self.avail) // 2] = flags

    def used_idx(self):
        return self.words[self._off(self.used + 2) // 2]

    def take_used(self):
        """(id, len) of the next used entry, or None."""
        if self.used_idx() == self.last_used:
            return None
        slot = self.last_used % self.num
        entry = struct.unpack_from("<II", self.mem, self._off(self.used + 4 + 8 * slot))
        self.last_used = (self.last_used + 1) & 0xFFFF
        return entry


class RpmsgHost:
    """Linux's half: sets the vdev up, then sends and receives messages."""

    def __init__(self, mem, base, table_da, table_raw, vdev, buffers_da, local_addr=0x400):
        self.mem, self.base, self.table_da = mem, base, table_da
        self.table_raw, self.vdev = bytearray(table_raw), vdev
        v0, v1 = vdev["vrings"]
        self.rx = Ring(mem, base, v0["da"], v0["num"], v0["align"])  # remote -> us
        self.tx = Ring(mem, base, v1["da"], v1["num"], v1["align"])  # us -> remote
        self.buffers_da = buffers_da
        self.local = local_addr
        self.free_tx = list(range(self.tx.num))
        self.remote_addr = None
        self.channel = None

    def _off(self, address):
        return address - self.base

    def write(self, address, data):
        self.mem[self._off(address):self._off(address) + len(data)] = data

    def read(self, address, length):
        return bytes(self.mem[self._off(address):self._off(address) + length])

    def setup(self):
        """remoteproc + virtio_rpmsg_bus probe: the live table (status 0),
        zeroed rings, RX buffers posted, then gfeatures and DRIVER_OK."""
        status_at = self.vdev["offset"] + 4 + 20
        table = bytearray(self.table_raw)
        table[status_at] = 0
        self.write(self.table_da, bytes(table))
        self.rx.zero()
        self.tx.zero()
        for i in range(self.rx.num):
            addr = self.buffers_da + BUFFER * i
            self.rx.set_desc(i, addr, BUFFER, F_WRITE)
            self.rx.publish(i)
        self.tx.set_avail_flags(AVAIL_F_NO_INTERRUPT)
        struct.pack_into("<I", table, self.vdev["offset"] + 4 + 12, self.vdev["dfeatures"] & 1)
        self.write(self.table_da, bytes(table))
        self.write(self.table_da + status_at, bytes([STATUS_READY]))  # last: the remote waits for it

    def _tx_buffer(self, i):
        return self.buffers_da + BUFFER * (self.rx.num + i)

    def send_raw(self, raw, length=None):
        """Posts `raw` (header included) in one TX buffer; `length` is the
        descriptor's length (default len(raw))."""
        self._reclaim_tx()
        if not self.free_tx:
            raise Timeout("no free TX buffer: the remote returns none")
        i = self.free_tx.pop(0)
        addr = self._tx_buffer(i)
        self.write(addr, raw[:BUFFER])
        self.tx.set_desc(i, addr, len(raw) if length is None else length, 0)
        self.tx.publish(i)
        return i

    def send(self, payload, dst=None, src=None):
        dst = self.remote_addr if dst is None else dst
        header = struct.pack("<IIIHH", self.local if src is None else src, dst, 0, len(payload), 0)
        return self.send_raw(header + payload)

    def _reclaim_tx(self):
        while True:
            entry = self.tx.take_used()
            if entry is None:
                return
            self.free_tx.append(entry[0])

    def receive(self, timeout_s, poll_s=0.0002):
        """(src, dst, payload) of the next message from the remote; the
        buffer goes straight back to the remote."""
        deadline = time.monotonic() + timeout_s
        while True:
            entry = self.rx.take_used()
            if entry is not None:
                break
            if time.monotonic() > deadline:
                raise Timeout("no message from the remote core within %.0f s" % timeout_s)
            time.sleep(poll_s)
        head, length = entry
        if head >= self.rx.num:
            raise ValueError("remote returned descriptor %d of %d" % (head, self.rx.num))
        addr = self.buffers_da + BUFFER * head
        if not 16 <= length <= BUFFER:
            raise ValueError("remote wrote %d bytes into a %d-byte buffer" % (length, BUFFER))
        raw = self.read(addr, length)
        src, dst, _res, plen, _flags = struct.unpack_from("<IIIHH", raw)
        if 16 + plen > length:
            raise ValueError("remote's header says %d bytes, the buffer holds %d" % (plen, length - 16))
        payload = raw[16:16 + plen]
        self.rx.set_desc(head, addr, BUFFER, F_WRITE)
        self.rx.publish(head)
        return src, dst, payload

    def wait_announce(self, timeout_s):
        """The name-service message: channel name and the remote's address."""
        src, dst, payload = self.receive(timeout_s)
        if dst != 53 or len(payload) != 40:
            raise ValueError("expected a name-service announcement, got %d bytes for %d" % (len(payload), dst))
        name = payload[:32].split(b"\0")[0].decode("ascii", "replace")
        addr, flags = struct.unpack_from("<II", payload, 32)
        self.remote_addr, self.channel = addr, name
        return name, addr, flags
