"""Generate a fleet of memory stores for the Prefect tests and the fleet bench.

Stores sit where Claude Code keeps them, ``<root>/<project>/memory``. Each
store is in one known gate state, so a test can say which stores a scan must
dream and which it must skip, and why:

- ``due``: a copy of the demo store (real memories, nine sessions, never
  dreamed); the offline engine always finds something to propose;
- ``hours``: dreamed an hour ago;
- ``sessions``: dreamed two days ago, one session since;
- ``disabled``: ``enabled = false`` in its own config.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"
CLOSED_KINDS = ("hours", "sessions", "disabled")

MEMORY_INDEX = "# Memory\n\n- [Build](project_build.md) — how the project is built and tested\n"
TOPIC = "---\nname: Build\ndescription: how the project is built\ntype: project\n---\n\nRun `make test` before pushing.\n"
LOG = "> how do I run the tests?\n< run make test\n. Bash make test\n"


@dataclass
class Fleet:
    root: Path
    stores: dict[str, list[Path]] = field(default_factory=dict)  # kind -> stores

    @property
    def due(self) -> list[Path]:
        return self.stores.get("due", [])

    @property
    def stores_all(self) -> list[Path]:
        return [store for paths in self.stores.values() for store in paths]

    def kind_of(self, store: Path) -> str:
        return next(kind for kind, paths in self.stores.items() if store in paths)


def _write_state(store: Path, last_consolidated_at: float) -> None:
    (store / ".dream").mkdir(parents=True, exist_ok=True)
    state = {"last_consolidated_at": last_consolidated_at, "failures": 0, "backoff_until": None,
             "last_run_id": "seed", "last_status": "noop"}
    (store / ".dream" / "state.json").write_text(json.dumps(state))


def _write_logs(store: Path, count: int, mtime: float) -> None:
    day = store / "logs" / "2026" / "11" / "20"
    day.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        log = day / f"s{i:02d}-session-{i}.md"
        log.write_text(LOG)
        os.utime(log, (mtime, mtime))


def small_store(store: Path, kind: str, now: float) -> None:
    """A two-file store whose gate is closed for reason `kind`."""
    store.mkdir(parents=True)
    (store / "MEMORY.md").write_text(MEMORY_INDEX)
    (store / "project_build.md").write_text(TOPIC)
    if kind == "hours":
        _write_logs(store, 6, now - 1800)
        _write_state(store, now - 3600)
    elif kind == "sessions":
        _write_logs(store, 4, now - 3 * 86400)
        _write_logs(store, 1, now - 600)  # overwrites s00: one session changed since
        _write_state(store, now - 2 * 86400)
    elif kind == "disabled":
        _write_logs(store, 6, now - 600)
        (store / ".dream").mkdir()
        (store / ".dream" / "config.toml").write_text("enabled = false\n")
    else:
        raise ValueError(f"unknown store kind {kind!r}")


def due_store(store: Path) -> None:
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))


def make_fleet(root: Path, total: int, due: int, now: float | None = None) -> Fleet:
    """`total` stores under `root`, `due` of them due, the rest closed in turn by each reason."""
    now = time.time() if now is None else now
    fleet = Fleet(Path(root))
    for i in range(total):
        kind = "due" if i < due else CLOSED_KINDS[(i - due) % len(CLOSED_KINDS)]
        store = fleet.root / f"-home-dev-project-{i:04d}" / "memory"
        due_store(store) if kind == "due" else small_store(store, kind, now)
        fleet.stores.setdefault(kind, []).append(store.resolve())
    return fleet
