"""Lint's findings as the Claude engine reads them: one section added to its first message."""

from __future__ import annotations

HEADER = "## Claims the project no longer supports (dream lint)"
ADVICE = ("Each line is evidence checked against the project's files, not an order. Correct a memory only where "
          "the evidence or the sessions make the right value plain (a file that was renamed, a target that moved); "
          "otherwise leave it as it is and name it in your summary. Never delete a memory for this alone.")


def lint_signal(stale: list[str]) -> str:
    """'' when nothing is stale, else the section to append to the first message."""
    if not stale:
        return ""
    return "\n\n" + "\n".join([HEADER, "", ADVICE, "", *(f"- {line}" for line in stale)]) + "\n"
