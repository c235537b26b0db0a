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
import re
from dataclasses import dataclass
from pathlib import Path

from dream.config import Settings
from dream.store.layouts import LayoutKind

CLAUDE_NAMES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
CODEX_NAMES = ("AGENTS.override.md", "AGENTS.md")  # the first that is there and not empty, per folder
MAX_FILE_BYTES = 64 * 1024  # Codex stops at 32 KiB of them all; a larger file is read this far
_LIST_MARK = ("- ", "* ", "+ ")
IMPORT_HOPS = 5  # Claude Code follows `@path` imports this many hops deep
_IMPORT = re.compile(r"(?<![\w`@])@(~/[^\s`]+|[\w.][^\s`]*)")
_CODE_SPAN = re.compile(r"`[^`]*`")
_PATHS = re.compile(r"^paths\s*:", re.M)
_LIST_ITEM = re.compile(r"[-*+] |\d+[.)] ")
NESTED_DEPTH = 3  # subfolders looked into for nested instruction files (packages/web/AGENTS.md)
SKIPPED_FOLDERS = frozenset({"node_modules", "vendor", "dist", "build", "target", "venv"})


@dataclass(frozen=True)
class Instruction:
    file: str  # as a person finds it: `CLAUDE.md` in the project, `~/.claude/CLAUDE.md`, else absolute
    line: int  # 1-based
    text: str  # the statement: the line without its list marker
    heading: str = ""  # what it stands under: headings, a lead-in, parent items ("Never do this" turns it around)
    # the agents that load the file: Codex its AGENTS.md files, Claude Code its CLAUDE.md ones and what they import
    agents: frozenset[LayoutKind] = frozenset({LayoutKind.CLAUDE_CODE})
    folder: str = ""  # a project file: the folder whose work loads it (absolute); a global file: ""
    scope: str = ""  # the lead-in or parent items narrowing it ("When working in packages/api:", "- On CI:")

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}"


def load_instructions(store_root: Path, settings: Settings) -> list[Instruction]:
    """Every statement of the instruction files the agent loads with this store; none when no project is known."""
    from dream.lint.project import find_project  # start-up: lists transcripts only when a dream runs

    found = find_project(store_root, settings)
    project = found[0] if found else None
    home, claude_home, codex_home = _homes(settings)
    files = instruction_files(project, claude_home, codex_home)
    loaded = _with_imports(files, home, {claude_home.resolve(), codex_home.resolve()})
    return [rule for path, (agents, folder) in loaded.items()
            for rule in read_file(path, project, home, agents, folder)]


def _with_imports(files: list[Path], home: Path, homes: set[Path]) -> dict[Path, tuple[frozenset[LayoutKind], str]]:
    """Each file with the agents that load it and the folder whose work loads it ("" for a global one): a
    CLAUDE.md's `@path` imports are loaded by Claude Code with it, five hops deep as it follows them (a CLAUDE.md
    holding only "@AGENTS.md" makes AGENTS.md Claude Code's too)."""
    loaded: dict[Path, tuple[frozenset[LayoutKind], str]] = {}
    for path in files:
        agents = _agents_by_name(path)
        folder = "" if any(path.resolve().is_relative_to(top) for top in homes) else _loading_folder(path).as_posix()
        for found in ([path, *_imports(path, home)] if LayoutKind.CLAUDE_CODE in agents else [path]):
            key = next((known for known in loaded if known.resolve() == found.resolve()), found)
            before, where = loaded.get(key, (frozenset(), folder))
            loaded[key] = (before | agents, where if len(where) <= len(folder) else folder)  # the widest scope
    return loaded


def _imports(path: Path, home: Path, hops: int = IMPORT_HOPS) -> list[Path]:
    """The files `path` imports with `@path` (relative to it, or `@~/` from home), and theirs, `hops` deep; an
    `@` in a code span or block is no import, as Claude Code reads them."""
    if hops <= 0:
        return []
    found: list[Path] = []
    for target in _import_targets(_text(path)):
        target = target.rstrip(".,;:!?)")  # "see @docs/conventions.md." ends its sentence, not its path
        imported = home / target[2:] if target.startswith("~/") else path.parent / target
        if _has_text(imported) and imported.resolve() != path.resolve():
            found += [imported, *_imports(imported, home, hops - 1)]
    return found


def _import_targets(text: str) -> list[str]:
    targets, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            targets += _IMPORT.findall(_CODE_SPAN.sub(" ", line))
    return targets


def nested_instructions(store_root: Path, settings: Settings) -> list[Instruction]:
    """The statements of CLAUDE.md / AGENTS.md files in the project's subfolders: an agent loads them only while
    it works there, so a memory repeating one is no plain repeat (a person is told, nothing removed)."""
    from dream.lint.project import find_project  # start-up: lists transcripts only when a dream runs

    found = find_project(store_root, settings)
    if not found:
        return []
    project, (home, claude_home, _) = found[0], _homes(settings)
    scoped = [*_rules(claude_home)[1], *_rules(project / ".claude")[1]]
    return [rule for path in [*_below(project), *scoped] for rule in read_file(path, project, home)]


def _rules(claude_folder: Path) -> tuple[list[Path], list[Path]]:
    """The `rules/**/*.md` files of a `.claude` folder: those Claude Code loads every session, and those whose
    `paths:` frontmatter loads them only while it works on matching files."""
    always: list[Path] = []
    scoped: list[Path] = []
    folder = claude_folder / "rules"
    for path in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
        if _has_text(path):
            (scoped if _PATHS.search(_frontmatter(_text(path))) else always).append(path)
    return always, scoped


def _frontmatter(text: str) -> str:
    """The YAML frontmatter between the first two `---` lines, or ''."""
    if not text.startswith("---"):
        return ""
    end = text.find("\n---", 3)
    return text[3:end] if end > 0 else ""


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
    candidates = [claude_home / "CLAUDE.md", *_rules(claude_home)[0], *_first_of(codex_home, CODEX_NAMES)]
    if project is not None:
        for folder in reversed([project, *project.parents][:-1]):  # from the top down, not `/`
            candidates += [folder / name for name in CLAUDE_NAMES]
        candidates += _rules(project / ".claude")[0]
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


def read_file(path: Path, project: Path | None, home: Path,
              agents: frozenset[LayoutKind] = frozenset(), folder: str | None = None) -> list[Instruction]:
    """Its statements: list items and prose lines, not headings, comments, code blocks, tables, quotes or
    `@imports`; each with what it stands under (headings, a lead-in line, a parent item), which may turn it
    around ("## Avoid", "Never do any of the following:", "- Never:")."""
    text = _text(path)
    skipped = _frontmatter(text).count("\n") + 2 if _frontmatter(text) else 0  # a rules file's `paths:` …
    name, found, fenced, commented = _shown(path, project, home), [], False, False
    context, previous = _Context(), ""
    if folder is None:  # a file read on its own (a subfolder's): loaded while the agent works where it is
        folder = _loading_folder(path).as_posix()
    for number, raw in enumerate(text.splitlines(), 1):
        if number <= skipped:
            continue
        line = raw.strip()
        indented_code = raw.startswith(("    ", "\t")) and not previous.strip() and not line.startswith(_LIST_MARK)
        previous = raw if not indented_code or not line else ""  # a code block goes on to its first outdent
        if commented or line.startswith("<!--"):  # a comment over several lines is no instruction either
            commented = "-->" not in line
            continue
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or indented_code or not line:
            continue
        if line.startswith("#"):
            context.heading(line)
            continue
        if line.startswith(("@", "|", ">")):
            continue
        over = context.over(raw, line)
        statement = _without_mark(line)
        if statement:
            found.append(Instruction(name, number, statement, over, agents or _agents_by_name(path), folder,
                                     context.scope))
    return found


class _Context:
    """What a line stands under: its headings, the prose lead-in before a list, the items it is nested in."""

    def __init__(self) -> None:
        self.headings: list[tuple[int, str]] = []
        self.lead = ""
        self.items: list[tuple[int, str]] = []  # (indent, text) of the list items above the current one
        self.scope = ""  # the last line's lead-in and parent items

    def heading(self, line: str) -> None:
        level = len(line) - len(line.lstrip("#"))
        above = [(lvl, text) for lvl, text in self.headings if lvl < level]
        self.headings = [*above, (level, line.lstrip("#").strip())]
        self.lead, self.items = "", []

    def over(self, raw: str, line: str) -> str:
        """The text the line stands under, then the line's own place in it is remembered."""
        indent = len(raw) - len(raw.lstrip())
        if indent and self.items and not _LIST_ITEM.match(line):  # an item's wrapped text: under what it is under
            self.scope = " / ".join([self.lead, *(t for _, t in self.items[:-1])]).strip(" /")
            return self._under(self.items[:-1])
        self.scope = ""
        if not _LIST_ITEM.match(line):  # prose: a lead-in when it ends with ":" or is all bold
            self.items = []
            under = " / ".join(text for _, text in self.headings)
            self.lead = line if line.strip("*_ ").endswith(":") or _all_bold(line) else ""
            return under
        self.items = [(i, text) for i, text in self.items if i < indent]
        under, self.scope = self._under(self.items), " / ".join([self.lead, *(t for _, t in self.items)]).strip(" /")
        self.items.append((indent, line))
        return under

    def _under(self, items: list[tuple[int, str]]) -> str:
        parts = [*(text for _, text in self.headings), self.lead, *(text for _, text in items)]
        return " / ".join(part for part in parts if part)


def _all_bold(line: str) -> bool:
    """A line in bold only ("**Don'ts**"), as many files title a list without a heading."""
    return len(line) > 4 and line.startswith(("**", "__")) and line.endswith(("**", "__"))


def _text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _loading_folder(path: Path) -> Path:
    """The folder whose work makes the agent load the file: `.claude/CLAUDE.md` and `.claude/rules/*.md` are the
    folder's holding `.claude`."""
    for folder in path.parents:
        if folder.name == ".claude":
            return folder.parent
    return path.parent


def _agents_by_name(path: Path) -> frozenset[LayoutKind]:
    return frozenset({LayoutKind.CODEX if path.name.startswith("AGENTS") else LayoutKind.CLAUDE_CODE})


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
