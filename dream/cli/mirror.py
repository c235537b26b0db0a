"""`dream pull` and `dream push`: a local mirror of an Anthropic memory store (dream.remote.anthropic_memory)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, err, out

if TYPE_CHECKING:
    from dream.remote.anthropic_memory import PushResult


@app.command()
def pull(
    store_id: Annotated[str, typer.Argument(help="The memory store's id (memstore_...).")],
    into: Annotated[Path, typer.Option("--into", help="A new folder for the local mirror.")],
    as_json: JsonOpt = False,
) -> None:
    """Mirror an Anthropic memory store into a new local store; accept and rollback there push back."""
    from dream.remote import anthropic_memory  # start-up: see dream/cli/__init__.py

    record = anthropic_memory.pull(store_id, into)
    if as_json:
        emit_json({"store_id": store_id, "store": str(into), "memories": len(record.memories)})
        return
    out.print(f"pulled {len(record.memories)} memories of {store_id} into {into}", markup=False)


@app.command()
def push(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Push a mirrored store's accepted changes that are still pending to its memory store."""
    result = push_mirror(store, None)
    if result is None:
        raise typer.BadParameter(f"{store}: not a mirror of a memory store (`dream pull` makes one)")
    if as_json:
        emit_json(result.to_json())
    else:
        print_push(result)
    if result.stopped:
        raise typer.Exit(1)


def push_mirror(store: Path, version: Optional[int]) -> Optional[PushResult]:
    """Accept and rollback call this: a mirrored store sends what changed to its memory store."""
    from dream.remote import anthropic_memory  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    if not anthropic_memory.is_mirror(Path(store)):
        return None
    return anthropic_memory.push(Layout.open(store), version)


def print_push(result: PushResult) -> None:
    for line in result.pushed:
        out.print(f"memory store: {line}", markup=False)
    if result.merged:
        out.print(f"memory store: merged with edits made on the service: {', '.join(result.merged)}", markup=False)
    if result.stopped:
        who = "; a person should look at it" if result.for_person else ""
        err.print(f"dream: the push stopped: {result.stopped}{who}", markup=False, soft_wrap=True)
    if result.pending:
        err.print(f"dream: still to push (`dream push`): {', '.join(result.pending)}", markup=False, soft_wrap=True)
