"""Scores per category and overall, as rows for a table and as JSON."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CaseResult:
    category: str
    id: str
    why: str
    failures: list[str]
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class Scorecard:
    engine: str
    results: list[CaseResult]

    def categories(self) -> dict[str, list[CaseResult]]:
        found: dict[str, list[CaseResult]] = {}
        for result in self.results:
            found.setdefault(result.category, []).append(result)
        return found

    @staticmethod
    def _score(results: list[CaseResult]) -> dict:
        passed = sum(r.passed for r in results)
        percent = round(100 * passed / len(results), 1) if results else 0.0
        return {"passed": passed, "total": len(results), "percent": percent}

    def rows(self) -> list[list[str]]:
        """category, passed/total, percent; the last row is the overall score."""
        rows = []
        for category, results in self.categories().items():
            s = self._score(results)
            rows.append([category, f"{s['passed']}/{s['total']}", f"{s['percent']:.0f}%"])
        s = self._score(self.results)
        rows.append(["overall", f"{s['passed']}/{s['total']}", f"{s['percent']:.1f}%"])
        return rows

    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    def to_json(self) -> dict:
        return {
            "engine": self.engine,
            "overall": self._score(self.results),
            "categories": {c: self._score(rs) for c, rs in self.categories().items()},
            "cases": [{"category": r.category, "id": r.id, "passed": r.passed, "failures": r.failures,
                       "seconds": r.seconds} for r in self.results],
        }

    def markdown(self) -> str:
        lines = [f"| category ({self.engine}) | passed | score |", "| --- | --- | --- |"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in self.rows()]
        return "\n".join(lines)
