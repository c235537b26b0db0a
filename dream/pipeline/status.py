"""What `dream status` reports: one store (gate, lock, versions, pending
proposals), or every store on the machine, one row each (`--all`).

`--all` lists the stores `fleet_stores` finds (Claude Code's
``~/.claude/projects/*/memory`` and any extra roots), so the listing and the
fleet flow agree on what a machine holds. Each row is `store_status` plus
how many transcripts of the store's configured source the next run would
import. A store that cannot be read (a bad config, a permission problem)
gets a row with its error instead of ending the listing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dream.config import Settings, load_settings
from dream.errors import DreamError
from dream.notes import open_notes
from dream.pipeline.fleet import fleet_stores
from dream.pipeline.gate import GateDecision, check_gate, preview_gate
from dream.store.state import StoreState, load_state
from dream.store.layout import Layout
from dream.store.lock import current_holder
from dream.store.pinned import pinned_paths
from dream.store.tree import read_tree
from dream.transcripts.usage import store_usage
from dream.versions.journal import finish_interrupted_write
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals
from dream.versions.removed import survival


def store_status(store: str | Path, overrides: dict | None = None) -> dict[str, Any]:
    layout = Layout.open(store)
    settings = load_settings(layout.root, overrides)
    problem, cleaned = finish_interrupted_write(layout)
    state = load_state(layout)
    holder = current_holder(layout)
    proposals = Proposals(layout)
    return {
        "store": str(layout.root),
        "gate": _gate(layout, settings, state).to_json(),
        "lock": None if holder is None else asdict(holder),
        "current_version": Versions(layout).current(),
        "pending": [p.id for p in proposals.pending()],
        "damaged_proposals": proposals.damaged(),
        "last_consolidated_at": state.last_consolidated_at,
        "failures": state.failures,
        "interrupted_accept": layout.journal.exists() or problem is not None,
        "interrupted_accept_problem": problem,
        "cleaned": cleaned,  # files killed dream processes left, removed now
        "survival": _survival(layout),
        "memory_reads": _reads(layout, settings),
        "notes": open_notes(layout, settings.notes_fold_days).to_json(),  # what waits for a person, noop nights too
    }


def _gate(layout: Layout, settings: Settings, state: StoreState) -> GateDecision:
    """The gate `dream run` will meet; when its transcripts cannot be found, the gate without them and why."""
    try:
        return preview_gate(layout, settings, state=state)
    except DreamError as exc:  # the run's import would stop here: say so, and show the rest of the status
        decision = check_gate(layout, settings, state=state)
        decision.warnings.append(f"`dream run` would stop at its import: {exc}")
        return decision


def _survival(layout: Layout) -> dict[str, Any] | None:
    """The survival figures; None when the store cannot be read whole (status names that elsewhere)."""
    try:
        return survival(Versions(layout), read_tree(layout.root))
    except DreamError:
        return None


def _reads(layout: Layout, settings: Settings) -> dict[str, Any] | None:
    """Reads per memory from the store's transcripts; None when none are known or the store cannot be read."""
    try:
        tree = read_tree(layout.root)
        return store_usage(layout.root, settings, tree, pinned_paths(tree, settings.pinned))
    except DreamError:
        return None


def fleet_status(extra_roots: Iterable[Path] = ()) -> list[dict[str, Any]]:
    """One status row per discovered store, sorted by path."""
    return [store_row(store) for store in fleet_stores(extra_roots)]


def store_row(store: Path) -> dict[str, Any]:
    """`store_status` of one store plus its transcripts waiting; an error row if it cannot be read."""
    try:
        row = store_status(store)
        row["transcripts"] = transcripts_waiting(store)
    except DreamError as exc:
        return {"store": str(store), "error": str(exc)}
    except OSError as exc:  # e.g. a store folder without read permission
        return {"store": str(store), "error": f"{store}: cannot read: {exc.strerror or exc}"}
    except Exception as exc:  # anything else in one store must not end the listing of the others
        return {"store": str(store), "error": f"{store}: {type(exc).__name__}: {exc}"}
    return row


def transcripts_waiting(store: Path) -> dict[str, Any] | None:
    """The store's transcript source and how many of its transcripts changed since the last import.

    Stat only, like the gate (`changed_since_import`). None when the store
    reads no transcripts.
    """
    settings = load_settings(store)
    if settings.transcripts is None:
        return None
    # The importer loads both transcript readers and the redaction patterns; only stores with a source need it.
    from dream.transcripts.importer import changed_since_import, resolve_source_path  # start-up

    source = settings.transcripts
    try:
        found = resolve_source_path(store, source, None, settings)
        changed = changed_since_import(store, source, found, settings)
    except (DreamError, OSError) as exc:
        return {"source": source, "path": None, "changed": None, "error": str(exc)}
    return {"source": source, "path": str(found), "changed": changed, "error": None}
