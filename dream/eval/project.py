"""A case's project: a git repository built from the case's commits, for the lint cases.

``project:`` in a case is a list of commits, oldest first; each maps file
paths to their text, and a path mapped to nothing (``~``) is deleted in that
commit. The runner builds it beside the store and names it in the store's
settings (``project``), as a user's config would. A step ``commit:`` (same
mapping) adds a commit between runs: the project moved on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from dream.errors import BadInput

GIT_ENV = {"GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@example.com", "GIT_COMMITTER_NAME": "eval",
           "GIT_COMMITTER_EMAIL": "eval@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": "/usr/bin:/bin:/usr/local/bin"}


def check_commits(where: str, raw: object) -> list[dict[str, str | None]]:
    if not isinstance(raw, list) or not all(
            isinstance(c, dict) and all(v is None or isinstance(v, str) for v in c.values()) for c in raw):
        raise BadInput(f"{where}: `project:` is a list of commits, each mapping paths to text (~ deletes)")
    return [dict(c) for c in raw]


def build_project(root: Path, commits: list[dict[str, str | None]]) -> None:
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    for number, files in enumerate(commits, 1):
        add_commit(root, files, f"commit {number}")


def add_commit(root: Path, files: dict[str, str | None], message: str) -> None:
    """One more commit: each path gets its text, a path mapped to nothing (``~``) is deleted."""
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", message)


def _git(root: Path, *args: str) -> None:
    try:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT_ENV)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BadInput(f"{root}: cannot build the case's git project: {exc}") from None
