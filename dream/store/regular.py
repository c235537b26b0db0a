"""Reading a file that must be a regular file of bounded size, without ever hanging or blowing up.

Anything in a store can be replaced by something that is not a file: a
FIFO (reading blocks forever), a character device (``/dev/zero`` never
ends), a socket, a folder, a symlink to anywhere. Every read of a store's
file, and of dream's own records, goes through `read_regular`: opened
non-blocking and without following a final symlink, checked with fstat,
refused above a size cap before a byte is read, and read no further than
the cap if it grows meanwhile. Each refusal is one line naming the file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from dream.errors import BadInput

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symlink"))


class NotRegular(OSError):
    """The path is a symlink, folder, FIFO, socket or device (or too large to be ours): `what` says which."""

    def __init__(self, path: Path | str, what: str, err: int = errno.EINVAL):
        super().__init__(err, what, str(path))
        self.what = what


def kind_of(mode: int) -> str:
    """'a FIFO', 'a folder' … for a mode that is not a regular file's."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path | str, what: str, max_bytes: int, error: type[BadInput] = BadInput,
                 tail: bool = False) -> bytes:
    """The bytes of `path`, a regular file of at most `max_bytes`; `error` naming the file otherwise.

    With `tail`, a larger file is no error: its last `max_bytes` bytes are
    read (the first line among them may be cut). A missing file raises
    `FileNotFoundError`: each caller decides what absence means.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{_shown(path)}: cannot read {what}: {_reason(path, exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{_shown(path)}: {what} is {kind_of(info.st_mode)}, not a regular file; dream reads "
                        f"only regular files")
        if info.st_size > max_bytes and tail:
            os.lseek(fd, info.st_size - max_bytes, os.SEEK_SET)
            return _read_at_most(fd, max_bytes)
        if info.st_size > max_bytes:
            raise error(f"{_shown(path)}: {what} is {info.st_size:,} bytes, over dream's limit of {max_bytes:,}")
        data = _read_at_most(fd, max_bytes + 1)
        if len(data) > max_bytes:
            raise error(f"{_shown(path)}: {what} grew past dream's limit of {max_bytes:,} bytes while read")
        return data
    except OSError as exc:
        raise error(f"{_shown(path)}: cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reason(path: Path | str, exc: OSError) -> str:
    """Why open failed; ELOOP from O_NOFOLLOW means the file is a symlink, ENXIO a socket."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return exc.strerror or str(exc)
    return f"it is {kind_of(mode)}" if not stat.S_ISREG(mode) else (exc.strerror or str(exc))


def _shown(path: Path | str) -> str:
    """The path as text, even when its name is not valid UTF-8."""
    return os.fsdecode(path).encode("utf-8", "backslashreplace").decode("utf-8")
