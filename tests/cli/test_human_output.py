"""Human output speaks to people: no Python values (`None`, `True`, `'auto'`) and no raw status words.

Every command is run in a morning's scenario, the errors a person meets
included, and everything it prints for people is scanned. The files the
commands show (a version's file, the lines of a diff) are the user's own
text and are left out of the scan.
"""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import typer
from helpers.stores import DEMO

from dream.cli import app
from dream.transcripts.synthetic import ClaudeSession, write_jsonl

PYTHON_VALUES = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b")
# A value in quotes, as repr() writes it. An error line may quote the name a person typed; nothing else may.
QUOTED = re.compile(r"(?<!\w)'[^'\n]+'(?!\w)")
# Status and reason words as the code spells them, where people read them with a space.
RAW_WORDS = re.compile(r"\b(rolled_back|no_signal|no_changes|budget_\w+|pre_accept)\b")
USER_TEXT = re.compile(r"^([-+@ ]|\|)")  # diff lines and the report's tables quote memory files


def the_morning(root: Path) -> dict[str, list]:
    """Each command's human runs (arguments, `--input` what it reads), and steps between them."""
    store = root / "-work-api" / "memory"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    transcripts = root / "transcripts"
    session = ClaudeSession("9f0e0000-0000-4000-8000-000000000000", datetime(2026, 5, 4, 10, tzinfo=timezone.utc))
    session.user("remember that deploys need the VPN")
    session.assistant("Noted.")
    write_jsonl(transcripts / f"{session.session_id}.jsonl", session.records)
    s = ["--store", str(store)]

    def new_session() -> None:
        """Something new to dream about: a session log written after the last run."""
        log = store / "logs" / "2026" / "11" / "30" / f"new-{len(list(store.glob('logs/**/new-*')))}.md"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("> remember that the staging database is read-only on fridays\n< noted\n")

    def name_the_project() -> None:
        """A project folder without git beside the store, which its config names (lint is walked there)."""
        (root / "api" / "src").mkdir(parents=True, exist_ok=True)
        (root / "api" / "src" / "app.py").write_text("DATABASE_URL = 1\n")
        (store / ".dream" / "config.toml").write_text(f'project = "{root / "api"}"\n')

    return {
        "version": [["version"]],
        "config": [["config", *s]],
        "status": [["status", *s], ["status", "--all", "--root", str(root)]],
        "run": [["run", *s, "--engine", "offline"], ["run", *s], ["run", "--all", "--root", str(root)]],
        "proposals": [["proposals", *s]],
        "diff": [["diff", *s], ["diff", "--from", "1", *s], ["diff", "no-such-id", *s]],
        "review": [["review", *s, "--input", "n\n" * 30]],
        "accept": [["accept", "--only", "notes.md", *s],
                   ["accept", "--only", "feedback_small_prs.md", "project_database.md", *s], ["accept", *s]],
        "history": [["history", *s], ["history", "--all", "--root", str(root)]],
        "report": [["report", *s], ["report", "--all", "--root", str(root)], ["report", "--since", "soon", *s]],
        "show": [["show", "1", *s], ["show", "99", *s]],
        "rollback": [["rollback", "1", *s]],
        "reject": [new_session, ["run", "--force", "--engine", "offline", *s], ["reject", *s], ["reject", *s]],
        "rebase": [new_session, ["run", "--force", "--engine", "offline", *s], ["rebase", *s]],
        "gc": [["gc", "--keep", "9", *s]],
        "fsck": [["fsck", *s], ["fsck", "--json", *s]],
        "import": [["import", "--from", "claude-code", str(transcripts), *s]],
        "eval": [["eval", "--only", "team"], ["eval", "--only", "no-such-case"]],
        "lint": [["lint", *s], name_the_project, ["lint", *s]],
        "removed": [["removed", *s]],
        "notes": [["notes", *s], ["notes", "--answered", *s], ["notes", "dismiss", "1", *s], ["notes", "take", "99", *s], ["notes", "keep", *s]],
        "restore": [["restore", "project_database.md", *s], ["restore", "no-such.md", *s]],
        "purge-secret": [["purge-secret", *s, "--input", "no-such-secret-here\n"],
                         ["purge-secret", *s, "--input", "read-only on fridays\n"]],
        "pull": [["pull", "memstore_01x", "--into", str(root / "mirror")], ["pull", "--into", str(store)]],
        "push": [["push", *s]],
    }


def test_no_command_prints_python_values_or_raw_status_words(tmp_path: Path, home: Path, cli) -> None:
    morning = the_morning(tmp_path / "root")
    commands = {c.name for c in typer.main.get_command(app).commands.values()}  # type: ignore[attr-defined]
    assert commands <= set(morning), f"add the new command(s) to the morning: {commands - set(morning)}"
    assert set(morning) <= commands, f"no such command: {set(morning) - commands}"

    seen: list[str] = []
    for name, runs in morning.items():
        for args in runs:
            if callable(args):
                args()
                continue
            stdin = args.pop(args.index("--input") + 1) if "--input" in args else None
            args = [a for a in args if a != "--input"]
            result = cli(*args, input=stdin, env={"COLUMNS": "100"})
            assert "Traceback" not in result.stderr and "No such command" not in result.stderr, (args, result.stderr)
            for line in (result.stdout + result.stderr).splitlines():
                if name == "diff" and USER_TEXT.match(line):
                    continue
                seen.append(line)
                assert not PYTHON_VALUES.search(line), (args, line)
                assert not RAW_WORDS.search(line), (args, line)
                assert line.startswith("dream: error: ") or not QUOTED.search(line), (args, line)
    text = "\n".join(seen)
    # The scan saw what each kind of output looks like, so it can fail.
    for expected in ["current version", "proposed", "settings", "rolled back to version 1", "rejected",
                     "not among its changed files", "take this change to", "review actions", "store(s)"]:
        assert expected in text, expected
