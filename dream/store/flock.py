"""An OS lock on a lock file (``flock``), the one every lock of dream takes.

The kernel drops the lock when the holding process dies, so a killed
process never blocks the next one. This is what the `filelock` package did
for dream on POSIX, without its import (it imports asyncio for its async
locks: about 0.1 s of CPU on every command that writes, a tenth of a
nightly dream). dream is POSIX only (`dream.store.cas` uses fcntl leases).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

POLL_SECONDS = 0.05  # how often a waiting lock tries again


class LockTimeout(Exception):
    """The lock was held by another process (or another open of the file) for all of the wait."""


class Flock:
    """An exclusive lock on `path`, created if missing: `acquire` waits up to `timeout` seconds (0: one try,
    negative: for ever), then raises `LockTimeout`; an `OSError` says the file cannot be opened or locked."""

    def __init__(self, path: Path | str, timeout: float = -1):
        self.path = Path(path)
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> Flock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if 0 <= self.timeout and deadline <= time.monotonic():
                    os.close(fd)
                    raise LockTimeout(str(self.path)) from None
                time.sleep(POLL_SECONDS)
            except BaseException:
                os.close(fd)
                raise
            else:
                self._fd = fd
                return self

    def release(self) -> None:
        """Give the lock back (closing the file drops it); nothing if it is not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> Flock:
        return self if self._fd is not None else self.acquire()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()
