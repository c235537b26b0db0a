"""Relative dates ("yesterday", "上周", "gestern" …) made absolute.

A note that says "the deploy broke yesterday" is wrong a day later. We find
relative expressions with a curated regex per language (so that we know
exactly what we touch), let `dateparser` compute the date from the note's
source date (`RELATIVE_BASE`), and write it in ISO form at the granularity
the phrase had: a day (2026-03-03), a week (2026-W09), a month (2026-02)
or a year (2026). Code spans, code blocks, link targets and URLs are left
alone. A phrase that names no one date ("next Friday" said on a Tuesday is
read as 3 days on and as 10) is left as written and returned apart, for the
report to name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache

_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Weekday names where dateparser reads no "next Friday": resolved here (see `weekday_phrase`).
_WEEKDAY_NAMES_BY_LANG = {
    "en": _WEEKDAYS.split("|"),
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
    "de": ["montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    "pt": ["segunda", "terça", "quarta", "quinta", "sexta", "sábado", "domingo"],
}
_THIS_WORDS = ("this", "este", "diesen", "ce", "nesta", "neste", "esta")


def _names(lang: str) -> str:
    return "|".join(_WEEKDAY_NAMES_BY_LANG[lang])
_NUMBER = r"\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|a|an"

# (pattern, dateparser language, granularity, needs word boundaries)
_PHRASES: list[tuple[str, str, str]] = [
    # English
    (r"the day before yesterday|the day after tomorrow|yesterday|today|tomorrow|tonight", "en", "day"),
    (rf"(?:{_NUMBER}) days? (?:ago|from now)|in (?:{_NUMBER}) days?", "en", "day"),
    # "the last Friday of the month", "every last Friday" name a recurring day, not one date
    (rf"(?<!the )(?<!every )(?:next|last|this) (?:{_WEEKDAYS})(?! of\b)", "en", "day"),
    (rf"(?:{_NUMBER}) weeks? ago|(?:next|last|this) week", "en", "week"),
    (rf"(?:{_NUMBER}) months? ago|(?:next|last|this) month", "en", "month"),
    (r"(?:next|last|this) year", "en", "year"),
    # Chinese
    (r"前天|昨天|今天|明天|后天", "zh", "day"),
    (r"上周|上星期|下周|下星期|本周|这周", "zh", "week"),
    (r"上个月|下个月|这个月|本月", "zh", "month"),
    (r"去年|明年|今年", "zh", "year"),
    # Japanese
    (r"一昨日|昨日|今日|明日", "ja", "day"),
    (r"先週|来週|今週", "ja", "week"),
    (r"先月|来月|今月", "ja", "month"),
    # Korean
    (r"그저께|어제|오늘|내일|모레", "ko", "day"),
    (r"지난주|다음 주|다음주|이번 주|이번주", "ko", "week"),
    (rf"(?:el )?(?:próximo|proximo|este) (?:{_names('es')})|(?:el )?(?:{_names('es')}) que viene", "es", "weekday"),
    (rf"(?:nächsten|kommenden|diesen) (?:{_names('de')})", "de", "weekday"),
    (rf"(?:{_names('fr')}) prochain|ce (?:{_names('fr')})", "fr", "weekday"),
    (rf"(?:na |no )?(?:próxima|próximo|nesta|neste|esta) (?:{_names('pt')})(?:-feira)?", "pt", "weekday"),
    # Spanish
    (r"anteayer|ayer|hoy|pasado mañana|(?<!la )(?<!esta )mañana", "es", "day"),  # "por la mañana" is a morning
    (r"la semana pasada|la próxima semana|la semana que viene", "es", "week"),
    (r"el mes pasado|el próximo mes", "es", "month"),
    # Portuguese
    (r"anteontem|ontem|hoje|amanhã", "pt", "day"),
    (r"semana passada|próxima semana", "pt", "week"),
    # German ("morgen" is also "morning", "hier" is "here": left out)
    (r"vorgestern|gestern|heute|übermorgen", "de", "day"),
    (r"letzte woche|nächste woche|vergangene woche", "de", "week"),
    (r"letzten monat|nächsten monat", "de", "month"),
    # French ("hier" only in French text, see below)
    (r"avant-hier|aujourd'hui|aujourd’hui|après-demain|demain", "fr", "day"),
    (r"la semaine dernière|la semaine prochaine", "fr", "week"),
    (r"le mois dernier|le mois prochain", "fr", "month"),
    # Italian
    (r"l'altro ieri|ieri|oggi|domani|dopodomani", "it", "day"),
    (r"la settimana scorsa|la prossima settimana", "it", "week"),
    # Russian
    (r"позавчера|вчера|сегодня|послезавтра|завтра", "ru", "day"),
    (r"на прошлой неделе|на следующей неделе|на этой неделе", "ru", "week"),
    (r"в прошлом месяце|в следующем месяце", "ru", "month"),
]
_FRENCH_HIER = (r"hier", "fr", "day")

_CJK_LANGS = {"zh", "ja", "ko"}


def _compile(phrases: list[tuple[str, str, str]]) -> re.Pattern[str]:
    parts = []
    for number, (pattern, lang, _) in enumerate(phrases):
        body = f"(?:{pattern})"
        if lang not in _CJK_LANGS:
            body = rf"(?<![\w-]){body}(?![\w-])"
        parts.append(f"(?P<p{number}>{body})")
    return re.compile("|".join(parts), re.IGNORECASE)


_DEFAULT = _compile(_PHRASES)
_WITH_HIER = _compile(_PHRASES + [_FRENCH_HIER])
# Spans never rewritten: inline code, link targets, URLs, ISO-ish dates.
_PROTECTED = re.compile(r"(`+)[^`]*?\1|\]\([^)]*\)|\b\w+://\S+")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_FRENCH_WORDS = re.compile(r"(?<!\w)(le|la|les|des|est|une|pour|avec|dans|pas)(?!\w)", re.IGNORECASE)
_GERMAN_WORDS = re.compile(r"(?<!\w)(der|die|das|und|ist|nicht|mit|ein|eine|auf)(?!\w)", re.IGNORECASE)


def looks_french(text: str) -> bool:
    """Cheap guess used only to decide whether "hier" means yesterday."""
    return len(_FRENCH_WORDS.findall(text)) > max(3, 2 * len(_GERMAN_WORDS.findall(text)))


@dataclass
class Rewrite:
    line: int
    phrase: str
    absolute: str


@dataclass
class Unresolved:
    """A relative date left as written: it names no one date (`why` says what it may be)."""

    phrase: str
    why: str
    line: int = 0


def _format(day: date, granularity: str) -> str:
    if granularity == "week":
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}"
    if granularity == "month":
        return f"{day.year:04d}-{day.month:02d}"
    if granularity == "year":
        return f"{day.year:04d}"
    return day.isoformat()


@lru_cache(maxsize=4096)
def resolve(phrase: str, lang: str, granularity: str, base: date) -> str | None:
    """The absolute form of `phrase` written on `base`, or None if unknown."""
    if granularity == "weekday":
        return _weekday_date(phrase, base)
    cleaned = phrase.lower().replace("’", "'")
    if cleaned == "tonight":
        cleaned = "today"
    import dateparser  # start-up: 0.1-0.2 s (its regex module compiles on import), paid only when a phrase is found

    settings = {"RELATIVE_BASE": datetime.combine(base, time(12)), "RETURN_AS_TIMEZONE_AWARE": False}
    parsed = dateparser.parse(cleaned, languages=[lang], settings=settings)
    if parsed is None:
        return None
    day = parsed.date()
    if granularity == "year" and "year" not in cleaned:
        day = _year_by_word(cleaned, base) or day
    return _format(day, granularity)


def weekday_phrase(phrase: str) -> tuple[bool, int] | None:
    """(says "this", weekday number) for "next Friday", "el próximo viernes", "ce lundi" …; else None."""
    words = phrase.lower().replace("-feira", "").split()
    for names in _WEEKDAY_NAMES_BY_LANG.values():
        for number, name in enumerate(names):
            if name in words and len(words) > 1:
                return any(w in _THIS_WORDS for w in words), number
    return None


def _weekday_date(phrase: str, base: date) -> str | None:
    """The coming such weekday; "next" on that very weekday means a week on, "this" means today."""
    found = weekday_phrase(phrase)
    if found is None:
        return None
    this, target = found
    ahead = (target - base.weekday()) % 7
    return (base + timedelta(days=ahead if this or ahead else 7)).isoformat()


def _year_by_word(phrase: str, base: date) -> date | None:
    """dateparser does not shift 去年/明年/今年 by a year; do it here."""
    shift = {"去年": -1, "今年": 0, "明年": 1}.get(phrase)
    return None if shift is None else base.replace(year=base.year + shift, month=1, day=1)


# How a date reads in place of the phrase, so the sentence stays grammatical:
# "broke yesterday" → "broke on 2026-03-03", "in use today" → "in use as of 2026-03-04",
# "asked last week" → "asked in the week of 2026-02-23". No preposition is added after one.
_DAY_FORM = {"en": "on {}", "es": "el {}", "pt": "em {}", "de": "am {}", "fr": "le {}", "it": "il {}"}
_TODAY_FORM = {"en": "as of {}"}
_TODAY_WORDS = {"today", "tonight"}
_WEEK_FORM = {"en": "in the week of {}", "es": "la semana del {}", "pt": "na semana de {}", "de": "in der Woche vom {}",
              "fr": "la semaine du {}", "it": "la settimana del {}", "ru": "на неделе с {}", "zh": "{}那周",
              "ja": "{}の週", "ko": "{} 주"}
_MONTH_YEAR_FORM = {"en": "in {}"}
_BARE_WEEK_FORM = {"en": "the week of {}"}
_AFTER_PREPOSITION = re.compile(
    r"(?:^|\s)(?:on|in|at|by|until|till|since|from|before|after|of|as of|during|el|la|le|am|vom|seit|bis|desde|"
    r"hasta|em|de|depuis|il|с|до)\s*$", re.I)


def phrased(phrase: str, absolute: str, lang: str, granularity: str, before: str) -> str:
    """The absolute date as words that can stand where `phrase` stood."""
    bare = bool(_AFTER_PREPOSITION.search(before))
    if granularity == "week":
        monday = date.fromisoformat(absolute) if len(absolute) == 10 else None
        day = (monday - timedelta(days=monday.weekday())).isoformat() if monday else absolute
        form = (_BARE_WEEK_FORM if bare else _WEEK_FORM).get(lang, "{}")
        text = form.format(day)
    elif granularity == "day":
        forms = _TODAY_FORM if phrase.lower() in _TODAY_WORDS else _DAY_FORM
        text = absolute if bare else forms.get(lang, _DAY_FORM.get(lang, "{}")).format(absolute)
    else:
        text = absolute if bare else _MONTH_YEAR_FORM.get(lang, "{}").format(absolute)
    return text[:1].upper() + text[1:] if phrase[:1].isupper() and not before.strip() else text


def _rewrite_segment(segment: str, base: date, pattern: re.Pattern[str],
                     found: list[tuple[str, str]], left: list[Unresolved]) -> str:
    def replace(match: re.Match[str]) -> str:
        number = int((match.lastgroup or "g0")[1:])  # the pattern is all named groups: one matched
        _, lang, granularity = (_PHRASES + [_FRENCH_HIER])[number]
        phrase = match.group(0)
        if ambiguous(phrase, base):  # a wrong date is worse than a relative one: kept, and said why
            left.append(Unresolved(phrase, "may be " + " or ".join(readings(phrase, base))))
            return phrase
        day_of_week = resolve(phrase, lang, "day", base) if granularity == "week" else None
        absolute = resolve(phrase, lang, granularity, base)
        if absolute is None:
            left.append(Unresolved(phrase, "could not be read as a date"))
            return phrase
        found.append((phrase, absolute))
        shown = "day" if granularity == "weekday" else granularity
        return phrased(phrase, day_of_week or absolute, lang, shown, segment[:match.start()])

    return pattern.sub(replace, segment)




def ambiguous(phrase: str, base: date) -> bool:
    """Whether people read the phrase two ways: "next Friday" said on a Tuesday may be in 3 or 10 days."""
    found = weekday_phrase(phrase)
    if found is None or not re.search(r"next|this|próxim|proxim|este|esta|nächst|kommend|diesen|prochain|ce |nest|"
                                      r"que viene",
                                      phrase.lower() + " "):
        return False
    this, target = found
    return target < base.weekday() if this else target >= base.weekday()


def readings(phrase: str, base: date) -> tuple[str, str]:
    """The two dates an ambiguous weekday phrase is read as: the coming such day and a week later ("next"),
    or that day of this week, already past, and the coming one ("this")."""
    this, _ = weekday_phrase(phrase) or (False, 0)
    coming = date.fromisoformat(_weekday_date(phrase, base) or base.isoformat())
    other = coming - timedelta(days=7) if this else coming + timedelta(days=7)
    first, second = sorted((coming, other))
    return first.isoformat(), second.isoformat()


def rewrite_line(line: str, base: date, pattern: re.Pattern[str] = _DEFAULT
                 ) -> tuple[str, list[tuple[str, str]], list[Unresolved]]:
    """Rewrite relative dates in one line outside code spans and link targets.

    Returns the line, the (phrase, date) pairs rewritten, and the phrases left
    as written because they name no one date.
    """
    found: list[tuple[str, str]] = []
    left: list[Unresolved] = []
    pieces, last = [], 0
    for protected in _PROTECTED.finditer(line):
        pieces.append(_rewrite_segment(line[last:protected.start()], base, pattern, found, left))
        pieces.append(protected.group(0))
        last = protected.end()
    pieces.append(_rewrite_segment(line[last:], base, pattern, found, left))
    return "".join(pieces), found, left


def rewrite_lines(lines: list[str], base: date, start: int = 0
                  ) -> tuple[list[str], list[Rewrite], list[Unresolved]]:
    """Rewrite every line from `start` on, skipping fenced code blocks."""
    pattern = _WITH_HIER if looks_french("\n".join(lines)) else _DEFAULT
    out = list(lines)
    rewrites: list[Rewrite] = []
    unresolved: list[Unresolved] = []
    in_fence = False
    for number in range(start, len(lines)):
        if _FENCE.match(lines[number]):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        new, found, left = rewrite_line(lines[number], base, pattern)
        out[number] = new
        rewrites += [Rewrite(number, phrase, absolute) for phrase, absolute in found]
        unresolved += [Unresolved(u.phrase, u.why, number) for u in left]
    return out, rewrites, unresolved


# Every phrase above contains one of these (lowercased); checking them with
# `in` first spares the big regex on most files, which matters at 10,000 files.
_ANCHORS = (
    "day", "tomorrow", "tonight", "week", "month", "year",
    "前天", "昨", "今", "明", "后天", "周", "星期", "月", "去年", "週",
    "그저께", "어제", "오늘", "내일", "모레", "주",
    "ayer", "hoy", "mañana", "semana", "mes", "ontem", "hoje", "amanhã",
    "gestern", "heute", "morgen", "woche", "monat", "hier", "demain", "aujourd", "semaine", "mois",
    "ieri", "oggi", "domani", "settimana", "вчера", "сегодня", "завтра", "недел", "месяц",
    "lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo", "montag", "dienstag", "mittwoch",
    "donnerstag", "freitag", "samstag", "sonntag", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi",
    "dimanche", "segunda", "terça", "quarta", "quinta", "sexta",
)


def might_have_relative_dates(text: str) -> bool:
    lowered = text.lower()
    return any(anchor in lowered for anchor in _ANCHORS)


def has_relative_dates(lines: list[str]) -> bool:
    text = "\n".join(lines)
    if not might_have_relative_dates(text):
        return False
    pattern = _WITH_HIER if looks_french(text) else _DEFAULT
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and any(pattern.search(seg) for seg in _PROTECTED.split(line) if seg):
            return True
    return False


def shift(day: date, days: int) -> date:
    return day + timedelta(days=days)
