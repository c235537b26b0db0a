"""The schema of a phrase file (data/phrases/*.toml): every table and key it may hold, typed.

A misspelt or unknown key ("notcie", "[word]") used to load silently and
leave its phrases unused; checked against this schema it fails the load,
naming the file and the line. `coverage` says which keys each language fills
(`dream eval --coverage`), so a key missing for a language shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from dream.errors import BadInput

_STRICT = {"forbid_unknown_fields": True, "omit_defaults": True}


class Leads(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    asked_forget: list[str] = []
    asked_remember: list[str] = []
    correction: list[str] = []
    correction_marked: list[str] = []
    dont_forget: list[str] = []
    forget: list[str] = []
    from_now_on: list[str] = []
    remember: list[str] = []
    retract: list[str] = []
    rule: list[str] = []


class Words(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    about: list[str] = []
    and_then: list[str] = []
    asked: list[str] = []
    asked_after: list[str] = []
    before_value: list[str] = []
    but: list[str] = []
    change_verbs: list[str] = []
    dismiss: list[str] = []
    emphasis: list[str] = []
    filler: list[str] = []
    final_particles: list[str] = []
    forget_stems: list[str] = []
    function: list[str] = []
    instead_of: list[str] = []
    naming_no_fact: list[str] = []
    naming_nothing: list[str] = []
    negation: list[str] = []
    no_longer: list[str] = []
    not_after_value: list[str] = []
    not_forget_after: list[str] = []
    not_instruction: list[str] = []
    not_rule_after: list[str] = []
    notice: list[str] = []
    now: list[str] = []
    please: list[str] = []
    pointer: list[str] = []
    that: list[str] = []
    yes: list[str] = []


class NotRequests(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    about_memory: list[str] = []
    amends: list[str] = []
    chatter: list[str] = []
    doubt: list[str] = []
    hopes: list[str] = []
    hypothetical: list[str] = []
    keeps: list[str] = []
    not_to_keep: list[str] = []
    pending: list[str] = []
    recalls: list[str] = []
    rule_doubt: list[str] = []
    scope: list[str] = []
    set_aside: list[str] = []
    task: list[str] = []


class Pattern(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    kind: str
    regex: str
    needs: list[str] = []


class DateRow(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    regex: str
    means: str
    needs: list[str] = []
    only_in_own_text: bool = False


class Dates(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    row: list[DateRow] = []
    weekdays: list[str] = []
    this: list[str] = []
    number: str = ""
    read_as: dict[str, str] = {}
    year_shift: dict[str, int] = {}
    day_form: str = ""
    today_form: str = ""
    today_words: list[str] = []
    week_form: str = ""
    bare_week_form: str = ""
    month_year_form: str = ""
    prepositions: list[str] = []
    telltale: list[str] = []
    unresolved: list[str] = []
    relative: list[str] = []


class PhraseFile(msgspec.Struct, **_STRICT):  # type: ignore[call-arg]
    spaced: bool = True
    leads: Leads = msgspec.field(default_factory=Leads)
    words: Words = msgspec.field(default_factory=Words)
    not_requests: NotRequests = msgspec.field(default_factory=NotRequests)
    pattern: list[Pattern] = []
    dates: Dates = msgspec.field(default_factory=Dates)


_UNKNOWN = re.compile(r"unknown field `(?P<key>[^`]+)`")


def check(path: Path, text: str) -> None:
    """Raise BadInput naming the file and line of the first key the schema does not know or type."""
    try:
        msgspec.toml.decode(text.encode("utf-8"), type=PhraseFile)
    except msgspec.ValidationError as exc:
        found = _UNKNOWN.search(str(exc))
        key = found["key"] if found else str(exc).rsplit("`", 2)[-2].rsplit(".", 1)[-1].strip("$[]")
        raise BadInput(f"{path} line {_line_of(text, key)}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadInput(f"{path}: cannot read phrases: {exc}") from None


def _line_of(text: str, key: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*\[*\s*{re.escape(key)}\b", line):
            return number
    return 1


def coverage(texts: dict[str, str]) -> dict[str, list[str]]:
    """For each key of the schema (table.key), the languages whose file fills it (a non-empty value)."""
    filled: dict[str, list[str]] = {f"{table}.{key.name}": [] for table, struct in _TABLES.items()
                                    for key in msgspec.structs.fields(struct)}
    for code, text in sorted(texts.items()):
        data = msgspec.to_builtins(msgspec.toml.decode(text.encode("utf-8"), type=PhraseFile))
        for table in ("leads", "words", "not_requests", "dates"):
            for key in msgspec.structs.fields(_TABLES[table]):
                if (data.get(table) or {}).get(key.name):
                    filled.setdefault(f"{table}.{key.name}", []).append(code)
    return filled


_TABLES: dict[str, type[msgspec.Struct]] = {"leads": Leads, "words": Words, "not_requests": NotRequests, "dates": Dates}
