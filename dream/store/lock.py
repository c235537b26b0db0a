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
import socket
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Iterator

from dream.errors import LockBusy
from dream.store.layout import Layout
from dream.store.tree import atomic_write


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
        holder = LockHolder(**json.loads(layout.lock_info.read_text(encoding="utf-8")))
    except (FileNotFoundError, ValueError, TypeError):
        return None
    if holder.host == socket.gethostname() and not _pid_alive(holder.pid):
        return None
    return holder


@contextmanager
def store_lock(layout: Layout, run_id: str, purpose: str = "run", wait: float = 0) -> Iterator[LockHolder]:
    """Hold the store's lock for the block, or raise `LockBusy` after `wait` seconds."""
    layout.dream.mkdir(parents=True, exist_ok=True)
    from filelock import (  # start-up: filelock imports asyncio (~0.1 s); only writers need it
        FileLock,
        Timeout,
    )
    lock = FileLock(str(layout.lock), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(current_holder(layout)) from None
    holder = LockHolder(os.getpid(), socket.gethostname(), run_id, time.time(), purpose)
    try:
        atomic_write(layout.lock_info, json.dumps(asdict(holder)).encode())
        yield holder
    finally:
        try:
            layout.lock_info.unlink()
        except FileNotFoundError:
            pass
        lock.release()
