"""Everything that ever left the live store: memory files and index lines, when, by which proposal, why.

Read from the versions: between each version and the one before it, a
memory file that is gone, and an index line whose memory the new index no
longer points at (a line reworded in place is not gone). Why comes from
the accepted proposal's report: the engine's change for that file (a
forget request's sentence, a merge into another file, an archive); a
version that is not an accept says what it was (a rollback, or a snapshot:
the file was removed outside dream, between two runs).

gc deletes old versions, and with them what this reads. So before it
deletes any, it writes the removals between them into the ledger
(``.dream/removed.json.gz``, rewritten atomically): each with the removed
memory's object, which gc then keeps for good, so every removed memory
stays restorable (`restorable`). The ledger also names the versions it
collected: a pair of versions it covers is read from it, not compared
again (after a crash between the ledger and the deletions, both exist).
"""

from __future__ import annotations

import gzip
from dataclasses import asdict, dataclass, field, fields

import orjson

from dream.errors import DreamError
from dream.store.layout import Layout
from dream.store.model import TextFile, frontmatter_end, parse_index_line, resolve_link
from dream.store.records import DamagedRecord, read_gzip_record_bytes
from dream.store.tree import INDEX_NAME, atomic_write
from dream.versions.manifests import Version, Versions
from dream.versions.proposals import Proposals


@dataclass
class Removal:
    kind: str  # memory | index line
    path: str  # the memory file (for an index line: the file it pointed at)
    text: str  # for an index line, the line; "" for a memory
    version: int  # the first version without it
    held_by: int  # the last version that held it
    at: float  # when that version was made
    proposal_id: str | None
    source: str  # accept | rollback | snapshot | …
    why: str

    def as_json(self) -> dict:
        return asdict(self)


@dataclass
class Collected:
    """A removal whose versions gc deleted: what restore needs is kept with it."""

    removal: Removal
    blob: str | None = None  # a memory's last content (kept by gc for good)
    index_line: str | None = None  # the index line that pointed at the memory then


@dataclass
class Ledger:
    collected: set[int] = field(default_factory=set)  # version numbers gc deleted after writing their removals
    entries: list[Collected] = field(default_factory=list)

    def covers(self, older: int, newer: int) -> bool:
        """Whether the removals between these two versions (adjacent in what is left) are in the ledger."""
        return older in self.collected or newer in self.collected or \
            (newer > older + 1 and all(n in self.collected for n in range(older + 1, newer)))

    def blobs(self) -> set[str]:
        return {e.blob for e in self.entries if e.blob}


_REMOVAL_FIELDS = {f.name for f in fields(Removal)}


def ledger_path(layout: Layout):
    return layout.dream / "removed.json.gz"


def load_ledger(layout: Layout) -> Ledger:
    path = ledger_path(layout)
    try:
        raw = orjson.loads(read_gzip_record_bytes(path, "removal ledger"))
        return Ledger(set(raw["collected"]), [_entry(e) for e in raw["removed"]])
    except FileNotFoundError:
        return Ledger()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DamagedRecord(f"{path}: damaged removal ledger ({exc}); gc and restore need it, move it "
                            f"away only if the memories it lists may be lost") from None


def _entry(raw: dict) -> Collected:
    removal = Removal(**{k: raw[k] for k in _REMOVAL_FIELDS})
    blob, line = raw.get("blob"), raw.get("index_line")
    if not (blob is None or (isinstance(blob, str) and len(blob) == 64)) or not isinstance(line, (str, type(None))):
        raise ValueError("an entry's blob or index line has the wrong type")
    return Collected(removal, blob, line)


def save_ledger(layout: Layout, ledger: Ledger) -> None:
    body = {"collected": sorted(ledger.collected),
            "removed": [{**e.removal.as_json(), "blob": e.blob, "index_line": e.index_line} for e in ledger.entries]}
    atomic_write(ledger_path(layout), gzip.compress(orjson.dumps(body), mtime=0))


def record_collected(versions: Versions, doomed: set[int]) -> Ledger:
    """The ledger with the removals of every pair of versions that `doomed` breaks up; saved before gc deletes them."""
    ledger = load_ledger(versions.layout)
    numbers = versions.numbers()
    pairs = [(a, b) for a, b in zip(numbers, numbers[1:]) if (a in doomed or b in doomed) and not ledger.covers(a, b)]
    if not pairs and doomed <= ledger.collected:
        return ledger
    proposals = Proposals(versions.layout)
    for older, newer in pairs:
        old = versions.get(older)
        lines = index_targets(versions.blobs.get(old.files[INDEX_NAME])) if INDEX_NAME in old.files else {}
        for removal in _pair_removals(versions, proposals, older, newer):
            memory = removal.kind == "memory"
            ledger.entries.append(Collected(removal, old.files[removal.path] if memory else None,
                                            lines.get(removal.path) if memory else None))
    ledger.collected |= doomed
    save_ledger(versions.layout, ledger)
    return ledger


def removals(versions: Versions) -> list[Removal]:
    """Every removal, oldest first: those gc collected, then those between the versions left."""
    ledger = load_ledger(versions.layout)
    found = [e.removal for e in ledger.entries]
    proposals = Proposals(versions.layout)
    numbers = versions.numbers()
    for older, newer in zip(numbers, numbers[1:]):
        if not ledger.covers(older, newer):
            found += _pair_removals(versions, proposals, older, newer)
    return found


def _pair_removals(versions: Versions, proposals: Proposals, older: int, newer: int) -> list[Removal]:
    old, new = versions.get(older), versions.get(newer)
    reasons = _reasons(proposals, new)
    found = [Removal("memory", path, "", newer, older, new.created_at, new.proposal_id, new.source,
                     _why(new, reasons, path))
             for path in sorted(set(old.files) - set(new.files) - {INDEX_NAME})]
    for target, line in _gone_index_lines(versions, old, new):
        found.append(Removal("index line", target, line, newer, older, new.created_at, new.proposal_id,
                             new.source, _why(new, reasons, target)))
    return found


@dataclass
class Restorable:
    blob: str  # the memory's last content
    index_line: str | None  # the index line that pointed at it then
    held_by: int  # the last version that held it


def restorable(versions: Versions, path: str) -> Restorable | None:
    """The last content of `path` a version held, or (its versions collected) the ledger kept; None: never held."""
    for number in reversed(versions.numbers()):
        held = versions.get(number)
        if path in held.files:
            line = index_targets(versions.blobs.get(held.files[INDEX_NAME])).get(path) \
                if INDEX_NAME in held.files else None
            return Restorable(held.files[path], line, number)
    for entry in reversed(load_ledger(versions.layout).entries):
        if entry.removal.kind == "memory" and entry.removal.path == path and entry.blob:
            return Restorable(entry.blob, entry.index_line, entry.removal.held_by)
    return None


def index_targets(data: bytes) -> dict[str, str]:
    """Memory path -> the first index line pointing at it."""
    found: dict[str, str] = {}
    for line in TextFile.decode(data).lines:
        entry = parse_index_line(line)
        target = resolve_link(INDEX_NAME, entry.target) if entry.kind == "link" else None
        if target:
            found.setdefault(target, line)
    return found


def _gone_index_lines(versions: Versions, old: Version, new: Version) -> list[tuple[str, str]]:
    if old.files.get(INDEX_NAME) == new.files.get(INDEX_NAME) or INDEX_NAME not in old.files:
        return []
    before = index_targets(versions.blobs.get(old.files[INDEX_NAME]))
    after = index_targets(versions.blobs.get(new.files[INDEX_NAME])) if INDEX_NAME in new.files else {}
    return [(target, line) for target, line in before.items() if target not in after]


def _reasons(proposals: Proposals, version: Version) -> dict[str, str]:
    """Path -> the accepted proposal's reason for its change to that path."""
    if not version.proposal_id:
        return {}
    try:
        report = proposals.report(proposals.get(version.proposal_id))
    except DreamError:  # gone or damaged: the removal is still listed, without its reason
        return {}
    reasons: dict[str, str] = {}
    for change in (report.get("changes") or []) + (report.get("finish") or []):
        if isinstance(change, dict) and change.get("path"):
            detail = f" ({change['detail']})" if change.get("detail") else ""
            reasons.setdefault(change["path"], f"{change.get('action', '?')}: {change.get('reason', '')}{detail}")
    return reasons


def _why(version: Version, reasons: dict[str, str], path: str) -> str:
    if path in reasons:
        return reasons[path]
    if version.source == "snapshot":
        return "removed outside dream (the store was found without it)"
    if version.source == "rollback":
        return version.note or "rollback"
    return version.note or version.source


def distinct_lines(tree: dict[str, bytes]) -> dict[str, str]:
    """Each distinct text line of the memories -> the first file holding it; frontmatter left out."""
    found: dict[str, str] = {}
    for rel in sorted(tree):
        lines = tree[rel].decode("utf-8", errors="replace").splitlines()
        end = frontmatter_end(lines)  # where it ends, not what it says: no YAML load per file
        for line in lines[end + 1 if end is not None else 0:]:
            if line.strip():
                found.setdefault(line.strip(), rel)
    return found


SURVIVAL_KINDS = {"forgotten": "removed by request", "merged": "merged", "archived": "archived"}


def survival(versions: Versions, live: dict[str, bytes]) -> dict | None:
    """The share of version 1's lines still in the live store, and where the others went."""
    numbers = versions.numbers()
    if not numbers:
        return None
    first = distinct_lines(versions.tree(numbers[0]))
    now = distinct_lines(live)
    gone = {line for line in first if line not in now}
    counts = {kind: 0 for kind in (*SURVIVAL_KINDS.values(), "other")}
    proposals = Proposals(versions.layout)
    for older, newer in zip(numbers, numbers[1:]):
        if not gone:
            break
        before, after = distinct_lines(versions.tree(older)), distinct_lines(versions.tree(newer))
        reasons = _reasons(proposals, versions.get(newer))
        for line in [line for line in gone if line in before and line not in after]:
            action = reasons.get(_about(before[line], line), "").split(":", 1)[0]
            counts[SURVIVAL_KINDS.get(action, "other")] += 1
            gone.discard(line)
    counts["other"] += len(gone)  # left between the last version and the live store
    kept = len(first) - sum(counts.values())
    return {"since_version": numbers[0], "lines": len(first), "kept": kept,
            "share": round(kept / len(first), 4) if first else 1.0, **counts}


def _about(holder: str, line: str) -> str:
    """The memory a line belongs to: its file, or for an index line the file it points at."""
    if holder != INDEX_NAME:
        return holder
    entry = parse_index_line(line)
    return (resolve_link(INDEX_NAME, entry.target) if entry.kind == "link" else None) or holder


def survival_line(found: dict | None) -> str:
    if not found:
        return "no versions yet"
    gone = ", ".join(f"{found[k]} {k}" for k in (*SURVIVAL_KINDS.values(), "other"))
    return f"{found['share']:.0%} of the {found['lines']} lines of version {found['since_version']} still here ({gone})"
