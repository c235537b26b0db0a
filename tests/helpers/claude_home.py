"""A Claude Code machine in a fake HOME: one project's transcripts and memory folder, no config file."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from dream.transcripts.synthetic import ClaudeSession, write_jsonl

START = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
SAID = [
    "remember that the shop's payments go through Adyen, not Stripe",
    "remember that product images live in the s3 bucket shop-media",
    "remember that we deploy the shop on Fridays only before noon",
    "remember that the search index is rebuilt every night at 02:00",
    "remember that refunds over 500 EUR need a second approver",
    "remember that the staging shop is at staging.shop.internal",
]


def claude_project(home: Path, project: str = "-home-me-shop", sessions: int = len(SAID)) -> Path:
    """``~/.claude/projects/<project>/{*.jsonl, memory/}``; returns the memory folder (the store)."""
    folder = home / ".claude" / "projects" / project
    memory = folder / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Shop](project_shop.md) — the online shop\n")
    (memory / "project_shop.md").write_text(
        "---\nname: Shop\ndescription: the online shop\ntype: project\n---\n\nThe shop runs on Django.\n")
    for n, text in enumerate(SAID[:sessions]):
        session = ClaudeSession(f"5a1e0000-0000-4000-8000-{n:012d}", START + timedelta(hours=n), cwd="/home/me/shop")
        session.user(text)
        session.assistant("Noted.")
        write_jsonl(folder / f"5a1e0000-0000-4000-8000-{n:012d}.jsonl", session.records)
    return memory


def plain_store(root: Path, sessions: int = 5) -> Path:
    """A store outside ~/.claude with its own activity logs."""
    store = root / "notes"
    logs = store / "logs/2026/11/21"
    logs.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Notes](project_notes.md) — notes\n")
    (store / "project_notes.md").write_text(
        "---\nname: Notes\ndescription: notes\ntype: project\n---\n\nNotes of the ops team.\n")
    for n in range(sessions):
        (logs / f"n{n}-ops.md").write_text(f"> remember that ops rota week {n} is covered by team {n}\n< Noted.\n")
    return store
