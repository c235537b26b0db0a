"""The offline engine run on a tree and session rows, for the engine's tests."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.store.staging import Staging
from dream.engines.offline import OfflineEngine
from dream.store.tree import materialize, read_tree

TODAY = date(2026, 3, 10)


def topic(name: str, description: str, type_: str, body: str, **extra: str) -> bytes:
    keys = "".join(f"{k}: {v}\n" for k, v in extra.items())
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n{keys}---\n\n{body}\n".encode()


def indexed(*topics: tuple[str, str, str, str, str]) -> dict[str, bytes]:
    """A store of (file, name, description, type, body) topics, each with its index line."""
    index = "".join(f"- [{name}]({file}) — {description}\n" for file, name, description, _, _ in topics)
    return {"MEMORY.md": index.encode(),
            **{file: topic(name, description, type_, body) for file, name, description, type_, body in topics}}


def sessions(*rows: tuple[str, date, str, str]) -> pl.DataFrame:
    data = {"session": [], "date": [], "seq": [], "role": [], "text": []}
    for seq, (session, day, role, text) in enumerate(rows):
        for key, value in zip(data, (session, day, seq, role, text)):
            data[key].append(value)
    return pl.DataFrame(data, schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64,
                                      "role": pl.Utf8, "text": pl.Utf8})


def run(tmp_path: Path, tree: dict[str, bytes], rows: pl.DataFrame | None = None):
    staging = tmp_path / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    materialize(tree, staging)
    inp = EngineInput(tmp_path, Staging(staging), rows if rows is not None else sessions(), [],
                      Settings(), TODAY)
    result = OfflineEngine().consolidate(inp)
    return read_tree(staging), result
