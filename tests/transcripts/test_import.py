"""Import: default paths under a fake home, incremental, idempotent, redacted."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dream.config import Settings
from dream.errors import BadInput
from dream.transcripts import claude_code
from dream.transcripts.importer import import_configured, import_transcripts
from dream.transcripts.synthetic import (
    ClaudeSession,
    CodexSession,
    busy_claude_session,
    write_jsonl,
)

START = datetime(2026, 4, 2, 8, 0, tzinfo=timezone.utc)
ANTHROPIC_KEY = "sk-ant-api03-" + "k7Q" * 15
GITHUB_TOKEN = "ghp_" + "Zx9" * 12
CODEX_SID = "0199a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def project(home) -> Path:
    """``~/.claude/projects/-work-app`` with a memory store and three sessions."""
    folder = home / ".claude" / "projects" / "-work-app"
    memory = folder / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Stack](stack.md) — python 3.12, postgres\n")
    (memory / "stack.md").write_text("---\nname: stack\ntype: project\n---\nPython 3.12.\n")
    for i, ask in enumerate(["set up ci", "fix flaky test", "bump deps"]):
        session = busy_claude_session(f"sess-{i}", START, turns=5, tool_output_bytes=3000, seed=i)
        session.records[0]["message"]["content"] = ask
        write_jsonl(folder / f"sess-{i}.jsonl", session.records)
    return folder


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` with its bytes and mtime.

    The empty import lock file is left out: taking the lock truncates it.
    """
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file() and p.name != "import.lock"
    }


def logs(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in (store / "logs").rglob("*.md"))


def test_default_claude_path_is_beside_the_memory_folder(project):
    store = project / "memory"
    result = import_transcripts(store, "claude-code", None, Settings())
    assert result.transcripts == project
    assert (result.sessions_written, result.sessions_unchanged) == (3, 0)
    assert logs(store) == [
        "logs/2026/04/02/sess_0-set-up-ci.md",
        "logs/2026/04/02/sess_1-fix-flaky-test.md",
        "logs/2026/04/02/sess_2-bump-deps.md",
    ]
    text = (store / logs(store)[0]).read_text()
    assert text.startswith("> set up ci\n. Bash pytest -q tests/test_")


def test_second_import_changes_nothing(project):
    store = project / "memory"
    import_transcripts(store, "claude-code", None, Settings())
    before = snapshot(store)
    result = import_transcripts(store, "claude-code", None, Settings())
    assert (result.sessions_written, result.sessions_unchanged) == (0, 3)
    assert result.logs_written == []
    assert snapshot(store) == before  # bytes and mtimes, state file included


def test_grown_session_rewrites_only_its_own_log(project):
    store = project / "memory"
    import_transcripts(store, "claude-code", None, Settings())
    before = snapshot(store)
    grown = ClaudeSession("sess-1", START)
    grown.user("also pin pytest to 8.3")
    write_jsonl(project / "sess-1.jsonl", grown.records, append=True)

    result = import_transcripts(store, "claude-code", None, Settings())

    assert result.logs_written == [store / "logs/2026/04/02/sess_1-fix-flaky-test.md"]
    after = snapshot(store)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {"logs/2026/04/02/sess_1-fix-flaky-test.md", ".dream/import-state.json"}
    assert after["logs/2026/04/02/sess_1-fix-flaky-test.md"][0].endswith(b"> also pin pytest to 8.3\n")


def test_memory_files_and_transcripts_are_never_touched(project):
    store = project / "memory"
    transcripts_before = {p.name: p.read_bytes() for p in project.glob("*.jsonl")}
    memory_before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.glob("*.md")}
    import_transcripts(store, "claude-code", None, Settings())
    assert {p.name: p.read_bytes() for p in project.glob("*.jsonl")} == transcripts_before
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in store.glob("*.md")} == memory_before


def test_planted_secrets_never_reach_logs_or_dream_folder(project):
    store = project / "memory"
    session = ClaudeSession("sess-secret", START)
    session.user(f"deploy with ANTHROPIC_API_KEY={ANTHROPIC_KEY}")
    tool = session.tool_use("Bash", {"command": f"git clone https://bot:{GITHUB_TOKEN}@github.com/a/b"})
    session.tool_result(tool, f"token {GITHUB_TOKEN} accepted")
    session.assistant(f"Cloned using {GITHUB_TOKEN}.")
    write_jsonl(project / "sess-secret.jsonl", session.records)

    result = import_transcripts(store, "claude-code", None, Settings())

    assert result.redactions == 3
    for path in store.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert ANTHROPIC_KEY.encode() not in data, path
            assert GITHUB_TOKEN.encode() not in data, path
    log = next((store / "logs").rglob("sess_secret-*.md")).read_text()
    assert "[REDACTED:anthropic-key]" in log and "[REDACTED:github-token]" in log


def test_codex_default_path_and_growth(home, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / "MEMORY.md").write_text("")
    session = CodexSession(CODEX_SID, START)
    session.user("rename the cli flag")
    session.shell("rg -n old_flag", "src/cli.py:3")
    rollout = home / ".codex" / "sessions" / "2026" / "04" / "02" / f"rollout-2026-04-02T08-00-00-{CODEX_SID}.jsonl"
    write_jsonl(rollout, session.records)

    first = import_transcripts(store, "codex", None, Settings(project="/work/app"))
    assert first.transcripts == home / ".codex" / "sessions"
    log = store / f"logs/2026/04/02/{CODEX_SID}-rename-the-cli-flag.md"
    assert log.read_text() == "> rename the cli flag\n. shell rg -n old_flag\n"

    more = CodexSession(CODEX_SID, START)
    more.records.clear()
    more.assistant("Renamed --old-flag to --new-flag.")
    write_jsonl(rollout, more.records, append=True)
    second = import_transcripts(store, "codex", None, Settings(project="/work/app"))
    assert second.logs_written == [log]
    assert log.read_text().endswith("< Renamed --old-flag to --new-flag.\n")


def test_slug_change_replaces_the_old_log(project):
    store = project / "memory"
    early = ClaudeSession("sess-new", START)
    early.raw({"type": "summary", "summary": "nothing yet"})
    early.assistant("Ready.")  # Claude Code can answer before the first request
    write_jsonl(project / "sess-new.jsonl", early.records)
    import_transcripts(store, "claude-code", None, Settings())
    assert "logs/2026/04/02/sess_new-session.md" in logs(store)

    later = ClaudeSession("sess-new", START)
    later.user("write the release notes")
    write_jsonl(project / "sess-new.jsonl", later.records, append=True)
    result = import_transcripts(store, "claude-code", None, Settings())

    assert "logs/2026/04/02/sess_new-session.md" not in logs(store)
    assert "logs/2026/04/02/sess_new-write-the-release-notes.md" in logs(store)
    assert result.logs_removed == [store / "logs/2026/04/02/sess_new-session.md"]


def test_changed_settings_reimport_and_deleted_log_comes_back(project):
    store = project / "memory"
    import_transcripts(store, "claude-code", None, Settings())
    target = store / "logs/2026/04/02/sess_0-set-up-ci.md"
    short = import_transcripts(store, "claude-code", None, Settings(max_entry_chars=80))
    assert short.sessions_unchanged == 3  # all read again, logs identical (short texts)
    target.unlink()
    again = import_transcripts(store, "claude-code", None, Settings(max_entry_chars=80))
    assert again.logs_written == [target]


def test_summary_only_transcript_writes_no_log(project):
    store = project / "memory"
    write_jsonl(project / "summaries.jsonl", [{"type": "summary", "summary": "Old work", "leafUuid": "u"}])
    import_transcripts(store, "claude-code", None, Settings())
    assert not any("summaries" in p for p in logs(store))


def test_malformed_lines_are_counted_and_warned(project):
    store = project / "memory"
    with (project / "sess-0.jsonl").open("ab") as fh:
        fh.write(b'{"type":"hologram"}\n{"type":"user","message":{"ro')
    result = import_transcripts(store, "claude-code", None, Settings())
    assert result.records_skipped == 2
    assert result.warnings == [f"{project / 'sess-0.jsonl'}: 1 malformed line(s) skipped"]


def test_configured_source_and_relative_path(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    session = ClaudeSession("cfg-1", START)
    session.user("check the config path")
    write_jsonl(tmp_path / "store" / "transcripts" / "cfg-1.jsonl", session.records)
    assert import_configured(store, Settings()) is None
    result = import_configured(store, Settings(transcripts="claude-code", transcripts_path="transcripts"))
    assert result is not None and result.sessions_written == 1


def test_bad_paths_are_one_line_bad_input(project, tmp_path):
    elsewhere = tmp_path / "plain-store"
    elsewhere.mkdir()
    with pytest.raises(BadInput, match="not a Claude Code memory folder"):
        import_transcripts(elsewhere, "claude-code", None, Settings())
    with pytest.raises(BadInput, match="does not exist"):
        import_transcripts(project / "memory", "claude-code", tmp_path / "nope", Settings())
    with pytest.raises(BadInput, match="unknown transcript source"):
        import_transcripts(project / "memory", "gemini", None, Settings())  # type: ignore[arg-type]


def test_unreadable_transcript_is_a_warning_not_a_failure(project, monkeypatch):
    real = claude_code.read_session

    def refuse_one(path, *args):
        if path.name == "sess-2.jsonl":  # as if chmod 0 (root could still read it)
            raise PermissionError(13, "Permission denied")
        return real(path, *args)

    monkeypatch.setattr(claude_code, "read_session", refuse_one)
    result = import_transcripts(project / "memory", "claude-code", None, Settings())
    assert result.sessions_written == 2
    assert any("cannot read" in w for w in result.warnings)


def test_a_file_that_is_not_a_transcript_is_refused_in_one_line(project, tmp_path, cli):
    """Observed on main: `dream import --from claude-code /etc/passwd` exited 0 ("sessions_unchanged: 1") and
    reading /proc/self/mem only warned."""
    store = project / "memory"
    accounts = tmp_path / "accounts.txt"
    accounts.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    before = snapshot(store)
    for path, why in [(accounts, "is not a claude-code transcript (none of its 2 line(s) is a JSON record)"),
                      (Path("/proc/self/mem"), "cannot read it: Input/output error"),
                      (fifo, "is a FIFO, not a transcript file"),
                      (Path("/dev/null"), "is a character device, not a transcript file")]:
        for _ in range(2):  # the second time too: a file refused is never recorded as imported
            res = cli("import", "--from", "claude-code", str(path), "--store", str(store))
            assert res.code == 2, (path, res.stdout)
            assert res.stderr.strip() == f"dream: error: {path}: {why}; nothing imported", res.stderr
    assert snapshot(store) == before
    good = cli("import", "--from", "claude-code", str(project / "sess-0.jsonl"), "--store", str(store), "--json")
    assert good.code == 0 and good.json["sessions_written"] == 1
