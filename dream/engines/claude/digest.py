"""What the first message tells the agent before it calls a tool.

- A digest per session: id, date, number of entries, and the user's own
  lines (each cut at `USER_LINE_CHARS`, at most `USER_CHARS` a session), with
  the explicit requests the offline engine's Gather finds in them. The agent
  can then read only the sessions that matter, and a session it does read is
  not news to it.
- What changed in the memory files since the last dream: a compact diff
  from the version the last accepted dream left to tonight's base, so an
  edit a person made in between is seen, and respected, without re-reading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from dream.engines.claude.log_tools import session_title
from dream.engines.offline.requests import gather_requests
from dream.errors import BadInput
from dream.store.layout import Layout
from dream.store.tree import Tree
from dream.versions.diffing import tree_diff
from dream.versions.manifests import Versions

USER_LINE_CHARS = 200
USER_CHARS = 2_000
MAX_DIFF_CHARS = 6_000


@dataclass
class SessionDigest:
    id: str
    date: str
    slug: str
    entries: int
    user_lines: list[str] = field(default_factory=list)
    more_user_lines: int = 0
    requests: list[str] = field(default_factory=list)


def session_digests(sessions: pl.DataFrame, catalog: list[Any]) -> list[SessionDigest]:
    """One digest per session, in date order."""
    if sessions.is_empty():
        return []
    slugs = {str(getattr(s, "session_id", "")): session_title(s) for s in catalog}
    requests: dict[str, list[str]] = {}
    for req in gather_requests(sessions):
        requests.setdefault(req.session, []).append(f"{req.kind}: {req.text}")
    ordered = sessions.sort([c for c in ("date", "session", "seq") if c in sessions.columns])
    digests = []
    for (sid,), frame in ordered.group_by("session", maintain_order=True):
        digest = SessionDigest(str(sid), str(frame["date"][0]), slugs.get(str(sid), ""), frame.height,
                               requests=requests.get(str(sid), []))
        _add_user_lines(digest, [t or "" for t in frame.filter(pl.col("role") == "user")["text"]])
        digests.append(digest)
    return digests


def _add_user_lines(digest: SessionDigest, lines: list[str]) -> None:
    used = 0
    for i, line in enumerate(lines):
        flat = " ".join(line.split())
        cut = flat if len(flat) <= USER_LINE_CHARS else flat[:USER_LINE_CHARS] + "…"
        if used + len(cut) > USER_CHARS and digest.user_lines:
            digest.more_user_lines = len(lines) - i
            return
        digest.user_lines.append(cut)
        used += len(cut)


def since_last_dream(store_root: Path, base: Tree, hide: Callable[[str], str]) -> str | None:
    """The diff from the last accepted dream's version to `base`; None when no dream was accepted yet.

    `hide` takes the secrets out of the diff before it is cut, so a cut never leaves half a secret unseen.
    """
    try:
        versions = Versions(Layout.open(store_root))
        last = next((n for n in reversed(versions.numbers()) if versions.get(n).source == "accept"), None)
        if last is None:
            return None
        diff = tree_diff(versions.tree(last), base)
    except (BadInput, OSError):
        return None  # no readable history: the agent works without the diff
    diff = hide(diff)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n[… {len(diff) - MAX_DIFF_CHARS} more characters of diff; view the files]\n"
    return diff
