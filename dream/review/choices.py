"""Which files of a proposal must be taken together, for a file-by-file review.

A partial accept must not leave the index pointing at nothing. Two kinds of
link make one file of a proposal depend on another:

- the proposed `MEMORY.md` points to a file the proposal adds: taking the
  new index needs that file;
- the proposal deletes a file the current index points to: taking the
  deletion needs the new index, which no longer points there.

`needs` maps each file to the files taking it requires (directly);
`Choices` keeps a reviewer's takes and skips consistent with it as they are
made, so a review can explain a choice that would break the index at once,
instead of refusing the whole selection at the end. `decide.plan_accept`
stays the final word (limits, merges with the live store).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dream.store.model import Store, parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, Tree


def index_targets(tree: Tree) -> set[str]:
    """The store paths the tree's MEMORY.md links to."""
    if INDEX_NAME not in tree:
        return set()
    index = Store.from_tree({INDEX_NAME: tree[INDEX_NAME]})
    targets = (resolve_link(INDEX_NAME, link) for line in index.index_lines for link in parse_index_line(line).links)
    return {t for t in targets if t is not None}


def needs(base: Tree, new: Tree, changed: list[str]) -> dict[str, set[str]]:
    """For each changed file, the other changed files that taking it requires."""
    found: dict[str, set[str]] = {path: set() for path in changed}
    if INDEX_NAME not in changed:
        return found
    new_targets, old_targets = index_targets(new), index_targets(base)
    for path in changed:
        if path == INDEX_NAME:
            continue
        if path in new_targets and path not in base:  # the new index points to a file only the proposal adds
            found[INDEX_NAME].add(path)
        if path in old_targets and path not in new:  # the proposal deletes a file the current index points to
            found[path].add(INDEX_NAME)
    return found


def why(path: str, other: str) -> str:
    """Why taking `path` needs `other`, in one clause."""
    if path == INDEX_NAME:
        return f"the new {INDEX_NAME} points to {other}, which only this proposal adds"
    return f"{path} is deleted, and only the new {INDEX_NAME} stops pointing to it"


@dataclass
class Choices:
    """A reviewer's answers, and the files they take: the wanted ones and everything those need.

    `wanted` and `refused` are what the reviewer said; `taken` follows from
    them, so a file taken only because another needed it goes back to
    skipped when that other is skipped. No answer is overridden silently:
    `conflicts` and `needed_by` tell a review what to ask first.
    """

    changed: list[str]
    needs: dict[str, set[str]]
    wanted: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)

    def required_by(self, path: str) -> set[str]:
        """Everything taking `path` takes too (transitively), `path` excluded."""
        seen: set[str] = set()
        todo = [path]
        while todo:
            for other in self.needs.get(todo.pop(), ()):
                if other not in seen and other != path:
                    seen.add(other)
                    todo.append(other)
        return seen

    @property
    def taken(self) -> set[str]:
        return set().union(*({w, *self.required_by(w)} for w in self.wanted)) if self.wanted else set()

    def along(self, path: str) -> set[str]:
        """The files taking `path` would add to those already taken."""
        return self.required_by(path) - self.taken

    def conflicts(self, path: str) -> set[str]:
        """Files taking `path` needs that the reviewer said to skip."""
        return self.required_by(path) & self.refused

    def needed_by(self, path: str) -> set[str]:
        """Wanted files that need `path`: skipping `path` means skipping them too."""
        return {w for w in self.wanted if path in self.required_by(w)}

    def take(self, path: str) -> None:
        """Take `path` and what it needs, lifting any skip of those (ask first: `conflicts`)."""
        self.refused -= {path, *self.required_by(path)}
        self.wanted.add(path)

    def skip(self, path: str) -> None:
        """Skip `path` and the wanted files that need it (ask first: `needed_by`)."""
        dependents = self.needed_by(path)
        self.wanted -= {path, *dependents}
        self.refused |= {path, *dependents}

    def in_order(self) -> list[str]:
        taken = self.taken
        return [p for p in self.changed if p in taken]
