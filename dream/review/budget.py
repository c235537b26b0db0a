"""The removal budget: how much one proposal may take out of the store before a person must look.

A proposal that removes more than `removal_budget_files` of the memory files,
or more than `removal_budget_lines` of the distinct lines (a line counts as
removed when no file of the proposed store holds it any more; frontmatter is
not counted), is over budget: its
report says so at the top, and the `auto_accept` policy refuses it.
"""

from __future__ import annotations

from dream.config import Settings
from dream.store.tree import INDEX_NAME, Tree
from dream.versions.removed import distinct_lines


def removal_budget(base: Tree, proposed: Tree, settings: Settings) -> dict:
    """The share of files and lines the proposal removes, beside the budget, and whether it is over."""
    files = [rel for rel in base if rel != INDEX_NAME]
    gone_files = sorted(rel for rel in files if rel not in proposed)
    before, after = set(distinct_lines(base)), set(distinct_lines(proposed))
    gone_lines = len(before - after)
    file_share = len(gone_files) / len(files) if files else 0.0
    line_share = gone_lines / len(before) if before else 0.0
    over = file_share > settings.removal_budget_files or line_share > settings.removal_budget_lines
    return {"files_removed": len(gone_files), "files": len(files), "file_share": round(file_share, 4),
            "lines_removed": gone_lines, "lines": len(before), "line_share": round(line_share, 4),
            "budget_files": settings.removal_budget_files, "budget_lines": settings.removal_budget_lines,
            "over": over, "removed_files": gone_files}


def headline(budget: dict) -> str:
    """The warning at the top of the report: '' when within budget."""
    if not budget or not budget.get("over"):
        return ""
    return (f"**Over the removal budget**: removes {budget['files_removed']} of {budget['files']} memory files "
            f"({budget['file_share']:.0%}, budget {budget['budget_files']:.0%}) and {budget['lines_removed']} of "
            f"{budget['lines']} lines ({budget['line_share']:.0%}, budget {budget['budget_lines']:.0%}); "
            "auto-accept refuses it, a person decides")
