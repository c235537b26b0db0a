"""A small store and a scripted four-phase run, shared by the claude engine's tests.

The staging copy has two files about pytest to merge and an index to prune;
`four_phase_script` is what a well-behaved model would send the fake API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.store.staging import Staging
from helpers.fake_anthropic import Reply, memory, text, tool_use

INDEX = (
    "- [Testing](testing.md) — how we run tests\n"
    "- [Pytest notes](pytest-notes.md) — more about pytest\n"
    "- [Deploy](deploy.md) — how releases go out\n"
    "- [Style](team/style.md) — team code style\n"
)
TESTING = "---\nname: testing\ndescription: how tests run\ntype: project\n---\nRun `pytest -q` from the repo root.\n"
PYTEST_NOTES = "---\nname: pytest-notes\ndescription: pytest\ntype: project\n---\nUse `-n auto` for xdist.\n"
DEPLOY = "---\nname: deploy\ndescription: releases\ntype: project\n---\nTag, then push; CI publishes.\n"
TEAM = "---\nname: style\ndescription: team style\ntype: feedback\n---\nBlack, 100 columns.\n"


@dataclass
class Catalog:
    session_id: str
    date: date
    title: str
    size: int
    rel: str = ""


def make_store(root: Path) -> tuple[Path, Path]:
    """A staging copy and a live store with logs (the logs only to prove they keep their bytes)."""
    staging = root / "staging"
    (staging / "team").mkdir(parents=True)
    (staging / "MEMORY.md").write_text(INDEX)
    (staging / "testing.md").write_text(TESTING)
    (staging / "pytest-notes.md").write_text(PYTEST_NOTES)
    (staging / "deploy.md").write_text(DEPLOY)
    (staging / "team" / "style.md").write_text(TEAM)
    store = root / "store"
    log = store / "logs" / "2025" / "03" / "02" / "s1-tests.md"
    log.parent.mkdir(parents=True)
    log.write_text("> how do we run tests?\n< pytest -q, and -n auto for speed\n")
    return staging, store


def sessions_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "session": ["s1", "s1", "s2"],
            "date": [date(2025, 3, 2)] * 3,
            "seq": [1, 2, 1],
            "role": ["user", "assistant", "user"],
            "text": ["how do we run tests?", "pytest -q, and -n auto for speed", "deploy on fridays? no."],
        }
    )


def engine_input(root: Path, **settings: object) -> EngineInput:
    staging, store = make_store(root)
    return EngineInput(
        store_root=store,
        staging=Staging(staging),
        sessions=sessions_frame(),
        catalog=[Catalog("s1", date(2025, 3, 2), "tests", 60), Catalog("s2", date(2025, 3, 2), "deploy", 30)],
        settings=Settings(**settings),
        today=date(2025, 3, 3),
    )


MERGED_TESTING = TESTING.replace(
    "Run `pytest -q` from the repo root.\n",
    "Run `pytest -q` from the repo root; add `-n auto` (xdist) for speed.\n",
)
NEW_INDEX = (
    "- [Testing](testing.md) — how we run tests: pytest -q, -n auto\n"
    "- [Deploy](deploy.md) — how releases go out\n"
    "- [Style](team/style.md) — team code style\n"
)
SUMMARY = (
    "- merged pytest-notes.md into testing.md: both described running pytest\n"
    "- updated testing.md: added the xdist flag from session s1\n"
    "- pruned MEMORY.md: dropped the pointer to pytest-notes.md and sharpened the testing hook"
)


def four_phase_script() -> list[Reply]:
    return [
        # Orient
        Reply([text("Orienting."), memory("view", path="/memories")]),
        Reply([memory("view", path="/memories/MEMORY.md"), memory("view", path="/memories/testing.md"),
               memory("view", path="/memories/pytest-notes.md")]),
        # Gather
        Reply([tool_use("list_sessions")]),
        Reply([tool_use("read_session", session_id="s1", start=1, count=50),
               tool_use("search_logs", pattern="pytest|xdist")]),
        # Consolidate
        Reply([memory("str_replace", path="/memories/testing.md",
                      old_str="Run `pytest -q` from the repo root.\n",
                      new_str="Run `pytest -q` from the repo root; add `-n auto` (xdist) for speed.\n"),
               memory("delete", path="/memories/pytest-notes.md")]),
        # Prune
        Reply([memory("str_replace", path="/memories/MEMORY.md", old_str=INDEX, new_str=NEW_INDEX)]),
        Reply([text(SUMMARY)]),
    ]
