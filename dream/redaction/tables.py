"""Patterns built from the tables of patterns.toml: secrets found by where they stand, not by their shape.

* ``[said.<language>]``: a password or key said in a sentence, in every shipped language;
* ``[[flag]]`` and ``[[place]]``: the value after a password flag of a command-line tool, or a password a
  command takes by its place (``htpasswd -b file user pw``, ``sqlplus user/pw@db``);
* ``[[call]]``: the credential argument of a connection call in code (``getConnection(url, user, pw)``).

A `[[pattern]]` entry with ``table = "…"`` stands where the patterns built from that table are applied.
Each builder gives ``(regex, hint, keep_after)`` triples in the dialect both Python's ``re`` and Rust's
``regex`` read (see `dream.redaction.redact`): group 1 is kept before the marker, group 2 (when
`keep_after`) after it. Alternatives are joined into few patterns, since every pattern costs a pass.
A malformed table raises ValueError naming it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

Built = tuple[str, str, bool]  # regex, hint, keep_after
PATTERNS_FILE = Path(__file__).with_name("patterns.toml")


def read(path: Path = PATTERNS_FILE) -> dict[str, Any]:
    """A patterns file, parsed once a process: the detectors, the patterns and the lead at the end all read it
    at import (tomllib is Python: 3-5 ms a parse of patterns.toml). Read only, never changed."""
    return _parsed(path)


@cache
def _parsed(path: Path) -> dict[str, Any]:
    # Cached apart from `read`: a cache on `read` keys `read()` and `read(PATTERNS_FILE)` apart, and every
    # process parsed the file twice.
    return tomllib.loads(path.read_text(encoding="utf-8"))

# What may stand between a tool's name and its flag: anything on the command's line, or its continuation
# after a backslash at the end of a line; not a pipe or a list operator, which start another command.
_MIDDLE = r"(?:(?:[ \t]|\\\r?\n)(?:[^\n|;&]|\\\r?\n)*?)?[ \t]"
# Where one log entry's text ends and the next's begins, in a log (`> `, `< `, `. ` prefixes) or a paste.
_NEXT_LINE = r"[ \t]*\r?\n[ \t]*(?:[<>.][ \t]+)?"
# Up to 40 characters between a password word and its verb: "the password for the staging DB is".
# Not across a bracket: a marker's kind ("[REDACTED:cli-password]") holds the word.
_GAP = r"[^\n.:=\[\]]{0,40}?"
# Letters only, after a password word: 12+ with a capital inside, or 14+ lowercase, ending its clause.
_LETTERS = r"(?:[A-Za-z][a-z]*[A-Z][A-Za-z]{10,}|[A-Z]?[a-z]{3,}[A-Z][A-Za-z]{7,}|[a-z]{14,})"
_CLAUSE_END = r"([ \t]*(?:[\r\n,;.!?)]|$))"


def _alternatives(regexes: list[str]) -> str:
    return "(?:" + "|".join(regexes) + ")"


def _strings(table: dict, key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"patterns.toml: {where}.{key} should be a list of strings")
    return value


def values(macros: dict[str, str]) -> dict[str, str]:
    """How a value may look, by name: "any" (a password flag's), "shaped" (a secret's shape), "userinfo"."""
    ws = macros["ws"]
    return {
        "any": f"[^{ws}\"'`\\[$<{{%*\\\\-][^{ws}\"'`]*",
        "shaped": macros["secret_value_6"],
        "userinfo": f"[^{ws}/@\"'`\\[$<{{%*\\\\-][^{ws}/@\"'`]*",
    }


def said(data: dict, macros: dict[str, str]) -> Iterator[Built]:
    """A password or key said in a sentence (``[said.<language>]``)."""
    languages = data.get("said")
    if not isinstance(languages, dict) or not languages:
        raise ValueError("patterns.toml: [said] should hold a table per language")
    words: dict[str, list[str]] = {k: [] for k in ("password", "key", "verbs", "particles", "bare", "after")}
    for language, table in languages.items():
        for key in words:
            words[key] += _strings(table, key, f"said.{language}")
    password, key = _alternatives(words["password"]), _alternatives(words["key"])
    verbs = _alternatives(sorted(set(words["verbs"]), key=len, reverse=True))
    particles = _alternatives(sorted(set(words["particles"]) | {":", "："}, key=len, reverse=True))
    after_verb = f"(?:[ \t]+|{_NEXT_LINE})"
    after_particle = f"[ \t]*(?:\r?\n[ \t]*(?:[<>.][ \t]+)?)?"
    said_by = [f"{_GAP}[ \t]+{verbs}{after_verb}", f"{_GAP}[ \t]*{particles}{after_particle}"]
    lead = f"(?:{password}(?:{'|'.join(said_by)}|{_NEXT_LINE})|{_alternatives(words['bare'])}[ \t]+)"
    shaped, hint = macros["said_value_6"], _alternatives([password, key, *words["bare"]])
    yield f"({lead}){shaped}", hint, False
    yield f"({lead}){_LETTERS}{_CLAUSE_END}", hint, True
    # a key only after a verb or a particle other than ":" ("key: ctrl+shift" names a shortcut)
    key_particles = _alternatives(sorted(set(words["particles"]), key=len, reverse=True))
    # ... or after a colon that does not touch it ("ключ от продакшена: X")
    key_lead = (f"{key}(?:{_GAP}[ \t]+{verbs}{after_verb}|{_GAP}[ \t]*{key_particles}[ \t]*"
                f"|[^\n.:=\\[\\]]{{1,40}}?[ \t]*[:：][ \t]*)")
    yield f"({key_lead}){shaped}", hint, False
    if words["after"]:  # "db ka password X hai": the verb after the value
        yield f"({password}[ \t]+){shaped}([ \t]+{_alternatives(words['after'])})", hint, True


def lead_at_end(data: dict) -> str:
    """A regex a text matches when it ends where a password is about to be said: "the prod db password is".

    The next text of a session may then be the password alone (`dream.redaction.redact.redact_following`).
    """
    languages = data["said"]
    words: dict[str, list[str]] = {k: [] for k in ("password", "verbs", "particles")}
    for language, table in languages.items():
        for key in words:
            words[key] += _strings(table, key, f"said.{language}")
    verbs = _alternatives(sorted(set(words["verbs"]), key=len, reverse=True))
    particles = _alternatives(sorted(set(words["particles"]) | {":", "："}, key=len, reverse=True))
    return (f"{_alternatives(words['password'])}(?:{_GAP}[ \t]+{verbs}|{_GAP}[ \t]*{particles})?"
            "[ \t\r\n]*$").replace(r"\b", "")


def command_line(data: dict, macros: dict[str, str]) -> Iterator[Built]:
    """The value after a password flag (``[[flag]]``) or at a password's place (``[[place]]``)."""
    shapes = values(macros)
    by_value: dict[str, list[str]] = {name: [] for name in shapes}
    hints: dict[str, list[str]] = {name: [] for name in shapes}
    for n, flag in enumerate(data.get("flag", [])):
        tools, flags = _strings(flag, "tools", f"flag[{n}]"), _strings(flag, "flags", f"flag[{n}]")
        if not tools or not flags:
            raise ValueError(f"patterns.toml: flag[{n}] needs tools and flags")
        start = f"\\b{_alternatives(tools)}{_MIDDLE}{_alternatives(flags)}"
        if flag.get("attached"):
            by_value["any"].append(f"{start}[\"']?")
            hints["any"] += tools
        if "spaced" in flag:
            shape = _shape(flag["spaced"], shapes, f"flag[{n}].spaced")
            by_value[shape].append(f"{start}(?:[ \t]+|=)[\"']?")
            hints[shape] += tools
    joined = list(_joined(by_value, hints, shapes))
    yield from joined
    yield from joined  # again: each match starts at a tool's name, so a second flag (-A x -X y) needs a pass
    for n, place in enumerate(data.get("place", [])):
        where = f"place[{n}]"
        if not isinstance(place.get("before"), str) or not isinstance(place.get("hint"), str):
            raise ValueError(f"patterns.toml: {where} needs before and hint")
        value = shapes[_shape(place.get("value", "any"), shapes, f"{where}.value")]
        after = place.get("after")
        yield (f"({place['before']}){value}" + (f"({after})" if after else ""), place["hint"], bool(after))


def _shape(name: Any, shapes: dict[str, str], where: str) -> str:
    if name not in shapes:
        raise ValueError(f"patterns.toml: {where} should be one of {sorted(shapes)}, got {name!r}")
    return str(name)


def _joined(by_value: dict[str, list[str]], hints: dict[str, list[str]], shapes: dict[str, str]) -> Iterator[Built]:
    for shape, starts in by_value.items():
        if starts:
            yield f"({_alternatives(starts)}){shapes[shape]}", _alternatives(sorted(set(hints[shape]))), False


# One argument before the credential: a string literal, or an expression without a comma or a bracket.
_ARGUMENT = r"""(?:"[^"\n]*"|'[^'\n]*'|[^,()"'\n]+)[ \t]*,[ \t]*"""
# The credential: a string literal's text, unless it is a placeholder (${…}, %s, <…>, a marker).
_LITERAL = r"""[^"'`\n\[$%{<][^"'`\n]*"""


def calls(data: dict, macros: dict[str, str]) -> Iterator[Built]:
    """The credential argument of a connection call (``[[call]]``), in one pattern."""
    starts, hints = [], []
    for n, call in enumerate(data.get("call", [])):
        name, argument = call.get("call"), call.get("argument")
        if not isinstance(name, str) or isinstance(argument, bool) or not isinstance(argument, int) or argument < 0:
            raise ValueError(f"patterns.toml: call[{n}] needs a call regex and an argument number (0 or more)")
        if argument == 0:  # no brackets: ConvertTo-SecureString "…"
            starts.append(f"{name}[\"'`]")
        else:
            opening = "[ \t]*" if call.get("inside") else "[ \t]*\\([ \t]*"
            starts.append(f"{name}{opening}{_ARGUMENT * (argument - 1)}[\"'`]")
        hints.append(name)
    if starts:
        yield f"({_alternatives(starts)}){_LITERAL}", _alternatives(hints), False


BUILDERS: dict[str, Callable[[dict, dict[str, str]], Iterator[Built]]] = {
    "said": said, "command-line": command_line, "calls": calls,
}
