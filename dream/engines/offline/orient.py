"""Orient: read the staging copy into a store model and a list of memories.

A *memory* is either a topic file (with the index lines that point to it)
or an inline rule: an index list item without a link, which is the whole
memory. The `Workspace` carries the store, the settings and the report
through the phases, so each phase is a set of plain functions over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from dream.config import Settings
from dream.engines.base import HOUSEKEEPING, REQUEST, Change, EngineInput, Evidence
from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.similarity import content_keys, word_keys
from dream.engines.offline.text import MAX_LINE, shorten
from dream.errors import EngineFailed
from dream.store.model import TEAM_DIR, IndexLine, Store, TopicFile, resolve_link
from dream.store.paths import PathRefused, check_new_beside, tree_siblings
from dream.store.staging import Staging
from dream.store.tree import ARCHIVE_NAME, INDEX_NAME, Tree, is_archive


@dataclass
class Memory:
    kind: str  # topic | rule
    key: str  # topic path, or the rule's index line text
    text: str  # what duplicates and forget requests are matched against
    label: str  # what the report calls it
    order: int  # earlier = older / first indexed
    scope: str  # "team" or "personal": never merged across

    @property
    def path(self) -> str | None:
        return self.key if self.kind == "topic" else None


@dataclass
class Workspace:
    store: Store
    settings: Settings
    today: date
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)  # what a person must decide: listed apart in the report
    _noted: set[str] = field(default_factory=set, repr=False)  # thousands of requests may each add one
    keep_first: dict[str, tuple] = field(default_factory=dict)  # memory -> rank to stay in a shrinking index

    def change(self, action: ChangeAction, path: str, reason: str, detail: str = "", source: str = "") -> None:
        """A housekeeping change: deterministic upkeep that reads no intent."""
        self.changes.append(Change(action, path, reason, detail, source, kind=HOUSEKEEPING))

    def requested(self, action: ChangeAction, path: str, reason: str, detail: str, evidence: Evidence) -> None:
        """A change made because someone asked for it, with the sentence that asked."""
        self.changes.append(Change(action, path, reason, detail, evidence.session, kind=REQUEST, evidence=evidence))

    def note(self, message: str) -> None:
        if message not in self._noted:
            self._noted.add(message)
            self.notes.append(message)

    def ask(self, message: str) -> None:
        """A note that needs a person: the engine would not decide it alone."""
        if message not in self._noted:
            self.needs.append(message)
        self.note(message)


def load(staging: Staging, settings: Settings, today: date, inp: EngineInput | None = None) -> tuple[Workspace, Tree]:
    """The staging copy as a workspace; `inp` (the EngineInput) adds what ranks the index: reads, pins."""
    tree = staging.tree()
    ws = Workspace(Store.from_tree(tree), settings, today)
    if inp is not None:
        ws.keep_first = keep_ranks(inp.memory_reads, inp.pinned)
    return ws, tree


def keep_ranks(reads: dict[str, dict], pinned: set[str]) -> dict[str, tuple]:
    """Higher stays longer: pinned, then read often and recently; unread and unpinned memories rank lowest."""
    ranks: dict[str, tuple] = {rel: (1, 0, "") for rel in pinned}
    for rel, seen in reads.items():
        if rel not in pinned and seen.get("reads"):
            ranks[rel] = (0, seen["reads"], seen.get("last_read") or "")
    return ranks


def save(ws: Workspace, staging: Staging, before: Tree) -> None:
    """Write the files that changed into staging, and delete removed ones.

    Every new path is checked as the memory tool checks the model's
    (dream.store.paths): one that would not pass there fails the run here
    rather than land in staging, so no night writes into team/ or a
    look-alike of it; the engine's own steps refuse such paths earlier.

    No fsync: staging is a scratch copy that a crash throws away, and the
    proposal made from it is written durably. A log of thousands of requests
    writes thousands of files here.
    """
    after = ws.store.to_tree()
    siblings = tree_siblings(before)
    for path in sorted(set(after) - set(before)):
        try:
            check_new_beside(path, siblings)  # the memory tool's rules: no new team file, no look-alike name
        except PathRefused as err:
            raise EngineFailed(f"the offline engine was about to write {path!r}, which {err}; nothing was "
                               "written (a bug of dream's: please report it)") from None
    for path in sorted(set(before) - set(after)):
        staging.remove(path)
    for path, data in after.items():
        if before.get(path) != data:
            staging.write(path, data)  # scratch: the proposal's commit makes it durable


def scope_of(path: str) -> str:
    return "team" if path.split("/", 1)[0] == TEAM_DIR else "personal"


def index_targets(parsed: list[IndexLine]) -> dict[str, int]:
    """Store paths linked from the parsed index, with the line number of their first link."""
    first: dict[str, int] = {}
    for number, line in enumerate(parsed):
        for target in line.links:
            resolved = resolve_link(INDEX_NAME, target)
            if resolved and resolved not in first:
                first[resolved] = number
    return first


def topic_text(topic: TopicFile) -> str:
    """The content two copies of a memory would share (not the file name)."""
    return f"{topic.description}\n{topic.body}".strip()


def memories(store: Store, parsed: list[IndexLine] | None = None) -> list[Memory]:
    """Every topic file and inline rule, oldest (first indexed) first.

    `parsed` is `store.parsed_index()`, for a caller that has it already.
    Topics no index line points to come last, after every indexed memory.
    """
    found: list[Memory] = []
    parsed = store.parsed_index() if parsed is None else parsed
    linked = index_targets(parsed)
    unlinked_base = len(store.index_lines) + 1
    for rank, (path, topic) in enumerate(sorted(store.topics.items())):
        if is_archive(path):
            continue
        order = linked.get(path, unlinked_base + rank)
        found.append(Memory("topic", path, topic_text(topic), path, order, scope_of(path)))
    for number, line in enumerate(parsed):
        if line.kind == "rule":
            found.append(Memory("rule", line.text, line.hook, f"{INDEX_NAME} line {number + 1}",
                                number, "personal"))
    found.sort(key=lambda m: (m.order, m.key))
    return found


def editable(topic: TopicFile) -> bool:
    """A topic file we may edit: it follows the format, or has no frontmatter at all.

    A file with no frontmatter gets one when first edited; a file whose
    frontmatter is malformed or has a non-standard type is left alone, since
    fixing it would mean guessing what its author meant.
    """
    problems = topic.format_problems
    return not problems or problems == ["no frontmatter"]


def guess_type(path: str) -> str:
    stem = path.rsplit("/", 1)[-1]
    for type_ in ("feedback", "project", "reference", "user"):
        if stem.startswith(type_):
            return type_
    return "project"


def ensure_frontmatter(ws: Workspace, topic: TopicFile, reason: str) -> None:
    """Add minimal frontmatter to a file about to be edited that has none."""
    if topic.frontmatter is not None:
        return
    name = topic.heading or topic.stem
    topic.add_frontmatter(name, shorten(describe(ws, topic, name), MAX_LINE), guess_type(topic.path))
    ws.change(ChangeAction.UPDATED, topic.path, f"added frontmatter (name, description, type) because {reason}")


def describe(ws: Workspace, topic: TopicFile, name: str) -> str:
    """A description that says more than the name: the index hook, else the first line of text after the
    heading, else the name itself."""
    hooks = [line.hook for line in ws.store.parsed_index()
             if line.kind == "link" and resolve_link(INDEX_NAME, line.target) == topic.path]
    first_lines = [l.strip() for l in topic.body_lines if l.strip() and not l.lstrip().startswith("#")][:1]
    for text in [*hooks, *first_lines]:
        if content_keys(text) - word_keys(name):
            return text
    return name
