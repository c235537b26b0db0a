"""The memories, indexed by word, kept current while requests edit the store.

Applying a request asks the store one of three questions: does a memory already say this (remember), which memory is
meant (forget), which memory states the value a correction contradicts. Answering each by re-parsing the index and
re-normalizing every memory made a log of N requests cost N times the store, and the store grows with every request
filed. The catalog reads the store once, keeps each memory's normalized texts in inverted word indexes, and is
updated in place as requests add, edit and remove memories, so a question looks only at the memories that share a
rare enough word with it, plus exact lookups where a wrong answer would remove the wrong memory.

Words are looked up by their first five letters (`key`), so that "deploys happen on Fridays" is still a candidate for
"deploy happens on friday"; the rapidfuzz score then decides, as it did when every memory was scored.

A memory's *rank* is its place in `orient.memories()` order, which decides between equal candidates: indexed memories
by their first index line (the lines of filed memories are appended), then topics no line points to.
"""

from __future__ import annotations

import math
import re
from bisect import insort
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache

from dream.engines.offline.dates import weekdays_named
from dream.engines.offline.orient import Memory, Workspace, memories, topic_text
from dream.engines.offline.phrases import language_of, negation, words
from dream.engines.offline.placement import insert_at
from dream.engines.offline.similarity import (
    FORGET_MIN,
    MAX_BLOCK,
    covers,
    forget_keys,
    forget_score,
    min_shared,
    normalize,
    tokens,
)
from dream.store.model import IndexLine, TopicFile, parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME

Rank = tuple[int, int, str]
RESTATED_SHARE = 0.8  # of a text's content words that a memory saying it in other words holds
RESTATED_MIN_WORDS = 3  # fewer content words than this say too little to be matched in other words
INDEXED, UNLINKED = 0, 1
KEY_CHARS = 5


def keys(normalized: str) -> frozenset[str]:
    """The lookup keys of a normalized text: its tokens cut to their first letters."""
    return frozenset(t[:KEY_CHARS] for t in tokens(normalized))


@dataclass
class Entry:
    memory: Memory
    rank: Rank
    norm: str  # the memory's text, normalized: what remember and corrections compare with
    keys: frozenset[str]
    forget_norm: str  # name, file name, description and index hooks: what "forget X" names
    named: frozenset[str]  # the keys of forget_norm


@dataclass(frozen=True)
class Line:
    """What the catalog keeps of an index line; lines with the same text are alike."""

    targets: frozenset[str]  # store paths it links
    entry_of: str | None  # the topic whose entry it is (a link line's target)
    hook: str  # for that topic's forget text
    rule: bool

    @classmethod
    def of(cls, line: IndexLine) -> Line:
        targets = frozenset(t for t in (resolve_link(INDEX_NAME, link) for link in line.links) if t is not None)
        entry_of = resolve_link(INDEX_NAME, line.target) if line.kind == "link" else None
        return cls(targets, entry_of, f"{line.title} {line.hook}", line.kind == "rule")


def forget_text(topic: TopicFile, hooks: list[str]) -> str:
    """What a person may call a topic: its name, heading, file name, description and index lines."""
    stem = topic.stem.replace("_", " ").replace("-", " ")
    return " ".join([topic.name, topic.heading or "", stem, topic.description, *hooks])


class Catalog:
    """Memories and index lines as read once, then edited along with the store.

    Index lines are numbered as first read, and filed lines after them.
    Removing lines does not renumber the others: only the order of numbers
    matters, and removal keeps it.
    """

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.threshold = ws.settings.similarity_threshold
        store = ws.store
        parsed = store.parsed_index()
        self.entries: dict[int, Entry] = {}
        self.topic_ids: dict[str, int] = {}
        self.rule_at: dict[int, int] = {}  # line number -> entry of the rule on that line
        self.by_key: dict[str, set[int]] = defaultdict(set)  # memory text keys
        self.by_norm: dict[str, set[int]] = defaultdict(set)
        self.by_named: dict[str, set[int]] = defaultdict(set)  # forget text keys
        self.lines: dict[str, Line] = {}
        self.texts: dict[int, str] = {}  # line number -> text
        self.numbers: dict[str, list[int]] = defaultdict(list)  # text -> its line numbers, ascending
        self.refs: dict[str, list[int]] = defaultdict(list)  # path -> numbers of lines linking it, ascending
        self.next_id = 0
        self.filed_after: dict[str, list[str]] = {}  # type -> the lines new ones of that type go after
        self.forgotten: list[frozenset[str]] = []  # the names of memories removed, for a forget said twice
        for number, line in enumerate(parsed):
            self._note_line(number, line)
        self.next_line = len(parsed)
        for memory in memories(store, parsed):
            self._add(memory, self._rank(memory))

    # ---------------------------------------------------------------- upkeep

    def _note_line(self, number: int, line: IndexLine) -> None:
        info = self.lines.get(line.text) or self.lines.setdefault(line.text, Line.of(line))
        self.texts[number] = line.text
        insort(self.numbers[line.text], number)  # appended, except when `replace_line` reuses a number
        for path in info.targets:
            insort(self.refs[path], number)

    def _rank(self, memory: Memory) -> Rank:
        """Its place in `orient.memories()` order: by first index line, then unlinked topics by path."""
        if memory.kind == "rule":
            return INDEXED, memory.order, memory.key
        refs = self.refs.get(memory.key)
        return (INDEXED, refs[0], memory.key) if refs else (UNLINKED, 0, memory.key)

    def _hooks(self, path: str) -> list[str]:
        found = []
        for number in self.refs.get(path, ()):
            line = self.lines[self.texts[number]]
            if line.entry_of == path:
                found.append(line.hook)
        return found

    def _add(self, memory: Memory, rank: Rank) -> None:
        if memory.kind == "topic":
            forget = forget_text(self.ws.store.topics[memory.key], self._hooks(memory.key))
        else:
            forget = memory.text
        norm, forget_norm = normalize(memory.text), normalize(forget)
        entry = Entry(memory, rank, norm, keys(norm), forget_norm, keys(forget_norm))
        key = self.next_id
        self.next_id += 1
        self.entries[key] = entry
        if memory.kind == "topic":
            self.topic_ids[memory.key] = key
        else:
            self.rule_at[rank[1]] = key
        for k in entry.keys:
            self.by_key[k].add(key)
        self.by_norm[entry.norm].add(key)
        for k in entry.named:
            self.by_named[k].add(key)

    def _drop(self, key: int) -> Entry:
        entry = self.entries.pop(key)
        for k in entry.keys:
            self.by_key[k].discard(key)
        self.by_norm[entry.norm].discard(key)
        for k in entry.named:
            self.by_named[k].discard(key)
        if entry.memory.kind == "topic":
            del self.topic_ids[entry.memory.key]
        return entry

    def _recatalog(self, path: str) -> None:
        """Catalog a topic again: its text, its hooks or its first index line changed."""
        old = self._drop(self.topic_ids[path]).memory
        memory = Memory("topic", path, topic_text(self.ws.store.topics[path]), old.label, old.order, old.scope)
        self._add(memory, self._rank(memory))

    def _unlink(self, numbers: list[int]) -> None:
        """Forget index lines removed from the store, and what they meant to other memories."""
        touched: set[str] = set()
        for number in numbers:
            text = self.texts.pop(number)
            self.numbers[text].remove(number)
            line = self.lines[text]
            for path in line.targets:
                self.refs[path].remove(number)
                touched.add(path)
            if line.rule and number in self.rule_at:
                self._drop(self.rule_at.pop(number))
        for path in sorted(touched):
            if path in self.topic_ids:  # a topic also linked from a removed line
                self._recatalog(path)

    # ---------------------------------------------------------------- edits

    def file_topic(self, path: str, line: str, type_: str = "") -> None:
        """Add the index line of a topic just added to the store (in its section), and catalog the topic."""
        lines = self.ws.store.index_lines
        anchors = self.filed_after.setdefault(type_, [])
        while anchors and anchors[-1] not in lines:  # forgotten since: each line leaves the stack once
            anchors.pop()
        if anchors:  # a list scan in C: the place is found by parsing once per type, not per request
            lines.insert(lines.index(anchors[-1]) + 1, line)
        else:
            position = insert_at(lines, type_)
            lines.insert(position, line)
            if position:
                anchors.append(lines[position - 1])
        anchors.append(line)
        number = self.next_line
        self.next_line += 1
        self._note_line(number, parse_index_line(line))
        memory = Memory("topic", path, topic_text(self.ws.store.topics[path]), path, number, "personal")
        self._add(memory, self._rank(memory))

    def file_rule(self, line: str, heading: str) -> None:
        """Add an inline rule at the end of the index, under `heading` (added once): for a layout whose index
        holds the memories themselves (Codex's handbook), where a new topic file would be found by nobody."""
        lines = self.ws.store.index_lines
        if heading not in lines:
            lines += [*([""] if lines and lines[-1].strip() else []), heading, ""]
        lines.append(line)
        number = self.next_line
        self.next_line += 1
        parsed = parse_index_line(line)
        self._note_line(number, parsed)
        self._add(Memory("rule", line, parsed.hook, f"{INDEX_NAME} line {len(lines)}", number, "personal"),
                  (INDEXED, number, line))

    def replace_line(self, old: str, new: str) -> None:
        """An index line's text changed in place (a correction): same place, new meaning."""
        lines = self.ws.store.index_lines
        lines[lines.index(old)] = new
        number = self.numbers[old][0]
        self._unlink([number])
        parsed = parse_index_line(new)
        self._note_line(number, parsed)
        if parsed.kind == "rule":
            self._add(Memory("rule", new, parsed.hook, f"{INDEX_NAME} line {number + 1}", number, "personal"),
                      (INDEXED, number, new))
        for path in sorted(self.lines[new].targets):
            if path in self.topic_ids:
                self._recatalog(path)

    def rules_stating(self, needle: str) -> list[Entry]:
        """Inline rules whose text holds `needle` (any case), in index order."""
        needle = needle.lower()
        found = [self.entries[k] for k in self.rule_at.values() if needle in self.entries[k].memory.text.lower()]
        return sorted(found, key=lambda e: e.rank)

    def hooks_of(self, path: str) -> list[str]:
        """The full text of the index lines that are a topic's entry."""
        return [self.texts[n] for n in self.refs.get(path, ()) if self.lines[self.texts[n]].entry_of == path]

    def refresh(self, path: str) -> None:
        """A topic's text changed (a correction)."""
        self._recatalog(path)

    def remove(self, memory: Memory) -> None:
        """Remove a memory and, as the engine always has, the index lines that point to it.

        A topic takes every line linking it; a rule, the first line with its text.
        """
        entry = self.entries.get(self.topic_ids[memory.key]) if memory.kind == "topic" else None
        self.forgotten.append(entry.named if entry else keys(normalize(memory.text)))
        lines = self.ws.store.index_lines
        if memory.kind == "topic":
            self._drop(self.topic_ids[memory.key])
            doomed = {self.texts[number] for number in self.refs.get(memory.key, ())}
            for text in doomed:
                while text in lines:  # a list scan in C: no parsing
                    lines.remove(text)
            self.ws.store.remove(memory.key)
            self._unlink(sorted(n for text in doomed for n in self.numbers[text]))
        else:
            lines.remove(memory.key)
            self._unlink([self.numbers[memory.key][0]])

    def was_forgotten(self, query: str) -> bool:
        """Whether a memory removed earlier in this run is the one `query` names."""
        wanted = forget_keys(query)
        return bool(wanted) and any(forget_score(wanted, named, frozenset()) >= FORGET_MIN
                                    for named in self.forgotten)

    def label(self, memory: Memory) -> str:
        """What the report calls a memory now: a rule by its line in the index as it stands."""
        if memory.kind == "rule":
            return f"{INDEX_NAME} line {self.ws.store.index_lines.index(memory.key) + 1}"
        return memory.label

    # ---------------------------------------------------------------- questions

    def covering(self, text: str) -> Memory | None:
        """The first memory (by rank) that already says `text`, if any, with each of its names and numbers.

        Candidates are the memories with the same normalized text, and those
        that share most of the text's keys (`similarity.min_shared`), found
        through its rarer keys: the filter of `similarity.similar_pairs`.
        """
        needle = normalize(text)
        if not needle:
            return None
        wanted = keys(needle)
        # Scoring is the cost (a log may repeat one phrasing thousands of times):
        # keep only the candidates that share most of the text's keys.
        enough = min_shared(len(wanted), self.threshold)
        exact = self.by_norm.get(needle, set())
        found = exact | {k for k in self._sharing(wanted) if len(wanted & self.entries[k].keys) >= enough}
        details = details_of(text)
        for key in sorted(found, key=lambda k: self.entries[k].rank):
            entry = self.entries[key]
            if entry.norm and details <= entry.keys and covers(needle, entry.norm, self.threshold):
                return entry.memory
        return self._restating(text, details)

    def _restating(self, text: str, details: frozenset[str]) -> Memory | None:
        """A memory that says `text` in other words: most of its content words, and every name and number.

        "commit subjects have to stay under 72 characters" is said by "Keep
        commit subjects under 72 characters". A name or a number the memory
        lacks ("Monday" for "Friday", "Node 20" for "Node 18") is new
        information, so such a text is never taken as said already.
        """
        said = _REDACTED.sub(" ", text)  # "[REDACTED:password]" says nothing about what a text is about
        content = frozenset(k for k in keys(normalize(said)) if k not in _function_keys())
        if len(content) < RESTATED_MIN_WORDS:
            return None
        enough = math.ceil(RESTATED_SHARE * len(content))
        present = sorted((k for k in content if self.by_key.get(k)), key=lambda k: (len(self.by_key[k]), k))
        if len(present) < enough:
            return None
        candidates = set().union(*(self.by_key[k] for k in present[:len(present) - enough + 1]))
        alike = [k for k in candidates
                 if len(content & self.entries[k].keys) >= enough and details <= self.entries[k].keys]
        if not alike:
            return None
        best = max(alike, key=lambda k: (len(content & self.entries[k].keys), [-n for n in self.entries[k].rank[:2]]))
        return self.entries[best].memory

    def said_in_another_language(self, text: str) -> Memory | None:
        """The one memory, in another language, that holds every word of `text` the store knows.

        "Immer pnpm benutzen, niemals npm!" against "Use pnpm in the web app, never
        npm": the names are shared and the German words are in no memory at all, so
        it is likely the same rule in another language. Filing it would make a second
        copy; a person decides. A name or number the memory lacks is new information.
        """
        said = _REDACTED.sub(" ", text)
        content = frozenset(k for k in keys(normalize(said)) if k not in _function_keys())
        known = [k for k in content if self.by_key.get(k)]
        if not known or len(known) == len(content):
            return None
        if len(known) == 1 and known[0] not in _written_as_name(said):
            return None  # one shared everyday word ("make", "commit") says nothing; one shared name may
        holders = set.intersection(*(self.by_key[k] for k in known))
        if len(holders) != 1 or any(len(self.by_key[k]) > 1 for k in known):
            return None
        entry = self.entries[next(iter(holders))]
        other = language_of(text) not in (None, language_of(entry.memory.text))
        return entry.memory if other and details_of(text) <= entry.keys else None

    def denying_a_name(self, text: str) -> Memory | None:
        """The memory holding a name that `text` says beside a negation, if any.

        "Priya ya no es la owner de payments, ahora es Marco" or "lint는 이제 ruff로
        해, flake8 말고", read neither as a correction nor as already said, would be
        filed beside the memory they contradict, and the store would say both.
        """
        if not negation().search(text):
            return None
        said = _REDACTED.sub(" ", text)
        named = [k for k in _written_as_name(said) if self.by_key.get(k)]
        if not named:
            return self._naming_the_same_weekday(said)
        content = keys(normalize(said))
        best = max(set().union(*(self.by_key[k] for k in named)),
                   key=lambda k: (len(content & self.entries[k].keys), [-n for n in self.entries[k].rank[:2]]))
        return self.entries[best].memory

    def _naming_the_same_weekday(self, text: str) -> Memory | None:
        """A memory naming a weekday `text` names, in any language: "on ne publie plus le jeudi" denies
        "releases ship on Thursdays" though the two share no word. Only asked for a remember with a negation."""
        days = weekdays_named(text)
        if not days:
            return None
        return next((e.memory for e in self.entries.values() if days & weekdays_named(e.memory.text)), None)

    def _sharing(self, wanted: frozenset[str]) -> set[int]:
        """Memories likely to share `min_shared` of the wanted keys, found without a scan.

        Such a memory lacks at most `slack` of the keys found in any memory,
        so it holds one of the slack + 1 rarest: their lists, when short,
        hold every such memory. When one is long (all the text's words are
        common in the store, as in a long log of one phrasing), see `_narrow`.
        """
        by_key = self.by_key
        present = sorted((k for k in wanted if by_key.get(k)), key=lambda k: (len(by_key[k]), k))
        slack = len(present) - min_shared(len(wanted), self.threshold)
        if slack < 0:
            return set()  # too few of its keys are in any memory
        rarest = [by_key[k] for k in present[:slack + 1]]
        if len(rarest[-1]) <= MAX_BLOCK:
            return set().union(*rarest)
        return _narrow([by_key[k] for k in present])

    def forget_match(self, query: str) -> tuple[Entry | None, float, list[Entry]]:
        """(entry, score, rivals): the memory a forget request names, by `similarity.forget_score`.

        Candidates share a key with the query in their name, title, description,
        hooks or text. `rivals` are the other memories with the best score:
        when there are any, the request is ambiguous and nothing may be removed.
        """
        wanted = forget_keys(query)
        if not wanted:
            return None, 0.0, []
        scored = []
        for key in self._sharing_any(wanted):
            entry = self.entries[key]
            score = forget_score(wanted, entry.named, entry.keys)
            if score >= FORGET_MIN:
                scored.append((-score, entry.rank, key))
        if not scored:
            return None, 0.0, []
        scored.sort()
        best = -scored[0][0]
        rivals = [self.entries[k] for s, _, k in scored[1:] if -s == best]
        return self.entries[scored[0][2]], best, rivals

    def naming_scores(self, wanted: frozenset[str]) -> Counter[int]:
        """Each memory holding a wanted key, scored: two for each key in its name or title, one for each only in
        its text. Counted along the keys' lists: a night's noticed sentences each scored all 20,000 memories."""
        scores: Counter[int] = Counter()
        for key in wanted:
            named = self.by_named.get(key, set())
            scores.update(named)
            scores.update(named)
            scores.update(self.by_key.get(key, set()) - named)
        return scores

    def _sharing_any(self, wanted: frozenset[str]) -> set[int]:
        """Memories that may reach FORGET_MIN: they hold one of the query's rarest keys."""
        def posting(k: str) -> set[int]:
            return self.by_named.get(k, set()) | self.by_key.get(k, set())

        present = sorted((posting(k) for k in wanted if k in self.by_named or k in self.by_key), key=len)
        need = int(-(-len(wanted) * FORGET_MIN // 100))  # keys a match holds at least
        if len(present) < need:
            return set()  # too few of its words are in any memory: a request that names nothing here
        # A match misses at most len(present) - need of the keys found in the store, so it holds
        # one of any len(present) - need + 1 of them: the rarest lists hold every candidate.
        rarest = present[:len(present) - need + 1]
        if len(rarest[-1]) <= MAX_BLOCK:
            return set().union(*rarest)
        return _narrow(present)

    def stating(self, wrong: str) -> list[Entry]:
        """Topic memories whose keys include all of `wrong`'s, by rank.

        A text where `wrong` stands as whole words has all its tokens, so
        this holds every memory the correction's exact pattern can match.
        """
        wanted = keys(normalize(wrong))
        if wanted:
            postings = sorted((self.by_key.get(k, set()) for k in wanted), key=len)
            candidates = postings[0].intersection(*postings[1:])
        else:
            candidates = set(self.entries)
        found = [self.entries[k] for k in candidates if self.entries[k].memory.kind == "topic"]
        return sorted(found, key=lambda e: e.rank)


def _narrow(lists: list[set[int]]) -> set[int]:
    """The memories in the first (rarest) list, narrowed by the next lists while they are many.

    For a text whose every word is common in the store: the candidates are
    the memories that hold its rarest words (a set intersection in C, not a
    scan), so a near-duplicate that differs from it in exactly those words
    is missed. The price of not scoring a crowd of similar memories for
    every request of a long log.
    """
    if not lists:
        return set()
    found = lists[0]
    for more in lists[1:]:
        if len(found) <= MAX_BLOCK:
            break
        narrowed = found & more
        if narrowed:
            found = narrowed
    return found


__all__ = ["Catalog", "Entry", "forget_text"]


@cache
def _function_keys() -> frozenset[str]:
    """Keys of the words that carry a sentence (data/phrases, `function`): not what a text is about."""
    return frozenset(k for w in words("function") for k in keys(normalize(w)))


_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")
_NAME_OR_NUMBER = re.compile(r"(?<=\s)[A-Z][\w.-]*|\S*\d\S*")


def _written_as_name(text: str) -> frozenset[str]:
    """Keys of its capitalized words, the first too, and of anything with a digit ("Releases", "flake8")."""
    return keys(normalize(" ".join(re.findall(r"(?<!\w)[A-Z][\w.-]*|\S*\d\S*", text))))


def details_of(text: str) -> frozenset[str]:
    """Keys of its capitalized words after the first, and of anything with a digit: what makes a fact.

    A memory that lacks one of them does not say the text already, however
    alike the rest reads ("the freeze starts on Monday" against "…on Friday").
    """
    return keys(normalize(" ".join(_NAME_OR_NUMBER.findall(text))))
