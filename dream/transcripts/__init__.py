"""Activity logs derived from agents' own session transcripts.

Claude Code and Codex write JSONL transcripts, not activity logs. This
package reads both formats (`claude_code`, `codex`), writes one log per
session into a store (`importer`, which renders logs with `render` and
shares a large import with a forked `helper`), finds stores on a machine
(`discover`) and searches raw transcripts narrowly (`search`).

The names below load on first use, so that importing one reader does not
load the importer's dependencies (pydantic, filelock, polars).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discover import discover_stores
    from .importer import ImportResult, import_configured, import_transcripts
    from .search import search_transcripts

_EXPORTS = {
    "ImportResult": "importer",
    "discover_stores": "discover",
    "import_configured": "importer",
    "import_transcripts": "importer",
    "search_transcripts": "search",
}

__all__ = ["ImportResult", "discover_stores", "import_configured", "import_transcripts", "search_transcripts"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
