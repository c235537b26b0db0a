"""Compare-and-swap of one memory file, for writers that do not take dream's lock.

The agent appends to memory files whenever it likes; accept must never
overwrite such an append. Checking a file and then renaming over it leaves a
window in which an append is lost, however short the window is. So the swap
itself tells us what it replaced: the new bytes are written to a temporary
file, the file's (inode, size, mtime) and content hash are checked, re-checked
immediately before the swap, and the swap is an atomic exchange
(renameat2(RENAME_EXCHANGE)): the temporary name then holds exactly what the
path held at that instant. If that is not what we planned over, the store
changed in the window; the swapped-out bytes are merged three-way with ours
and swapped in again, or, when the edits collide, put back. Nothing a writer
finished before the exchange can be lost, and a writer that opens the path
after it appends to the new file.

What no swap can see is a writer that opened the old file before the
exchange and writes into it after we read it back; only a writer that holds
the store's lock (``.dream/run.lock``, flock) is fully safe from that.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dream.crashpoints import crashpoint
from dream.store.tree import TEMP_SUFFIX, _mode_for, fsync_dir, sha256, temp_prefix
from dream.versions.merge import merge_file

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
MAX_SWAPS = 8  # each extra round means another writer raced us again; give the file back after this many


def _load_renameat2():
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


_renameat2 = _load_renameat2()


@dataclass(frozen=True)
class Seen:
    """A file as checked: identity, size, mtime and content (None: absent)."""

    ino: int
    size: int
    mtime_ns: int
    data: bytes | None

    @property
    def digest(self) -> str | None:
        return None if self.data is None else sha256(self.data)


class NotRegular(OSError):
    """The path holds something other than a regular file (folder, symlink, FIFO …)."""


def observe(path: Path) -> Seen:
    """The file at `path` now; `NotRegular` when it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Seen(0, 0, 0, None)
    except OSError as exc:
        raise NotRegular(exc.errno, exc.strerror, str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return Seen(info.st_ino, info.st_size, info.st_mtime_ns, b"".join(chunks))
    finally:
        os.close(fd)


def _same_identity(path: Path, seen: Seen) -> bool:
    """The last check before the swap: cheap, so the window after it is as short as possible."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return seen.data is None
    return (seen.data is not None and stat.S_ISREG(info.st_mode)
            and (info.st_ino, info.st_size, info.st_mtime_ns) == (seen.ino, seen.size, seen.mtime_ns))


@dataclass
class CasResult:
    data: bytes | None  # what the path holds now, as far as this swap knows (None: absent)
    merged: bool = False  # another writer's edit was merged with ours
    conflict: bool = False  # another writer's edit collided with ours: theirs is in place, ours is not


def compare_and_swap(path: Path, base: bytes | None, want: bytes | None) -> CasResult:
    """Make `path` hold `want` (None: remove it) where it held `base`, keeping any other writer's edit.

    If the file no longer holds `base`, its edit and ours are merged three-way
    (base, theirs, ours); if they collide the file is left with theirs and
    `conflict` is set. Raises `NotRegular` if the path is no regular file.
    """
    on_disk, goal, result = base, want, CasResult(want)
    for _ in range(MAX_SWAPS):
        seen = observe(path)
        if seen.data != on_disk:  # changed before the swap: merge first, swap over what is there
            goal = _combine(result, on_disk, seen.data, goal)
            on_disk = seen.data
        if goal == on_disk:
            result.data = goal
            return result
        if not _same_identity(path, seen):
            continue  # changed between the read and now: look again
        out = _swap(path, goal)
        if out == on_disk:
            result.data = goal
            return result
        # Changed in the window between the check and the swap: `goal` is in place, `out` was replaced.
        goal, on_disk = _combine(result, on_disk, out, goal), goal
    raise OSError(errno.EAGAIN, f"changed {MAX_SWAPS} times while dream wrote it", str(path))


def _combine(result: CasResult, base: bytes | None, theirs: bytes | None, ours: bytes | None) -> bytes | None:
    """What the path should hold when another writer turned `base` into `theirs` while we meant `ours`.

    Before a collision `ours` is dream's write: it is merged, or dropped for
    theirs. After one, `ours` is a writer's own bytes being put back, so it is
    never dropped: both are kept, one after the other.
    """
    merged, clash = _merge(base, theirs, ours)
    if not clash:
        result.merged = result.merged or merged != ours
        return merged
    if not result.conflict:
        result.conflict = True
        return theirs
    return _both(ours, theirs, base)


def _merge(base: bytes | None, theirs: bytes | None, ours: bytes | None) -> tuple[bytes | None, bool]:
    """(result, collided): both edits when they touch different lines; theirs alone when they collide."""
    if theirs == base:
        return ours, False
    if ours == base or ours == theirs:
        return theirs, False
    if base is None or theirs is None or ours is None:
        return theirs, True
    merged, _ = merge_file(base, theirs, ours)
    return (theirs, True) if merged is None else (merged, False)


def _both(ours: bytes | None, theirs: bytes | None, base: bytes | None) -> bytes | None:
    if ours is None or theirs is None:
        return theirs if ours is None else ours
    added = theirs[len(base):] if base is not None and theirs.startswith(base) else theirs
    return (ours if ours.endswith(b"\n") else ours + b"\n") + added


def _swap(path: Path, data: bytes | None) -> bytes | None:
    """Put `data` at `path` in one step (None: remove it); return what the path held at that instant."""
    if data is None:
        return _take_away(path)
    path.parent.mkdir(parents=True, exist_ok=True)  # a new folder; unsafe ones were refused before
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _mode_for(path))
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        crashpoint("swap-temp-written")
        out = _exchange_in(Path(tmp), path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    fsync_dir(path.parent)
    return out


def _exchange_in(tmp: Path, path: Path) -> bytes | None:
    """Swap `tmp` into `path`; `tmp` is left holding the old file (or nothing)."""
    while True:
        try:
            os.link(tmp, path)  # absent target: link never replaces, so a file created meanwhile is kept
            return None
        except FileExistsError:
            pass
        if _renameat2 is not None:
            if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE) == 0:
                return observe(tmp).data
            err = ctypes.get_errno()
            if err == errno.ENOENT:
                continue  # removed meanwhile: link again
            if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise OSError(err, os.strerror(err), str(path))
        return _replace_keeping_old(tmp, path)


def _replace_keeping_old(tmp: Path, path: Path) -> bytes | None:
    """Without an exchange: pin the old inode by a hard link, then rename; sees in-place appends only."""
    aside = tmp.with_name(tmp.name[:-len(TEMP_SUFFIX)] + "old" + TEMP_SUFFIX)
    try:
        os.link(path, aside)
    except FileNotFoundError:
        os.replace(tmp, path)
        return None
    try:
        os.replace(tmp, path)
        return observe(aside).data
    finally:
        aside.unlink(missing_ok=True)


def _take_away(path: Path) -> bytes | None:
    """Remove `path` by renaming it aside first, so what was removed is known exactly."""
    aside = path.with_name(f"{temp_prefix(path)}{os.getpid()}removed{TEMP_SUFFIX}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None
    try:
        return observe(aside).data
    finally:
        aside.unlink(missing_ok=True)
        fsync_dir(path.parent)

