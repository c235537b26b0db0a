"""The checks an eval case can expect, each a plain function of the outcome.

A check returns None when it holds, else one line saying what was found.
A failure is either a *wrong change* (`Wrong`: a memory created, rewritten
or removed when it should not have been) or a *miss* (the change the case
asks for was not made): precision is scored apart from recall.
Text comparisons ignore case. "Live" files are the memory files an agent
reads (everything but ``archive.md``); the archive only keeps history.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from dream.eval.said import quoted_entries
from dream.store.model import parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, is_archive

ARCHIVES = ("archive.md", "dream_archive.md")


def _archive(path: str) -> bool:
    """The engine's archive, its fallback name, or a dated file it rolled over into."""
    return posixpath.basename(path) in ARCHIVES or is_archive(path)

# A line may name an old value only as history: struck through, or "was X until …".
_HISTORY = re.compile(
    r"~~|\buntil\b|\bwas\b|\bformerly\b|\bpreviously\b|\bbis\b|\bhasta\b|\baté\b|までは|之前|이전", re.I)
_SLUG = re.compile(r"^[a-z0-9.]+(?:[_-][a-z0-9.]+)+$|\.md$")  # lower case joined by _ or -, or a file name


class Wrong(str):
    """A failure that is a wrong change, not a miss."""


@dataclass
class Outcome:
    """What a case left behind: the store before and after, and every run's result."""

    before: dict[str, str]
    after: dict[str, str]
    statuses: list[str] = field(default_factory=list)
    reports: list[dict] = field(default_factory=list)  # one per proposal made
    artefacts: str = ""  # every proposal's report and diff, for secrets
    errors: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)  # every run's "needs a person" items
    said: list[str] = field(default_factory=list)  # the users' entries in every session the runs read
    evidence: set[str] = field(default_factory=set)  # the agent's evidence files (Codex's rollout summaries)

    def memories(self, files: dict[str, str]) -> dict[str, str]:
        """`files` without the evidence: what a session said is not what the store remembers."""
        return {p: t for p, t in files.items() if p not in self.evidence}

    def live(self) -> dict[str, str]:
        return {p: t for p, t in self.memories(self.after).items() if not _archive(p)}

    def index(self) -> str:
        return self.after.get(INDEX_NAME, "")

    def changed(self) -> list[str]:
        """Memory files created, rewritten or removed by the case's runs and decisions."""
        return sorted(p for p in set(self.before) | set(self.after) if self.before.get(p) != self.after.get(p))

    def quoted(self) -> list[bool]:
        """For each of the users' entries, whether a "needs a person" item quotes it."""
        return quoted_entries(self.said, self.needs)

    def names(self, files: set[str]) -> bool:
        """Whether one "needs a person" item names every one of `files` (a housekeeping case has no user
        line to quote: its request is the files it expected changed)."""
        return bool(files) and any(all(f in need for f in files) for need in self.needs)

    def actions(self) -> list[str]:
        """What the dream did, as "kind action" per change ("request forgotten", "housekeeping dated")."""
        return [f"{c.get('kind') or 'change'} {c.get('action')}" for r in self.reports for c in r.get("changes", [])]

    def notes(self) -> str:
        """What the runs asked a person to look at (a run that changed nothing asks too)."""
        return "\n".join(self.needs)


def _has(text: str, needle: str) -> bool:
    """Case and line breaks aside: a wrapped line still says what it said."""
    return " ".join(needle.lower().split()) in " ".join(text.lower().split())


def gone(o: Outcome, path: str) -> str | None:
    return f"{path} is still in the store" if path in o.after else None


def exists(o: Outcome, path: str) -> str | None:
    return None if path in o.after else Wrong(f"{path} is not in the store")


def unchanged(o: Outcome, path: str) -> str | None:
    if o.after.get(path) != o.before.get(path):
        return Wrong(f"{path} changed")
    return None


def no_changes(o: Outcome, _: Any = True) -> str | None:
    """The dream changed no memory file at all (chatter, questions, instructions for a task)."""
    changed = o.changed()
    return Wrong(f"{len(changed)} file(s) changed: {', '.join(changed[:6])}") if changed else None


def contains(o: Outcome, arg: dict) -> str | None:
    text = o.after.get(arg["file"])
    if text is None:
        return f"{arg['file']} is not in the store"
    return None if _has(text, arg["text"]) else f"{arg['file']} does not say {arg['text']!r}"


def lacks(o: Outcome, arg: dict) -> str | None:
    text = o.after.get(arg["file"], "")
    return f"{arg['file']} still says {arg['text']!r}" if _has(text, arg["text"]) else None


def index_has(o: Outcome, text: str) -> str | None:
    return None if _has(o.index(), text) else f"{INDEX_NAME} does not say {text!r}"


def index_lacks(o: Outcome, text: str) -> str | None:
    return f"{INDEX_NAME} still says {text!r}" if _has(o.index(), text) else None


def anywhere(o: Outcome, text: str) -> str | None:
    """A fact is kept: some memory file (the archive counts) says it.

    Losing a fact the store held is a wrong change; a fact only a session
    said, never saved, is a miss (nothing was removed).
    """
    if any(_has(t, text) for t in o.memories(o.after).values()):
        return None
    if any(_has(t, text) for t in o.memories(o.before).values()):
        return Wrong(f"no memory file says {text!r} any more")
    return f"no memory file says {text!r}"


def live_lacks(o: Outcome, text: str) -> str | None:
    where = [p for p, t in o.live().items() if _has(t, text)]
    return f"{', '.join(where)} still say(s) {text!r}" if where else None


def nowhere(o: Outcome, text: str) -> str | None:
    """Not in any memory file, report or diff (secrets)."""
    where = [p for p, t in o.memories(o.after).items() if _has(t, text)]
    if _has(o.artefacts, text):
        where.append("a proposal's report or diff")
    return Wrong(f"{text!r} found in {', '.join(where)}") if where else None


def not_current(o: Outcome, text: str) -> str | None:
    """Every live line naming the old value marks it as history."""
    for path, body in sorted(o.live().items()):
        for line in body.splitlines():
            if _has(line, text) and not _HISTORY.search(line):
                return f"{path} still states {text!r} as current: {line.strip()[:100]!r}"
    return None


def new_files(o: Outcome, count: int) -> str | None:
    added = sorted(p for p in o.after if p not in o.before and not _archive(p))
    if len(added) != count:
        found = f"{len(added)} new memory file(s), expected {count}: {', '.join(added) or 'none'}"
        return Wrong(found) if len(added) > count else found
    return None


def new_name_max(o: Outcome, limit: int) -> str | None:
    """New files have short names (characters of the file name, without .md)."""
    added = [p for p in o.after if p not in o.before and not _archive(p)]
    long = [p for p in added if len(posixpath.basename(p)[:-3]) > limit]
    return f"new file name(s) over {limit} characters: {', '.join(long)}" if long else None


def new_lacks(o: Outcome, text: str) -> str | None:
    """No new memory file says `text` (e.g. first-person words such as "I prefer")."""
    added = [p for p in o.after if p not in o.before and not _archive(p)]
    where = [p for p in added if re.search(rf"(?<!\w){re.escape(text)}(?!\w)", o.after[p], re.I)]
    return Wrong(f"new file(s) {', '.join(where)} say {text!r}") if where else None


def new_has(o: Outcome, text: str) -> str | None:
    added = [p for p in o.after if p not in o.before and not _archive(p)]
    return None if any(_has(o.after[p], text) for p in added) else f"no new memory file says {text!r}"


def lines_within(o: Outcome, limit: int) -> str | None:
    """Index lines fit, and a shortened one is cut between words."""
    for line in o.index().splitlines():
        if len(line) > limit:
            return f"{INDEX_NAME} line of {len(line)} characters: {line[:60]!r}…"
        cut = re.search(r"(\w+)…", line)
        if cut and not any(re.search(rf"\b{re.escape(cut.group(1))}\b", t) for t in o.after.values()
                           if "…" not in t or t.count(cut.group(1)) > 1):
            return f"{INDEX_NAME} line cut inside a word: {line[-40:]!r}"
    return None


def pointers_ok(o: Outcome, _: Any = True) -> str | None:
    """Every link in the index, prose lines too, points to a file that exists."""
    for line in o.index().splitlines():
        for target in parse_index_line(line).links:
            resolved = resolve_link(INDEX_NAME, target)
            if resolved and resolved.endswith(".md") and resolved not in o.after:
                return f"{INDEX_NAME} links missing {target}: {line.strip()[:80]!r}"
    return None


def titles_clean(o: Outcome, _: Any = True) -> str | None:
    """No index title is a file slug such as `feedback-use-lang-keys`."""
    for line in o.index().splitlines():
        parsed = parse_index_line(line)
        if parsed.kind == "link" and _SLUG.match(parsed.title.strip()):
            return f"slug title [{parsed.title}] in {INDEX_NAME}"
    return None


def before_in_index(o: Outcome, arg: list) -> str | None:
    """The first text appears in the index above the second (e.g. a new line above the footer)."""
    first, second = (str(a).lower() for a in arg)
    index = o.index().lower()
    a, b = index.find(first), index.rfind(second)
    if a < 0 or b < 0:
        return f"{INDEX_NAME} lacks {first if a < 0 else second!r}"
    return None if a < b else f"{first!r} is not above {second!r} in {INDEX_NAME}"


def index_ends_with(o: Outcome, text: str) -> str | None:
    lines = [line for line in o.index().splitlines() if line.strip()]
    if lines and _has(lines[-1], text):
        return None
    return f"{INDEX_NAME} ends with {lines[-1][:60] if lines else ''!r}, not {text!r}"


def needs_person(o: Outcome, text: str) -> str | None:
    return None if _has(o.notes(), text) else f"the report does not ask a person about {text!r}"


def not_asked(o: Outcome, text: str) -> str | None:
    """The report does not ask a person about `text` (e.g. "no memory matches" beside a removal)."""
    return f"the report asks a person about {text!r}" if _has(o.notes(), text) else None


def status(o: Outcome, wanted: str) -> str | None:
    got = o.statuses[-1] if o.statuses else "none"
    return None if got == wanted else f"last run was {got}, expected {wanted}"


def last_changes(o: Outcome, count: int) -> str | None:
    """How many files the last run proposed to change (0: nothing left to do)."""
    got = len(o.reports[-1]["files_changed"]) if o.statuses and o.statuses[-1] == "proposed" else 0
    if got == count:
        return None
    found = f"last run changed {got} file(s), expected {count}"
    return Wrong(found) if got > count else found


def one_left(o: Outcome, paths: list) -> str | None:
    """Of duplicates, exactly one file is left."""
    left = [p for p in paths if p in o.after]
    if len(left) == 1:
        return None
    found = f"{len(left)} of {', '.join(paths)} left, expected 1"
    return Wrong(found) if not left else found


def line_count(o: Outcome, arg: dict) -> str | None:
    """How many index lines say a text (a duplicate rule kept once)."""
    got = sum(_has(line, arg["text"]) for line in o.index().splitlines())
    return None if got == arg["count"] else f"{got} index line(s) say {arg['text']!r}, expected {arg['count']}"


def no_new_under(o: Outcome, folder: str) -> str | None:
    added = [p for p in o.after if p not in o.before and p.startswith(folder)]
    return Wrong(f"new file(s) under {folder}: {', '.join(added)}") if added else None


def no_errors(o: Outcome, _: Any = True) -> str | None:
    return o.errors[0] if o.errors else None


CHECKS: dict[str, Callable[[Outcome, Any], str | None]] = {
    f.__name__: f for f in (
        gone, exists, unchanged, no_changes, contains, lacks, index_has, index_lacks, anywhere, live_lacks, nowhere,
        not_current, new_files, new_name_max, new_lacks, new_has, lines_within, pointers_ok, titles_clean,
        before_in_index, index_ends_with, needs_person, not_asked, status, last_changes, one_left, line_count, no_new_under,
        no_errors,
    )
}


def expected_changed(expect: list[dict[str, Any]]) -> set[str]:
    """The files a case's checks expect changed: removed, merged or rewritten."""
    files: set[str] = set()
    for check in expect:
        name, arg = next(iter(check.items()))
        if name == "gone":
            files.add(arg)
        elif name == "one_left":
            files.update(arg)
        elif name in ("contains", "lacks"):
            files.add(arg["file"])
    return files


def run_checks(outcome: Outcome, expect: list[dict[str, Any]]) -> list[str]:
    """Failures of the case's checks, plus any error a step met; wrong changes are `Wrong`."""
    failures: list[str] = list(outcome.errors)
    for check in expect:
        name, arg = next(iter(check.items()))
        problem = CHECKS[name](outcome, arg)
        if problem:
            line = f"{name}: {problem}"
            failures.append(Wrong(line) if isinstance(problem, Wrong) else line)
    return failures
