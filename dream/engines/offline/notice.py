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
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from datetime import date
from functools import cache

import polars as pl

from dream.engines.offline import corrections, phrases
from dream.engines.offline.catalog import Catalog, Entry, keys
from dream.engines.offline.kinds import RequestKind
from dream.engines.offline.orient import Workspace
from dream.engines.offline.requests import NOT_REQUESTS, Request, looks_like_code, retracts, sentences
from dream.engines.offline.similarity import CJK_CHARS, CJK_FLOOR, forget_keys, normalize, points_back, says_something
from dream.engines.offline.text import QUOTATION, ScriptPattern, shorten, without_secrets

# Change forms every language writes alike: an arrow, a sed substitution.
_ARROW = re.compile(r"(?P<old>(?:[^\s→>:=-]|:(?=[^\s→])|-(?!-*>))+)\s*(?:→|-+>|=>|⇒|⟶|➡️?|➜|➔|⇨)\s*(?P<new>[^\s,;]+)")
# "s/8080/8081/", "s/8080/8081"; not "sed -i 's/…/…/' file": a command to run
_SED = re.compile(r"(?<![\w/'\"])s/(?P<old>[^/\s]+)/(?P<new>[^/\s]+)(?:/|(?=\s|$))")
_DIFF = re.compile(r"^-\s*(?P<old>[^-].*)\n\+\s*(?P<new>.+)$", re.M)  # "-port: 8080" over "+port: 8081"
_QUOTED = re.compile(QUOTATION)
_CLAUSES = re.compile(r"[,:;，：；]\s*|\s[—–-]\s+")
_FILE = re.compile(r"[\w./-]+?\.md(?![A-Za-z0-9_])")  # "reference_vpn.md를" names reference_vpn.md
_QUESTION_END = r"[?？]\s*$"
_NO_CJK = rf"(?![{CJK_CHARS}])"  # a value ends where a script without spaces goes on: "今は8081だよ" says 8081
_VALUE = re.compile(rf"(?:{_NO_CJK}[\w./:-])*\d(?:(?:{_NO_CJK}[\w./:-])*{_NO_CJK}\w)?|(?:{_NO_CJK}\w)+(?:[./:-](?:{_NO_CJK}\w)+)+")
# 8081, 30s, cache-2.internal, ./deploy-v3.sh
# Where a word of a spaced script meets one written without spaces ("VPNのメモ", "把VPN的"): a word ends there
_SCRIPT_EDGE = ScriptPattern(rf"(?<=[^\W{CJK_CHARS}])(?=[{CJK_CHARS}])|(?<=[{CJK_CHARS}])(?=[^\W{CJK_CHARS}])", CJK_FLOOR)
_MARKERS = (*NOT_REQUESTS, "set_aside", "pending")


@dataclass(frozen=True)
class Settled:
    """What the withdrawals of a night settled: the user lines (session, seq) of the requests they withdrew and
    of those withdrawing, and every line that withdraws or keeps (date, session, seq, how, names)."""

    lines: frozenset[tuple[str, int]] = frozenset()
    later: tuple[tuple, ...] = ()

    def withdraws(self, day: date, session: str, seq: int, sentence: str) -> bool:
        """A later line withdraws this noticed sentence, or the sentence is itself a keep ("leave it"). A noticed
        sentence asks at most to change or drop a memory: a later "keep it" takes it back as it does a forget."""
        said = Request(RequestKind.FORGET, sentence, session, day, seq, sentence)
        return any(line[:3] == (day, session, seq) and line[3] == "keep" or _withdraws(said, line, None)
                   for line in self.later)


def note_unread(ws: Workspace, sessions: pl.DataFrame | None, settled: Settled = Settled()) -> None:
    """Ask a person about every noticed sentence of a user entry that changed nothing and reached no one
    (no request read there, or one read that came to nothing: "X, nicht mehr Y" with no value to swap), and
    about a yes that answers the assistant's question naming a memory ("Drop reference_vpn.md?" "yep").
    A line `settled` (a request a later line withdrew, or the line withdrawing it) asks for nothing."""
    if sessions is None or sessions.height == 0:
        return
    asked = " ".join(ws.needs)
    done = {(c.evidence.session, c.evidence.line) for c in ws.changes if c.evidence}
    users = sessions.filter(pl.col("role") == "user")
    worded = pl.col("text").str.contains(_prefilter())
    users = pl.concat([users.filter(worded), _yes_answers(sessions, users.filter(~worded))])
    catalog: Catalog | None = None
    near = _neighbours(sessions, users)
    for session, day, seq, entry in users.select("session", "date", "seq", "text").iter_rows():
        where = f"session {session}, {day.isoformat()}, line {int(seq) + 1}"
        if where in asked or (str(session), int(seq) + 1) in done or (str(session), int(seq)) in settled.lines:
            continue
        catalog = catalog or Catalog(ws)
        typed, _, block = entry.partition("\n")
        before = near.said(str(session), int(seq) - 1, "assistant")
        noticed = _noticed(typed, block) + (_noticed(below, "") if (below := _typed_below(block)) else [])
        asking = False
        for sentence, change in noticed:
            if settled.withdraws(day, str(session), int(seq), sentence):
                continue  # "drop the scheduler note" · next day: "re the scheduler note: leave it"
            suggestion = _suggestion(catalog, sentence, change, before, near.answer_after(str(session), int(seq)))
            asking = _ask(ws, " ".join(entry.split()) if block and sentence == typed.strip() else sentence, where,
                          suggestion) or asking
        if not asking and re.match(_yes(), typed) and re.search(_QUESTION_END, before):  # "да, запомни"
            _ask(ws, typed, where, _agreed(catalog, before))


def _ask(ws: Workspace, sentence: str, where: str, suggestion: str) -> bool:
    if suggestion:
        ws.ask(f"“{shorten(sentence, 100)}” ({where}) may ask to change memory; nothing changed. "
               f"Suggested change: {suggestion}")
    return bool(suggestion)


def _yes_answers(sessions: pl.DataFrame, users: pl.DataFrame) -> pl.DataFrame:
    """The user entries that open with a yes ([words] `yes`) right after a question of the assistant."""
    questions = sessions.filter((pl.col("role") == "assistant") & pl.col("text").str.contains(_QUESTION_END))
    after = questions.select("session", pl.col("seq") + 1)
    return users.join(after, on=["session", "seq"], how="semi").filter(pl.col("text").str.contains(_yes()))


def _agreed(catalog: Catalog, question: str) -> str:
    """A yes to the assistant's question that would change one memory it names ("Drop reference_vpn.md?"
    "yep"): that. A question with no memory word asks for no change ("Want to see reference_vpn.md?")."""
    if not _notice().search(question):
        return ""
    if entry := _named_before(catalog, question) or _nearest(catalog, question):
        return f"what the assistant asked (“{shorten(question, 100)}”), for {_label(catalog, entry)}?"
    # "Should I save the wipe schedule to memory?" "yes please": an offer to keep something new, by two memory
    # words or a remember lead; not "Should I update the tests?"
    offers = len({m.lower() for m in _notice().findall(question)}) > 1 or _remember_lead().search(question)
    return f"remember what the assistant offered to keep (“{shorten(question, 100)}”)?" if offers else ""


@dataclass(frozen=True)
class _Neighbours:
    """The entries around the user's noticed ones, (session, seq) -> (role, text), looked up once for all (a
    filter of the whole session per entry cost 5 s of CPU for 6,000 entries)."""

    rows: dict[tuple[str, int], tuple[str, str]]

    def said(self, session: str, seq: int, role: str) -> str:
        found = self.rows.get((session, seq))
        return found[1] if found and found[0] == role else ""

    def answer_after(self, session: str, seq: int) -> str:
        """The user's answer when the assistant asks back right after this entry ("Which one?" "the VPN one")."""
        asks = re.search(_QUESTION_END, self.said(session, seq + 1, "assistant"))
        return self.said(session, seq + 2, "user") if asks else ""


def _neighbours(sessions: pl.DataFrame, users: pl.DataFrame) -> _Neighbours:
    places = pl.concat([users.select("session", pl.col("seq") + step) for step in (-1, 1, 2)]).unique()
    near = sessions.join(places, on=["session", "seq"], how="semi").select("session", "seq", "role", "text")
    return _Neighbours({(str(s), int(q)): (str(r), str(t)) for s, q, r, t in near.iter_rows()})


def withdrawn(requests: list[Request], sessions: pl.DataFrame | None) -> tuple[list[Request], Settled]:
    """The requests without those a later user line withdraws: "about yesterday: keep the VPN note after all"
    ([not_requests] `keeps`, for a forget), "never mind what I said about the VPN" (a take-back) naming the
    same thing, or a bare "keep it" a few lines after a forget. The last word wins: nothing is applied, and a
    request read from the withdrawing line itself is not either. Also the lines settled so: each withdrawn
    request's and each withdrawing one's (session, seq), which ask a person for nothing."""
    if sessions is None:
        return requests, Settled()
    users = sessions.filter(pl.col("role") == "user").select("date", "session", "seq", "text")
    if _withdrawal_texts():  # a million user lines: only those holding a text a withdrawal needs reach the regexes
        users = users.filter(pl.col("text").str.contains(_withdrawal_texts()))
    # Only a line that withdraws is looked at further: a long session has a million user lines, and a tuple
    # with the names of each one ran a 150 MB log out of a 2 GB address space (tests/reliability/test_memory_cap.py).
    how = {text: _withdrawal(text) for text in users["text"].unique()}  # a line said again is read once
    later = [(day, str(session), int(seq), how[text], _named(text))
             for day, session, seq, text in users.iter_rows() if how[text]]
    # A forget that points back ("さっきのは忘れて") names nothing of its own; one that names another memory
    # ("forget the deploy memory" after a remember of the staging port) does not take the remember back.
    later += [(r.date, r.session, r.seq, "forget", frozenset() if points_back().search(r.text) else _named(r.text))
              for r in requests if r.kind == "forget" and r.plain]
    forgets = {(r.date, r.session, r.seq) for r in requests if r.kind == "forget" and r.plain}
    later += [line for line in _dismissals(sessions) if line[:3] not in forgets]  # a forget names by two words
    later.sort()
    kept, withdrawing = [], set[tuple]()
    last = _last_before(requests, later)
    near = _Withdrawing(later, last)
    for request in requests:
        lines = [line for line in near.candidates(request) if _withdraws(request, line, last[line[:3]])]
        if lines and all(line[3] == "dismiss" for line in lines):  # dropped by a word of it: maybe, maybe not
            kept.append(replace(request, plain=False))
            continue
        withdrawing.update(line[:3] for line in lines)
        kept += [] if lines else [request]
    # "forget what I said about the staging move": a take-back of that request, no forget of the staging memory
    settled = frozenset((r.session, r.seq) for r in requests if r not in kept) | {(s, q) for _, s, q in withdrawing}
    return [r for r in kept if (r.date, r.session, r.seq) not in withdrawing], Settled(settled, tuple(later))


def _dismissals(sessions: pl.DataFrame) -> list[tuple]:
    """Lines that drop something ("scrap the freeze note", "the freeze thing, drop it"), with the words they name
    (redaction markers aside): a short one said after a remember of the same thing takes it back."""
    words = phrases.words("dismiss") + phrases.words("forget_stems")
    users = sessions.filter(pl.col("role") == "user").select("date", "session", "seq", "text")
    users = users.filter(pl.col("text").str.contains("(?i)" + "|".join(sorted({phrases._folded(w) for w in words}))))
    return [(day, str(session), int(seq), "dismiss", _named(without_secrets(text)))
            for day, session, seq, text in users.iter_rows()
            if _forgets().search(text) or _dismiss().search(text)]


@cache
def _function_keys() -> frozenset[str]:
    """Small words of every language, keyed as `_named` keys words: "after" names no memory."""
    return frozenset(k for w in phrases.words("function") for k in forget_keys(w))


def _withdrawal(text: str) -> str:
    """"back" when the text or a clause of it takes something back, "keep" when it keeps a memory, else ""."""
    clauses = [text, *_CLAUSES.split(text)[1:]]
    if phrases.marker("withdraws").search(text) or any(retracts(clause) for clause in clauses):
        return "back"
    return "keep" if any(phrases.marker("keeps").search(clause) for clause in clauses) else ""


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
    if how == "dismiss":  # a remember the night drops again by a word of it: a person decides, nothing is filed
        # a short line about one thing ("scrap the freeze note"); a long one sharing a word is about something else
        shared = named & _named(without_secrets(request.text)) - _function_keys()
        return request.kind in (RequestKind.REMEMBER, RequestKind.RULE) and bool(shared) and len(named) <= 5
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
    text = _SCRIPT_EDGE.sub(" ", _notice(whole_words=True).sub(" ", text))
    return frozenset(k for k in forget_keys(text) if len(k) > 1) - _notice_keys()


def _noticed(typed: str, block: str) -> list[tuple[str, tuple[str, str] | None]]:
    """The sentences worth a person's look, each with the change (old, new) it spells out, if any."""
    found: list[tuple[str, tuple[str, str] | None]] = []
    diff = _DIFF.search(f"{typed}\n{block}") if "\n+" in f"{typed}\n{block}" else None  # "-PORT=8080" / "+PORT=8081"
    for sentence in sentences(_QUOTED.sub("…", typed)):  # a quotation is someone else's words
        change = _change(sentence)
        words = [sentence[m.start():] for m in _notice().finditer(sentence)]
        if not change and not words and not diff and not _restates(sentence) and len(_VALUE.findall(sentence)) < 2:
            continue
        if sentence.rstrip().endswith(("?", "？")) or retracts(sentence) or _code(sentence, change) or any(
                phrases.task().match(w) or phrases.not_after("not_forget_after", "forget").match(w) for w in words):
            continue  # a question, a take-back, code, a task ("remember to squash", "I always forget to"): no ask
        if any(phrases.marker(name).search(sentence) for name in _MARKERS):
            continue  # hypothetical, scoped, small talk, set aside, not yet: the reader's chatter
        found.append((sentence, change or (_tokens_apart(diff["old"], diff["new"]) if diff else None)))
    if diff and not found and looks_like_code(typed):  # a diff pasted with nothing typed but its fence
        found.append((typed, _tokens_apart(diff["old"], diff["new"])))
    return found


def _code(sentence: str, change: tuple[str, str] | None) -> bool:
    """Code, not talk; but a "=>" that spells a change is an arrow, not a lambda ("gateway: 8080 => 8081"): the
    suggestion still needs a memory stating the old value or named ("x => x * 2" names none)."""
    arrow = change and all(re.fullmatch(r"[\w./:@%-]+", side) for side in change)  # not "(req) => handle(req)"
    return looks_like_code(sentence.replace("=>", "→") if arrow else sentence)


def _typed_below(block: str) -> str:
    """The paragraph the user typed below what they pasted: the last line, when a blank line or a closing fence
    sets it apart and it is not indented as pasted lines are ("<160 log lines>\n\nanyway, forget the vpn note")."""
    lines = block.rstrip().split("\n")
    if len(lines) < 3 or lines[-1][:1].isspace() or not (lines[-2].strip() in ("", "```")):
        return ""
    return lines[-1].strip()


def _restates(sentence: str) -> bool:
    """A value said to hold now ([words] `now`): "gateway port is now 8081", "Redis liegt jetzt auf cache-2".
    (Two values are looked at too: "8081 (was 8080)", "port 8080 to 8081"; see `_values_apart`.)"""
    return bool(_now().search(sentence) and _VALUE.search(sentence))


def _change(sentence: str) -> tuple[str, str] | None:
    for form in (_SED, _ARROW):
        if match := form.search(sentence):
            return match["old"], match["new"]
    return None


def _tokens_apart(old: str, new: str) -> tuple[str, str] | None:
    """The first word a typed -/+ diff changes: "port: 8080" / "port: 8081" → (8080, 8081)."""
    pairs = zip(re.split(r"[\s:=]+", old.strip()), re.split(r"[\s:=]+", new.strip()))
    return next(((a, b) for a, b in pairs if a != b and len(a) > 1), None)  # not "3" / "5": a retry count


def _suggestion(catalog: Catalog, sentence: str, change: tuple[str, str] | None, before: str, answer: str = "") -> str:
    """The engine's best reading of a noticed sentence, or "" when it names no memory of the store; one that
    names none may be completed by the answer the user gives when the assistant asks back ("drop one of the
    notes" · "Which one?" · "the scheduler one")."""
    spelled, change = change, change or _values_apart(catalog, sentence)
    if change:
        stating = catalog.stating(change[0])
        if len(stating) == 1:
            return f"in `{stating[0].memory.key}`, {change[0]} → {change[1]}?"
        if stating:
            return f"{change[0]} → {change[1]} in which of {', '.join(_names(stating))}?"
    if not change and (said := _remembered(sentence)):
        return f"remember “{shorten(said, 100)}”?"  # "remeber that the search cluster listens on 9200"
    entry = (_nearest(catalog, sentence) or _named_before(catalog, before, sentence)
             or (_nearest(catalog, f"{sentence} {answer}") if answer else None))
    if entry and not (spelled or _notice().search(sentence) or _restates(sentence) and _replaces(entry, sentence)):
        return ""  # "the db is at 95% cpu now", "handled 1200 requests in 300ms": no value of the memory's replaced
    if entry is None and change and _memory_word().search(sentence):  # "bump 1.4.2 → 1.4.3": work, no memory
        return f"{change[0]} → {change[1]}? No memory states {change[0]}"
    if entry is None:
        return _unnamed(sentence, before)
    name = _label(catalog, entry)
    if _dismiss().search(sentence) or _forgets().search(sentence):
        return f"forget {name}?"
    return f"in {name}, {change[0]} → {change[1]}?" if change else f"update {name} to say what this sentence says?"


def _unnamed(sentence: str, before: str) -> str:
    """The best reading of a noticed sentence that names no memory of the store, or "" for talk."""
    if _forgets().search(sentence) or _dismiss().search(sentence):  # "nvm, forget it" is talk, but not
        # "스케줄러 메모는 이제 필요 없어, 지워줘": a memory said to go, by a name none of the store's is
        return "forget a memory, but which? No memory's name is said" if _memory_word().search(sentence) else ""
    if len(_notice().findall(sentence)) >= 2 and _restates(sentence):  # "网关那条记忆过时了，现在是9090"
        return "update a memory to say what this sentence says, but which? No memory's name is said"
    if "[REDACTED:" in sentence and _memory_word().search(sentence):  # the redaction's mark (dream.redaction)
        return "change the memory by hand: a secret said here is never filed"  # "the password changed, update memory"
    if before and _points(sentence):
        return f"remember what was said just before (“{shorten(before, 100)}”)?"  # "save that", "それメモリに入れといて"
    return ""


def _points(sentence: str) -> bool:
    """A pointer ("that", "それ", "2つ目のやつ") and next to nothing else: at most two words named, or in a script
    without spaces, fewer characters than a fact takes once the pointer and memory words are out ("それメモっといて")."""
    if not (_pointer().search(sentence) or points_back().search(sentence)):
        return False
    rest = _notice(whole_words=True).sub(" ", points_back().sub(" ", _pointer().sub(" ", sentence)))
    return len(_named(sentence)) <= 2 or not says_something(rest)


def _remembered(sentence: str) -> str:
    """What a sentence asks to keep when it opens, or ends, with a remember no lead reads ([words]
    `remember_stems`: "remeber that the cluster …", "ऑडिट अगले हफ्ते है, याद रखो")."""
    opening, ending = _remember_opening().match(sentence), _remember_ending().search(sentence)
    said = sentence[opening.end():] if opening else sentence[:ending.start()] if ending else ""
    said = said.strip(" :：,，")
    return said if says_something(said) else ""


def _replaces(entry: Entry, sentence: str) -> bool:
    """A value of the sentence stands where one of the memory's stands: same shape, and for a number as many
    digits ("8081" for "8080", "cache-2.internal" for "redis://cache-1.internal:6379"); not "200" for "8080"."""
    held = [t.strip(".,;:()`'\"") for t in entry.memory.text.split()]
    return any(corrections.shape(v) == corrections.shape(t) and v != t and (corrections.shape(v) != "number"
               or len(v) == len(t)) for v in _VALUE.findall(sentence) for t in held if t)


def _values_apart(catalog: Catalog, sentence: str) -> tuple[str, str] | None:
    """The change a sentence spells without an arrow: "R, not W" as a correction reads it, or two values of
    which only the first is stated ("pasó de 8080 a 8081", "8080 diventa 8081"); values only, never words
    ("on n'utilise plus le VPN" is no "VPN → n'utilise")."""
    said = corrections.parse(sentence, strict=True)
    if said and _VALUE.fullmatch(said.wrong) and _VALUE.fullmatch(said.value):
        return said.wrong, said.value
    values = _VALUE.findall(sentence)
    if len(values) != 2 or corrections.shape(values[0]) != corrections.shape(values[1]):
        return None
    stated = [v for v in values if catalog.stating(v)]  # "8081 (was 8080)": the one a memory states is the old
    return (stated[0], values[1 - values.index(stated[0])]) if len(stated) == 1 else None


def _nearest(catalog: Catalog, sentence: str) -> Entry | None:
    """The one memory the sentence names best: a word of its name or title counts two, of its text one; it
    needs two, and no other memory as many (two alike: the person picks, no guess)."""
    scores: Counter[int] = Counter()  # 2 per word in the name, 1 per word only in the text: |W & named| + |W & all|
    for k in _named(sentence):  # counted along the words' lists in C ("the" is in most of 20,000 memories)
        named, keyed = catalog.by_named.get(k, set()), catalog.by_key.get(k, set())
        scores.update(named)
        scores.update(keyed)
        scores.update(named - keyed)
    best = max(scores.values(), default=0)
    leaders = [number for number, score in scores.items() if score == best]
    return catalog.entries[leaders[0]] if best >= 2 and len(leaders) == 1 else None


def _named_before(catalog: Catalog, before: str, sentence: str = "") -> Entry | None:
    """"get rid of it" answering the assistant's line that names one memory file; a dismissal also the one
    memory the line names by its words ("The VPN note still says WireGuard." "yeah get rid of it")."""
    named = {m for m in _FILE.findall(before) if m in catalog.topic_ids}
    if len(named) == 1:
        return catalog.entries[catalog.topic_ids[named.pop()]]
    return _nearest(catalog, before) if before and (_dismiss().search(sentence) or _forgets().search(sentence)) else None


def _label(catalog: Catalog, entry: Entry) -> str:
    return f"`{entry.memory.key}`" if entry.memory.kind == "topic" else catalog.label(entry.memory)


def _names(entries: list[Entry]) -> list[str]:
    return [f"`{e.memory.key}`" for e in entries[:4]]


def noticed_lines(sessions: pl.DataFrame) -> list[str]:
    """The user lines noticing may read (a memory, forget or change word, an arrow, …), by polars' cheap filter."""
    users = sessions.filter((pl.col("role") == "user") & pl.col("text").str.contains(_prefilter()))
    return [str(text) for text in users["text"]]


def says_memory_word(text: str) -> bool:
    """A memory word, a dismissal or a change word of any language ("the gateway note", "drop it")."""
    return bool(_notice().search(text))


@cache
def _notice(whole_words: bool = False) -> re.Pattern[str]:
    """Memory words at a word's start (any inflection), dismissals and change words, of every language; with
    `whole_words`, a stem takes the rest of its word ("remembering", not "rememb" and a stray "ering")."""
    stems = phrases.words("notice") + phrases.words("forget_stems") + phrases.words("remember_stems")
    whole = phrases.words("dismiss") + phrases.words("final_particles") + phrases.words("no_longer")
    whole += phrases.words("notice_words")  # whole words only: a stem "nota" read "notable", "notato", "notação"
    whole += phrases.words("change_verbs")
    rest = r"\w*" if whole_words else ""
    return re.compile(rf"(?<!\w)(?:{phrases._alternation(stems)}){rest}|(?<!\w)(?:{phrases._alternation(whole)})(?!\w)"
                      rf"|{phrases._alternation(_unspaced())}", re.I)


@cache
def _unspaced(*keys: str) -> list[str]:
    """The words of `keys` (the noticing ones by default) of the languages written without spaces: looked for
    anywhere."""
    return [w for lang in phrases.languages() if not lang.spaced
            for key in keys or ("notice", "forget_stems", "remember_stems", "dismiss", "change_verbs")
            for w in lang.words.get(key, [])]


def _pattern(template: str, **words: list[str]) -> re.Pattern[str]:
    """`template` with each {name} an alternation of its words, case aside; matching nothing when one is empty."""
    found = {name: phrases._alternation(said) for name, said in words.items()}
    return re.compile(template.format(**found) if all(found.values()) else "(?!)", re.I)


@cache
def _now() -> re.Pattern[str]:
    """A word saying what holds now ([words] `now`), whole; in a language written without spaces, anywhere."""
    return _pattern(r"(?<!\w)(?:{spaced})(?!\w)|{unspaced}", spaced=phrases.words("now"), unspaced=_unspaced("now"))


@cache
def _memory_word() -> re.Pattern[str]:
    """A memory word ([words] `notice`) at a word's start, or anywhere in a language written without spaces."""
    return _pattern(r"(?<!\w)(?:{spaced})|(?<!\w)(?:{whole})(?!\w)|{unspaced}", spaced=phrases.words("notice"),
                    whole=phrases.words("notice_words"), unspaced=_unspaced("notice"))


@cache
def _remember_opening() -> re.Pattern[str]:
    """A sentence opening with a remember no lead reads ([words] `remember_stems`: "remeber that …")."""
    return _pattern(r"^\W*(?:{stems})\w*(?:\s+(?:{that})(?!\w))?", stems=phrases.words("remember_stems"),
                    that=phrases.words("that"))


@cache
def _remember_ending() -> re.Pattern[str]:
    return _pattern(r"[,，、]?\s*(?<!\w)(?:{stems})\w*\W*$", stems=phrases.words("remember_stems"))


@cache
def _remember_lead() -> re.Pattern[str]:
    """A remember lead of any language ([leads] `asked_remember`: "remember", "keep in mind", "覚えて") anywhere."""
    leads = [w for lang in phrases.languages() for w in lang.leads.get("asked_remember", [])]
    return _pattern(r"(?<!\w)(?:{leads})", leads=leads)


@cache
def _pointer() -> re.Pattern[str]:
    """The words a request points with ([words] `pointer`: "that", "それ", "그거"), anywhere."""
    return _pattern("{pointer}", pointer=phrases.words("pointer"))


@cache
def _dismiss() -> re.Pattern[str]:
    return _pattern("{dismiss}", dismiss=phrases.words("dismiss"))


@cache
def _forgets() -> re.Pattern[str]:
    return _pattern("{forgets}", forgets=phrases.words("forget_stems"))


@cache
def _notice_keys() -> frozenset[str]:
    return frozenset(k for w in phrases.words("notice") + phrases.words("notice_words") for k in keys(normalize(w)))


@cache
def _prefilter() -> str:
    """For polars: every entry `_noticed` may keep holds one of these (case aside), an arrow, "s/", a "+" line,
    or two numbers on its first line ("8081 (was 8080)", "sched-1 is gone, cron runs on sched-2")."""
    words = phrases.words("notice") + phrases.words("forget_stems") + phrases.words("remember_stems")
    words += phrases.words("dismiss") + phrases.words("final_particles") + phrases.words("notice_words")
    words += phrases.words("no_longer") + phrases.words("change_verbs") + phrases.words("now")
    words += [w for w in phrases.words("instead_of") if len(w) > 4]  # "use db-b instead of db-a"; not "no"
    forms = {"→", "->", "=>", "⇒", "⟶", "➡", "➜", "➔", "⇨", "s/", r"\n\+", r"\d\d[^\n]*\D\d\d", r"\w-\d[^\n]*\w-\d"}
    return "(?i)" + "|".join(sorted({phrases._folded(w) for w in words} | forms))


@cache
def _yes() -> str:
    """For polars and re: an entry that opens with a yes of any language ("yep", "sí, bórrala", "はい")."""
    spaced = "|".join(sorted({phrases._folded(w) for lang in phrases.languages() if lang.spaced
                              for w in lang.words.get("yes", [])}, key=len, reverse=True))
    unspaced = "|".join(sorted({phrases._folded(w) for lang in phrases.languages() if not lang.spaced
                                for w in lang.words.get("yes", [])}, key=len, reverse=True))
    return rf"(?i)^\W*(?:(?:{spaced})(?:\W|$)|(?:{unspaced}))"
