"""`dream fsck`: every object, pack, version and proposal of a store read back and checked.

Every object is read the way any command reads it (`Blobs.get`: its bytes
must hash to its name, a delta's base must be whole), so fsck finds exactly
what would make a command fail. Each damaged object is named with the
versions and proposals that need it; everything else is said to be whole,
because a damaged object never blocks the versions that do not need it
(`dream show`, `rollback` and `restore` of those still work). Nothing is
written: fsck only reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dream.errors import BadInput
from dream.store.layout import Layout
from dream.versions import packfiles
from dream.versions.manifests import Blobs, Versions
from dream.versions.proposals import Proposals


@dataclass
class Damage:
    what: str  # the damaged file, as an error would name it
    problem: str
    needed_by: list[str] = field(default_factory=list)  # "version 3 (topic.md)", "proposal p-… (MEMORY.md)"

    def as_json(self) -> dict:
        return {"what": self.what, "problem": self.problem, "needed_by": self.needed_by}


@dataclass
class Report:
    objects: int = 0
    packs: int = 0
    damaged: list[Damage] = field(default_factory=list)
    whole: dict[str, list[str]] = field(default_factory=lambda: {"versions": [], "proposals": []})
    hurt: dict[str, dict[str, list[str]]] = field(default_factory=lambda: {"versions": {}, "proposals": {}})

    @property
    def ok(self) -> bool:
        return not self.damaged

    def as_json(self) -> dict:
        return {"ok": self.ok, "objects": self.objects, "packs": self.packs,
                "damaged": [d.as_json() for d in self.damaged], "whole": self.whole, "unreadable_files": self.hurt}


def check(layout: Layout) -> Report:
    """Read back every pack, object, version and proposal of the store; what is damaged and what is whole."""
    blobs = Blobs(layout)
    report = Report()
    blobs.packed(reload=True)
    report.packs = len(packfiles.pack_paths(layout.packs))
    report.damaged += [Damage(str(path), why) for path, why in blobs.damaged_packs.items()]
    bad = _bad_objects(blobs, report)
    versions, proposals = Versions(layout, blobs), Proposals(layout)
    proposals.blobs = blobs
    _check_records(report, "versions", [str(n) for n in versions.numbers()],
                   lambda key: versions.get(int(key)).files, bad, blobs)
    _check_records(report, "proposals", proposals.ids(), lambda key: proposals.get(key).files, bad, blobs)
    return report


def _bad_objects(blobs: Blobs, report: Report) -> dict[str, Damage]:
    """sha256 -> what is wrong with it, for every stored object that does not read back whole."""
    bad: dict[str, Damage] = {}
    digests = sorted(blobs.digests())
    report.objects = len(digests)
    for digest in digests:
        _read(blobs, digest, bad, report)
    return bad


def _read(blobs: Blobs, digest: str, bad: dict[str, Damage], report: Report) -> bool:
    """Whether the object reads back whole; if not, its damage is recorded (once)."""
    if digest in bad:
        return False
    try:
        blobs.get(digest)
        return True
    except BadInput as exc:
        what, _, problem = str(exc).partition(": ")
        bad[digest] = Damage(what, problem)
        report.damaged.append(bad[digest])
        return False


def _check_records(report: Report, kind: str, keys: list[str], files_of: Callable[[str], dict[str, str]],
                   bad: dict[str, Damage], blobs: Blobs) -> None:
    """Sort each version (or proposal) into whole or hurt, naming it on the damage it needs."""
    label = kind[:-1]
    for key in keys:
        try:
            files = files_of(key)
        except BadInput as exc:  # its record or its tree of files cannot be read: none of its files can
            what, _, problem = str(exc).partition(": ")
            report.damaged.append(Damage(what, problem, [f"{label} {key}"]))
            report.hurt[kind][key] = ["(every file: its file list cannot be read)"]
            continue
        lost = sorted(rel for rel, digest in files.items() if not _read(blobs, digest, bad, report))
        if not lost:
            report.whole[kind].append(key)
            continue
        report.hurt[kind][key] = lost
        for rel in lost:
            bad[files[rel]].needed_by.append(f"{label} {key} ({rel})")


def ranges(numbers: list[int]) -> str:
    """1, 3-5, 8: version numbers as a person reads them."""
    parts: list[str] = []
    start = prev = None
    for n in [*sorted(numbers), None]:
        if n is not None and prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return ", ".join(parts)
