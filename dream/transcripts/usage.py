"""Which memory files an agent read, from its own transcripts.

A read is a tool call that opens a memory file of the store: Claude Code's
``Read`` (and ``View``), the API memory tool's ``view``, or a shell command
(Claude Code's ``Bash``, Codex's ``exec_command`` / ``shell`` /
``local_shell_call``) that runs ``cat``, ``head``, ``tail``, ``less`` or
``bat`` on one. A relative path counts from where the command ran: the
session's ``cwd``, a shell call's own ``workdir`` (Codex gives one to each),
and a ``cd DIR`` earlier in the same command line; ``~`` and ``$HOME``-style
variables are expanded. Each
memory gets its number of reads and the time of the last one; a memory
never read in `archive_after_days` and not pinned is a candidate to archive,
listed for a person and never removed unasked.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

from dream.config import Settings
from dream.errors import BadInput
from dream.sources import SourceKind
from dream.transcripts.discover import list_transcripts, resolve_source_path

READ_TOOLS = frozenset({"Read", "View", "view", "read_file"})
SHELL_TOOLS = frozenset({"Bash", "bash", "exec_command", "shell", "container.exec"})
PAGERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "sed", "nl"})
MEMORY_TOOL_ROOT = "/memories/"


@dataclass
class Reads:
    reads: dict[str, int] = field(default_factory=dict)  # memory path -> times read
    last: dict[str, str] = field(default_factory=dict)  # memory path -> ISO time of the last read
    transcripts: int = 0

    def add(self, rel: str, when: str) -> None:
        self.reads[rel] = self.reads.get(rel, 0) + 1
        if when and when > self.last.get(rel, ""):
            self.last[rel] = when

    def as_json(self, memories: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {rel: {"reads": self.reads.get(rel, 0), "last_read": self.last.get(rel)} for rel in sorted(memories)}


def memory_reads(transcripts: Iterable[Path], store_root: Path, memories: set[str]) -> Reads:
    """Reads of `memories` (paths in the store) in the given Claude Code or Codex transcripts."""
    root = os.path.realpath(store_root)
    found = Reads()
    for path in transcripts:
        found.transcripts += 1
        cwd = ""
        for record in _records(path):
            cwd = _cwd(record) or cwd
            for opened, workdir in _opened(record):
                rel = _memory_path(opened, _join(cwd, workdir), root, memories)
                if rel:
                    found.add(rel, str(record.get("timestamp") or ""))
    return found


def archive_candidates(reads: Reads, memories: set[str], pinned: set[str], days: float,
                       now: datetime | None = None) -> list[str]:
    """Memories not read in `days` (or never), not pinned: for a person to consider, never removed unasked."""
    cutoff = ((now or datetime.now(timezone.utc)) - timedelta(days=days)).isoformat()
    return sorted(rel for rel in memories - pinned if reads.last.get(rel, "") < cutoff)


def _records(path: Path) -> Iterator[dict]:
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue  # a torn or foreign line: the rest of the transcript still counts
                if isinstance(record, dict):
                    yield record
    except OSError:
        return


def _cwd(record: dict) -> str:
    payload = record.get("payload")
    for holder in (record, payload if isinstance(payload, dict) else {}):
        if isinstance(holder.get("cwd"), str):
            return holder["cwd"]
    return ""


Opened = tuple[str, str]  # (a path a tool call read, the folder it ran in when the call says: '' if not)


def _opened(record: dict) -> Iterator[Opened]:
    """The file paths one record's tool calls read."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            yield from _tool_paths(str(block.get("name", "")), block.get("input"))
    payload = record.get("payload")
    if record.get("type") == "response_item" and isinstance(payload, dict):
        kind = payload.get("type")
        if kind == "function_call":
            try:
                arguments = orjson.loads(payload.get("arguments") or "{}")
            except orjson.JSONDecodeError:
                arguments = {}
            yield from _tool_paths(str(payload.get("name", "")), arguments)
        elif kind == "local_shell_call":
            action = payload.get("action")
            yield from _tool_paths("shell", action if isinstance(action, dict) else {})


def _tool_paths(name: str, args: Any) -> Iterator[Opened]:
    if not isinstance(args, dict):
        return
    if name in READ_TOOLS:
        for key in ("file_path", "path"):
            if isinstance(args.get(key), str):
                yield args[key], ""
    elif name == "memory" and args.get("command") == "view" and isinstance(args.get("path"), str):
        yield args["path"], ""
    elif name in SHELL_TOOLS:
        command = args.get("command", args.get("cmd"))
        if isinstance(command, list):
            command = command[-1] if command[:1] in (["bash"], ["sh"], ["zsh"]) else shlex.join(map(str, command))
        workdir = args.get("workdir", args.get("cwd"))
        if isinstance(command, str):
            for opened, folder in _shell_reads(command):
                yield opened, _join(workdir if isinstance(workdir, str) else "", folder)


def _shell_reads(command: str) -> Iterator[Opened]:
    """`cat a.md b.md`, `head -n 5 x.md | …`, `cd m && cat x.md`: the files a pager is given, and the folder
    a `cd` earlier on the line moved to."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return
    reading, folder, after_cd = False, "", False
    for word in words:
        if after_cd:
            folder, after_cd = _join(folder, word.rstrip(";")), False
        elif word in ("|", "&&", ";", "||") or word.endswith(";"):
            reading = False
        elif word == "cd":
            reading, after_cd = False, True
        elif posixpath.basename(word) in PAGERS:
            reading = True
        elif reading and not word.startswith("-") and word.endswith(".md"):
            yield word, folder


def _join(base: str, path: str) -> str:
    """`path` from `base`; either may be '' (unknown), an absolute `path` stands alone."""
    path = os.path.expandvars(os.path.expanduser(path)) if path else ""
    return os.path.join(base, path) if base and path else (path or base)


def _memory_path(opened: str, cwd: str, root: str, memories: set[str]) -> str | None:
    if opened.startswith(MEMORY_TOOL_ROOT):  # the API memory tool's view of the store
        rel = opened[len(MEMORY_TOOL_ROOT):]
        return rel if rel in memories else None
    path = os.path.expandvars(os.path.expanduser(opened))
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(cwd, path)
    real = os.path.realpath(path)
    if not real.startswith(root.rstrip("/") + "/"):
        return None
    rel = real[len(root.rstrip("/")) + 1:]
    return rel if rel in memories else None


MAX_TRANSCRIPTS = 500  # the newest of them: a status is not a full history scan


def store_usage(store_root: Path, settings: Settings, tree: dict[str, bytes], pinned: set[str]) -> dict[str, Any] | None:
    """Reads per memory, the transcripts read, and the archive candidates; None when no transcripts are known."""
    memories = {rel for rel in tree if rel != "MEMORY.md"}
    sources = [settings.transcripts] if settings.transcripts else [SourceKind.CLAUDE_CODE]
    files: list[Path] = []
    for source in sources:
        try:
            files += list_transcripts(source, resolve_source_path(store_root, source, None, settings))
        except BadInput:  # this source keeps no transcripts for this store
            continue
    if not files:
        return None
    files = sorted(files, key=lambda p: p.stat().st_mtime)[-MAX_TRANSCRIPTS:]
    reads = memory_reads(files, store_root, memories)
    return {"transcripts": reads.transcripts, "memories": reads.as_json(memories),
            "archive_candidates": archive_candidates(reads, memories, pinned, settings.archive_after_days)}
