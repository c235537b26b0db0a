"""Lint's answers kept in the store's `.dream/lint-cache.json`, so a store that did not change, over a project
that did not change, is answered from the key check alone.

The key says what the answers depend on: the project's folder, its HEAD
commit, the uncommitted state of its tracked files (`git status`, and the
size and time of each changed file, so editing one again counts), and the
lint code itself (its sources and word lists: a newer dream checks again).
Under the key, each memory's answer is kept with the hash of its bytes: a
memory that changed is checked again, the others are not.

Only what was decided goes in: a memory with a claim left unchecked (time
ran out) is not kept, nor anything from a lint that passed its deadline. A
project without git has no cheap key, so it is never cached. The file is
dream's own scratch: unreadable or from another key, it is ignored and
rewritten. Anything but a regular file of a record's size in its place
(a FIFO, a folder, a gigabyte) was not made by dream: lint names it and
stops (exit 2) rather than hang on it or replace it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from dream.lint.project import git
from dream.store.records import DamagedRecord, parse_record, read_record_bytes
from dream.store.tree import atomic_write

CACHE_FILE = "lint-cache.json"
MAX_DIRTY = 2000  # changed tracked files whose size and time join the key; beyond that, no caching


def cache_path(store_root: Path) -> Path:
    return store_root / ".dream" / CACHE_FILE


def memory_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project_state(root: Path, timeout: float) -> tuple[str, str] | None:
    """(key, short HEAD) for a git project, or None: not git, or too many uncommitted changes to key."""
    heads = git(root, ["rev-parse", "HEAD", "--short", "HEAD"], timeout)
    status = git(root, ["status", "--porcelain=v1", "-z", "--untracked-files=no"], timeout)
    if heads is None or status is None or len(heads.split()) != 2:
        return None
    full, short = heads.split()
    dirty = _dirty_paths(status)
    if len(dirty) > MAX_DIRTY:
        return None
    digest = hashlib.sha256("\0".join([str(root), full, _code_digest(), status]).encode())
    for rel in dirty:
        try:
            st = os.stat(root / rel)
            digest.update(f"\0{rel}\0{st.st_size}\0{st.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"\0{rel}\0gone".encode())
    return digest.hexdigest(), short


def _dirty_paths(status: str) -> list[str]:
    """The paths `git status --porcelain=v1 -z` names (a rename's entry is followed by its old path)."""
    entries = status.split("\0")
    paths, i = [], 0
    while i < len(entries):
        entry = entries[i]
        if len(entry) > 3:
            paths.append(entry[3:])
            if "R" in entry[:2] or "C" in entry[:2]:
                i += 1  # the old path: gone from the tree, nothing to stat
        i += 1
    return paths


@cache
def _code_digest() -> str:
    """The lint code and word lists this dream checks with: an answer from other code is not reused."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*here.glob("*.py"), *here.glob("data/*")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@dataclass
class _Kept:
    key: str
    memories: dict[str, dict[str, Any]]


def load(store_root: Path, key: str) -> dict[str, dict[str, Any]]:
    """memory path -> its kept answer, under `key`; {} when there is none, or it is not JSON of that shape.

    Raises `DamagedRecord` (exit 2) for something in the cache's place that is not a file dream could have written.
    """
    path = cache_path(store_root)
    try:
        data = read_record_bytes(path, "lint cache")
    except FileNotFoundError:
        return {}
    try:
        kept = parse_record(data, _Kept, f"{path}: damaged lint cache")
    except DamagedRecord:
        return {}  # dream's own scratch, cut short or from an older dream: checked again and rewritten
    return kept.memories if kept.key == key else {}


def save(store_root: Path, key: str, memories: dict[str, dict[str, Any]]) -> None:
    """Keep the answers; a store whose `.dream/` cannot be written is simply not cached."""
    path = cache_path(store_root)
    try:
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, orjson.dumps({"key": key, "memories": memories}), sync=False)
    except OSError:
        pass  # a cache: the next lint checks again
