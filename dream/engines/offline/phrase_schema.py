"""The schema of a phrase file (data/phrases/*.toml): every table and key it may hold, typed.

A misspelt or unknown key ("notcie", "[word]") used to load silently and
leave its phrases unused; checked against this schema it fails the load,
naming the file and the line. `coverage` says which keys each language fills
(`dream eval --coverage`), so a key missing for a language shows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from dream.engines.offline.kinds import RequestKind
from dream.errors import BadInput

def _struct(name: str, fields: list[Any]) -> Any:
    """A table of these keys and no other (a misspelt key fails)."""
    return msgspec.defstruct(name, fields, forbid_unknown_fields=True, omit_defaults=True)


def _lists(name: str, keys: str) -> Any:
    """A table whose every key holds a list of phrases (or regexes)."""
    return _struct(name, [(key, list[str], []) for key in keys.split()])


_LEADS = _lists("Leads", "asked_forget asked_remember correction correction_marked dont_forget forget from_now_on "
                "remember retract rule")
_WORDS = _lists("Words", "about and_then asked asked_after before_value but change_verbs dismiss emphasis filler "
                "final_particles forget_stems function instead_of naming_no_fact naming_nothing negation no_longer "
                "not_in_force not_after_value not_forget_after not_instruction not_rule_after notice notice_words "
                "now please pointer points_back remember_stems that yes")
_NOT_REQUESTS = _lists("NotRequests", "about_memory amends asks_which chatter doubt hopes hypothetical keeps narrows "
                       "not_to_keep "
                       "pending recalls rule_doubt scope set_aside task withdraws")
_PATTERN = _struct("Pattern", [("kind", RequestKind), ("regex", str), ("needs", list[str], [])])
_DATE_ROW = _struct("DateRow", [("regex", str), ("means", Literal["day", "week", "month", "year", "weekday"]),
                                ("needs", Annotated[list[str], msgspec.Meta(min_length=1)]),
                                ("only_in_own_text", bool, False)])
_DATES = _struct("Dates", [
    ("row", list[_DATE_ROW], []), ("number", str, ""), ("read_as", dict[str, str], {}),  # type: ignore[valid-type]
    ("year_shift", dict[str, int], {}),
    *[(key, str, "") for key in "day_form today_form week_form bare_week_form month_year_form state subject small_hours".split()],
    *[(key, list[str], []) for key in ("weekdays this next last today_words prepositions telltale unresolved relative "
                                       "joined_before joined_after").split()],
])
_TABLES: dict[str, Any] = {"leads": _LEADS, "words": _WORDS, "not_requests": _NOT_REQUESTS,
                                            "dates": _DATES}
PhraseFile = _struct("PhraseFile", [
    ("spaced", bool, True), ("pattern", list[_PATTERN], []),  # type: ignore[valid-type]
    *[(table, struct, msgspec.field(default_factory=struct)) for table, struct in _TABLES.items()],
])


_UNKNOWN = re.compile(r"unknown field `(?P<key>[^`]+)`")


def check(path: Path, text: str, data: dict[str, Any]) -> None:
    """Raise BadInput naming the file and line of the first key the schema does not know or type.

    `data` is `text` as parsed once by the loader: converted, not parsed again; the text only finds the line."""
    try:
        msgspec.convert(data, type=PhraseFile)
    except msgspec.ValidationError as exc:
        found = _UNKNOWN.search(str(exc))
        key = found["key"] if found else str(exc).rsplit("`", 2)[-2].rsplit(".", 1)[-1].strip("$[]")
        raise BadInput(f"{path} line {_line_of(text, key)}: {exc}") from None


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

