"""Many stores at once: find them, name them, and check their gates cheaply.

A scheduler that looks at every store every few minutes must not pay for a
dream run on each one. `scan_fleet` finds the stores under some roots and
asks each one's gate (state file and log stats only, see `dream.gate`)
whether a run is due; only the due ones are worth a run. A store whose
settings name a transcript source counts as due: its logs are derived at
run time, so only a run can tell whether enough sessions changed.

`store_slug` gives each store a short, stable name that is also a valid
Prefect artifact key or concurrency-limit name (lowercase letters, digits,
dashes). Nothing here imports Prefect.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dream.config import load_settings
from dream.errors import DreamError, StoreNotFound
from dream.pipeline.gate import check_gate
from dream.store.layout import Layout
from dream.transcripts.discover import discover_stores

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
SLUG_TEXT_CHARS = 40


def store_slug(store: str | Path) -> str:
    """``<parent>-<name>-<hash8>`` in lowercase letters, digits and dashes.

    The last two folder names keep it readable (Claude Code's stores are all
    called ``memory``, their parents name the project); the hash of the full
    resolved path keeps two stores with the same names apart.
    """
    path = Path(store).expanduser().resolve()
    text = _NOT_SLUG.sub("-", f"{path.parent.name}-{path.name}".lower()).strip("-")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    text = text[-SLUG_TEXT_CHARS:].strip("-")
    return f"{text}-{digest}" if text else digest


@dataclass
class FleetEntry:
    """One store's answer to "is a dream due?"."""

    store: Path
    due: bool
    reason: str | None  # why not due: a SkipReason, or "error"
    message: str

    @property
    def slug(self) -> str:
        return store_slug(self.store)

    def to_json(self) -> dict:
        return {"store": str(self.store), "due": self.due,
                "reason": self.reason, "message": self.message}


def check_store(store: Path, *, force: bool = False, now: float | None = None) -> FleetEntry:
    """The gate of one store; a store that cannot be read is reported, not raised.

    `store` is taken as found by `discover_stores` (absolute and resolved),
    so it is not resolved again: at a thousand stores every syscall shows.
    """
    try:
        if not store.is_dir():
            raise StoreNotFound(f"{store}: store folder does not exist")
        layout = Layout(store)
        settings = load_settings(layout.root)
        if settings.transcripts and settings.enabled:
            return FleetEntry(layout.root, True, None, "transcripts to import; the run decides")
        decision = check_gate(layout, settings, force=force, now=now)
    except DreamError as exc:
        return FleetEntry(store, False, "error", str(exc))
    except Exception as exc:  # one unreadable store must not stop the scan of the others
        return FleetEntry(store, False, "error", f"{store}: {type(exc).__name__}: {exc}")
    reason = None if decision.reason is None else str(decision.reason)
    return FleetEntry(layout.root, decision.open, reason, decision.message)


def scan_fleet(roots: Iterable[str | Path] | None = None, *, force: bool = False,
               now: float | None = None) -> list[FleetEntry]:
    """Every store under `roots` (default: Claude Code's projects) with its gate decision."""
    now = time.time() if now is None else now
    stores = discover_stores(None if roots is None else [Path(r) for r in roots])
    return [check_store(store, force=force, now=now) for store in stores]
