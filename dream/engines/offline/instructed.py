"""What the instruction files already say (dream/engines/instructions.py), for the offline engine.

- A memory that only repeats instruction lines (each of its statements at the duplicate threshold) is
  removed as housekeeping, with the file and line as evidence. A memory that says anything more is kept
  and the repeated line is listed for a person: nothing found nowhere else is ever removed.
- A remember or rule request whose content an instruction states files nothing, and says so; so does one
  that names what a line names (its key tokens: a tool, a command, a number, a name) in other words or
  another language, below the duplicate threshold: a person sees both lines and decides whether to file it.
- A request repeating a nested file's line (packages/api/AGENTS.md, loaded only while the agent works there)
  files nothing either: a person decides whether the memory is needed.
- A memory or a request that disagrees with an instruction (the same sentence with another value: a port,
  a version, pnpm for npm; or one negating the other) goes to a person with both lines; so does a correction
  calling stale a value an instruction line states. When unsure, nothing.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from functools import cache

from rapidfuzz import fuzz, process

from dream.engines.base import EngineInput
from dream.engines.instructions import (CLAUDE_NAMES, CODEX_NAMES, Instruction, load_instructions,
                                        nested_instructions)
from dream.engines.offline import corrections
from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import Memory, Workspace, memories
from dream.engines.offline.phrases import (_alternation, _small_words, language_of, languages, negation,
                                           words)
from dream.engines.offline.polarity import negations, opposite
from dream.engines.offline.requests import Request
from dream.engines.offline.similarity import (CJK, CJK_CHARS, content_keys, facts, normalize, says_something,
                                               tokens, word_keys)
from dream.engines.offline.text import LazyPattern, ScriptPattern, shorten
from dream.store.model import TopicFile, resolve_link
from dream.store.layouts import LayoutKind, layout_of
from dream.store.tree import INDEX_NAME

_DIGIT = re.compile(r"\d")
TASK_GROUP = "# Task Group:"  # a Codex handbook block (codex-rs/memories)
_INSTRUCTION_FILE = re.compile(
    "|".join(rf"(?<![\w.]){re.escape(name)}(?!\w)" for name in (*CLAUDE_NAMES, *CODEX_NAMES)), re.I)
_SCOPED = re.compile(r"`[^`]+`|\w/\w|\w/(?!\S)")  # a heading naming a path or `a name` ("## packages/api")
_CWD = re.compile(r"\bcwd=([^\s;,)]+)")
_SCRIPT_RUN = LazyPattern(f"[{CJK_CHARS}]+|[^\\s{CJK_CHARS}]+")  # CJK runs apart from the words around them
ASKED_KINDS = ("remember", "rule")  # requests to file something; forgets and corrections are another matter
CHANGE_KINDS = ("correction", "update")  # requests to change a value a memory states
MIN_SHARED = 2  # words two lines must share before one is read as the other with another value
CANDIDATE_ALIKE = 70.0  # ratio below which two lines are not read as disagreeing by one value only
CANDIDATES = 8  # the lines most alike a statement that are checked for a disagreement
SHORT_REQUEST = 2  # naming words of a request so short that one shared with a line makes it about that line
SURE_SMALL_WORDS = 2  # small words ("auf", "immer", "the") a request needs before its language is told
TOUCHING_WORDS = 2  # content words a request shares with an instruction before a person is asked about it
HOOK_NEW_WORDS = 2  # words of its own an index hook needs to say more than its file
CONTENT_LETTERS = 4  # a word this long names something (shorter: "the", "use", "für", "que")
# Key tokens: what names a thing whatever the language around it. `code`, identifiers (dream_test, a.b, --flag,
# camelCase), all capitals (CI, DB), words without a vowel (pnpm, npm), and a Latin word in another script.
_CODE_SPAN = re.compile(r"`([^`]+)`")
_IDENTIFIER = re.compile(r"[\w-]*\w[._/:=@][\w./:=@-]*\w|(?<!\S)--?[A-Za-z][\w-]*|\b[a-z]+[A-Z]\w*|\b[A-Z]{2,}\b")
_VOWELLESS = re.compile(r"(?<![^\W\d_])[b-df-hj-np-tv-xz]{2,}(?![^\W\d_])", re.IGNORECASE)
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*")
_NON_LATIN = ScriptPattern(f"[{CJK_CHARS}\u0400-\u04ff\u0590-\u06ff\u0900-\u097f]", "\u0400")  # Cyrillic is its lowest


@dataclass
class Known:
    """The instruction lines, each normalized once: a store's every statement is compared with all of them."""

    rules: list[Instruction]
    threshold: float  # `similarity_threshold`: what counts as the same statement
    agent: LayoutKind = LayoutKind.CLAUDE_CODE  # the agent of the store: only its own files go without saying
    nested: list[Instruction] = field(default_factory=list)  # subfolders' files, loaded only while working there
    norms: list[str] = field(init=False)
    words: list[set[str]] = field(init=False)  # each line's tokens
    keys: list[frozenset[str]] = field(init=False)  # each line's key tokens
    scripts: set[str] = field(init=False)  # the scripts the lines are written in (LATIN, CYRILLIC …)
    languages: set[str] = field(init=False)  # the languages the lines are written in, where their small words say

    def __post_init__(self) -> None:
        self.norms = [normalize(rule.text) for rule in self.rules]
        self.words = [tokens(norm) for norm in self.norms]
        self.keys = [key_tokens(rule.text) for rule in self.rules]
        self.scripts = {script_of(rule.text) for rule in self.rules} - {""}
        files = {rule.file: "" for rule in self.rules}
        for rule in self.rules:  # a file's lines together tell its language where a short line alone cannot
            files[rule.file] += f" {rule.text}"
        texts = [*files.values(), *(rule.text for rule in self.rules)]
        self.languages = {lang for text in texts if (lang := language_of(text))}

    def repeating(self, text: str, adding: bool = False) -> Instruction | None:
        """The instruction saying the same statement, at the threshold duplicates are merged at.

        `adding`: a request may word it its own way ("remember that we …"), since filing nothing is told to a
        person; a memory removed for it must add no word to the instruction."""
        norm = normalize(text)
        if not says_something(norm):
            return None
        found = process.extractOne(norm, self.norms, scorer=fuzz.ratio, score_cutoff=self.threshold)
        if found is None:
            return None
        rule = self.rules[found[2]]
        if turned_around(rule.heading):  # "## Avoid" / "- Push to main": the words say the opposite
            return None
        if rule.scope or _SCOPED.search(rule.heading):  # "When working in packages/api:" narrows the line: the
            return None  # memory saying it without that says more, or something else
        if negations(text) != negations(rule.text):  # "Run migrations by hand" is no repeat of "Never run …"
            return None
        # "port 5433" is no repeat of "port 5432"
        same = adds_nothing(norm, found[0]) and drops_nothing(norm, found[0])
        if not (adding or same) or disagree(text, rule.text):
            return None
        return rule

    def disagreeing(self, text: str) -> Instruction | None:
        """The first instruction saying the same thing with one value changed, or its opposite.

        Only the lines most alike are looked at (one C call over all of them): a line that disagrees shares
        all its words but a value or a negation. `ratio`, not `token_set_ratio`: 35 times as fast."""
        alike = process.extract(normalize(text), self.norms, scorer=fuzz.ratio,
                                score_cutoff=CANDIDATE_ALIKE, limit=CANDIDATES)
        return next((self.rules[i] for _, _, i in alike if disagree(text, self.rules[i].text)), None)


    def in_another_script(self, text: str) -> Instruction | None:
        """The first instruction line, when the request is written in a script no line is written in (a Russian
        remember beside an English CLAUDE.md): they share no word, so no comparison here can tell whether it
        repeats one; only a person can."""
        mine = script_of(text)
        return self.rules[0] if mine and self.scripts and mine not in self.scripts else None

    def in_another_language(self, text: str) -> Instruction | None:
        """The first instruction line, when a request is plainly in another language than every line ("merk dir:
        antworte immer auf Englisch" beside an English CLAUDE.md): its small words are another language's, at
        least twice as many as of any line's language. They may share no word and still say the same."""
        scores = _language_scores(text)
        best = max(scores.values(), default=0)
        if best < SURE_SMALL_WORDS or not self.languages:
            return None
        return self.rules[0] if max(scores.get(lang, 0) for lang in self.languages) * 2 < best else None

    def touching(self, text: str, short: bool = False) -> Instruction | None:
        """The instruction sharing the most content words with a request, two at least: one in another language
        or other words may repeat it or disagree with it, which only a person can tell. `short`: a request naming
        two things at most needs one ("tabs, never spaces" beside "Indent with tabs"; not "yarn for installs in
        the api package" beside "Use pnpm for installs", which adds to the line)."""
        mine = _content(normalize(text))
        shared = [(len(mine & _content(norm)), rule) for rule, norm in zip(self.rules, self.norms)]
        most, rule = max(shared, key=lambda pair: pair[0], default=(0, None))
        naming = {word for word in mine if word not in _small() and not negation().fullmatch(word)}
        enough = 1 if short and len(naming) <= SHORT_REQUEST else TOUCHING_WORDS
        return rule if most >= enough else None

    def keyed(self, text: str, values_only: bool = False) -> tuple[Instruction, frozenset[str]] | None:
        """The instruction naming what a statement names, with the key tokens both name; or None.

        A line qualifies when it names at least one key token of the statement's (or the statement names one
        of the line's, or, in another language, shares a content word with it) and either names every number
        and identifier of the statement, so the statement may say it again in other words or another language,
        or names the same thing with other numbers ("Node
        18" / "Node 20"), so it may disagree. `values_only`: only the second."""
        mine, words, language = key_tokens(text), tokens(normalize(text)), language_of(text)
        best: tuple[int, Instruction, frozenset[str]] | None = None
        for rule, norm, line_words, line_keys in zip(self.rules, self.norms, self.words, self.keys):
            shared = frozenset((mine & line_words) | (line_keys & words))
            if language_of(rule.text) not in (None, language):  # the statement's words are not of the line's tongue
                shared |= _content(normalize(text)) & _content(norm)  # a term kept across languages ("release")
            if not shared:
                continue
            values, line_values = _numbers(list(mine)), _numbers(list(line_keys))
            names = shared - values
            other_value = bool(names) and bool(values) and bool(line_values) and values.isdisjoint(line_values)
            covered = _must_name(text, mine) <= line_words
            if (other_value or (covered and not values_only)) and (best is None or len(shared) > best[0]):
                best = (len(shared), rule, shared)
        return None if best is None else (best[1], best[2])


_ONE_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK"}  # Japanese writes three as one


@cache
def _not_in_force() -> re.Pattern[str]:
    """A heading or lead-in word under which lines are no rule in force ([words] `not_in_force`: "Avoid", "Don'ts",
    "À éviter", "禁止", "Deprecated", "Example"): a word's start where words are spaced ("Avoid" reads "avoiding"),
    anywhere where not. Reading too many headings so only keeps more memories."""
    spaced = [w for lang in languages() if lang.spaced for w in words("not_in_force", (lang,))]
    unspaced = [w for lang in languages() if not lang.spaced for w in words("not_in_force", (lang,))]
    return re.compile(f"(?<!\\w)(?:{_alternation(spaced) or '(?!)'})|(?:{_alternation(unspaced) or '(?!)'})", re.I)


def turned_around(over: str) -> bool:
    """Whether what a line stands under negates it or puts it out of force ("## Never do this", "Avoid:", "- Don't:",
    "## Deprecated", "### Example")."""
    return bool(over) and bool(negation().search(over) or _not_in_force().search(over))


def script_of(text: str) -> str:
    """The script the text is written in (LATIN, CYRILLIC, HANGUL, CJK …), '' for none. Latin words inside
    another script are names and terms ("항상 pnpm 써"): the other script decides."""
    found = Counter(_ONE_SCRIPT.get(name, name) for name in
                    (unicodedata.name(ch, "?").split(" ", 1)[0] for ch in text if ch.isalpha()))
    other = [name for name, _ in found.most_common() if name != "LATIN"]
    return other[0] if other else ("LATIN" if found else "")


def _language_scores(text: str) -> dict[str, int]:
    """How many small words of each language `text` uses (as `language_of` counts them)."""
    spaced = {w.lower() for w in re.findall(r"\w+(?:'\w+)?", text)}
    return {lang.code: len(spaced & small) if lang.spaced else sum(w in text for w in small)
            for lang, small in _small_words()}


def key_tokens(text: str) -> frozenset[str]:
    """The words of `text` that name a thing in any language: numbers, names written with a capital inside a
    sentence, `code`, identifiers, all-capital words, words without a vowel, a Latin word among another script."""
    found: set[str] = set()
    for name in facts(text):
        found.update(tokens(normalize(name)))
    pieces = [*_CODE_SPAN.findall(text), *_IDENTIFIER.findall(text), *_VOWELLESS.findall(text)]
    if _NON_LATIN.search(text):
        pieces += _LATIN_RUN.findall(text)
    for piece in pieces:
        found.update(tokens(normalize(piece)))
    return frozenset(word for word in found if len(word) > 1 or word.isdigit())


def _must_name(text: str, keys: frozenset[str]) -> frozenset[str]:
    """The key tokens a line must name for a statement to add nothing to it: its numbers and identifiers. A
    capitalized word may be only a German noun, and an acronym ("DB") another word for the line's ("database"):
    they name the subject rather than add to it."""
    pieces = [*_CODE_SPAN.findall(text), *(p for p in _IDENTIFIER.findall(text) if not p.isupper())]  # DB, CI: names
    exact = {word for piece in pieces for word in tokens(normalize(piece))}
    return frozenset(word for word in keys if _DIGIT.search(word) or word in exact)


def load(inp: EngineInput) -> Known:
    agent = layout_of(inp.store_root, inp.settings.layout).kind
    return Known(load_instructions(inp.store_root, inp.settings), inp.settings.similarity_threshold, agent,
                 nested_instructions(inp.store_root, inp.settings))


def drop_said(ws: Workspace, known: Known, requests: list[Request]) -> list[Request]:
    """The requests left once those an instruction already states, or contradicts, are told to a person."""
    if not known.rules and not known.nested:
        return requests
    in_subfolders = Known(known.nested, known.threshold)
    kept = []
    for request in requests:
        said = f"“{shorten(request.sentence, 100)}” (session {request.session}, line {request.seq + 1})"
        held = request.plain and _why_held(known, in_subfolders, request)
        if held:
            ws.ask(f"{said} {held}")
        else:
            kept.append(request)
    return kept


NESTED_NOTE = "; the agent loads that file only while it works in that folder"


def _why_held(known: Known, in_subfolders: Known, request: Request) -> str:
    """Why a plain request files or changes nothing (the rest of a note for a person), or '' to apply it."""
    if request.kind in ASKED_KINDS:
        if named := _INSTRUCTION_FILE.search(request.text):  # "always pnpm (it's in CLAUDE.md already)"
            return (f"names the instruction file {named.group()}: nothing filed; a person decides whether it "
                    "belongs in memory, or in that file, which the agent reads every session")
        return _held(known, request.text) or _held(in_subfolders, request.text, NESTED_NOTE)
    return _changes_a_line(known, request.text) if request.kind in CHANGE_KINDS else ""


def _changes_a_line(known: Known, text: str) -> str:
    """Why a correction files nothing: the value it calls stale is what an instruction line states ("5433 now,
    not 5432" beside "listens on port 5432"); changing the memory alone would make it contradict the line."""
    fix = corrections.parse(text)
    if fix is None or not (stale := tokens(normalize(fix.wrong))):
        return ""
    rule = next((rule for rule, words in zip(known.rules, known.words) if stale <= words), None)
    if rule is None:
        return ""
    return (f"calls “{shorten(fix.wrong, 40)}” stale, which {rule.where} states (“{shorten(rule.text, 80)}”); "
            "nothing changed: the agent reads that file every session, so a person changes the line there first "
            "(or tells the memory it still holds)")


def _held(known: Known, text: str, where_loaded: str = "") -> str:
    """Why a request to file `text` files nothing (the rest of a note for a person), or '' to file it."""
    if not known.rules:
        return ""
    if rule := known.repeating(text, adding=True):
        return (f"asks to remember what {rule.where} already says (“{shorten(rule.text, 80)}”){where_loaded}; "
                "nothing filed: the agent reads that file every session" if not where_loaded else
                f"asks to remember what {rule.where} already says (“{shorten(rule.text, 80)}”){where_loaded}; "
                "nothing filed: a person decides whether a memory is needed beside it")
    if rule := known.disagreeing(text):
        return (f"disagrees with {rule.where} (“{shorten(rule.text, 80)}”){where_loaded}; nothing filed: "
                "a person decides which holds, and changes the instruction file or says so again")
    if rule := known.touching(text, short=True):
        return (f"is about what {rule.where} says (“{shorten(rule.text, 80)}”){where_loaded}; nothing filed: "
                "a person decides whether it repeats, contradicts or adds to that line")
    if found := known.keyed(text):
        rule, shared = found
        return (f"names what {rule.where} names ({', '.join(sorted(shared))}): “{shorten(rule.text, 80)}”"
                f"{where_loaded}; {rule.file}:{rule.line} may already say this, or say otherwise: nothing "
                "filed; file it anyway if it adds to that line")
    if rule := known.in_another_script(text):
        return (f"is said in another script than the instruction files ({rule.file} …){where_loaded}: whether they "
                "already say it cannot be told without a translation; nothing filed: file it anyway if it is new")
    if rule := known.in_another_language(text):
        return (f"is said in another language than the instruction files ({rule.file} …){where_loaded}: whether "
                "they already say it cannot be told without a translation; nothing filed: file it anyway if it is new")
    return ""


def tidy(ws: Workspace, known: Known, pinned: set[str]) -> None:
    """Remove memories that only repeat instructions; list partial repeats and contradictions for a person."""
    if not known.rules and not known.nested:
        return
    in_subfolders = Known(known.nested, known.threshold)
    for memory in memories(ws.store):
        if memory.path in pinned:
            continue
        statements = _statements(ws, memory)
        repeats = [(line, known.repeating(line)) for line in statements]
        hits = [(line, rule) for line, rule in repeats if rule is not None]
        cwds = _group_cwds(ws, memory) if hits else []  # a scan of the handbook: only for a memory that repeats
        if hits and len(hits) == len(statements) and memory.scope != "team" and _loaded(known, hits, cwds):
            _remove(ws, memory, hits)
        elif hits:
            _ask_about_repeats(ws, memory, hits, _why_kept(known, memory, hits, statements, cwds))
        for line, rule in repeats:
            nested = in_subfolders.repeating(line) if rule is None else None
            if nested is not None:
                ws.ask(f"{memory.label}: “{shorten(line, 80)}” repeats {nested.where}, which the agent loads only "
                       "while it works in that folder; kept: a person decides whether the memory is needed")
                continue
            contra = known.disagreeing(line) if rule is None else None
            if contra is not None:
                ws.ask(f"{memory.label} says “{shorten(line, 80)}” but {contra.where} says "
                       f"“{shorten(contra.text, 80)}”; nothing changed: a person decides which holds")
            elif rule is None and (near := known.touching(line)) is not None:
                ws.ask(f"{memory.label} says “{shorten(line, 80)}” and {near.where} says "
                       f"“{shorten(near.text, 80)}”, "
                       "on the same subject; nothing changed: a person checks that they agree")
            elif rule is None and (keyed := known.keyed(line, values_only=True)) is not None:
                ws.ask(f"{memory.label} says “{shorten(line, 80)}” and {keyed[0].where} says "
                       f"“{shorten(keyed[0].text, 80)}”: the same {', '.join(sorted(keyed[1]))} with other "
                       "numbers; nothing changed: a person decides which holds")


def _loaded(known: Known, hits: list[tuple[str, Instruction]], cwds: list[str]) -> bool:
    """Every repeated line is in a file this store's agent loads (Claude Code does not read AGENTS.md), and loads
    where the memory holds: a Codex task group of another checkout is read while a project's file is not."""
    return all(known.agent in rule.agents and _loads_in(rule, cwds) for _, rule in hits)


def _loads_in(rule: Instruction, cwds: list[str]) -> bool:
    """A project's file is loaded in its folder and below; a global one everywhere."""
    return not rule.folder or all(Path(cwd).is_relative_to(rule.folder) for cwd in cwds)


def _group_cwds(ws: Workspace, memory: Memory) -> list[str]:
    """The folders a Codex handbook bullet's task group says it applies to (`applies_to: cwd=…`, its rollouts'
    `cwd=…`); none for a Claude Code memory, whose store is its project's."""
    lines = ws.store.index_lines
    if memory.kind != "rule" or memory.key not in lines:
        return []
    at = lines.index(memory.key)
    start = next((i for i in range(at, -1, -1) if lines[i].startswith(TASK_GROUP)), None)
    if start is None:
        return []
    end = next((i for i in range(at, len(lines)) if lines[i].startswith(TASK_GROUP)), len(lines))
    return [cwd for line in lines[start:end] for cwd in _CWD.findall(line)]


def _why_kept(known: Known, memory: Memory, hits: list[tuple[str, Instruction]], statements: list[str],
              cwds: list[str]) -> str:
    if memory.scope == "team":
        return "it is a team memory others rely on"
    if len(hits) < len(statements):
        return "the memory says more"
    if away := next((rule for _, rule in hits if known.agent in rule.agents and not _loads_in(rule, cwds)), None):
        return (f"its task group applies to {', '.join(sorted(set(cwds)))}, and the agent loads {away.file} only "
                f"while it works in {away.folder}")
    other = LayoutKind.CODEX if known.agent == LayoutKind.CLAUDE_CODE else LayoutKind.CLAUDE_CODE
    return f"only {other.value} loads that file, not the agent of this memory"


def disagree(a: str, b: str) -> bool:
    """Conservative: the same words with other numbers ("port 5433" / "port 5432"), the same sentence with
    one word swapped ("use pnpm for installs" / "use npm for installs") or two words swapping places ("pnpm, never
    npm" / "npm, never pnpm"), or one negating the other."""
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
        if sorted(words_a) == sorted(words_b):  # "use npm, never pnpm" / "use pnpm, never npm": the words swap
            return True
        return len(swapped) == 1 and len(tokens(" ".join(words_a)) & tokens(" ".join(words_b))) >= MIN_SHARED
    return fuzz.token_set_ratio(" ".join(words_a), " ".join(words_b)) >= 90 and opposite(a, b)


def adds_nothing(statement: str, instruction: str) -> bool:
    """Every word of the (normalized) statement is in the instruction: a line alike at the threshold may still
    add a place, a branch or a package ("… before pushing to release"), a fact found nowhere else."""
    return tokens(statement) <= tokens(instruction)


def drops_nothing(statement: str, instruction: str) -> bool:
    """The (normalized) statement leaves out no word of the instruction but small ones ("the", "always"): one
    leaving out "non" of "non-production", "after 3pm" or "full" states another rule, broader or the opposite."""
    return all(word in _small() for word in tokens(instruction) - tokens(statement))


@cache
def _small() -> frozenset[str]:
    """Words whose absence changes no rule: function words and rule leads ("always"), not negations."""
    return frozenset(normalize(w) for lang in languages() for w in [*lang.words.get("function", []),
                                                                     *lang.leads.get("rule", [])]
                     if not negation().fullmatch(w))


def _content(normalized: str) -> set[str]:
    """Words that name something (a tool, a port, a branch), not "the", "use" or "for": four letters or more or
    a digit, and pairs of CJK characters; a Latin name inside CJK text ("pnpmを使う") is a word of its own."""
    found: set[str] = set()
    # without a CJK character the runs are the words: `normalize` left single spaces between them
    for run in _SCRIPT_RUN.compiled.findall(normalized) if CJK.search(normalized) else normalized.split():
        if CJK.match(run):
            found.update(run[i:i + 2] for i in range(len(run) - 1))
        elif len(run) >= CONTENT_LETTERS or _DIGIT.search(run):
            found.add(run)
    return found


def _numbers(words: list[str]) -> frozenset[str]:
    return frozenset(word for word in words if _DIGIT.search(word))


def _statements(ws: Workspace, memory: Memory) -> list[str]:
    """What the memory says: an inline rule's text, or a topic's body lines (not headings, not its source
    line), and its description and name when they say something the body does not ("… in the web package")."""
    if memory.kind == "rule":
        return [memory.text]
    topic = ws.store.topics[memory.key]
    lines = [_bare(line) for line in topic.body_lines]
    lines = [line for line in lines if line and not line.startswith("#") and not _provenance(line)]
    description, name = topic.description.strip(), topic.name.strip()
    body = normalize(" ".join(lines))
    if description and says_something(description) and not adds_nothing(normalize(description), body):
        lines.append(description)
    if name and not adds_nothing(normalize(name), normalize(" ".join([*lines, description]))):
        lines.append(name)  # a short name may still say where the rule holds ("Staging only")
    for hook in _hooks(ws, memory.key):  # the index line may say what the file does not ("web package only")
        if _hook_adds(hook, " ".join([*lines, description, name])):
            lines.append(hook)
    return lines


def _hook_adds(hook: str, said: str) -> bool:
    """An index hook is a short summary in words of its own ("pnpm, not npm"): it adds to what the file says
    when it names a thing the file does not (a number, a name, `code`) or two words the file never uses."""
    new_keys = key_tokens(hook) - tokens(normalize(said))
    return bool(new_keys) or len(content_keys(hook) - word_keys(said)) >= HOOK_NEW_WORDS


def _hooks(ws: Workspace, path: str) -> list[str]:
    return [line.hook.strip() for line in ws.store.parsed_index()
            if line.kind == "link" and resolve_link(INDEX_NAME, line.target) == path and line.hook.strip()]


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
