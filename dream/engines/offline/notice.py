"""Noticing: what the user said about memory that no request phrase reads, put before a person.

The request reader (requests.py) is narrow: it changes memory only on a
sentence it reads for certain. Noticing is wide and cheap, and changes
nothing. A user's sentence is noticed when it holds a memory word of any
shipped language in any position and inflection ([words] `notice`: stems),
a dismissal ([words] `dismiss`: "can go", "kann raus", "删掉"), or a change
form ("8080 → 8081", "s/7700/7701/", a typed -/+ diff, "not X anymore",
"moved to"). One that no request was read from, that is no question and
that none of the reader's markers calls chatter, goes to a person with the
engine's best reading: "forget `reference_x.md`?", "in `project_y.md`,
8080 → 8081?". Only a sentence that names a memory of the store (or says
which value to change) is listed: talk that names nothing is chatter.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import replace
from functools import cache

import polars as pl

from dream.engines.offline import phrases
from dream.engines.offline.catalog import Catalog, Entry, keys
from dream.engines.offline.orient import Workspace
from dream.engines.offline.requests import NOT_REQUESTS, Request, looks_like_code, retracts, said_before_each, sentences
from dream.engines.offline.similarity import points_back, forget_keys, normalize
from dream.engines.offline.text import QUOTATION, shorten

# Change forms every language writes alike: an arrow, a sed substitution.
_ARROW = re.compile(r"(?P<old>[^\s→>:=]+)\s*(?:→|->|=>|⇒|⟶)\s*(?P<new>[^\s,;]+)")
_SED = re.compile(r"(?<![\w/])s/(?P<old>[^/\s]+)/(?P<new>[^/\s]*)/")
_DIFF = re.compile(r"^-\s*(?P<old>[^-].*)\n\+\s*(?P<new>.+)$", re.M)  # "-port: 8080" over "+port: 8081"
_QUOTED = re.compile(QUOTATION)
_CLAUSES = re.compile(r"[,:;，：；]\s*|\s[—–-]\s+")
_FILE = re.compile(r"[\w./-]+\.md\b")
_MARKERS = (*NOT_REQUESTS, "set_aside", "pending")


def note_unread(ws: Workspace, sessions: pl.DataFrame | None) -> None:
    """Ask a person about every noticed sentence of a user entry that changed nothing and reached no one
    (no request read there, or one read that came to nothing: "X, nicht mehr Y" with no value to swap)."""
    if sessions is None or sessions.height == 0:
        return
    asked = " ".join(ws.needs)
    done = {(c.evidence.session, c.evidence.line) for c in ws.changes if c.evidence}
    users = sessions.filter((pl.col("role") == "user") & pl.col("text").str.contains(_prefilter()))
    noticed = []
    for session, day, seq, entry in users.select("session", "date", "seq", "text").iter_rows():
        where = f"session {session}, {day.isoformat()}, line {int(seq) + 1}"
        if where in asked or (str(session), int(seq) + 1) in done:
            continue
        typed, _, block = entry.partition("\n")
        noticed += [((str(session), int(seq)), where, sentence, change) for sentence, change in _noticed(typed, block)]
    if not noticed:
        return
    catalog = Catalog(ws)
    before = said_before_each(sessions, [place for place, *_ in noticed])
    for place, where, sentence, change in noticed:
        suggestion = _suggestion(catalog, sentence, change, before[place])
        if suggestion:
            ws.ask(f"“{shorten(sentence, 100)}” ({where}) may ask to change memory; nothing changed. "
                   f"Suggested change: {suggestion}")


def withdrawn(requests: list[Request], sessions: pl.DataFrame | None) -> list[Request]:
    """The requests without those a later user line withdraws: "about yesterday: keep the VPN note after all"
    ([not_requests] `keeps`, for a forget), "never mind what I said about the VPN" (a take-back) naming the
    same thing, or a bare "keep it" a few lines after a forget. The last word wins: nothing is applied, and a
    request read from the withdrawing line itself is not either."""
    if not requests or sessions is None:
        return requests
    users = sessions.filter(pl.col("role") == "user").select("date", "session", "seq", "text")
    if _withdrawal_texts():  # a million user lines: only those holding a text a withdrawal needs reach the regexes
        users = users.filter(pl.col("text").str.contains(_withdrawal_texts()))
    # Only a line that withdraws is looked at further: a long session has a million user lines, and a tuple
    # with the names of each one ran a 150 MB log out of a 2 GB address space (tests/reliability/test_memory_cap.py).
    later = [(day, str(session), int(seq), kind, _named(text))
             for day, session, seq, text in users.iter_rows() for kind in [_withdrawal(text)] if kind]
    # A forget that points back ("さっきのは忘れて") names nothing of its own; one that names another memory
    # ("forget the deploy memory" after a remember of the staging port) does not take the remember back.
    later += [(r.date, r.session, r.seq, "forget", frozenset() if points_back().search(r.text) else _named(r.text))
              for r in requests if r.kind == "forget" and r.plain]
    kept, withdrawing = [], set()
    last = _last_before(requests, later)
    near = _Withdrawing(later, last)
    for request in requests:
        by = [line[:3] for line in near.candidates(request) if _withdraws(request, line, last[line[:3]])]
        withdrawing.update(by)
        kept += [] if by else [request]
    # "forget what I said about the staging move": a take-back of that request, no forget of the staging memory
    return [r for r in kept if (r.date, r.session, r.seq) not in withdrawing]


def _withdrawal(text: str) -> str:
    """"back" when the text or a clause of it takes something back, "keep" when it keeps a memory, else ""."""
    if phrases.marker("withdraws").search(text) or any(retracts(clause) for clause in [text, *_CLAUSES.split(text)[1:]]):
        return "back"
    return "keep" if phrases.marker("keeps").search(text) else ""


@cache
def _withdrawal_texts() -> str:
    """For polars: every line `_withdrawal` reads as one holds one of these texts ([leads] `retract`, and what
    each [not_requests] `keeps` and `withdraws` pattern needs); "" when a pattern needs no text."""
    texts = {lead for lang in phrases.languages() for lead in lang.leads.get("retract", [])}
    for regex in (r for lang in phrases.languages() for name in ("keeps", "withdraws")
                  for r in lang.not_requests.get(name, [])):
        needed = phrases.required_text(regex)
        if not needed:
            return ""
        texts.update(needed)
    return "(?i)" + "|".join(sorted(phrases._folded(t) for t in texts))


def _withdraws(request: Request, line: tuple, last: Request | None) -> bool:
    """Whether the line withdraws the request: it names the same memory; or it follows a few lines after in the
    same session ("wait, keep the gateway one", "hmm no, keep it"); or the request is the last one said before
    it ("actually don't" the next day). When in doubt, nothing is applied."""
    day, session, seq, how, named = line
    if (day, session, seq) <= (request.date, request.session, request.seq):
        return False
    if how == "keep" and request.kind != "forget" or how == "forget" and request.kind in ("forget", "correction"):
        return False  # a forget takes back a remember of the same thing, said before ("さっきのは忘れて")
    if len(named & _named(request.text)) >= (2 if how == "forget" else 1):
        return True  # names the same memory (a forget, by two words: "forget the gateway dashboard" is another)
    return last is request and (how != "forget" or not named - _named(request.text)) or (
        how != "forget" and session == request.session and seq - request.seq <= 4)


class _Withdrawing:
    """The lines `_withdraws` may find withdrawing a request: those naming a word of it, said in its session,
    or with it as the request said last before them. Every request against every line of a night (3,000 of
    each) was 3.4 million calls."""

    def __init__(self, lines: list[tuple], last: dict[tuple, Request | None]):
        self.lines = lines
        self.naming: dict[str, list[int]] = defaultdict(list)  # a word -> the lines naming it
        self.in_session: dict[str, list[int]] = defaultdict(list)
        self.after: dict[int, list[int]] = defaultdict(list)  # id of a request -> the lines it is last before
        for i, (day, session, seq, _, named) in enumerate(lines):
            for word in named:
                self.naming[word].append(i)
            self.in_session[session].append(i)
            self.after[id(last[(day, session, seq)])].append(i)

    def candidates(self, request: Request) -> list[tuple]:
        """The lines that may withdraw the request, in their order."""
        if not request.plain:
            return []
        near = set().union(*(self.naming.get(word, ()) for word in _named(request.text)),
                           self.in_session.get(request.session, ()), self.after.get(id(request), ()))
        return [self.lines[i] for i in sorted(near)]


def _last_before(requests: list[Request], lines: list[tuple]) -> dict[tuple, Request | None]:
    """For each line's place, the plain request said last before it (the first said of those at one place).

    By bisection: a night of 3,000 requests and as many forgets compared each pair of them with every request."""
    plain = sorted((r for r in requests if r.plain), key=_place)
    places = [_place(r) for r in plain]
    last: dict[tuple, Request | None] = {}
    for line in lines:
        before = bisect_left(places, line[:3])
        last[line[:3]] = plain[bisect_left(places, places[before - 1])] if before else None
    return last


def _place(request: Request) -> tuple:
    return request.date, request.session, request.seq


@cache  # each request's text is compared with every later line that withdraws
def _named(text: str) -> frozenset[str]:
    return frozenset(k for k in forget_keys(_notice().sub(" ", text)) if len(k) > 1) - _notice_keys()


def _noticed(typed: str, block: str) -> list[tuple[str, tuple[str, str] | None]]:
    """The sentences worth a person's look, each with the change (old, new) it spells out, if any."""
    found: list[tuple[str, tuple[str, str] | None]] = []
    diff = _DIFF.search(block) if block else None
    for sentence in sentences(_QUOTED.sub("…", typed)):  # a quotation is someone else's words
        change = _change(sentence)
        words = [sentence[m.start():] for m in _notice().finditer(sentence)]
        if not change and not words:
            continue
        if sentence.rstrip().endswith(("?", "？")) or retracts(sentence) or looks_like_code(sentence) or any(
                phrases.task().match(w) or phrases.not_after("not_forget_after", "forget").match(w) for w in words):
            continue  # a question, a take-back, code, a task ("remember to squash", "I always forget to"): no ask
        if any(phrases.marker(name).search(sentence) for name in _MARKERS):
            continue  # hypothetical, scoped, small talk, set aside, not yet: the reader's chatter
        found.append((sentence, change or (_tokens_apart(diff["old"], diff["new"]) if diff else None)))
    return found


def _change(sentence: str) -> tuple[str, str] | None:
    for form in (_SED, _ARROW):
        if match := form.search(sentence):
            return match["old"], match["new"]
    return None


def _tokens_apart(old: str, new: str) -> tuple[str, str] | None:
    """The first word a typed -/+ diff changes: "port: 8080" / "port: 8081" → (8080, 8081)."""
    pairs = zip(re.split(r"[\s:=]+", old.strip()), re.split(r"[\s:=]+", new.strip()))
    return next(((a, b) for a, b in pairs if a != b), None)


def _suggestion(catalog: Catalog, sentence: str, change: tuple[str, str] | None, before: str) -> str:
    """The engine's best reading of a noticed sentence, or "" when it names no memory of the store."""
    if change:
        stating = catalog.stating(change[0])
        if len(stating) == 1:
            return f"in `{stating[0].memory.key}`, {change[0]} → {change[1]}?"
        if stating:
            return f"{change[0]} → {change[1]} in which of {', '.join(_names(stating))}?"
    entry = _nearest(catalog, sentence) or _named_before(catalog, before)
    if entry is None and change:
        return f"{change[0]} → {change[1]}? No memory states {change[0]}"
    if entry is None:  # "save that", "それメモリに入れといて": what it points at was said just before
        if not before or len(_named(sentence)) > 2 or not _pointer().search(sentence) or _forgets().search(sentence):
            return ""  # "nvm, forget it" points at nothing to keep
        return f"remember what was said just before (“{shorten(before, 100)}”)?"
    name = f"`{entry.memory.key}`" if entry.memory.kind == "topic" else catalog.label(entry.memory)
    if _dismiss().search(sentence) or _forgets().search(sentence):
        return f"forget {name}?"
    return f"in {name}, {change[0]} → {change[1]}?" if change else f"update {name} to say what this sentence says?"


def _nearest(catalog: Catalog, sentence: str) -> Entry | None:
    """The one memory the sentence names best: a word of its name or title counts two, of its text one; it
    needs two, and no other memory as many (two alike: the person picks, no guess)."""
    scores = catalog.naming_scores(_named(sentence))
    best = max(scores.values(), default=0)
    top = [number for number, score in scores.items() if score == best]
    return catalog.entries[top[0]] if best >= 2 and len(top) == 1 else None


def _named_before(catalog: Catalog, before: str) -> Entry | None:
    """"get rid of it" answering the assistant's line that names one memory file."""
    named = {m for m in _FILE.findall(before) if m in catalog.topic_ids}
    return catalog.entries[catalog.topic_ids[named.pop()]] if len(named) == 1 else None


def _names(entries: list[Entry]) -> list[str]:
    return [f"`{e.memory.key}`" for e in entries[:4]]


@cache
def _notice() -> re.Pattern[str]:
    """Memory words at a word's start (any inflection), dismissals and change words, of every language."""
    stems = phrases.words("notice") + phrases.words("forget_stems")
    whole = phrases.words("dismiss") + phrases.words("final_particles") + phrases.words("no_longer")
    whole += phrases.words("change_verbs")
    return re.compile(rf"(?<!\w)(?:{phrases._alternation(stems)})|(?<!\w)(?:{phrases._alternation(whole)})(?!\w)"
                      rf"|{phrases._alternation(_unspaced())}", re.I)


@cache
def _unspaced() -> list[str]:
    """The same words of the languages written without spaces: looked for anywhere."""
    return [w for lang in phrases.languages() if not lang.spaced
            for key in ("notice", "forget_stems", "dismiss", "change_verbs") for w in lang.words.get(key, [])]


@cache
def _pointer() -> re.Pattern[str]:
    """The words a request points with ([words] `pointer`: "that", "それ", "그거"), anywhere."""
    return re.compile(phrases._alternation(phrases.words("pointer")) or "(?!)", re.I)


@cache
def _dismiss() -> re.Pattern[str]:
    return re.compile(phrases._alternation(phrases.words("dismiss")) or "(?!)", re.I)


@cache
def _forgets() -> re.Pattern[str]:
    return re.compile(phrases._alternation(phrases.words("forget_stems")) or "(?!)", re.I)


@cache
def _notice_keys() -> frozenset[str]:
    return frozenset(k for w in phrases.words("notice") for k in keys(normalize(w)))


@cache
def _prefilter() -> str:
    """For polars: every entry `_noticed` may keep holds one of these (case aside), or an arrow, "s/" or "+"."""
    words = phrases.words("notice") + phrases.words("forget_stems") + phrases.words("dismiss")
    words += phrases.words("final_particles")
    words += phrases.words("no_longer") + phrases.words("change_verbs")
    return "(?i)" + "|".join(sorted({phrases._folded(w) for w in words} | {"→", "->", "=>", "⇒", "s/", r"\n\+"}))
