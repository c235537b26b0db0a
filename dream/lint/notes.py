"""Dated notes on the claims of a memory that the project refutes (`lint_notes = true`, default off).

The offline engine never deletes or rewrites a memory on a finding. When a
person turns this on, it adds one line at the end of the memory for each
claim that failed, with the day it was found and lint's evidence:

    - (dream lint) `src/legacy/old.py` not found in the project as of 2026-12-02: `src/legacy/old.py` is not
      in the tree at 3a068cd; it was deleted in 3a068cd.

(one line in the file). A claim is noted once: a note for it already in the
memory, of any date, means no other is written. Lint reads no claim from a
note line, so a note never becomes a finding of its own.
"""

from __future__ import annotations

import re
from datetime import date

MARK = "- (dream lint) "
NOTED = re.compile(r"^\s*- \(dream lint\) `([^`\n]+)`")


def is_note(line: str) -> bool:
    return line.lstrip().startswith(MARK)


def noted_claims(lines: list[str]) -> set[str]:
    """The claims a memory's notes already name."""
    return {m.group(1) for line in lines if (m := NOTED.match(line))}


def note_line(claim: str, evidence: str, today: date, major: int | None = None) -> str:
    """One note: what was not found, the day, and the evidence a person can check."""
    subject = f"`{claim}` {major}" if major is not None else f"`{claim}`"
    return f"{MARK}{subject} not found in the project as of {today.isoformat()}: {evidence.rstrip('.')}."
