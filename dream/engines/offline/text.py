"""Short-text helpers shared by the phases: shortening and index lines."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from dream.store.model import format_index_line
from dream.store.validate import MAX_LINE_CHARS

MAX_LINE = MAX_LINE_CHARS
ELLIPSIS = "…"


def one_line(text: str) -> str:
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:—-") + ELLIPSIS


def fit_line(title: str, target: str, hook: str, limit: int = MAX_LINE, sep: str = " — ") -> str:
    """An index line within `limit` characters: the hook is cut first, then the title."""
    title = one_line(title).replace("[", "(").replace("]", ")")
    line = format_index_line(title, target, "")
    room = limit - len(line) - len(sep)
    if room < 0:
        title_room = limit - len(format_index_line("", target, ""))
        return format_index_line(shorten(title, max(title_room, 1)), target, "")
    hook = shorten(hook, room) if hook else ""
    return format_index_line(title, target, hook, sep) if hook and room >= 8 else line

def slug(text: str, words: int = 6) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    parts = re.findall(r"[a-z0-9]+", ascii_text.lower())[:words]
    if len(parts) >= 2:
        return "_".join(parts)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
