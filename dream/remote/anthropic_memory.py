"""Mirror an Anthropic memory store (``client.beta.memory_stores``) into a local store, and push back.

`pull` writes every memory of the store whose path is a memory file name
(``/notes/a.md`` -> ``notes/a.md``) into a local folder and records, in
``.dream/anthropic_mirror.json``, each memory's id, ``content_sha256``,
version id and the content as pulled (the base of later merges). A dream runs
on that folder as on any store.

`push` (run by accept and rollback on a mirrored store) sends the local
store's difference from the record to the service in a fixed order: deletes,
then updates (content and path, keeping the memory's id), then creates, each
by path. Every write carries a precondition: an update the recorded
``content_sha256``, a delete ``expected_content_sha256``, and a create goes
only after a list shows the path free. Many writes cannot be atomic, so on
a 409 the push stops there: it reads that memory again and three-way merges
it as accept merges local files (dream.store.merge). A clean merge is pushed
with the fresh hash as precondition; otherwise the service's text is kept,
written into the local store, and the conflict is reported for a person
(dream's text stays in dream's versions). The record then says exactly what
was pushed; whatever was not reached stays pending for `dream push`, never
overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from dream.errors import BadInput, MergeConflict
from dream.history import record_event
from dream.store.layout import Layout
from dream.store.lock import store_lock
from dream.store.merge import find_renames, merge_trees
from dream.store.tree import Tree, atomic_write, is_memory_path, read_tree, sha256

MIRROR_FILE = "anthropic_mirror.json"
STORE_PREFIX = "memstore_"
LIST_PAGE = 100  # the most the API gives per page with view=basic
FULL_PAGE = 20  # ... and with view=full (contents included)
CONFLICTS_DIR = "conflicts"  # under .dream/: dream's side of a conflict the service's side won
LOCK_WAIT_SECONDS = 10  # a run holding the store finishes its write soon; then the push goes


class Kind(Enum):
    """What one push step does; the push runs them in this order."""

    DELETE = "delete"
    UPDATE = "update"
    CREATE = "create"


@dataclass
class Entry:
    """One mirrored memory as last seen on the service."""

    id: str
    sha: str
    version_id: str
    base: str  # the content as pulled or pushed: the base of a three-way merge


@dataclass
class Record:
    store_id: str
    memories: dict[str, Entry] = field(default_factory=dict)  # local path -> entry

    def to_json(self) -> dict[str, Any]:
        return {"store_id": self.store_id, "memories": {rel: asdict(e) for rel, e in sorted(self.memories.items())}}


@dataclass
class Change:
    kind: Kind
    rel: str  # the local path it ends at (for a delete: the path it had)
    old_rel: str | None = None  # an update's path before a rename


@dataclass
class PushResult:
    pushed: list[str] = field(default_factory=list)  # "updated /a.md (mem_.. -> memver_..)", in push order
    merged: list[str] = field(default_factory=list)  # paths merged with the service's concurrent edit
    stopped: str | None = None  # why the push stopped before the end
    for_person: bool = False  # the stop left a conflict for a person
    pending: list[str] = field(default_factory=list)  # changes not reached

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def remote_path(rel: str) -> str:
    return "/" + rel


def local_path(path: str) -> str:
    return path.removeprefix("/")


# ---- the record --------------------------------------------------------------------------------------------------

def record_file(root: Path) -> Path:
    return root / ".dream" / MIRROR_FILE


def is_mirror(root: Path) -> bool:
    return record_file(root).is_file()


def load(root: Path) -> Record:
    path = record_file(root)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Record(raw["store_id"], {rel: Entry(**e) for rel, e in raw["memories"].items()})
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInput(f"{path}: not a readable memory-store mirror record ({e}); pull the store again") from None


def save(root: Path, record: Record) -> None:
    atomic_write(record_file(root), json.dumps(record.to_json(), indent=1, ensure_ascii=False).encode() + b"\n")


# ---- the service -------------------------------------------------------------------------------------------------

def _memories() -> Any:
    from anthropic import Anthropic  # start-up: only mirrored stores need the SDK

    client = Anthropic()
    if client.api_key is None and client.auth_token is None:
        raise BadInput("ANTHROPIC_API_KEY is not set: a memory store is read and written with an API key")
    return client.beta.memory_stores.memories


def _api_errors() -> tuple[type[Exception], type[Exception], type[Exception]]:
    from anthropic import APIError, ConflictError, NotFoundError  # start-up: see _memories

    return APIError, ConflictError, NotFoundError


def _live(api: Any, store_id: str, memory_id: str) -> Any | None:
    """The memory as the service holds it now, or None when it was deleted."""
    _, _, not_found = _api_errors()
    try:
        return api.retrieve(memory_id, memory_store_id=store_id, view="full")
    except not_found:
        return None


def _occupant(api: Any, store_id: str, path: str) -> Any | None:
    """The memory at `path` now, if any (listing its folder: the API has no lookup by path)."""
    folder = path.rsplit("/", 1)[0] + "/"
    for item in api.list(store_id, path_prefix=folder, depth=1, limit=LIST_PAGE):
        if item.type == "memory" and item.path == path:
            return api.retrieve(item.id, memory_store_id=store_id, view="full")
    return None


def _overlapped(api: Any, store_id: str, path: str) -> bool:
    """Whether a memory's path is a folder of `path`, or `path` a folder of one: the service refuses both."""
    if any(True for _ in api.list(store_id, path_prefix=path + "/", limit=1)):
        return True
    parts = path.split("/")[1:-1]
    return any(_occupant(api, store_id, "/" + "/".join(parts[:n])) is not None for n in range(1, len(parts) + 1))


# ---- pull --------------------------------------------------------------------------------------------------------

def pull(store_id: str, dest: Path) -> Record:
    """Mirror `store_id` into the folder `dest` (created; must not hold anything yet).

    The mirror is built in a folder beside `dest` and renamed into place, so
    a failed pull leaves nothing behind.
    """
    if not store_id.startswith(STORE_PREFIX):
        raise BadInput(f"{store_id}: not a memory store id (they start with {STORE_PREFIX})")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BadInput(f"{dest}: not empty; pull a memory store into a new folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{dest.name}.pulling-", dir=dest.parent))
    try:
        record = _pull_into(store_id, building)
        if dest.exists():
            dest.rmdir()
        building.rename(dest)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return record


@dataclass
class RefreshResult:
    taken: list[str] = field(default_factory=list)  # local paths that took the service's edits
    merged: list[str] = field(default_factory=list)  # ... merged with changes not pushed yet
    for_person: list[str] = field(default_factory=list)  # "path: why", left as they were

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def refresh(layout: Layout) -> RefreshResult:
    """Bring what agents wrote on the service since the last pull or push into the mirror.

    A memory the mirror did not change takes the service's text; one it
    changed and has not pushed yet is three-way merged (its base stays the
    service's text, so the next push sends the merge with the right
    precondition); one that does not merge is left as it is, for a person.
    """
    with store_lock(layout, f"pull-{os.getpid()}", purpose="pull", wait=LOCK_WAIT_SECONDS):
        record = load(layout.root)
        api = _memories()
        api_error, _, _ = _api_errors()
        try:
            listed = {local_path(m.path): m for m in api.list(record.store_id, limit=LIST_PAGE)
                      if m.type == "memory" and is_memory_path(local_path(m.path))}
            live = {rel: api.retrieve(m.id, memory_store_id=record.store_id, view="full")
                    for rel, m in listed.items() if (m.id, m.content_sha256) != _seen(record, rel)}
        except api_error as e:
            raise BadInput(f"{record.store_id}: the memory store could not be read: {e}") from None
        # deleted, or moved away (its new path is in `live`)
        gone = {rel for rel, e in record.memories.items() if rel not in listed or listed[rel].id != e.id}
        result = RefreshResult()
        for rel in sorted(live.keys() | gone):
            _refresh_one(layout.root, record, rel, live.get(rel), result)
        save(layout.root, record)
    return result


def _seen(record: Record, rel: str) -> tuple[str, str] | None:
    entry = record.memories.get(rel)
    return (entry.id, entry.sha) if entry else None


def _refresh_one(root: Path, record: Record, rel: str, live: Any, result: RefreshResult) -> None:
    entry = record.memories.get(rel)
    mine_path = root / rel
    mine = {rel: mine_path.read_bytes()} if mine_path.is_file() else {}
    base = {rel: entry.base.encode()} if entry else {}
    theirs = {rel: live.content.encode()} if live is not None else {}
    try:
        merged = merge_trees(base, theirs, mine).tree.get(rel)
    except MergeConflict as e:
        hunks = "; ".join(e.conflicts.get(rel, [])).replace("the store", "the service").replace("the proposal", "here")
        result.for_person.append(f"{rel}: {hunks}")
        return
    (result.taken if mine == base else result.merged).append(rel)
    if merged is None:
        mine_path.unlink(missing_ok=True)
    elif mine.get(rel) != merged:
        mine_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(mine_path, merged)
    if live is None:
        record.memories.pop(rel, None)
    else:
        record.memories[rel] = Entry(live.id, live.content_sha256, live.memory_version_id, live.content)


def _pull_into(store_id: str, dest: Path) -> Record:
    api = _memories()
    api_error, _, _ = _api_errors()
    record = Record(store_id)
    try:
        items = [m for m in api.list(store_id, view="full", limit=FULL_PAGE) if m.type == "memory"]
        skipped = [m.path for m in items if not is_memory_path(local_path(m.path))]
        if skipped:
            raise BadInput(f"{store_id}: {', '.join(skipped)} cannot be a memory file of a local store "
                           f"(not a .md name, or a name dream keeps for itself); nothing was pulled")
        for memory in items:
            rel = local_path(memory.path)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(dest / rel, memory.content.encode())
            record.memories[rel] = Entry(memory.id, memory.content_sha256, memory.memory_version_id, memory.content)
    except api_error as e:
        raise BadInput(f"{store_id}: the memory store could not be read: {e}") from None
    (dest / ".dream").mkdir()
    save(dest, record)
    return record


# ---- push --------------------------------------------------------------------------------------------------------

def plan(record: Record, tree: Tree) -> list[Change]:
    """The changes that make the service hold `tree`, in the order they are pushed."""
    base = {rel: e.base.encode() for rel, e in record.memories.items()}
    renames = find_renames(base, tree)
    renamed_to = set(renames.values())
    deletes = [Change(Kind.DELETE, rel) for rel in sorted(base) if rel not in tree and rel not in renames]
    updates = [Change(Kind.UPDATE, new, old) for old, new in renames.items()]
    updates += [Change(Kind.UPDATE, rel) for rel in base if rel in tree and tree[rel] != base[rel]]
    creates = [Change(Kind.CREATE, rel) for rel in sorted(tree) if rel not in base and rel not in renamed_to]
    return deletes + sorted(updates, key=lambda c: c.rel) + creates


def push(layout: Layout, version: int | None = None) -> PushResult:
    """Send the local store's changes to the service (see the module's docstring); history links what went."""
    with store_lock(layout, f"push-{os.getpid()}", purpose="push", wait=LOCK_WAIT_SECONDS):
        result = _push(layout)
    if result.pushed or result.stopped:
        detail = "; ".join(result.pushed + ([f"stopped: {result.stopped}"] if result.stopped else []))
        record_event(layout, "push", version=version, detail=detail)
    return result


def _push(layout: Layout) -> PushResult:
    record = load(layout.root)
    tree = read_tree(layout.root)
    api = _memories()
    api_error, conflict_error, _ = _api_errors()
    result = PushResult()
    changes = plan(record, tree)
    for n, change in enumerate(changes):
        try:
            _apply(api, record, tree, change, result)
        except (conflict_error, _Taken):
            try:
                _settle(api, layout.root, record, tree, change, result)
            except api_error as e:  # changed again while we merged: a person looks at it
                result.stopped, result.for_person = f"{remote_path(change.rel)}: {e}", True
        except api_error as e:
            result.stopped = f"{remote_path(change.rel)}: the service refused the {change.kind.value}: {e}"
        finally:
            save(layout.root, record)
        if result.stopped:
            result.pending = [f"{c.kind.value} {remote_path(c.rel)}" for c in changes[n + 1:]]
            break
    return result


def _apply(api: Any, record: Record, tree: Tree, change: Change, result: PushResult) -> None:
    sid = record.store_id
    if change.kind is Kind.DELETE:
        entry = record.memories[change.rel]
        api.delete(entry.id, memory_store_id=sid, expected_content_sha256=entry.sha)
        del record.memories[change.rel]
        result.pushed.append(f"deleted {remote_path(change.rel)} ({entry.id})")
        return
    content = _text(tree, change.rel)
    if change.kind is Kind.UPDATE:
        entry = record.memories[change.old_rel or change.rel]
        memory = api.update(entry.id, memory_store_id=sid, content=content,
                            path=remote_path(change.rel) if change.old_rel else None,
                            precondition={"type": "content_sha256", "content_sha256": entry.sha})
        _remember(record, change, memory, content)
        moved = f" (was {remote_path(change.old_rel)})" if change.old_rel else ""
        result.pushed.append(f"updated {remote_path(change.rel)}{moved} ({memory.id} -> {memory.memory_version_id})")
        return
    if _occupant(api, sid, remote_path(change.rel)) is not None or _overlapped(api, sid, remote_path(change.rel)):
        raise _Taken()
    memory = api.create(sid, path=remote_path(change.rel), content=content)
    _remember(record, change, memory, content)
    result.pushed.append(f"created {remote_path(change.rel)} ({memory.id} -> {memory.memory_version_id})")


class _Taken(Exception):
    """A create found its path taken before trying (handled like the service's 409)."""


def _remember(record: Record, change: Change, memory: Any, content: str) -> None:
    if change.old_rel:
        record.memories.pop(change.old_rel, None)
    record.memories[change.rel] = Entry(memory.id, memory.content_sha256, memory.memory_version_id, content)


def _text(tree: Tree, rel: str) -> str:
    try:
        return tree[rel].decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{rel}: not UTF-8 text, which a memory store holds; fix the file and push again") from None


# ---- a concurrent change -----------------------------------------------------------------------------------------

def _settle(api: Any, root: Path, record: Record, tree: Tree, change: Change, result: PushResult) -> None:
    """After a 409: read the memory again, merge and push it, or keep the service's text for a person."""
    sid, rel = record.store_id, change.rel
    entry = record.memories.get(change.old_rel or rel)
    live = _live(api, sid, entry.id) if entry else _occupant(api, sid, remote_path(rel))
    result.stopped = f"{remote_path(rel)} changed on the service since it was pulled"
    unchanged = entry is not None and live is not None and live.content_sha256 == entry.sha
    if unchanged or (entry is None and live is None):  # not the content: the path is taken, or overlaps another
        result.stopped = (f"{remote_path(rel)}: the path is taken on the service (or is inside, or holds, another "
                          f"memory's path), so the {change.kind.value} was not pushed")
        result.for_person = True
        return
    base = {rel: entry.base.encode()} if entry else {}
    theirs = {rel: live.content.encode()} if live is not None else {}
    mine = {rel: tree[rel]} if change.kind is not Kind.DELETE else {}
    try:
        merged = merge_trees(base, theirs, mine).tree.get(rel)
    except MergeConflict as e:
        kept = _keep_theirs(root, record, change, live)
        hunks = "; ".join(e.conflicts.get(rel, [])).replace("the store", "the service").replace("the proposal", "dream")
        result.stopped += (f" and dream's {change.kind.value} does not merge with that edit ({hunks}); the service's "
                           f"text is kept, in the local store too; dream's text is in {kept or 'its versions'}")
        result.for_person = True
        return
    _push_merged(api, root, record, change, live, merged, result)


def _push_merged(api: Any, root: Path, record: Record, change: Change, live: Any, merged: bytes | None,
                 result: PushResult) -> None:
    sid, rel = record.store_id, change.rel
    result.merged.append(remote_path(rel))
    if merged is None:  # both sides deleted it
        record.memories.pop(change.old_rel or rel, None)
        return
    text = merged.decode("utf-8")
    memory = live
    if text != live.content or remote_path(rel) != live.path:
        memory = api.update(live.id, memory_store_id=sid, content=text,
                            path=remote_path(rel) if remote_path(rel) != live.path else None,
                            precondition={"type": "content_sha256", "content_sha256": live.content_sha256})
        result.pushed.append(f"updated {remote_path(rel)}, merged ({memory.id} -> {memory.memory_version_id})")
    atomic_write(root / rel, merged)
    _remember(record, change, memory, text)


def _keep_theirs(root: Path, record: Record, change: Change, live: Any) -> Path | None:
    """The local store takes the service's text (or its delete) for this memory; returns where dream's went.

    Dream's text is copied under ``.dream/conflicts/`` first: an edit made
    in the mirror without a dream is in no version, and must not be lost.
    """
    kept = None
    for rel in {change.rel, change.old_rel} - {None}:
        path = root / str(rel)
        record.memories.pop(str(rel), None)
        if path.is_file() and (live is None or path.read_bytes() != live.content.encode()):
            kept = root / ".dream" / CONFLICTS_DIR / str(rel)
            kept.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(kept, path.read_bytes())
        path.unlink(missing_ok=True)
    if live is None:
        return kept
    rel = local_path(live.path)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(root / rel, live.content.encode())
    record.memories[rel] = Entry(live.id, live.content_sha256, live.memory_version_id, live.content)
    return kept
