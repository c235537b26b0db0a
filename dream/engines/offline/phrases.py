"""Request phrases as data: one file per language under ``data/phrases/``.

Each file lists the leads people start a request with (remember, forget, correction, rule), the words around them
(``that``, ``about``, negations, the verbs of a change), what makes a sentence *not* a request (a task, a scope, a
hypothetical, small talk), and whole patterns for languages whose verb comes last; and, under [dates], the relative
dates dates.py makes absolute. The request patterns and the pre-filter are built here from the same lists, so they
cannot drift apart: every line a pattern accepts holds one of the words the pre-filter looks for
(tests/engines/offline checks it with generated lines). Adding a language is adding a file.
"""

from __future__ import annotations

import re
import re._constants as sre  # type: ignore[import-not-found]  # opcodes: `required_text` reads a parse
import re._parser as sre_parser  # type: ignore[import-not-found]  # (typeshed stubs only sre_parse)
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from dream.engines.offline import phrase_schema
from dream.errors import BadInput

# Request kinds in the order their patterns are tried: the first that matches wins.
# (kind, lead list, template for languages that space their words, template for those that do not)
_TEMPLATES: list[tuple[str, str, str | None, str | None]] = [
    # A request asked as a question ([words] `asked`: "could you", "kannst du", "¿puedes"), with the lead's
    # form said after it ("remember", "dir merken", "guardar en memoria"). A remember needs its that-word
    # there: "can you remember the port?" asks to recall, "can you remember that the port is 5433?" to keep.
    ("remember", "asked_remember", r"^{asked}(?:{leads})(?:\s*,)?\s+(?:{that})\s+(?P<text>.+?)[\s?？]*$", None),
    ("forget", "asked_forget", r"^{asked}(?:{leads})(?:\s+(?:{about}))?[\s:,]+(?P<text>.+?)[\s?？]*$", None),
    # "don't forget that X" before forget and rule, which it would match too
    ("remember", "dont_forget", r"^(?:(?:{please})[\s,]+)*(?:{leads})(?:\s*,)?(?:\s+(?:{that}))?[\s:,]+(?P<text>.+)$", None),
    ("forget", "forget", r"^(?:(?:{please})[\s,]+)*(?:{leads})(?:\s+(?:{about}))?[\s:,]+(?P<text>.+)$",
     r"^(?:{leads})[\s:：,，]*(?P<text>.+)$"),
    ("remember", "remember", r"^(?:(?:{please})[\s,]+)*(?:{leads})(?:\s+(?:{that}))?[\s:,]+(?P<text>.+)$",
     r"^(?:{leads})[\s:：,，]*(?P<text>.+)$"),
    ("correction", "correction_marked", r"^(?:{leads})\s*[,:;.!-]\s*(?P<text>.+)$", None),
    ("correction", "correction", r"^(?:{leads})\s*[,:;.!-]?\s+(?P<text>.+)$",
     r"^(?:{leads})[\s:：,，、]*(?P<text>.+)$"),
    ("rule", "from_now_on", r"^(?:{leads})[\s,:]+(?P<text>.+)$", r"^(?:{leads})[\s:：,，]*(?P<text>.+)$"),
    ("rule", "rule", r"^(?P<text>(?:{leads})\s+.+)$", r"^(?P<text>(?:{leads}).+)$"),
]


@dataclass(frozen=True)
class Language:
    code: str
    spaced: bool
    leads: dict[str, list[str]]
    words: dict[str, list[str]]
    not_requests: dict[str, list[str]]
    patterns: list[dict[str, Any]] = field(default_factory=list)
    dates: dict[str, Any] = field(default_factory=dict)  # [dates]: relative date rows and words (dates.py)


def phrases_dir() -> Path:
    return Path(str(files("dream.engines.offline.phrases_data")))


@cache
def languages(folder: str | None = None) -> tuple[Language, ...]:
    """Every language file, English first (its patterns are tried first), then by code."""
    paths = sorted(Path(folder or phrases_dir()).glob("*.toml"), key=lambda p: (p.stem != "en", p.stem))
    if not paths:
        raise BadInput(f"{folder or phrases_dir()}: no phrase files (*.toml)")
    return tuple(_load(path) for path in paths)


def _load(path: Path) -> Language:
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{path}: cannot read phrases: {exc}") from None
    phrase_schema.check(path, text, data)  # a misspelt key, a kind or `means` it does not know fails here, with its line
    return Language(path.stem, bool(data.get("spaced", True)), data.get("leads") or {}, data.get("words") or {},
                    data.get("not_requests") or {}, data.get("pattern") or [], data.get("dates") or {})


def _alternation(phrases: list[str]) -> str:
    """Longest first, so that "recuérdalo" is tried before "recuerda"."""
    return "|".join(re.escape(p) for p in sorted(set(phrases), key=lambda p: (-len(p), p)))


def words(name: str, langs: tuple[Language, ...] | None = None) -> list[str]:
    return sorted({w for lang in langs or languages() for w in lang.words.get(name, [])})


def _pattern_regex(lang: Language, item: dict[str, Any]) -> str:
    return item["regex"].replace("{change_verbs}", _alternation(lang.words.get("change_verbs", [])))


def _needs(lang: Language, item: dict[str, Any]) -> list[str]:
    """What every line a whole pattern accepts holds: its `needs`, or the change verbs it names."""
    needs = item.get("needs")
    if needs:
        return list(needs)
    if "{change_verbs}" in item["regex"]:
        return list(lang.words.get("change_verbs", []))
    raise BadInput(f"phrases {lang.code}: pattern {item['regex'][:40]!r} needs `needs` (words it always holds)")


@cache
def request_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(kind, pattern) in the order they are tried; group "text" is what the request is about."""
    return tuple((kind, pattern) for kind, pattern, _ in request_checks())


# A sentence in which a pattern cannot match, told cheaply: None, or a search for text every match holds.
Precheck = re.Pattern[str] | None


@cache
def request_checks() -> tuple[tuple[str, re.Pattern[str], Precheck], ...]:
    """(kind, pattern, precheck) in the order they are tried.

    Template patterns start with their leads and fail at once on a sentence
    that does not; whole patterns ("X を忘れて", "X, not Y now") try `.+?` at
    every position, so each is first looked for by the text it cannot match
    without (`required_text`), read off the pattern itself.
    """
    langs = languages()
    found: list[tuple[str, re.Pattern[str], Precheck]] = []
    for kind, key, spaced_template, unspaced_template in _TEMPLATES:
        for spaced, template in ((True, spaced_template), (False, unspaced_template)):
            leads = [lead for lang in langs if lang.spaced == spaced for lead in lang.leads.get(key, [])]
            if template and leads:
                filled = template.format(leads=_alternation(leads), that=_alternation(words("that")) or "(?!)",
                                         about=_alternation(words("about")) or "(?!)", please=_please(),
                                         asked=_asked_opening())
                found.append((kind, re.compile(filled, re.I), None))
        found += [_whole(kind, _pattern_regex(lang, item)) for lang in langs for item in lang.patterns
                  if item["kind"] == kind and _first_template(item["kind"]) == key]
    found += [_whole(item["kind"], _pattern_regex(lang, item)) for lang in langs for item in lang.patterns
              if item["kind"] == "update"]
    return tuple(found)


def _whole(kind: str, regex: str) -> tuple[str, re.Pattern[str], Precheck]:
    needed = required_text(regex) if _scans(list(sre_parser.parse(regex, re.I))) else None
    return kind, re.compile(regex, re.I), needle_search(needed) if needed else None


@cache
def needle_search(needles: tuple[str, ...]) -> re.Pattern[str]:
    """A search for any of `needles`, case-insensitively, that skips in C the places no needle can start.

    A plain case-insensitive alternation tries every needle at every position (Python's re
    skips ahead only by characters compared with their case). Here each match starts with
    one character of a case-sensitive class, the *gate*, and a lookbehind then compares it
    with the needle's first character case-insensitively: the same matches. The gate holds
    both cases of an ASCII first character and every non-ASCII character (an "ı" or "ſ" may
    match "i" or "s" without case), and a first character without case ("か", "切") is
    only itself. Needles that all start without case need no gate (re skips to them already);
    a non-ASCII first character with case ("é") gates nothing: both get the plain alternation.
    """
    firsts = {needle[0] for needle in needles}
    cased = {c for c in firsts if not c.lower() == c == c.upper()}
    if not cased or not all(c.isascii() for c in cased):  # without case, re finds the needles' starts itself
        return re.compile("|".join(map(re.escape, needles)), re.I)
    gated = {case for c in firsts if c.isascii() for case in (c.lower(), c.upper())}
    gate = "[^" + "".join(re.escape(chr(c)) for c in range(128) if chr(c) not in gated) + "]"
    tails = "|".join(f"(?<={re.escape(needle[0])}){re.escape(needle[1:])}" for needle in needles)
    return re.compile(f"{gate}(?i:{tails})")


_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _scans(items: list[tuple[Any, Any]]) -> bool:
    """Whether a pattern opens (after ^ and optional parts) with `.*` or `.+?`, so a failing match is tried at
    every position; one that opens with its leads fails at once, and needs no precheck."""
    for op, av in items:
        if op is sre.AT:
            continue
        if op is sre.SUBPATTERN:
            return _scans(list(av[3]))
        if op in _REPEATS:
            body = list(av[2])
            if body and (body[0][0] is sre.ANY or _scans(body)):
                return True  # `.*?` or an optional part that opens with one: "(?:.*?\b)?jetzt\b"
            if av[0] == 0:
                continue  # optional: what follows decides
        return False
    return False


def required_text(regex: str) -> tuple[str, ...] | None:
    """Texts one of which every match of `regex` holds (None: none found): its literal runs, the
    alternatives of a group that must match, a repeat taken at least once. The longest such choice."""
    return _required(list(sre_parser.parse(regex, re.I)))


def _required(items: list[tuple[Any, Any]]) -> tuple[str, ...] | None:
    choices: list[tuple[str, ...]] = []
    run: list[str] = []
    for op, av in items:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            choices.append(("".join(run),))
            run = []
        found = _required_in(op, av)
        if found:
            choices.append(found)
    if run:
        choices.append(("".join(run),))
    return max(choices, key=lambda texts: min(map(len, texts)), default=None)


def _required_in(op: Any, av: Any) -> tuple[str, ...] | None:
    """What one element of a parsed pattern cannot match without; None when it may match nothing (a lookaround,
    a class, an optional part)."""
    if op is sre.SUBPATTERN:
        return _required(list(av[3]))
    if op is sre.ATOMIC_GROUP:
        return _required(list(av))
    if op in _REPEATS and av[0] >= 1:
        return _required(list(av[2]))
    if op is sre.BRANCH:
        each = [_required(list(alternative)) for alternative in av[1]]
        if all(each):
            return tuple(sorted({text for texts in each if texts for text in texts}))
    return None


@cache
def please_after_lead() -> re.Pattern[str]:
    """A politeness word said right after the lead ("vergiss bitte die Notiz", "olvida por favor …"): not
    part of what is named."""
    return re.compile(rf"^(?:{_please()})(?!\w)\s*", re.I)  # the punctuation after it: requests._judged


@cache
def bare_dont_forget() -> re.Pattern[str]:
    """"don't forget the changelog": a don't-forget lead with neither a that-word nor a colon after it.

    As often a reminder for the task at hand as a fact to keep, so a person
    decides; "don't forget that …" and "don't forget: …" say a fact.
    """
    leads = [lead for lang in languages() if lang.spaced for lead in lang.leads.get("dont_forget", [])]
    that = _alternation(words("that")) or "(?!)"
    return re.compile(rf"^(?:(?:{_please()})\s+)?(?:{_alternation(leads) or '(?!)'})\s+(?!(?:{that})(?!\w))[^\s:：]",
                      re.I)


@cache
def lead_alone() -> re.Pattern[str]:
    """A remember lead said as a sentence of its own, its content in the next one: "remember!!! staging
    db = port 5433", "remember... the db is on 5433", "覚えておいて！！ステージング…". Group "lead"."""
    parts = []
    for spaced in (True, False):
        leads = [lead for lang in languages() if lang.spaced == spaced for lead in lang.leads.get("remember", [])]
        if leads:
            please = rf"(?:(?:{_please()})[\s,]+)*" if spaced else ""
            parts.append(rf"{please}(?:{_alternation(leads)})")
    # marks of emphasis only: after a plain "." ("remember. that was a long day") a new sentence starts
    return re.compile(rf"^(?P<lead>{'|'.join(parts) or '(?!)'})\s*(?:[!！:：]|\.{{2,}}|…)+$", re.I)


@cache
def emphasis() -> re.Pattern[str]:
    """A word of emphasis and its mark before a request ([words] `emphasis`: "IMPORTANT:", "wichtig!"): not
    part of the request."""
    return re.compile(rf"^(?:{_alternation(words('emphasis')) or '(?!)'})\s*[:：!！]+\s*", re.I)


@cache
def and_then() -> re.Pattern[str]:
    """A word joining a request to the one before it ("also", "und", "あと"): not part of the request.

    In languages that space their words it must be followed by a space or a
    mark, so "y" or "e" never eats the start of a word.
    """
    parts = []
    for lang in languages():
        joining = lang.words.get("and_then", [])
        if joining:
            end = r"(?:[\s,，、:]+)" if lang.spaced else r"[\s,，、:]*"
            parts.append(rf"(?:{_alternation(joining)}){end}")
    return re.compile(rf"^(?:{'|'.join(parts) or '(?!)'})", re.I)


def _asked_opening() -> str:
    """What opens a request asked as a question, up to its lead: "could you please ", "¿me puedes "."""
    return rf"[¿¡]?\s*(?:(?:{_please()})\s+)?(?:{_alternation(words('asked')) or '(?!)'})(?:\s+(?:{_please()}))?,?\s+"


@cache
def asked_opening() -> re.Pattern[str]:
    return re.compile(_asked_opening(), re.I)


@cache
def asked_after() -> re.Pattern[str]:
    """What closes a request asked as a question where the verb comes last ([words] `asked_after`): "…覚えて
    おいてくれる？", "… 기억해 줄래?". Removed, the rest reads as the request itself."""
    endings = [w for lang in languages() if not lang.spaced for w in lang.words.get("asked_after", [])]
    return re.compile(rf"\s*(?:{_alternation(endings) or '(?!)'})\s*[?？]\s*$", re.I)


def _please() -> str:
    """The politeness words a request may open with, in every language ("please", "pls", "bitte")."""
    return _alternation(words("please")) or "(?!)"


def _first_template(kind: str) -> str | None:
    """Whole patterns of a kind are tried right after the template of that kind's main leads."""
    return {"forget": "forget", "remember": "remember"}.get(kind)


@cache
def prefilter() -> str:
    """A regex (for polars) that every line holding a request matches: its leads and needed words.

    Leads of spaced languages are whole words (every template puts a space or
    a mark after them); the rest, and the words whole patterns need, are
    looked for anywhere.
    """
    parts = []
    for lang in languages():
        for key, leads in lang.leads.items():
            for lead in leads:
                parts.append(rf"\b{_folded(lead)}" if lang.spaced and lead[:1].isalnum() else _folded(lead))
        for item in lang.patterns:
            parts += [_folded(word) for word in _needs(lang, item)]
    return "(?i)" + "|".join(sorted(set(parts)))


def _folded(text: str) -> str:
    """`text` escaped, with the dotless and dotted i of Turkish ("HATIRLA", "İPTAL") as Python's re folds them.

    polars' regex folds case simply, so "ı" never matches "I" there, while the
    request patterns (Python's re) take them as one letter.
    """
    return "".join(_TURKISH_I.get(c, re.escape(c)) for c in text)


_TURKISH_I = {"ı": "[ıI]", "i": "[iİ]", "I": "[Iı]", "İ": "[İi]"}


@cache
def marker(name: str) -> re.Pattern[str]:
    """One pattern for a [not_requests] list of every language (never matches when all are empty)."""
    found = [f"(?:{regex})" for lang in languages() for regex in lang.not_requests.get(name, [])]
    return re.compile("|".join(found) or "(?!)", re.I)


@cache
def retraction() -> re.Pattern[str]:
    """A sentence or clause that starts by taking back what came before it ([leads] `retract`).

    In languages that space their words the phrase ends the clause: "forget
    that, I'll decide later" takes back, "forget that every PR needs two" asks.
    An interjection may open it ([words] `filler`: "ugh, ignore that", "ay no,
    olvida eso", "あ、やっぱ今のなし").
    """
    parts = []
    for lang in languages():
        leads = lang.leads.get("retract", [])
        if leads:
            end = r"(?=\s*(?:[^\w\s]|$))" if lang.spaced else ""
            gap = r"(?:\s+|\s*[^\w\s]+\s*)" if lang.spaced else r"[^\w]*"
            fillers = lang.words.get("filler", [])
            opening = rf"(?:(?:{_alternation(fillers)}){gap})*" if fillers else ""
            parts.append(rf"{opening}(?:{_alternation(leads)}){end}")
    return re.compile(rf"^[\W_]*(?:{'|'.join(parts) or '(?!)'})", re.I)


@cache
def not_after(name: str, key: str) -> re.Pattern[str]:
    """Leads of `key` followed by a word of the [words] list `name`: "never seen", "忘了说"."""
    parts = []
    for lang in languages():
        leads, following = lang.leads.get(key, []), lang.words.get(name, [])
        if leads and following:
            gap = r"\s+" if lang.spaced else r"\s*"
            end = r"(?!\w)" if lang.spaced else ""
            parts.append(rf"^(?:{_alternation(leads)}){gap}(?:{_alternation(following)}){end}")
    return re.compile("|".join(parts) or "(?!)", re.I)


@cache
def opens_with(name: str) -> re.Pattern[str]:
    """A text that opens with a word of the [words] list `name` (a whole word where words are spaced)."""
    parts = []
    for lang in languages():
        found = lang.words.get(name, [])
        if found:
            end = r"(?!\w)" if lang.spaced else ""
            parts.append(rf"(?:{_alternation(found)}){end}")
    return re.compile(rf"^(?:{'|'.join(parts) or '(?!)'})", re.I)


@cache
def task() -> re.Pattern[str]:
    """A remember lead followed by an action in its own language: "remember to squash", "recuerda hacer…"."""
    parts = []  # one per language: its leads, then any of its tasks (the opening is every language's, said once)
    for lang in languages():
        leads = lang.leads.get("remember", []) + lang.leads.get("dont_forget", []) + lang.leads.get("asked_remember", [])
        tasks = lang.not_requests.get("task", [])
        if leads and tasks:
            parts.append(rf"(?:{_alternation(leads)})(?:\s*,)?\s*(?:{'|'.join(f'(?:{regex})' for regex in tasks)})")
    return re.compile(rf"^(?:{_asked_opening()})?(?:(?:{_please()})\s+)?(?:{'|'.join(parts)})" if parts else "(?!)", re.I)


@cache
def negation() -> re.Pattern[str]:
    """Every negation form: a rule with one says the opposite of the same rule without."""
    return _words_pattern(lambda lang: lang.words.get("negation", []))


@cache
def polar() -> re.Pattern[str]:
    """Negations and the rule leads ("always", "siempre"): what two opposite rules differ by."""
    return _words_pattern(lambda lang: lang.words.get("negation", []) + lang.leads.get("rule", []))


def _words_pattern(pick) -> re.Pattern[str]:  # type: ignore[no-untyped-def]
    spaced = [w for lang in languages() if lang.spaced for w in pick(lang)]
    unspaced = [w for lang in languages() if not lang.spaced for w in pick(lang)]
    parts = [rf"(?<!\w)(?:{_alternation(spaced)})(?!\w)"] if spaced else []
    parts += [f"(?:{_alternation(unspaced)})"] if unspaced else []
    return re.compile("|".join(parts) or "(?!)", re.I)


@cache
def points_ahead() -> re.Pattern[str]:
    """A request's text that only points elsewhere ([words] `pointer`, maybe after `yes` words): at the block
    pasted below ("this:", "esto, es la regla nueva del equipo:", "the following") or at what the assistant
    just offered ("yes, remember that", "はい、覚えておいて"). Its content, if any, is the block below."""
    ends = r"\s*(?:[:：]\s*|[,，—–-][^:：.!?。]*[:：]\s*)?$"
    parts = []
    for spaced in (True, False):
        yes, pointer = (_alternation([w for lang in languages() if lang.spaced == spaced
                                      for w in lang.words.get(key, [])]) for key in ("yes", "pointer"))
        edge = r"(?!\w)" if spaced else ""
        answers = rf"(?:(?:{yes}){edge}[\W_]*)*" if yes else ""
        parts += [rf"{answers}(?:{pointer}){edge}{ends}"] if pointer else []
        parts += [rf"(?:(?:{yes}){edge}[\W_]*)+$"] if yes else []
    return re.compile(rf"^[\W_]*(?:{'|'.join(parts) or '(?!)'})", re.I)


def language_of(text: str) -> str | None:
    """The language whose small words (`function`, `negation`, rule leads) `text` uses most, if any."""
    spaced = {w.lower() for w in re.findall(r"\w+(?:'\w+)?", text)}
    best, most = None, 0
    for lang, small in _small_words():
        found = len(spaced & small) if lang.spaced else sum(w in text for w in small)
        if found > most:
            best, most = lang.code, found
    return best


@cache
def _small_words() -> tuple[tuple[Language, frozenset[str]], ...]:
    return tuple((lang, frozenset(w.lower() for key in ("function", "negation") for w in lang.words.get(key, []))
                  | frozenset(w.lower() for w in lang.leads.get("rule", []))) for lang in languages())


def alternation(name: str) -> str:
    """One [words] list of every language as a regex alternation, longest first ("nicht mehr" before "nicht")."""
    return _alternation(words(name)) or "(?!)"


def change_verbs(spaced: bool) -> str:
    """The verbs of "X moved from A to B", as one alternation, for corrections.py."""
    return _alternation([w for lang in languages() if lang.spaced == spaced for w in lang.words.get("change_verbs", [])])
