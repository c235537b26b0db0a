"""What a proposal does, told the same way everywhere: its counts and its changes.

The report, `dream diff` (and its `--json`), the review page, `dream review`
and the overview all show `Counts`, made from the proposal's report and its
retention summary (`dream.review.retention.of_proposal`). Line counts come
from the retention summary alone: a line is *kept* when unchanged,
*rewritten* when changed in place, *merged* or *archived* when it moved to
another file, *dropped* when it is nowhere. The engine's changes are
counted apart, as changes (by kind, once the engine names one), never
mixed into the line counts.

A change that dates a file is shown by the words the file now holds
(`change_detail`): an engine's own note may use a shorthand ("2026-W42")
that is not what it wrote ("in the week of 2026-10-12").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from dream.review.retention import ARCHIVED, DROPPED, KEPT, MERGED, REWRITTEN, now_reads

# Changes whose detail is told from the file's new words rather than the engine's note.
TOLD_BY_THE_FILE = ("dated",)

# What each line count means, in the words the report, the page and `dream review` use.
LINE_WORDS = {
    DROPPED: "dropped",
    MERGED: "merged into another file",
    ARCHIVED: "moved out of the index (archived)",
    REWRITTEN: "rewritten in place",
    KEPT: "kept unchanged",
}


@dataclass(frozen=True)
class Counts:
    dropped: int  # memory lines the proposal has nowhere
    merged: int  # lines now in another file
    archived: int  # index lines moved to the archive file
    rewritten: int  # lines changed in place
    kept: int  # lines unchanged, only moved within their file
    changes: int  # the engine's changes (its own and dream's finishing ones)
    files: int  # files changed
    needs_person: int  # questions the engine left for a person
    kinds: dict[str, int] = field(default_factory=dict)  # changes by kind (housekeeping, request), when named

    @classmethod
    def of(cls, report: dict, retention: dict) -> Counts:
        changes = [*(report.get("changes") or []), *(report.get("finish") or [])]
        kinds = Counter(c["kind"] for c in changes if c.get("kind"))
        return cls(
            dropped=retention[DROPPED], merged=retention[MERGED], archived=retention[ARCHIVED],
            rewritten=retention[REWRITTEN], kept=retention[KEPT], changes=len(changes),
            files=len(report.get("files_changed") or []), needs_person=len(report.get("needs_person") or []),
            kinds=dict(sorted(kinds.items())),
        )

    def to_json(self) -> dict:
        return asdict(self)

    def lines_sentence(self) -> str:
        """`5 dropped, 5 merged into another file, … 0 kept unchanged` (lines of memory)."""
        return ", ".join(f"{getattr(self, status)} {words}" for status, words in LINE_WORDS.items())

    def changes_sentence(self) -> str:
        """`21 changes (4 housekeeping, 17 request) in 19 files; 2 need a person`."""
        kinds = f" ({', '.join(f'{n} {kind}' for kind, n in self.kinds.items())})" if self.kinds else ""
        person = f"; {self.needs_person} need a person" if self.needs_person else ""
        return f"{self.changes} change(s){kinds} in {self.files} file(s){person}"

    def sentence(self) -> str:
        return f"lines: {self.lines_sentence()}; {self.changes_sentence()}"


def change_detail(change: dict, retention: dict) -> str:
    """A change's detail: for a dated file, each rewritten line's edit as the file now reads."""
    if change.get("action") in TOLD_BY_THE_FILE:
        rewrites = [i for i in retention["items"] if i["status"] == REWRITTEN and i["path"] == change.get("path")]
        if rewrites:
            return "; ".join(now_reads(i) for i in rewrites)
    return change.get("detail") or ""
