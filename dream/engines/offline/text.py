"""Short-text helpers shared by the phases: shortening and index lines."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from dream.store.model import format_index_line
from dream.store.validate import MAX_LINE_CHARS

MAX_LINE = MAX_LINE_CHARS
ELLIPSIS = "…"
# A quotation, in the marks of the languages dream reads: what someone else said (or an error
# message), never the writer's own request, and never a date to resolve.
QUOTATION = r'"[^"\n]+"|“[^”\n]+”|«[^»\n]+»|„[^“”\n]+[“”]|「[^」\n]+」|『[^』\n]+』'


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

# Words a file name or a title can do without.
_FILLER = frozenset("""
a an the that this these those is are was were be been being to of in on at for and or with by it its as
i my me we our you your now today please also just really very there here which who will would should
""".split())


_DANGLING = _FILLER | frozenset("after before into than from then so but if when while not no".split())


def short_slug(text: str, words: int = 4) -> str:
    """A short file-name stem: the first content words, without dates or fillers."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    parts = [p for p in re.findall(r"[a-z0-9]+", ascii_text.lower()) if p not in _FILLER and not p.isdigit()]
    if len(parts) >= 2:
        return "_".join(parts[:words])
    return slug(text, words)


_MARKER = re.compile(r"\s*\[REDACTED:[^\]\s]*\]")
_MARKER_TAIL = re.compile(r"\s+(?:is|are|=|:)?\s*$")


def short_title(text: str, words: int = 8) -> str:
    """A title of a few words: the first clause, without a leading article or "that", nor a redacted secret."""
    text = _MARKER_TAIL.sub("", _MARKER.sub("", text)) or text  # "the key is [REDACTED:…]" -> "the key"
    head = re.split(r",\s|;\s|\s[-–—]\s|\s(?:because|since|so that|which)\s|[:：。，]", text, maxsplit=1)[0]
    head = re.sub(r"^(?:that|the|a|an)\s+", "", head.strip(), flags=re.I)
    head = re.sub(r"\s+(?:on|as of|in the week of|in|since|until)\s+\d{4}-\d{2}(?:-\d{2})?$", "", head)  # in the hook
    if " " in head and len(head.split()) > words:
        kept = head.split()[:words]
        while len(kept) > 2 and kept[-1].lower() in _DANGLING:  # "… into the" reads cut off
            kept.pop()
        head = " ".join(kept)
    elif " " not in head and len(head) > 40:  # CJK: no spaces
        head = head[:20]
    head = head.rstrip(" ,;:.")
    return head[:1].upper() + head[1:]


# "I prefer uv" → "prefers uv": the memory speaks of the user, not as them.
_FIRST_PERSON = re.compile(
    r"^(?:i|I)(?:'m|’m| am)\b|^(?:i|I)(?:'ve|’ve| have)\b|^(?:i|I) (?:don't|do not)\b|^(?:i|I) (\w+)")
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "can": "can", "will": "will", "was": "was"}


def third_person(text: str) -> str:
    """English first-person wording as the third person ("I prefer X" → "prefers X"); other text as it is."""
    match = _FIRST_PERSON.match(text)
    if not match:
        return text
    said = match.group(0).lower().replace("’", "'")
    if said in ("i'm", "i am"):
        verb = "is"
    elif said in ("i've", "i have"):
        verb = "has"
    elif said in ("i don't", "i do not"):
        verb = "doesn't"
    else:
        verb = _conjugate(match.group(1).lower())
    rest = re.sub(r"\bmy\b", "their", text[match.end():])
    return f"{verb}{rest}"


def _conjugate(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def slug(text: str, words: int = 6) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    parts = re.findall(r"[a-z0-9]+", ascii_text.lower())[:words]
    if len(parts) >= 2:
        return "_".join(parts)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
