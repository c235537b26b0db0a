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
    """A dream run ended without a valid proposal."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


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
