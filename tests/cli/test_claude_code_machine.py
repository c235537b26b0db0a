"""A Claude Code machine with no configuration: its stores dream from their own project's transcripts.

A fake HOME holds ``~/.claude/projects/-home-me-shop/{*.jsonl, memory/}`` and
no config file at all; a second store outside ``~/.claude`` has its own
``logs/``. `dream run --all` (what the cron line runs) and `dream status
--all` treat each store by its kind.
"""

from __future__ import annotations

from pathlib import Path

from helpers.claude_home import SAID, claude_project, plain_store
from helpers.cli import assert_one_line_error


def test_run_all_proposes_for_a_claude_code_store_with_no_config(home: Path, tmp_path: Path, cli) -> None:
    memory = claude_project(home)
    other = plain_store(tmp_path / "elsewhere")
    assert not (home / ".config").exists()

    status = cli("status", "--all", "--root", str(other.parent), "--json")
    assert status.code == 0, status.stderr
    rows = {row["store"]: row for row in status.json["stores"]}
    shop, notes = rows[str(memory.resolve())], rows[str(other.resolve())]
    assert shop["transcripts"]["source"] == "claude-code" and shop["transcripts"]["changed"] == len(SAID)
    assert notes["transcripts"] is None and notes["gate"]["sessions_waiting"] == 5

    ran = cli("run", "--all", "--root", str(other.parent), "--engine", "offline", "--json")
    assert ran.code == 0, ran.stderr
    rows = {row["store"]: row for row in ran.json["stores"]}
    assert rows[str(memory.resolve())]["status"] == "proposed", rows
    assert rows[str(other.resolve())]["status"] == "proposed", rows
    assert len(list((memory / "logs").rglob("*.md"))) == len(SAID)  # imported from the JSONL beside it

    after = cli("status", "--all", "--root", str(other.parent), "--json")
    rows = {row["store"]: row for row in after.json["stores"]}
    assert rows[str(memory.resolve())]["gate"]["sessions_waiting"] == len(SAID)  # in the pending proposal
    assert rows[str(memory.resolve())]["pending"]


def test_a_single_claude_code_store_runs_without_config(home: Path, cli) -> None:
    memory = claude_project(home)
    ran = cli("run", "--store", str(memory), "--engine", "offline", "--json")
    assert ran.code == 0, ran.stderr
    assert ran.json["status"] == "proposed" and ran.json["sessions_read"] == len(SAID)
    diff = cli("diff", "--store", str(memory), "--json").json
    assert "Adyen" in diff["diff"]


def test_a_global_claude_code_setting_does_not_break_a_store_of_another_kind(home: Path, tmp_path: Path, cli,
                                                                            monkeypatch) -> None:
    memory = claude_project(home)
    other = plain_store(tmp_path / "elsewhere")
    config = home / ".config" / "dream" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('transcripts = "claude-code"\n')
    monkeypatch.setenv("DREAM_CONFIG", str(config))

    alone = cli("run", "--store", str(other), "--engine", "offline", "--json")
    assert alone.code == 0, alone.stderr
    assert alone.json["status"] == "proposed" and alone.json["sessions_read"] == 5

    status = cli("status", "--all", "--root", str(other.parent), "--json")
    assert status.code == 0, status.stderr
    assert all("error" not in row for row in status.json["stores"]), status.json
    ran = cli("run", "--all", "--root", str(other.parent), "--engine", "offline", "--json")
    assert ran.code == 0, ran.stderr
    assert {row["status"] for row in ran.json["stores"]} == {"proposed", "skipped"}  # notes: dreamed just now
    assert cli("status", "--store", str(memory), "--json").json["pending"]


def test_config_says_where_the_transcript_source_comes_from(home: Path, cli) -> None:
    memory = claude_project(home)
    shown = cli("config", "--store", str(memory), "--json")
    assert shown.code == 0, shown.stderr
    assert shown.json["settings"]["transcripts"] == "claude-code"
    assert shown.json["sources"]["transcripts"].startswith("detected")


def _config(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_transcripts_none_in_the_store_switches_detection_off(home: Path, cli) -> None:
    memory = claude_project(home)
    _config(memory / ".dream" / "config.toml", 'transcripts = "none"\n')

    shown = cli("config", "--store", str(memory), "--json").json
    assert shown["settings"]["transcripts"] is None
    assert shown["sources"]["transcripts"] == str(memory / ".dream" / "config.toml")
    ran = cli("run", "--store", str(memory), "--engine", "offline", "--json")
    assert ran.code == 0 and (ran.json["status"], ran.json["reason"]) == ("skipped", "sessions"), ran.stdout
    assert not (memory / "logs").exists()  # nothing imported from the JSONL beside it
    status = cli("status", "--all", "--json").json
    [row] = status["stores"]
    assert row["transcripts"] is None


def test_transcripts_none_in_the_global_config_holds_for_every_store_until_a_store_says_otherwise(
        home: Path, cli, monkeypatch) -> None:
    memory = claude_project(home)
    other = claude_project(home, "-home-me-blog")
    config = home / ".config" / "dream" / "config.toml"
    _config(config, 'transcripts = "none"\n')
    monkeypatch.setenv("DREAM_CONFIG", str(config))
    _config(other / ".dream" / "config.toml", 'transcripts = "claude-code"\n')

    ran = cli("run", "--all", "--engine", "offline", "--json")
    assert ran.code == 0, ran.stderr
    rows = {row["store"]: row for row in ran.json["stores"]}
    assert (rows[str(memory.resolve())]["status"], rows[str(memory.resolve())]["reason"]) == ("skipped", "sessions")
    assert rows[str(other.resolve())]["status"] == "proposed"
    assert not (memory / "logs").exists() and len(list((other / "logs").rglob("*.md"))) == len(SAID)


def test_a_misspelt_transcript_source_names_the_choices_with_none(home: Path, cli) -> None:
    memory = claude_project(home)
    _config(memory / ".dream" / "config.toml", 'transcripts = "off"\n')
    res = cli("run", "--store", str(memory), "--engine", "offline")
    assert_one_line_error(res, 2, "config.toml", "'transcripts'", "claude-code, codex, claude-mem, none")
