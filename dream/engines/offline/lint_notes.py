"""Dated notes on lint's findings: all the offline engine does with them, and only when `lint_notes = true`.

A finding alone never deletes or rewrites a memory (the person reads it
under "Needs a person"). With the setting on, the memory keeps every line
and gets one note per failed claim at its end (dream.lint.notes), once.
No note goes into a pinned memory, a team memory (edited by its team only),
a memory this run removed or one whose format dream does not edit, nor for
a claim this run's own edits took out of the memory. The policy never
takes a note unattended (dream.review.policy): a person reads it first.
"""

from __future__ import annotations

from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import Workspace, editable, scope_of
from dream.lint.notes import is_note, note_line, noted_claims
from dream.store.model import TopicFile


def note_findings(ws: Workspace, findings: list[dict], pinned: set[str]) -> None:
    if not ws.settings.lint_notes:
        return
    by_memory: dict[str, list[dict]] = {}
    for finding in findings:
        by_memory.setdefault(finding["memory"], []).append(finding)
    for path, found in sorted(by_memory.items()):
        topic = ws.store.topics.get(path)
        if topic is None or path in pinned:
            continue
        if scope_of(path) == "team" or not editable(topic):
            ws.note(f"{path}: no lint note added: "
                    + ("a team memory, edited only by its team" if scope_of(path) == "team"
                       else "; ".join(topic.format_problems)))
            continue
        _note(ws, topic, found)


def _note(ws: Workspace, topic: TopicFile, found: list[dict]) -> None:
    from dream.lint.claims import memory_claims  # start-up: only a night with lint findings reads claims

    cited = {claim.name for claim in memory_claims(topic.path, topic.text.encode())}
    done = noted_claims(topic.text.lines)
    new: list[str] = []
    for finding in sorted(found, key=lambda f: (f["line"], f["claim"])):
        if finding["claim"] in done or finding["claim"] not in cited:
            continue  # noted before, or no longer cited once this run's edits are in
        done.add(finding["claim"])
        line = note_line(finding["claim"], finding["evidence"], ws.today, finding.get("major"))
        new.append(line)
        ws.change(ChangeAction.NOTED, topic.path, "the project refutes a claim it makes; noted with today's date "
                  "(lint_notes), the memory kept as it was", line, "lint")
    if new:
        _append_notes(topic, new)


def _append_notes(topic: TopicFile, lines: list[str]) -> None:
    """At the end of the memory: under its earlier notes, else after a blank line."""
    body = topic.text.lines
    last = next((line for line in reversed(body[topic.body_start:]) if line.strip()), "")
    if not is_note(last):
        topic.append_body(lines)
        return
    while body and not body[-1].strip():
        body.pop()
    body.extend(lines)
    topic.text.final_newline = True
