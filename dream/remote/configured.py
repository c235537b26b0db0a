"""A store whose config says ``store = "anthropic:memstore_…"``: a mirror kept by `dream run` itself.

Each run first brings the memory store's edits into the folder (the first run pulls it whole, into a folder
that holds no memory files yet; later runs refresh it, merging as `dream pull` does); then the dream runs
on the folder as on any store. Accept and rollback push as on any mirror (dream/cli/mirror.py), and so
does the `auto_accept` policy when it takes a proposal (`push_accepted`). The conflict rules are
`dream push`'s (dream.remote.anthropic_memory); what waits for a person is named in the run's warnings.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from dream.config import Settings
from dream.errors import BadInput
from dream.remote import anthropic_memory
from dream.store.layout import Layout
from dream.store.tree import read_tree

SCHEME = "anthropic:"


def configured_store_id(settings: Settings) -> str | None:
    """The memory store the `store` setting names, or None for an ordinary local store."""
    return settings.store.removeprefix(SCHEME) if settings.store else None


def mirror_before_run(layout: Layout, settings: Settings) -> list[str]:
    """Pull or refresh the configured memory store into the folder; what a person should look at."""
    store_id = configured_store_id(settings)
    if store_id is None:
        return []
    root = layout.root
    if not anthropic_memory.is_mirror(root):
        _adopt(store_id, root)
        return []
    mirrored = anthropic_memory.load(root).store_id
    if mirrored != store_id:
        raise BadInput(f"{root}: mirrors {mirrored}, but its config says store = \"{SCHEME}{store_id}\"")
    result = anthropic_memory.refresh(layout)
    return [f"memory store {store_id}: left as it is, for a person: {line}" for line in result.for_person]


def push_accepted(layout: Layout, version: int | None) -> list[str]:
    """After the auto_accept policy took a proposal on a mirror: push it; what did not go, for a person."""
    if not anthropic_memory.is_mirror(layout.root):
        return []
    result = anthropic_memory.push(layout, version)
    if not result.stopped:
        return []
    who = "; a person should look at it" if result.for_person else ""
    pending = f"; still to push (`dream push`): {', '.join(result.pending)}" if result.pending else ""
    return [f"memory store: the push stopped: {result.stopped}{who}{pending}"]


def _adopt(store_id: str, root: Path) -> None:
    """The first run: pull the memory store beside the folder, then move its files in, the record last."""
    if read_tree(root):
        raise BadInput(f"{root}: holds memory files but mirrors no memory store yet; its config says "
                       f"store = \"{SCHEME}{store_id}\": move them away, or pull the store into a new folder "
                       f"(`dream pull {store_id} --into NEW`)")
    with tempfile.TemporaryDirectory(prefix=f".{root.name}.pulling-", dir=root.parent) as scratch:
        pulled = Path(scratch) / "store"
        anthropic_memory.pull(store_id, pulled)
        for rel in sorted(read_tree(pulled)):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(pulled / rel, root / rel)
        record = anthropic_memory.record_file(pulled)
        record_at = anthropic_memory.record_file(root)
        record_at.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(record, record_at)  # last: a folder with its record is a whole mirror
