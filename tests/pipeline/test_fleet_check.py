"""The fleet's pre-check of a store that reads transcripts: due only when changed transcripts could open its gate.

A scan every ten minutes must not run every Claude Code store: the check
stats the project's transcripts against what the last import recorded, and
counts each changed one as a session more.
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers.claude_home import SAID, claude_project

from dream.pipeline.fleet import check_store

EVERY_TIME = {"min_hours": 0}


def test_a_new_claude_code_store_with_enough_transcripts_is_due(home: Path) -> None:
    memory = claude_project(home)
    entry = check_store(memory.resolve())
    assert entry.due, entry
    assert f"{len(SAID)} claude-code transcript(s) changed" in entry.message


def test_too_few_changed_transcripts_keep_the_gate_shut_and_say_so(home: Path) -> None:
    memory = claude_project(home, sessions=3)
    entry = check_store(memory.resolve())
    assert (entry.due, entry.reason) == (False, "sessions")
    assert "3 claude-code transcript(s) changed" in entry.message and "min_sessions is 5" in entry.message


def test_nothing_changed_since_the_import_is_not_due(home: Path, cli) -> None:
    memory = claude_project(home)
    ran = cli("run", "--store", str(memory), "--engine", "offline", "--json")
    assert ran.json["status"] == "proposed", ran.stdout

    assert check_store(memory.resolve()).reason == "hours"  # the hours check still comes first, and costs no listing
    entry = check_store(memory.resolve(), overrides=EVERY_TIME)
    assert (entry.due, entry.reason) == (False, "sessions"), entry
    assert "0 claude-code transcript(s) changed" in entry.message


def test_a_changed_transcript_counts_once_it_could_make_up_the_sessions(home: Path, cli) -> None:
    memory = claude_project(home)
    cli("run", "--store", str(memory), "--engine", "offline")
    transcript = sorted(memory.parent.glob("*.jsonl"))[0]
    with transcript.open("a") as handle:
        handle.write("\n")
    stat = transcript.stat()
    os.utime(transcript, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))

    assert not check_store(memory.resolve(), overrides=EVERY_TIME).due  # one changed, five wanted
    entry = check_store(memory.resolve(), overrides={**EVERY_TIME, "min_sessions": 1})
    assert entry.due and "1 claude-code transcript(s) changed" in entry.message, entry
