"""`logs_path`: imported activity logs outside the memory folder (issue 39).

Observed on main: every run wrote `logs/YYYY/MM/DD/*.md` into Claude Code's
`~/.claude/projects/<p>/memory/`, though the README said a run writes only
under `.dream/`. With `logs_path` set, the memory folder holds only the
memories and `.dream/`; the logs are imported, read, gated on and settled there.
"""

from __future__ import annotations

from pathlib import Path

from helpers.claude_home import claude_project, plain_store
from helpers.cli import assert_one_line_error


def _config(home: Path, line: str, monkeypatch) -> None:
    config = home / ".config" / "dream" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(line + "\n")
    monkeypatch.setenv("DREAM_CONFIG", str(config))


def test_imported_logs_go_to_the_logs_folder_and_the_memory_folder_is_untouched(home: Path, cli, monkeypatch):
    memory = claude_project(home, project="-home-me-till", sessions=5)
    before = sorted(p.name for p in memory.iterdir())
    _config(home, 'logs_path = "~/dream-logs/{store}"', monkeypatch)

    ran = cli("run", "--all", "--engine", "offline", "--json")
    assert [row["status"] for row in ran.json["stores"]] == ["proposed"], ran.stdout
    assert sorted(p.name for p in memory.iterdir()) == sorted([*before, ".dream"])  # no logs/ beside the memories
    [folder] = (home / "dream-logs").iterdir()
    assert len(list(folder.rglob("*.md"))) == 5 and folder.name.startswith("home-me-till-memory-")

    diff = cli("diff", "--store", str(memory), "--json").json
    assert len(diff["report"]["session_logs"]) == 5  # the run read them there
    assert cli("accept", "--store", str(memory)).code == 0
    gate = cli("status", "--store", str(memory), "--json").json["gate"]
    assert (gate["sessions_new"], gate["sessions_waiting"]) == (0, 0)  # settled: nothing read twice

    again = cli("run", "--store", str(memory), "--engine", "offline", "--force", "--json")
    assert again.json["sessions_read"] == 0, again.stdout


def test_a_store_keeping_its_own_logs_keeps_reading_them(home: Path, tmp_path: Path, cli, monkeypatch):
    notes = plain_store(tmp_path / "elsewhere", sessions=5)
    _config(home, 'logs_path = "~/dream-logs/{store}"', monkeypatch)
    assert cli("status", "--store", str(notes), "--json").json["gate"]["sessions_new"] == 5


def test_a_logs_folder_inside_the_memory_folder_is_refused_in_one_line(home: Path, cli, monkeypatch):
    memory = claude_project(home, project="-home-me-till", sessions=5)
    _config(home, 'logs_path = "imported"', monkeypatch)
    res = cli("run", "--store", str(memory), "--engine", "offline")
    assert_one_line_error(res, 2, "logs_path 'imported'", "inside the memory folder", ".dream/logs")
    assert not (memory / "imported").exists() and not (memory / "logs").exists()

    _config(home, 'logs_path = ".dream/logs"', monkeypatch)
    assert cli("run", "--store", str(memory), "--engine", "offline").code == 0
    assert len(list((memory / ".dream" / "logs").rglob("*.md"))) == 5 and not (memory / "logs").exists()
