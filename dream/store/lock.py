"""One run per store at a time.

The lock is an OS file lock (filelock) on ``.dream/run.lock``: the kernel
drops it when the holding process dies, so a killed run never blocks the
next one. Who holds it is written beside it in ``run.lock.json`` for
`dream status`; that file is only information and is trusted only while its
process is alive.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Iterator

from dream.errors import BadInput, LockBusy, NotWritable, fix_for
from dream.store.layout import Layout
from dream.store.records import load_json_record
from dream.store.regular import kind_of
from dream.store.tree import atomic_write, mark_format


@dataclass
class LockHolder:
    pid: int
    host: str
    run_id: str
    started_at: float
    purpose: str = "run"


def describe_holder(holder: LockHolder | None) -> str:
    """'store is locked by …', the one wording every command uses for a busy lock."""
    return str(LockBusy(holder))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def current_holder(layout: Layout) -> LockHolder | None:
    """The live holder of the store's lock, or None."""
    try:
        holder = load_json_record(layout.lock_info, LockHolder, "lock holder")
    except (FileNotFoundError, BadInput):
        return None  # information only: what cannot be read names no holder
    if holder.host == os.uname().nodename and not _pid_alive(holder.pid):
        return None
    return holder


def _kind(path) -> str:
    return kind_of(os.lstat(path).st_mode)


def _write_holder(layout: Layout, holder: LockHolder) -> None:
    """Write who holds the lock; anything but a file in the way is moved aside (and said), never a block."""
    info = layout.lock_info
    if info.is_symlink() or (info.exists() and not info.is_file()):
        aside = info.with_name(f"{info.name}.not-a-file-{int(time.time())}")
        sys.stderr.write(f"dream: warning: {info}: was {_kind(info)}, not a file; moved to {aside.name}\n")
        os.rename(info, aside)
    atomic_write(info, json.dumps(asdict(holder)).encode())


def _check_owner(layout: Layout) -> None:
    """Only the store's owner writes it: files root made in another user's `.dream/` lock that user out."""
    me = os.geteuid()
    for path in (layout.dream, layout.root):
        try:
            owner = os.stat(path).st_uid
        except OSError:
            continue
        if owner != me and (me == 0 or path == layout.dream):
            raise NotWritable(f"{path}: {fix_for(str(path))}")
        return


@contextmanager
def store_lock(layout: Layout, run_id: str, purpose: str = "run", wait: float = 0) -> Iterator[LockHolder]:
    """Hold the store's lock for the block, or raise `LockBusy` after `wait` seconds."""
    _check_owner(layout)
    layout.dream.mkdir(parents=True, exist_ok=True)
    from filelock import (  # start-up: filelock imports asyncio (~0.1 s); only writers need it
        FileLock,
        Timeout,
    )
    if layout.lock.is_symlink() or (layout.lock.exists() and not layout.lock.is_file()):
        raise BadInput(f"{layout.lock}: the store's lock file is {_kind(layout.lock)}, not a regular file; "
                       f"move it away")
    lock = FileLock(str(layout.lock), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(current_holder(layout)) from None
    except OSError as exc:
        raise BadInput(f"{layout.lock}: cannot take the store's lock: {exc.strerror or exc}") from None
    # os.uname().nodename is socket.gethostname() on POSIX, without importing socket at start-up
    holder = LockHolder(os.getpid(), os.uname().nodename, run_id, time.time(), purpose)
    try:
        mark_format(layout)  # the lock is taken by every command that writes .dream/
        _write_holder(layout, holder)
        yield holder
    finally:
        try:
            if layout.lock_info.is_file():
                layout.lock_info.unlink()
        except FileNotFoundError:
            pass
        lock.release()
