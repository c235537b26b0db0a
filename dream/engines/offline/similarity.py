"""Finding near-duplicate texts without comparing every pair.

Comparing all pairs is quadratic: 5,000 memories would be 12.5 million
rapidfuzz calls. Instead we use *prefix filtering*: each text's tokens are
sorted from rarest to commonest, and two texts are compared only if they
share one of the rare tokens at the front of that order. Two texts that are
90% alike share most of their tokens, so they almost surely share a rare one;
texts without any rare token in common are never compared. A length filter
then drops pairs whose sizes alone rule out the threshold, and rapidfuzz
scores what is left.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from functools import cache
from operator import itemgetter

from rapidfuzz import fuzz, process

from dream.engines.offline import phrases

# Scripts written without spaces between words: kana, Han, Hangul.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CHARS}]")  # compiled at once: every night reads the phrase files' CJK words
CJK_FLOOR = CJK_CHARS[0]  # the ranges go up: none of their characters is below the first
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
MAX_BLOCK = 40  # tokens in more texts than this are not used to pick candidates


def normalize(text: str) -> str:
    """Lowercase, unify Unicode forms, drop punctuation and extra spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    # "_" too: names like feedback_small_prs are words, not one key that starts like every other name
    text = _PUNCTUATION.sub(" ", text)
    return " ".join(text.split())


_PUNCTUATION = re.compile(r"[^\w\s]|_")  # compiled once: `normalize` runs on every line a night compares


def says_something(text: str) -> bool:
    """Whether `text` carries a rule or a fact of its own, not just a label: three words at least, or six
    characters in a script written without spaces."""
    norm = normalize(text)
    return len(norm.split()) >= 3 or len(CJK.findall(norm)) >= 6


def names_a_fact(text: str) -> bool:
    """Whether a remember holds a word of a fact: "all of this for next time", "das alles für das nächste
    Mal" and "今日のこと全部" do not (data/phrases, `naming_nothing` and `naming_no_fact`), nor does one that
    points back ([words] `points_back`: "the second one, not the CI thing", "das von eben") with two fact
    words or fewer beside it, or one of two words or fewer and no number: what it means was said before."""
    back = points_back().search(text)
    if not says_something(text) and not _DIGIT.search(text):
        return False  # "remember the port", "remember the fix": what it means was said before
    return _fact_words(points_back().sub(" ", text)) > (2 if back else 0)


def _fact_words(text: str) -> int:
    """How many words of `text` are no `naming_no_fact` word (a run of CJK counts one per three characters)."""
    found = 0
    for word in normalize(text).split():
        if word in _no_fact_words():
            continue
        if CJK.search(word):
            for part in _no_fact_parts():  # no spaces to split on: what is left once they are taken out
                word = word.replace(part, "")
        found += len(word) // 3 + 1 if word and CJK.search(word) else bool(word)
    return found


@cache
def points_back() -> re.Pattern[str]:
    return phrases._words_pattern(lambda lang: lang.words.get("points_back", []))


@cache
def _no_fact_words() -> frozenset[str]:
    return _stopwords() | frozenset(w.lower() for w in phrases.words("naming_no_fact"))


@cache
def _no_fact_parts() -> tuple[str, ...]:
    return tuple(sorted((w for w in _no_fact_words() if CJK.search(w)), key=len, reverse=True))


def tokens(normalized: str) -> set[str]:
    """Words for alphabetic scripts, character pairs for CJK (no spaces there)."""
    if not CJK.search(normalized):
        return set(normalized.split())  # `normalize` left only word characters and single spaces
    found: set[str] = set()
    for word in _WORD.findall(normalized):
        if CJK.search(word):
            chars = [c for c in word]
            found.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                found.add(word)
        else:
            found.add(word)
    return found


def min_shared(size: int, threshold: float) -> int:
    """How many of a text's `size` tokens a near-duplicate of it shares, at least.

    Character ratio and token overlap are not the same measure, so the
    overlap is set a good deal below the rapidfuzz threshold to stay generous.
    """
    overlap = max(0.4, threshold / 100 - 0.15)
    return math.ceil(overlap * size)


def prefix_length(size: int, threshold: float) -> int:
    """How many rarest tokens to index so that similar texts share one.

    Two sets that share at least k of a text's `size` tokens share at least
    one of any size - k + 1 of them: we take the rarest.
    """
    return max(1, size - min_shared(size, threshold) + 1)


def similar_pairs(texts: list[str], threshold: float, scopes: list[str] | None = None
                  ) -> list[tuple[int, int, float]]:
    """Pairs (i, j, score) with i < j whose rapidfuzz ratio reaches `threshold`.

    Texts are compared only within the same scope (e.g. ``team`` vs personal
    memories). Empty texts never match.
    """
    scopes = scopes or [""] * len(texts)
    norms = [normalize(t) for t in texts]
    token_sets = [tokens(n) for n in norms]
    frequency: dict[tuple[str, str], int] = defaultdict(int)
    for scope, toks in zip(scopes, token_sets):
        for tok in toks:
            frequency[(scope, tok)] += 1
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    pairs: list[tuple[int, int, float]] = []
    for j, (scope, toks) in enumerate(zip(scopes, token_sets)):
        if not norms[j]:
            continue
        ordered = sorted(toks, key=lambda t: (frequency[(scope, t)], t))
        prefix = ordered[: prefix_length(len(ordered), threshold)]
        # A token found in very many texts blocks nothing: comparing along it
        # is what makes all-pairs quadratic. Near-duplicates share nearly all
        # their tokens, so they still meet on a rarer one.
        prefix = [t for t in prefix if frequency[(scope, t)] <= MAX_BLOCK] or prefix[:1]
        candidates: set[int] = set()
        for tok in prefix:
            candidates.update(postings[(scope, tok)])
            postings[(scope, tok)].append(j)
        if candidates:
            earlier = sorted(candidates)
            # One call scores all of them, with rapidfuzz's own cut-offs (a length too
            # different cannot reach the threshold): a Python call per pair was half the time.
            found = process.extract(norms[j], [norms[i] for i in earlier], scorer=fuzz.ratio,
                                    score_cutoff=threshold, limit=None)
            pairs.extend((earlier[k], j, score) for _, score, k in sorted(found, key=itemgetter(2)))
    return pairs


def subset_pairs(token_sets: list[frozenset[str]], min_size: int = 3) -> list[tuple[int, int, float]]:
    """Pairs (i, j, 100) with i < j where one set holds every token of the other (at least `min_size`).

    For names and descriptions: "Full variable names: no abbreviations" holds
    every word of "Variable names: use full variable names". The smaller
    set's rarest token must be in the larger one, so only the texts holding
    it are compared.
    """
    frequency: dict[str, int] = defaultdict(int)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, toks in enumerate(token_sets):
        for tok in toks:
            frequency[tok] += 1
            postings[tok].append(i)
    found: set[tuple[int, int]] = set()
    for i, toks in enumerate(token_sets):
        if len(toks) < min_size:
            continue
        rarest = min(toks, key=lambda t: (frequency[t], t))
        for j in postings[rarest]:
            if j != i and toks <= token_sets[j] and (toks != token_sets[j] or i < j):
                found.add((min(i, j), max(i, j)))
    return [(i, j, 100.0) for i, j in sorted(found)]


def meta_tokens(name: str, description: str) -> frozenset[str]:
    """The words of a memory's name and description that say what it is about, by their stem
    (first four letters: "tests" and "test", "pushing" and "push" are one word). A number is
    kept whole: ticket 12345 and ticket 12346 are two memories, not one."""
    return frozenset(stem(t) for t in tokens(normalize(f"{name} {description}")) if t not in _stopwords() and len(t) > 1)


def stem(word: str) -> str:
    return word if has_digit(word) else word[:4]


def stems_in_order(text: str) -> list[str]:
    """`meta_tokens` of a text written with spaces, in the order they are said."""
    return [stem(w) for w in normalize(text).split() if w not in _stopwords() and len(w) > 1]


def numbers_in(text: str) -> frozenset[str]:
    """The words of `text` that hold a digit (ports, versions, counts, addresses, dates), whole."""
    return frozenset(t for t in tokens(normalize(text)) if has_digit(t))


def has_digit(word: str) -> bool:
    return _DIGIT.search(word) is not None


def content_keys(text: str) -> frozenset[str]:
    """The words that carry what `text` says, by their first letters (KEY_CHARS): numbers, CJK
    character pairs, and words of four letters or more that are not stopwords."""
    return frozenset(t[:KEY_CHARS] for t in tokens(normalize(text))
                     if t not in _stopwords() and (len(t) >= 4 or CJK.search(t) or has_digit(t)))


def word_keys(text: str) -> frozenset[str]:
    """Every word of `text` by its first letters: what `content_keys` of another text are looked up in."""
    return frozenset(t[:KEY_CHARS] for t in tokens(normalize(text)))


def covers(needle: str, hay: str, threshold: float) -> bool:
    """Whether `hay` already says `needle` (both normalized, non-empty).

    Their ratio reaches the threshold, or, for a longer memory that may hold
    the request among other lines, the request's best window in it does.
    """
    if fuzz.ratio(needle, hay, score_cutoff=threshold) >= threshold:
        return True
    return (len(needle) >= 20 and len(hay) > len(needle)
            and fuzz.partial_ratio(needle, hay, score_cutoff=threshold) >= threshold)


def group_pairs(count: int, pairs: list[tuple[int, int, float]]) -> list[list[int]]:
    """Connected groups (size >= 2) of the pairs, each sorted, in order of first member."""
    parent = list(range(count))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, _ in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    for x in range(count):
        groups[find(x)].append(x)
    return [sorted(g) for _, g in sorted(groups.items()) if len(g) > 1]


# Words that say nothing about which memory is meant ("forget about the X", "olvida lo de X").
@cache
def _stopwords() -> frozenset[str]:
    """Words that name no memory: "the", "note", "über", "メモ" (data/phrases, `naming_nothing`)."""
    return frozenset(w.lower() for w in phrases.words("naming_nothing"))



FORGET_MIN = 75.0  # share of a forget request's words a memory must hold to be the one meant
KEY_CHARS = 5  # words compare by their first letters: "approval" finds "approvals"


def forget_query(query: str) -> str:
    """The words of a forget request that say which memory is meant (all, if only stopwords)."""
    words = normalize(query).split()
    return " ".join(w for w in words if w not in _stopwords()) or " ".join(words)


# CJK words for "that entry", "the note about": no spaces to find them by, so they are cut out.
_CJK_FILLER = re.compile(r"那条|这条|那个|这个|笔记|记录|备忘|关于|有关|的|のメモ|メモ|について|메모|관련")


def forget_keys(query: str) -> frozenset[str]:
    """The forget request's words, as lookup keys (CJK as character pairs)."""
    query = _CJK_FILLER.sub(" ", query)
    return frozenset(t[:KEY_CHARS] for t in tokens(forget_query(query)) if t not in _stopwords())


def forget_score(wanted: frozenset[str], named: frozenset[str], said: frozenset[str]) -> float:
    """How well a memory fits a forget request, 0-100.

    100 when every word of the request is in what the memory is called
    (name, title, description, index hook); a word found only in its text
    counts a little less, so a memory named after the subject wins over
    one that mentions it in passing.
    """
    if not wanted:
        return 0.0
    in_name = len(wanted & named) / len(wanted)
    anywhere = len(wanted & (named | said)) / len(wanted)
    return round(100 * max(in_name, 0.95 * anywhere), 1)


# ---------------------------------------------------------------- alike by name, description and body

DESCRIBED_MIN = 52.0  # weighted share of each memory's statement that the other one says too
DECLINED_MIN = 60.0  # a pair kept apart by a word of one name that says this much of the same: a person is asked
STATEMENT_MIN = 5  # words a statement needs to be compared in other words: "Testing standards" says too little
WEIGHT_FLOOR = 20  # a small store has no word counts to go by: weigh its words as if among this many memories
_URL = re.compile(r"\b(?:https?://|www\.)[A-Za-z0-9.:/%?#=&~+_-]+", re.I)
# A capital after a word and a space, not after the end of a sentence or a list mark: a proper name ("Alice").
_PROPER = re.compile(r"(?<=[\w,)] )[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'-]*")


def facts(text: str, names_too: bool = True) -> frozenset[str]:
    """What a memory states that a reworded copy must state as well: numbers, addresses and, with
    `names_too`, names written with a capital inside a sentence ("Alice", "Postgres")."""
    found = {url.rstrip(".,:").lower() for url in _URL.findall(text)}
    rest = _URL.sub(" ", text)
    found.update(t for t in tokens(normalize(rest)) if has_digit(t))
    if names_too:
        found.update(normalize(name) for name in _PROPER.findall(rest))
    return frozenset(found)


def described_pairs(docs: list[tuple[str, str, str]], threshold: float = DESCRIBED_MIN,
                    declined: list[tuple[int, int, float]] | None = None) -> list[tuple[int, int, float]]:
    """Pairs (i, j, score) with i < j of memories that say the same thing in other words.

    `docs` are (name, statement, body): the statement is what the memory says
    it is (its description). Each one's statement must be said by the other
    (in its name, statement or body), words weighed by how rare they are in
    the store: the score is the smaller of the two shares. Never alike: a
    name holds a word of its own statement that the other memory never uses
    ("Backend deploys" / "Frontend deploys", "Code review" / "Security
    review"), or each statement holds a fact the other lacks (port 8080 /
    port 5432, Alice / Bob). A pair kept apart only by a word of one name
    (the other's subjects all said by it) that says at least DECLINED_MIN
    of the same goes into `declined`, for a person to decide. Only memories whose
    names share a word are compared, and a word in more than MAX_BLOCK names
    picks none, so the cost stays linear in the number of memories.
    """
    said = [meta_tokens("", statement) for _, statement, _ in docs]
    whole = [meta_tokens(name, f"{statement}\n{body}") for name, statement, body in docs]
    names = [meta_tokens(name, "") for name, _, _ in docs]
    # What a memory is about: the words of its name that its statement uses too ("com" in "Pacotes
    # com pnpm" is too short to be one); the other memory must say every one of them.
    subjects = [frozenset(t for t in n & s if len(t) >= 4 or CJK.search(t) or has_digit(t))
                for n, s in zip(names, said)]
    frequency: dict[str, int] = defaultdict(int)
    for toks in whole:
        for tok in toks:
            frequency[tok] += 1
    size = max(len(docs), WEIGHT_FLOOR)

    def weight(toks: frozenset[str]) -> float:
        return sum(math.log(1 + size / frequency[t]) for t in toks)

    # Only for the few memories compared: held for every memory, they double the memory used.
    @cache
    def text(j: int) -> str:
        return "\n".join(docs[j]).lower()

    @cache
    def stated(i: int) -> frozenset[str]:
        name, statement, _ = docs[i]
        return facts(name, names_too=False) | facts(statement)

    @cache
    def words(j: int) -> set[str]:
        return tokens(normalize(text(j)))

    def lacks(i: int, j: int) -> bool:
        """Whether memory j leaves out a fact memory i states."""
        return any(f not in (text(j) if "/" in f or "." in f else words(j)) for f in stated(i))

    def share(i: int, j: int) -> float:
        return 100 * min(weight(said[i] & whole[j]) / weight(said[i]), weight(said[j] & whole[i]) / weight(said[j]))

    def alike(i: int, j: int) -> float:
        if lacks(i, j) and lacks(j, i):
            return 0.0
        own = (bool(subjects[i] - whole[j]), bool(subjects[j] - whole[i]))
        if any(own):
            # only one names a subject the other never says: perhaps one rule, worded two ways
            if declined is not None and not all(own) and share(i, j) >= DECLINED_MIN:
                declined.append((i, j, round(share(i, j), 1)))
            return 0.0
        return share(i, j)

    named: dict[str, list[int]] = defaultdict(list)
    for i, toks in enumerate(names):
        for tok in toks:
            named[tok].append(i)
    pairs: list[tuple[int, int, float]] = []
    for j, toks in enumerate(names):
        if len(said[j]) < STATEMENT_MIN:
            continue
        candidates = {i for tok in toks if len(named[tok]) <= MAX_BLOCK for i in named[tok] if i < j}
        for i in sorted(candidates):
            score = alike(i, j) if len(said[i]) >= STATEMENT_MIN else 0.0
            if score >= threshold:
                pairs.append((i, j, round(score, 1)))
    return sorted(pairs)
