"""The core commands: run, status, proposals, diff, accept, reject, rollback, history."""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer

from dream import __version__
from dream.cli.app import AllOpt, CommentOpt, JsonOpt, RootOpt, StoreOpt, app
from dream.cli.console import (
    common_root,
    dream_command,
    emit_json,
    err,
    human,
    out,
    print_diff,
    project_names,
    say,
    table,
    when,
    words,
)
from dream.cli.mirror import print_push, push_mirror
from dream.cli.progress import FleetProgress, RunProgress, wanted
from dream.errors import BadInput
from dream.outcomes import Status

if TYPE_CHECKING:
    from dream import history as hist
    from dream.store.layout import Layout


@app.command()
def run(
    store: StoreOpt = Path("."),
    engine: Annotated[Optional[str], typer.Option(help="auto | offline | claude (auto: claude when ANTHROPIC_API_KEY is set).")] = None,
    model: Annotated[Optional[str], typer.Option(help="Claude model for the claude engine.")] = None,
    force: Annotated[bool, typer.Option("--force", help=(
        "Run now: skip the backoff, hours and sessions checks (never enabled = false, never the lock)."))] = False,
    min_hours: Annotated[Optional[float], typer.Option(help="Override min_hours for this run.")] = None,
    min_sessions: Annotated[Optional[int], typer.Option(help="Override min_sessions for this run.")] = None,
    all_stores: AllOpt = False,
    roots: RootOpt = None,
    max_concurrency: Annotated[int, typer.Option(
        "--max-concurrency", min=1, help="With --all: how many stores to dream at once.")] = 4,
    as_json: JsonOpt = False,
) -> None:
    """Dream once: gate, lock, snapshot, gather, consolidate, validate, propose (one store, or --all)."""
    overrides = {"model": model, "min_hours": min_hours, "min_sessions": min_sessions}
    if all_stores or roots:
        _run_fleet(roots or [], engine, force, overrides, max_concurrency, as_json)
        return
    from dream.pipeline import run as pipeline  # start-up: see dream/cli/__init__.py

    with RunProgress(wanted(as_json)) as progress:
        outcome = pipeline.run(store, engine=engine, force=force, overrides=overrides, on_progress=progress.on_progress,
                               call=progress.call)
    if as_json:
        emit_json(outcome.to_json())
    else:
        _print_outcome(outcome, store)
    if outcome.status == Status.FAILED:
        raise typer.Exit(1)


def _run_fleet(roots: list[Path], engine: str | None, force: bool, overrides: dict, max_concurrency: int,
               as_json: bool) -> None:
    """`dream run --all`: one line per store as it ends (or one JSON object); exit 1 only if a store failed."""
    from dream.pipeline import fleet  # start-up: see dream/cli/__init__.py

    stores = fleet.fleet_stores(roots)
    started = time.time()
    if not as_json:
        out.print(f"dream run --all at {when(started)}: {len(stores)} store(s)"
                  + ("" if stores else " under ~/.claude/projects or the --root folders"), markup=False)
    names = dict(zip(map(str, stores), project_names(stores)))

    def heard(row: dict) -> None:
        if not as_json:
            out.print(fleet_line(row, names), markup=False, soft_wrap=True)  # above the bar while it shows
        progress.row_done()

    with FleetProgress(wanted(as_json), len(stores)) as progress:
        rows = fleet.run_fleet(stores, engine=engine, force=force, max_concurrency=max_concurrency,
                               overrides=overrides, on_row=heard)
    counts = fleet.fleet_counts(rows)
    if as_json:
        emit_json({"stores": rows, "counts": counts, "duration_s": round(time.time() - started, 3)})
    else:
        out.print(", ".join(f"{n} {status}" for status, n in counts.items() if n) or "nothing to do", markup=False)
    if fleet.fleet_failed(rows):
        raise typer.Exit(1)


def _page_at(html: Path | None, render: Callable[[Any], str]) -> Path | None:
    """Write the review page `render(page module)` at `html`; None when no page was asked for."""
    if html is None:
        return None
    from dream.review import page as review_page  # start-up: jinja2, only when a page is asked for

    return review_page.write_page(html, render(review_page))


def fleet_line(row: dict, names: dict[str, str]) -> str:
    """`<status>  <store>  <what happened>`: one line a log file can be grepped for."""
    state = row["status"] + (f" ({words(row['reason'])})" if row["reason"] else "")
    name = names.get(row["store"], row["store"])
    if row["proposal"]:
        detail = f"proposal {row['proposal']}, {row['changes']} change(s)"
    else:
        detail = row["message"] or ""
    return f"{state:<20} {name}  {detail}".rstrip()


def _print_outcome(outcome, store: Path) -> None:
    s = outcome.status
    line = f"[bold]{s}[/bold]"
    if outcome.reason:
        line += f" ({words(outcome.reason)})"
    out.print(f"{line}  engine={human(outcome.engine)}  sessions={outcome.sessions_read}  changes={outcome.changes}")
    if outcome.error:
        out.print(outcome.error, markup=False)
    if outcome.redactions:
        out.print(f"{outcome.redactions} secret(s) redacted from the logs")
    for line in outcome.left_alone:
        out.print(line, markup=False)
    if outcome.needs_person and s in (Status.PROPOSED, Status.NOOP):  # kept in the notes ledger until answered
        out.print(f"{len(outcome.needs_person)} note(s) for a person, kept until answered: {dream_command()} notes "
                  f"--store {shlex.quote(str(store))}", markup=False, soft_wrap=True)
    if s == Status.PROPOSED:
        out.print(f"proposal {outcome.proposal_id} on base version {outcome.base_version}")
        # One line whatever the width: a command to copy must not be broken in two.
        dream, where = dream_command(), shlex.quote(str(store))
        out.print(f"review: {dream} diff --store {where}   then: {dream} accept --store {where}", markup=False,
                  soft_wrap=True)


@app.command()
def status(
    store: StoreOpt = Path("."),
    all_stores: AllOpt = False,
    roots: RootOpt = None,
    html: Annotated[Optional[Path], typer.Option(
        "--html", help="Write one overview page of every pending proposal here, their review pages beside it.",
    )] = None,
    as_json: JsonOpt = False,
) -> None:
    """Gate, lock holder, current version and pending proposals."""
    from dream.pipeline.status import fleet_status, store_row, store_status  # start-up: see dream/cli/__init__.py
    from dream.versions.removed import survival_line  # start-up: see dream/cli/__init__.py
    if html:
        _write_overview(html, fleet_status(roots or []) if all_stores or roots else [store_row(store)], as_json)
        return
    if all_stores or roots:
        _print_fleet(fleet_status(roots or []), as_json)
        return
    info = store_status(store)
    if as_json:
        emit_json(info)
        return
    g = info["gate"]
    gate_text = (("open" + (f" ({g['message']})" if g["transcripts_to_import"] else "")) if g["open"]
                 else f"closed ({g['reason']}: {g['message']})")
    lock = info["lock"]
    lock_text = "free" if not lock else f"held by run {lock['run_id']} pid {lock['pid']}@{lock['host']} since {when(lock['started_at'])}"
    say(f"store            {info['store']}")
    say(f"gate             {gate_text}")
    say(f"sessions waiting {g['sessions_waiting']}")
    for warning in g["warnings"]:
        say(f"warning          {warning}")
    say(f"last dream       {when(info['last_consolidated_at'])}")
    say(f"lock             {lock_text}")
    say(f"current version  {human(info['current_version']) or 'none yet'}")
    say(f"pending          {', '.join(info['pending']) or 'none'}")
    say(f"survival         {survival_line(info['survival'])}")
    _print_notes(info, store)
    for why in info["damaged_proposals"].values():
        say(f"damaged proposal {why}")
    if info["interrupted_accept_problem"]:
        say(f"interrupted write {info['interrupted_accept_problem']}")


STATUS_NOTES = 5  # of each kind; `dream notes` lists them all


def _print_notes(info: dict, store: Path) -> None:
    """The open notes for a person, one line each, requests first; older ones as a count and the command to list them."""
    from dream.cli.notes import note_lines  # start-up: see dream/cli/__init__.py
    from dream.notes import OpenNotes  # start-up: see dream/cli/__init__.py

    found = info["notes"]
    say(f"needs a person   {found['open'] or 'nothing'}" + (" open note(s)" if found["open"] else ""))
    for line in note_lines(OpenNotes.from_json(found), Path(info["store"]), width=120, per_kind=STATUS_NOTES):
        say(f"  {line}")


def _print_fleet(rows: list[dict], as_json: bool) -> None:
    if as_json:
        emit_json({"stores": rows})
        return
    if not rows:
        out.print("no memory stores found under ~/.claude/projects or the --root folders")
        return
    stores = [r["store"] for r in rows]
    table_rows = []
    for r, name in zip(rows, project_names(stores)):
        if "error" in r:
            table_rows.append([name, "error", "", "", "", r["error"]])
            continue
        g, t = r["gate"], r["transcripts"]
        gate_text = "open" if g["open"] else f"closed ({words(g['reason'])})"
        waiting = str(g["sessions_waiting"]) + (f" +{t['changed']} to import" if t and t["changed"] else "")
        table_rows.append([name, gate_text, waiting, when(r["last_consolidated_at"]),
                           ", ".join(r["pending"]) or "none", ""])
    title = f"{len(rows)} store(s)" + (f" under {root}" if (root := common_root(stores)) else "")
    out.print(table(title, ["store", "gate", "sessions waiting", "last dream", "pending", "error"], table_rows,
                    wrap=("pending", "error")))


def _write_overview(html: Path, rows: list[dict], as_json: bool) -> None:
    from dream.review.overview import write_overview  # start-up: see dream/cli/__init__.py

    stores = [r["store"] for r in rows]
    written = write_overview(html, rows, project_names(stores), common_root(stores))
    if as_json:
        emit_json({"stores": rows, "overview": written.to_json()})
        return
    pending = len({p["store"] for p in written.proposals})
    out.print(f"overview written to {html}: {len(written.proposals)} pending proposal(s) in {pending} of "
              f"{len(rows)} store(s); their review pages are in {written.pages}", markup=False, soft_wrap=True)


@app.command()
def proposals(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """List proposals, newest last."""
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.proposals import Proposals  # start-up: see dream/cli/__init__.py
    props = Proposals(Layout.open(store))
    items, damaged = props.all(), props.damaged()
    if as_json:
        emit_json({"proposals": [
            {"id": p.id, "status": p.status, "base_version": p.base_version, "engine": p.engine,
             "created_at": p.created_at, "files_changed": len(p.changed), "accepted_version": p.accepted_version}
            for p in items
        ] + [
            {"id": pid, "status": "damaged", "base_version": None, "engine": None, "created_at": None,
             "files_changed": None, "accepted_version": None, "error": why}
            for pid, why in damaged.items()
        ]})
        return
    if not items and not damaged:
        out.print("no proposals yet")
        return
    rows = [[p.id, words(p.status), p.base_version, p.engine, len(p.changed), when(p.created_at)] for p in items]
    rows += [[pid, "damaged", "", "", "", ""] for pid in damaged]
    out.print(table("proposals", ["id", "status", "base", "engine", "files", "created"], rows))


@app.command()
def diff(
    proposal_id: Annotated[Optional[str], typer.Argument(help="Proposal id (default: the newest pending).")] = None,
    store: StoreOpt = Path("."),
    html: Annotated[Optional[Path], typer.Option("--html", help="Write a self-contained HTML review page here.")] = None,
    from_version: Annotated[Optional[int], typer.Option("--from", help="Compare two versions: the older one.")] = None,
    to_version: Annotated[Optional[int], typer.Option("--to", help="Compare two versions: the newer one (default: current).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a proposal's report (dropped lines first) and diff, or compare two versions."""
    from dream.pipeline.report import proposal_markdown  # start-up: see dream/cli/__init__.py
    from dream.review import retention as retained  # start-up: see dream/cli/__init__.py
    from dream.review.summary import Counts  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.proposals import Proposals  # start-up: see dream/cli/__init__.py
    layout = Layout.open(store)
    if from_version is not None or to_version is not None:
        _diff_versions(layout, proposal_id, from_version, to_version, html, as_json)
        return
    props = Proposals(layout)
    proposal = props.resolve(proposal_id)
    text = props.diff(proposal)
    report = props.report(proposal)
    retention = retained.of_proposal(props, proposal, report)
    page = _page_at(html, lambda review_page: review_page.proposal_page(layout, proposal))
    if as_json:
        emit_json({"proposal_id": proposal.id, "status": proposal.status, "base_version": proposal.base_version,
                   "files_changed": proposal.changed, "counts": Counts.of(report, retention).to_json(),
                   "dropped": retention["dropped"], "retention": retention,
                   "changes": report.get("changes") or [],  # each with kind, path and (requests) evidence
                   "diff": text, "report": report, "html": str(page) if page else None})
        return
    if page:
        out.print(f"review page written to {page}", markup=False)
        return
    if props.stored_report_md(proposal):  # a proposal so old that its stored markdown has no retention
        out.print("\n".join(retained.render_markdown(retention)), markup=False)
    out.print(proposal_markdown(props, proposal, retention), markup=False)
    print_diff(text)


def _diff_versions(layout: Layout, proposal_id: str | None, old: int | None, new: int | None,
                   html: Path | None, as_json: bool) -> None:
    from dream.store.tree import changed_paths  # start-up: see dream/cli/__init__.py
    from dream.versions.diffing import tree_diff  # start-up: see dream/cli/__init__.py
    from dream.versions.manifests import Versions  # start-up: see dream/cli/__init__.py

    if proposal_id is not None:
        raise BadInput("give either a proposal id or --from/--to, not both")
    versions = Versions(layout)
    new = new if new is not None else versions.current()
    if old is None or new is None:
        raise BadInput(f"{layout.root}: --from needs a version number (and the store has versions for --to)")
    old_tree, new_tree = versions.tree(old), versions.tree(new)
    text = tree_diff(old_tree, new_tree)
    page = _page_at(html, lambda review_page: review_page.versions_page(layout, old, new))
    if as_json:
        emit_json({"from": old, "to": new, "files_changed": changed_paths(old_tree, new_tree), "diff": text,
                   "html": str(page) if page else None})
        return
    if page:
        out.print(f"review page written to {page}", markup=False)
        return
    print_diff(text)


@app.command("accept")
def accept_cmd(
    proposal_id: Annotated[Optional[str], typer.Argument(help="Proposal id (default: the newest pending).")] = None,
    store: StoreOpt = Path("."),
    only: Annotated[Optional[list[str]], typer.Option(
        "--only", help="Take only these files: --only a.md b.md (or repeat --only).")] = None,
    except_: Annotated[Optional[list[str]], typer.Option(
        "--except", help="Take every file but these: --except c.md d.md (or repeat --except).")] = None,
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a proposal (or some of its files) the store's next version, merging edits made since."""
    from dream.review import decide  # start-up: see dream/cli/__init__.py

    decision = decide.accept(store, proposal_id, comment, only=only, except_=except_)
    print_decision(decision, as_json, resumed=resume_paused_flow(store, decision.proposal_id, "accept", comment),
                   pushed=push_mirror(store, decision.version))


@app.command()
def reject(
    proposal_id: Annotated[Optional[str], typer.Argument(help="Proposal id (default: the newest pending).")] = None,
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    forget_requests: Annotated[bool, typer.Option("--forget-requests", help="Never offer its requests again.")] = False,
    only: Annotated[Optional[list[str]], typer.Option(
        "--only", help="Reject only these files: --only a.md b.md; the others stay pending.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Reject a proposal (or some of its files); the store is not touched.

    The requests behind what you rejected come back in the next run unless
    forgotten; with --only, the other files stay pending as a new proposal.
    """
    from dream.review import decide  # start-up: see dream/cli/__init__.py

    decision = decide.reject(store, proposal_id, comment, forget_requests=forget_requests, only=only)
    print_decision(decision, as_json, resumed=resume_paused_flow(store, decision.proposal_id, "reject", comment))


@app.command()
def rollback(
    version: Annotated[int, typer.Argument(help="Version number to restore.")],
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Restore version N's bytes as a new version."""
    from dream.review import decide  # start-up: see dream/cli/__init__.py

    decision = decide.rollback(store, version, comment)
    print_decision(decision, as_json, f" to version {version}", pushed=push_mirror(store, decision.version))


def resume_paused_flow(store: Path, proposal_id: str | None, verb: str, comment: str | None):
    """A Prefect flow run paused on this proposal gets the decision too, and ends (dream.review.paused)."""
    from dream.review import paused  # start-up: see dream/cli/__init__.py

    if proposal_id is None:
        return None
    return paused.resume_waiting(store, proposal_id, verb, comment)


def print_decision(decision, as_json: bool, what_to: str = "", resumed=None, pushed=None) -> None:
    """`pushed`: what a mirrored memory store was sent (dream.cli.mirror)."""
    if as_json:
        emit_json({**decision.to_json(), **({"flow_run": resumed.to_json()} if resumed else {}),
                   **({"push": pushed.to_json()} if pushed else {})})
        return
    what = f"proposal {decision.proposal_id} " if decision.proposal_id else ""
    version = f"; the store is now version {decision.version}" if decision.version else ""
    out.print(f"{what}{words(decision.status)}{what_to}{version}")
    if decision.skipped:
        label = "rejected" if decision.status == "rejected" else "skipped"
        out.print(f"{label}: {', '.join(decision.skipped)}", markup=False)
    if decision.indexed:
        out.print(f"MEMORY.md: took the index line(s) of {', '.join(decision.indexed)} too, so the agent reads "
                  f"{'them' if len(decision.indexed) > 1 else 'it'}", markup=False)
    if decision.new_proposal_id and decision.status in ("accepted", "rejected"):
        out.print(f"the rest stays pending as proposal {decision.new_proposal_id} (`dream diff` shows it)",
                  markup=False)
    if decision.combined:
        out.print(f"merged with edits made to the store since: {', '.join(decision.combined)}", markup=False)
    if decision.pre_accept_version:
        out.print(f"the store as found was kept as version {decision.pre_accept_version}")
    if resumed and resumed.resumed:
        out.print(f"resumed the paused Prefect flow run {resumed.flow_run_id} with this decision", markup=False)
    elif resumed:
        err.print(f"dream: warning: the paused Prefect flow run {resumed.flow_run_id} was not resumed: "
                  f"{resumed.problem}", markup=False, soft_wrap=True)
    if pushed:
        print_push(pushed)


@app.command()
def history(
    store: StoreOpt = Path("."),
    limit: Annotated[int, typer.Option(min=1, help="How many rows of each kind (runs, review actions).")] = 20,
    all_stores: AllOpt = False,
    roots: RootOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Past runs (with tokens and cost) and review actions, of one store or of every store (--all)."""
    from dream import history as hist  # start-up: see dream/cli/__init__.py
    from dream.pipeline.fleet import fleet_stores  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    fleet = bool(all_stores or roots)
    if fleet:
        stores = fleet_stores(roots or [])
        found = hist.read_fleet(stores, limit)
    else:
        found = hist.read(Layout.open(store), limit, strict=True)
    if as_json:
        emit_json({**found.to_json(), **({"stores": [str(s) for s in stores]} if fleet else {})})
        return
    _print_history(found, fleet)


def _print_history(found: hist.History, fleet: bool) -> None:
    where = ["store"] if fleet else []
    stores = sorted({row["store"] for row in [*found.runs, *found.events]}) if fleet else []
    names = dict(zip(stores, project_names(stores)))
    under = f" (stores under {root})" if (root := common_root(stores)) else ""
    if not found.runs:
        out.print("no runs yet")
    else:
        out.print(table(f"runs{under}", [*where, "started", "status", "engine", "sessions", "changes", "proposal",
                                          "tokens in/out", "cache read", "cost $", "secs"],
                        [_store(r, names) + _run_row(r) for r in found.runs]))
        if not fleet and found.runs[0]["status"] == "failed" and found.runs[0].get("error"):
            out.print(f"the last run failed: {found.runs[0]['error']}")  # why, and what the next run does
    if found.events:
        out.print(table(f"review actions{under}",
                        [*where, "at", "action", "proposal", "version", "who", "comment", "detail"],
                        [_store(e, names) + _event_row(e) for e in found.events], wrap=("comment", "detail")))


def _store(row: dict, names: dict[str, str]) -> list:
    return [names[row["store"]]] if names else []


def _run_row(r: dict) -> list:
    status = f"{r['status']} ({words(r['reason'])})" if r["reason"] else r["status"]
    return [_local(r["started_at"], "%Y-%m-%d %H:%M"), status, r["engine"] or "", r["sessions_read"], r["changes"],
            r["proposal_id"] or "", f"{r['input_tokens'] or 0}/{r['output_tokens'] or 0}", r["cache_read_tokens"],
            f"{r['cost_usd'] or 0:.4f}", f"{r['duration_s'] or 0:.2f}"]


def _event_row(e: dict) -> list:
    return [_local(e["at"], "%Y-%m-%d %H:%M:%S"), e["action"], e["proposal_id"] or "", e["version"], e["actor"],
            e["comment"] or "", e["detail"] or ""]


def _local(moment, fmt: str) -> str:
    return moment.astimezone().strftime(fmt) if moment else ""


@app.command()
def version() -> None:
    """Print dream's version."""
    out.print(__version__)


