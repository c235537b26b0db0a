"""The Codex reader: the format fixture, current and older rollouts, bad lines."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.transcripts.codex import read_session
from dream.transcripts.common import log_relpath
from dream.transcripts.render import render_log
from dream.transcripts.synthetic import CodexSession, write_jsonl
from helpers.stores import TRANSCRIPTS

FIXTURES = TRANSCRIPTS / "codex"
START = datetime(2026, 2, 1, 23, 50, tzinfo=timezone.utc)
SID = "0199a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b"


def log_of(path: Path, max_chars: int = 2000) -> str:
    return render_log(read_session(path, max_chars).entries, max_chars)[0]


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared transcripts not present")
def test_fixture_gives_messages_and_tool_calls_once():
    path = next(FIXTURES.glob("rollout-*.jsonl"))
    session = read_session(path, 2000)
    assert session.session_id == "11111111-1111-4111-8111-111111111111"
    assert session.skipped == 1  # future_synthetic_record
    log = render_log(session.entries, 2000)[0]
    assert log == (
        "> List the synthetic files.\n"
        ". exec_command find . -maxdepth 1 -type f\n"
        ". apply_patch gamma.txt\n"
        ". mcp__synthetic__lookup fixture\n"
        "< The synthetic files are alpha.txt and beta.txt.\n"
    )
    assert "SYNTHETIC_ENCRYPTED" not in log and "inspect the synthetic" not in log


def test_generated_rollout_with_huge_output_midnight_and_cut_line(tmp_path):
    session = CodexSession(SID, START)
    session.user("修复 the flaky webhook test")
    session.reasoning("gAAAAAB" + "E" * 5000)
    for i in range(30):
        session.shell(f"pytest -q -k webhook_{i}", "." * 1_200_000 if i == 0 else "ok")
    session.patch(["src/webhooks.py", "tests/test_webhooks.py"])
    session.assistant("Fixed: the retry used wall-clock time.")
    session.records.append({"timestamp": "2026-02-02T00:30:00Z", "type": "hyperdrive", "payload": {}})
    path = tmp_path / f"rollout-2026-02-01T23-50-00-{SID}.jsonl"
    write_jsonl(path, session.records)
    with path.open("ab") as fh:
        fh.write(b'{"timestamp":"2026-02-02T00:31:00Z","type":"response_item","payload":{"type":"mess')
    read = read_session(path, 2000)
    assert (read.skipped, read.malformed) == (2, 1)
    log = render_log(read.entries, 2000)[0]
    lines = log.splitlines()
    assert lines[0] == "> 修复 the flaky webhook test"
    assert lines[1] == ". shell pytest -q -k webhook_0"
    assert lines[-2] == ". apply_patch src/webhooks.py tests/test_webhooks.py"
    assert lines[-1] == "< Fixed: the retry used wall-clock time."
    assert len(lines) == 33
    assert "EEEE" not in log and "...." not in log
    assert log_relpath(read, START) == f"logs/2026/02/01/{SID}-the-flaky-webhook-test.md"


def test_older_rollout_without_events_drops_injected_context(tmp_path):
    """Rollouts from before message events: items at top level, context injected as user text."""
    records = [
        {"id": SID, "timestamp": "2025-08-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a --json flag"}]},
        {"type": "local_shell_call", "call_id": "c1", "status": "completed",
         "action": {"type": "exec", "command": ["git", "grep", "-n", "argparse"]}},
        {"type": "function_call", "name": "shell", "call_id": "c2",
         "arguments": json.dumps({"command": ["bash", "-lc", "make test && echo ok"]})},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Added."}]},
    ]
    path = tmp_path / "rollout-2025-08-01T10-00-00.jsonl"  # no id in the name
    write_jsonl(path, records)
    read = read_session(path, 2000)
    assert read.session_id == SID
    assert read.skipped == 0
    assert render_log(read.entries, 2000)[0] == (
        "> add a --json flag\n"
        ". shell git grep -n argparse\n"
        ". shell make test && echo ok\n"
        "< Added.\n"
    )


def test_compaction_summary_is_kept_as_context(tmp_path):
    session = CodexSession(SID, START)
    session.user("continue with the migration")
    session.records.append({"timestamp": "2026-02-01T23:55:00Z", "type": "compacted",
                            "payload": {"message": "Migrated 3 of 5 tables."}})
    path = tmp_path / f"rollout-x-{SID}.jsonl"
    write_jsonl(path, session.records)
    assert log_of(path).splitlines()[-1] == "< [summary] Migrated 3 of 5 tables."
