"""Relative dates ("yesterday", "上周", "gestern" …) made absolute.

A note that says "the deploy broke yesterday" is wrong a day later. We find relative expressions with a curated regex
per language (so that we know exactly what we touch; the rows, weekday names and the words a date is written with are
data, the [dates] table of each file in data/phrases), let `dateparser` compute the date from the note's source date
(`RELATIVE_BASE`), and write it in ISO form at the granularity the phrase had: a day (2026-03-03), a week (2026-W09),
a month (2026-02) or a year (2026). Code spans, code blocks, link targets and URLs are left alone. A phrase that
names no one date ("next Friday" said on a Tuesday is read as 3 days on and as 10) is left as written and returned
apart, for the report to name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import cache, lru_cache
from typing import Any, NamedTuple

from dream.engines.offline.phrases import Language, languages
from dream.engines.offline.text import QUOTATION

@dataclass(frozen=True)
class Row:
    """One [[dates.row]] of a language's phrase file: a regex and what it names."""

    regex: str
    lang: str
    means: str  # day | week | month | year | weekday (a named day, resolved here)
    own_text_only: bool  # read only in text that reads as its language ("hier": French yesterday, German here)


@cache
def _langs() -> tuple[Language, ...]:
    return tuple(lang for lang in languages() if lang.dates)


@cache
def rows() -> tuple[Row, ...]:
    """Every language's date rows, in the order of the phrase files (English first)."""
    found = []
    for lang in _langs():
        table = lang.dates
        fill = {"weekdays": "|".join(table.get("weekdays", [])) or "(?!)", "number": table.get("number", "(?!)")}
        for row in table.get("row", []):
            regex = re.sub(r"\{(weekdays|number)\}", lambda m: fill[m.group(1)], row["regex"])
            found.append(Row(regex, lang.code, row["means"], bool(row.get("only_in_own_text"))))
    return tuple(found)


def _table(key: str) -> dict[str, Any]:
    """One [dates] key of every language that has it, by language code."""
    return {lang.code: lang.dates[key] for lang in _langs() if key in lang.dates}


@cache
def _table_words(key: str) -> frozenset[str]:
    """Every language's words of one [dates] list ("this", "next", "last")."""
    return frozenset(w for words in _table(key).values() for w in words)


@cache
def _pattern(text_lang: str | None) -> tuple[re.Pattern[str], tuple[Row, ...]]:
    """The pattern for text that reads as `text_lang` (None: no language in particular), with its rows; a row of
    a spaced language matches whole words only."""
    chosen = tuple(r for r in rows() if not r.own_text_only or r.lang == text_lang)
    edges = {lang.code: (r"(?<![\w-])", r"(?![\w-])") if lang.spaced else ("", "") for lang in _langs()}
    return re.compile("|".join(f"(?P<p{n}>{edges[r.lang][0]}(?:{r.regex}){edges[r.lang][1]})"
                               for n, r in enumerate(chosen)), re.I), chosen


# Spans never rewritten: inline code, link targets, URLs, paths, dotted names ("Tomorrow.io", "next.config.js"),
# names and settings (#today, @tomorrow, :tomorrow, TODAY=1, --since yesterday), and quotations: "we'll fix it
# tomorrow" in a quote, or a commit's message after its hash or `-m`, is what someone wrote then, not a date to resolve.
_PROTECTED = re.compile(rf"(`+)[^`]*?\1|\]\([^)]*\)|\b\w+://\S+|\b[\w-]+(?:\.[\w-]+)+|[^\s/]*/[^\s/]+/?|{QUOTATION}"
                        r"|[#@$]\w[\w-]*|(?<!\S):[a-z][\w-]*|\b\w+=\S*|(?<![\w-])--[a-z][\w-]*[= ]\S+"
                        r"|\b(?=\d*[a-f])(?=[a-f]*\d)[\da-f]{7,40}\b.*|(?<!\S)-m\s.*")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


@cache
def _protected() -> re.Pattern[str]:
    """What no rewrite touches: `_PROTECTED`, and the phrases [dates] `unresolved` of every language."""
    phrases = sorted({p for lang in _langs() for p in lang.dates.get("unresolved", [])}, key=len, reverse=True)
    unresolved = "|".join(re.escape(p) for p in phrases) or "(?!)"
    return re.compile(rf"{_PROTECTED.pattern}|(?P<unresolved>{unresolved})", re.I)  # after: `\1` stays the backticks


@cache
def _telltales() -> dict[str, re.Pattern[str]]:
    return {code: re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, words))})(?!\w)", re.IGNORECASE)
            for code, words in _table("telltale").items()}


def text_language(text: str) -> str | None:
    """For rows read in their own language ("hier"): the language with over 3 telltales, twice any other's."""
    counts = {code: len(pattern.findall(text)) for code, pattern in _telltales().items()}
    for code, count in counts.items():
        others = max((c for other, c in counts.items() if other != code), default=0)
        if count > max(3, 2 * others):
            return code
    return None


Rewrite = NamedTuple("Rewrite", [("line", int), ("phrase", str), ("absolute", str)])

@dataclass
class Unresolved:
    """A relative date left as written: it names no one date (`why` says what it may be)."""

    phrase: str
    why: str
    line: int = 0


def _format(day: date, granularity: str) -> str:
    return {"week": "{0}-W{1:02d}".format(*day.isocalendar()), "month": f"{day.year:04d}-{day.month:02d}",
            "year": f"{day.year:04d}"}.get(granularity, day.isoformat())


@lru_cache(maxsize=4096)
def resolve(phrase: str, lang: str, granularity: str, base: date) -> str | None:
    """The absolute form of `phrase` written on `base`, or None if unknown."""
    if granularity == "weekday":
        return _weekday_date(phrase, base)
    cleaned = phrase.lower().replace("’", "'")
    cleaned = _table("read_as").get(lang, {}).get(cleaned, cleaned)
    import dateparser  # start-up: 0.1-0.2 s (its regex module compiles on import), paid only when a phrase is found

    settings = {"RELATIVE_BASE": datetime.combine(base, time(12)), "RETURN_AS_TIMEZONE_AWARE": False}
    parsed = dateparser.parse(cleaned, languages=[lang], settings=settings)
    if parsed is None:
        return None
    day = parsed.date()
    shift = _table("year_shift").get(lang, {}).get(cleaned)
    if granularity == "year" and shift is not None:  # dateparser does not shift 去年 and 明年 by a year
        day = base.replace(year=base.year + shift, month=1, day=1)
    return _format(day, granularity)


def weekday_phrase(phrase: str) -> tuple[str, int] | None:
    """("this" | "next" | "last" | "", weekday number) for "next Friday", "el próximo viernes", "ce lundi" …
    ([dates] `this`; `next` and `last` are stems: "nächst" for "nächsten"); else None."""
    words = phrase.lower().replace("-feira", "").split()
    padded = f" {' '.join(words)} "
    for names in _table("weekdays").values():
        for number, name in enumerate(names):
            if name in words and len(words) > 1:
                said = [key for key in ("next", "last") if any(w in padded for w in _table_words(key))]
                return ("this" if any(w in _table_words("this") for w in words) else (said + [""])[0]), number
    return None


def weekdays_named(text: str) -> frozenset[int]:
    """The weekdays `text` names, in any language of data/phrases, as numbers (Monday 0): "releases ship
    on Thursdays" and "on ne publie plus le jeudi" both name 3."""
    said = re.findall(r"\w+", text.lower())
    return frozenset(number for names in _table("weekdays").values() for number, name in enumerate(names)
                     for word in said if word.startswith(name))


def _weekday_date(phrase: str, base: date) -> str | None:
    """The coming such weekday; "next" on that very weekday means a week on, "this" means today."""
    said, target = weekday_phrase(phrase) or ("", -1)
    ahead = (target - base.weekday()) % 7
    return None if target < 0 else (base + timedelta(days=ahead if said == "this" or ahead else 7)).isoformat()


# How a date reads in place of the phrase, so the sentence stays grammatical ([dates] `*_form`):
# "broke yesterday" → "broke on 2026-03-03", "in use today" → "in use as of 2026-03-04",
# "asked last week" → "asked in the week of 2026-02-23". No preposition is added after one.
@cache
def _after_preposition() -> re.Pattern[str]:
    words = sorted({w for found in _table("prepositions").values() for w in found}, key=lambda w: (-len(w), w))
    return re.compile(rf"(?:^|\s)(?:{'|'.join(map(re.escape, words)) or '(?!)'})\s*$", re.I)


def phrased(phrase: str, absolute: str, lang: str, granularity: str, before: str, after: str = "") -> str:
    """The absolute date as words that can stand where `phrase` stood (`before` and `after` it: its clause)."""
    opens = not before.strip() or before.rstrip()[-1] in ":;,.!?—–-"  # "tomorrow is the deadline": the subject
    bare = bool(_after_preposition().search(before) or opens and re.match(_table("subject").get(lang) or "(?!)", after))
    if granularity == "week":
        monday = date.fromisoformat(absolute) if len(absolute) == 10 else None
        day = (monday - timedelta(days=monday.weekday())).isoformat() if monday else absolute
        text = (_table("bare_week_form" if bare else "week_form").get(lang) or "{}").format(day)
    elif granularity == "day":
        today = phrase.lower() in _table("today_words").get(lang, []) and re.search(  # "in use today": as of;
            _table("state").get(lang) or "(?!)", before, re.I)  # "we decided today", "we deploy today": on
        form = (_table("today_form").get(lang) if today else None) or _table("day_form").get(lang) or "{}"
        text = absolute if bare else form.format(absolute)
    else:
        text = absolute if bare else (_table("month_year_form").get(lang) or "{}").format(absolute)
    return text[:1].upper() + text[1:] if phrase[:1].isupper() and not before.strip() else text


def _rewrite_segment(segment: str, base: date, patterned: tuple[re.Pattern[str], tuple[Row, ...]],
                     found: list[tuple[str, str]], left: list[Unresolved], said: str = "") -> str:
    pattern, chosen = patterned

    def replace(match: re.Match[str]) -> str:
        phrase = match.group(0)
        row = _reader(chosen[int((match.lastgroup or "g0")[1:])], match, said)  # all named groups: one matched
        if row is None:
            left.append(Unresolved(phrase, "is a word of two languages, and the line reads as neither"))
            return phrase
        lang, granularity = row.lang, row.means
        if _joined("before").search(segment, max(0, match.start() - 40), match.start()) or _joined("after").match(
                segment, match.end()):  # "two weeks from tomorrow", "next week Monday": rewritten alone, wrong
            left.append(Unresolved(phrase, "is part of a longer date phrase"))
            return phrase
        if ambiguous(phrase, base):  # a wrong date is worse than a relative one: kept, and said why
            left.append(Unresolved(phrase, "may be " + " or ".join(readings(phrase, base))))
            return phrase
        if granularity == "day" and re.search("|".join(_table("small_hours").values()) or "(?!)", segment, re.I):
            left.append(Unresolved(phrase, "was said around midnight: the day it counts from is not certain"))  # 1am
            return phrase
        if granularity == "week" and base.weekday() == 6:  # a week that starts on Sunday starts that very day
            left.append(Unresolved(phrase, "was said on a Sunday: its week may start that day or the next"))
            return phrase
        day_of_week = resolve(phrase, lang, "day", base) if granularity == "week" else None
        absolute = resolve(phrase, lang, granularity, base)
        if absolute is None:
            left.append(Unresolved(phrase, "could not be read as a date"))
            return phrase
        found.append((phrase, absolute))
        shown = "day" if granularity == "weekday" else granularity
        return phrased(phrase, day_of_week or absolute, lang, shown, segment[:match.start()], segment[match.end():])

    return pattern.sub(replace, segment)


def _reader(row: Row, match: re.Match[str], said: str) -> Row | None:
    """The row that reads a match: a word two languages share ("morgen": Dutch and German tomorrow) reads in the
    one whose telltales its text and the sentence it was `said` in hold more of; on a tie, in none."""
    rivals = [r for r in rows() if (m := re.compile(r.regex, re.I).match(match.string, match.start())) and
              m.end() == match.end()] or [row]
    counts = [len(_telltales()[r.lang].findall(f"{match.string} {said}")) if r.lang in _telltales() else 0
              for r in rivals]
    return rivals[counts.index(max(counts))] if len(rivals) == 1 or counts.count(max(counts)) == 1 else None


_ISO = r"\d{4}-\d\d-\d\d"  # a date beside the phrase says which day it means; a weekday "Tuesday of"


@cache
def _joined(side: str) -> re.Pattern[str]:
    """What joins a relative date to a longer one: [dates] `joined_*`, weekday names, an apostrophe after it."""
    joined, days = ("|".join(sorted({re.escape(w) for lang in _langs() for w in lang.dates.get(key, [])}, key=len,
                                    reverse=True)) or "(?!)" for key in (f"joined_{side}", "weekdays"))
    return re.compile(rf"(?<!\w)(?:(?:{joined})\W*|(?:{days})\w*\W*(?:\w{{1,3}}\W+)?|{_ISO}\W{{0,3}})$"
                      if side == "before" else rf"['’]|\s*(?:{joined}|{days})|\W{{0,3}}{_ISO}", re.I)


def ambiguous(phrase: str, base: date) -> bool:
    """Read two ways: "next Friday" on a Tuesday (3 or 10 days; any "next" on a Sunday), "this Monday" on a Wed."""
    said, target = weekday_phrase(phrase) or ("", 0)
    soon = target >= base.weekday() or base.weekday() == 6
    return said != "" and (soon if said == "next" else target < base.weekday())


def readings(phrase: str, base: date) -> tuple[str, str]:
    """The two dates an ambiguous weekday phrase is read as, a week apart: "next" the coming such day and a
    week later, "this" this week's and the coming one, "last" the gone one and the one a week before."""
    said, target = weekday_phrase(phrase) or ("next", 0)
    ahead = (target - base.weekday()) % 7 or 7
    near = base + timedelta(days={"next": ahead, "this": target - base.weekday(), "last": ahead - 7}.get(said, 0))
    first, second = sorted((near, near + timedelta(days=-7 if said == "last" else 7)))
    return first.isoformat(), second.isoformat()


def rewrite_line(line: str, base: date, patterned: tuple[re.Pattern[str], tuple[Row, ...]] | None = None,
                 said: str = "") -> tuple[str, list[tuple[str, str]], list[Unresolved]]:
    """Rewrite relative dates in one line outside code spans and link targets: the line, the (phrase, date)
    pairs rewritten, and the phrases left as written because they name no one date (`said`: the sentence the
    line was taken from, "onthoud: …", whose words tell its language)."""
    patterned = patterned or _pattern(None)
    found: list[tuple[str, str]] = []
    left: list[Unresolved] = []
    pieces, plain, last = [], [], 0
    for protected in [*_protected().finditer(line), None]:
        plain.append(line[last:protected.start() if protected else len(line)])
        pieces.append(_rewrite_segment(plain[-1], base, patterned, found, left, said))
        if protected and protected.lastgroup == "unresolved":  # "大后天": never rewritten in part; a person is told
            left.append(Unresolved(protected.group(0), "names a day this engine does not resolve exactly"))
        pieces.append(protected.group(0) if protected else "")
        last = protected.end() if protected else last
    said = " ".join(phrase for phrase, _ in found).lower()  # "en dos semanas": no row reads it, a person is told
    left = left or [Unresolved(word, "is a relative date this engine does not read")  # (once a line: "three
                    for word in relative_words(" ".join(plain)) if word.lower() not in said]  # weeks from tomorrow")
    return "".join(pieces), found, left


def rewrite_lines(lines: list[str], base: date, start: int = 0
                  ) -> tuple[list[str], list[Rewrite], list[Unresolved]]:
    """Rewrite every line from `start` on, skipping fenced code blocks. A line dated otherwise than `base`, in
    itself or by the heading above it ("## 2026-11-09", "- 2026-11-10: died yesterday"), is left as written."""
    patterned = _pattern(text_language("\n".join(lines)))
    out = list(lines)
    rewrites: list[Rewrite] = []
    unresolved: list[Unresolved] = []
    in_fence, heading = False, set[str]()
    for number in range(start, len(lines)):
        if _FENCE.match(lines[number]):
            in_fence = not in_fence
            continue
        days = set(re.findall(_ISO, lines[number])) - {base.isoformat()}
        heading = days if lines[number].startswith("#") else heading
        if in_fence or not (might_have_relative_dates(lines[number]) or relative_words(lines[number])):
            continue  # the big pattern costs a third of a millisecond a line: only lines with an anchor word
        new, found, left = rewrite_line(lines[number], base, patterned)
        if found and (days or heading):  # which of two dates a "yesterday" counts from is not certain
            why = f"stands by {', '.join(sorted(days or heading))}, not the file's date"
            new, found, left = lines[number], [], left + [Unresolved(phrase, why) for phrase, _ in found]
        out[number] = new
        rewrites += [Rewrite(number, phrase, absolute) for phrase, absolute in found]
        unresolved += [Unresolved(u.phrase, u.why, number) for u in left]
    return out, rewrites, unresolved


@cache
def _anchors() -> tuple[str, ...]:
    """Words one of which every date phrase holds (rows' `needs`): `in` first spares the regex most lines."""
    return tuple(sorted({w.lower() for lang in _langs() for row in lang.dates.get("row", [])
                         for w in row.get("needs", [])}))


@cache
def _words() -> tuple[str, ...]:  # "大后天" in a code span is no date; in text, rewrite_line asks about it
    return tuple(sorted({w.lower() for lang in _langs() for key in ("relative", "unresolved")
                         for w in lang.dates.get(key, [])}, key=len, reverse=True))


def relative_words(text: str) -> list[str]:
    """The words of [dates] `relative` in `text` ("semanas", "週間後"), as plain text first: the pattern is slow."""
    lowered = text.lower()
    return [m.group(0) for m in _relative_words().finditer(text)] if any(w in lowered for w in _words()) else []


@cache
def _relative_words() -> re.Pattern[str]:
    return re.compile(rf"(?:{'|'.join(map(re.escape, _words())) or '(?!)'})\w*", re.I)


def might_have_relative_dates(text: str) -> bool:
    lowered = text.lower()
    return any(anchor in lowered for anchor in _anchors())


def has_relative_dates(lines: list[str]) -> bool:
    text = "\n".join(lines)
    if (found := relative_words(text)) or not might_have_relative_dates(text):  # the words' scan runs once
        return bool(found)
    pattern, _ = _pattern(text_language(text))
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        elif (not in_fence and might_have_relative_dates(line)
              and any(pattern.search(seg) for seg in _PROTECTED.split(line) if seg)):
            return True
    return False
