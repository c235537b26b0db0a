"""Pack files: many stored objects in one file, so a year of versions is not thousands of small files.

A version or proposal that adds many objects (`PACK_AT` or more: a
snapshot of a big store, a night that changes hundreds of files) writes
them as one new pack in its durable batch, not one file each (`Blobs.add`);
one adding a few writes them as loose files (``.dream/objects/ab/cdef…``).
A file of 300 bytes still takes a 4 KB block, and a year of nightly dreams
wrote 5,500 of them. `dream.versions.gc` therefore moves the objects still needed
into pack files, ``.dream/objects/packs/<YYYY-MM>.<random>.pack``, one
group per month of packing, and deletes the loose copies after the pack is
durable.

A pack is written once, whole, by `atomic_write` (a crash leaves it absent
or complete) and never changed: gc writes a new pack with what a group
still needs, then deletes the old ones. Two packs holding the same object
(a crash between those two steps) are harmless: any copy serves, and the
next gc merges them. Readers never take the store's lock, so a pack may be
deleted while one is open: it is read through mmap, which stays valid
after the unlink, and a lookup that misses reloads the list of packs once.

Format (integers big-endian)::

    MAGIC
    the stored objects, one after another (each exactly as a loose file holds it)
    index: per object, sorted by name: sha256 (32 bytes), offset (8 bytes), length (4 bytes)
    trailer: index offset (8 bytes), object count (4 bytes), END

Objects check themselves (their bytes must hash to their name,
`dream.versions.manifests.Blobs`), so the pack carries no checksum.
"""

from __future__ import annotations

import mmap
import os
import secrets
import stat
import struct
import time
from collections.abc import Iterable
from pathlib import Path

from dream.store.records import DamagedRecord
from dream.store.tree import atomic_write

MAGIC = b"\x00dpk1\n"
END = b"dpk1end\n"
SUFFIX = ".pack"
_ENTRY = 32 + 8 + 4
_TRAILER = 8 + 4 + len(END)
PACK_AT = 16  # new objects in one batch from which they go into one pack rather than a loose file each


class Pack:
    """One pack file, mapped; `get` returns an object's stored bytes."""

    def __init__(self, path: Path, view: mmap.mmap, index: dict[str, tuple[int, int]]):
        self.path, self._view, self.index = path, view, index

    @property
    def group(self) -> str:
        return group_of(self.path)

    @property
    def size(self) -> int:
        return len(self._view)

    def get(self, digest: str) -> bytes:
        offset, length = self.index[digest]
        return self._view[offset:offset + length]

    def head(self, digest: str, count: int) -> bytes:
        offset, length = self.index[digest]
        return self._view[offset:offset + min(count, length)]


def group_of(path: Path) -> str:
    """The month a pack was written in: its name up to the first dot."""
    return path.name.split(".", 1)[0]


def open_pack(path: Path) -> Pack:
    """The pack at `path`; `DamagedRecord` naming it when it is not a pack dream wrote."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise DamagedRecord(f"{path}: cannot read the pack file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size < len(MAGIC) + _TRAILER:
            raise DamagedRecord(f"{path}: is not a pack file dream wrote (not a regular file, or too short)")
        view = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    return Pack(path, view, _read_index(path, view))


def _read_index(path: Path, view: mmap.mmap) -> dict[str, tuple[int, int]]:
    size = len(view)
    if view[:len(MAGIC)] != MAGIC or view[size - len(END):] != END:
        raise DamagedRecord(f"{path}: is not a pack file dream wrote (bad header or trailer)")
    at = size - _TRAILER
    start, count = int.from_bytes(view[at:at + 8], "big"), int.from_bytes(view[at + 8:at + 12], "big")
    if start + count * _ENTRY != at or start < len(MAGIC):
        raise DamagedRecord(f"{path}: damaged pack file: its index does not fit the file")
    index: dict[str, tuple[int, int]] = {}
    for digest, offset, length in struct.iter_unpack(">32sQI", view[start:at]):
        if offset < len(MAGIC) or offset + length > start:
            raise DamagedRecord(f"{path}: damaged pack file: an object lies outside the file")
        index[digest.hex()] = (offset, length)
    return index


def encode(objects: Iterable[tuple[str, bytes]]) -> bytes:
    """A pack holding each (sha256, stored bytes) once."""
    parts, entries, at = [MAGIC], {}, len(MAGIC)
    for digest, stored in objects:
        if digest in entries:
            continue
        entries[digest] = (at, len(stored))
        parts.append(stored)
        at += len(stored)
    index = b"".join(bytes.fromhex(d) + o.to_bytes(8, "big") + n.to_bytes(4, "big")
                     for d, (o, n) in sorted(entries.items()))
    parts += [index, at.to_bytes(8, "big"), len(entries).to_bytes(4, "big"), END]
    return b"".join(parts)


def write(folder: Path, group: str, objects: Iterable[tuple[str, bytes]]) -> Path:
    """A new pack in `folder` for `group` (a month), written atomically and durably; its path."""
    path = new_path(folder, group)
    atomic_write(path, encode(objects))
    return path


def new_path(folder: Path, group: str) -> Path:
    """A fresh pack name in `folder` for `group`: the month, then random."""
    return folder / f"{group}.{secrets.token_hex(4)}{SUFFIX}"


def month_of(when: float) -> str:
    """The group of a pack written at `when` (seconds since the epoch): its month, in UTC."""
    return time.strftime("%Y-%m", time.gmtime(when))


def pack_paths(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / name for name in names if name.endswith(SUFFIX) and not name.startswith(".")]
