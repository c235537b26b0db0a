"""What the instruction files already say (dream/engines/instructions.py), for the offline engine.

- A memory that only repeats instruction lines (each of its statements at the duplicate threshold) is
  removed as housekeeping, with the file and line as evidence. A memory that says anything more is kept
  and the repeated line is listed for a person: nothing found nowhere else is ever removed.
- A remember or rule request whose content an instruction states files nothing, and says so.
- A memory or a request that disagrees with an instruction (the same sentence with another value: a port,
  a version, pnpm for npm; or one negating the other) goes to a person with both lines. When unsure, nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from dream.engines.base import EngineInput
from dream.engines.instructions import Instruction, load_instructions
from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import Memory, Workspace, memories
from dream.engines.offline.polarity import opposite
from dream.engines.offline.requests import Request
from dream.engines.offline.similarity import normalize, says_something, tokens
from dream.engines.offline.text import shorten
from dream.store.model import TopicFile, resolve_link
from dream.store.tree import INDEX_NAME

_DIGIT = re.compile(r"\d")
ASKED_KINDS = ("remember", "rule")  # requests to file something; forgets and corrections are another matter
SUMMARY_ALIKE = 90.0  # a description this alike to a body line summarizes it
MIN_SHARED = 2  # words two lines must share before one is read as the other with another value
CANDIDATE_ALIKE = 70.0  # ratio below which two lines are not read as disagreeing by one value only
CANDIDATES = 8  # the lines most alike a statement that are checked for a disagreement


@dataclass
class Known:
    """The instruction lines, each normalized once: a store's every statement is compared with all of them."""

    rules: list[Instruction]
    threshold: float  # `similarity_threshold`: what counts as the same statement
    norms: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.norms = [normalize(rule.text) for rule in self.rules]

    def repeating(self, text: str) -> Instruction | None:
        """The instruction saying the same statement, at the threshold duplicates are merged at."""
        norm = normalize(text)
        if not says_something(norm):
            return None
        found = process.extractOne(norm, self.norms, scorer=fuzz.ratio, score_cutoff=self.threshold)
        if found is None or disagree(text, self.rules[found[2]].text):  # "port 5433" is no repeat of "port 5432"
            return None
        return self.rules[found[2]]

    def disagreeing(self, text: str) -> Instruction | None:
        """The first instruction saying the same thing with one value changed, or its opposite.

        Only the lines most alike are looked at (one C call over all of them): a line that disagrees shares
        all its words but a value or a negation. `ratio`, not `token_set_ratio`: 35 times as fast."""
        alike = process.extract(normalize(text), self.norms, scorer=fuzz.ratio,
                                score_cutoff=CANDIDATE_ALIKE, limit=CANDIDATES)
        return next((self.rules[i] for _, _, i in alike if disagree(text, self.rules[i].text)), None)


def load(inp: EngineInput) -> Known:
    return Known(load_instructions(inp.store_root, inp.settings), inp.settings.similarity_threshold)


def drop_said(ws: Workspace, known: Known, requests: list[Request]) -> list[Request]:
    """The requests left once those an instruction already states, or contradicts, are told to a person."""
    if not known.rules:
        return requests
    kept = []
    for request in requests:
        said = f"“{shorten(request.sentence, 100)}” (session {request.session}, line {request.seq + 1})"
        asks = request.kind in ASKED_KINDS and request.plain
        if asks and (rule := known.repeating(request.text)):
            ws.ask(f"{said} asks to remember what {rule.where} already says (“{shorten(rule.text, 80)}”); "
                   "nothing filed: the agent reads that file every session")
        elif asks and (rule := known.disagreeing(request.text)):
            ws.ask(f"{said} disagrees with {rule.where} (“{shorten(rule.text, 80)}”); nothing filed: "
                   "a person decides which holds, and changes the instruction file or says so again")
        else:
            kept.append(request)
    return kept


def tidy(ws: Workspace, known: Known, pinned: set[str]) -> None:
    """Remove memories that only repeat instructions; list partial repeats and contradictions for a person."""
    if not known.rules:
        return
    for memory in memories(ws.store):
        if memory.path in pinned:
            continue
        statements = _statements(ws, memory)
        repeats = [(line, known.repeating(line)) for line in statements]
        hits = [(line, rule) for line, rule in repeats if rule is not None]
        if hits and len(hits) == len(statements) and memory.scope != "team":
            _remove(ws, memory, hits)
        elif hits:
            kept = "it is a team memory others rely on" if memory.scope == "team" else "the memory says more"
            _ask_about_repeats(ws, memory, hits, kept)
        for line, rule in repeats:
            contra = known.disagreeing(line) if rule is None else None
            if contra is not None:
                ws.ask(f"{memory.label} says “{shorten(line, 80)}” but {contra.where} says "
                       f"“{shorten(contra.text, 80)}”; nothing changed: a person decides which holds")


def disagree(a: str, b: str) -> bool:
    """Conservative: the same words with other numbers ("port 5433" / "port 5432"), the same sentence with
    one word swapped ("use pnpm for installs" / "use npm for installs"), or one negating the other."""
    words_a, words_b = normalize(a).split(), normalize(b).split()
    if words_a == words_b or not words_a or not words_b:
        return False
    numbers_a, numbers_b = _numbers(words_a), _numbers(words_b)
    if numbers_a and numbers_b and numbers_a.isdisjoint(numbers_b):
        rest_a, rest_b = tokens(" ".join(words_a)) - numbers_a, tokens(" ".join(words_b)) - numbers_b
        small, large = sorted((rest_a, rest_b), key=len)
        return len(small) >= MIN_SHARED and small <= large
    if len(words_a) == len(words_b) and len(words_a) > MIN_SHARED:
        swapped = [(x, y) for x, y in zip(words_a, words_b) if x != y]
        return len(swapped) == 1 and len(tokens(" ".join(words_a)) & tokens(" ".join(words_b))) >= MIN_SHARED
    return fuzz.token_set_ratio(words_a, words_b) >= 90 and opposite(a, b)


def _numbers(words: list[str]) -> frozenset[str]:
    return frozenset(word for word in words if _DIGIT.search(word))


def _statements(ws: Workspace, memory: Memory) -> list[str]:
    """What the memory says: an inline rule's text, or a topic's body lines (not headings, not its source
    line), and its description when the body does not say it."""
    if memory.kind == "rule":
        return [memory.text]
    topic = ws.store.topics[memory.key]
    lines = [_bare(line) for line in topic.body_lines]
    lines = [line for line in lines if line and not line.startswith("#") and not _provenance(line)]
    description = topic.description.strip()
    if description and says_something(description) and not any(_summarizes(description, line) for line in lines):
        lines.append(description)
    return lines


def _summarizes(description: str, line: str) -> bool:
    """The description says nothing the line does not: its words are among the line's, or it is a part of it."""
    short, long = normalize(description), normalize(line)
    return max(fuzz.token_set_ratio(short, long), fuzz.partial_ratio(short, long)) >= SUMMARY_ALIKE


def _bare(line: str) -> str:
    line = line.strip()
    return line[2:].strip() if line.startswith(("- ", "* ", "+ ")) else line


def _provenance(line: str) -> bool:
    """A line dream writes under a memory it files: where it came from, no statement of its own."""
    return line.startswith("Source: session ")


def _remove(ws: Workspace, memory: Memory, hits: list[tuple[str, Instruction]]) -> None:
    evidence = "; ".join(f"“{shorten(line, 60)}” is {rule.where}" for line, rule in hits)
    if memory.kind == "rule":
        ws.store.index_lines.remove(memory.key)  # not archived: the instruction file keeps its words
        ws.change(ChangeAction.MERGED, INDEX_NAME, f"inline rule only repeats {hits[0][1].where}", evidence,
                  hits[0][1].file)
        return
    topic: TopicFile = ws.store.topics[memory.key]
    links = [line for line in ws.store.parsed_index() if resolve_link(INDEX_NAME, line.target) == memory.key]
    for line in links:
        if line.text in ws.store.index_lines:
            ws.store.index_lines.remove(line.text)
    ws.store.remove(topic.path)
    ws.change(ChangeAction.DELETED, memory.key, f"only repeats {hits[0][1].where}, which the agent loads every session",
              evidence, hits[0][1].file)


def _ask_about_repeats(ws: Workspace, memory: Memory, hits: list[tuple[str, Instruction]], kept: str) -> None:
    for line, rule in hits:
        ws.ask(f"{memory.label}: “{shorten(line, 80)}” repeats {rule.where}; {kept}, so it was kept: remove "
               "that line by hand if the instruction file is where it belongs")
