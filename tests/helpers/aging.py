"""Versions made long ago: gc keeps every version of the last 90 days, so its tests age the records."""

from __future__ import annotations

import json
import time

from dream.store.layout import Layout
from dream.versions.manifests import Versions

DAY = 86_400.0


def backdate(layout: Layout, days: float, numbers: list[int] | None = None) -> None:
    """Make versions (every one by default) look `days` days older than now, each a second after the one before."""
    versions = Versions(layout)
    chosen = versions.numbers() if numbers is None else numbers
    start = time.time() - days * DAY
    for i, number in enumerate(chosen):
        path = layout.versions / f"{number:06d}.json"
        record = json.loads(path.read_text())
        record["created_at"] = start + i
        path.write_text(json.dumps(record))
