"""Purge one secret from everything a store holds: `dream purge-secret`.

A secret that was ever stored stays in the versions for 90 days and more: in the objects of memory files
and tree nodes (loose or packed, whole or as deltas), in version and proposal records (notes, file names),
in proposals' diffs and reports, in the removal ledger, the history, and in the logs and memory files of
the store itself. Purging replaces every occurrence with `MARKER`, and:

* every object holding the secret is stored again with it replaced (so under a new sha256: objects are
  named by their bytes, and every read checks them), and every record naming it is rewritten to name the
  new one, through a new tree;
* every other object stored as a delta of one holding the secret is stored whole, since its base goes;
* then the objects holding the secret are deleted: loose files removed, packs written again without them.

A purged version's record says when it was purged (``meta.purged``): rolling back to it gives the redacted
bytes, and the rollback's history line says so. The purge itself is one line of the history.

Files outside ``.dream/`` (memory files, logs) are the agent's too, and it does not take dream's lock: each
is rewritten by compare-and-swap (`dream.store.cas`), so a line appended meanwhile is merged in, never lost,
and one that brings the secret back is purged in another round.

Crash safety: the new objects are durable before any record names them, and the records are rewritten
(atomically, one by one) before any old object is deleted; an interrupted purge leaves a store whose
records all name objects that exist, and running it again finishes it.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream import history
from dream.errors import BadInput
from dream.store.cas import MAX_SWAPS, compare_and_swap, observe
from dream.store.layout import Layout
from dream.store.regular import NotRegular
from dream.store.records import read_json_object
from dream.store.tree import DurableBatch, atomic_write
from dream.versions import packfiles, packing
from dream.versions.journal import LockedStore
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import Proposals
from dream.versions.removed import ledger_path, load_ledger, save_ledger

MARKER = "[REDACTED:purged]"
MIN_SECRET_CHARS = 6  # shorter, and the purge would rewrite ordinary words


@dataclass
class PurgeResult:
    versions: list[int] = field(default_factory=list)  # versions whose files or record held the secret
    proposals: list[str] = field(default_factory=list)
    objects_replaced: int = 0  # objects holding the secret, stored again redacted, then deleted
    objects_rewhole: int = 0  # deltas of those, stored whole
    packs_rewritten: int = 0
    files: list[str] = field(default_factory=list)  # other files rewritten (store-relative)
    renamed: list[str] = field(default_factory=list)  # files whose names held the secret: old -> new
    not_purged: list[str] = field(default_factory=list)  # binary files that hold it: only named
    changing: list[str] = field(default_factory=list)  # another writer kept changing them: may still hold it

    def touched(self) -> bool:
        return bool(self.versions or self.proposals or self.objects_replaced or self.files or self.renamed)

    def to_json(self) -> dict[str, Any]:
        return {"versions": self.versions, "proposals": self.proposals, "objects_replaced": self.objects_replaced,
                "objects_stored_whole": self.objects_rewhole, "packs_rewritten": self.packs_rewritten,
                "files": self.files, "renamed": self.renamed, "not_purged": self.not_purged,
                "changing": self.changing}


class _Replacer:
    """The secret's spellings (as typed, and escaped inside JSON) and how to take them out of text."""

    def __init__(self, secret: str):
        # lowercased too: file names are made from slugs ("project_sqlplus_scott_<secret>.md")
        self.texts = list(dict.fromkeys([secret, secret.lower()]))
        spellings = [form for text in self.texts for form in (text, json.dumps(text, ensure_ascii=False)[1:-1],
                                                               json.dumps(text)[1:-1])]
        self.forms = [f.encode() for f in dict.fromkeys(spellings)]

    def holds(self, data: bytes) -> bool:
        return any(form in data for form in self.forms)

    def bytes(self, data: bytes) -> bytes:
        for form in self.forms:
            data = data.replace(form, MARKER.encode())
        return data

    def text(self, value: str) -> str:
        for text in self.texts:
            value = value.replace(text, MARKER)
        return value

    def json(self, value: Any) -> Any:
        """`value` with the secret taken out of every string in it, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        return value


def purge_secret(store: str | Path, secret: str) -> PurgeResult:
    """Take `secret` out of every version, proposal, ledger entry, history line, log and pack of `store`."""
    secret = secret.strip("\r\n")
    if len(secret) < MIN_SECRET_CHARS:
        raise BadInput(f"the secret to purge must be at least {MIN_SECRET_CHARS} characters "
                       f"(shorter ones would rewrite ordinary words); got {len(secret)}")
    layout = Layout.open(store)
    replacer, result = _Replacer(secret), PurgeResult()
    with LockedStore(layout, "purge"):
        blobs = Blobs(layout)
        doomed = _objects_holding(blobs, replacer)
        result.objects_replaced = len(doomed)
        redacted = _Redacted(blobs, doomed, replacer)
        versions = Versions(layout, blobs)
        records = [(versions.layout.versions / f"{n:06d}.json", versions.get(n).files) for n in versions.numbers()]
        result.versions = [int(p.stem) for p in _rewrite_records(blobs, records, redacted, mark_purged=True)]
        proposals = Proposals(layout)
        records = [(proposals.dir(i) / "proposal.json", proposals.get(i).files) for i in proposals.ids()]
        result.proposals = [p.parent.name for p in _rewrite_records(blobs, records, redacted, mark_purged=False)]
        _rewrite_ledger(layout, redacted, replacer, result)
        _rewrite_files(layout, replacer, result)
        result.objects_rewhole = _store_whole_what_needs(Blobs(layout), set(doomed))
        result.packs_rewritten = _delete(layout, set(doomed))
        if result.touched():
            history.record_event(layout, "purge-secret", detail=_detail(result))
    return result


# ---------------------------------------------------------------- objects


def _objects_holding(blobs: Blobs, replacer: _Replacer) -> dict[str, bytes]:
    """sha256 -> bytes of every stored object (loose or packed) that holds the secret."""
    found = {}
    for digest in sorted(blobs.digests()):
        data = blobs.get(digest)
        if replacer.holds(data):
            found[digest] = data
    return found


class _Redacted:
    """Each doomed object stored again with the secret replaced, when a record names it (tree nodes that
    only old records named are not: they go with the old records)."""

    def __init__(self, blobs: Blobs, doomed: dict[str, bytes], replacer: _Replacer):
        self.blobs, self.doomed, self.replacer = blobs, doomed, replacer
        self.new: dict[str, str] = {}  # old sha256 -> new

    def digest(self, digest: str) -> str:
        if digest not in self.doomed:
            return digest
        if digest not in self.new:
            self.new[digest] = self.blobs.put(self.replacer.bytes(self.doomed[digest]))
        return self.new[digest]


def _store_whole_what_needs(blobs: Blobs, doomed: set[str]) -> int:
    """Store whole, as loose files, the kept objects whose delta chain goes through a doomed one."""
    needing = [d for d in sorted(blobs.digests() - doomed) if _chain_touches(blobs, d, doomed)]
    with DurableBatch() as batch:
        for digest in needing:
            target = blobs.path(digest)
            data = blobs.get(digest)
            target.unlink(missing_ok=True)  # a loose delta: replaced by the whole object, same name
            batch.write(target, packing.whole(data))
        batch.commit()
    return len(needing)


def _chain_touches(blobs: Blobs, digest: str, doomed: set[str]) -> bool:
    for _ in range(packing.MAX_CHAIN + 2):
        base = blobs.base_of(digest)
        if base is None:
            return False
        if base in doomed:
            return True
        digest = base
    return False


def _delete(layout: Layout, doomed: set[str]) -> int:
    """Delete the doomed objects: loose files, and packs written again without them; packs rewritten."""
    blobs = Blobs(layout)
    loose = blobs.loose()
    rewritten = 0
    for pack in blobs.packs():
        dropped = {d for d in pack.index if d in doomed or d in loose}  # loose: stored whole meanwhile
        if not dropped:
            continue
        kept = [(d, pack.get(d)) for d in pack.index if d not in dropped]
        if kept:
            packfiles.write(layout.packs, pack.group, kept)
        pack.path.unlink()
        rewritten += 1
    for digest in doomed:
        if digest in loose:
            loose[digest].unlink()
    return rewritten


# ---------------------------------------------------------------- records


def _rewrite_records(blobs: Blobs, records: list[tuple[Path, dict[str, str]]], redacted: _Redacted,
                     mark_purged: bool) -> Iterator[Path]:
    """Rewrite each record (path, its files) that names a doomed object or holds the secret; yield those."""
    replacer = redacted.replacer
    for path, files in records:
        new_files = {replacer.text(rel): redacted.digest(digest) for rel, digest in files.items()}
        if new_files == files and not replacer.holds(path.read_bytes()):
            continue
        raw = replacer.json(read_json_object(path, "record"))
        if raw.get("tree"):
            with DurableBatch() as batch:
                raw["tree"] = blobs.add_listing(batch, new_files)
                batch.commit()
        if "files" in raw:
            raw["files"] = new_files
        if mark_purged:
            meta = raw.get("meta") if isinstance(raw.get("meta"), dict) else {}
            raw["meta"] = {**meta, "purged": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        atomic_write(path, json.dumps(raw, separators=(",", ":")).encode())
        yield path


def _rewrite_ledger(layout: Layout, redacted: _Redacted, replacer: _Replacer, result: PurgeResult) -> None:
    path = ledger_path(layout)
    if not path.exists():
        return
    ledger = load_ledger(layout)
    changed = False
    for entry in ledger.entries:
        before = (entry.blob, entry.index_line, entry.removal.path, entry.removal.text, entry.removal.why)
        entry.blob = redacted.digest(entry.blob) if entry.blob else None
        entry.index_line = replacer.text(entry.index_line) if entry.index_line else entry.index_line
        removal = entry.removal
        removal.path, removal.text, removal.why = (replacer.text(removal.path), replacer.text(removal.text),
                                                   replacer.text(removal.why))
        changed |= before != (entry.blob, entry.index_line, removal.path, removal.text, removal.why)
    if changed:
        save_ledger(layout, ledger)
        result.files.append(str(path.relative_to(layout.root)))


# ---------------------------------------------------------------- every other file


def _rewrite_files(layout: Layout, replacer: _Replacer, result: PurgeResult) -> None:
    """Every other file under the store (logs, memory files, reviews, history…): its text and its name.

    A file that is not text (NUL bytes: an old DuckDB history) is never rewritten; one that holds the
    secret is named, for a person to delete or rebuild.
    """
    for path in _walk(layout.root, {layout.objects, layout.versions}):
        rel = str(path.relative_to(layout.root))
        if not (path.name == "proposal.json" and path.parent.parent == layout.proposals):  # done with the records
            outcome = _rewrite_file(layout, path, replacer)
            if outcome == "rewritten":
                result.files.append(rel)
            elif outcome == "binary":
                result.not_purged.append(rel)
            elif outcome == "changing":
                result.changing.append(rel)
        if replacer.text(path.name) != path.name:
            target = path.with_name(replacer.text(path.name))
            try:
                os.replace(path, target)
            except FileNotFoundError:  # gone meanwhile: another writer renamed or removed it
                continue
            result.renamed.append(f"{rel} -> {target.relative_to(layout.root)}")


def _walk(root: Path, skip: set[Path]) -> Iterator[Path]:
    for entry in os.scandir(root):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if path not in skip:
                yield from _walk(path, skip)
        elif entry.is_file(follow_symlinks=False):
            yield path


def _rewrite_file(layout: Layout, path: Path, replacer: _Replacer) -> str:
    """"rewritten", "binary" (holds the secret, not text), "changing" (another writer kept changing it, or made
    it something other than a file: it may still hold the secret) or "" (does not hold it, or is gone)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # listed, then renamed or removed by another writer (an editor's swap file)
        return ""
    opened = _gunzip(data)
    text = data if opened is None else opened
    if not replacer.holds(text):
        return ""
    if b"\x00" in text:
        return "binary"
    if path == layout.history:
        history.rewrite(layout, replacer.bytes)
    elif opened is not None:
        atomic_write(path, gzip.compress(replacer.bytes(opened), mtime=0))
    elif layout.dream in path.parents:  # dream's own file, under the lock held here
        atomic_write(path, replacer.bytes(data))
    else:
        return _rewrite_shared(path, replacer)
    return "rewritten"


def _rewrite_shared(path: Path, replacer: _Replacer) -> str:
    """A file the agent writes too: the secret taken out by compare-and-swap against what was read, each
    round re-reading it, until it no longer holds the secret (a line the agent added meanwhile is kept)."""
    for _ in range(MAX_SWAPS):
        try:
            now = observe(path).data
            if now is None or not replacer.holds(now):
                return "rewritten"
            result = compare_and_swap(path, now, replacer.bytes(now))
        except NotRegular:
            return "changing"
        except OSError as exc:
            if exc.errno != errno.EAGAIN:  # EAGAIN: it changed more often than compare-and-swap tries
                raise
            return "changing"
        if not result.conflict and (result.data is None or not replacer.holds(result.data)):
            return "rewritten"
    return "changing"


def _gunzip(data: bytes) -> bytes | None:
    if data[:2] != b"\x1f\x8b":
        return None
    try:
        return gzip.decompress(data)
    except (OSError, EOFError):
        return None


def _detail(result: PurgeResult) -> str:
    versions = ", ".join(map(str, result.versions)) or "none"
    return (f"a secret purged from versions {versions}, {len(result.proposals)} proposal(s), "
            f"{len(result.files)} other file(s); {result.objects_replaced} object(s) stored again redacted")

