"""`dream removed` and `dream restore PATH`: what left the live store, and bringing one memory back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dream.cli.app import CommentOpt, JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, out, say, table, when


@app.command("removed")
def removed_cmd(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Every memory and index line that ever left the live store: when, by which proposal, and why."""
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.manifests import Versions  # start-up: see dream/cli/__init__.py
    from dream.versions.removed import removals  # start-up: see dream/cli/__init__.py

    found = removals(Versions(Layout.open(store)))
    if as_json:
        emit_json({"removed": [r.as_json() for r in found]})
        return
    if not found:
        say("nothing has left the store")
        return
    rows = [[when(r.at), r.kind, r.path if r.kind == "memory" else r.text, str(r.version),
             r.proposal_id or r.source, r.why] for r in found]
    out.print(table("removed", ["when", "what", "path or line", "version", "proposal", "why"], rows,
                    wrap=("path or line", "why")))
    say("bring one back: dream restore PATH")


@app.command("restore")
def restore_cmd(
    path: Annotated[str, typer.Argument(help="The memory file, as `dream removed` names it.")],
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring one memory back from the last version that held it (a new version, journaled like an accept)."""
    from dream.review.restore import restore  # start-up: see dream/cli/__init__.py

    decision = restore(store, path, comment=comment)
    if as_json:
        emit_json(decision.to_json())
        return
    say(f"restored {path} as version {decision.version}")
