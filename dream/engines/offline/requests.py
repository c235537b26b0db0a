"""Explicit requests in what the user said: remember, forget, rules, corrections.

Only the user's own lines count (the assistant may quote or propose things the user never asked for). Each line is
split into sentences, and a sentence is a request only if it *starts* with a request phrase (dream.engines.offline
.phrases: one data file per language) and its intent is plain. None of these is a request: a question, a
hypothetical, a quote; something scoped to "this test", "this PR" or "for now"; a task ("remember to squash"); small
talk ("never seen that before", "sorry, was away"). A rule that might be meant but is not plainly a lasting
preference ("never push on Fridays, I guess") is kept as a *doubtful* request: a person sees it, no file is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

import polars as pl

from dream.engines.base import Evidence
from dream.engines.offline import phrases
from dream.engines.offline.kinds import RequestKind
from dream.engines.offline.text import QUOTATION

# A quotation inside a sentence reports what someone else said (or an error message): masked.
_QUOTED = re.compile(QUOTATION)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")  # CJK text has no space after a stop
_CODE_HINTS = re.compile(r"```|\"\"\"|'''|^\s*[$#>]\s|[{};]\s*$|=>|\b(?:def|class|import|function|return)\b.*[(:]")


@dataclass(frozen=True)
class Request:
    kind: RequestKind
    text: str  # what to remember/forget, as the user said it
    session: str
    date: date
    seq: int
    sentence: str  # the whole sentence, for the report
    plain: bool = True  # False: maybe meant, not plainly; a person decides, nothing is written
    answers: str = ""  # "yes, remember that": the assistant's line it answers, whose words these are

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.session, self.date.isoformat(), self.seq + 1, self.sentence)


def looks_like_code(line: str) -> bool:
    if _CODE_HINTS.search(line):
        return True
    symbols = len(line) - len(line.translate(_NO_SYMBOLS))
    return symbols > max(4, len(line) // 12)


_NO_SYMBOLS = str.maketrans("", "", "{}()[];=<>$|\\")  # code's symbols, deleted to count them in one pass


# Where a forget request's naming ends and its reason begins: "forget X, we retired it".
_CLAUSE_END = re.compile(
    r"\s*(?:[,;，；、]|\s[-–—]\s|\s(?:because|since|as we|we|weil|porque|ya que|car|потому что)\s)")


def first_clause(text: str) -> str:
    head = _CLAUSE_END.split(text, maxsplit=1)[0].strip()
    return head if len(head) >= 2 else text


def sentences(text: str) -> list[str]:
    parts = _SENTENCE_END.split(text) if _STOP.search(text) else [text]  # the split tries every position
    found: list[str] = []
    for part in (s.strip() for s in parts if s and s.strip()):
        if found and not _WORDLIKE.search(part):
            found[-1] += part  # "！！" split off after "！": marks of the sentence before
        elif found and (alone := phrases.lead_alone().match(found[-1])):
            found[-1] = f"{alone['lead']}: {part}"  # "remember!!! staging db = port 5433": the lead, then its content
        else:
            found.append(part)
    return found


_WORDLIKE = re.compile(r"\w")
_STOP = re.compile(r"[.!?。！？\n]")  # what every `_SENTENCE_END` touches: without one, one sentence


_CLAUSE_START = re.compile(r"[,;，；]\s*|\s[—–-]\s+")  # "…, never mind", "btw … — please forget X"
_COMMA = (", ", ",", "，", "、")  # "esquece, já resolvi": a lead, a comma, a reason: "forget it"


def extract(sentence: str) -> tuple[str, str] | None:
    """(kind, text) if the sentence is a plain request; see `read` for the doubtful ones."""
    hit = read(sentence)
    return (hit[0], hit[1]) if hit and hit[2] else None


def read(sentence: str) -> tuple[str, str, bool] | None:
    """(kind, text, plain) if the sentence is a request; `plain` False when only maybe. It may follow a first clause
    ("the importer is gone, forget the rule about tabs"): only a remember or forget, "…, never mind" starts nothing."""
    whole = sentence.strip()
    sentence = whole.strip("\"'“”").strip() if whole[:1] in "\"'“”" else whole  # not 'ops said: "…"'
    if sentence != whole.strip("\"'“”") or not _QUOTED.fullmatch(whole):
        sentence = _QUOTED.sub("…", sentence)
    sentence = phrases.emphasis().sub("", sentence)  # "IMPORTANT: always run the migrations first"
    if not sentence or looks_like_code(sentence) or looks_like_code(whole[:3]):  # a docstring opens with """
        return None
    if sentence.rstrip().endswith(("?", "？")):
        return _asked(sentence)
    hit = _judged_whole(sentence, _request_in(sentence))  # first: most lines ask for nothing
    return (hit[0], hit[1], False) if hit and _QUOTED.fullmatch(whole) else hit  # quoted whole: whose words?


def _asked(sentence: str) -> tuple[str, str, bool] | None:
    """A question that asks for a request ("could you remember that …?", "…覚えておいてくれる？"); other
    questions ask for nothing."""
    verb_last = phrases.asked_after().sub("", sentence)  # "…覚えておいてくれる？" → "…覚えておいて"
    if verb_last == sentence and not phrases.asked_opening().match(sentence):
        return None
    asked = verb_last.rstrip("?？ ")  # the question mark is the asking, not a hypothetical's
    hit = _judged_whole(asked, _request_in(asked))
    return hit if hit and hit[0] in ("remember", "forget") else None  # "can you check why X moved from A to B?"


def _judged_whole(sentence: str, hit: tuple[str, str, bool] | None) -> tuple[str, str, bool] | None:
    """What the whole sentence says about its request: taken back, hypothetical, scoped, pending."""
    joined = None if hit else phrases.and_then().match(sentence)
    if joined:
        hit = _request_in(sentence[joined.end():])  # "also forget …", "und vergiss …": joined to the one before
    if not hit:
        return None  # most sentences: the markers below cost more
    opening = phrases.asked_opening().match(sentence)
    sentence = sentence[opening.end():] if opening else sentence  # "¿puedes …" is no hypothetical "¿…"
    if retracts(sentence) or any(phrases.marker(name).search(sentence) for name in NOT_REQUESTS):
        return None
    if any(_amends(sentence[b.end():], ("keeps", "withdraws")) for b in _CLAUSE_START.finditer(sentence)):
        return hit[0], hit[1], False  # "always squash, no wait, scratch that", "…, but keep the part on Y"
    if any(phrases.marker(name).search(sentence) for name in ("pending", "doubt")):
        return hit[0], hit[1], False  # "as soon as …, drop …", "er meinte, vergiss …": the whole sentence says so
    return hit


# Markers ([not_requests] in data/phrases) of a sentence that asks for nothing, whatever it starts with.
NOT_REQUESTS = ("hypothetical", "scope", "chatter", "not_to_keep", "amends", "keeps", "hopes", "recalls")


def retracts(text: str) -> bool:
    """Whether `text` takes back what was just said ("scratch that", "算了")."""
    return bool(phrases.retraction().match(text.strip()))


def _amends(sentence: str, markers: tuple[str, ...] = ("amends", "narrows", "keeps", "withdraws")) -> bool:
    """It, or a clause of it, takes back, amends or narrows the request just before it: "hmm wait, never mind",
    "scratch that", "sorry, I meant 5433", "*artifacts", "not staging though"."""
    return (retracts(sentence) or any(retracts(sentence[b.end():]) for b in _CLAUSE_START.finditer(sentence))
            or any(phrases.marker(name).search(sentence) for name in markers))


def _request_in(sentence: str) -> tuple[str, str, bool] | None:
    hit = _at_start(sentence)
    if hit and hit[0] != "update":
        return hit
    for boundary in _CLAUSE_START.finditer(sentence):
        led = _at_start(sentence[boundary.end():])
        if led and led[0] in ("forget", "remember"):
            return led  # a lead said outright beats a change read from "X, not Y" without one
    return hit


def _at_start(sentence: str) -> tuple[str, str, bool] | None:
    sentence = sentence.rstrip(" .。!！")
    holds: dict[re.Pattern[str], bool] = {}  # patterns needing the same words share one precheck: searched once
    for kind, pattern, precheck in phrases.request_checks():
        if precheck is not None and precheck not in holds:
            holds[precheck] = precheck.search(sentence) is not None
        if precheck is not None and not holds[precheck]:
            continue  # it holds no text this pattern needs: trying `.+?` at every position would find nothing
        match = pattern.match(sentence)
        if match:
            text = match.group("text").strip().rstrip(".。!！").strip()
            if kind in ("correction", "update") and len(text) < len(sentence):
                inner = read(text)  # "no, remember that …" is a remember request
                if inner and inner[0] not in ("correction", "update"):
                    return inner
            return _judged(kind, text, sentence)
    return None


def _judged(kind: str, text: str, sentence: str) -> tuple[str, str, bool] | None:
    """The request as read, None when it is a task or too short, and whether it is plain."""
    text = phrases.please_after_lead().sub("", text).lstrip(" :：,，;—–-")  # a title never starts with ":"
    if kind == "remember" and phrases.task().match(sentence):
        return None  # "remember to squash", "n'oublie pas de pousser": work for now
    if kind in ("remember", "rule") and phrases.marker("about_memory").search(text):
        return None  # "fyi the memory about the gateway is out of date": talk about memory (noticed)
    if kind == "forget":
        if phrases.not_after("not_forget_after", "forget").match(sentence):
            return None
        if phrases.marker("set_aside").search(sentence) or sentence[:max(0, sentence.find(text))].endswith(_COMMA):
            return None  # "forget about CI for a sec", "esquece, já resolvi": set aside, not unlearned
        text = first_clause(phrases.and_then().sub("", text, count=1))  # "あとLaunchDarklyのメモは忘れて"
    if kind == "rule":
        if phrases.not_after("not_rule_after", "rule").match(text):
            return None  # "never seen that", "don't forget to …", "always fun": not an instruction
        if phrases.opens_with("not_instruction").match(text):
            return None  # "ab jetzt läuft es wieder", "à partir de maintenant, c'est bon": a status
        text = text[0].upper() + text[1:]
    if len(text) < 3:
        return None
    doubtful = (phrases.marker("doubt").search(sentence) or (kind == "rule" and phrases.marker("rule_doubt").search(text))
                or (kind == "remember" and phrases.bare_dont_forget().match(sentence)))
    return kind, text, not doubtful


def gather_requests(sessions: pl.DataFrame | None) -> list[Request]:
    """All requests from user lines, ordered by date, session and position (doubtful ones too).

    An entry's first line is what the user typed; its continuation lines are
    most often pasted (a traceback, a guide, a colleague's message, a git log),
    and a rule or "remember" in them is the pasted text's, not the user's: no
    request is read there (listing each for a person buried the requests the
    user made). The exception is a first line that points at them ("remember
    this:"), whose content they are.
    """
    if sessions is None or sessions.height == 0:
        return []
    users = sessions.filter(pl.col("role") == "user")
    led = pl.col("text").str.contains(phrases.prefilter())
    found = _read_requests(sessions, users.filter(led).sort(["date", "session", "seq"]))
    return _amended_after(found, sessions.filter(pl.col("role").eq("assistant") | pl.col("role").eq("user") & ~led))


def _read_requests(sessions: pl.DataFrame, users: pl.DataFrame) -> list[Request]:
    """The requests in the user lines the quick filter kept, in order."""
    users = users.select("session", "date", "seq", "text")
    found: list[Request] = []
    readings: dict[str, tuple[str, str, bool] | None] = {}  # a line said again (chatter, "ok") is read once
    for session, day, seq, entry in users.iter_rows():
        typed, block = _typed_and_pasted(entry)
        before = len(found)
        for sentence in sentences(typed):
            if found and _just_before(found[-1], str(session), int(seq)) and _amends(sentence):
                found[-1] = replace(found[-1], plain=False)  # taken back or amended: a person decides
            if hit := readings[sentence] if sentence in readings else readings.setdefault(sentence, read(sentence)):
                kind, text, plain = hit
                found.append(Request(RequestKind(kind), text, str(session), day, int(seq), sentence, plain))
        if len(found) > before and phrases.points_ahead().match(found[-1].text):
            found[-1] = _pointing_at(found[-1], block, said_before(sessions, str(session), int(seq)))
    return found


def _amended_after(found: list[Request], rest: pl.DataFrame) -> list[Request]:
    """Requests amended by a user line the quick filter passed over ("äh, ich meinte 5433", "*5433") or left open by
    the assistant asking which one ("the gateway or the database?"): a person decides. Only the next lines count."""
    last = {(r.session, r.seq): i for i, r in enumerate(found) if r.plain}  # each entry's last request
    if not last:
        return found
    keys = pl.DataFrame({"session": [s for s, q in last for _ in range(_RETRACTION_REACH)],
                         "seq": [q + step for _, q in last for step in range(1, _RETRACTION_REACH + 1)]},
                        schema={"session": rest.schema["session"], "seq": rest.schema["seq"]})
    near = rest.join(keys.unique(), on=["session", "seq"], how="semi").select("session", "seq", "role", "text")
    for session, seq, role, entry in near.iter_rows():
        if not (phrases.marker("asks_which").search(entry) if role == "assistant"
                else any(_amends(sentence) for sentence in sentences(_typed_and_pasted(entry)[0]))):
            continue
        for step in range(1, _RETRACTION_REACH + 1):
            i = last.get((str(session), int(seq) - step))
            if i is not None:
                found[i] = replace(found[i], plain=False)
                break
    return found


def _typed_and_pasted(entry: str) -> tuple[str, str]:
    typed, _, rest = entry.partition("\n")
    return typed, "\n".join(line.strip() for line in rest.splitlines() if line.strip())


def said_before(sessions: pl.DataFrame, session: str, seq: int) -> str:
    """The assistant's entry just before a user's (rarely needed: only for a request that points at it)."""
    before = sessions.filter((pl.col("session") == session) & (pl.col("seq") == seq - 1)
                             & (pl.col("role") == "assistant"))
    return str(before["text"][0]) if before.height else ""


def _pointing_at(request: Request, block: str, said_before: str) -> Request:
    """"remember this, it's our release checklist now:" and the lines below it: one memory holding them.

    With nothing below, "this" means something said before ("yes, remember that", answering the
    assistant's offer): the words would be the assistant's, not the user's, so a person decides.
    """
    if not block or request.kind not in ("remember", "rule"):
        return replace(request, plain=False, answers="" if block else said_before)
    heading = re.split(r"[,，—–-]", request.text.rstrip(" :："), maxsplit=1)[1:]
    content = "; ".join(block.splitlines())
    text = f"{heading[0].strip()}: {content}" if heading and heading[0].strip() else content
    return replace(request, text=text, sentence=f"{request.sentence} {content}")


def _just_before(request: Request, session: str, seq: int) -> bool:
    """The request was said in this line or in the user's line before it (an answer may lie between)."""
    return request.session == session and seq - request.seq <= _RETRACTION_REACH


_RETRACTION_REACH = 2  # entries: the user's previous line, and the assistant's reply to it
