"""`dream status` says what `dream run` will do (issue 39).

A fresh Claude Code project has transcripts and no logs/ yet: a run imports
them first and then gates on what came, so status counts them too, and its
advice names the command that will run, never `dream import`.
"""

from __future__ import annotations

from pathlib import Path

from helpers.claude_home import claude_project


def _gate(cli, *args: str) -> dict:
    res = cli("status", *args, "--json")
    assert res.code == 0, res.stderr
    return res.json["stores"][0]["gate"] if "--all" in args else res.json["gate"]


def test_status_opens_the_gate_a_run_opens_for_transcripts_still_to_import(home: Path, cli) -> None:
    memory = claude_project(home, project="-home-me-kiosk", sessions=5)  # min_sessions is 5

    fleet, single = _gate(cli, "--all"), _gate(cli, "--store", str(memory))
    for gate in (fleet, single):
        assert gate["open"] and gate["reason"] is None, gate
        assert gate["transcripts_to_import"] == 5 and "`dream run` imports them" in gate["message"], gate
    shown = cli("status", "--store", str(memory))
    assert "dream import" not in shown.stdout and "gate             open (5 claude-code" in shown.stdout, shown.stdout

    ran = cli("run", "--all", "--engine", "offline", "--json")
    assert [row["status"] for row in ran.json["stores"]] == ["proposed"], ran.stdout


def test_status_and_run_all_agree_when_too_few_transcripts_wait(home: Path, cli) -> None:
    memory = claude_project(home, project="-home-me-kiosk", sessions=2)

    gate = _gate(cli, "--store", str(memory))
    assert (gate["open"], gate["reason"], gate["transcripts_to_import"]) == (False, "sessions", 2), gate
    assert "`dream run --force` imports them" in gate["message"] and "dream import" not in gate["message"], gate
    assert _gate(cli, "--all")["message"] == gate["message"]

    ran = cli("run", "--all", "--engine", "offline", "--json")
    [row] = ran.json["stores"]
    assert (row["status"], row["reason"]) == ("skipped", "sessions") and row["message"] == gate["message"], row
    forced = cli("run", "--store", str(memory), "--engine", "offline", "--force", "--json")
    assert forced.json["status"] == "proposed" and forced.json["sessions_read"] == 2, forced.stdout


def test_status_names_the_missing_transcripts_the_run_would_stop_at(home: Path, cli) -> None:
    memory = claude_project(home, project="-home-me-kiosk", sessions=1)
    (memory / ".dream").mkdir(exist_ok=True)
    (memory / ".dream" / "config.toml").write_text('transcripts = "claude-code"\ntranscripts_path = "../nowhere"\n')

    shown = cli("status", "--store", str(memory))
    assert shown.code == 0, shown.stderr
    assert "warning          `dream run` would stop at its import:" in shown.stdout and "nowhere" in shown.stdout
