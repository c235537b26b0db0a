"""Test hooks for crash safety: die at a named point, as abruptly as a power cut, or run out of disk.

`crashpoint` kills the process where `DREAM_CRASHPOINT` names it. `before_write`
stands where dream writes file data: with `DREAM_DISK_FULL_AFTER=N` the first N
writes of the process succeed and every later one fails with ENOSPC, as on a
disk that filled up (it stays full: nothing dream does afterwards can write
either). Both do nothing when their variable is unset.
"""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

_writes: dict[str, int] = {}  # DREAM_DISK_FULL_AFTER's value -> writes counted under it (a new value starts at 0)


def crashpoint(name: str) -> None:
    """SIGKILL this process here when DREAM_CRASHPOINT names this point; nothing else happens otherwise."""
    if os.environ.get("DREAM_CRASHPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def before_write(path: Path | str) -> None:
    """Raise ENOSPC for `path` once DREAM_DISK_FULL_AFTER writes were allowed; nothing otherwise."""
    limit = os.environ.get("DREAM_DISK_FULL_AFTER")
    if limit is None:
        return
    done = _writes.get(limit, 0)
    _writes.clear()
    _writes[limit] = done + 1
    if done >= int(limit):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
