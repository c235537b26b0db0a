"""Activity logs derived from agents' own session transcripts.

Claude Code and Codex write JSONL transcripts, not activity logs. This
package reads both formats (`claude_code`, `codex`), writes one log per
session into a store (`importer`), finds stores on a machine (`discover`)
and searches raw transcripts narrowly (`search`).
"""

from .discover import discover_stores
from .importer import ImportResult, import_configured, import_transcripts
from .search import search_transcripts

__all__ = [
    "ImportResult",
    "discover_stores",
    "import_configured",
    "import_transcripts",
    "search_transcripts",
]
