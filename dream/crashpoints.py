"""Test hooks for crash safety: die at a named point, as abruptly as a power cut, or run out of disk.

`crashpoint` kills the process where `DREAM_CRASHPOINT` names it. `before_write`
stands where dream writes file data: with `DREAM_DISK_FULL_AFTER=N` the first N
writes of the process succeed and every later one fails with ENOSPC, as on a
disk that filled up (it stays full: nothing dream does afterwards can write
either). With `DREAM_CRASH_AT_WRITE=N` it SIGKILLs the process at its Nth
write instead (its temporary file made, no byte in it): every write point in
turn, for tests that kill a command wherever it writes. Each does nothing
when its variable is unset.
"""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

_writes: dict[str, int] = {}  # DREAM_DISK_FULL_AFTER's value -> writes counted under it (a new value starts at 0)
_writes_to_crash: list[int] = [0]  # writes of this process, counted for DREAM_CRASH_AT_WRITE


def crashpoint(name: str) -> None:
    """SIGKILL this process here when DREAM_CRASHPOINT names this point; nothing else happens otherwise."""
    if os.environ.get("DREAM_CRASHPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def before_write(path: Path | str) -> None:
    """Raise ENOSPC for `path` once DREAM_DISK_FULL_AFTER writes were allowed; die at DREAM_CRASH_AT_WRITE."""
    crash_at = os.environ.get("DREAM_CRASH_AT_WRITE")
    if crash_at is not None:
        _writes_to_crash[0] += 1
        if _writes_to_crash[0] == int(crash_at):
            os.kill(os.getpid(), signal.SIGKILL)
    limit = os.environ.get("DREAM_DISK_FULL_AFTER")
    if limit is None:
        return
    done = _writes.get(limit, 0)
    _writes.clear()
    _writes[limit] = done + 1
    if done >= int(limit):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
