"""Output files that appear together, complete, or not at all.

The CLI claims every destination before it starts work, so a missing or
read-only directory is reported before a long compile. Each file is written
to a temporary file in its destination directory and renamed into place only
when every output has been written; on any failure the temporaries are
removed, so a failed run leaves nothing behind (not even a stale .pte next to
a header that could not be written).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Dict


class OutputError(OSError):
    """A destination that cannot be written; the message is one line."""


def _unwritable(path: str, option: str, e: OSError) -> OutputError:
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(directory):
        why = f"directory {directory} does not exist (create it first)"
    elif not os.path.isdir(directory):
        why = f"{directory} is not a directory"
    else:
        why = (f"cannot create a file in {directory}: {e.strerror or e} "
               "(choose a writable directory)")
    return OutputError(f"{option} {path}: cannot write: {why}")


class OutputFiles:
    """with OutputFiles() as out: out.claim(p, "-o"); out.open(p, "wb")...
    renames everything into place when the block ends without an exception."""

    def __init__(self) -> None:
        self._temp: Dict[str, str] = {}       # destination -> its temporary file
        self._option: Dict[str, str] = {}

    def claim(self, path: str, option: str) -> None:
        dest = os.path.abspath(path)
        if dest in self._temp:
            raise OutputError(f"{option} {path}: already written as {self._option[dest]} "
                              "(give each output its own path)")
        if os.path.isdir(dest):
            raise OutputError(f"{option} {path}: is a directory (give a file name)")
        try:
            fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(dest)}.", suffix=".tmp",
                                        dir=os.path.dirname(dest))
        except OSError as e:
            raise _unwritable(path, option, e) from e
        os.close(fd)
        self._temp[dest] = temp
        self._option[dest] = option

    @contextlib.contextmanager
    def open(self, path: str, mode: str = "w"):
        """The claimed destination's temporary file, opened for writing; a
        failed write (disk full, quota) is an OutputError naming the option."""
        dest = os.path.abspath(path)
        try:
            with open(self._temp[dest], mode) as f:
                yield f
        except OSError as e:
            raise OutputError(f"{self._option[dest]} {path}: cannot write: "
                              f"{e.strerror or e} (free space, or choose another path)") from e

    def commit(self) -> None:
        umask = os.umask(0)
        os.umask(umask)
        for dest, temp in list(self._temp.items()):
            os.chmod(temp, 0o666 & ~umask)      # mkstemp made it 0600
            os.replace(temp, dest)
            del self._temp[dest]

    def discard(self) -> None:
        for temp in self._temp.values():
            try:
                os.unlink(temp)
            except OSError:
                pass
        self._temp.clear()

    def __enter__(self) -> "OutputFiles":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.commit()
        finally:
            self.discard()
