"""The project a memory store belongs to, and what its files say.

Where the project is: a store's config may name it (``project = PATH``);
else the agent's own transcripts say where it ran. Claude Code keeps a
project's memory at ``~/.claude/projects/<p>/memory`` beside the session
transcripts, and every record carries ``cwd``; Codex sessions carry ``cwd``
in their ``session_meta``, and a Codex memory folder's rollout summaries and raw
memories record it as ``cwd:`` (dream.store.codex). Nothing is guessed from the folder's name: when
the transcripts disagree, or name no folder that exists, the project is
unknown and lint says so.

The project's files: `git ls-files` where the project is a git work tree,
else a bounded walk. Either way the project is only read.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dream.config import Settings, configured_project
from dream.errors import BadInput
from dream.sources import SourceKind
from dream.store.codex import evidence_cwds
from dream.store.layouts import LayoutKind, detect

MAX_TRANSCRIPTS = 200  # the newest ones: enough to agree on a folder
MAX_WALK_FILES = 50_000
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".dream"})


@dataclass
class Project:
    root: Path
    found_by: str  # how dream knows: "config", "claude-code transcripts", "codex transcripts"
    git: bool = False
    head: str = ""  # short commit at HEAD, "" without git
    files: list[str] = field(default_factory=list)  # relative paths, '/'-separated
    truncated: bool = False  # the walk stopped at MAX_WALK_FILES
    rev: str = ""  # a past commit the files are read at (open_at); "" for the work tree

    @property
    def revs(self) -> list[str]:
        """What `git log` starts from: the commit, or HEAD by default."""
        return [self.rev] if self.rev else []


def find_project(store_root: Path, settings: Settings) -> tuple[Path, str] | None:
    """The project folder and how it was found, or None when nothing says."""
    project = configured_project(store_root, settings)
    if project is not None:
        return project, "config"
    if detect(store_root).kind == LayoutKind.CODEX:  # Codex's evidence records where each session ran
        folder = agreed_folder(evidence_cwds(store_root))
        return (folder, "codex memory evidence") if folder is not None else None
    from dream.transcripts.discover import list_transcripts, resolve_source_path  # start-up: only without config

    for source in _sources(store_root, settings):
        try:
            folder = resolve_source_path(store_root, source, None, settings)
        except BadInput:  # no transcripts where this source keeps them: not this source's store
            continue
        cwd = agreed_cwd(list_transcripts(source, folder)[-MAX_TRANSCRIPTS:])
        if cwd is not None:
            return cwd, f"{source} transcripts"
    return None


def _sources(store_root: Path, settings: Settings) -> list:
    """The configured source first; a Claude Code memory folder needs no configuring."""
    configured = [settings.transcripts] if settings.transcripts else []
    return configured + [s for s in (SourceKind.CLAUDE_CODE,) if s not in configured]


def agreed_cwd(transcripts: list[Path]) -> Path | None:
    """The folder most sessions ran in, if one clearly leads and still exists."""
    from dream.transcripts.common import transcript_cwd  # start-up: only without config

    return agreed_folder([c for c in (transcript_cwd(p) for p in transcripts) if c])


def agreed_folder(cwds: list[str]) -> Path | None:
    """The folder most of `cwds` name, if one clearly leads and still exists."""
    counts = Counter(cwds[-MAX_TRANSCRIPTS:])
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[1][1] * 2 > ranked[0][1]):
        return None  # none, or two folders nearly as common: not plain which is the project
    folder = Path(ranked[0][0])
    return folder if folder.is_dir() else None


def open_project(root: Path, found_by: str, timeout: float) -> Project:
    """The project's files, from git when it is a work tree, else from a walk."""
    project = Project(root=root, found_by=found_by)
    listed = git(root, ["ls-files", "-z"], timeout)
    if listed is not None:
        project.git = True
        project.head = (git(root, ["rev-parse", "--short", "HEAD"], timeout) or "").strip()
        project.files = [p for p in listed.split("\0") if p]
        return project
    if root.resolve() in _not_projects():
        project.truncated = True  # a session run from the home folder names no project: check nothing there
        return project
    project.files, project.truncated = walk(root)
    return project


def open_at(root: Path, commit: str, timeout: float) -> Project | None:
    """The project's tracked files as they were at `commit`; None when git knows no such commit."""
    full = resolve_commit(root, commit, timeout)
    listed = git(root, ["ls-tree", "-r", "-z", "--name-only", full], timeout) if full else None
    if listed is None:
        return None
    return Project(root=root, found_by="", git=True, head=commit, files=[p for p in listed.split("\0") if p], rev=full)


def resolve_commit(root: Path, commit: str, timeout: float) -> str:
    """The full name of `commit` in the project's git, or "" when it names no commit there."""
    if not commit or commit.startswith("-"):
        return ""
    out = git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}"], timeout)
    return out.strip() if out else ""


def _not_projects() -> set[Path]:
    """Folders a session may run in that are not one project, when they are not git trees."""
    return {Path("/"), Path.home().resolve(), Path(tempfile.gettempdir()).resolve()}


def git(root: Path, args: list[str], timeout: float, stdin: str | None = None) -> str | None:
    """A read-only git command's output in `root`, or None when it is not a git tree or fails."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, text=True,
                              timeout=max(timeout, 0.1), env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
                              encoding="utf-8", errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def walk(root: Path, limit: int = MAX_WALK_FILES) -> tuple[list[str], bool]:
    """Files under `root` without git: no symlinks followed, dependency and cache folders left out."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in sorted(names):
            found.append(prefix + name)
            if len(found) >= limit:
                return found, True
    return found, False
