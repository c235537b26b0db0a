"""`dream restore PATH`: one memory back from the last version that held it, as an ordinary journaled write.

Under the store's lock, like accept and rollback: unrecorded edits in the
live store become a version first, the file (and its index line, when the
live index no longer points at it) is written through the journal, and the
result is a new version with an audit event. A memory that is in the
store already is not touched. A memory whose versions gc deleted comes back
from gc's removal ledger (`dream.versions.removed`).
"""

from __future__ import annotations

from pathlib import Path

from dream import history
from dream.errors import BadInput, Refused
from dream.review.decide import Decision, refuse_special_files, write_tree
from dream.store.layout import Layout
from dream.store.model import TextFile
from dream.store.tree import INDEX_NAME, read_tree
from dream.versions.journal import LockedStore, before_the_journal
from dream.versions.manifests import Versions
from dream.versions.removed import index_targets, restorable


def restore(store: str | Path, path: str, comment: str | None = None) -> Decision:
    layout = Layout.open(store)
    rel = path.strip().lstrip("./")
    with LockedStore(layout, "restore") as locked:
        versions = Versions(layout)
        refuse_special_files(layout, [rel], "restore")
        live = read_tree(layout.root)
        if rel in live:
            raise Refused(f"{layout.root / rel}: is in the store already; nothing restored")
        held = restorable(versions, rel)
        if held is None:
            raise BadInput(f"{layout.root}: no version ever held {rel!r}; see `dream removed`")
        current = versions.current()
        if current is None or versions.tree(current) != live:
            with before_the_journal(layout, "restore"):
                versions.record(live, "snapshot", note="store as found before restore")
        files = {**versions.get(versions.current() or held.held_by).files, rel: held.blob}
        if held.index_line and rel not in index_targets(live.get(INDEX_NAME, b"")):
            index = TextFile.decode(live.get(INDEX_NAME, b""))
            index.lines.append(held.index_line)
            index.final_newline = True
            files[INDEX_NAME] = versions.blobs.put(index.encode())
        source = f"{rel} from version {held.held_by}"
        version = write_tree(layout, live, files, "restore", "restore", note=f"restore {source}",
                             actor=history.actor(), comment=comment, detail=source)
    return Decision("restored", None, version, taken=[rel], cleaned=locked.cleaned)
