"""The exceptions dream raises, one family per way things go wrong.

Each family has one exit code, which the CLI uses as it is:

| family | exit | meaning |
| --- | --- | --- |
| `BadInput` (and `StoreNotFound`, `ConfigError`, `UnknownProposal`, `UnknownVersion`, `DamagedRecord`, `DiskFull`; `versions.journal.JournalBlocked`) | 2 | the input or a file of the store cannot be used as given |
| `Refused` (and `StaleBase`, `MergeConflict`, `ProposalClosed`, `LockBusy`) | 1 | doing it would be unsafe, or it is already done |
| `RunFailed` (and `BudgetExceeded`, `ValidationFailed`, `EngineFailed`) | 1 | a run ended without a valid proposal |

Every message is one line naming what and where.
"""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dream.outcomes import Usage


class DreamError(Exception):
    """Base of every error dream raises on purpose."""

    exit_code = 1


class BadInput(DreamError):
    """The user's input or the store's files cannot be used as given."""

    exit_code = 2


class StoreNotFound(BadInput):
    pass


class ConfigError(BadInput):
    pass


class UnknownProposal(BadInput):
    pass


class UnknownVersion(BadInput):
    pass


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(BadInput):
    """The disk (or the user's quota) ran out while dream wrote; the message says which state the store is in."""


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


WRITE_REFUSED_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


class NotWritable(BadInput):
    """dream may not write where it must (a read-only store, folders of mode 555, files of another user)."""


def from_os_error(exc: OSError) -> DreamError | None:
    """The one-line error for an OSError a user can fix (no space, no permission); None for any other."""
    where = exc.filename if exc.filename is not None else "the store"
    if is_disk_full(exc):
        return DiskFull(f"{where}: disk full ({exc.strerror}); free some space and run the command again")
    if exc.errno not in WRITE_REFUSED_ERRNOS:
        return None
    if exc.errno == errno.EROFS:  # no chmod or chown can help: the whole file system refuses writes
        return NotWritable(f"{where}: {exc.strerror}; {READ_ONLY_FIX}")
    return NotWritable(f"{where}: {exc.strerror}; {fix_for(str(where))}")


READ_ONLY_FIX = ("the file system is mounted read-only: remount it read-write, or copy the store to a writable "
                 "disk and run dream there")


def fix_for(path: str) -> str:
    """What to run so that this user may write `path`: chown when another user owns it, chmod otherwise."""
    import os  # start-up: only an error message needs it
    import pwd  # start-up: as above
    from pathlib import Path  # start-up: as above

    def name(uid: int) -> str:
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            return f"uid {uid}"

    here = Path(path)
    while not os.path.lexists(here) and here.parent != here:  # a folder dream could not make: its parent's
        here = here.parent
    try:
        owner = os.stat(here).st_uid
    except OSError:
        return "make its folder writable for you, or run dream as the user who owns the store"
    me, path = os.geteuid(), str(here)
    parts = Path(path).parts
    whole = str(Path(*parts[:parts.index(".dream") + 1])) if ".dream" in parts else path  # all of dream's files
    if owner != me and me == 0:
        return (f"it belongs to {name(owner)}: run dream as {name(owner)} (`sudo -u {name(owner)} dream …`), "
                f"so that what dream writes stays theirs")
    if owner != me:
        return f"it belongs to {name(owner)}, not to {name(me)}: run `sudo chown -R {name(me)} {whole}`"
    return f"it is not writable: run `chmod -R u+w {whole}`"


class Refused(DreamError):
    """An operation that would lose or corrupt data, so it was not done."""


class StaleBase(Refused):
    """The store changed after the proposal's base version was taken."""


class MergeConflict(Refused):
    """Accepting would overwrite edits made to the store after the proposal."""

    def __init__(self, message: str, conflicts: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.conflicts = conflicts or {}


class ProposalClosed(Refused):
    """The proposal was already accepted, rejected or replaced."""


class LockBusy(Refused):
    """The store is taken by another run; `holder` says who, when its lock file tells.

    `message` replaces the lock file's wording when something else holds the
    store (a scheduler's concurrency slot).
    """

    def __init__(self, holder=None, message: str | None = None):
        from_whom = f"run {holder.run_id} (pid {holder.pid})" if holder else "another process"
        super().__init__(message or f"store is locked by {from_whom}")
        self.holder = holder


class RunFailed(DreamError):
    """A dream run ended without a valid proposal; `usage` is what it spent until then (None: not known)."""

    def __init__(self, reason: str, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.reason = reason
        self.usage = usage
        self.sessions: int | None = None  # how many sessions the run took (its part), when the engine says

    def spent(self, usage: Usage) -> RunFailed:
        """This failure, carrying what the run spent: a failed run's history still shows its tokens."""
        self.usage = usage
        return self


class BudgetExceeded(RunFailed):
    def __init__(self, budget: str, message: str):
        super().__init__(f"budget_{budget}", message)
        self.budget = budget


class ValidationFailed(RunFailed):
    def __init__(self, message: str, findings: list | None = None):
        super().__init__("validation", message)
        self.findings = findings or []


class EngineFailed(RunFailed):
    def __init__(self, message: str, reason: str = "engine"):
        super().__init__(reason, message)
