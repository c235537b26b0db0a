"""The morning's overview: one HTML page over every pending proposal of many stores.

After a nightly fleet run a reviewer wants one place that says which
stores have a proposal waiting and how much each one changes: merged,
archived, rewritten and dropped lines, changes and files changed: the same
numbers as each proposal's page and report (`dream.review.summary.Counts`). `write_overview` writes
that page (``templates/overview.html.j2``) and, beside it in
``<name>-pages/``, the review page of each pending proposal
(`dream.review.page`), linked from its row. Like the review pages it is
self-contained: no fonts, scripts, images or fetches; the links are
relative, so the folder can be copied or served as it is.

`dream status --all --html FILE` calls it on the stores `--all` lists. The
history figures beside each proposal (runs, acceptance rate, how long it has
waited) and the fleet's totals come from `dream report`'s query
(`dream.history_report`), handed to the template as ``proposal.history`` and
``history_total``.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream.errors import BadInput, DreamError
from dream.notes import OpenNotes
from dream.store.layout import store_slug
from dream.review import page
from dream.review.retention import of_proposal
from dream.review.summary import Counts
from dream.store.layout import Layout
from dream.versions.proposals import Proposal, Proposals

COUNTS = ("dropped", "merged", "archived", "rewritten", "changes", "files")


@dataclass
class Overview:
    html: Path
    pages: Path  # the folder of the per-proposal pages
    proposals: list[dict[str, Any]] = field(default_factory=list)  # one row per pending proposal
    quiet: list[str] = field(default_factory=list)  # stores with nothing pending
    errors: list[dict[str, str]] = field(default_factory=list)  # stores that could not be read

    def to_json(self) -> dict:
        return {"html": str(self.html), "pages": str(self.pages), "proposals": self.proposals,
                "stores_without_pending": self.quiet, "errors": self.errors}


def proposal_counts(layout: Layout, proposal: Proposal) -> dict[str, int]:
    """What a proposal does: the counts of its page (`COUNTS` of `Counts`)."""
    proposals = Proposals(layout)
    report = proposals.report(proposal)
    counts = Counts.of({**report, "files_changed": proposal.changed}, of_proposal(proposals, proposal, report))
    return {key: getattr(counts, key) for key in COUNTS}


def write_overview(html: Path, rows: list[dict[str, Any]], short_names: list[str],
                   root: str | None = None) -> Overview:
    """The overview of `rows` (`dream.pipeline.status.store_row`s) at `html`, each pending proposal's page beside it.

    `short_names` are the stores as the page shows them (the command line's
    shortened paths, relative to `root`); the full path is each row's tooltip.
    """
    page.check_page_path(html)  # before any page is written beside it
    pages = html.with_name(f"{html.stem}-pages")
    result = Overview(html, pages)
    for row, name in zip(rows, short_names):
        if "error" in row:
            result.errors.append({"store": row["store"], "name": name, "error": row["error"]})
        elif not row["pending"]:
            result.quiet.append(name)
        else:
            result.proposals += _store_proposals(row, name, pages, html.name)
    totals = {key: sum(p["counts"][key] for p in result.proposals) for key in COUNTS}
    history = fleet_history([Path(row["store"]) for row in rows if "error" not in row])
    for proposal in result.proposals:  # runs, acceptance and waiting time: `dream report`'s own rows
        proposal["history"] = history["stores"].get(proposal["store"])
    notes = [store_notes(row, name) for row, name in zip(rows, short_names) if row.get("notes", {}).get("open")]
    page.write_page(html, page.environment().get_template("overview.html.j2").render(notes=notes,
        generated=time.strftime("%Y-%m-%d %H:%M %Z"), proposals=result.proposals, quiet=result.quiet,
        errors=result.errors, totals=totals, stores=len(rows), root=root,
        stores_pending=len({p["store"] for p in result.proposals}), history_total=history["total"],
    ))
    return result


def store_notes(row: dict[str, Any], name: str) -> dict[str, Any]:
    """A store's open notes for a person (its status row's), with the commands that answer each."""
    found = row["notes"]
    shown = OpenNotes.from_json(found)
    return {"store": row["store"], "name": name, "count": found["open"], "notes": shown,
            "answers": page.note_answers(shown, row["store"]), "where": shlex.quote(row["store"])}


def fleet_history(stores: list[Path]) -> dict[str, Any]:
    """`dream report`'s query over these stores: ``{"stores": {store: row}, "total": {…}}``."""
    from dream import history_report  # start-up: DuckDB, only when a page is written

    found = history_report.report(stores)
    return {"stores": {row["store"]: row for row in found["stores"]}, "total": found["total"]}


def _store_proposals(row: dict[str, Any], name: str, pages: Path, overview_name: str) -> list[dict[str, Any]]:
    layout = Layout.open(row["store"])
    found = []
    for proposal_id in row["pending"]:
        try:
            proposal = Proposals(layout).get(proposal_id)
            target = pages / f"{store_slug(layout.root)}-{proposal.id}.html"
            _make_folder(pages)
            page.write_page(target, page.proposal_page(layout, proposal, back=f"../{overview_name}"))
            counts = proposal_counts(layout, proposal)
        except DreamError as exc:  # one damaged proposal must not cost the others their rows
            found.append({"store": row["store"], "name": name, "id": proposal_id, "error": str(exc),
                          "counts": dict.fromkeys(COUNTS, 0), "href": None})
            continue
        found.append({"store": row["store"], "name": name, "id": proposal.id, "created_at": proposal.created_at,
                      "created": time.strftime("%Y-%m-%d %H:%M", time.localtime(proposal.created_at)),
                      "engine": proposal.engine, "base_version": proposal.base_version, "counts": counts,
                      "href": f"{pages.name}/{target.name}", "error": None})
    return found


def _make_folder(pages: Path) -> None:
    try:
        pages.mkdir(exist_ok=True)
    except OSError as exc:
        raise BadInput(f"{pages}: cannot make the folder of review pages: {exc.strerror or exc}") from None
