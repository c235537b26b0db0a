"""The Claude Code reader: fixtures from real formats, plus generated edge cases."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.transcripts.claude_code import is_tool_result_line, read_session
from dream.transcripts.common import log_relpath, slugify
from dream.transcripts.render import render_log
from dream.transcripts.synthetic import ClaudeSession, busy_claude_session, write_jsonl
from helpers.stores import TRANSCRIPTS

FIXTURES = TRANSCRIPTS / "claude-code"
START = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)
ENTRY_START = re.compile(r"^(> |< |\. )")


def log_of(path: Path, sidechains: bool = False, max_chars: int = 2000) -> str:
    return render_log(read_session(path, sidechains, max_chars).entries, max_chars)[0]


def assert_well_formed(log: str) -> None:
    """Every line is an entry or an indented continuation, never ambiguous."""
    for line in log.splitlines():
        assert ENTRY_START.match(line) or line.startswith("  "), repr(line)


needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared transcripts not present")


@needs_fixtures
def test_representative_fixture_becomes_prefixed_log():
    log = log_of(FIXTURES / "representative_messages.jsonl")
    lines = log.splitlines()
    assert lines[0] == "> Hello Claude! Can you help me understand how Python decorators work?"
    assert ". Edit decorator_example.py" in lines  # path shown relative to the session's cwd
    assert ". Bash python /tmp/decorator_example.py" in lines
    assert lines[-1].startswith("< [summary] User learned about Python decorators")
    assert "File created successfully" not in log  # tool results are not copied
    assert_well_formed(log)


@needs_fixtures
def test_edge_case_fixture_counts_bad_lines_and_keeps_going():
    session = read_session(FIXTURES / "edge_cases.jsonl", False, 2000)
    # "massive error", 42 and [1] are not objects; {"silly": ...} has no known
    # type; two records have a message without content.
    assert session.malformed == 3
    assert session.skipped == 6
    log = render_log(session.entries, 2000)[0]
    assert "> Testing special characters: café, naïve, résumé, 中文, العربية, русский" in log
    assert "> test-command --verbose --output /tmp/test.log" in log  # slash command, unwrapped
    assert "Caveat: The messages below" not in log
    assert "Tool execution failed" not in log
    assert ". TodoWrite 5 todos" in log
    assert_well_formed(log)


@needs_fixtures
def test_every_fixture_renders_well_formed():
    for path in FIXTURES.glob("*.jsonl"):
        assert_well_formed(log_of(path))


def test_long_session_with_megabyte_outputs(tmp_path):
    session = busy_claude_session("s-long", START, turns=2600, tool_output_bytes=200)
    big = session.tool_use("Read", {"file_path": "/work/app/data/huge.csv"})
    session.tool_result(big, "x,y\n" * 300_000)  # 1.2 MB of output
    path = tmp_path / "s-long.jsonl"
    write_jsonl(path, session.records)
    assert len(session.records) >= 10_000
    read = read_session(path, False, 2000)
    assert read.records == len(session.records)
    assert read.skipped == 0
    log = render_log(read.entries, 2000)[0]
    assert log.count("\n> please ") == 2599  # every request but the first line's
    assert log.startswith("> please ")
    assert ". Read data/huge.csv" in log
    assert "x,y" not in log
    assert "thinking about" not in log  # thinking is private
    assert len(log) < 600_000


def test_tool_result_lines_are_recognised_without_parsing():
    session = ClaudeSession("s", START)
    tool = session.tool_use("Bash", {"command": "ls"})
    result = json.dumps(session.tool_result(tool, "a\n" * 10)).encode()
    user = json.dumps(session.user('look: "type": "tool_result" in my text')).encode()
    assistant = json.dumps(session.records[0]).encode()
    assert is_tool_result_line(result)
    assert not is_tool_result_line(user)
    assert not is_tool_result_line(assistant)


def test_line_cut_mid_json_and_unknown_types_are_skipped(tmp_path):
    session = ClaudeSession("s-cut", START)
    session.user("fix the login bug")
    session.raw({"type": "hologram", "payload": 1})
    session.raw({"type": "file-history-snapshot", "snapshot": {}})  # known, ignored
    session.assistant("Looking at it.")
    path = tmp_path / "s-cut.jsonl"
    write_jsonl(path, session.records)
    with path.open("ab") as fh:
        fh.write(b'{"parentUuid":"x","type":"assistant","message":{"role":"assis')
    read = read_session(path, False, 2000)
    assert (read.skipped, read.malformed) == (2, 1)
    assert render_log(read.entries, 2000)[0] == "> fix the login bug\n< Looking at it.\n"


def test_session_spanning_midnight_is_filed_under_its_start_date(tmp_path):
    session = ClaudeSession("s-night", datetime(2026, 3, 14, 23, 58, tzinfo=timezone.utc))
    for i in range(40):  # 7 s per record: ends after midnight
        session.user(f"step {i}")
    path = tmp_path / "s-night.jsonl"
    write_jsonl(path, session.records)
    assert session.records[-1]["timestamp"].startswith("2026-03-15")
    read = read_session(path, False, 2000)
    assert log_relpath(read, START) == "logs/2026/03/14/s_night-step-0.md"


def test_sidechains_left_out_or_marked(tmp_path):
    session = ClaudeSession("s-side", START)
    session.user("review the parser")
    session.tool_use("Task", {"description": "review parser", "prompt": "...", "subagent_type": "reviewer"})
    session.user("Review dream/parser.py", sidechain=True)
    session.tool_use("Read", {"file_path": "/work/app/dream/parser.py"}, sidechain=True)
    session.assistant("The parser has no tests.", sidechain=True)
    session.assistant("The reviewer says the parser has no tests.")
    path = tmp_path / "s-side.jsonl"
    write_jsonl(path, session.records)
    without = log_of(path, sidechains=False)
    assert without == (
        "> review the parser\n. Task reviewer: review parser\n"
        "< The reviewer says the parser has no tests.\n"
    )
    marked = log_of(path, sidechains=True)
    assert "> [sidechain] Review dream/parser.py\n" in marked
    assert ". [sidechain] Read dream/parser.py\n" in marked
    assert "< [sidechain] The parser has no tests.\n" in marked
    assert_well_formed(marked)


def test_non_english_text_and_slug(tmp_path):
    session = ClaudeSession("s-zh", START)
    session.user("修复登录页面的错误")
    session.assistant("好的，我来看看。")
    path = tmp_path / "s-zh.jsonl"
    write_jsonl(path, session.records)
    read = read_session(path, False, 2000)
    assert render_log(read.entries, 2000)[0] == "> 修复登录页面的错误\n< 好的，我来看看。\n"
    assert log_relpath(read, START).endswith("/s_zh-session.md")
    assert slugify("Réparer le cache de l'index") == "reparer-le-cache-de-lindex"


def test_long_text_is_cut_with_marker_and_continuations_cannot_pose_as_entries(tmp_path):
    session = ClaudeSession("s-long-text", START)
    session.user("here is the diff:\n> not a user line\n. not a tool line\n< not an answer")
    session.assistant("word " * 5000)
    path = tmp_path / "s.jsonl"
    write_jsonl(path, session.records)
    log = log_of(path, max_chars=300)
    lines = log.splitlines()
    assert lines[:4] == ["> here is the diff:", "  > not a user line", "  . not a tool line", "  < not an answer"]
    answer = lines[4]
    assert answer.startswith("< word word")
    assert answer.endswith("[…cut 24700 chars]")
    assert len(answer) < 340
    assert_well_formed(log)


def test_secrets_are_redacted_in_text_and_tool_calls(tmp_path):
    key = "sk-ant-api03-" + "Q" * 40
    token = "ghp_" + "a1B2" * 9
    session = ClaudeSession("s-secret", START)
    session.user(f"use this key {key}")
    session.tool_use("Bash", {"command": f"git push https://me:{token}@github.com/x/y.git"})
    path = tmp_path / "s.jsonl"
    write_jsonl(path, session.records)
    text, count = render_log(read_session(path, False, 2000).entries, 2000)
    assert key not in text and token not in text
    assert "[REDACTED:" in text
    assert count == 2


def test_secret_straddling_the_cut_never_leaks_a_fragment(tmp_path):
    key = "sk-ant-api03-" + "Z" * 60
    session = ClaudeSession("s-cut-secret", START)
    session.user("x" * 279 + " " + key + " tail")  # the key starts 20 chars before the cut
    path = tmp_path / "s.jsonl"
    write_jsonl(path, session.records)
    log = log_of(path, max_chars=300)
    assert "sk-ant" not in log and "ZZZZ" not in log
