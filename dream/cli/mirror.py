"""`dream pull` and `dream push`: a local mirror of an Anthropic memory store (dream.remote.anthropic_memory)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, err, out
from dream.errors import BadInput

if TYPE_CHECKING:
    from dream.remote.anthropic_memory import PushResult, RefreshResult


@app.command()
def pull(
    store_id: Annotated[Optional[str], typer.Argument(
        help="The memory store's id (memstore_...); leave it out to refresh an existing mirror.")] = None,
    into: Annotated[Path, typer.Option(
        "--into", help="The local mirror: a new folder, or one pulled before.")] = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Mirror an Anthropic memory store into a local store (accept and rollback there push back), or refresh it."""
    from dream.remote import anthropic_memory  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    if anthropic_memory.is_mirror(into):
        mirrored = anthropic_memory.load(into).store_id
        if store_id not in (None, mirrored):
            raise BadInput(f"{into}: mirrors {mirrored}, not {store_id}")
        _print_refresh(anthropic_memory.refresh(Layout.open(into)), as_json)
        return
    if store_id is None:
        raise BadInput(f"{into}: not a mirror yet; give the memory store's id (memstore_...) to pull it there")
    record = anthropic_memory.pull(store_id, into)
    if as_json:
        emit_json({"store_id": store_id, "store": str(into), "memories": len(record.memories)})
        return
    out.print(f"pulled {len(record.memories)} memories of {store_id} into {into}", markup=False)


def _print_refresh(result: RefreshResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
        return
    out.print(f"took the service's edits: {', '.join(result.taken) or 'none'}", markup=False)
    if result.merged:
        out.print(f"merged with changes not pushed yet: {', '.join(result.merged)}", markup=False)
    for line in result.for_person:
        err.print(f"dream: left as it is, for a person: {line}", markup=False, soft_wrap=True)


@app.command()
def push(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Push a mirrored store's accepted changes that are still pending to its memory store."""
    result = push_mirror(store, None)
    if result is None:
        raise BadInput(f"{store}: not a mirror of a memory store (`dream pull` makes one)")
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
