"""Opposite rules: "Never deploy on Fridays" and "Always deploy on Fridays" are a contradiction.

Two texts alike enough to be near-duplicates may still say opposite things:
one negates what the other asks ("Use mocks…" / "Don't use mocks…"), or
they hold the same words in another order ("use pnpm, never npm" / "use
npm, never pnpm"). Such a pair is never merged or taken as "already said";
a person settles it. The negation forms come from the phrase files.
"""

from __future__ import annotations

from rapidfuzz import fuzz

from dream.engines.offline.phrases import negation, polar
from dream.engines.offline.similarity import normalize

ALIKE_WITHOUT_NEGATION = 85.0  # how alike two rules are once "never", "always", "not" are taken out


def negations(text: str) -> int:
    return len(negation().findall(text))


def opposite(a: str, b: str) -> bool:
    """Whether two alike texts say opposite things: one negates what the other says, or the words swap.

    "No abbreviations in names" and "Use full names" differ by a negation
    but say the same: only texts alike once the negations and rule leads
    are taken out count as negating each other.
    """
    if negations(a) != negations(b):
        bare_a, bare_b = (normalize(polar().sub(" ", text)) for text in (a, b))
        return fuzz.ratio(bare_a, bare_b) >= ALIKE_WITHOUT_NEGATION
    words_a, words_b = normalize(a).split(), normalize(b).split()
    return words_a != words_b and sorted(words_a) == sorted(words_b)
