"""Output for people (Rich) and for scripts (one JSON object on stdout)."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=str, ensure_ascii=False) + "\n")


def error_line(message: str) -> None:
    # One line, no markup interpretation: messages quote user paths verbatim.
    sys.stderr.write(f"dream: error: {' '.join(str(message).split())}\n")


def when(epoch: float | None) -> str:
    if epoch is None:
        return "never"
    return datetime.fromtimestamp(epoch, tz=timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M")


def words(value: str) -> str:
    """A status or reason word for people: `rolled_back` reads `rolled back`, `no_signal` `no signal`."""
    return str(value).replace("_", " ")


def short_paths(paths: list) -> list[str]:
    """Paths as people tell them apart: relative to their common folder when there are several.

    Claude Code's stores all end in `.../<project>/memory`; cutting a long
    path on the right leaves only the part they share, so it is the shared
    beginning that goes.
    """
    texts = [str(p) for p in paths]
    common = common_root(texts)
    if common is None:
        return texts
    return [os.path.relpath(t, common) if t != common else os.path.basename(t) for t in texts]


def common_root(paths: list) -> str | None:
    """The folder `short_paths` made the paths relative to, if it did."""
    texts = [str(p) for p in paths]
    if len(texts) < 2:
        return None
    common = os.path.commonpath(texts)
    return None if common in ("", os.sep) else common


def table(title: str, columns: list[str], rows: list[list[Any]]) -> Table:
    t = Table(title=title, title_justify="left")
    for c in columns:
        t.add_column(c)
    for r in rows:
        # Text, not markup: cells hold paths and comments that may contain "[/…]".
        t.add_row(*[Text("" if v is None else str(v)) for v in r])
    return t


def print_diff(diff: str, console: Console | None = None) -> None:
    console = console or out
    if not diff:
        console.print("(no differences)")
        return
    if not console.is_terminal:
        console.file.write(diff)
        return
    for line in diff.splitlines():
        style = None
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        console.print(line, style=style, markup=False, soft_wrap=True)
