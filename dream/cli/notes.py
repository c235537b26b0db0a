"""`dream notes`: the notes for a person that no night has lost; take a suggestion, or dismiss a note."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import dream_command, emit_json, say
from dream.errors import BadInput

if TYPE_CHECKING:
    from dream.notes import Note, OpenNotes

ACTIONS = ("take", "dismiss")


@app.command()
def notes(
    action: Annotated[Optional[str], typer.Argument(help="take | dismiss (default: list the open notes).")] = None,
    number: Annotated[Optional[int], typer.Argument(help="The note's number, as the list shows it.")] = None,
    store: StoreOpt = Path("."),
    answered: Annotated[bool, typer.Option("--answered", help="Also list the notes people answered.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List every open note for a person (older ones too); take a note's suggested change, or dismiss it.

    Taking puts the change into the pending proposal (or a new one), to be
    reviewed and accepted like any other. A dismissed note never comes back.
    """
    from dream import notes as ledger  # start-up: see dream/cli/__init__.py
    from dream.config import load_settings  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    if action is None:
        layout = Layout.open(store)
        kept = ledger.load(layout)
        every = ledger.OpenNotes(ledger.ranked(kept), 0, load_settings(layout.root).notes_fold_days)
        done = [n for n in kept if n.status != ledger.NoteStatus.OPEN] if answered else []
        if as_json:
            emit_json({**every.to_json(), **({"answered": [n.to_json() for n in done]} if answered else {})})
            return
        say(f"{len(every.shown)} open note(s) for a person in {layout.root}" if every.shown
            else f"no open notes for a person in {layout.root}")
        for line in note_lines(every, layout.root):
            say(line)
        for note in done:
            say(f"#{note.id} {note.status}" + (f" in proposal {note.proposal_id}" if note.proposal_id else "")
                + f": {note.text}")
        return
    if action not in ACTIONS or number is None:
        raise BadInput(f"dream notes {action} {'' if number is None else number}: expected `take N` or "
                       f"`dismiss N` (N from `dream notes`)".replace("  ", " "))
    _answer(action, number, store, as_json)


def _answer(action: str, number: int, store: Path, as_json: bool) -> None:
    from dream.review import answer_note as take  # start-up: see dream/cli/__init__.py

    if action == "dismiss":
        note = take.dismiss(store, number)
        if as_json:
            emit_json({"note": note.to_json()})
            return
        say(f"note {note.id} dismissed; it will not come back")
        return
    taken = take.take(store, number)
    if as_json:
        emit_json(taken.to_json())
        return
    into = f", in place of proposal {taken.replaced}" if taken.replaced else ""
    where = shlex.quote(str(store))
    say(f"note {taken.note.id} taken: {taken.change.action} {taken.change.path} in proposal {taken.proposal_id}{into}")
    say(f"review: {dream_command()} review --store {where}   or: {dream_command()} accept --store {where}")


def note_lines(found: OpenNotes, root: Path, width: int = 0, per_kind: int = 0) -> list[str]:
    """The notes grouped by kind, requests first, each with what it suggests and the command that answers it.

    `width` > 0 cuts each note's text to one line of that many characters, and `per_kind` > 0 shows that many
    of each kind, the rest as a count (`dream status`).
    """
    from dream.notes.suggestion import suggestion_of  # start-up: see dream/cli/__init__.py

    where = shlex.quote(str(root))
    lines: list[str] = []
    for kind, group in found.groups():
        lines.append(f"{kind} ({len(group)})")
        for note in group[:per_kind or None]:
            lines.append(f"  #{note.id}  {_cut(note.text, width)}")
            suggestion = suggestion_of(note.text)
            if suggestion is not None:
                lines.append(f"       suggests: {suggestion}; take it: {_command('take', note, where)}")
            lines.append(f"       dismiss: {_command('dismiss', note, where)}")
        if per_kind and len(group) > per_kind:
            lines.append(f"  … {len(group) - per_kind} more {kind} note(s): {dream_command()} notes --store {where}")
    if found.folded:
        lines.append(f"{found.folded} older open note(s) (over {found.fold_days:g} days) folded: "
                     f"{dream_command()} notes --store {where}")
    return lines


def _command(verb: str, note: Note, where: str) -> str:
    return f"{dream_command()} notes {verb} {note.id} --store {where}"


def _cut(text: str, width: int) -> str:
    return text if width <= 0 or len(text) <= width else text[:width - 1] + "…"
