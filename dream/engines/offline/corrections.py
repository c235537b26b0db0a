"""Corrections: "actually, X is 16 now, not 15" rewrites the memory that says 15.

A correction names a stale value (`wrong`) and says what holds now. The memory stating the stale value about the same
thing is rewritten in place: its body lines, its description and its index lines now say the new value, and the old
one stays only as history ("(was 15 until 2026-11-20)"). No new file is made, so the store never says both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import Callable

from rapidfuzz import fuzz

from dream.engines.offline.phrases import _alternation, alternation, change_verbs, words
from dream.engines.offline.similarity import CJK, CJK_CHARS, normalize
from dream.engines.offline.text import LazyPattern

# Scripts written without spaces between a value and the words around it ("16になりました",
# "6380이에요"): a boundary between one of them and any other script counts as a space.
_SCRIPT_EDGE = LazyPattern(rf"(?<=[{CJK_CHARS}])(?=[^\s{CJK_CHARS}])|(?<=[^\s{CJK_CHARS}])(?=[{CJK_CHARS}])")


class StandingAlone:
    """A value where it is not part of a longer word or a dotted name: `search` and `sub` as re's.

    A CJK character next to a value is no part of it ("16になりました"), yet it is a word
    character to re, and a class of the CJK ranges costs milliseconds to compile, once
    for every value corrected. So the text is searched with each CJK character written as
    a private-use character of its own (no case, no word character, one for one, so
    every match stands where it stood), and the value's edges are plain word boundaries.
    """

    def __init__(self, regex: str):
        self.regex = regex.translate(_as_private())  # a CJK character in the value is written the same way
        self.compiled = re.compile(self.regex)

    def search(self, text: str) -> bool:
        return self.compiled.search(text.translate(_as_private())) is not None

    def sub(self, replace: Callable[[str], str], text: str) -> str:
        """`text` with each match replaced by `replace(the words matched)`."""
        pieces, last = [], 0
        for found in self.compiled.finditer(text.translate(_as_private())):
            pieces += [text[last:found.start()], replace(text[found.start():found.end()])]
            last = found.end()
        pieces.append(text[last:])
        return "".join(pieces)


@cache
def _as_private() -> dict[int, int]:
    """Each CJK character (similarity.CJK_CHARS: ranges "a-b") to its own character of private-use plane 15."""
    ranges = [(ord(CJK_CHARS[i]), ord(CJK_CHARS[i + 2])) for i in range(0, len(CJK_CHARS), 3)]
    return {char: 0xF0000 + n for n, char in enumerate(c for low, high in ranges for c in range(low, high + 1))}


@lru_cache(maxsize=4096)
def _standing_alone(value_regex: str) -> StandingAlone:
    """`value_regex`, case-insensitive, where it is not part of a longer word, a dotted or hyphenated name or a
    path: "db-a" in "db-a.internal:5432" and "v2" in "deploy-v2.sh" are pieces of one token, never edited."""
    return StandingAlone(rf"(?<![.\w/-])(?i:{value_regex})(?![\w/]|[.-]\w)")

# "R, not W"; "no longer W but R": the words around the values are data/phrases lists.
# "R, no longer W" too, with the many-word forms only: a lone French "plus" is English "and also".
_INSTEAD_OF = _alternation(words("instead_of") + [w for w in words("no_longer") if " " in w]) or "(?!)"
_NOT = re.compile(
    rf"^(?P<right>.+?),?\s+(?:{_INSTEAD_OF})\s+"
    r"(?P<wrong>[^,;]+?)\s*(?:[,;.]\s.*)?$", re.I)
# "R, W nahi", "R, W değil", "R, W 말고": languages that say the negation after the stale value
_NOT_AFTER = re.compile(
    rf"^(?P<right>.+?)\s*[,，、;]\s*(?P<wrong>[^,;，、]+?)\s*(?:{alternation('not_after_value')})[\s.!。！]*$", re.I)
_NO_LONGER = re.compile(
    rf"^(?P<pre>.*?)\b(?:{alternation('no_longer')})\s+(?P<wrong>[^,;]+?),?\s+"
    rf"(?:{alternation('but')})\s+(?P<right>.+)$", re.I)
# "… moved from W to R", "we switched from W to R" (the verbs: data/phrases, `change_verbs`)
_FROM_TO = re.compile(rf"\b(?:{change_verbs(spaced=True)})\s+from\s+(?P<wrong>.+?)\s+to\s+(?P<right>.+)$", re.I)
# "R now, we moved off W in October": what holds now comes first
_MOVED_OFF = re.compile(
    rf"^(?P<right>.+?)[,;]\s*(?:and\s+)?(?:we(?:'ve| have)?\s+)?(?:{change_verbs(spaced=True)})\s+(?:off|away from)\s+"
    r"(?P<wrong>.+?)(?:\s+(?:in|last|on|since|back|a while|this|two|a few)\b.*)?$", re.I)
# "W is outdated, it's R now"; "we no longer use W, it's R"
_OUTDATED = re.compile(
    r"^(?P<wrong>.+?)\s+(?:is|are)\s+(?:outdated|out of date|wrong|stale|no longer true)[,;:]?\s+"
    r"(?:it'?s|it is|they'?re|we'?re on|we use|use)?\s*(?P<right>.+)$", re.I)
# Chinese, Japanese and Korean: "不是 W，是 R" / "R，不是 W", "W じゃなくて R", "W가 아니라 R",
# "W 말고 R", "从 W 换成 R". W is the run of text just before (or after) the negation.
_LATIN_WORDS = rf"[^\s、，,。：:{CJK_CHARS}]+(?:[ \t][^\s、，,。：:{CJK_CHARS}]+)*"  # "Node 18", "stage.acme.io"
_NEGATION_AFTER = LazyPattern(
    rf"^(?P<pre>.*?)(?P<wrong>{_LATIN_WORDS}|[{CJK_CHARS}]+?)\s*"
    r"(?:じゃなくて|じゃなく|ではなくて|ではなく|(?:가|이)\s*아니(?:라|고)|말고)[\s、，,]*(?P<right>.+)$")
_NEGATION_BEFORE = LazyPattern(r"^(?P<pre>.*?)不是\s*(?P<wrong>[^，,。]+?)\s*[，,]?\s*(?:而)?是\s*(?P<right>.+)$")
_NEGATION_LAST = LazyPattern(r"^(?P<right>.+?)\s*(?:[，,]\s*|而)不是\s*(?P<wrong>[^，,。]+)$")
_FROM_TO_ZH = LazyPattern(rf"^(?P<pre>.*?)从\s*(?P<wrong>.+?)\s*(?:{change_verbs(spaced=False)})\s*(?P<right>.+?)\s*了?$")
_FROM_TO_JA_KO = LazyPattern(
    rf"^(?P<pre>.*?)(?P<wrong>{_LATIN_WORDS}|[{CJK_CHARS}]+?)\s*(?:から|에서)\s*(?P<right>.+?)\s*"
    rf"(?:に|(?:으로|로)\s*)(?:{change_verbs(spaced=False)})")
_CJK_PATTERNS = (_NEGATION_BEFORE, _NEGATION_LAST, _FROM_TO_ZH, _FROM_TO_JA_KO, _NEGATION_AFTER)
_HISTORY = re.compile(r"\(was [^)]*\)|~~.*?~~")  # old values kept as history are not stated
_NOW = re.compile(rf"\s+(?:{alternation('now')})$", re.I)
# Not what a text is about: a few English fillers, and "now" in every language ("теперь", "jetzt")
_STOP = {"the", "and", "not", "for", "was", "are", "our", "its", "with", "from"} | {w.lower() for w in words("now")}
# An article or preposition before the stale value is not part of it: "no en Heroku" replaces "Heroku".
_LEADING_ARTICLE = re.compile(rf"^(?:(?:{alternation('before_value')})\s+)+", re.I)  # "está en el 7000": 7000


@dataclass(frozen=True)
class Correction:
    wrong: str  # the stale value as the user said it
    right: str  # the clause that holds now
    value: str  # what replaces `wrong` in the memory

    def pattern(self) -> StandingAlone:
        """The stale value in a memory; with its version when the new value has none ("RabbitMQ 3.11")."""
        version = r"(?:\s+v?\d+(?:\.\d+)*)?" if not re.search(r"\d", self.wrong + self.value) else ""
        return _standing_alone(f"{re.escape(self.wrong)}{version}")

    @cached_property
    def context(self) -> set[str]:
        """Words of the correction that say what it is about (not the values)."""
        return content_words(self.right) - content_words(self.wrong) - content_words(self.value)


def parse(text: str, strict: bool = False) -> Correction | None:
    """The stale value and the new one, if the sentence names both.

    `strict` (a change said without "actually" or "correction"): the new value
    must look like the old one (same shape and alike, or sharing a word).
    """
    cjk = _CJK_PATTERNS if CJK.search(text) else ()  # each needs a CJK word (不是, から, 말고): compiled when one comes
    tried: tuple[re.Pattern[str] | LazyPattern, ...] = (_NO_LONGER, _FROM_TO, _MOVED_OFF, _OUTDATED, _NOT, _NOT_AFTER)
    for pattern in (*tried, *cjk):
        match = pattern.search(text) if pattern is _FROM_TO else pattern.match(text)
        if not match:
            continue
        for said, right in _readings(pattern, match, text):
            wrong = _LEADING_ARTICLE.sub("", said) or said
            value = _aligned(said, wrong, right, _least(pattern, strict))
            if (len(wrong) >= 2 or wrong.isdigit()) and value and value.lower() != wrong.lower():
                return Correction(wrong, right, _with_name(value, right))
    return None


def _aligned(said: str, wrong: str, right: str, least: float) -> str:
    """The new value; "von develop" is first aligned whole, since "von main" says where the value stands.

    The preposition is then dropped from both, so the stale value is found in
    a memory written in another language ("from the `develop` branch").
    """
    lead = said[:len(said) - len(wrong)]
    if lead:
        whole = align(_without_version(said, right), right, least)
        if whole.lower().startswith(lead.lower()) and len(whole) > len(lead):
            return whole[len(lead):]
        after = _after_lead(lead, right, wrong)
        if after and after.lower() != wrong.lower():
            return after  # "tourne sur GitLab, pas sur GitHub Actions": the value is what follows "sur"
    return align(_without_version(wrong, right), right, least)


def _after_lead(lead: str, right: str, wrong: str) -> str:
    """The words after the last `lead` in `right` (as many as `wrong` has), when the new value is shorter than the old.

    A number replaces a number: "auf Port 3000, nicht mehr auf 8080" is not about "Port".
    """
    found = list(re.finditer(rf"(?<!\w){re.escape(lead.strip())}\s+", right, re.I))
    if not found:
        return ""
    words = _tokens(right[found[-1].end():])[:len(_tokens(wrong))]
    if re.search(r"\d", wrong) and not re.search(r"\d", " ".join(words)):
        return ""
    return " ".join(words) if words and words[0].lower() not in _function_words() else ""


def _least(pattern: re.Pattern[str] | LazyPattern, strict: bool) -> float:
    """How alike the new value must be to the old: "R, not W" and "moved off W" name the change plainly."""
    if not strict or pattern in (_MOVED_OFF, _NOT):
        return 0.5
    return 0.75


def _without_version(wrong: str, right: str) -> str:
    """"Kafka 3.6" is replaced by "NATS" whole, but aligned by its name when the new value has no number."""
    bare = re.sub(r"\s+v?\d+(?:\.\d+)*$", "", wrong)
    return bare if bare and bare != wrong and not re.search(r"\d", right) else wrong


def _with_name(value: str, right: str) -> str:
    """A name the value is the last word of: "Streams" in "on Redis Streams" is "Redis Streams"."""
    if " " in value or _case(value) == "lower":
        return value
    found = re.search(rf"((?:[A-Z][\w.-]*\s+)+){re.escape(value)}(?!\w)", right)
    return f"{found.group(1)}{value}" if found else value


def _readings(pattern: re.Pattern[str] | LazyPattern, match: re.Match[str], text: str) -> list[tuple[str, str]]:
    """(stale value, clause that holds now) as `pattern` reads `text`, most likely first.

    In Chinese, Japanese and Korean the stale value is the words just before
    "から", "じゃなくて", "에서"…: the last of them ("Postgres 15じゃなくて16"
    replaces "15"), else all of them ("Node 18 から Node 22", where "22"
    alone does not look enough like "18" for a change said in passing).
    """
    wrong = _clean(match.group("wrong"))
    right = _NOW.sub("", match.group("right").strip().rstrip(".!。！"))
    if pattern is _FROM_TO:
        return [(wrong, f"{text[:match.start()]} {right}")]  # the subject comes before "moved from"
    pre = match.groupdict().get("pre")
    if pre is None:
        return [(wrong, right)]
    readings = [(wrong, f"{pre} {right}")]
    words = wrong.split()
    if pattern in _CJK_PATTERNS and len(words) > 1:
        readings.insert(0, (words[-1], f"{pre} {' '.join(words[:-1])} {right}"))
    return readings


def _clean(text: str) -> str:
    return _FINAL.sub("", text.strip().strip("\"'“”`").rstrip(".!").strip())


_FINAL = re.compile(rf"\s*(?:{alternation('final_particles')})$")  # "不是 8.0 了": 了 is not part of the value


def shape(token: str) -> str:
    if re.fullmatch(r"[\d.,:]+", token):
        return "number"
    if re.search(r"\w[./:@]\w", token):
        return "address"
    if re.search(r"\d", token) and re.search(r"[^\W\d]", token):
        return "code"  # v2, r3fa2c1, node18
    return "word"


def _spaced(text: str) -> str:
    return _SCRIPT_EDGE.sub(" ", text) if CJK.search(text) else text  # an edge is beside a CJK character


def _tokens(text: str) -> list[str]:
    return [t.strip(",;:()\"'“”") for t in _spaced(text).split() if t.strip(",;:()\"'“”")]


_PORT = re.compile(r"(?<=[\w.-]):(?=\d+$)")
CLOSE_CALL = 0.1  # per word: two readings of the new value scored this close are a guess, not a reading


def align(wrong: str, right: str, least: float = 0.5) -> str:
    """The words of `right` that stand where `wrong` stood: same length, shape and context.

    "15" in "we're on Postgres 16 now" is "16"; "Node 18" in "der Build
    läuft auf Node 22" is "Node 22"; "npm" in "pnpm for the web app" is "pnpm".
    Two readings scored about alike are settled by the one said last ("el
    frontend usa pnpm"; "ruff로 해": only particles follow), else by nobody: a
    person reads it.
    """
    old = _tokens(wrong)
    new = _tokens(right)
    if not old or not new:
        return ""
    size = len(old)
    if size == 1 and shape(old[0]) == "number":
        new = [part for token in new for part in _PORT.split(token) if part]  # "api.internal:7100" holds 7100
    scored = [(_score(old, new[start:start + size], (start + 1) / len(new)), " ".join(new[start:start + size]))
              for start in range(0, max(1, len(new) - size + 1))
              if [g.lower() for g in new[start:start + size]] != [o.lower() for o in old]]
    if not scored:
        return ""
    best_score, best = max(scored)
    if best_score < least * size:
        return ""
    close = [i for i, (score, _) in enumerate(scored) if best_score - score < CLOSE_CALL * size]
    if len(close) > 1:
        last = close[-1]
        trailing = [gram for _, gram in scored[last + 1:]]
        said_last = all(not _same_script(wrong, gram) or gram.lower() in _function_words() for gram in trailing)
        return scored[last][1] if said_last else ""
    return best


def _same_script(a: str, b: str) -> bool:
    return bool(CJK.search(a)) == bool(CJK.search(b))


def _score(old: list[str], gram: list[str], where: float) -> float:
    """How well `gram` stands where `old` stood; `where` (0-1] is how late in the sentence it comes."""
    function = _function_words()
    score = 0.1 * where  # what holds now is said last, more often than not
    for a, b in zip(old, gram):
        if a.lower() == b.lower():
            score += 1.0
        elif b.lower() in function:
            score -= 1.0  # "we use tabs": the value is "tabs", never "use"
        elif not _same_script(a, b):
            continue  # "yarnじゃなくてpnpmを使って": a name written in Latin letters is replaced by one, not by "を使って"
        elif shape(a) == shape(b) or "number" not in (shape(a), shape(b)):
            alike = 0.5 if shape(a) == shape(b) else 0.4
            named = a[:1].isalpha() and _case(a) == _case(b)  # a person replaces a person, an acronym one
            score += alike + fuzz.ratio(a.lower(), b.lower()) / 200 + 0.3 * named
    return score


def _case(token: str) -> str:
    """A name (Bob), an acronym (API) or a plain word: a person replaces a person."""
    if len(token) > 1 and token.isupper():
        return "upper"
    return "title" if token[:1].isupper() else "lower"


@cache
def _function_words() -> frozenset[str]:
    """Words that carry a sentence, never a value (data/phrases, `function`)."""
    return frozenset(w.lower() for w in words("function"))


def content_words(text: str) -> set[str]:
    """Words that say what a text is about, by their first letters ("deploy" is "deploys").

    Two-letter acronyms (CI, DB, QA) count: they name the subject in every language.
    """
    words = {w[:5] for w in normalize(_spaced(text)).split() if len(w) >= 3 and w not in _STOP}
    return words | {a.lower() for a in _ACRONYM.findall(text)}


_ACRONYM = re.compile(r"(?<![\w.])[A-Z]{2}(?![\w.])")


def states(text: str, correction: Correction) -> bool:
    """Whether `text` states the stale value as current (history notes aside)."""
    return correction.pattern().search(_HISTORY.sub("", text))


def about(text: str, correction: Correction) -> bool:
    """Whether `text` is about what the correction is about (shares a word besides the values).

    A correction said in Chinese, Japanese or Korean about a memory written
    in another script can share only its Latin words (names, versions); with
    none, the value alone decides.
    """
    context = correction.context
    if not context:
        return True
    words = content_words(text)
    if context & words:
        return True
    latin = [w for w in context if not CJK.search(w)]
    return not latin and not any(CJK.search(w) for w in words)


def rewrite(line: str, correction: Correction, day: str, note: bool) -> str:
    """`line` with the stale value replaced outside history notes.

    With `note`, the first new value is followed by "(was W until DAY)", in
    place, so the history reads right even in a paragraph wrapped over lines.
    """
    pattern = correction.pattern()
    if _states_both(line, correction):
        return _swapped(line, correction, day, note)
    noted = not note

    def replace(found: str) -> str:
        nonlocal noted
        if noted:
            return correction.value
        noted = True
        return f"{correction.value} (was {found} until {day})"

    pieces, last = [], 0
    for kept in _HISTORY.finditer(line):
        pieces.append(pattern.sub(replace, line[last:kept.start()]))
        pieces.append(kept.group(0))
        last = kept.end()
    pieces.append(pattern.sub(replace, line[last:]))
    return "".join(pieces)


def _value_pattern(correction: Correction) -> StandingAlone:
    return _standing_alone(re.escape(correction.value))


def _states_both(line: str, correction: Correction) -> bool:
    """"Indent with spaces, not tabs" corrected to tabs: the line names both values."""
    current = _HISTORY.sub("", line)
    return correction.pattern().search(current) and _value_pattern(correction).search(current)


def _swapped(line: str, correction: Correction, day: str, note: bool) -> str:
    """The two values change places, so the sentence still reads: "Indent with tabs, not spaces"."""
    both = StandingAlone(f"{correction.pattern().regex}|{_value_pattern(correction).regex}")  # each says (?i:)
    wrong = correction.wrong.lower()
    swapped = both.sub(lambda found: correction.value if found.lower().startswith(wrong) else correction.wrong, line)
    if not note:
        return swapped
    body = swapped.rstrip()
    stop = "." if body.endswith(".") else ""
    return f"{body[:len(body) - len(stop)]} (was the other way round until {day}){stop}"

