"""The deterministic finish: after the model, the offline engine's Prune runs on the staged tree.

The model may stop with one index line too long, a pointer to a file it
merged away, or an index that was over budget before it started and that it
never touched. Validation would then throw the whole paid run away. Instead,
the same Prune the offline engine uses repairs or archives broken pointers,
indexes orphans, shortens long lines and brings the index within budget.

Before that, a file the model created but does not account for in its
summary is dropped: the API's memory-tool protocol invites progress and
status notes, and a note is not a memory.

The engine calls the two steps around its own account of the model's
changes (`drop_unaccounted`, then the model's changes, then `prune_staged`),
so a dropped note is not reported as the model's, and the finish's changes
are listed apart from the model's in the report.
"""

from __future__ import annotations

import posixpath

from dream.engines.base import Change, EngineInput
from dream.engines.offline import orient, prune
from dream.store.tree import Tree, read_tree


def prune_staged(inp: EngineInput) -> list[Change]:
    """The offline engine's Prune on the staged tree; its changes and notes."""
    ws, before = orient.load(inp.staging, inp.settings, inp.today)
    prune.prune(ws)
    orient.save(ws, inp.staging, before)
    return ws.changes + [Change("noted", "", note, source="finish") for note in ws.notes]


def drop_unaccounted(inp: EngineInput, base: Tree, summary: str) -> list[Change]:
    """Delete files created in this run that the summary never names."""
    dropped = []
    for path in sorted(set(read_tree(inp.staging)) - set(base)):
        if path in summary or posixpath.basename(path) in summary:
            continue
        (inp.staging / path).unlink()
        dropped.append(Change("dropped", path, "created by the model but not named in its summary: a scratch or "
                              "progress note, not a memory"))
    return dropped
