"""Review commands: review (interactive, file by file), show, gc, rebase."""

from __future__ import annotations

import os
import shlex
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Optional

import typer

from dream.cli.app import CommentOpt, JsonOpt, StoreOpt, app
from dream.cli.commands import print_decision, resume_paused_flow
from dream.cli.console import dream_command, emit_json, err, human, out, page_diff, when, words
from dream.cli.mirror import push_mirror
from dream.errors import BadInput

ProposalArg = Annotated[Optional[str], typer.Argument(help="Proposal id (default: the newest pending).")]


@app.command()
def review(
    proposal_id: ProposalArg = None,
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Go through a proposal file by file (diff in colour), take or skip each, then confirm.

    On a terminal each answer is one key, no Enter. Files that must go
    together (the new index and the files it points to) are taken or skipped
    together, and the review says so when the choice is made.
    """
    from dream.review import decide  # start-up: see dream/cli/__init__.py
    from dream.review.choices import Choices, needs  # start-up: see dream/cli/__init__.py
    from dream.review.retention import of_proposal  # start-up: see dream/cli/__init__.py
    from dream.review.summary import Counts  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.versions.manifests import Versions  # start-up: see dream/cli/__init__.py
    from dream.versions.proposals import Proposals  # start-up: see dream/cli/__init__.py
    layout = Layout.open(store)
    screen = err if as_json else out  # with --json, stdout carries only the JSON object
    keys = Keys(screen)
    if _answer_notes(screen, keys, layout):
        proposal_id = None  # what was taken is in the newest pending proposal, which replaced the one named
    proposals = Proposals(layout)
    proposal = proposals.awaiting_decision(proposal_id)
    base = Versions(layout).tree(proposal.base_version)
    new = proposals.tree(proposal)
    report = proposals.report(proposal)
    retention = of_proposal(proposals, proposal, report)
    screen.print(f"proposal {proposal.id}: {Counts.of(report, retention).sentence()}", markup=False)
    choices = Choices(list(proposal.changed), needs(base, new, proposal.changed))
    _choose_files(screen, keys, choices, base, new, retention)
    along = partial(decide.indexed_along, base, new)  # the new files taken without MEMORY.md: their lines go too
    if not _confirm(screen, keys, choices, lambda taken: _problem(layout, proposal, taken), along):
        screen.print("nothing written; the proposal stays pending")
        if as_json:
            emit_json({"status": "pending", "proposal_id": proposal.id, "version": None,
                       "taken": [], "skipped": list(proposal.changed)})
        return
    decision = decide.accept(store, proposal.id, comment, only=choices.in_order())
    print_decision(decision, as_json, resumed=resume_paused_flow(store, proposal.id, "accept", comment),
                   pushed=push_mirror(store, decision.version))


def _answer_notes(screen, keys: Keys, layout) -> bool:
    """The open notes with a suggested change first, one key each: take, dismiss, not now. True if one was taken."""
    from dream import notes  # start-up: see dream/cli/__init__.py
    from dream.review import answer_note as take  # start-up: see dream/cli/__init__.py
    from dream.errors import Refused  # start-up: see dream/cli/__init__.py
    from dream.notes.suggestion import suggestion_of  # start-up: see dream/cli/__init__.py

    waiting = notes.ranked(notes.load(layout))
    answerable = [(n, s) for n in waiting if (s := suggestion_of(n.text)) is not None]
    taken = False
    for note, suggestion in answerable:
        screen.print(f"note #{note.id} ({note.kind}): {note.text}", markup=False)
        answer = keys.ask(f"suggests: {suggestion}. [t]ake it into the proposal [d]ismiss it [n]ot now "
                          f"[q]uit the notes", "tdnq", end_of_input="q")
        if answer == "t":
            try:
                done = take.take(layout.root, note.id)
            except Refused as refused:  # the memory changed since: say why, and go on with the others
                screen.print(f"not taken: {refused}", markup=False)
                continue
            screen.print(f"taken into proposal {done.proposal_id}", markup=False)
            taken = True
        elif answer == "d":
            take.dismiss(layout.root, note.id)
        elif answer == "q":
            break
    others = len(waiting) - len(answerable)
    if others:
        screen.print(f"{others} other open note(s) for a person suggest no change: {dream_command()} notes "
                     f"--store {shlex.quote(str(layout.root))}", markup=False)
    return taken


def _problem(layout, proposal, taken: list[str]) -> str | None:
    """Why this selection cannot be written (index limits, a conflict with the live store), or None."""
    from dream.errors import MergeConflict, Refused  # start-up: see dream/cli/__init__.py
    from dream.review.decide import plan_accept  # start-up: see dream/cli/__init__.py

    try:
        plan_accept(layout, proposal, only=taken)
    except (Refused, MergeConflict) as exc:
        return str(exc)
    return None


class Keys:
    """Answers: one keypress on a terminal (no Enter), one letter and Enter otherwise.

    A line such as `ynnq` from a pipe is refused, not read as `y`: each
    answer is one letter on its own line.
    """

    def __init__(self, screen):
        self.screen = screen
        self.terminal = sys.stdin.isatty()

    def hint(self) -> str:
        return "(one key)" if self.terminal else "(a letter, then Enter)"

    def ask(self, question: str, choices: str, end_of_input: str) -> str:
        """One of `choices`; `end_of_input` when the input ends (a closed pipe, Ctrl-D)."""
        while True:
            self.screen.print(f"{question} {self.hint()} ", end="", markup=False, soft_wrap=True)
            answer = self._key() if self.terminal else self._line()
            if answer is None:
                self.screen.print("")
                return end_of_input
            self.screen.print(answer, markup=False)  # echo it: the prompt line reads as answered, in a log too
            if len(answer) == 1 and answer in choices:
                return answer
            self.screen.print(f"please answer one of: {', '.join(choices)}", markup=False)

    def number(self, question: str) -> str | None:
        """A line (a file's number), read with Enter even on a terminal."""
        self.screen.print(f"{question} ", end="", markup=False)
        line = sys.stdin.readline()
        return line.strip() if line else None

    def _line(self) -> str | None:
        line = sys.stdin.readline()
        return None if not line else line.strip().lower()

    def _key(self) -> str | None:
        import termios  # start-up: only a review on a terminal reads single keys
        import tty  # start-up: as termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            # Keys arrive one by one; Ctrl-C still interrupts. TCSANOW, not the default TCSAFLUSH,
            # which throws away a key typed before the question was printed.
            tty.setcbreak(fd, termios.TCSANOW)
            while True:
                key = os.read(fd, 1).decode("utf-8", errors="replace")
                if key not in ("\r", "\n"):  # Enter pressed out of habit answers nothing
                    break
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        return None if key in ("", "\x04") else key.lower()


REST = "[a]ll remaining [q]uit (skip the rest)"


def question(path: str, base, new, needers: set[str]) -> str:
    """What `y` does, in the question itself: add, delete or change `path` (and what else `n` leaves out)."""
    if path not in base:
        doing, no = f"add {path}?", "[n]o"
    elif path not in new:
        doing, no = f"delete {path}?", "[n]o keep it, with its index line"
    else:
        doing, no = f"take this change to {path}?", "[n]o"
    if needers:
        no += f" (leaves out {', '.join(sorted(needers))} too)"
    return f"{doing} [y]es {no} {REST}"


def _choose_files(screen, keys: Keys, choices, base, new, retention: dict) -> None:
    """Ask file by file; files that go together are said to, with why, before the question."""
    from dream.review.choices import why  # start-up: see dream/cli/__init__.py
    from dream.versions.diffing import file_diff  # start-up: see dream/cli/__init__.py

    changed = choices.changed
    for n, path in enumerate(changed, 1):
        screen.rule(f"{n}/{len(changed)}  {path}")
        dropped = [i for i in retention["items"] if i["path"] == path and i["status"] == "dropped"]
        if dropped:
            screen.print(f"[bold red]drops {len(dropped)} line(s) of {path}[/bold red]")
        page_diff(file_diff(path, base.get(path), new.get(path)), screen)
        needers = choices.needed_by(path)
        if needers:
            screen.print(f"goes together with {', '.join(sorted(needers))}, which you took:", markup=False)
            for needer in sorted(needers):
                screen.print(f"  {why(_direct_needer(choices, needer, path), path)}", markup=False)
        elif choices.along(path):
            screen.print(f"goes together with {len(choices.along(path))} file(s); yes takes them too:", markup=False)
            _reasons(screen, choices, path, choices.along(path), why)
        answer = keys.ask(question(path, base, new, needers), "ynaq", end_of_input="q")
        if answer == "y":
            _take(screen, keys, choices, path)
        elif answer == "n":
            _skip(screen, keys, choices, path, deleted=path in base and path not in new)
        elif answer == "a":
            _take_the_rest(screen, choices, changed[n - 1:])
            return
        elif answer == "q":
            return


def _take(screen, keys: Keys, choices, path: str) -> None:
    from dream.review.choices import why  # start-up: see dream/cli/__init__.py

    conflicts = choices.conflicts(path)
    if conflicts:
        screen.print(f"[yellow]taking {path} needs {len(conflicts)} file(s) you skipped, or the index would "
                     f"break:[/yellow]")
        _reasons(screen, choices, path, conflicts, why)
        if keys.ask(f"take {_those(conflicts)} too, so that {path} can be taken? "
                    f"[y]es take them all [n]o leave {path} out", "yn", end_of_input="n") != "y":
            choices.skip(path)
            return
    along = choices.along(path)
    choices.take(path)
    if along:
        screen.print(f"[yellow]taking {path} takes {len(along)} more file(s) with it, or the index would "
                     f"break:[/yellow]")
        _reasons(screen, choices, path, along, why)


def _skip(screen, keys: Keys, choices, path: str, deleted: bool) -> None:
    from dream.review.choices import why  # start-up: see dream/cli/__init__.py
    from dream.store.tree import INDEX_NAME  # start-up: see dream/cli/__init__.py

    needers = choices.needed_by(path)
    if needers:
        screen.print(f"[yellow]skipping {path} breaks the index unless {', '.join(sorted(needers))} is skipped "
                     f"too:[/yellow]")
        for needer in sorted(needers):
            screen.print(f"  {needer}: {why(_direct_needer(choices, needer, path), path)}", markup=False)
        if keys.ask(f"leave out {_those(needers)} too? [y]es leave them all out [n]o take {path} "
                    f"after all", "yn", end_of_input="n") != "y":
            return
    choices.skip(path)
    if deleted and INDEX_NAME in choices.changed:  # dream.review.decide.partial_tree keeps the line
        screen.print(f"{path} stays, and so does its line in {INDEX_NAME}: the index goes on pointing to it",
                     markup=False)


def _those(files: set[str]) -> str:
    """The files just listed, by name when there is one, else by number: a question stays one line."""
    return next(iter(files)) if len(files) == 1 else f"the {len(files)} files above"


def _direct_needer(choices, needer: str, path: str) -> str:
    """The file, among `needer` and what it takes along, that needs `path` itself."""
    return next(p for p in [needer, *sorted(choices.required_by(needer))] if path in choices.needs.get(p, ()))


def _reasons(screen, choices, path: str, files: set[str], why) -> None:
    """For each file taken along with `path`, the link that needs it."""
    chain = [path, *sorted(choices.required_by(path))]
    for other in sorted(files):
        direct = next(p for p in chain if other in choices.needs.get(p, ()))
        screen.print(f"  {other}: {why(direct, other)}", markup=False)


def _take_the_rest(screen, choices, rest: list[str]) -> None:
    """`a`: take every remaining file whose needs were not skipped; say which stay skipped and why."""
    left = []
    for path in rest:
        if path in choices.refused or choices.conflicts(path):
            left.append(path)
        else:
            choices.take(path)
    if left:
        screen.print(f"left skipped, as they need files you skipped: {', '.join(left)}", markup=False)


def _confirm(screen, keys: Keys, choices, problem_of, indexed_along) -> bool:
    """The summary, then write, edit or give up; a selection that cannot be written is edited, never lost."""
    while True:
        taken = choices.in_order()
        skipped = [p for p in choices.changed if p not in choices.taken]
        screen.print(f"\n[bold]summary[/bold]: take {len(taken)} file(s), skip {len(skipped)}")
        for number, path in enumerate(choices.changed, 1):
            screen.print(f"  {number:>3}  {'take' if path in choices.taken else 'skip'}  {path}", markup=False)
        if along := indexed_along(taken):
            screen.print(f"  MEMORY.md gets the index line(s) of {', '.join(along)}, so the agent reads "
                         f"{'them' if len(along) > 1 else 'it'}", markup=False)
        problem = problem_of(taken) if taken else None
        if not taken:
            answer = keys.ask("nothing to write: [e]dit the selection or [q]uit?", "eq", end_of_input="q")
        elif problem:
            screen.print("[bold red]this selection cannot be written:[/bold red] ", end="")
            screen.print(problem, markup=False)
            answer = keys.ask("[e]dit the selection or [q]uit (the proposal stays pending)?", "eq", end_of_input="q")
        else:
            answer = keys.ask(f"write {len(taken)} file(s) into the store now? [y]es [n]o [e]dit", "yne",
                              end_of_input="n")
        if answer == "y":
            return True
        if answer in ("n", "q"):
            return False
        _edit(screen, keys, choices)


def _edit(screen, keys: Keys, choices) -> None:
    """Switch files between take and skip by number; files that go together switch together."""
    while True:
        picked = keys.number("number of a file to switch between take and skip (Enter when done):")
        if not picked:
            return
        if not picked.isdigit() or not 1 <= int(picked) <= len(choices.changed):
            screen.print(f"please give a number from 1 to {len(choices.changed)}", markup=False)
            continue
        path = choices.changed[int(picked) - 1]
        before = choices.taken
        if path in before:
            choices.skip(path)
        else:
            choices.take(path)
        after = choices.taken
        for verb, files in (("take", sorted(after - before)), ("skip", sorted(before - after))):
            if files:
                screen.print(f"{verb} {', '.join(files)}", markup=False)


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
        heading = f"version {v.number} ({words(v.source)}, {when(v.created_at)}) {human(v.note)}"
        out.print(heading.rstrip(), markup=False)
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
    keep: Annotated[int, typer.Option("--keep", help="How many of the newest versions to keep (at least 1), "
                                                     "besides every version of the last keep_days (90) days.")],
    keep_proposals: Annotated[bool, typer.Option(
        "--keep-proposals", help="Keep decided proposals too (by default they go once their base version is gone).",
    )] = False,
    store: StoreOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Delete old versions, decided proposals based on them, and the file contents nothing refers to any more.

    Every version of the last `keep_days` days (at least 90) is kept whatever
    --keep says. Accepted, rejected and superseded proposals whose base
    version is older than the oldest kept version are deleted (not with
    --keep-proposals). Pending proposals and their base versions are always
    kept; removed memories stay restorable (`dream restore`). What is kept is
    packed into a few pack files.
    """
    from dream.config import load_settings  # start-up: see dream/cli/__init__.py
    from dream.versions import gc as collect  # start-up: see dream/cli/__init__.py

    result = collect.gc(store, keep, keep_proposals=keep_proposals, keep_days=load_settings(store).keep_days)
    if as_json:
        emit_json(result.to_json())
        return
    out.print(result.summary())


@app.command()
def rebase(
    proposal_id: ProposalArg = None,
    store: StoreOpt = Path("."),
    comment: CommentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Dream again on the store as it is now; the fresh proposal replaces the stale one."""
    from dream.pipeline import rebase as rebasing  # start-up: see dream/cli/__init__.py

    decision = rebasing.rebase(store, proposal_id, comment)
    if as_json:
        emit_json(decision.to_json())
        return
    if decision.new_proposal_id:
        out.print(f"proposal {decision.proposal_id} replaced by {decision.new_proposal_id} "
                  f"(base version {decision.version})")
    else:
        out.print(f"proposal {decision.proposal_id} superseded; nothing left to propose on version {decision.version}")
