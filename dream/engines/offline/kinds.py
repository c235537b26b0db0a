"""What the offline engine reads and does, with a name: the kinds of request, the actions of its changes.

A request kind is also the `kind` of a [[pattern]] in data/phrases (the
schema takes only these). The action strings are part of the JSON output
and the history (`Change.action`), so they never change once released.
"""

from __future__ import annotations

from enum import StrEnum

from dream.engines.base import NOTED


class RequestKind(StrEnum):
    REMEMBER = "remember"
    FORGET = "forget"
    CORRECTION = "correction"  # a value said wrong: "not 8080, 8081"
    RULE = "rule"  # "always …", "never …", "from now on …"
    UPDATE = "update"  # a change read from its form alone: "X, not Y now"

    @property
    def asks_to(self) -> str:
        """What such a request asks, as a note for a person words it: "may ask to remember …"."""
        return {"remember": "remember something", "forget": "forget a memory", "correction": "correct a memory",
                "rule": "file a rule", "update": "update a memory"}[self.value]


class ChangeAction(StrEnum):
    CREATED = "created"
    FORGOTTEN = "forgotten"
    DELETED = "deleted"  # a memory that only repeats an instruction file the agent loads (instructed.py)
    UPDATED = "updated"
    ARCHIVED = "archived"
    DATED = "dated"  # relative dates made absolute
    INDEXED = "indexed"
    MERGED = "merged"
    REPAIRED = "repaired"
    RETITLED = "retitled"
    SHORTENED = "shortened"
    NOTED = NOTED  # lint: a claim the project refutes, noted with the day
