"""Linux remoteproc's checks of a firmware ELF, with its messages
(drivers/remoteproc/remoteproc_elf_loader.c, remoteproc_core.c), plus
the i.MX93 specifics (imx_rproc.c's address table for the M33, and the
boot rule that the vector table is the first bytes of code TCM).

check_resource_table() returns the parsed table or raises CheckError with
the text Linux would log; check_segments() and check_vectors() do the same
for the loader and the boot."""
import struct

from rproc_elf import PT_LOAD


class CheckError(Exception):
    pass


RSC_CARVEOUT, RSC_DEVMEM, RSC_TRACE, RSC_VDEV = 0, 1, 2, 3
RSC_VENDOR_START, RSC_VENDOR_END = 128, 512
VIRTIO_ID_RPMSG = 7

# imx_rproc_att_imx93: device address, system address, size, owned by the
# M33 (mapped by Linux without a memory-region). Linux accepts a segment
# [da, da + len) only when da + len < entry end (strictly).
IMX93_ATT = [
    (0x0FFC0000, 0x201C0000, 0x00040000, True),   # code TCM, Non-secure
    (0x1FFC0000, 0x201C0000, 0x00040000, True),   # code TCM, Secure
    (0x20000000, 0x20200000, 0x00040000, True),   # system TCM, Non-secure
    (0x30000000, 0x20200000, 0x00040000, True),   # system TCM, Secure
    (0x80000000, 0x80000000, 0x10000000, False),  # DDR
    (0x90000000, 0x80000000, 0x10000000, False),
    (0xC0000000, 0xC0000000, 0x10000000, False),
    (0xD0000000, 0xC0000000, 0x10000000, False),
]
IMX93_CODE_TCM = (0x1FFE0000, 0x0FFE0000)  # where the core boots (Secure, Non-secure alias)
IMX93_DATA = (0x20000000, 0x20020000)      # system TCM as the M33 sees it (Non-secure)

# The simulation on QEMU's AN505 (boards/imx93_m33_sim): the machine's own
# memories (SSRAM1, SSRAM2/3, 4 MiB each; the linker keeps a firmware
# within the i.MX93's TCM sizes).
SIM_REGIONS = [(0x10000000, 0x00400000, True), (0x38000000, 0x00400000, True)]
SIM_CODE = (0x10000000,)
SIM_DATA = (0x38000000, 0x38400000)


class Board:
    def __init__(self, name, regions, code_starts, data_range, strict_end):
        self.name, self.regions, self.code_starts = name, regions, code_starts
        self.data_range, self.strict_end = data_range, strict_end

    def da_to_region(self, da, length):
        """Linux's imx_rproc_da_to_va on the board's address table: the
        region holding [da, da + length), if Linux could load it."""
        for base, _sys, size, owned in self.regions:
            end_ok = (da + length < base + size) if self.strict_end else (da + length <= base + size)
            if da >= base and end_ok and owned:
                return base
        return None


IMX93 = Board("imx93_m33", IMX93_ATT, IMX93_CODE_TCM, IMX93_DATA, strict_end=True)
SIM = Board("imx93_m33_sim", [(b, b, s, o) for b, s, o in SIM_REGIONS], SIM_CODE, SIM_DATA, strict_end=False)


class ResourceTable:
    def __init__(self, raw, entries, vdev, trace):
        self.raw, self.entries, self.vdev, self.trace = raw, entries, vdev, trace


def check_resource_table(elf, board=None):
    """rproc_elf_find_table + rproc_handle_resources for the entries ptec
    uses; raises CheckError with Linux's message."""
    sec = elf.section(".resource_table")
    if sec is None:
        raise CheckError("No resource table in elf")
    if sec.offset + sec.size > len(elf.data):
        raise CheckError("resource table truncated")
    if sec.size < 16:
        raise CheckError("header-less resource table")
    table = elf.data[sec.offset:sec.offset + sec.size]
    ver, num, r0, r1 = struct.unpack_from("<4I", table, 0)
    if ver != 1:
        raise CheckError("unsupported fw ver: %d" % ver)
    if r0 or r1:
        raise CheckError("non zero reserved bytes")
    if 16 + 4 * num > len(table):
        raise CheckError("resource table incomplete")
    offsets = struct.unpack_from("<%dI" % num, table, 16)
    entries, vdev, trace = [], None, None
    for offset in offsets:
        if offset + 4 > len(table):
            raise CheckError("rsc table is truncated")
        (rtype,) = struct.unpack_from("<I", table, offset)
        avail = len(table) - offset - 4
        body = offset + 4
        if rtype == RSC_VDEV:
            if avail < 24:
                raise CheckError("vdev rsc is truncated")
            vid, notifyid, dfeatures, gfeatures, config_len, status, nvr, res0, res1 = \
                struct.unpack_from("<5IBBBB", table, body)
            if 24 + 20 * nvr + config_len > avail:
                raise CheckError("vdev rsc is truncated")
            if res0 or res1:
                raise CheckError("vdev rsc has non zero reserved bytes")
            if nvr > 2:
                raise CheckError("too many vrings: %d" % nvr)
            vrings = []
            for i in range(nvr):
                da, align, vnum, vnotify, pa = struct.unpack_from("<5I", table, body + 24 + 20 * i)
                if not vnum or not align:
                    raise CheckError("invalid qsz (%d) or alignment (%d)" % (vnum, align))
                vrings.append({"da": da, "align": align, "num": vnum, "notifyid": vnotify, "pa": pa})
            if vdev is not None:
                raise CheckError("ptec-rproc: more than one vdev (ptec's firmware declares one)")
            vdev = {"offset": offset, "id": vid, "dfeatures": dfeatures, "gfeatures": gfeatures,
                    "status": status, "vrings": vrings, "config_len": config_len}
            if vid != VIRTIO_ID_RPMSG:
                raise CheckError("ptec-rproc: vdev id %d is not RPMsg (7)" % vid)
        elif rtype == RSC_TRACE:
            if avail < 44:
                raise CheckError("trace rsc is truncated")
            da, length, reserved = struct.unpack_from("<3I", table, body)
            name = table[body + 12:body + 44].split(b"\0")[0].decode("ascii", "replace")
            if reserved:
                raise CheckError("trace rsc has non zero reserved bytes")
            if board is not None and board.da_to_region(da, length) is None:
                raise CheckError("erroneous trace resource entry")
            trace = {"da": da, "len": length, "name": name}
        elif RSC_VENDOR_START <= rtype <= RSC_VENDOR_END:
            pass
        elif rtype in (RSC_CARVEOUT, RSC_DEVMEM):
            raise CheckError("ptec-rproc: carveout/devmem entries are not expected in ptec's table")
        else:
            raise CheckError("unsupported resource %d" % rtype)
        entries.append((offset, rtype))
    if vdev is None:
        raise CheckError("ptec-rproc: no vdev in the resource table: no RPMsg")
    if len(vdev["vrings"]) != 2:
        raise CheckError("ptec-rproc: RPMsg needs two vrings, the table has %d" % len(vdev["vrings"]))
    return ResourceTable(table, entries, vdev, trace)


def check_segments(elf, board):
    """rproc_elf_load_segments against the board's map."""
    loads = [s for s in elf.segments if s.type == PT_LOAD]
    for s in loads:
        if s.filesz > s.memsz:
            raise CheckError("bad phdr filesz 0x%x memsz 0x%x" % (s.filesz, s.memsz))
        if s.offset + s.filesz > len(elf.data):
            raise CheckError("truncated fw: need 0x%x avail 0x%x" % (s.offset + s.filesz, len(elf.data)))
        if s.memsz and board.da_to_region(s.paddr, s.memsz) is None:
            raise CheckError("bad phdr da 0x%x mem 0x%x" % (s.paddr, s.memsz))
    return loads


def check_vectors(elf, board):
    """The core starts from the vector table at the start of code TCM
    (remoteproc ignores e_entry): the first loaded bytes there must be an
    initial stack pointer inside data memory and a Thumb reset address
    inside the image's code."""
    vectors = elf.section(".vectors")
    if vectors is None or vectors.addr not in board.code_starts:
        raise CheckError("ptec-rproc: the vector table is not at the start of code TCM (0x%x)"
                         % board.code_starts[0])
    raw = elf.section_bytes(".vectors")
    if raw is None or len(raw) < 8:
        raise CheckError("ptec-rproc: the vector table is empty")
    sp, reset = struct.unpack_from("<II", raw, 0)
    lo, hi = board.data_range
    if not lo < sp <= hi:
        raise CheckError("ptec-rproc: initial stack pointer 0x%x is outside data memory" % sp)
    code = [s for s in elf.segments if s.type == PT_LOAD and s.vaddr in board.code_starts]
    if not reset & 1 or not code or not code[0].vaddr <= reset - 1 < code[0].vaddr + code[0].memsz:
        raise CheckError("ptec-rproc: reset vector 0x%x is not Thumb code in the image" % reset)
    return sp, reset
