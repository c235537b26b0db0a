"""render_logs: many sessions, one redaction pass, the same logs and counts as one by one."""

from __future__ import annotations

from dream.redaction.redact import redact
from dream.transcripts.common import make_entry
from dream.transcripts.render import render_log, render_logs

KEY = "sk-ant-api03-" + "k7Q" * 15
TOKEN = "ghp_" + "Zx9" * 12


def test_render_logs_matches_render_log_per_session() -> None:
    sessions = [
        [make_entry("user", f"deploy with {KEY}", 2000), make_entry("assistant", "done", 2000)],
        [],
        [make_entry("tool", f"Bash git push https://x:{TOKEN}@github.com/a/b", 2000)],
        [make_entry("assistant", "nothing secret here " * 200, 50),
         make_entry("user", f"{TOKEN} and {KEY}", 2000)],
    ]
    together = render_logs(sessions, 2000)
    assert together == [render_log(entries, 2000) for entries in sessions]
    # Counts per session, from the single-text redactor (not the batched one).
    expected = [sum(redact(entry.text)[1] for entry in entries) for entries in sessions]
    assert [count for _, count in together] == expected == [1, 0, 1, 2]
    assert all(KEY not in text and TOKEN not in text for text, _ in together)


def test_render_logs_of_nothing() -> None:
    assert render_logs([], 2000) == []
    assert render_logs([[]], 2000) == [("", 0)]
