"""An append-only file of lines that a damaged or hostile folder cannot hang.

Used by the history (``.dream/history.jsonl``). Appends are one `os.write`
on an O_APPEND descriptor followed by fsync; the caller holds a lock so
concurrent appenders never interleave. Neither appending nor reading
follows a symlink, and both open with O_NONBLOCK and refuse anything but a
regular file: opening a FIFO for reading would otherwise wait forever for a
writer.
"""

from __future__ import annotations

import errno
import os
import stat
from datetime import datetime, timezone
from pathlib import Path

from dream.crashpoints import before_write
from dream.store.regular import NotRegular, read_regular

# Linux says ELOOP for a symlink under O_NOFOLLOW, the BSDs EMLINK; a folder
# is EISDIR and a socket ENXIO.
_ODD_FILE_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO})
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# O_RDWR rather than O_WRONLY: the append reads the last byte (see `append`).
_APPEND = os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW

# A history of years is a few megabytes; anything far larger is not one (a
# sparse file of a terabyte would take hours to read).
MAX_BYTES = 256 * 1024 * 1024


def append(path: Path, data: bytes) -> Path | None:
    """Append `data` (whole lines) durably. Call with the file's lock held.

    A line left without its newline by a crash is closed off first, so it
    spoils only itself and not the line appended now. Something that is not
    a regular file at `path` is renamed aside and a new file started; the
    new name is returned so the caller can say so.
    """
    moved = None
    fd = _open_append(path)
    if fd is None:
        moved = move_aside(path, "not-a-file")
        fd = os.open(path, _APPEND | os.O_EXCL, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    if size == 0:
        _fsync_dir(path.parent)  # a new file's name must survive a crash too
    return moved


def _open_append(path: Path) -> int | None:
    """A descriptor to append to, or None when `path` is not a regular file."""
    try:
        fd = os.open(path, _APPEND, 0o666)
    except OSError as exc:
        if exc.errno in _ODD_FILE_ERRNOS:
            return None
        raise
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def _write_all(fd: int, data: bytes) -> None:
    # One write in practice; the loop only matters if a signal cuts it short.
    before_write(f"descriptor {fd}")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot sync a folder; the data itself was synced
    finally:
        os.close(fd)


def read(path: Path, what: str) -> bytes | None:
    """The file's bytes, or None when it does not exist.

    Read by `dream.store.regular.read_regular`: a symlink, folder, FIFO or
    device, a file over `MAX_BYTES`, or one that cannot be read is a
    `BadInput` naming `what` and the file.
    """
    try:
        return read_regular(path, what, MAX_BYTES)
    except FileNotFoundError:
        return None


def read_tail(path: Path, what: str, nbytes: int) -> bytes | None:
    """The file's last `nbytes` bytes (its first line there may be cut), or None; checked as `read` does."""
    try:
        return read_regular(path, what, nbytes, tail=True)
    except FileNotFoundError:
        return None


def move_aside(path: Path, why: str) -> Path:
    """Rename `path` (never what a symlink points to) to ``<name>.<why>-<time>``, kept for inspection."""
    stamp = datetime.now(tz=timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    os.replace(path, target)
    return target
