"""Where dream keeps its own files inside a store (all under ``.dream/``)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from dream.errors import BadInput, StoreNotFound
from dream.store.layouts import LayoutKind, detect
from dream.store.regular import read_regular

# The names a store's layout gives a meaning of its own at its top, so no memory may take them or look like them
# (dream.store.paths compares every new name with these after NFKC, casefolding and look-alike folding).
NOT_MEMORY_DIRS = frozenset({"logs", "sessions", ".dream"})  # transcripts, and dream's own files
TEAM_DIR = "team"  # memory shared with teammates: a dream edits it, never adds to it
RESERVED_NAMES = NOT_MEMORY_DIRS | {TEAM_DIR}
INDEX_NAME = "MEMORY.md"

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
# The layout of .dream/ this code reads and writes, kept in .dream/format. A store written by a newer dream
# (packs of another kind, mirrored stores …) is refused rather than read as today's and damaged.
FORMAT_VERSION = 1
_FORMAT_BYTES = 64
SLUG_TEXT_CHARS = 40


def store_slug(store: str | Path) -> str:
    """``<parent>-<name>-<hash8>`` in lowercase letters, digits and dashes.

    The last two folder names keep it readable (Claude Code's stores are all
    called ``memory``, their parents name the project); the hash of the full
    resolved path keeps two stores with the same names apart.
    """
    path = Path(store).expanduser().resolve()
    text = _NOT_SLUG.sub("-", f"{path.parent.name}-{path.name}".lower()).strip("-")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    text = text[-SLUG_TEXT_CHARS:].strip("-")
    return f"{text}-{digest}" if text else digest


def plainly_a_store(root: Path) -> bool:
    """A folder that says it is a store: it holds an index (``MEMORY.md``), dream's own ``.dream/``, or it is
    Codex's memory folder (a git repository of Codex's own: `dream.store.layouts`)."""
    return (root / "MEMORY.md").is_file() or (root / ".dream").is_dir() or detect(root).kind == LayoutKind.CODEX


def _looks_like_store(root: Path) -> bool:
    """Guard against a mistyped --store (say, a home folder) getting a .dream/ of its own."""
    if plainly_a_store(root) or (root / "logs").is_dir():
        return True
    return any(p.suffix == ".md" for p in root.iterdir() if p.is_file())


def git_work_tree(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in (the nearest folder holding ``.git``), or None."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _refuse_unmarked_folder_in_git(root: Path) -> None:
    """A project's own folder is not a memory store unless it says so.

    Its README and docs are markdown, so without this a run there would
    leave ``.dream/`` in the checkout and propose an index of the README.
    """
    if plainly_a_store(root):
        return
    tree = git_work_tree(root.resolve())
    if tree is not None:
        raise StoreNotFound(f"{root}: inside the git work tree {tree} and holds no MEMORY.md or .dream/, so it is "
                            f"not taken for a memory store (create MEMORY.md there to make it one)")


@dataclass(frozen=True)
class Layout:
    root: Path

    @classmethod
    def open(cls, store: str | Path) -> "Layout":
        """Check that `store` is a usable store folder; do not create anything yet."""
        root = Path(store).expanduser()
        if not root.exists():
            raise StoreNotFound(f"{root}: store folder does not exist")
        if not root.is_dir():
            raise StoreNotFound(f"{root}: store path is not a folder")
        _refuse_unmarked_folder_in_git(root)
        if not _looks_like_store(root):
            raise StoreNotFound(f"{root}: not a memory store (no MEMORY.md, no topic files, no logs/); create "
                                "MEMORY.md there to make it one")
        layout = cls(root.resolve())
        layout.check_own_folders()
        layout.check_format()
        return layout

    def check_format(self) -> None:
        """Refuse a `.dream/` whose format is newer than this code's (or is not a format dream wrote)."""
        try:
            text = read_regular(self.format_file, "store format file", _FORMAT_BYTES).decode("ascii", "replace")
        except FileNotFoundError:
            return  # written before formats were numbered (format 1), or no .dream/ yet
        number = text.strip()
        if not number.isdigit() or not number.isascii():
            raise BadInput(f"{self.format_file}: should hold the store's format number, holds {text[:20]!r}; "
                           f"put {FORMAT_VERSION} there if this store was made by this dream")
        if int(number) > FORMAT_VERSION:
            raise BadInput(f"{self.format_file}: this store is in format {int(number)}, newer than this dream "
                           f"reads ({FORMAT_VERSION}); upgrade dream to use it, nothing was read or written")

    def check_own_folders(self) -> None:
        """`.dream/` and its folders must be real folders inside the store, or absent.

        A symlink there would make every write of dream's land wherever it
        points, outside the store; a file there cannot hold anything.
        """
        for folder in (self.dream, self.objects, self.packs, self.versions, self.proposals, self.staging):
            if folder.is_symlink():
                raise BadInput(f"{folder}: is a symlink; dream keeps its files only in real folders inside the "
                               f"store; replace it by a folder")
            if folder.exists() and not folder.is_dir():
                raise BadInput(f"{folder}: should be dream's folder but is a file; move it away")

    @property
    def dream(self) -> Path:
        return self.root / ".dream"

    @property
    def objects(self) -> Path:
        return self.dream / "objects"

    @property
    def packs(self) -> Path:
        """Pack files: the objects gc moved out of loose files (dream.versions.packfiles)."""
        return self.objects / "packs"

    @property
    def versions(self) -> Path:
        return self.dream / "versions"

    @property
    def proposals(self) -> Path:
        return self.dream / "proposals"

    @property
    def staging(self) -> Path:
        return self.dream / "staging"

    @property
    def state(self) -> Path:
        return self.dream / "state.json"

    @property
    def lock(self) -> Path:
        return self.dream / "run.lock"

    @property
    def lock_info(self) -> Path:
        return self.dream / "run.lock.json"

    @property
    def history(self) -> Path:
        """Append-only JSON lines of runs and review events (see dream.history)."""
        return self.dream / "history.jsonl"

    @property
    def history_lock(self) -> Path:
        return self.dream / "history.lock"

    @property
    def legacy_history(self) -> Path:
        """The DuckDB history of dream before JSON lines; migrated once, then renamed."""
        return self.dream / "history.duckdb"

    @property
    def format_file(self) -> Path:
        """The number of the layout of `.dream/` (`FORMAT_VERSION`)."""
        return self.dream / "format"

    @property
    def journal(self) -> Path:
        return self.dream / "accept.journal.json"

    @property
    def import_lock(self) -> Path:
        """Held by an import (`dream.transcripts.importer`) while it writes logs/ and its state."""
        return self.dream / "import.lock"

    @property
    def import_state(self) -> Path:
        return self.dream / "import-state.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def ensure(self) -> None:
        self.check_own_folders()  # again: it may have changed since the store was opened
        for d in (self.objects, self.versions, self.proposals):
            d.mkdir(parents=True, exist_ok=True)
