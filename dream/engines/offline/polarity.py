"""Opposite rules: "Never deploy on Fridays" and "Always deploy on Fridays" are a contradiction.

Two texts alike enough to be near-duplicates may still say opposite things:
one negates what the other asks ("Use mocks…" / "Don't use mocks…"), or
they hold the same words in another order ("use pnpm, never npm" / "use
npm, never pnpm"), or one denies a word the other says ("Use mocks for the
gateway" / "Don't mock the gateway, call the sandbox"). Such a pair is never
merged or taken as "already said"; a person settles it. The negation forms
come from the phrase files.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from dream.engines.offline.phrases import negation, polar
from dream.engines.offline.similarity import CJK, meta_tokens, normalize, stems_in_order, tokens

ALIKE_WITHOUT_NEGATION = 85.0  # how alike two rules are once "never", "always", "not" are taken out
# The words after a negation that it denies: the first one surely ("don't mock the gateway" denies
# mock; "no short names" denies short, not names), the next ones maybe ("no trailing period").
SURELY_DENIED, MAYBE_DENIED = 1, 3
_CLAUSE_END = re.compile(r"[,.;:!?()\[\]—–\n。、，；：！？]")


def negations(text: str) -> int:
    return len(negation().findall(text))


def opposite(a: str, b: str) -> bool:
    """Whether two alike texts say opposite things: one negates what the other says, or the words swap.

    "No abbreviations in names" and "Use full names" differ by a negation
    but say the same: only texts alike once the negations and rule leads
    are taken out, or where one denies a word the other says, count as
    negating each other.
    """
    if _denies_what_other_says(a, b) or _denies_what_other_says(b, a):
        return True
    if negations(a) != negations(b):
        bare_a, bare_b = (normalize(polar().sub(" ", text)) for text in (a, b))
        return fuzz.ratio(bare_a, bare_b) >= ALIKE_WITHOUT_NEGATION
    words_a, words_b = normalize(a).split(), normalize(b).split()
    return words_a != words_b and sorted(words_a) == sorted(words_b)


def denied(text: str, words: int = SURELY_DENIED) -> frozenset[str]:
    """The words `text` negates, by stem: the first `words` of the clause after each negation ("never
    squash a PR's commits" denies squash), or, in a script written without spaces, the characters
    on either side of it ("使わない")."""
    found: set[str] = set()
    for match in negation().finditer(text):
        if CJK.search(match.group()):
            before, after = text[max(0, match.start() - 2): match.start()], text[match.end(): match.end() + 2]
            found.update(tokens(normalize(before)) | tokens(normalize(after)))
        else:
            clause = _CLAUSE_END.split(text[match.end():], 1)[0]
            found.update([w for w in stems_in_order(clause) if len(w) > 2][:words])
    return frozenset(found)


def _denies_what_other_says(a: str, b: str) -> bool:
    """`a` negates a word that `b` says, nowhere near a negation of its own."""
    denied_a = denied(a)
    return bool(denied_a) and bool(denied_a & (meta_tokens("", b) - denied(b, MAYBE_DENIED)))
