"""Read transcripts on a second core: a forked helper that hands back sessions.

Turning JSON records into entries is Python work that holds the GIL, so
threads cannot spread it over cores. For a large import (the first one on a
machine with months of sessions), the importer forks a helper that reads
the last part of the list while this process reads the first part. The
helper writes each `Session` with `marshal` (fast; plain values only) into
an unnamed temporary file, which this process reads once the helper is done.
A file, not a pipe: draining a pipe takes a thread that would wait for the
GIL at every chunk, and the helper would stall on the full pipe meanwhile.

A fork, not a fresh interpreter, because a fresh one spends longer starting
(about 40 ms) than it saves here. And only from a process with no other
Python thread running (`can_fork`): a fork copies other threads' locks as
they are, and a lock held at that moment would never be released in the
helper. The helper starts no thread, uses nothing of the parent's but the
readers, and ends with `os._exit`.

Whatever goes wrong with the helper (it cannot fork, dies, runs past
`TIMEOUT_SECONDS`, leaves something unreadable), the transcripts it did not
deliver are read in this process instead: the import gives the same logs
either way.
"""

from __future__ import annotations

import marshal
import os
import signal
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from dream.transcripts.common import Entry, Session

# Below this much to read, forking costs more than it saves.
MIN_BYTES = 32 << 20
# The helper's share of the bytes: this process also renders and writes.
SHARE = 0.45
TIMEOUT_SECONDS = 600.0

Read = Callable[[Path], "Session | OSError"]


def helper_share(sizes: list[int]) -> int:
    """Where the helper's part of a list of transcripts starts; len(sizes) means no helper."""
    total = sum(sizes)
    if total < MIN_BYTES or len(sizes) < 2 or not can_fork():
        return len(sizes)
    mine = 0
    for index, size in enumerate(sizes):
        if mine + size > total * (1 - SHARE):
            return max(index, 1)
        mine += size
    return len(sizes)


def can_fork() -> bool:
    return hasattr(os, "fork") and (os.cpu_count() or 1) >= 2 and threading.active_count() == 1


class Helper:
    """A forked helper reading `paths` with `read`; `sessions()` yields them in order.

    What the helper does not deliver is read here, with `read` too. Use as
    a context manager, so that the helper never outlives the import.
    """

    def __init__(self, paths: list[Path], read: Read):
        self.paths = paths
        self.read = read
        self.pid = 0
        self.out = None
        try:
            self.out = tempfile.TemporaryFile()
            self.pid = os.fork()
        except OSError:
            return
        if self.pid == 0:  # the helper: read, write, and exit without any of the parent's cleanup
            os._exit(_serve(paths, read, self.out.fileno()))

    def sessions(self) -> Iterator[Session | OSError]:
        delivered = 0
        if self.pid > 0:
            self._wait()
            try:
                self.out.seek(0)
                messages = _frames(self.out.read())
                for _ in self.paths:
                    yield _unpack(marshal.loads(next(messages)))
                    delivered += 1
            except (OSError, StopIteration, EOFError, ValueError, TypeError, IndexError):
                pass  # the helper failed part way: read the rest here
        for path in self.paths[delivered:]:
            yield self.read(path)

    def _wait(self) -> None:
        """Wait for the helper to end; stop it if it runs past the timeout."""
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                break
            time.sleep(0.001)
        self.pid = -1  # reaped

    def close(self) -> None:
        if self.pid > 0:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self.pid = 0
        if self.out is not None:
            self.out.close()

    def __enter__(self) -> Helper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the two ends of the file ---------------------------------------------------------

# Each message is framed by its length: `marshal.loads` on bytes is several
# times faster than `marshal.load` from a file.
_LENGTH = struct.Struct("<Q")


def _serve(paths: list[Path], read: Read, fd: int) -> int:
    """The helper's side: one message per transcript; the exit status."""
    try:
        with os.fdopen(fd, "wb", closefd=False) as out:
            for path in paths:
                message = marshal.dumps(_pack(read(path)))
                out.write(_LENGTH.pack(len(message)) + message)
        return 0
    except BaseException:  # noqa: BLE001 - any failure: the parent reads what is missing
        return 1


def _frames(data: bytes) -> Iterator[memoryview]:
    """The whole messages in `data` (a cut last one is left out)."""
    view = memoryview(data)
    at = 0
    while at + _LENGTH.size <= len(view):
        (length,) = _LENGTH.unpack_from(view, at)
        start = at + _LENGTH.size
        if start + length > len(view):
            return
        yield view[start : start + length]
        at = start + length


def _pack(session: Session | OSError) -> tuple:
    if isinstance(session, OSError):
        return ("error", session.errno, session.strerror or str(session))
    started = session.started.isoformat() if session.started else None
    entries = [(e.kind, e.text, e.length, e.sidechain) for e in session.entries]
    return ("session", session.session_id, started, entries, session.records, session.skipped, session.malformed)


def _unpack(message: tuple) -> Session | OSError:
    if message[0] == "error":
        return OSError(message[1], message[2])
    _, session_id, started, entries, records, skipped, malformed = message
    return Session(
        session_id,
        datetime.fromisoformat(started) if started else None,
        [Entry(*entry) for entry in entries],
        records,
        skipped,
        malformed,
    )
