"""Consolidate: merge duplicates, make dates absolute, file requests, forget.

Every edit goes through the `Workspace` so it lands in the report. Nothing a
user wrote is dropped silently: a merged duplicate's lines that the survivor
lacks are appended to the survivor, and index lines that cannot stay are
moved to the archive file (see prune.py), not deleted.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Callable

import polars as pl

from dream.engines.offline import corrections, dates, notice, polarity
from dream.engines.offline.archive import archive_lines
from dream.engines.offline.catalog import Catalog, Entry
from dream.engines.offline.kinds import ChangeAction, RequestKind
from dream.engines.offline.orient import (
    Memory,
    Workspace,
    editable,
    ensure_frontmatter,
    memories,
    scope_of,
)
from dream.engines.offline.placement import reads_as_title, title_of
from dream.engines.offline.requests import Request
from dream.engines.offline.similarity import (
    described_pairs,
    group_pairs,
    meta_tokens,
    names_a_fact,
    has_digit,
    normalize,
    numbers_in,
    similar_pairs,
    stems_in_order,
    subset_pairs,
)
from dream.engines.offline.text import (MAX_LINE, fit_line, only_a_secret, short_slug, short_title, shorten,
                                        third_person)
from dream.store.model import (
    DATE_KEYS,
    TopicFile,
    new_topic_text,
    parse_index_line,
    resolve_link,
)
from dream.store.layouts import named
from dream.store.tree import INDEX_NAME

REMEMBERED_HEADING = "## Remembered on request"  # where a Codex handbook gets what the user asked to remember

# ---------------------------------------------------------------- duplicates

CONTRADICTION_MIN = 75.0  # alike enough (rapidfuzz ratio) for two opposite rules to be one rule negated


def merge_duplicates(ws: Workspace, sessions: pl.DataFrame | None = None) -> None:
    """Merge near-duplicate topic files, and near-duplicate inline rules.

    Alike texts are near-duplicates; personal topic files are also compared
    by name, description and body, which finds the same rule said in other
    words. Opposite pairs are never merged: a person is asked. Team memories
    only merge when identical (after normalization): other people rely on
    them, so we stay conservative there. Index lines are parsed once and
    rewritten in one pass at the end, so the cost stays linear in the size
    of the index however many merges there are. A memory the night's user
    lines name is what a request is about, answered or not: it is not merged.
    """
    found = memories(ws.store)
    talked_about = _named_in_sessions(ws, found, sessions)
    threshold = ws.settings.similarity_threshold
    pointers = _IndexPointers(ws)
    for kind, scope, limit in (("topic", "personal", threshold), ("rule", "personal", threshold),
                               ("topic", "team", 100.0)):
        pool = [m for m in found if m.kind == kind and m.scope == scope]
        if len(pool) < 2:
            continue
        # Opposites are looked for a little below the threshold: "Never X" and "Always X" differ by a word.
        alike = similar_pairs([m.text for m in pool], min(limit, CONTRADICTION_MIN))
        kept = _without_opposites(ws, pool, alike)
        pairs = [(i, j, score) for i, j, score in kept if score >= limit]
        if kind == "topic" and scope == "personal":
            # a pair already merging, or already asked about as opposites, is not looked at again
            settled = {(i, j) for i, j, _ in alike} - {(i, j) for i, j, score in kept if score < limit}
            described = [p for p in _described_pairs(ws, pool, pointers) if (p[0], p[1]) not in settled]
            described = _without_opposites(ws, pool, described, lambda m: _statement(ws, m))
            pairs = sorted(pairs + described, key=lambda p: (p[1], p[0]))
        pairs = _without_look_alikes(ws, pool, pairs)
        pairs = _without_talked_about(ws, pool, pairs, talked_about)
        best: dict[int, float] = {}
        for _, j, score in pairs:
            best[j] = max(best.get(j, 0.0), score)
        for group in group_pairs(len(pool), pairs):
            survivor = pool[group[0]]
            for other in group[1:]:
                if kind == "topic":
                    _merge_topics(ws, pointers, survivor.key, pool[other].key, best.get(other, limit))
                else:
                    _merge_rules(ws, survivor, pool[other], best.get(other, limit))
    pointers.apply()


def _without_opposites(ws: Workspace, pool: list[Memory], pairs: list[tuple[int, int, float]],
                       said: Callable[[Memory], str] | None = None) -> list[tuple[int, int, float]]:
    """Alike pairs that say opposite things are a contradiction for a person, never merged.

    Alike texts are compared whole; memories alike by what they say they are (`said`, e.g. their
    descriptions) are compared by that: their bodies differ, and a "never" in one's details is no
    contradiction of the other.
    """
    said = said or (lambda m: m.text)
    kept = []
    for i, j, score in pairs:
        a, b = pool[i], pool[j]
        if polarity.opposite(said(a), said(b)):
            ws.ask(f"{a.label} and {b.label} contradict each other ({score:.0f}% alike): "
                   f"“{shorten(a.text, 80)}” / “{shorten(b.text, 80)}”; both kept, a person decides")
        else:
            kept.append((i, j, score))
    return kept


def _without_look_alikes(ws: Workspace, pool: list[Memory], pairs: list[tuple[int, int, float]]
                         ) -> list[tuple[int, int, float]]:
    """Alike pairs that each state a number the other lacks are two facts, never merged.

    Notes written from one template ("service 3 retries 5 times", "service 4
    retries 8 times") are nearly the same string, yet merging them would make
    one memory that states both values. A pair where only one side has extra
    numbers (a longer checklist, a date added) can still be a duplicate. Two
    memories with the same name but other numbers may be one stale fact: a
    person is told, and both are kept.
    """
    kept = []
    for i, j, score in pairs:
        ours, theirs = numbers_in(pool[i].text), numbers_in(pool[j].text)
        if ours - theirs and theirs - ours:
            if _same_name(ws, pool[i], pool[j]):
                ws.ask(f"{pool[i].label} and {pool[j].label} are {score:.0f}% alike but state other numbers: "
                       f"“{shorten(pool[i].text, 80)}” / “{shorten(pool[j].text, 80)}”; both kept, a person decides")
            continue
        kept.append((i, j, score))
    return kept


def _name_of(ws: Workspace, memory: Memory) -> str:
    topic = ws.store.topics.get(memory.key) if memory.kind == "topic" else None
    return title_of(topic) if topic is not None else memory.text


def _named_in_sessions(ws: Workspace, found: list[Memory], sessions: pl.DataFrame | None) -> set[str]:
    """Keys of the memories a user line that noticing reads names: all the words of the name (by stem, four
    letters or a number), two at least, or one beside a memory word. "forget the deploy checklist", split over
    lines or not, is about `Deploy checklist`."""
    if sessions is None or sessions.height == 0:
        return set()
    users = notice.noticed_lines(sessions)  # most of a night's user lines hold no memory or change word
    lines_with: dict[str, set[int]] = {}
    for n, text in enumerate(users):
        for word in stems_in_order(text):
            lines_with.setdefault(word, set()).add(n)
    named = set()
    for memory in found:
        words = {w for w in stems_in_order(_name_of(ws, memory)) if len(w) >= 4 or has_digit(w)}
        lines = set[int].intersection(*(lines_with.get(w, set()) for w in words)) if words else set()
        # one word ("Run tests": "test") is said in passing all night: it names a memory beside a memory word
        if len(words) >= 2 and lines or any(notice.says_memory_word(users[n]) for n in lines):
            named.add(memory.key)
    return named


def _without_talked_about(ws: Workspace, pool: list[Memory], pairs: list[tuple[int, int, float]],
                          talked_about: set[str]) -> list[tuple[int, int, float]]:
    """Alike pairs of which the night's sessions name one are kept apart: a request (a forget, a
    correction) may be about one and not the other, and a merge would answer it unasked."""
    kept = []
    for i, j, score in pairs:
        if pool[i].key in talked_about or pool[j].key in talked_about:
            ws.ask(f"{pool[i].label} and {pool[j].label} look alike (similarity {score:.0f}%), but the "
                   f"night's sessions talk about one of them: both kept, a person decides")
            continue
        kept.append((i, j, score))
    return kept


def _same_name(ws: Workspace, a: Memory, b: Memory) -> bool:
    topics = [ws.store.topics.get(m.path) if m.path else None for m in (a, b)]
    names = [normalize(title_of(t)) for t in topics if t is not None]
    return len(names) == 2 and names[0] == names[1]


def _statement(ws: Workspace, memory: Memory) -> str:
    """What a memory says it is: a topic's description, else its first line of text; a rule's text."""
    topic = ws.store.topics.get(memory.key) if memory.kind == "topic" else None
    if topic is None:
        return memory.text
    if topic.description.strip():
        return topic.description
    return next((line for line in topic.body_lines if line.strip() and not line.lstrip().startswith("#")), "")


def _described_pairs(ws: Workspace, pool: list[Memory], pointers: _IndexPointers) -> list[tuple[int, int, float]]:
    """Topic pairs alike by name and description (one's words all in the other's, both named alike),
    or saying the same in other words by name, description and body (`described_pairs`).

    In other words, only statements with as many negations are taken: "use full names" and "no
    abbreviations" may say the same, but so may not "use mocks" and "mock nothing"; a pair that
    plainly negates the other is kept for `_without_opposites` to ask about.
    """
    topics = [ws.store.topics[m.key] for m in pool]
    titles = [title_of(t) for t in topics]  # a slug name ("feedback_run_tests") as words
    metas = [meta_tokens(title, t.description) for title, t in zip(titles, topics)]
    names = [meta_tokens(title, "") for title in titles]
    found = {(i, j): score for i, j, score in subset_pairs(metas) if names[i] & names[j]}
    statements = [_statement(ws, m) for m in pool]
    docs = [("\n".join([title, *pointers.titles.get(t.path, [])]), said, t.body)
            for title, t, said in zip(titles, topics, statements)]
    declined: list[tuple[int, int, float]] = []
    for i, j, score in described_pairs(docs, declined=declined):
        a, b = statements[i], statements[j]
        if (i, j) not in found and (polarity.negations(a) == polarity.negations(b) or polarity.opposite(a, b)):
            found[(i, j)] = score
    for i, j, score in declined:
        if (i, j) not in found:  # kept apart by a word of one's name alone: a person may see one rule
            ws.ask(f"`{pool[i].key}` and `{pool[j].key}` look alike (similarity {score:.0f}%): merge?")
    return [(i, j, score) for (i, j), score in sorted(found.items(), key=lambda p: (p[0][1], p[0][0]))]


class _IndexPointers:
    """Which index lines point where, and the repointing merges ask for."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.hooks: dict[str, list[str]] = {}
        self.titles: dict[str, list[str]] = {}  # the titles index lines give a file, when they read as titles
        self.linked: set[str] = set()
        for line in ws.store.parsed_index():
            for target in line.links:
                resolved = resolve_link(INDEX_NAME, target)
                if resolved:
                    self.linked.add(resolved)
            if line.kind == "link":
                resolved = resolve_link(INDEX_NAME, line.target)
                if resolved:
                    self.hooks.setdefault(resolved, []).append(line.hook)
                    if reads_as_title(line.title):
                        self.titles.setdefault(resolved, []).append(line.title)
        self.replaced_by: dict[str, str] = {}

    def replace(self, dup: str, keep: str) -> None:
        self.replaced_by[dup] = keep

    def apply(self) -> None:
        """Drop index lines of merged files, or repoint one if the survivor had none."""
        if not self.replaced_by:
            return
        lines = self.ws.store.index_lines
        out = []
        for text in lines:
            line = parse_index_line(text)
            dup = resolve_link(INDEX_NAME, line.target) if line.kind == "link" else None
            if dup not in self.replaced_by:
                out.append(text)
                continue
            keep = self.replaced_by[dup]
            while keep in self.replaced_by:  # a survivor merged later into another
                keep = self.replaced_by[keep]
            if keep not in self.linked:
                out.append(text.replace(f"]({line.target})", f"]({keep})", 1))
                self.linked.add(keep)
        lines[:] = out


def _missing_lines(candidates: list[str], known_text: str) -> list[str]:
    """The candidate lines whose content is not already in `known_text`."""
    known = normalize(known_text)
    missing, seen = [], set()
    for line in candidates:
        norm = normalize(line)
        if norm and norm not in known and norm not in seen:
            missing.append(line)
            seen.add(norm)
    return missing


def _lines_to_carry(dup: TopicFile, hooks: list[str], survivor_text: str) -> list[str]:
    body = [line for line in dup.body_lines]
    if any(dates._FENCE.match(line) for line in body):
        # A code block cannot be carried line by line: keep it whole.
        carried = body if _missing_lines(body, survivor_text) else []
        extra = _missing_lines([dup.description] + hooks, survivor_text + "\n" + "\n".join(carried))
        return extra + carried
    return _missing_lines([dup.description] + hooks + body, survivor_text)


def _merge_topics(ws: Workspace, pointers: _IndexPointers, keep_path: str, dup_path: str,
                  score: float) -> None:
    store = ws.store
    keep, dup = store.topics.get(keep_path), store.topics.get(dup_path)
    if keep is None or dup is None:
        return
    carry = _lines_to_carry(dup, pointers.hooks.get(dup_path, []), "\n".join(keep.text.lines))
    if carry and not editable(keep):
        ws.note(f"{dup_path} looks like a duplicate of {keep_path} ({score:.0f}%), but {keep_path} "
                f"cannot be edited safely ({'; '.join(keep.format_problems)}); both kept")
        return
    if carry:
        ensure_frontmatter(ws, keep, f"lines of {dup_path} were merged into it")
        keep.append_body(carry)
    pointers.replace(dup_path, keep_path)
    store.remove(dup_path)
    detail = f"removed {dup_path}; carried over {len(carry)} line(s) it had that {keep_path} lacked"
    ws.change(ChangeAction.MERGED, keep_path, f"near-duplicate of {dup_path} (similarity {score:.0f}%)", detail,
              dup_path)


def _merge_rules(ws: Workspace, keep: Memory, dup: Memory, score: float) -> None:
    lines = ws.store.index_lines
    if dup.key not in lines:
        return
    lines.remove(dup.key)
    if normalize(dup.text) != normalize(keep.text):
        archive_lines(ws, [dup.key], f"near-duplicate of the rule “{shorten(keep.text, 60)}”")
    ws.change(ChangeAction.MERGED, INDEX_NAME, f"inline rule duplicates an earlier one (similarity {score:.0f}%)",
              f"removed: {dup.key.strip()}", INDEX_NAME)


# ---------------------------------------------------------------- dates


def absolute_dates(ws: Workspace, sessions: pl.DataFrame | None = None) -> None:
    """Rewrite relative dates in topic files that say when they were written: a date in their frontmatter, or
    the one date of the session that wrote them (`originSessionId`)."""
    for path, topic in sorted(ws.store.topics.items()):
        if path in ws.store.created or not dates.has_relative_dates(topic.text.lines):
            continue
        found = topic.source_dates() or _origin_date(topic, sessions)
        distinct = sorted(set(found.values()))
        start = topic.frontmatter.end + 1 if topic.frontmatter else 0
        why = _not_datable(path, topic, found)
        if why:
            _left_as_written(ws, path, topic.text.lines[start:], start, why)
            continue
        base = distinct[0]
        new_lines, rewrites, unresolved = dates.rewrite_lines(topic.text.lines, base, start)
        for u in unresolved:
            ws.ask(f"{path} line {u.line + 1}: “{u.phrase}”, written {base:%A} {base.isoformat()}, {u.why}: "
                   "left as written; write the date it means")
        if not rewrites:
            continue
        topic.text.lines[:] = new_lines
        topic.reparse()
        key = next(k for k, v in found.items() if v == base)
        detail = "; ".join(f"{r.phrase} → {r.absolute}" for r in rewrites)
        ws.change(ChangeAction.DATED, path, f"relative dates made absolute from its {key} date {base}", detail)


def _origin_date(topic: TopicFile, sessions: pl.DataFrame | None) -> dict[str, date]:
    """{"session ID": its date} for a memory its session names, when that session ran on one day; else {}."""
    origin = str(topic.meta("originSessionId") or "")
    if not origin or sessions is None or "session" not in sessions.columns:
        return {}
    days = set(sessions.filter(pl.col("session") == origin)["date"].to_list())
    return {f"session {origin}": days.pop()} if len(days) == 1 else {}


def _not_datable(path: str, topic: TopicFile, found: dict[str, date]) -> str:
    """Why no relative date of `topic` can be made absolute ("": they can): no one date says when it was written."""
    if scope_of(path) == "team":
        return "a team memory, edited only by its team"
    if len(set(found.values())) != 1:
        shown = ", ".join(f"{k} {v}" for k, v in found.items())
        return f"its dates disagree ({shown})" if found else f"no source date ({', '.join(DATE_KEYS)} in frontmatter)"
    return "; ".join(topic.format_problems) if not editable(topic) else ""


def _left_as_written(ws: Workspace, path: str, body: list[str], start: int, why: str) -> None:
    """Each relative date of a file no date anchors, put to a person: the file, its line and the phrase. Any day
    serves to find them (none is rewritten), and it is never said."""
    _, rewrites, unresolved = dates.rewrite_lines(body, date(2000, 1, 3))
    said = sorted({(r.line, r.phrase) for r in rewrites} | {(u.line, u.phrase) for u in unresolved})
    for line, phrase in said:
        ws.ask(f"{path} line {start + line + 1}: “{phrase}” left as written: {why}; write the date it means")
    if said:
        ws.note(f"{path}: relative dates left as they are: {why}")


# ---------------------------------------------------------------- requests


def apply_requests(ws: Workspace, requests: list[Request]) -> None:
    """Apply requests in the order they were made (a later forget wins).

    A request said twice applies once: the first saying is the one the report
    shows. A doubtful one (maybe meant, not plainly) goes to a person with the
    memory it would make. A correction changes only the one memory stating
    the old value; with none or several, a person decides and no file is made.
    The catalog of memories is built once and kept current, so each request
    costs about the same however many came before it.
    """
    if not requests:
        return
    catalog = Catalog(ws)
    seen: set[tuple[str, str]] = set()
    for request in requests:
        said = (request.kind, normalize(request.text))
        if said in seen:
            continue
        seen.add(said)
        if not request.plain:
            if request.kind in ("remember", "rule", "forget") or corrections.parse(request.text):
                ws.ask(_not_plain(request))  # a correction naming no values ("actually I'm tired") is talk
        elif request.kind == "forget":
            forget(ws, catalog, request)
        elif request.kind in ("correction", "update"):
            correct_existing(ws, catalog, request)
        elif request.kind in (RequestKind.REMEMBER, RequestKind.RULE) and only_a_secret(request.text):
            ws.ask(_secret_not_stored(request))
        elif not _filed_as_correction(ws, catalog, request):
            file_memory(ws, catalog, request)


def _not_plain(request: Request) -> str:
    said = f"“{shorten(request.sentence, 100)}” ({_where(request)})"
    if request.answers:
        return (f"{said} answers the assistant's “{shorten(request.answers, 120)}”: those words are the "
                f"assistant's, not the user's; not filed. Write the memory yourself if it is meant")
    return (f"{said} may ask to {RequestKind(request.kind).asks_to}, but its intent is not plain; not filed. "
            f"Candidate memory: “{shorten(third_person(request.text), 120)}”")


def _secret_not_stored(request: Request) -> str:
    """The note for a request whose memory would hold only a redacted secret: the words, never the secret."""
    return (f"“{shorten(request.sentence, 100)}” ({_where(request)}): a secret was asked to be remembered and was "
            "not stored; a memory would say only that it exists. Keep it in a secret manager, and write a memory "
            "saying where it is kept if one is wanted")


def _where(request: Request) -> str:
    return f"session {request.session}, {request.date.isoformat()}, line {request.seq + 1}"


def _dated_text(request: Request, ws: Workspace | None = None) -> str:
    """The request with relative dates made absolute from its session's date; those that name no one date
    left as written and asked about."""
    text, unresolved = request.text, list[dates.Unresolved]()  # the date pattern is slow and most requests hold no date
    if dates.might_have_relative_dates(text) or dates.relative_words(text):
        text, _, unresolved = dates.rewrite_line(text, request.date, said=request.sentence)
    for u in unresolved:
        if ws is not None:
            ws.ask(f"“{u.phrase}” in “{shorten(request.text, 80)}” (session {request.session}, "
                   f"{request.date:%A} {request.date.isoformat()}) {u.why}: left as written; write the date it means")
    return text


def memory_type(request: Request, text: str) -> str:
    if request.kind in ("rule", "correction"):
        return "feedback"
    if re.search(r"https?://", text):
        return "reference"
    if re.match(r"^(?:i|i'm|i am|my|i've|i have|i prefer|i like|i use)\b", text, re.I):
        return "user"
    return "project"


def file_memory(ws: Workspace, catalog: Catalog, request: Request) -> None:
    """A new memory in the third person, with a short name and title, indexed in its section."""
    store = ws.store
    if not names_a_fact(request.text):
        ws.ask(f"“{shorten(request.sentence, 100)}” ({_where(request)}) asks to remember but names no fact "
               "(“all of this”, “everything”); nothing filed. Write the memory yourself if one is meant")
        return
    text = _dated_text(request, ws)
    spoken = third_person(text)
    stated = f"The user {spoken}" if spoken != text else text
    existing = catalog.covering(stated) or (catalog.covering(text) if stated != text else None)
    if existing is not None and polarity.opposite(existing.text, text):
        ws.ask(f"“{shorten(request.sentence, 100)}” ({_where(request)}) says the opposite of "
               f"{catalog.label(existing)} (“{shorten(existing.text, 80)}”); a contradiction, nothing filed")
        return
    alike = catalog.said_in_another_language(text) if existing is None and request.kind in ("rule", "remember") else None
    if alike is not None:
        ws.ask(f"“{shorten(request.sentence, 100)}” ({_where(request)}) may say what {catalog.label(alike)} says "
               f"(“{shorten(alike.text, 80)}”) in another language; not filed")
        return
    denied = catalog.denying_a_name(text) if existing is None and request.kind == "remember" else None
    if denied is not None:
        ws.ask(f"“{shorten(request.sentence, 100)}” ({_where(request)}) says “not” beside a name that "
               f"{catalog.label(denied)} states (“{shorten(denied.text, 80)}”): it may correct or contradict it; "
               "not filed, a person decides")
        return
    if existing is not None:  # nothing to change: said so once, as a note
        ws.note(f"{request.kind} “{shorten(text, 80)}” (session {request.session}): already covered by "
                f"{catalog.label(existing)}; nothing changed")
        return
    if not named(ws.settings.layout).index_links_memories:  # Codex: its handbook holds each memory as a bullet
        line = f"- {stated[:1].upper()}{stated[1:]} (remembered {request.date.isoformat()}, session {request.session})"
        catalog.file_rule(line, REMEMBERED_HEADING)
        ws.requested(ChangeAction.CREATED, INDEX_NAME, f"{request.kind} request in session {request.session}", line,
                     request.evidence)
        return
    type_ = memory_type(request, text)
    path = store.free_path(f"{type_}_{short_slug(spoken)}")
    title = short_title(spoken)
    body = stated[:1].upper() + stated[1:]
    topic_lines = [body if body.endswith((".", "!", "。")) else body + ".", "",
                   f"Source: session {request.session} ({request.date.isoformat()})."]
    extra = {"created": request.date.isoformat(), "originSessionId": request.session}
    store.add_topic(path, new_topic_text(title, shorten(body, MAX_LINE), type_, topic_lines,
                                         extra, store.newline))
    hook = body if normalize(body) != normalize(title) else ""
    catalog.file_topic(path, fit_line(title, path, hook), type_)
    ws.requested(ChangeAction.CREATED, path, f"{request.kind} request in session {request.session}",
                 f"{type_}: {shorten(body, 120)}", request.evidence)


# ---------------------------------------------------------------- corrections


def correct_existing(ws: Workspace, catalog: Catalog, request: Request) -> bool:
    """Rewrite the one memory stating the value a correction replaces; True if a memory was rewritten.

    The memory that states the stale value about the same thing is rewritten:
    body lines, the description and its index lines (or the inline rule), old
    value kept as history. No memory stating it, or several: a person is
    asked (a correction said without a lead is only noted), never a new file.
    """
    correction = corrections.parse(request.text, strict=request.kind == "update")
    if correction is None:
        return False  # "sorry, was away", "no, the other one": no old and new value, so no correction
    found = _stating(ws, catalog, correction)
    said = f"correction “{shorten(request.sentence, 100)}” ({_where(request)})"
    if not found:
        inside = [e for e in catalog.stating(correction.wrong) if correction.wrong.lower() in e.memory.text.lower()]
        if _already_said(catalog, correction):
            pass
        elif inside:  # "db-a" in "db-a.internal:5432": a piece of one token, never edited inside
            ws.ask(f"{said}: {', '.join(e.memory.label for e in inside[:3])} holds “{correction.wrong}” only "
                   f"inside a longer name; not edited. Suggested change: “{correction.value}” in place of "
                   f"“{correction.wrong}” there, by hand")
        elif request.kind == "update":  # said in passing: small talk unless a memory says so
            ws.note(f"“{shorten(request.text, 80)}” ({_where(request)}) reads like a change, but no memory "
                    "states the old value; nothing changed")
        else:
            ws.ask(f"{said}: no memory states “{correction.wrong}”; nothing changed, no new file. "
                   f"Candidate: “{correction.value}” instead of “{correction.wrong}”")
        return False
    if len(found) > 1:
        names = ", ".join(sorted(catalog.label(e.memory) for e, _ in found)[:4])
        ws.ask(f"{said}: several memories state “{correction.wrong}” ({names}); nothing changed, "
               "a person picks the one meant")
        return False
    memory = found[0][0].memory
    if memory.scope == "team":
        ws.ask(f"{said}: {memory.key} is a team memory others rely on; not rewritten, check it with the team")
        return False
    day = request.date.isoformat()
    if memory.kind == "rule":
        catalog.replace_line(memory.key, corrections.rewrite(memory.key, correction, day, note=True))
        path, changed = INDEX_NAME, 1
    else:
        topic = ws.store.topics[memory.key]
        if not editable(topic):
            ws.ask(f"{said}: {topic.path} states the old value but cannot be edited safely "
                   f"({'; '.join(topic.format_problems)}); rewrite it by hand")
            return False
        changed = _rewrite_topic(ws, catalog, topic, correction, day)
        path = topic.path
    ws.requested(ChangeAction.UPDATED, path, f"correction in session {request.session}",
                 f"{changed} place(s) said “{correction.wrong}”, now “{correction.value}” "
                 f"(was {correction.wrong} until {day})", request.evidence)
    return True


def _mentioning(ws: Workspace, catalog: Catalog, correction: corrections.Correction) -> list[tuple[Entry, str]]:
    """The memories that state the stale value, with the text that says it (about anything)."""
    found = [(e, _stated_text(ws, catalog, e.memory)) for e in catalog.stating(correction.wrong)]
    found += [(e, e.memory.text) for e in catalog.rules_stating(correction.wrong)]
    return [(e, text) for e, text in found if corrections.states(text, correction)]


def _stating(ws: Workspace, catalog: Catalog, correction: corrections.Correction) -> list[tuple[Entry, str]]:
    """The memories that state the stale value about the same thing, with the text that says it."""
    return [(e, text) for e, text in _mentioning(ws, catalog, correction) if corrections.about(text, correction)]


def _filed_as_correction(ws: Workspace, catalog: Catalog, request: Request) -> bool:
    """A remember or a rule that names an old value a memory states ("note: CI runs on Buildkite now, no
    longer on GitHub Actions") corrects that memory: a new file would make the store say both. When the
    memories stating the old value seem to be about something else, a person decides. True if handled."""
    correction = corrections.parse(request.text)
    if correction is None:
        return False
    found = _mentioning(ws, catalog, correction)
    if any(corrections.about(text, correction) for _, text in found):
        correct_existing(ws, catalog, request)
        return True
    if not found:
        return False
    mentioning = sorted({catalog.label(e.memory) for e, _ in found})
    ws.ask(f"{request.kind} “{shorten(request.sentence, 100)}” ({_where(request)}) says “{correction.wrong}” "
           f"no longer holds, and {', '.join(mentioning[:4])} state(s) it; nothing filed, a person decides. "
           f"Candidate: “{correction.value}” instead of “{correction.wrong}”")
    return True


def _already_said(catalog: Catalog, correction: corrections.Correction) -> bool:
    """A memory already states the new value about the same thing (the correction was applied before)."""
    now = corrections.Correction(correction.value, correction.right, correction.wrong)
    return any(corrections.states(e.memory.text, now) and corrections.about(e.memory.text, now)
               for e in [*catalog.stating(correction.value), *catalog.rules_stating(correction.value)])


def _stated_text(ws: Workspace, catalog: Catalog, memory: Memory) -> str:
    topic = ws.store.topics[memory.key]
    return "\n".join([topic.description, topic.body, *catalog.hooks_of(memory.key)])


def _rewrite_topic(ws: Workspace, catalog: Catalog, topic: TopicFile, correction: corrections.Correction,
                   day: str) -> int:
    """Body lines about the same thing get the new value and a history note; description and index follow."""
    ensure_frontmatter(ws, topic, "a correction was applied")
    lines = topic.text.lines
    changed = 0
    for number in range(topic.body_start, len(lines)):
        line = lines[number]
        if corrections.states(line, correction) and corrections.about(line, correction):
            lines[number] = corrections.rewrite(line, correction, day, note=True)
            changed += 1
    if topic.frontmatter is not None:
        for number in range(topic.frontmatter.start + 1, topic.frontmatter.end):
            if re.match(r"^\s*description\s*:", lines[number]) and corrections.states(lines[number], correction):
                lines[number] = corrections.rewrite(lines[number], correction, day, note=False)
                changed += 1
    topic.reparse()
    for line in catalog.hooks_of(topic.path):
        if corrections.states(line, correction):
            catalog.replace_line(line, corrections.rewrite(line, correction, day, note=False))
            changed += 1
    catalog.refresh(topic.path)
    return changed


# ---------------------------------------------------------------- forget


def forget(ws: Workspace, catalog: Catalog, request: Request) -> None:
    """Remove the one memory the request names; ask a person when none, several, or a team one fits."""
    entry, score, rivals = catalog.forget_match(request.text)
    said = f"forget “{request.text}” ({_where(request)})"
    if request.text not in request.sentence or len(request.text) < 15:  # the person reads what was said
        said = f"forget “{request.text}” (“{shorten(request.sentence, 100)}”, {_where(request)})"
    if entry is None:
        if not catalog.was_forgotten(request.text):  # said again after an earlier request removed it
            ws.ask(f"{said}: no memory matches; nothing removed")
        return
    memory = entry.memory
    if rivals:
        names = ", ".join(sorted(catalog.label(e.memory) for e in [entry, *rivals])[:4])
        ws.ask(f"{said}: several memories match equally well ({names}); nothing removed")
        return
    label = catalog.label(memory)
    if memory.scope == "team":
        ws.ask(f"{said}: matches {label}, a team memory others rely on; not removed "
               "(remove it by hand if the team agrees)")
        return
    catalog.remove(memory)
    path = memory.key if memory.kind == "topic" else INDEX_NAME
    ws.requested(ChangeAction.FORGOTTEN, path, f"user asked to forget “{request.text}” (match {score:.0f}%)",
                 f"removed {label}", request.evidence)


__all__ = ["merge_duplicates", "absolute_dates", "apply_requests", "scope_of"]
