"""Scores per category and overall, as rows for a table and as JSON.

Precision is scored apart from recall: a case's *wrong changes* (a memory
created, rewritten or removed when it should not have been) are counted
apart from its *misses* (a change it asks for was not made), and so are
the memory files the case's dream changed, so that a category that must
change nothing (chatter) shows 0.

Each case ends one of four ways (`Ending`): passed; wrong (any wrong
change); *noted* (missed, but a "needs a person" item quotes what a user
said, so the request reached someone; in a housekeeping case, with no
user line, one names every file it expected changed); or *silent* (missed, and nobody was
told). Chatter cases also count their user entries and how many of them
were put before a person: noise a person has to read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from dream.eval.checks import Wrong


class Ending(str, Enum):
    """How a case ended, one of four, counted apart."""

    PASSED = "passed"
    WRONG = "wrong"
    NOTED = "noted"  # missed, but put before a person, quoting the user
    SILENT = "silent"  # missed, and nobody told


@dataclass
class CaseResult:
    category: str
    id: str
    why: str
    failures: list[str]
    seconds: float = 0.0
    changed: list[str] = field(default_factory=list)  # memory files the dream changed
    wrong: list[str] = field(default_factory=list)  # the failures that are wrong changes
    known_miss: str = ""  # why the engine misses this case by design (the case file says)
    quoted: list[bool] = field(default_factory=list)  # per user entry: a note for a person quotes it
    chatter: bool = False  # the case's user entries ask for nothing (dream.eval.cases.Case.chatter)
    named: bool = False  # no user entry, but a note for a person names the files it expected changed
    errors: list[str] = field(default_factory=list)  # steps that could not run: the case measured nothing
    actions: list[str] = field(default_factory=list)  # what the dream did, as "kind action" (no words of the case)

    @classmethod
    def of(cls, category: str, id: str, why: str, failures: list[str], seconds: float,
           changed: list[str], known_miss: str = "", quoted: list[bool] | None = None,
           chatter: bool = False, named: bool = False, errors: list[str] | None = None,
           actions: list[str] | None = None) -> CaseResult:
        wrong = [str(f) for f in failures if isinstance(f, Wrong)]
        return cls(category, id, why, [str(f) for f in failures], seconds, changed, wrong, known_miss,
                   list(quoted or []), chatter, named, list(errors or []), sorted(set(actions or [])))

    def wrong_shape(self) -> str:
        """Which check a wrong change failed and what the dream did, with no word of the case:
        "unchanged <- housekeeping dated". A blind set may show this to its engine's author."""
        checks = sorted({w.split(":", 1)[0] for w in self.wrong})
        return f"{', '.join(checks)} <- {', '.join(self.actions) or 'no change'}"

    @property
    def ending(self) -> Ending:
        if self.wrong:
            return Ending.WRONG
        if self.passed:
            return Ending.PASSED
        return Ending.NOTED if any(self.quoted) or self.named else Ending.SILENT

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def misses(self) -> list[str]:
        return [f for f in self.failures if f not in self.wrong]

    @property
    def excused(self) -> bool:
        """Failed only by misses its case file names as known: counted, but not a regression."""
        return bool(self.known_miss) and not self.wrong


@dataclass
class Scorecard:
    engine: str
    results: list[CaseResult]

    HEADERS = ["category", "passed", "score", "wrong changes", "silent", "noted", "misses", "files changed",
               "chatter noted"]

    def categories(self) -> dict[str, list[CaseResult]]:
        found: dict[str, list[CaseResult]] = {}
        for result in self.results:
            found.setdefault(result.category, []).append(result)
        return found

    @staticmethod
    def _score(results: list[CaseResult]) -> dict:
        passed = sum(r.passed for r in results)
        percent = _percent(passed, len(results))
        chatter = [r for r in results if r.chatter]
        return {"passed": passed, "total": len(results), "percent": percent,
                "wrong_changes": sum(len(r.wrong) for r in results),
                "cases_with_wrong_changes": sum(bool(r.wrong) for r in results),
                "silent": sum(r.ending is Ending.SILENT for r in results),
                "noted": sum(r.ending is Ending.NOTED for r in results),
                "misses": sum(len(r.misses) for r in results),
                "files_changed": sum(len(r.changed) for r in results),
                "wrong_shapes": dict(Counter(r.wrong_shape() for r in results if r.wrong).most_common()),
                "chatter_cases": len(chatter), "chatter_files_changed": sum(len(r.changed) for r in chatter),
                "chatter_lines": sum(len(r.quoted) for r in chatter),
                "chatter_lines_noted": sum(sum(r.quoted) for r in chatter),
                "chatter_noted_percent": _percent(sum(sum(r.quoted) for r in chatter),
                                                  sum(len(r.quoted) for r in chatter))}

    def rows(self) -> list[list[str]]:
        """One row per category, as HEADERS; the last row is the overall score."""
        rows = [self._row(category, results, ".0f") for category, results in self.categories().items()]
        return rows + [self._row("overall", self.results, ".1f")]

    def _row(self, name: str, results: list[CaseResult], percent: str) -> list[str]:
        s = self._score(results)
        noise = (f"{s['chatter_lines_noted']}/{s['chatter_lines']} ({s['chatter_noted_percent']:{percent}}%)"
                 if s["chatter_lines"] else "-")
        return [name, f"{s['passed']}/{s['total']}", f"{s['percent']:{percent}}%", str(s["wrong_changes"]),
                str(s["silent"]), str(s["noted"]), str(s["misses"]), str(s["files_changed"]), noise]

    def wrong_shapes(self) -> list[tuple[str, str, int]]:
        """Per category, each shape of its wrong changes (`CaseResult.wrong_shape`) and how many cases."""
        return [(category, shape, count) for category, results in self.categories().items()
                for shape, count in self._score(results)["wrong_shapes"].items()]

    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def regressions(self) -> list[CaseResult]:
        """What fails a CI run: every wrong change, and every miss not known by design."""
        return [r for r in self.failed() if not r.excused]

    def scores_json(self) -> dict:
        """Only counts, per category and overall: what a blind set may show its engine's author."""
        return {"engine": self.engine, "overall": self._score(self.results),
                "categories": {c: self._score(rs) for c, rs in self.categories().items()}}

    def to_json(self) -> dict:
        return {
            **self.scores_json(),
            "cases": [{"category": r.category, "id": r.id, "passed": r.passed, "failures": r.failures,
                       "ending": r.ending.value, "wrong_changes": r.wrong, "misses": r.misses,
                       "files_changed": r.changed, "chatter": r.chatter,
                       "entries_noted": sum(r.quoted), "entries": len(r.quoted),
                       "known_miss": r.known_miss or None, "seconds": r.seconds} for r in self.results],
        }

    def markdown(self) -> str:
        lines = [f"| category ({self.engine}) | " + " | ".join(self.HEADERS[1:]) + " |",
                 "| " + " | ".join("---" for _ in self.HEADERS) + " |"]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows()]
        return "\n".join(lines)


def _percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0
