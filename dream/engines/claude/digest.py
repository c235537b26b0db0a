"""What the first message tells the agent before it calls a tool.

- The sessions within the first message's room for them (`budget.Room`),
  oldest first; the sessions past it wait for the next part of the dream
  (`SessionPart.deferred`), each part a complete proposal.
- Of these, every session in full, as its log shows it, while they fit in the
  room and the `first_message_session_chars` setting together (smallest first): one cached message
  that every turn reads at a tenth of the price, where reading the same text
  through `read_session` costs the same cache write plus a turn of thinking
  for every few calls (bench/bench_claude_context.py).
- For the sessions that do not fit, a digest: id, date, number of entries,
  and the user's own lines (each cut at `USER_LINE_CHARS`, at most
  `USER_CHARS` a session). The agent can then read only the sessions that
  matter, and a session it does read is not news to it.
- For both, the explicit requests the offline engine's Gather finds in them.
- What changed in the memory files since the last dream: a compact diff
  from the version the last accepted dream left to tonight's base, so an
  edit a person made in between is seen, and respected, without re-reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from dream.engines.claude import tokens
from dream.engines.claude.log_tools import session_title, shown_text
from dream.engines.offline.requests import gather_requests
from dream.errors import BadInput
from dream.store.layout import Layout
from dream.transcripts.common import PREFIX
from dream.transcripts.render import format_entry
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
    full: list[str] = field(default_factory=list)  # every entry as the log shows it, when shown in full

    @property
    def fence(self) -> str:
        """A code fence longer than any run of backticks in the session, so that its text cannot close it."""
        runs = [len(run) for line in self.full for run in re.findall(r"`+", line)]
        return "`" * max(4, max(runs, default=0) + 1)


@dataclass
class SessionPart:
    """The sessions of tonight's first message, and those that wait for the next part of the dream."""

    digests: list[SessionDigest]
    deferred: list[str]  # session ids, oldest first, past the room of this part


def session_digests(sessions: pl.DataFrame, catalog: list[Any], room: int = 1 << 40,
                    full_chars: int = 0, most: int | None = None) -> SessionPart:
    """One digest per session, in date order, within `room` tokens (`tokens.estimate`) together.

    The oldest sessions come first, and each takes its digest; those past the
    room, or past the `most` oldest when given, wait for the next part (never
    fewer than one session a part). Then
    the smallest sessions are shown in full instead, while the room and
    `full_chars` characters together allow.
    """
    if sessions.is_empty():
        return SessionPart([], [])
    slugs = {str(getattr(s, "session_id", "")): session_title(s) for s in catalog}
    requests: dict[str, list[str]] = {}
    for req in gather_requests(sessions):
        requests.setdefault(req.session, []).append(f"{req.kind}: {req.text}")
    ordered = sessions.sort([c for c in ("date", "session", "seq") if c in sessions.columns])
    digests: list[SessionDigest] = []
    logs: list[tuple[SessionDigest, list[str], int]] = []
    deferred: list[str] = []
    used = 0
    for (sid,), frame in ordered.group_by("session", maintain_order=True):
        if deferred:
            deferred.append(str(sid))
            continue
        digest = SessionDigest(str(sid), str(frame["date"][0]), slugs.get(str(sid), ""), frame.height,
                               requests=requests.get(str(sid), []))
        _add_user_lines(digest, [t or "" for t in frame.filter(pl.col("role") == "user")["text"]])
        cost = _digest_tokens(digest)
        if digests and (used + cost > room or len(digests) == most):
            deferred.append(str(sid))
            continue
        used += cost
        digests.append(digest)
        logs.append((digest, log_lines(frame, digest.date), cost))
    _show_in_full(logs, room - used, full_chars)
    return SessionPart(digests, deferred)


def _show_in_full(logs: list[tuple[SessionDigest, list[str], int]], room: int, chars: int) -> None:
    """The smallest sessions in full instead of their digests, within `room` tokens more and `chars` characters."""
    for digest, lines, cost in sorted(logs, key=lambda item: _size(item[1])):
        extra = tokens.estimate("\n".join(lines)) - cost
        if _size(lines) <= chars and extra <= room:
            digest.full, digest.user_lines, digest.more_user_lines = lines, [], 0
            room, chars = room - extra, chars - _size(lines)


def _digest_tokens(digest: SessionDigest) -> int:
    """A digest's tokens as the first message shows it: its heading, the user's lines, the requests."""
    heading = f"### `{digest.id}` — {digest.date} — {digest.slug} — {digest.entries} entries"
    return tokens.estimate("\n".join([heading, *(f"- {digest.date} user: {line}" for line in digest.user_lines),
                                       *(f"- request ({r})" for r in digest.requests)])) + 8


def log_lines(frame: pl.DataFrame, day: str) -> list[str]:
    """A session's entries as its log shows them (`> ` the user, `< ` the assistant, `. ` a tool), each cut as
    `read_session` cuts it; an entry of another day than the session's says its date."""
    lines = []
    for row in frame.iter_rows(named=True):
        dated = "" if str(row.get("date")) == day else f"({row.get('date')}) "
        lines.append(format_entry(PREFIX.get(str(row.get("role")), f"[{row.get('role')}] "), dated + shown_text(row.get("text"))))
    return lines


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


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
