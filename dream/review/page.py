"""One self-contained HTML page to review a proposal (or any two versions).

The page is rendered from ``templates/review.html.j2`` with Jinja2. It
fetches nothing: the CSS is inline, there are no fonts, scripts or images.
It shows the counts (`dream.review.summary.Counts`, the same numbers as the
report and `dream review`; tokens; engine), then what needs a decision
first: what needs a person, the lines dropped and those moved out of the
index (shown larger the more of the memory they are), then the rest: the
changes from requests, the files to read, the reads (folded when no
transcript shows a read), the retention table, housekeeping, and a
side-by-side diff per file. Each file's diff is a collapsible ``<details>`` listed in a
file index, so a 200-file store stays readable.

    dream diff --store STORE [PROPOSAL] --html page.html
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

import jinja2

from dream.config import load_settings
from dream.errors import BadInput
from dream.notes import OpenNotes, open_notes
from dream.notes.suggestion import suggestion_of
from dream.review import retention as retained
from dream.review.summary import Counts, change_detail
from dream.store.layout import Layout
from dream.store.tree import Tree, atomic_write, changed_paths
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposal, Proposals

CONTEXT_LINES = 3
# Why a file's diff starts open, strongest first; a file with none (housekeeping) starts folded.
NEEDS_PERSON, REQUEST, REMOVAL, MOVED_OUT = "needs a person", "request", "removes lines", "moves lines out of the index"
# Lines dropped or moved out of the index are shown larger the more of the memory they are: "some" from the
# first line, "many" from this share of the lines the proposal touches or this many lines.
MANY_SHARE, MANY_LINES = 0.2, 50


@dataclass
class Row:
    kind: str  # equal | delete | insert | replace | gap
    left_no: int | None = None
    left: str = ""
    right_no: int | None = None
    right: str = ""


@dataclass
class FileDiff:
    path: str
    status: str  # added | deleted | modified
    added: int
    removed: int
    rows: list[Row] = field(default_factory=list)
    anchor: str = ""
    decide: str = ""  # why a person must read it (NEEDS_PERSON, REQUEST, REMOVAL); "" for housekeeping


def _text_lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", errors="replace").splitlines()


def side_by_side(path: str, old: bytes | None, new: bytes | None) -> FileDiff:
    """Rows pairing old and new lines, with a few lines of context around each change."""
    a, b = _text_lines(old), _text_lines(new)
    status = "added" if old is None else "deleted" if new is None else "modified"
    diff = FileDiff(path, status, 0, 0)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for n, group in enumerate(matcher.get_grouped_opcodes(CONTEXT_LINES)):
        if n:
            diff.rows.append(Row("gap"))
        for op, i1, i2, j1, j2 in group:
            for i, j in zip_longest(range(i1, i2), range(j1, j2)):
                left = (i + 1, a[i]) if i is not None else (None, "")
                right = (j + 1, b[j]) if j is not None else (None, "")
                kind = op if op != "replace" else ("replace" if i is not None and j is not None
                                                   else "delete" if j is None else "insert")
                diff.rows.append(Row(kind, left[0], left[1], right[0], right[1]))
                diff.removed += op != "equal" and i is not None
                diff.added += op != "equal" and j is not None
    return diff


def file_diffs(old: Tree, new: Tree) -> list[FileDiff]:
    diffs = []
    for n, path in enumerate(changed_paths(old, new)):
        diff = side_by_side(path, old.get(path), new.get(path))
        diff.anchor = f"f{n}"
        diffs.append(diff)
    return diffs


def reasons_to_read(report: dict, retention: dict, diffs: list[FileDiff]) -> dict[str, str]:
    """The files a person must read, and why: named by a question, changed by a request, or losing lines.

    Changes whose engine names no kind count as requests: nothing says they are routine.
    """
    reasons: dict[str, str] = {}
    paths = [d.path for d in diffs]
    for question in report.get("needs_person") or []:
        for path in paths:
            if path in question:
                reasons.setdefault(path, NEEDS_PERSON)
    for change in [*(report.get("changes") or []), *(report.get("finish") or [])]:
        if change.get("kind") != "housekeeping" and change.get("path") in paths:
            reasons.setdefault(change["path"], REQUEST)
    for item in retention["items"]:
        if item["status"] == retained.DROPPED:
            reasons.setdefault(item["path"], REMOVAL)
        elif item["status"] == retained.ARCHIVED:  # MEMORY.md losing index lines is never folded away
            reasons.setdefault(item["path"], MOVED_OUT)
    for diff in diffs:
        if diff.status == "deleted":
            reasons.setdefault(diff.path, REMOVAL)
    return reasons


def size_class(lines: int, retention: dict) -> str:
    """How loudly the page shows `lines` dropped or moved out of the index: "", "some" or "many"."""
    if not lines:
        return ""
    counted = sum(retention.get(status, 0) for status in retained.STATUSES)
    return "many" if lines >= MANY_LINES or lines >= MANY_SHARE * max(counted, 1) else "some"


def reads_seen(report: dict) -> int:
    """How many memories the transcripts show read at least once (the reads table is folded when none)."""
    return sum(1 for seen in (report.get("memory_reads") or {}).values() if seen.get("reads"))


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )


def render(*, title: str, old: Tree, new: Tree, report: dict | None = None,
           retention: dict | None = None, subtitle: str = "", back: str | None = None,
           notes: OpenNotes | None = None, store: str = "") -> str:
    """The page for `old` → `new`; `report` (a proposal's) adds engine, counts and tokens.

    `back` links to the overview page the reviewer came from (`dream.review.overview`);
    `notes` are the store's open notes for a person, each with the commands that answer it.
    """
    diffs = file_diffs(old, new)
    report = report or {"files_changed": [d.path for d in diffs]}
    retention = retention or retained.summarize(old, new)
    reasons = reasons_to_read(report, retention, diffs)
    for diff in diffs:
        diff.decide = reasons.get(diff.path, "")
    changes = [*(report.get("changes") or []), *(report.get("finish") or [])]
    return environment().get_template("review.html.j2").render(
        title=title, subtitle=subtitle, report=report, retention=retention, back=back,
        counts=Counts.of(report, retention), detail=lambda change: change_detail(change, retention),
        usage=report.get("usage"),
        requests=[c for c in changes if c.get("kind") != "housekeeping"],
        housekeeping=[c for c in changes if c.get("kind") == "housekeeping"],
        files=diffs, to_read=[d for d in diffs if d.decide], routine=[d for d in diffs if not d.decide],
        lines_added=sum(d.added for d in diffs), lines_removed=sum(d.removed for d in diffs),
        dropped_size=size_class(retention[retained.DROPPED], retention),
        archived_size=size_class(retention[retained.ARCHIVED], retention), reads_seen=reads_seen(report),
        notes=notes, answers=note_answers(notes, store), notes_store=shlex.quote(store),
    )


def note_answers(notes: OpenNotes | None, store: str) -> dict[int, dict[str, str]]:
    """For each shown note, what it suggests and the commands that take or dismiss it."""
    where = shlex.quote(store)
    answers: dict[int, dict[str, str]] = {}
    for note in notes.shown if notes else []:
        suggestion = suggestion_of(note.text)
        answers[note.id] = {"suggests": str(suggestion) if suggestion else "",
                            "take": f"dream notes take {note.id} --store {where}" if suggestion else "",
                            "dismiss": f"dream notes dismiss {note.id} --store {where}"}
    return answers


def proposal_page(layout: Layout, proposal: Proposal, back: str | None = None) -> str:
    proposals = Proposals(layout)
    base = Versions(layout).tree(proposal.base_version)
    new = proposals.tree(proposal)
    report = proposals.report(proposal)
    return render(
        title=f"Dream proposal {proposal.id}", old=base, new=new, report=report,
        retention=retained.of_proposal(proposals, proposal, report),
        subtitle=f"{layout.root} · base version {proposal.base_version} · {proposal.status.replace('_', ' ')}",
        back=back, notes=open_notes(layout, load_settings(layout.root).notes_fold_days), store=str(layout.root),
    )


def versions_page(layout: Layout, old_number: int, new_number: int) -> str:
    versions = Versions(layout)
    return render(title=f"Versions {old_number} → {new_number}", old=versions.tree(old_number),
                  new=versions.tree(new_number), subtitle=str(layout.root))


def check_page_path(path: Path) -> None:
    if path.is_dir():
        raise BadInput(f"{path}: --html needs a file name, this is a folder")
    if not path.parent.is_dir():
        raise BadInput(f"{path}: --html folder {path.parent} does not exist")


def write_page(path: Path, html: str) -> Path:
    """Write the page to `path`, a file name: a folder or a missing parent is the user's mistake."""
    check_page_path(path)
    try:
        atomic_write(path, html.encode("utf-8"))
    except OSError as exc:
        raise BadInput(f"{path}: cannot write the review page: {exc.strerror or exc}") from None
    return path
