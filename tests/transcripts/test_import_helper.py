"""A large import shares the reading with a forked helper: the same logs either way.

`dream.transcripts.helper` only engages above `MIN_BYTES`; the tests lower it
to zero, then compare every byte the import writes with an import that reads
everything in one process, including when the helper dies part way or cannot
read a transcript.
"""

from __future__ import annotations

import os
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.config import Settings
from dream.transcripts import helper
from dream.transcripts.importer import import_transcripts
from dream.transcripts.synthetic import busy_claude_session, write_jsonl

START = datetime(2026, 5, 6, 7, 0, tzinfo=timezone.utc)
SECRET = "ghp_" + "Qw8" * 12


def make_project(folder: Path, sessions: int = 9) -> Path:
    memory = folder / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Stack](stack.md) — the stack\n")
    for i in range(sessions):
        session = busy_claude_session(f"s{i:02d}", START, turns=4 + i, tool_output_bytes=2000 * (i + 1), seed=i)
        session.records[0]["message"]["content"] = f"task {i}: deploy with token {SECRET}"
        write_jsonl(folder / f"s{i:02d}.jsonl", session.records)
    return memory


def written(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted((store / "logs").rglob("*.md"))}


def force_helper(monkeypatch) -> None:
    """Fork for any import, even beside the threads other tests left in this worker.

    (The helper reads files only, so those threads' locks do not matter here.)
    """
    monkeypatch.setattr(helper, "MIN_BYTES", 0)
    monkeypatch.setattr(helper, "can_fork", lambda: True)


def import_both_ways(tmp_path: Path, monkeypatch) -> tuple[dict, dict, list, list]:
    """(logs, logs with the helper, result, result with the helper)."""
    alone = make_project(tmp_path / "alone" / "-p")
    shared = make_project(tmp_path / "shared" / "-p")
    plain = import_transcripts(alone, "claude-code", alone.parent, Settings())
    force_helper(monkeypatch)
    forked = import_transcripts(shared, "claude-code", shared.parent, Settings())
    return written(alone), written(shared), plain, forked


def test_helper_gives_the_same_logs_as_one_process(tmp_path, monkeypatch):
    forks = []
    real_fork = os.fork
    monkeypatch.setattr(helper.os, "fork", lambda: forks.append(1) or real_fork())
    logs, shared_logs, plain, forked = import_both_ways(tmp_path, monkeypatch)
    assert forks == [1]  # the helper did run
    assert shared_logs == logs and len(logs) == 9
    assert (forked.sessions_written, forked.redactions) == (plain.sessions_written, plain.redactions) == (9, 9)
    assert not any(SECRET.encode() in data for data in shared_logs.values())


def test_a_helper_that_dies_part_way_leaves_the_rest_to_this_process(tmp_path, monkeypatch):
    real_serve = helper._serve

    def serve_two_then_die(paths, read, fd):
        real_serve(paths[:2], read, fd)
        os._exit(3)

    monkeypatch.setattr(helper, "_serve", serve_two_then_die)
    logs, shared_logs, _, forked = import_both_ways(tmp_path, monkeypatch)
    assert shared_logs == logs
    assert forked.sessions_written == 9


def test_a_transcript_the_helper_cannot_read_is_a_warning(tmp_path, monkeypatch):
    memory = make_project(tmp_path / "-p")
    last = sorted(memory.parent.glob("*.jsonl"))[-1]  # in the helper's share
    real_init = helper.Helper.__init__

    def helper_denied(self, paths, read):
        def denied(path):
            return PermissionError(13, "Permission denied") if path == last else read(path)

        real_init(self, paths, denied)

    monkeypatch.setattr(helper.Helper, "__init__", helper_denied)
    force_helper(monkeypatch)
    result = import_transcripts(memory, "claude-code", memory.parent, Settings())
    assert result.sessions_written == 8
    assert any(last.name in w and "cannot read" in w for w in result.warnings)


def test_no_helper_for_a_small_import_or_beside_another_thread(monkeypatch):
    sizes = [40 << 20, 40 << 20]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not helper.can_fork()  # a fork would copy that thread's locks
        assert helper.helper_share(sizes) == 2
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(helper, "can_fork", lambda: True)
    assert helper.helper_share([1000, 1000]) == 2  # below MIN_BYTES
    assert helper.helper_share(sizes) == 1  # the second half is the helper's


@pytest.mark.parametrize("cut", [0, 5, 13])
def test_a_cut_message_file_is_read_up_to_the_cut(cut):
    messages = [helper._pack(OSError(2, "gone")), helper._pack(OSError(13, "denied"))]
    data = b"".join(helper._LENGTH.pack(len(m)) + m for m in map(__import__("marshal").dumps, messages))
    frames = list(helper._frames(data[: len(data) - cut]))
    assert len(frames) == (2 if cut == 0 else 1)
