"""Immutable, numbered versions of a store's memory files.

File contents are stored once, content-addressed, under ``.dream/objects``;
a version is a manifest (path -> sha256) under ``.dream/versions/NNNNNN.json``.
The current version is the highest number. Versions are never edited: a
rollback records the old manifest again under a new number.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dream.errors import BadInput, UnknownVersion
from dream.records import load_json_record
from dream.store.layout import Layout
from dream.store.tree import Tree, atomic_write, sha256


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


class Blobs:
    def __init__(self, layout: Layout):
        self.root = layout.objects

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes) -> str:
        digest = sha256(data)
        target = self.path(digest)
        if not target.exists():
            atomic_write(target, data)
        return digest

    def get(self, digest: str) -> bytes:
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            raise BadInput(f"{self.path(digest)}: blob missing from the version store") from None

    def put_tree(self, tree: Tree) -> dict[str, str]:
        return {rel: self.put(data) for rel, data in sorted(tree.items())}

    def get_tree(self, files: dict[str, str]) -> Tree:
        return {rel: self.get(digest) for rel, digest in files.items()}


class Versions:
    def __init__(self, layout: Layout):
        self.layout = layout
        self.blobs = Blobs(layout)

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
            return load_json_record(self._file(number), Version, "version manifest")
        except FileNotFoundError:
            raise UnknownVersion(f"{self.layout.root}: no version {number}") from None

    def tree(self, number: int) -> Tree:
        return self.blobs.get_tree(self.get(number).files)

    def record(self, tree: Tree, source: str, note: str = "", number: int | None = None, **extra) -> Version:
        """Store a tree as a new version (blobs first, then the manifest).

        Passing `number` makes the call idempotent, which crash recovery needs:
        if that version already exists it is returned unchanged.
        """
        files = self.blobs.put_tree(tree)
        if number is None:
            number = (self.current() or 0) + 1
        elif self._file(number).exists():
            return self.get(number)
        version = Version(number, time.time(), source, files, note, **extra)
        self.layout.versions.mkdir(parents=True, exist_ok=True)
        atomic_write(self._file(number), json.dumps(asdict(version), indent=1).encode())
        return version

    def delete(self, number: int) -> None:
        self._file(number).unlink(missing_ok=True)
