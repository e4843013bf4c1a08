"""ELF32 little-endian reading for remoteproc firmware: the header, the
program headers (what Linux loads) and the sections by name (where Linux
finds `.resource_table`). Every offset and size is checked against the
file before use; a malformed file raises ElfError with the reason."""
import struct


class ElfError(Exception):
    pass


PT_LOAD = 1
EM_ARM = 40


class Segment:
    def __init__(self, p_type, offset, vaddr, paddr, filesz, memsz, flags):
        self.type, self.offset, self.vaddr, self.paddr = p_type, offset, vaddr, paddr
        self.filesz, self.memsz, self.flags = filesz, memsz, flags


class Section:
    def __init__(self, name, sh_type, addr, offset, size):
        self.name, self.type, self.addr, self.offset, self.size = name, sh_type, addr, offset, size


class Elf:
    """The parts of an ELF32 image Linux's remoteproc ELF loader reads."""

    def __init__(self, data):
        self.data = bytes(data)
        d = self.data
        # Linux: rproc_elf_sanity_check.
        if len(d) < 52:
            raise ElfError("Image is too small")
        if d[:4] != b"\x7fELF":
            raise ElfError("Image is corrupted (bad magic)")
        if d[4] != 1:
            raise ElfError("Unsupported class: %d" % d[4])
        if d[5] != 1:
            raise ElfError("Unsupported firmware endianness")
        (self.type, self.machine, _version, self.entry, phoff, shoff, _flags, _ehsize,
         phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHIIIIIHHHHHH", d, 16)
        if phnum == 0:
            raise ElfError("No loadable segments")
        if phoff > len(d):
            raise ElfError("Firmware size is too small")
        if phentsize != 32 or phoff + phnum * 32 > len(d):
            raise ElfError("program headers run past the end of the file")
        self.segments = []
        for i in range(phnum):
            f = struct.unpack_from("<8I", d, phoff + 32 * i)
            self.segments.append(Segment(f[0], f[1], f[2], f[3], f[4], f[5], f[6]))
        self.sections = []
        if shnum:
            if shentsize != 40 or shoff + shnum * 40 > len(d):
                raise ElfError("section headers run past the end of the file")
            raw = [struct.unpack_from("<10I", d, shoff + 40 * i) for i in range(shnum)]
            if shstrndx >= shnum:
                raise ElfError("section name table index out of range")
            str_off, str_size = raw[shstrndx][4], raw[shstrndx][5]
            if str_off + str_size > len(d):
                raise ElfError("section name table runs past the end of the file")
            names = d[str_off:str_off + str_size]
            for f in raw:
                if f[0] >= len(names):
                    raise ElfError("section name out of range")
                end = names.find(b"\0", f[0])
                name = names[f[0]:end if end >= 0 else len(names)].decode("ascii", "replace")
                self.sections.append(Section(name, f[1], f[3], f[4], f[5]))

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def section_bytes(self, name):
        s = self.section(name)
        if s is None or s.type == 8:  # SHT_NOBITS
            return None
        return self.data[s.offset:s.offset + s.size]

    def symbols(self):
        """Name -> value, from .symtab (for the trace buffer and vectors)."""
        symtab = self.section(".symtab")
        strtab = self.section(".strtab")
        out = {}
        if symtab is None or strtab is None:
            return out
        names = self.data[strtab.offset:strtab.offset + strtab.size]
        for off in range(symtab.offset, symtab.offset + symtab.size - 15, 16):
            st_name, st_value = struct.unpack_from("<II", self.data, off)
            if 0 < st_name < len(names):
                end = names.find(b"\0", st_name)
                out[names[st_name:end].decode("ascii", "replace")] = st_value
        return out
