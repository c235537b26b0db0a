"""Which files of a store are memory, and how trees of them are read and written.

A *tree* is a plain ``dict`` from a POSIX path relative to the store root to
the file's bytes. Memory is every ``*.md`` file of the store outside the
folders that dream never treats as memory (``logs/``, ``sessions/`` and
``.dream/``) and outside hidden folders. Symlinks are never followed: a link
could point anywhere on the machine, so it is reported and left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dream.crashpoints import before_write
from dream.errors import BadInput
from dream.store.layout import FORMAT_VERSION, INDEX_NAME, NOT_MEMORY_DIRS, Layout
from dream.store.layouts import layout_of
from dream.store.regular import kind_of, read_regular

Tree = dict[str, bytes]
Flush = TypeVar("Flush", bound=Callable[[], None])

ARCHIVE_NAME = "archive.md"
ROLLED_ARCHIVE_PREFIX = "archive-"  # archive-2026-12-01.md: what archive.md held when it rolled over that day
_ROLLED_ARCHIVE = re.compile(rf"{ROLLED_ARCHIVE_PREFIX}\d{{4}}-\d{{2}}-\d{{2}}(?:-\d+)?\.md")
MAX_MEMORY_FILE_BYTES = 1_000_000  # a megabyte is not a memory file (a topic file is a few KB)
# What any read of a tree refuses outright (a device, a runaway file). A run refuses a memory file above
# MAX_MEMORY_FILE_BYTES before reading it, except the index and the archives: the index budget shrinks the
# index, and an archive rolls over into dated files long before (dream.engines.offline.archive).
MAX_READ_BYTES = 64 * 1024 * 1024
TEMP_SUFFIX = ".tmp"
_TEMP_NAME_CHARS = 64  # a temporary file's name holds at most this much of its target's: 255-byte names stay legal


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_reserved_dir(name: str) -> bool:
    """`logs`, `sessions` or `.dream` in any case: `LOGS/` is `logs/` on a case-insensitive disk."""
    return name.casefold() in NOT_MEMORY_DIRS


def is_archive(rel: str) -> bool:
    """`archive.md`, or one of the dated files it rolled over into: index lines kept as history."""
    name = rel.rsplit("/", 1)[-1]
    return name == ARCHIVE_NAME or bool(_ROLLED_ARCHIVE.fullmatch(name))


def has_own_size_rule(rel: str) -> bool:
    """The root index (shrunk to its budget) and the archives (rolled over): no per-file size refusal."""
    return rel == INDEX_NAME or is_archive(rel)


def is_memory_path(rel: str) -> bool:
    parts = rel.split("/")
    if is_reserved_dir(parts[0]):
        return False
    if any(p.startswith(".") for p in parts):
        return False
    return rel.endswith(".md")


@dataclass
class TreeScan:
    files: list[str] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)
    special: dict[str, str] = field(default_factory=dict)  # a FIFO, socket or device at a memory path -> which


MAX_DEPTH = 64  # folders below the store root; real stores use two or three


def scan_memory_paths(root: Path) -> TreeScan:
    """List memory files under `root` without reading them (sorted).

    Walked with an explicit stack (os.walk recurses once per level) and to
    `MAX_DEPTH` levels: a folder nested a thousand deep is bad input, named.
    """
    scan = TreeScan()
    stack = [""]
    evidence = layout_of(root).is_evidence  # the agent's own evidence (Codex's rollout summaries): never memory
    while stack:
        rel_dir = stack.pop()
        if rel_dir.count("/") >= MAX_DEPTH:
            raise BadInput(f"{_shown(root / rel_dir)[:200]}…: folders nested deeper than {MAX_DEPTH} levels")
        for entry in _entries(root, rel_dir):
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not rel_dir and evidence(entry.name):
                continue
            if entry.is_symlink():  # never followed; reported when it would be memory or a folder of it
                if is_memory_path(rel) or entry.is_dir(follow_symlinks=True):
                    scan.symlinks.append(rel)
            elif entry.is_dir(follow_symlinks=False):
                if rel == INDEX_NAME:
                    raise BadInput(f"{root / rel}: the index is a folder, not a file; move it away")
                if (rel_dir or not is_reserved_dir(entry.name)) and not entry.name.startswith("."):
                    stack.append(rel)
            elif is_memory_path(rel):
                _check_name(root, rel)
                kind = _special_kind(entry)
                if kind and rel == INDEX_NAME:  # every session reads the index: no store without it
                    raise BadInput(f"{root / rel}: memory file is {kind}, not a regular file; dream reads only "
                                   f"regular files")
                if kind:  # never opened (a FIFO would hang the read): left as it is, and named
                    scan.special[rel] = kind
                else:
                    scan.files.append(rel)
    scan.files.sort()
    scan.symlinks.sort()
    return scan


def _special_kind(entry: os.DirEntry) -> str | None:
    """'a FIFO', 'a socket' … for an entry that is neither a file nor a folder nor a symlink; None otherwise."""
    if entry.is_file(follow_symlinks=False):
        return None
    try:
        return kind_of(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return None  # gone meanwhile; a read would say so


def _entries(root: Path, rel_dir: str) -> list[os.DirEntry]:
    try:
        with os.scandir(root / rel_dir if rel_dir else root) as it:
            return list(it)
    except OSError as exc:
        raise BadInput(f"{_shown(root / rel_dir)}: cannot list folder: {exc.strerror or exc}") from None


def _shown(path: Path) -> str:
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def _check_name(root: Path, rel: str) -> None:
    """A memory file's path must be UTF-8: it is written into the index, manifests and diffs."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise BadInput(f"{_shown(root / rel)}: file name is not valid UTF-8; rename it") from None


def symlinked_memory(root: Path) -> list[str]:
    """Memory files and folders under `root` that are symlinks: dream neither reads nor writes them."""
    return scan_memory_paths(root).symlinks


def read_tree(root: Path) -> Tree:
    """The memory files under `root`: regular files within the size cap.

    A FIFO, device or socket where a memory file should be is not read (nor
    in the tree: `scan_memory_paths` names it); a file over
    `MAX_READ_BYTES`, or an index that is not UTF-8 text, is a `BadInput`
    naming the file (exit 2), never a hang. A topic file that is no text
    (binary, UTF-16) is read as it is: `Store` keeps it untouched and says why.
    """
    tree = {}
    for rel in scan_memory_paths(root).files:
        data = read_regular(root / rel, "memory file", MAX_READ_BYTES)
        problem = text_problem(rel, data) if rel == INDEX_NAME else None
        if problem:
            raise BadInput(f"{root / rel}: {problem}; dream reads memory files as UTF-8 text")
        tree[rel] = data
    return tree


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_MOSTLY_UNDECODABLE = 0.01  # share of bytes that are not UTF-8 above which a file is binary, not a stray byte


def text_problem(rel: str, data: bytes) -> str | None:
    """Why `data` is not a memory file's text, or None.

    The index must be UTF-8: every session starts by reading it. A topic file
    with a stray Latin-1 byte is kept (and reported by validation), but NUL
    bytes, UTF-16 or mostly undecodable bytes mean it is no text at all.
    """
    if data.startswith(_UTF16_BOMS):
        return "UTF-16 text, not UTF-8"
    if b"\0" in data:
        return "holds NUL bytes (binary, not text)"
    if rel == INDEX_NAME:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"not valid UTF-8 (byte {exc.start})"
        return None
    bad = data.decode("utf-8", "replace").count("\ufffd")
    if bad > 8 and bad > _MOSTLY_UNDECODABLE * len(data):
        return f"{bad:,} bytes are not UTF-8 (binary, not text)"
    return None


# In every temporary name dream makes: no editor, tool or person names a file `.x.~dream-….tmp`, so a file
# with it is dream's own, and one without it is never taken for litter (`dream.store.litter`).
TEMP_MARK = "~dream-"


def temp_prefix(path: Path) -> str:
    """The name prefix of `path`'s temporary files: ``.<name>.~dream-`` (its name cut short), then random, .tmp."""
    return f".{path.name[:_TEMP_NAME_CHARS]}.{TEMP_MARK}"


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_umask: int | None = None
_umask_guard = threading.Lock()


def _process_umask() -> int:
    """The process umask, read once (os.umask can only be read by setting it, so not per write)."""
    global _umask
    with _umask_guard:
        if _umask is None:
            _umask = os.umask(0o022)
            os.umask(_umask)
        return _umask


def _mode_for(path: Path) -> int:
    """Keep an existing file's permission bits; a new file gets what open() would give it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return 0o666 & ~_process_umask()
    if stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    return 0o666 & ~_process_umask()


def write_temp(path: Path, data: bytes, sync: bool = True) -> Path:
    """A temporary file beside `path` holding `data` with `path`'s mode (synced unless `sync=False`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _mode_for(path))
            before_write(path)
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def mark_format(layout: Layout) -> None:
    """Write the format number into `.dream/` once (a store made before formats were numbered gets it too)."""
    if not layout.format_file.exists() and not layout.format_file.is_symlink():
        atomic_write(layout.format_file, f"{FORMAT_VERSION}\n".encode())


def atomic_write(path: Path, data: bytes, sync: bool = True) -> None:
    """Write `data` to `path` so that a crash leaves the old or the new bytes.

    The file keeps its permission bits (a new one gets `0o666 & ~umask`,
    like a plain `open()`), not the 0600 of the temporary file.
    `sync=False` skips the fsync, for scratch copies that a later commit
    makes durable (many files to make durable at once: `DurableBatch`).
    """
    tmp = write_temp(path, data, sync)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync:
        fsync_dir(path.parent)


NOT_LOADED = object()
_syncfs: Any = NOT_LOADED  # `_get_syncfs`; tests put a stand-in or None here


def _get_syncfs() -> Any:
    """Linux's syncfs(2), or None: it makes one file system durable in one call.

    Looked up on first use: ctypes costs ~6 ms of every command's start-up.
    """
    global _syncfs
    if _syncfs is NOT_LOADED:
        import ctypes  # start-up: ~6 ms, and most commands write nothing

        try:
            _syncfs = ctypes.CDLL(None, use_errno=True).syncfs
            _syncfs.argtypes = [ctypes.c_int]
        except (OSError, AttributeError):
            _syncfs = None
    return _syncfs


def _sync_file_systems(folders: set[Path]) -> None:
    """syncfs(2) once per file system holding `folders`; raises if the kernel reports a lost write."""
    devices: dict[int, Path] = {}
    for folder in folders:
        devices.setdefault(os.stat(folder).st_dev, folder)
    for folder in devices.values():
        fd = os.open(folder, os.O_RDONLY)
        try:
            if _get_syncfs()(fd) != 0:
                import ctypes  # start-up: loaded by _get_syncfs already

                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), str(folder))
        finally:
            os.close(fd)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DurableBatch:
    """Files written and made durable together: one sync for all of them instead of one fsync each.

    `write` puts each file under a temporary name next to its target, without
    fsync. `commit` syncs once (syncfs(2): the cost of about one fsync,
    however many files), renames every file into place, and syncs once more
    so the names are durable before anything that refers to them is written.
    A crash therefore leaves each target absent or complete, never a
    half-written file under its final name (which a content-addressed store
    would trust forever). A replaced file keeps its permission bits. Without
    syncfs (not Linux) each file and folder is fsynced, as `atomic_write`
    does. Leaving the `with` block without a commit removes the temporary
    files, so a failed write leaves every target as it was.

    A writer that gathers what it adds and writes it in one file (the new
    objects of a version, as one pack) keeps that in `gathered`, which the
    commit flushes into the batch first.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []  # (temporary, target)
        self._flushes: dict[object, Callable[[], None]] = {}  # owner -> writes what it gathered (`gathered`)

    def __enter__(self) -> "DurableBatch":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()

    def gathered(self, owner: object, make: Callable[[], Flush]) -> Flush:
        """What `owner` gathers for this batch (made on the first call); called at commit to write it here."""
        if owner not in self._flushes:
            self._flushes[owner] = make()
        return self._flushes[owner]  # type: ignore[return-value]  # made by `make` for this owner

    def write(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=TEMP_SUFFIX, dir=path.parent)
        self._pending.append((Path(tmp), path))
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _mode_for(path))  # as `atomic_write`: a replaced file keeps its mode
            before_write(path)
            fh.write(data)

    def commit(self) -> None:
        for flush in self._flushes.values():
            flush()
        self._flushes.clear()
        if not self._pending:
            return
        folders = {target.parent for _, target in self._pending}
        self._sync([tmp for tmp, _ in self._pending], folders)
        for tmp, target in self._pending:
            os.replace(tmp, target)
        self._pending.clear()
        self._sync([], folders)

    def discard(self) -> None:
        for tmp, _ in self._pending:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self._pending.clear()
        self._flushes.clear()

    @staticmethod
    def _sync(files: list[Path], folders: set[Path]) -> None:
        if _get_syncfs() is not None:
            _sync_file_systems(folders)
            return
        for path in files:
            _fsync_path(path)
        for folder in folders:
            fsync_dir(folder)


def materialize(tree: Tree, dest: Path) -> None:
    """Write a tree into an empty folder (a staging copy).

    Never synced: the copy is scratch, deleted after the run; a crash leaves
    at worst a folder under ``.dream/staging`` that no one reads.
    """
    made: set[Path] = set()
    for rel, data in tree.items():
        target = dest / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        with open(target, "wb") as fh:
            fh.write(data)


def changed_paths(old: Tree, new: Tree) -> list[str]:
    """Paths added, removed or modified between two trees (sorted)."""
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))


def escapes_root(root: Path, rel: str) -> bool:
    """True when writing `rel` under `root` would land outside it (through `..` or a symlinked folder)."""
    target = (root / rel).parent.resolve()
    return target != root.resolve() and root.resolve() not in target.parents


def unsafe_target(root: Path, rel: str) -> str | None:
    """Why writing or deleting `rel` under `root` would be unsafe, or None when it is a plain file or absent.

    Unsafe: the path leaves the store, the file or one of its folders is a
    symlink (writing would follow it, or replace the link by a file), or
    something other than a regular file sits where the file goes.
    """
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return "path leaves the store"
    here = root
    for folder in parts[:-1]:
        here = here / folder
        if here.is_symlink():
            return f"folder {folder!r} is a symlink"
        if here.exists() and not here.is_dir():
            return f"{folder!r} is not a folder"
    target = root / rel
    if target.is_symlink():
        return "is a symlink"
    if target.exists() and not target.is_file():
        return "is a folder" if target.is_dir() else "is not a regular file"
    if escapes_root(root, rel):
        return "path leaves the store"
    return None
