"""What the users of a case said, and which of it the runs put before a person.

The scorecard tells a *silent* miss (nothing the user asked reached anyone)
from a miss that was at least *noted* for a person: a "needs a person" item
that quotes one of the user's entries. Notes quote the sentence, often cut
short ("…"), between quotation marks; a quoted piece counts when it is a
piece of an entry long enough to name it, so that a note quoting a memory's
"5432" does not pass for one quoting the user's line.
"""

from __future__ import annotations

import re

_ENTRY_START = re.compile(r"^([<>.]) ", re.M)  # the log format: "> " user, "< " assistant, ". " tool
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"|«([^»]+)»|「([^」]+)」|`([^`]+)`")
_CUT = "…."  # a shortened quotation ends with "…" (or "...")
QUOTE_MIN = 15  # characters a quoted piece needs to name an entry (a shorter entry: the whole of it)


def user_entries(log_text: str) -> list[str]:
    """Each user entry of a log (its typed line and any lines pasted below it), on one line."""
    marks = list(_ENTRY_START.finditer(log_text))
    entries = []
    for mark, following in zip(marks, marks[1:] + [None]):
        if mark.group(1) == ">":
            body = log_text[mark.end():following.start() if following else len(log_text)]
            if flat := _flat(body):
                entries.append(flat)
    return entries


def quoted_entries(entries: list[str], needs: list[str]) -> list[bool]:
    """For each entry, whether some "needs a person" item quotes it."""
    pieces = [_flat(found.strip(_CUT + " ")) for item in needs for match in _QUOTED.finditer(item)
              for found in match.groups() if found]
    return [any(len(p) >= min(QUOTE_MIN, len(entry)) and p in entry for p in pieces) for entry in entries]


def _flat(text: str) -> str:
    return " ".join(text.lower().split())
