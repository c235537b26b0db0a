"""Notes for a person that outlive the night that wrote them.

Every run's "needs a person" items (the engine's questions and lint's
findings) go into the store's notes ledger, ``.dream/notes.json``, written
atomically like the rest of dream's state. A note stays open until a person
answers it: *takes* its suggested change (`dream.review.answer_note`) or
*dismisses* it. A noop night's notes are kept like any other, so a request
the engine could not carry out is never lost with that run's JSON.

The same note written again (the same sentence of the same session, read
again on a later night) is one note; the same request said again in a later
session is a new one, since its session is part of what the note says. A
dismissed or taken note never opens again. Notes quote what people said, so
their text is redacted (`dream.redaction`) before it is kept.

Open notes are ranked: requests first, then dates, then notes about the
memories themselves, then lint findings, so thirty lint findings never bury
one request. Open notes older than ``notes_fold_days`` fold into a count;
`dream notes` lists them all. None is deleted unread.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Set as AbstractSet
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from dream.errors import BadInput, DreamError, Refused
from dream.store.layout import Layout
from dream.store.records import DamagedRecord, load_json_record, record_from_dict
from dream.store.tree import atomic_write

FORMAT = 1  # the ledger's format; a newer dream that changes its shape says so with a higher number
DAY = 86_400.0


class NoteKind(StrEnum):
    """What a note is about, in the order a person should read them."""

    REQUEST = "request"  # something a user asked for that was not carried out
    DATE = "date"  # a relative date that names no one day
    MEMORY = "memory"  # the memories themselves: two disagree, a pointer is broken
    LINT = "lint"  # a claim the project refutes


RANK = {kind: n for n, kind in enumerate(NoteKind)}


class NoteStatus(StrEnum):
    OPEN = "open"
    TAKEN = "taken"  # its suggested change went into a proposal (`proposal_id`) that waits for review
    APPLIED = "applied"  # that proposal was accepted: the change is in the store
    DISMISSED = "dismissed"  # a person said no: it never opens again


@dataclass
class Note:
    id: int  # short, for `dream notes take 3`
    key: str  # what makes two notes the same (`note_key`)
    kind: NoteKind
    text: str  # redacted
    first_seen: float  # epoch seconds of the run that first wrote it
    last_seen: float
    run_id: str  # the run that first wrote it
    status: NoteStatus = NoteStatus.OPEN
    session: str | None = None  # where the user said it, when the note quotes a user
    date: str | None = None
    line: int | None = None
    answered_at: float | None = None
    proposal_id: str | None = None  # taken: the proposal holding its change

    def to_json(self) -> dict:
        return {**asdict(self), "kind": str(self.kind), "status": str(self.status)}

    @classmethod
    def from_json(cls, raw: dict) -> Note:
        return record_from_dict(raw, cls, "note")


@dataclass
class NotesFile:
    format: int
    notes: list[Note] = field(default_factory=list)


# "(session s1, 2026-12-01, line 4)" or "(session s1, Monday 2026-12-01)": where a user said it
_WHERE = re.compile(r"\(session (?P<session>[^,()\s]+), (?:\w+ )?(?P<date>\d{4}-\d{2}-\d{2})(?:, line (?P<line>\d+))?")
_DATE_NOTE = re.compile(r"write the date it means|relative date", re.IGNORECASE)
# lint findings, and near-duplicate pairs left apart, rank last
_LINT_NOTE = re.compile(r"^stale claim:|.* look alike \(similarity \d+%\): merge\?$")
# Parts of a note that change from night to night while it says the same: a commit, a similarity score.
_VOLATILE = re.compile(r"\b[0-9a-f]{7,40}\b|\b\d+(?:\.\d+)?%")


def kind_of(text: str) -> NoteKind:
    if _LINT_NOTE.match(text):
        return NoteKind.LINT
    if _DATE_NOTE.search(text):
        return NoteKind.DATE
    if _WHERE.search(text):
        return NoteKind.REQUEST
    return NoteKind.MEMORY


def note_key(text: str) -> str:
    """The same note, written again on a later night, has the same key; another session's has another.

    Where the user said it is kept whole (a session id may be hex, like a commit); the rest is masked.
    """
    where = _WHERE.search(text)
    said = "|".join(where.groups(default="")) if where else ""
    return hashlib.sha256(f"{said}|{_VOLATILE.sub('#', text)}".encode()).hexdigest()[:24]


def path(layout: Layout):
    return layout.dream / "notes.json"


def load(layout: Layout) -> list[Note]:
    """Every note the store has had; none when it never had one. A damaged ledger is an error, never a fresh start."""
    try:
        found = load_json_record(path(layout), NotesFile, "notes ledger")
    except FileNotFoundError:
        return []
    except DamagedRecord as exc:
        raise DamagedRecord(f"{exc} (it holds what people have yet to answer: repair it, or move it away "
                            f"to start an empty one)") from None
    if found.format > FORMAT:
        raise DamagedRecord(f"{path(layout)}: notes ledger of format {found.format}, written by a newer dream "
                            f"(this one reads format {FORMAT}); upgrade dream")
    return found.notes


def save(layout: Layout, notes: list[Note]) -> None:
    layout.dream.mkdir(parents=True, exist_ok=True)
    body = {"format": FORMAT, "notes": [n.to_json() for n in notes]}
    atomic_write(path(layout), (json.dumps(body, ensure_ascii=False, indent=1) + "\n").encode())


def record(layout: Layout, items: Iterable[str], run_id: str, now: float | None = None,
           carried: dict[int, str] | None = None) -> list[Note]:
    """Add a run's "needs a person" items to the ledger (call with the store's lock held); the open notes, ranked.

    An item already noted is seen again (its `last_seen` moves), whatever
    its status: a dismissed one stays dismissed. `carried` (note -> the
    run's new proposal) are taken notes whose change that proposal holds.
    """
    from dream.redaction.redact import redact  # start-up: the patterns load only when a run records notes

    moment = time.time() if now is None else now
    said = list(items)
    notes = load(layout)
    held = carried or {}
    for note in notes:
        note.proposal_id = held.get(note.id, note.proposal_id)
    settled = settle_taken(layout, notes, skip=held.keys())
    by_key = {n.key: n for n in notes}
    number = max((n.id for n in notes), default=0)
    for item in said:
        text = redact(item)[0]
        key = note_key(text)
        if key in by_key:
            by_key[key].last_seen = moment
            continue
        number += 1
        by_key[key] = _new_note(number, key, text, run_id, moment)
        notes.append(by_key[key])
    if notes and (said or settled or carried):
        save(layout, notes)
    return ranked(notes)


def settle_taken(layout: Layout, notes: list[Note], skip: AbstractSet[int] = frozenset()) -> int:
    """Taken notes whose proposal was accepted are applied; those whose proposal never will be (rejected,
    superseded by a night, rolled back) open again: the person's answer went with that proposal, so they are
    asked again. How many changed."""
    from dream.versions.proposals import ACCEPTED, PENDING, Proposals  # start-up: only a run records notes

    proposals = Proposals(layout)
    changed = 0
    for note in notes:
        if note.status != NoteStatus.TAKEN or note.proposal_id is None or note.id in skip:
            continue
        try:
            status = proposals.get(note.proposal_id).status
        except DreamError:  # removed by gc: decided long ago, and an answered note stays answered
            continue
        if status == ACCEPTED:
            note.status = NoteStatus.APPLIED  # settled: never looked up again
        elif status != PENDING:
            note.status, note.proposal_id, note.answered_at = NoteStatus.OPEN, None, None
        changed += status != PENDING
    return changed


def carried(notes: list[Note], old: str, new: str) -> None:
    """The notes taken into proposal `old` are now held by `new`, which replaced it carrying their changes."""
    for note in notes:
        if note.status == NoteStatus.TAKEN and note.proposal_id == old:
            note.proposal_id = new


def _new_note(number: int, key: str, text: str, run_id: str, moment: float) -> Note:
    where = _WHERE.search(text)
    line = where.group("line") if where else None
    return Note(number, key, kind_of(text), text, moment, moment, run_id,
                session=where.group("session") if where else None, date=where.group("date") if where else None,
                line=int(line) if line else None)


def ranked(notes: Iterable[Note]) -> list[Note]:
    """The open notes, requests first, then dates, memories, lint findings; oldest first within each."""
    return sorted((n for n in notes if n.status == NoteStatus.OPEN), key=lambda n: (RANK[n.kind], n.first_seen, n.id))


@dataclass
class OpenNotes:
    """What a person sees: the recent open notes, ranked, and how many older ones are folded away."""

    shown: list[Note]
    folded: int
    fold_days: float

    def to_json(self) -> dict:
        return {"open": len(self.shown) + self.folded, "shown": [n.to_json() for n in self.shown],
                "folded": self.folded, "fold_days": self.fold_days}

    @classmethod
    def from_json(cls, found: dict) -> OpenNotes:
        """Back from `to_json` (a status row's ``notes``)."""
        return cls([Note.from_json(n) for n in found["shown"]], found["folded"], found["fold_days"])

    def groups(self) -> list[tuple[NoteKind, list[Note]]]:
        return [(kind, [n for n in self.shown if n.kind == kind]) for kind in NoteKind
                if any(n.kind == kind for n in self.shown)]


def open_notes(layout: Layout, fold_days: float, now: float | None = None) -> OpenNotes:
    moment = time.time() if now is None else now
    notes = ranked(load(layout))
    recent = [n for n in notes if moment - n.first_seen <= fold_days * DAY]
    return OpenNotes(recent, len(notes) - len(recent), fold_days)


def find(notes: list[Note], number: int, layout: Layout) -> Note:
    for note in notes:
        if note.id == number:
            return note
    raise BadInput(f"{layout.root}: no note {number} (`dream notes --store {layout.root}` lists them)")


def require_open(note: Note) -> None:
    """A person answers a note once: one already taken or dismissed is refused, saying how it was answered."""
    if note.status != NoteStatus.OPEN:
        raise Refused(f"note {note.id} is already {note.status}"
                      + (f" (proposal {note.proposal_id})" if note.proposal_id else ""))


def answer(note: Note, status: NoteStatus, proposal_id: str | None = None, now: float | None = None) -> None:
    """Close an open note."""
    require_open(note)
    note.status, note.proposal_id = status, proposal_id
    note.answered_at = time.time() if now is None else now
