"""Instruction files: what the agent already loads beside its memory, so memory need not say it again.

dream reads them as the agents find them, read-only, and never writes them:

- Claude Code reads ``CLAUDE.md``, ``CLAUDE.local.md`` and ``.claude/CLAUDE.md`` in its working
  directory and in every folder above it (not ``/``), and the user's own ``~/.claude/CLAUDE.md``
  (``$CLAUDE_CONFIG_DIR`` moves ``~/.claude``).
- Codex reads ``AGENTS.override.md``, else ``AGENTS.md``, in its home (``$CODEX_HOME``, else
  ``~/.codex``), then one of the two in each folder from the project's git root down to the working
  directory.

The working directory is the project's: the ``project`` setting, else the folder the store's transcripts
ran in (`dream.lint.project.find_project`, as lint finds it). ``instructions_home`` stands for the home
folder (the eval and tests point it at a scratch one). The offline engine drops memories and requests
that only repeat a line and lists contradictions for a person (dream/engines/offline/instructed.py);
the Claude engine shows the lines in its first message (`dream.engines.claude.prompts.instruction_section`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dream.config import Settings
from dream.store.layouts import LayoutKind

CLAUDE_NAMES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
CODEX_NAMES = ("AGENTS.override.md", "AGENTS.md")  # the first that is there and not empty, per folder
MAX_FILE_BYTES = 64 * 1024  # Codex stops at 32 KiB of them all; a larger file is read this far
_LIST_MARK = ("- ", "* ", "+ ")
NESTED_DEPTH = 3  # subfolders looked into for nested instruction files (packages/web/AGENTS.md)
SKIPPED_FOLDERS = frozenset({"node_modules", "vendor", "dist", "build", "target", "venv"})


@dataclass(frozen=True)
class Instruction:
    file: str  # as a person finds it: `CLAUDE.md` in the project, `~/.claude/CLAUDE.md`, else absolute
    line: int  # 1-based
    text: str  # the statement: the line without its list marker
    heading: str = ""  # the heading it is under ("Never do this" turns every line below it around)

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"

    @property
    def agent(self) -> LayoutKind:
        """The agent that loads the file every session: Codex its AGENTS.md files, Claude Code its CLAUDE.md ones."""
        return LayoutKind.CODEX if self.file.rsplit("/", 1)[-1].startswith("AGENTS") else LayoutKind.CLAUDE_CODE


def load_instructions(store_root: Path, settings: Settings) -> list[Instruction]:
    """Every statement of the instruction files the agent loads with this store; none when no project is known."""
    from dream.lint.project import find_project  # start-up: lists transcripts only when a dream runs

    found = find_project(store_root, settings)
    project = found[0] if found else None
    home, claude_home, codex_home = _homes(settings)
    files = instruction_files(project, claude_home, codex_home)
    return [rule for path in files for rule in read_file(path, project, home)]


def nested_instructions(store_root: Path, settings: Settings) -> list[Instruction]:
    """The statements of CLAUDE.md / AGENTS.md files in the project's subfolders: an agent loads them only while
    it works there, so a memory repeating one is no plain repeat (a person is told, nothing removed)."""
    from dream.lint.project import find_project  # start-up: lists transcripts only when a dream runs

    found = find_project(store_root, settings)
    if not found:
        return []
    project, home = found[0], _homes(settings)[0]
    return [rule for path in _below(project) for rule in read_file(path, project, home)]


def _below(project: Path) -> list[Path]:
    """Instruction files under the project's subfolders, NESTED_DEPTH deep at most, hidden folders and
    dependencies skipped."""
    files: list[Path] = []
    for folder, subfolders, names in os.walk(project):
        depth = len(Path(folder).relative_to(project).parts)
        subfolders[:] = [] if depth >= NESTED_DEPTH else sorted(
            d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        if depth:
            files += [Path(folder) / name for name in (*CLAUDE_NAMES[:2], *CODEX_NAMES) if name in names]
    return [path for path in files if _has_text(path)]


def instruction_files(project: Path | None, claude_home: Path, codex_home: Path) -> list[Path]:
    """The files, global ones first, each once; only files that exist and hold something."""
    candidates = [claude_home / "CLAUDE.md", *_first_of(codex_home, CODEX_NAMES)]
    if project is not None:
        for folder in reversed([project, *project.parents][:-1]):  # from the top down, not `/`
            candidates += [folder / name for name in CLAUDE_NAMES]
        for folder in _from_git_root(project):
            candidates += _first_of(folder, CODEX_NAMES)
    seen: set[Path] = set()
    files = []
    for path in candidates:
        real = path.resolve()
        if real not in seen and _has_text(path):
            seen.add(real)
            files.append(path)
    return files


def read_file(path: Path, project: Path | None, home: Path) -> list[Instruction]:
    """Its statements: list items and prose lines, not headings, comments, code blocks or `@imports`."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    name, found, fenced, commented = _shown(path, project, home), [], False, False
    heading, previous = "", ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        indented_code = raw.startswith(("    ", "\t")) and not previous.strip() and not line.startswith(_LIST_MARK)
        previous = raw if not indented_code or not line else ""  # a code block goes on to its first outdent
        if commented or line.startswith("<!--"):  # a comment over several lines is no instruction either
            commented = "-->" not in line
            continue
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if line.startswith("#") and not fenced:
            heading = line.lstrip("#").strip()
        if fenced or indented_code or not line or line.startswith(("#", "@", "|", ">")):
            continue
        statement = _without_mark(line)
        if statement:
            found.append(Instruction(name, number, statement, heading))
    return found


def _homes(settings: Settings) -> tuple[Path, Path, Path]:
    """The home folder, Claude Code's and Codex's: `instructions_home` names all three, else the environment."""
    if settings.instructions_home:
        home = Path(settings.instructions_home).expanduser()
        return home, home / ".claude", home / ".codex"
    home = Path.home()
    claude_home = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    return home, claude_home, Path(os.environ.get("CODEX_HOME") or home / ".codex")


def _first_of(folder: Path, names: tuple[str, ...]) -> list[Path]:
    for name in names:
        if _has_text(folder / name):
            return [folder / name]
    return []


def _from_git_root(project: Path) -> list[Path]:
    """The folders from the git root down to the project; only the project when it is in no repository."""
    chain = [project, *project.parents]
    for depth, folder in enumerate(chain):
        if (folder / ".git").exists():
            return list(reversed(chain[: depth + 1]))
    return [project]


def _has_text(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def _shown(path: Path, project: Path | None, home: Path) -> str:
    for base, prefix in ((project, ""), (home, "~/")):
        if base is not None and path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return str(path)


def _without_mark(line: str) -> str:
    if line.startswith(_LIST_MARK):
        line = line[2:].strip()
    head, dot, rest = line.partition(". ")
    if dot and head.isdigit():
        line = rest.strip()
    if line.startswith(("[ ] ", "[x] ")):
        line = line[4:]
    return line
