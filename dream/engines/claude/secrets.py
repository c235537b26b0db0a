"""Secrets already in the memory files: hidden from the model, put back where it keeps them.

A user's memory may hold a secret (a token pasted into a topic file before
dream redacted anything). The model must not see it, and the dream must not
destroy it either. So, for one run, a `SecretTable` replaces every secret in
memory text the model is shown (the first message, the memory tool's
``view``) with a numbered marker, ``[REDACTED:github-token#1]``, using the
one redaction implementation (`dream.redaction.redact`), and remembers which
secret each number stands for. When the model writes a file, each number it
kept becomes the original bytes again (`restore`), so an untouched line keeps
its secret byte for byte.

Only memory text gets numbers. Session text was redacted when it was
gathered, with plain ``[REDACTED:kind]`` markers that stand for nothing and
are never restored: a secret from a log never reaches a memory file. A
numbered marker the table does not know (one the model made up, or copied
from a log that quoted one) is written as a plain marker.
"""

from __future__ import annotations

import re

from dream.redaction.redact import redact

NUMBERED = re.compile(r"\[REDACTED:([a-z0-9-]+)#([0-9]+)\]")
# A secret found once is hidden wherever its text appears again, even where the
# patterns would miss it (a diff line, a cut index): but only a long one, so
# that a short value ("-pab") does not blank out ordinary words.
MIN_SWEPT_CHARS = 8
MAX_NESTING = 4


class SecretTable:
    """One run's numbered markers and the secrets they stand for."""

    def __init__(self) -> None:
        self._originals: dict[str, str] = {}  # marker -> the secret's original text
        self._markers: dict[str, str] = {}  # original text -> its marker (one number per secret)

    def __len__(self) -> int:
        return len(self._originals)

    def hide(self, text: str) -> str:
        """`text` with every secret replaced by its numbered marker."""
        text, _ = redact(text, self._mark)
        for original in sorted(self._markers, key=len, reverse=True):
            if len(original) >= MIN_SWEPT_CHARS and original in text:
                text = text.replace(original, self._markers[original])
        return text

    def restore(self, text: str) -> str:
        """`text` with each known numbered marker back to its secret, and unknown ones made plain.

        Again while that changes something (a few passes at most): a pattern that matched part of
        an earlier marker stands for text that is itself half a marker.
        """
        for _ in range(MAX_NESTING):
            restored = NUMBERED.sub(lambda m: self._originals.get(m.group(0), plain(m)), text)
            if restored == text:
                break
            text = restored
        return text

    def _mark(self, kind: str, secret: str) -> str:
        # A pattern may match across an earlier marker (a URL password holding a
        # token): the number stands for the original text, markers restored.
        original = self.restore(secret)
        marker = self._markers.get(original)
        if marker is None:
            marker = f"[REDACTED:{kind}#{len(self._originals) + 1}]"
            self._originals[marker] = original
            self._markers[original] = marker
        return marker


def plain(marker: re.Match[str]) -> str:
    return f"[REDACTED:{marker.group(1)}]"


def without_numbers(text: str) -> str:
    """`text` with numbered markers made plain: for the model's summary, which goes into the report."""
    return NUMBERED.sub(plain, text)
