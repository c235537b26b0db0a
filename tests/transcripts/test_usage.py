"""Which memory files an agent read, from Claude Code and Codex transcripts.

A small synthetic transcript of each kind is written here for the default
run; the shared fixture transcripts (../shared/transcripts) are read too
when they are there.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.transcripts import usage
from dream.transcripts.usage import Reads, archive_candidates, memory_reads
from helpers.git_project import write
from helpers.stores import TRANSCRIPTS

MEMORIES = {"MEMORY.md": "- [a](a.md) — a\n- [b](b.md) — b\n- [c](c.md) — c\n",
            "a.md": "a\n", "b.md": "b\n", "c.md": "c\n"}


def _claude(store: Path) -> list[dict]:
    def call(when: str, name: str, args: dict) -> dict:
        return {"type": "assistant", "timestamp": when, "cwd": str(store.parent),
                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": name,
                                                               "input": args}]}}
    return [
        call("2026-11-01T10:00:00Z", "Read", {"file_path": str(store / "a.md")}),
        call("2026-11-03T10:00:00Z", "Read", {"file_path": str(store / "a.md")}),
        call("2026-11-02T10:00:00Z", "Bash", {"command": f"cat {store.name}/b.md | head -3"}),
        call("2026-11-02T11:00:00Z", "Read", {"file_path": str(store.parent / "README.md")}),  # not a memory
        call("2026-11-02T12:00:00Z", "Edit", {"file_path": str(store / "c.md")}),  # a write, not a read
    ]


def _codex(store: Path) -> list[dict]:
    return [
        {"timestamp": "2026-11-04T09:00:00Z", "type": "session_meta", "payload": {"cwd": str(store)}},
        {"timestamp": "2026-11-04T09:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "cat b.md"})}},
        {"timestamp": "2026-11-04T09:00:02Z", "type": "response_item",
         "payload": {"type": "local_shell_call", "action": {"command": ["bash", "-lc", "head -n 2 a.md"]}}},
    ]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    return path


def test_reads_per_memory_and_last_read_from_claude_code_and_codex(tmp_path):
    store = tmp_path / "project" / "memory"
    write(store, MEMORIES)
    files = [_jsonl(tmp_path / "cc" / "s1.jsonl", _claude(store)),
             _jsonl(tmp_path / "codex" / "rollout-1.jsonl", _codex(store))]
    reads = memory_reads(files, store, {"a.md", "b.md", "c.md"})
    assert reads.reads == {"a.md": 3, "b.md": 2}
    assert reads.last == {"a.md": "2026-11-04T09:00:02Z", "b.md": "2026-11-04T09:00:01Z"}


def test_a_read_counts_from_where_the_command_ran(tmp_path, monkeypatch):
    """Codex gives each shell call a `workdir`; a command line may `cd` first; a path may start with `$HOME`."""
    home = tmp_path / "home"
    store = home / ".codex" / "memories"
    write(store, MEMORIES)
    monkeypatch.setenv("HOME", str(home))
    elsewhere = str(tmp_path / "work" / "shop")  # the session's cwd: not the store

    def codex_call(when: str, name: str, args: dict) -> dict:
        return {"timestamp": when, "type": "response_item",
                "payload": {"type": "function_call", "name": name, "arguments": json.dumps(args)}}

    records = [
        {"timestamp": "2026-11-05T08:00:00Z", "type": "session_meta", "payload": {"cwd": elsewhere}},
        codex_call("2026-11-05T08:00:01Z", "shell", {"command": ["bash", "-lc", "cat a.md"], "workdir": str(store)}),
        codex_call("2026-11-05T08:00:02Z", "exec_command", {"cmd": "sed -n '1,20p' b.md", "workdir": str(store)}),
        codex_call("2026-11-05T08:00:03Z", "exec_command", {"cmd": f"cd {store} && head -n 3 c.md"}),
        codex_call("2026-11-05T08:00:04Z", "exec_command", {"cmd": "cat $HOME/.codex/memories/a.md"}),
        codex_call("2026-11-05T08:00:05Z", "exec_command", {"cmd": "cat a.md"}),  # from the cwd: not the store's
        codex_call("2026-11-05T08:00:06Z", "exec_command", {"cmd": f"cd {store}; ls; cd /tmp && cat b.md"}),
    ]
    reads = memory_reads([_jsonl(tmp_path / "rollout-2.jsonl", records)], store, {"a.md", "b.md", "c.md"})
    assert reads.reads == {"a.md": 2, "b.md": 1, "c.md": 1}
    assert reads.last["a.md"] == "2026-11-05T08:00:04Z"


def test_never_read_and_unpinned_memories_are_archive_candidates():
    reads = Reads(reads={"a.md": 1, "b.md": 1}, last={"a.md": "2026-11-30T00:00:00Z", "b.md": "2026-01-01T00:00:00Z"})
    now = datetime(2026, 12, 2, tzinfo=timezone.utc)
    assert archive_candidates(reads, {"a.md", "b.md", "c.md", "d.md"}, {"d.md"}, 90, now) == ["b.md", "c.md"]


def test_status_json_carries_the_reads_of_a_claude_code_store(cli, home):
    folder = home / ".claude" / "projects" / "-work-shop"
    store = folder / "memory"
    write(store, MEMORIES)
    _jsonl(folder / "s1.jsonl", _claude(store))
    res = cli("status", "--store", str(store), "--json")
    assert res.code == 0, res.stderr
    usage = res.json["memory_reads"]
    assert usage["memories"]["a.md"] == {"reads": 2, "last_read": "2026-11-03T10:00:00Z"}
    assert usage["memories"]["c.md"] == {"reads": 0, "last_read": None}
    assert "c.md" in usage["archive_candidates"]
    assert (store / "c.md").exists()  # listed, never removed


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/transcripts is not beside the checkout")
def test_the_shared_fixture_transcripts_are_read(tmp_path):
    files = sorted(TRANSCRIPTS.rglob("*.jsonl"))
    reads = memory_reads(files, tmp_path, {"a.md"})
    assert reads.transcripts == len(files) >= 5
    assert reads.reads == {}  # the fixtures read no memory file: every count is 0
    # and why: no tool call in them reads any file at all (they Edit, TodoWrite, run python, list with find)
    opened = [hit for path in files for record in usage._records(path) for hit in usage._opened(record)]
    assert opened == []
