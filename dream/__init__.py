"""dream: offline, reviewable consolidation of AI agents' markdown memory.

The public API, one function per thing a person or a scheduler does::

    import dream

    outcome = dream.run("~/.claude/projects/p/memory")      # gate, lock, dream, propose
    dream.status("~/.claude/projects/p/memory")              # gate, lock, versions, pending
    dream.accept(store, outcome.proposal_id)                 # the next version, written atomically
    dream.reject(store, proposal_id)
    dream.rollback(store, 1)                                 # any earlier version, byte for byte
    dream.rebase(store, proposal_id)                         # dream again on the store as it is now

Errors are `dream.errors.DreamError` and its families (`BadInput`,
`Refused`, `RunFailed`). The stages themselves live in subpackages:
`dream.store` (the files), `dream.versions` (snapshots, proposals, the
journal), `dream.pipeline` (one run), `dream.review` (decisions),
`dream.engines`, `dream.transcripts` and `dream.cli`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from dream.pipeline.run import run
    from dream.review.decide import accept, reject, rollback
    from dream.pipeline.rebase import rebase
    from dream.pipeline.status import store_status as status

# Loaded on first use: `import dream` stays cheap for the CLI, which imports
# only the modules its command needs (polars, duckdb and anthropic take
# hundreds of milliseconds to import).
_API = {
    "run": ("dream.pipeline.run", "run"),
    "accept": ("dream.review.decide", "accept"),
    "reject": ("dream.review.decide", "reject"),
    "rollback": ("dream.review.decide", "rollback"),
    "rebase": ("dream.pipeline.rebase", "rebase"),
    "status": ("dream.pipeline.status", "store_status"),
}

__all__ = ["__version__", "accept", "rebase", "reject", "rollback", "run", "status"]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'dream' has no attribute {name!r}")
    module, attr = _API[name]
    return getattr(import_module(module), attr)
