"""The memory tool the agent edits its store with, rooted at the run's staging copy.

It speaks the SDK's ``memory_20250818`` commands (view, create, str_replace,
insert, delete, rename) on top of `BetaAbstractMemoryTool`, so the tool
definition and the command parsing are the SDK's. The agent sees the staging
folder as ``/memories``. Everything it may not do is refused with the SDK's
`ToolError`, which the tool runner hands back to the model as an ``is_error``
tool result: the run goes on and nothing on disk changes.

Every path, of every command and both ends of a rename, is first made
canonical by `dream.store.paths` (NFKC, single slashes, ``.`` parts dropped),
so ``/memories//team/x.md`` and ``/memories/ｔｅａｍ/x.md`` are the team path
they read as. Refused:
- paths that are not under ``/memories``, ``..`` parts, hidden parts, and any
  symlink on the way (checked on the resolved path as well);
- anything under ``logs/``, ``sessions/`` or ``.dream/`` (logs are read with
  the log tools, and ``.dream/`` belongs to dream), and a top folder whose
  name only looks like one of these or like ``team``;
- a new file in ``team/`` (create, or rename into it), and moving a team file
  out of it; editing or deleting existing team files is allowed, so that
  duplicates within ``team/`` can be merged;
- a new name that reads as a name already beside it (another case, Unicode
  form or look-alike letters), and invisible characters in a name;
- a file over 100 KB, content that is not text (NUL or other control bytes,
  unpaired surrogates), a file that is not ``.md``;
- deleting or renaming a folder, and malformed commands;
- a new file name that holds a redaction marker.

Secrets already in the memory files never reach the model: every text and
name the tool shows goes through the run's `SecretTable`, and every text and
path the model sends comes back through it, so a secret the model left in
place is written back byte for byte. The edits apply to the text as the
model saw it (line numbers and ``old_str`` included).
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pydantic
from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from dream.engines.claude.paging import capped
from dream.engines.claude.secrets import SecretTable
from dream.store.layouts import detect
from dream.store.paths import PathRefused, canonical, check_memory, check_new, in_team, resolve
from dream.store.tree import atomic_write, is_reserved_dir

ROOT = "/memories"
MAX_FILE_BYTES = 100 * 1024
# Control characters that have no place in a markdown memory (tab, LF, CR and FF are fine).
_ALLOWED_CONTROLS = {"\t", "\n", "\r", "\f"}

_COMMANDS: dict[str, type[pydantic.BaseModel]] = {
    "view": BetaMemoryTool20250818ViewCommand,
    "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand,
    "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand,
    "rename": BetaMemoryTool20250818RenameCommand,
}


class StagingMemoryTool(BetaAbstractMemoryTool):
    """`memory_20250818` over one staging folder, with dream's refusals."""

    def __init__(self, staging: Path, secrets: SecretTable | None = None) -> None:
        super().__init__()
        self.root = Path(staging).resolve()
        self.secrets = SecretTable() if secrets is None else secrets
        self.reserved = detect(self.root).reserved  # a Codex folder's evidence names too (dream.store.layouts)
        self.refusals: list[str] = []  # every refused call, for the run's log and the tests

    # -- input -----------------------------------------------------------------

    def call(self, input: object) -> Any:
        """Parse the command strictly (the SDK's base parses without checking), then run it."""
        try:
            command = _parse_command(input)
            try:
                return self.execute(command)  # type: ignore[arg-type]
            except OSError as err:  # its text would name the staging folder's path on this machine: the reason only
                raise ToolError(f"The file system refused this {getattr(command, 'command', '')} command: "
                                f"{err.strerror or type(err).__name__}; nothing was changed") from None
        except ToolError as err:
            self.refusals.append(str(err))
            raise

    # -- paths -----------------------------------------------------------------

    def _relative(self, path: str) -> str:
        """The canonical path under the root ('' for the root itself), spelled as on disk, or a refusal.

        dream.store.paths makes it canonical (NFKC, single slashes, no '.'), refuses '..' and what is not
        memory, and finds the existing name a differently spelled one means.
        """
        if not isinstance(path, str) or not path:
            raise ToolError("Refused: a path is required, like /memories/topic.md")
        if "\x00" in path:
            raise ToolError("Refused: the path contains a NUL character")
        try:
            full = canonical(path)
            if not unicodedata.normalize("NFKC", path).startswith("/") or full.split("/")[0] != ROOT[1:]:
                raise ToolError(f"Refused: {path!r} is outside {ROOT}; every path starts with {ROOT}/")
            rel = full[len(ROOT):]
            check_memory(rel, self.reserved)
        except PathRefused as err:
            raise ToolError(f"Refused: {path!r} {err}") from None
        if "[REDACTED:" in rel:
            return self._named(rel, path)
        return resolve(rel, self._siblings)

    def _siblings(self, folder: str) -> list[str]:
        """The names in a folder of the staging copy (none when it is not a plain folder there)."""
        where = self.root / folder
        if where.is_symlink() or not where.is_dir():
            return []
        return os.listdir(where)

    def _named(self, shown: str, path: str) -> str:
        """The existing file whose name the model was shown as `shown` (its secret hidden), or a refusal.

        A marker never becomes part of a new name: a secret stays out of file names.
        """
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and not is_reserved_dir(d)]
            for name in [*dirnames, *filenames]:
                rel = (Path(dirpath) / name).relative_to(self.root).as_posix()
                if self.secrets.hide(f"{ROOT}/{rel}") == f"{ROOT}/{shown}":  # as the listing shows it
                    return rel
        raise ToolError(f"Refused: {path!r} holds a redaction marker and names no existing file; "
                        "a file name must not carry a secret")

    def _full(self, rel: str) -> Path:
        """The real path for `rel`, refusing symlinks on the way and anything resolving outside the root."""
        current = self.root
        for part in rel.split("/") if rel else []:
            current = current / part
            if current.is_symlink():
                raise ToolError(f"Refused: {ROOT}/{rel} goes through a symlink, which the agent may not follow")
        resolved = current.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"Refused: {ROOT}/{rel} resolves outside {ROOT}")
        return current

    def _writable(self, path: str, *, new_file: bool) -> tuple[str, Path]:
        rel = self._relative(path)
        if not rel:
            raise ToolError(f"Refused: {ROOT} itself cannot be written, deleted or renamed")
        if not rel.endswith(".md"):
            raise ToolError(f"Refused: {path!r} is not a .md file; memory files are markdown")
        full = self._full(rel)
        if new_file:
            try:
                check_new(rel, self._siblings)
            except PathRefused as err:
                raise ToolError(f"Refused: {path!r} {err}") from None
        return rel, full

    def _existing_file(self, path: str) -> tuple[str, Path]:
        rel, full = self._writable(path, new_file=False)
        if not full.is_file():
            raise ToolError(f"The path {path} does not exist or is not a file.")
        return rel, full

    # -- content ---------------------------------------------------------------

    def _read(self, full: Path, path: str) -> str:
        """The file as the model sees it: its secrets replaced by numbered markers."""
        data = full.read_bytes()
        try:
            return self.secrets.hide(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise ToolError(f"Refused: {path} is not UTF-8 text") from None

    def _write(self, full: Path, path: str, shown: str) -> None:
        """Write text given as the model sees it: the secrets its markers stand for go back in."""
        _check_text(shown, path)
        text = self.secrets.restore(shown)
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ToolError(
                f"Refused: {path} would be {len(data)} bytes; the limit is {MAX_FILE_BYTES} bytes (100 KB)"
            )
        atomic_write(full, data, sync=False)  # the staging copy is scratch: the proposal's commit makes it durable

    # -- commands --------------------------------------------------------------

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        rel = self._relative(command.path)
        full = self._full(rel)
        if full.is_dir():
            shown = command.path.rstrip("/") or ROOT
            rows = self._listing(full, shown)
            header = f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
            return header + "\n" + self._page(rows, command, shown)
        if not full.is_file():
            raise ToolError(f"The path {command.path} does not exist.")
        lines = self._read(full, command.path).split("\n")
        numbered = [f"{n:6d}\t{line}" for n, line in enumerate(lines, start=1)]
        return f"Here's the content of {command.path} with line numbers:\n" + self._page(numbered, command, command.path)

    @staticmethod
    def _page(rows: list[str], command: BetaMemoryTool20250818ViewCommand, path: str) -> str:
        """The rows `view_range` asks for (all by default), capped, with where to read on when some are left."""
        start, end = 1, len(rows)
        if command.view_range:
            if len(command.view_range) != 2:
                raise ToolError("view_range takes two numbers: [first_line, last_line] (-1 for the end)")
            start = max(1, command.view_range[0])
            end = len(rows) if command.view_range[1] == -1 else min(len(rows), command.view_range[1])
        shown = capped(rows[start - 1:end])
        more = ""
        if start + len(shown) <= end:  # a long file or folder is paged, so one view cannot flood the context
            more = f"\n[more: view {path} with view_range=[{start + len(shown)}, -1]]"
        return "\n".join(shown) + more

    def _listing(self, folder: Path, shown: str) -> list[str]:
        """One row per file and folder, two levels deep like the SDK's tool; the folder itself first."""
        hide = self.secrets.hide
        rows = [f"{_size(folder)}\t{shown}"]
        for dirpath, dirnames, filenames in os.walk(folder):
            here = Path(dirpath)
            rel_dir = here.relative_to(folder)
            prefix = "" if rel_dir == Path(".") else rel_dir.as_posix() + "/"
            visible = sorted(d for d in dirnames if not d.startswith(".") and not (here / d).is_symlink())
            for d in visible:
                rows.append(f"{_size(here / d)}\t{hide(f'{shown}/{prefix}{d}/')}")
            for name in sorted(filenames):
                entry = here / name
                if not name.startswith(".") and not entry.is_symlink():
                    rows.append(f"{_size(entry)}\t{hide(f'{shown}/{prefix}{name}')}")
            dirnames[:] = visible if len(rel_dir.parts) < 1 else []  # two levels deep, like the SDK's tool
        return rows

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        rel, full = self._writable(command.path, new_file=True)
        if full.exists():
            raise ToolError(f"File {command.path} already exists; use str_replace to edit it")
        self._write(full, command.path, command.file_text)
        return f"File created successfully at: {ROOT}/{rel}"  # as it is named now: the model's spelling may differ

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        _, full = self._existing_file(command.path)
        content = self._read(full, command.path)
        count = content.count(command.old_str) if command.old_str else 0
        if count != 1:
            how = "did not appear verbatim" if count == 0 else f"appears {count} times; make it unique"
            raise ToolError(f"No replacement was performed: old_str {how} in {command.path}.")
        self._write(full, command.path, content.replace(command.old_str, command.new_str))
        return f"The memory file {command.path} has been edited."

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        _, full = self._existing_file(command.path)
        lines = self._read(full, command.path).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(f"Invalid insert_line {command.insert_line}: it must be within [0, {len(lines)}].")
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        self._write(full, command.path, "\n".join(lines) + "\n")
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        _, full = self._existing_file(command.path)
        full.unlink()
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_rel, old_full = self._existing_file(command.old_path)
        new_rel, new_full = self._writable(command.new_path, new_file=True)
        if in_team(old_rel) != in_team(new_rel):
            raise ToolError("Refused: files do not move into or out of team/")
        if new_full.exists():
            raise ToolError(f"The destination {command.new_path} already exists")
        new_full.parent.mkdir(parents=True, exist_ok=True)
        os.replace(old_full, new_full)
        return f"Successfully renamed {ROOT}/{old_rel} to {ROOT}/{new_rel}"


# `memory_tool = "custom"`: the same six commands declared as a plain JSON-schema tool, for a Messages-compatible
# server that knows no Anthropic tool types (a gateway in front of another model). The calls and their results
# are the same as memory_20250818's, so the tool runs them unchanged.
CUSTOM_DESCRIPTION = (
    "Your memory store, a folder of markdown files at /memories. Commands: view (a file with line numbers, "
    "or a folder listing; view_range=[first, last] pages a long file), create (path, file_text), str_replace "
    "(path, old_str that appears exactly once, new_str), insert (path, insert_line, insert_text), delete (path), "
    "rename (old_path, new_path). Every path starts with /memories/."
)
CUSTOM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "delete", "rename"]},
        "path": {"type": "string"},
        "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "file_text": {"type": "string"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer"},
        "insert_text": {"type": "string"},
        "old_path": {"type": "string"},
        "new_path": {"type": "string"},
    },
    "required": ["command"],
}


def declaration(mode: str) -> dict[str, Any]:
    """The memory tool's definition in a request: the SDK's built-in type, or the plain JSON-schema one."""
    if mode == "custom":
        return {"name": "memory", "description": CUSTOM_DESCRIPTION, "input_schema": CUSTOM_SCHEMA}
    return {"type": "memory_20250818", "name": "memory"}


def _parse_command(input: object) -> pydantic.BaseModel:
    """One of the SDK's command models, or a ToolError naming what is wrong with the input."""
    if not isinstance(input, dict):
        raise ToolError("Refused: malformed memory command; the input must be an object")
    name = input.get("command")
    model = _COMMANDS.get(name) if isinstance(name, str) else None
    if model is None:
        raise ToolError(f"Refused: unknown memory command {name!r}; use one of {', '.join(_COMMANDS)}")
    try:
        return model.model_validate(input, strict=True)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        raise ToolError(f"Refused: malformed {name} command: {where}: {first['msg']}") from None


def _check_text(text: str, path: str) -> None:
    if not isinstance(text, str):
        raise ToolError(f"Refused: content for {path} is not text")
    bad = next((c for c in text if (c < " " and c not in _ALLOWED_CONTROLS) or c == "\x7f"), None)
    if bad is not None:
        raise ToolError(f"Refused: content for {path} holds the control character {bad!r}; only text is stored")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"Refused: content for {path} is not valid Unicode text") from None


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size}B" if size < 1024 else f"{size / 1024:.1f}K"
