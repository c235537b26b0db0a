"""Replace secrets in text with a visible marker before it reaches a model or a file.

Two forms share one list of patterns, kept as data in ``patterns.toml`` beside this module:

* ``redact(text)`` for a single string (Python ``re``);
* ``redact_column(series)`` for a polars string column (Rust ``regex`` through
  ``str.replace_all``), so gathering hundreds of megabytes of logs stays fast.

Every pattern is written in the common subset of both regex dialects (no
look-around, no back-references, case-insensitivity only as scoped ``(?i:…)``
groups), and patterns are applied one after another in the same order, so both
forms give the same text and the same count. A test checks that they agree.

A secret becomes ``[REDACTED:<kind>]``. Where the text around a secret is
useful and harmless (``Bearer ``, the key name of ``aws_secret_access_key =``,
the user and host of a URL) it is kept. No pattern can match a marker, so
redacting twice changes nothing and counts nothing the second time.

Patterns favour precision on ordinary prose: a key prefix alone (``sk-learn``,
``task-based``, "the bearer of bad news") is never enough; each needs the
length and alphabet of a real credential.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from dream.redaction import tables
from dream.redaction.detectors import find_spans, hint, prefilter

if TYPE_CHECKING:
    import polars as pl



@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret.

    `regex` may capture group 1 (text kept before the marker) and group 2
    (text kept after it), as told by `keep_before` / `keep_after`. Word
    boundaries ``\\b`` are ASCII in both dialects (see `python_regex`,
    `rust_regex`): Unicode word boundaries make Rust's fast engines give up
    on non-ASCII text and fall back to a slow one (40x slower on 500 MB).
    """

    def python_regex(self) -> str:
        return _python_dialect(self.regex)

    def rust_regex(self) -> str:
        return _rust_dialect(self.regex)

    kind: str
    regex: str
    hint: str  # a regex every match contains; the union of hints is a cheap pre-check
    keep_before: bool = False
    keep_after: bool = False

    @property
    def marker(self) -> str:
        return f"[REDACTED:{self.kind}]"

    def python_replacement(self) -> str:
        before = r"\g<1>" if self.keep_before else ""
        after = r"\g<2>" if self.keep_after else ""
        return before + self.marker + after

    def polars_replacement(self) -> str:
        before = "${1}" if self.keep_before else ""
        after = "${2}" if self.keep_after else ""
        return before + self.marker + after


def _python_dialect(regex: str) -> str:
    return regex.replace(r"\b", r"(?a:\b)")


def _rust_dialect(regex: str) -> str:
    return regex.replace(r"\b", r"(?-u:\b)")


# Characters of opaque tokens (base64, base64url, JWT dots).
_TOKEN = r"[A-Za-z0-9._~+/=-]"
# ASCII whitespace, spelled out: Python's and Rust's `\s` differ on a few
# control characters, and both forms must agree.
_WS = r" \t\r\n\f\v"
# Authorization header name and separator: `Authorization: `, `"authorization": "`.
_AUTH = r"\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?"


def _secret_value(min_length: int, stop_also: str = "") -> str:
    """A value that looks like a secret: `min_length`+ characters, one a digit or symbol.

    The value runs to whitespace, a quote or a bracket. It may not start with
    "[" (a marker), "$" / "*" / "=" / ":" (a placeholder, a masked value, an
    operator) or "/" / "~" (a path, such as PWD=/home/me). Requiring a digit
    or one of ``#$%&*+=@^`` keeps words out: "password: required",
    "token: see-the-vault", "api_key: YOUR_API_KEY". Without look-ahead
    (Rust's regex has none) the rule is spelled out by where the first such
    character is: at position 0, 1, …, or later.
    """
    stop = _WS + "\"'`,;<>()\\[\\]{}\\\\" + stop_also
    mark = "".join(c for c in "0-9#$%&*+=@^" if c not in stop_also)
    word, marked = f"[^{stop}{mark}]", f"[{mark}]"
    any_char = f"[^{stop}]"
    first_word, first_marked = f"[^{stop}{mark}/~:]", "[0-9#%&+@^]"
    shapes = [f"{first_marked}{any_char}{{{min_length - 1},}}"]
    for position in range(1, min_length - 1):
        rest = min_length - 1 - position
        middle = f"{word}{{{position - 1}}}" if position > 1 else ""
        shapes.append(f"{first_word}{middle}{marked}{any_char}{{{rest},}}")
    shapes.append(f"{first_word}{word}{{{min_length - 2},}}{marked}{any_char}*")
    return "(?:" + "|".join(shapes) + ")"


def _key_names(*names: str) -> str:
    """Key names in the three spellings people write: ``api_key``, ``Api-Key``, ``API_KEY``.

    Each ``_`` in a name also stands for ``-`` or nothing (``apiKey``,
    ``x-api-key``). Case-insensitive ``(?i:…)`` would also match ``pAsSwOrD``,
    but then the hint must be case-insensitive too, and Rust's pre-check on
    case-insensitive words is 3x slower than on plain literals (gather bench).
    """

    def spellings(word: str) -> str:
        return f"(?:{word}|{word.capitalize()}|{word.upper()})"

    return "(?:" + "|".join("[_-]?".join(map(spellings, name.split("_"))) for name in names) + ")"


_PASSWORD_KEYS = _key_names("password", "passwd", "pwd", "pw")
_SECRET_KEYS = _key_names("secret", "token", "api_key", "access_key", "secret_key", "private_key")
# Key name to value in an assignment: `=`, `: `, `": "`, `` = ` ``.
_ASSIGN = r"[\"'`]?[ \t]*[:=][ \t]*[\"'`]?"
# The start of `_ASSIGN`, in the hints: "token" alone is a common word in
# talk about code, and a hint that stops at the word sends every such text
# through the full (slow) pattern.
_ASSIGNED = r"[\"'`]?[ \t]*[:=]"
_SECRET_VALUE = _secret_value(8)

# The shared pieces the data file names as <<name>>.
MACROS = {
    "secret_value": _SECRET_VALUE, "secret_value_6": _secret_value(6),
    # a value said in a sentence ends at "=" or ":" too: "the password is password=…" is an assignment
    "said_value": _secret_value(8, "=:"),
    # a password said in a sentence may be short: "the jenkins password is hunter2"
    "said_value_6": _secret_value(6, "=:"),
    "password_keys": _PASSWORD_KEYS, "secret_keys": _SECRET_KEYS,
    "assign": _ASSIGN, "assigned": _ASSIGNED, "auth": _AUTH, "token": _TOKEN, "ws": _WS,
}
PATTERNS_FILE = tables.PATTERNS_FILE
_MACRO = re.compile(r"<<([a-z0-9_]+)>>")


def _expand(regex: str) -> str:
    return _MACRO.sub(lambda m: MACROS[m.group(1)], regex)


def load_patterns(path: Path = PATTERNS_FILE) -> tuple[SecretPattern, ...]:
    """The kinds of secret in `path` (patterns.toml), in the order they are applied.

    An entry with ``table`` stands for the patterns built from that table (`dream.redaction.tables`).
    """
    data = tables.read(path)
    patterns: list[SecretPattern] = []
    for p in data["pattern"]:
        if "table" not in p:
            patterns.append(SecretPattern(p["kind"], _expand(p["regex"]), _expand(p["hint"]),
                                          p.get("keep_before", False), p.get("keep_after", False)))
            continue
        if p["table"] not in tables.BUILDERS:
            raise ValueError(f"{path}: pattern {p['kind']!r} names an unknown table {p['table']!r}")
        for regex, hint, keep_after in tables.BUILDERS[p["table"]](data, MACROS):
            # a hint only narrows what the pattern looks at: a word boundary in it would only cost speed
            patterns.append(SecretPattern(p["kind"], _expand(regex), _expand(hint).replace(r"\b", ""),
                                          True, keep_after))
    return tuple(patterns)


# Order matters (see patterns.toml): specific kinds first, assignments and command lines last.
PATTERNS: tuple[SecretPattern, ...] = load_patterns()
# A text that ends where a password is about to be said (see `redact_following`).
LEAD_AT_END = tables.lead_at_end(tables.read())

# Secrets are redacted before a text is cut, so that cutting can never leave
# half a secret the redactor no longer recognises. To keep redaction cheap on
# huge texts, readers keep only this much beyond the cut (longer than any
# secret the redactor knows, PEM keys included).
REDACT_MARGIN = 8192

# Most text holds no secret. Every match contains its pattern's hint, so text
# without any hint (one fast multi-literal scan) needs no further work.
_HINT_LIST = list(dict.fromkeys(p.hint for p in PATTERNS))
HINTS = "|".join(_HINT_LIST)
# Rows that match neither dream's hints nor the detectors' need no look (`redact_column`). A hint with a
# bounded repetition ("token … is") is scanned on its own: in one union with the others it makes Rust's
# lazy DFA run out of cache and the scan of a nightly run's logs 50 times slower.
@cache
def _gates() -> list[str]:
    return ["|".join([*(h for h in _HINT_LIST if "{" not in h), hint()]), *(h for h in _HINT_LIST if "{" in h)]


# Python's `re` forms, each compiled when first needed: all of dream's patterns cost 0.05 s of CPU to compile,
# which a nightly run (its logs redacted as columns, `redact_column`; a few notes as strings) would pay for nothing.
@cache
def _hints() -> re.Pattern[str]:
    return re.compile(HINTS)


@cache
def _hint(index: int) -> re.Pattern[str]:
    return re.compile(PATTERNS[index].hint)


@cache
def _regex(index: int) -> tuple[re.Pattern[str], str]:
    return re.compile(PATTERNS[index].python_regex()), PATTERNS[index].python_replacement()


# (kind, the secret's text) -> the marker that stands for it; see `redact`.
Marker = Callable[[str, str], str]


def redact(text: str, marker: Marker | None = None) -> tuple[str, int]:
    """Return `text` with secrets replaced by markers, and how many were replaced.

    The one function to call on any text before it reaches a model, a file
    or a name: dream's patterns, then detect-secrets' plugins and the entropy
    check on assigned values (`dream.redaction.detectors`). A `marker` chooses
    each marker from the secret it replaces (the Claude engine numbers the
    secrets of memory files, to put them back where the model keeps them);
    a marker it returns must start with ``[REDACTED:`` so that no later
    pattern matches it.
    """
    total = 0
    if _hints().search(text):
        for index, pattern in enumerate(PATTERNS):
            if not _hint(index).search(text):
                continue  # every match holds its pattern's hint, as in `redact_column`
            regex, replacement = _regex(index)
            text, n = regex.subn(replacement if marker is None else _replacer(pattern, marker), text)
            total += n
    text, n = _redact_detected(text, marker)
    return text, total + n


def _replacer(pattern: SecretPattern, marker: Marker) -> Callable[[re.Match[str]], str]:
    """A replacement function equal to `pattern`'s own, with the marker `marker` chooses."""
    def replace(m: re.Match[str]) -> str:
        start = m.end(1) if pattern.keep_before else m.start()
        end = m.start(2) if pattern.keep_after else m.end()
        return m.string[m.start():start] + marker(pattern.kind, m.string[start:end]) + m.string[end:m.end()]
    return replace


def _redact_detected(text: str, marker: Marker | None = None) -> tuple[str, int]:
    spans = find_spans(text)
    for span in reversed(spans):
        mark = f"[REDACTED:{span.kind}]" if marker is None else marker(span.kind, text[span.start:span.end])
        text = f"{text[:span.start]}{mark}{text[span.end:]}"
    return text, len(spans)


def redact_column(column: pl.Series) -> tuple[pl.Series, int]:
    """`redact` on every string of a polars Series: (redacted series, count).

    One scan of the whole column for every hint (dream's patterns' and the
    detectors') keeps the rows that may hold a secret; most rows hold none.
    Logs say the same text again and again (a tool's output, "ok"): each
    distinct one of those rows is redacted once, its count weighted by how
    often it is said. On those, kind after kind as `redact`, each kind looking
    only at the rows that hold its own hint, and running its pattern once: the
    replacements are counted by the markers they leave, which no pattern can
    match. Then the detectors' two regexes pick the rows that `find_spans`
    looks at.
    """
    import polars as pl  # start-up: only gathering and import need polars

    column = column.cast(str)
    gates = _gates()
    gate = column.str.contains(gates[0])
    for more in gates[1:]:
        gate = gate | column.str.contains(more)
    rows = gate.fill_null(False).arg_true()
    if not len(rows):
        return column, 0
    said = column.gather(rows).alias("text")
    distinct = said.value_counts(sort=False, name="times")  # each text once, and how often it is said
    texts, total = _redact_patterns_column(distinct["text"].clone(), distinct["times"])
    detect = (texts.str.contains(hint()) & texts.str.contains(prefilter())).fill_null(False).arg_true()
    if len(detect):
        found, counts = zip(*(_redact_detected(t) for t in texts.gather(detect).to_list()))
        if sum(counts):
            texts = texts.scatter(detect, pl.Series(found, dtype=pl.Utf8))
            total += int((pl.Series(counts, dtype=pl.Int64) * distinct["times"].gather(detect)).sum())
    # scatter writes in place: the caller's series stays as it was. (Scattered
    # even when nothing was counted: cheap, and no changed text is ever lost.)
    return column.clone().scatter(rows, said.replace_strict(distinct["text"], texts)), total


def _redact_patterns_column(texts: pl.Series, times: pl.Series) -> tuple[pl.Series, int]:
    """Dream's patterns on a column of distinct texts, as `redact` applies them to one string, each replacement
    counted `times` of its row (how often the text is said); the column may be changed in place."""
    import polars as pl  # start-up, as in `redact_column`

    total = 0
    for p in PATTERNS:
        rows = texts.str.contains(p.hint).fill_null(False).arg_true()
        if not len(rows):
            continue
        candidates = texts.gather(rows)
        replaced = candidates.str.replace_all(p.rust_regex(), p.polars_replacement())
        changed = (replaced != candidates).fill_null(False)
        if not changed.any():
            continue
        before, after = candidates.filter(changed), replaced.filter(changed)
        added = (after.str.count_matches(p.marker, literal=True).cast(pl.Int64)
                 - before.str.count_matches(p.marker, literal=True).cast(pl.Int64))
        # Counts are integers; polars types Series.sum() as int | float | Decimal.
        total += int((added * times.gather(rows).filter(changed)).sum())
        texts = texts.scatter(rows.filter(changed), after)
    return texts, total


def redact_following(column: pl.Series) -> tuple[pl.Series, int]:
    """Secrets said across two texts: "the prod db password is", then the password alone in the next text.

    `column` holds one session's texts in order (or several sessions', one after another: a session's first
    text is then looked at after the last one of the session before, which can only redact more). Each
    text that ends with a lead (`LEAD_AT_END`) is redacted with the next one after a line break, and
    the next one keeps what that changed in it. The texts must be redacted already (`redact_column`).
    """
    import polars as pl  # start-up: only gathering and import need polars

    leads = column.str.contains(LEAD_AT_END).fill_null(False).arg_true().to_list()
    texts, total = column.clone(), 0  # scatter writes in place: the caller's series stays as it was
    for row in leads:
        if row + 1 >= len(column):
            continue
        lead, following = column[row], texts[row + 1]
        if lead is None or following is None:
            continue
        joined, count = redact(f"{lead}\n{following}")
        if count and joined.startswith(f"{lead}\n"):
            texts = texts.scatter([row + 1], pl.Series([joined[len(lead) + 1:]], dtype=pl.Utf8))
            total += count
    return texts, total
