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

import errno
import fcntl
import os
import signal
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dream.crashpoints import crashpoint
from dream.store.tree import NOT_LOADED, TEMP_SUFFIX, fsync_dir, sha256, temp_prefix, write_temp
from dream.store.merge import merge_file
from dream.store.regular import NotRegular

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_CHANGED = object()  # `_swap`: the file changed after the last check, nothing was done
MAX_SWAPS = 8  # each extra round means another writer raced us again; give the file back after this many


_renameat2: Any = NOT_LOADED  # `_get_renameat2`; tests put None here


def _get_renameat2() -> Any:
    """Linux's renameat2(2), or None; looked up on first use (ctypes costs ~6 ms of start-up)."""
    global _renameat2
    if _renameat2 is NOT_LOADED:
        import ctypes  # start-up: ~6 ms, and most commands write nothing

        try:
            _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
            _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        except (OSError, AttributeError):
            _renameat2 = None
    return _renameat2


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


def observe(path: Path) -> Seen:
    """The file at `path` now; `NotRegular` when it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Seen(0, 0, 0, None)
    except OSError as exc:
        raise NotRegular(path, exc.strerror or "cannot be opened", exc.errno or errno.EINVAL) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(path, "not a regular file")
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


def compare_and_swap(path: Path, base: bytes | None, want: bytes | None, staged: Path | None = None) -> CasResult:
    """Make `path` hold `want` (None: remove it) where it held `base`, keeping any other writer's edit.

    If the file no longer holds `base`, its edit and ours are merged three-way
    (base, theirs, ours); if they collide the file is left with theirs and
    `conflict` is set. Raises `NotRegular` if the path is no regular file.
    `staged` is a temporary file beside `path` that already holds `want`
    (`stage`): swapping it in needs no disk space, and it is gone afterwards.
    """
    on_disk, goal, result = base, want, CasResult(want)
    try:
        for _ in range(MAX_SWAPS):
            seen = observe(path)
            if seen.data != on_disk:  # changed before the swap: merge first, swap over what is there
                goal = _combine(result, on_disk, seen.data, goal)
                on_disk = seen.data
            if goal == on_disk:
                result.data = goal
                return result
            ready = staged if goal is want else None
            out = _swap(path, goal, seen, ready)
            if out is _CHANGED:
                continue  # changed between the read and the swap: look again
            if ready is not None:
                staged = None  # swapped in: its name now holds the old bytes, which `_swap` removed
            if out == on_disk:
                result.data = goal
                return result
            # Changed in the window between the check and the swap: `goal` is in place, `out` was replaced.
            goal, on_disk = _combine(result, on_disk, out, goal), goal
        raise OSError(errno.EAGAIN, f"changed {MAX_SWAPS} times while dream wrote it", str(path))
    finally:
        if staged is not None:
            staged.unlink(missing_ok=True)


def stage(path: Path, data: bytes) -> Path:
    """A temporary file beside `path` holding `data`, synced: a later swap of it needs no new disk space.

    A new folder is made on the way; unsafe ones were refused before."""
    return write_temp(path, data)


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


def undo_write(written: bytes | None, now: bytes | None, before: bytes | None) -> bytes | None:
    """What a path should hold when dream takes back its write of `written` over `before`, the path now
    holding `now`: `before` with every edit another writer made since, never without one of its lines.

    Edits that do not touch dream's lines are merged three-way; when they do,
    `before` is kept and the writer's own lines (those in neither `written`
    nor `before`) follow it, so nothing the writer said leaves the live file.
    """
    if now == written:
        return before
    ours = _own_lines(now, written, before)
    if before is None or written is None or now is None:
        if before is None:
            return b"".join(ours) or None  # dream made the file: only the writer's lines stay
        return _with_lines(before, ours)
    merged, _ = merge_file(written, now, before)
    return merged if merged is not None else _with_lines(before, ours)


def written_then_added_to(now: bytes | None, written: bytes | None, before: bytes | None) -> bool:
    """Whether `now` is `written` (dream's bytes over `before`) with only lines another writer added since:
    none of `before`'s own lines is back, and taking the new lines out leaves exactly `written`."""
    if now == written:
        return True
    if now is None:
        return False
    if written is None:  # dream removed it, and the writer made it again: only with lines of its own
        return not _line_set(now) & _line_set(before)
    ours = set(written.splitlines(keepends=True))
    kept = [line for line in now.splitlines(keepends=True) if line in ours]
    return b"".join(kept) == written and not any(
        line.rstrip(b"\r\n") in _line_set(before) for line in _own_lines(now, written))


def _line_set(data: bytes | None) -> set[bytes]:
    return {line.rstrip(b"\r\n") for line in (data or b"").splitlines()}


def _own_lines(now: bytes | None, *others: bytes | None) -> list[bytes]:
    """The lines of `now` found in none of `others`, in order: what another writer added."""
    known = set().union(*(_line_set(data) for data in others))
    return [line if line.endswith(b"\n") else line + b"\n"
            for line in (now or b"").splitlines(keepends=True) if line.rstrip(b"\r\n") not in known]


def _with_lines(data: bytes, lines: list[bytes]) -> bytes:
    if not lines:
        return data
    return (data if data.endswith(b"\n") or not data else data + b"\n") + b"".join(lines)


def put_back(path: Path, written: bytes | None, before: bytes | None) -> bool:
    """Take back dream's write of `written` at `path` (`undo_write`), however other writers race it.

    False when the path is no longer a plain file, or kept changing: it then
    holds dream's bytes with the writers' edits, and the caller says so."""
    for _ in range(MAX_SWAPS):
        try:
            now = observe(path).data
            result = compare_and_swap(path, now, undo_write(written, now, before))
        except (NotRegular, OSError):
            return False
        if not result.conflict:
            return True
    return False


def _swap(path: Path, data: bytes | None, seen: Seen, staged: Path | None = None) -> Any:
    """Put `data` at `path` in one step (None: remove it); return what the path held at that instant,
    or `_CHANGED` when the file is no longer the one `seen` (nothing done then; `staged` is kept)."""
    if data is None:
        return _take_away(path, seen)
    tmp = str(staged if staged is not None else stage(path, data))
    keep = False
    try:
        crashpoint("swap-temp-written")
        with _writers_held_off(path) as lease:
            if not _same_identity(path, seen):
                keep = staged is not None
                return _CHANGED
            old = _exchange_in(Path(tmp), path)
            late = lease is not None and _breaking(lease)
        # A writer that opened the old file as we swapped writes into it now: wait for it, its bytes count.
        out = None if old is None else _after_writers(old) if late else observe(old).data
        if old is not None and old != Path(tmp):
            old.unlink(missing_ok=True)
    finally:
        if not keep:
            Path(tmp).unlink(missing_ok=True)
    fsync_dir(path.parent)
    return out


def _exchange_in(tmp: Path, path: Path) -> Path | None:
    """Swap `tmp` into `path`; return where the old file now is (None: there was none)."""
    while True:
        try:
            os.link(tmp, path)  # absent target: link never replaces, so a file created meanwhile is kept
            return None
        except FileExistsError:
            pass
        renameat2 = _get_renameat2()
        if renameat2 is not None:
            if renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE) == 0:
                return tmp
            import ctypes  # start-up: loaded by _get_renameat2 already

            err = ctypes.get_errno()
            if err == errno.ENOENT:
                continue  # removed meanwhile: link again
            if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise OSError(err, os.strerror(err), str(path))
        return _replace_keeping_old(tmp, path)


def _replace_keeping_old(tmp: Path, path: Path) -> Path | None:
    """Without an exchange: pin the old inode by a hard link, then rename; sees in-place appends only."""
    aside = tmp.with_name(tmp.name[:-len(TEMP_SUFFIX)] + "old" + TEMP_SUFFIX)
    try:
        os.link(path, aside)
    except FileNotFoundError:
        os.replace(tmp, path)
        return None
    os.replace(tmp, path)
    return aside


def _take_away(path: Path, seen: Seen) -> Any:
    """Remove `path` by renaming it aside first, so what was removed is known exactly."""
    aside = path.with_name(f"{temp_prefix(path)}{os.getpid()}removed{TEMP_SUFFIX}")
    with _writers_held_off(path) as lease:
        if not _same_identity(path, seen):
            return _CHANGED
        try:
            os.rename(path, aside)
        except FileNotFoundError:
            return None
        late = lease is not None and _breaking(lease)
    try:
        return _after_writers(aside) if late else observe(aside).data
    finally:
        aside.unlink(missing_ok=True)
        fsync_dir(path.parent)


# --------------------------------------------------------------- leases: no writer caught mid-write

LEASE_WAIT = 2.0  # seconds to wait for writers to close a file; a writer holding it longer is not waited for


@contextmanager
def _writers_held_off(path: Path) -> Iterator[int | None]:
    """Hold a read lease on `path`, or yield None where leases are not available (or a writer keeps it open).

    The kernel grants a read lease only while no process has the file open
    for writing, so a writer that opened the file before the swap has
    finished; one that opens it while we hold the lease waits until we let
    go, and `_breaking` tells us it tried (its open then lands on the file
    we swapped out, which `_after_writers` waits for and reads).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    try:
        held = _take_lease(fd)
        try:
            yield fd if held else None
        finally:
            if held:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    finally:
        os.close(fd)


def _take_lease(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)  # the break notice; SIGIO's default would kill us
    except (OSError, AttributeError):
        return False
    deadline = time.monotonic() + LEASE_WAIT
    while True:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
            return True
        except OSError as exc:
            if exc.errno != errno.EAGAIN or time.monotonic() > deadline:
                return False  # no leases here (EINVAL, EACCES), or a writer keeps the file open
            time.sleep(0.001)


def _breaking(fd: int) -> bool:
    """True when a writer tried to open the leased file meanwhile."""
    try:
        return fcntl.fcntl(fd, fcntl.F_GETLEASE) != fcntl.F_RDLCK
    except OSError:
        return True


def _after_writers(path: Path) -> bytes | None:
    """`path`'s bytes once no writer has it open (or after `LEASE_WAIT`).

    A writer whose open was held off by the swap's lease may reach the file
    only after this lease is taken: it then breaks this one too, and the
    file is read again once it is done."""
    for _ in range(MAX_SWAPS):
        with _writers_held_off(path) as lease:
            data = observe(path).data
            if lease is None or not _breaking(lease):
                return data
    return observe(path).data
