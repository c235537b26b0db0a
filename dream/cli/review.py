"""Review commands: review (interactive, file by file), show, gc, rebase."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from dream.cli.app import CommentOpt, JsonOpt, StoreOpt, app
from dream.cli.commands import print_decision, resume_paused_flow
from dream.cli.console import emit_json, err, human, out, print_diff, when, words
from dream.errors import BadInput, ProposalClosed

ProposalArg = Annotated[Optional[str], typer.Argument(help="Proposal id (default: the newest pending).")]


@app.command()
def review(
    proposal_id: ProposalArg = None,
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Go through a proposal file by file (diff in colour), take or skip each, then confirm."""
    from dream.review import decide  # start-up: see dream/cli/__init__.py
    from dream.review.retention import summarize  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.manifests import Versions  # start-up: see dream/cli/__init__.py
    from dream.versions.proposals import PENDING, Proposals  # start-up: see dream/cli/__init__.py
    layout = Layout.open(store)
    proposals = Proposals(layout)
    proposal = proposals.resolve(proposal_id)
    if proposal.status != PENDING:
        raise ProposalClosed(f"{layout.root}: proposal {proposal.id} is {proposal.status}, not pending")
    base = Versions(layout).tree(proposal.base_version)
    new = proposals.tree(proposal)
    report = proposals.report(proposal)
    retention = report.get("retention") or summarize(base, new)
    screen = err if as_json else out  # with --json, stdout carries only the JSON object
    taken = _choose_files(screen, proposal.changed, base, new, retention)
    skipped = [p for p in proposal.changed if p not in taken]
    screen.print(f"\n[bold]summary[/bold]: take {len(taken)} file(s), skip {len(skipped)}")
    for path in taken:
        screen.print(f"  take  {path}", markup=False)
    for path in skipped:
        screen.print(f"  skip  {path}", markup=False)
    if not taken or not _ask(screen, f"write {len(taken)} file(s) into the store now?", "yn") == "y":
        screen.print("nothing written; the proposal stays pending")
        if as_json:
            emit_json({"status": "pending", "proposal_id": proposal.id, "version": None,
                       "taken": [], "skipped": list(proposal.changed)})
        return
    decision = decide.accept(store, proposal.id, comment, only=taken)
    print_decision(decision, as_json, resumed=resume_paused_flow(store, proposal.id, "accept", comment))


def _choose_files(screen, changed: list[str], base, new, retention: dict) -> list[str]:
    """Ask file by file; `a` takes the rest, `q` skips the rest."""
    from dream.versions.diffing import file_diff  # start-up: see dream/cli/__init__.py

    taken: list[str] = []
    for n, path in enumerate(changed, 1):
        screen.rule(f"{n}/{len(changed)}  {path}")
        dropped = [i for i in retention["items"] if i["path"] == path and i["status"] == "dropped"]
        if dropped:
            screen.print(f"[bold red]drops {len(dropped)} line(s) of {path}[/bold red]")
        print_diff(file_diff(path, base.get(path), new.get(path)), console=screen)
        answer = _ask(screen, "take this file? [y]es [n]o [a]ll remaining [q]uit (skip remaining)", "ynaq")
        if answer == "y":
            taken.append(path)
        elif answer == "a":
            return taken + changed[n - 1:]
        elif answer == "q":
            return taken
    return taken


def _ask(screen, question: str, choices: str) -> str:
    """One letter from `choices`; end of input counts as no / quit."""
    while True:
        screen.print(f"{question} ", end="", markup=False)
        line = sys.stdin.readline()
        if not line:
            return "q" if "q" in choices else "n"
        answer = line.strip().lower()[:1]
        if answer and answer in choices:
            return answer
        screen.print(f"please answer one of: {', '.join(choices)}", markup=False)


@app.command()
def show(
    version: Annotated[int, typer.Argument(help="Version number.")],
    file: Annotated[Optional[str], typer.Argument(help="A file of that version (default: list its files).")] = None,
    store: StoreOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Print one file of a version, or list the version's files."""
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.manifests import Versions  # start-up: see dream/cli/__init__.py

    layout = Layout.open(store)
    versions = Versions(layout)
    v = versions.get(version)
    if file is None:
        if as_json:
            emit_json({"version": v.number, "source": v.source, "created_at": v.created_at, "note": v.note,
                       "actor": v.actor, "proposal_id": v.proposal_id, "files": sorted(v.files)})
            return
        out.print(f"version {v.number} ({words(v.source)}, {when(v.created_at)}) {human(v.note)}".rstrip(), markup=False)
        for path in sorted(v.files):
            out.print(path, markup=False)
        return
    if file not in v.files:
        raise BadInput(f"{layout.root}: version {version} has no file {file}")
    data = versions.blobs.get(v.files[file])
    if as_json:
        emit_json({"version": v.number, "path": file, "content": data.decode("utf-8", errors="replace")})
        return
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


@app.command()
def gc(
    keep: Annotated[int, typer.Option("--keep", help="How many of the newest versions to keep (at least 1).")],
    keep_proposals: Annotated[bool, typer.Option(
        "--keep-proposals", help="Keep decided proposals too (by default they go once their base version is gone).",
    )] = False,
    store: StoreOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Delete old versions, decided proposals based on them, and the file contents nothing refers to any more.

    Accepted, rejected and superseded proposals whose base version is older
    than the oldest kept version are deleted (not with --keep-proposals).
    Pending proposals and their base versions are always kept.
    """
    from dream.versions import gc as collect  # start-up: see dream/cli/__init__.py

    result = collect.gc(store, keep, keep_proposals=keep_proposals)
    if as_json:
        emit_json(result.to_json())
        return
    out.print(f"deleted {len(result.deleted_versions)} version(s), {len(result.proposals_deleted)} decided "
              f"proposal(s) and {result.deleted_blobs} blob(s) ({result.freed_bytes} bytes); "
              f"kept versions {', '.join(map(str, result.kept_versions)) or 'none'}")


@app.command()
def rebase(
    proposal_id: ProposalArg = None,
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Dream again on the store as it is now; the fresh proposal replaces the stale one."""
    from dream.review import rebase as rebasing  # start-up: see dream/cli/__init__.py

    decision = rebasing.rebase(store, proposal_id, comment)
    if as_json:
        emit_json(decision.to_json())
        return
    if decision.new_proposal_id:
        out.print(f"proposal {decision.proposal_id} replaced by {decision.new_proposal_id} "
                  f"(base version {decision.version})")
    else:
        out.print(f"proposal {decision.proposal_id} superseded; nothing left to propose on version {decision.version}")
