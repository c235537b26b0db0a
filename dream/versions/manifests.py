"""Immutable, numbered versions of a store's memory files.

File contents are stored once, content-addressed, under ``.dream/objects``
(`Blobs`; compressed, a changed file usually as a delta against its previous
version: `dream.versions.packing`). A version's file list is a tree of
objects in the same store (`dream.versions.trees`), shared with the versions
before it, so a version that changes one file costs about that file. The
record ``.dream/versions/NNNNNN.json`` holds the number, the root tree's
sha256 (`tree`), source, note and time. Records written before trees existed
list every file instead (`files`); both are read. The current version is the
highest number. Versions are never edited: a rollback records the old file
list again under a new number.

Durability is paid once per version: every new object is written without
fsync and made durable together (`DurableBatch`), then the record, whose
atomic write is the commit point. A version adding many objects writes them
as one pack file in that batch (`packfiles.PACK_AT`), not a file each.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from dream.errors import BadInput, UnknownVersion
from dream.store.records import MAX_RECORD_BYTES, DamagedRecord, read_json_object, record_from_dict
from dream.store.layout import Layout
from dream.store.regular import read_regular
from dream.store.tree import DurableBatch, Tree, atomic_write, sha256
from dream.versions import packfiles, packing, trees

R = TypeVar("R")

_CACHE_BYTES = 64 << 20  # decoded objects kept per `Blobs`: delta bases are read again and again


@dataclass
class Version:
    number: int
    created_at: float
    source: str  # snapshot | accept | rollback | pre-accept
    files: dict[str, str]  # path -> sha256
    note: str = ""
    proposal_id: str | None = None
    actor: str | None = None
    meta: dict = field(default_factory=dict)
    tree: str | None = None  # root tree object; None for a record that lists its files


class Blobs:
    """Objects by sha256: loose files under ``objects/ab/cdef…``, or in pack files (`dream.versions.packfiles`)."""

    def __init__(self, layout: Layout):
        self.root = layout.objects
        self.packs_folder = layout.packs
        self._prefix = f"{self.root}{os.sep}"  # whole trees are read object by object: no Path per read
        self._decoded: dict[str, tuple[bytes, int]] = {}  # sha256 -> (bytes, chain depth)
        self._decoded_bytes = 0
        self._packed: dict[str, packfiles.Pack] | None = None  # sha256 -> the pack holding it; loaded on a miss
        self.damaged_packs: dict[Path, str] = {}  # packs reads skip (their objects are missing): path -> why

    def path(self, digest: str) -> Path:
        """Where the object's loose file is (or would be); a packed object has none."""
        return self.root / digest[:2] / digest[2:]

    def stored(self, digest: str) -> bytes:
        """The object's bytes as stored (packed or a delta), loose or in a pack; FileNotFoundError: neither."""
        return self._read_stored(digest)

    def _read_stored(self, digest: str) -> bytes:
        """The object's stored bytes, loose or packed; FileNotFoundError when it is neither."""
        try:
            return read_regular(f"{self._prefix}{digest[:2]}{os.sep}{digest[2:]}", "stored object",
                                MAX_RECORD_BYTES, DamagedRecord)
        except FileNotFoundError:
            return self._pack_holding(digest).get(digest)

    def _pack_holding(self, digest: str) -> packfiles.Pack:
        """The pack that holds `digest`; the list of packs is read again once on a miss (gc may have repacked)."""
        for fresh in (False, True):
            packed = self.packed(reload=fresh)
            if digest in packed:
                return packed[digest]
        raise FileNotFoundError(digest)

    def packed(self, reload: bool = False) -> dict[str, packfiles.Pack]:
        """sha256 -> a pack holding it, for every readable pack file (a pack deleted meanwhile is skipped).

        A damaged pack is skipped too, and kept in `damaged_packs`: it must
        not stop the reads of objects it does not hold."""
        if self._packed is None or reload:
            found: dict[str, packfiles.Pack] = {}
            self.damaged_packs = {}
            for path in packfiles.pack_paths(self.packs_folder):
                try:
                    pack = packfiles.open_pack(path)
                except FileNotFoundError:
                    continue
                except DamagedRecord as exc:
                    self.damaged_packs[path] = str(exc)
                    continue
                found.update(dict.fromkeys(pack.index, pack))
            self._packed = found
        return self._packed

    def packs(self) -> list[packfiles.Pack]:
        """Every pack file, read now; `DamagedRecord` for a damaged one (gc must see every pack)."""
        found = []
        for path in packfiles.pack_paths(self.packs_folder):
            try:
                found.append(packfiles.open_pack(path))
            except FileNotFoundError:
                continue  # deleted by a gc since the listing: its objects are in a newer pack
        return found

    def loose(self, litter: bool = False) -> dict[str, Path]:
        """Loose object files by sha256; with `litter`, also what a killed batch left (keyed by its path)."""
        found: dict[str, Path] = {}
        try:
            shards = [s for s in os.scandir(self.root) if len(s.name) == 2 and s.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return {}
        for shard in shards:
            for entry in os.scandir(shard.path):
                digest = shard.name + entry.name
                if len(digest) == 64:
                    found[digest] = Path(entry.path)
                elif litter and entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    found[entry.path] = Path(entry.path)
        return found

    def digests(self) -> set[str]:
        """Every stored object's sha256, loose or packed."""
        return set(self.loose()) | set(self.packed(reload=True))

    def has(self, digest: str) -> bool:
        """Whether the object is stored, loose or packed (not whether it can be read).

        The packs are not listed again for this: a writer asks before every
        new object, and an object it does not see writes a spare loose copy,
        which the next gc drops.
        """
        return os.path.isfile(f"{self._prefix}{digest[:2]}{os.sep}{digest[2:]}") or digest in self.packed()

    # ---------------------------------------------------------------- reading

    def get(self, digest: str) -> bytes:
        return self._load(digest)[0]

    def get_tree(self, files: dict[str, str]) -> Tree:
        return {rel: self.get(digest) for rel, digest in files.items()}

    def reachable(self, roots: list[str]) -> set[str]:
        """Every object the trees at `roots` name (nodes and files); `DamagedRecord` if one cannot be read."""
        try:
            return trees.reachable(roots, self.get)
        except ValueError as exc:
            raise DamagedRecord(f"{self.root}: a tree is damaged: {exc}") from None

    def listing(self, root: str) -> trees.Listing:
        """The files (and tree nodes) of the tree object `root`; `DamagedRecord` if it cannot be read."""
        try:
            return trees.read(root, self.get)
        except ValueError as exc:
            raise DamagedRecord(f"{self.root}: tree {root[:12]}… is damaged: {exc}") from None

    def base_of(self, digest: str) -> str | None:
        """The object a stored delta is based on (None for a whole object, or one not stored)."""
        try:
            with open(self.path(digest), "rb") as fh:
                head = fh.read(packing.header_bytes())
        except FileNotFoundError:
            try:
                head = self._pack_holding(digest).head(digest, packing.header_bytes())
            except FileNotFoundError:
                return None
        try:
            return packing.parse(head).base
        except ValueError:
            return None  # raw bytes, written before objects were packed

    def with_bases(self, digests: set[str]) -> set[str]:
        """`digests` and every object their deltas need, however deep."""
        needed, todo = set(digests), list(digests)
        while todo:
            base = self.base_of(todo.pop())
            if base and base not in needed:
                needed.add(base)
                todo.append(base)
        return needed

    def _load(self, digest: str, hops: int = 0) -> tuple[bytes, int]:
        """(bytes, delta chain depth) of a stored object."""
        if digest in self._decoded:
            return self._decoded[digest]
        if hops > packing.MAX_CHAIN:
            raise DamagedRecord(f"{self.path(digest)}: delta chain longer than {packing.MAX_CHAIN}")
        try:
            stored = self._read_stored(digest)
        except FileNotFoundError:
            hint = f" (it may have been in the damaged pack {next(iter(self.damaged_packs))})" \
                if self.damaged_packs else ""
            raise DamagedRecord(f"{self.path(digest)}: blob missing from the version store{hint}") from None
        loaded = self._unpack(digest, stored, hops) if packing.is_packed(stored) else (self._raw(digest, stored), 0)
        if self._decoded_bytes < _CACHE_BYTES:
            self._decoded[digest] = loaded
            self._decoded_bytes += len(loaded[0])
        return loaded

    def _raw(self, digest: str, stored: bytes) -> bytes:
        """An object stored whole, as before packing: its bytes must hash to its name like any other's."""
        if sha256(stored) != digest:
            raise DamagedRecord(f"{self._where(digest)}: damaged object in the version store: "
                                f"its bytes do not match its name")
        return stored

    def _unpack(self, digest: str, stored: bytes, hops: int) -> tuple[bytes, int]:
        try:
            packed = packing.parse(stored)
            base = self._load(packed.base, hops + 1)[0] if packed.base else None
            data = packing.inflate(packed, base)
            if sha256(data) == digest:
                return data, packed.depth
            problem = "its bytes do not match its name"
        except (ValueError, zlib.error, BadInput) as exc:
            problem = str(exc)
        if sha256(stored) == digest:  # raw bytes from before packing that merely start like a packed object
            return stored, 0
        raise DamagedRecord(f"{self._where(digest)}: damaged object in the version store: {problem}")

    def _where(self, digest: str) -> str:
        """The file holding an object: its loose file, or the pack (with the object's name) that holds it."""
        loose = self.path(digest)
        if loose.exists() or digest not in self.packed():
            return str(loose)
        return f"{self.packed()[digest].path} (object {digest})"

    # ---------------------------------------------------------------- writing

    def put(self, data: bytes, base: str | None = None) -> str:
        """Store one object durably (`put_tree` does many for the price of one)."""
        with DurableBatch() as batch:
            digest = self.add(batch, data, base)
            batch.commit()
        return digest

    def put_tree(self, tree: Tree, base: dict[str, str] | None = None) -> dict[str, str]:
        """Store every file of `tree` durably, in one commit; path -> sha256.

        `base` (path -> sha256 of an earlier tree) names each file's previous
        version, which a changed file is stored as a delta against.
        """
        with DurableBatch() as batch:
            files = self.add_tree(batch, tree, base)
            batch.commit()
        return files

    def add(self, batch: DurableBatch, data: bytes, base: str | None = None) -> str:
        """Stage one object in `batch` unless it is stored already; its sha256."""
        digest = sha256(data)
        new = batch.gathered(self, lambda: _NewObjects(self, batch))
        if digest not in new.stored and not self._stored(digest):
            new.stored[digest] = packing.pack(data, self._base(base))
        return digest

    def forget_packs(self) -> None:
        """List the packs again on the next lookup (a new pack is being written)."""
        self._packed = None

    def add_tree(self, batch: DurableBatch, tree: Tree, base: dict[str, str] | None = None) -> dict[str, str]:
        base = base or {}
        known = set(base.values())  # stored already: an earlier version refers to them
        files = {}
        for rel, data in sorted(tree.items()):
            digest = sha256(data)
            files[rel] = digest if digest in known else self.add(batch, data, base.get(rel))
        return files

    def add_listing(self, batch: DurableBatch, files: dict[str, str], base_root: str | None = None) -> str:
        """Stage the tree objects listing `files`; the root's sha256.

        Nodes the tree at `base_root` has at the same place are not written
        again; changed ones are stored as deltas against them.
        """
        try:
            root, nodes = trees.build(files)
        except ValueError as exc:
            raise DamagedRecord(f"{self.root}: cannot list these files in a tree: {exc}") from None
        before = self._nodes(base_root)
        for node in nodes:
            if before.get(node.position) != node.digest:
                self.add(batch, node.data, before.get(node.position))
        return root

    def _nodes(self, root: str | None) -> dict[str, str]:
        if root is None:
            return {}
        try:
            return self.listing(root).nodes
        except BadInput:
            return {}  # a damaged base only costs compression

    def _stored(self, digest: str) -> bool:
        """Whether the object is stored and readable (a gc interrupted mid-way may leave a delta without its base)."""
        if not self.has(digest):
            return False
        try:
            self._load(digest)
        except BadInput:
            return False
        return True

    def _base(self, digest: str | None) -> tuple[str, bytes, int] | None:
        """(sha256, bytes, depth) of a committed object to delta against, or None.

        When `digest` ends a chain as long as allowed, the chain's first
        (whole) object is offered instead: a delta against it spans all the
        chain's changes, yet is often still much smaller than a whole copy.
        """
        if digest is None:
            return None
        try:
            data, depth = self._load(digest)
            if depth >= packing.MAX_CHAIN:
                digest = self._chain_start(digest)
                data, depth = self._load(digest)
        except BadInput:
            return None
        return digest, data, depth

    def _chain_start(self, digest: str) -> str:
        for _ in range(packing.MAX_CHAIN + 1):
            base = self.base_of(digest)
            if base is None:
                return digest
            digest = base
        raise DamagedRecord(f"{self.path(digest)}: delta chain longer than {packing.MAX_CHAIN}")


class _NewObjects:
    """The objects one batch adds, written when it commits: one pack for many, a loose file each for a few."""

    def __init__(self, blobs: Blobs, batch: DurableBatch) -> None:
        self.blobs, self.batch = blobs, batch
        self.stored: dict[str, bytes] = {}  # sha256 -> stored bytes

    def __call__(self) -> None:
        if len(self.stored) >= packfiles.PACK_AT:
            pack = packfiles.new_path(self.blobs.packs_folder, packfiles.month_of(time.time()))
            self.batch.write(pack, packfiles.encode(self.stored.items()))
            self.blobs.forget_packs()
        else:
            for digest, stored in self.stored.items():
                self.batch.write(self.blobs.path(digest), stored)
        self.stored.clear()


def record_json(record: Any) -> bytes:
    """A version or proposal record as stored: compact, its files named by the root tree only."""
    fields = asdict(record)
    if fields.get("tree"):
        del fields["files"]
    return json.dumps(fields, separators=(",", ":")).encode()


def load_record(path: Path, cls: type[R], blobs: Blobs, what: str) -> R:
    """A version or proposal record, in either form: with a root tree, or listing every file."""
    raw = read_json_object(path, what)
    context = f"{path}: damaged {what}"
    if "files" not in raw and "tree" in raw:
        root = raw["tree"]
        if not (isinstance(root, str) and len(root) == 64):
            raise DamagedRecord(f"{context}: key 'tree' should be a sha256")
        try:
            raw["files"] = blobs.listing(root).files
        except BadInput as exc:
            raise DamagedRecord(f"{context}: its file list cannot be read ({exc})") from None
    return record_from_dict(raw, cls, context)


class Versions:
    def __init__(self, layout: Layout, blobs: Blobs | None = None):
        self.layout = layout
        self.blobs = blobs or Blobs(layout)

    def _file(self, number: int) -> Path:
        return self.layout.versions / f"{number:06d}.json"

    def numbers(self) -> list[int]:
        if not self.layout.versions.is_dir():
            return []
        return sorted(int(p.stem) for p in self.layout.versions.glob("*.json") if p.stem.isdigit())

    def current(self) -> int | None:
        numbers = self.numbers()
        return numbers[-1] if numbers else None

    def get(self, number: int) -> Version:
        try:
            return load_record(self._file(number), Version, self.blobs, "version manifest")
        except FileNotFoundError:
            raise UnknownVersion(f"{self.layout.root}: no version {number}") from None

    def stamp(self, number: int) -> tuple[float, str | None]:
        """(created_at, root tree) of a version, read without listing its files (gc reads every version)."""
        path = self._file(number)
        try:
            raw = read_json_object(path, "version manifest")
        except FileNotFoundError:
            raise UnknownVersion(f"{self.layout.root}: no version {number}") from None
        created, root = raw.get("created_at"), raw.get("tree")
        if isinstance(created, bool) or not isinstance(created, (int, float)) or \
                not (root is None or (isinstance(root, str) and len(root) == 64)):
            raise DamagedRecord(f"{path}: damaged version manifest: created_at or tree has the wrong type")
        return float(created), root

    def tree(self, number: int) -> Tree:
        return self.blobs.get_tree(self.get(number).files)

    def latest(self) -> Version | None:
        """The current version, or None when there is none or it cannot be read (a base for deltas only)."""
        current = self.current()
        try:
            return self.get(current) if current is not None else None
        except BadInput:
            return None

    def record(self, tree: Tree, source: str, note: str = "", number: int | None = None, **extra) -> Version:
        """Store a tree as a new version: its objects in one durable batch, then the record.

        Passing `number` makes the call idempotent, which crash recovery needs:
        if that version already exists it is returned unchanged.
        """
        if number is not None and self._file(number).exists():
            return self.get(number)
        base = self.latest()
        with DurableBatch() as batch:
            files = self.blobs.add_tree(batch, tree, base.files if base else None)
            root = self.blobs.add_listing(batch, files, base.tree if base else None)
            batch.commit()
        if number is None:
            number = (self.current() or 0) + 1
        version = Version(number, time.time(), source, files, note, tree=root, **extra)
        self.layout.versions.mkdir(parents=True, exist_ok=True)
        atomic_write(self._file(number), record_json(version))
        return version

    def delete(self, number: int) -> None:
        self._file(number).unlink(missing_ok=True)
