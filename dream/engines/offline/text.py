"""Short-text helpers shared by the phases: shortening and index lines."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import cached_property

from dream.store.model import format_index_line
from dream.store.validate import MAX_LINE_CHARS

MAX_LINE = MAX_LINE_CHARS
ELLIPSIS = "…"
# A quotation, in the marks of the languages dream reads: what someone else said (or an error
# message), never the writer's own request, and never a date to resolve.
QUOTATION = r'"[^"\n]+"|“[^”\n]+”|«[^»\n]+»|„[^“”\n]+[“”]|「[^」\n]+」|『[^』\n]+』'


class LazyPattern:
    """A regex compiled at its first use. Python's re compiles in Python, and a class of the CJK ranges costs a
    millisecond or more wherever it is written: patterns that only some texts need (a CJK sentence) are then
    compiled only in a process that meets such a text."""

    def __init__(self, regex: str, flags: int = 0):
        self.regex, self.flags = regex, flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def sub(self, replacement: str, text: str) -> str:
        return self.compiled.sub(replacement, text)


class ScriptPattern(LazyPattern):
    """A `LazyPattern` every match of which holds a character at or above `floor` (a class of CJK ranges, whose
    compile is the costly part): a text without one is answered without compiling it, so a night of Latin text
    never compiles it. `max` is C's loop over the text, and an ASCII text is told at once."""

    def __init__(self, regex: str, floor: str, flags: int = 0):
        super().__init__(regex, flags)
        self.floor = floor

    def may_match(self, text: str) -> bool:
        return not text.isascii() and max(text) >= self.floor

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text) if self.may_match(text) else None

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text) if self.may_match(text) else None

    def findall(self, text: str) -> list[str]:
        return self.compiled.findall(text) if self.may_match(text) else []

    def sub(self, replacement: str, text: str) -> str:
        return self.compiled.sub(replacement, text) if self.may_match(text) else text


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
    parts = [p for p in name_words(text) if p not in _FILLER and not p.isdigit()]
    if len(parts) >= 2:
        return "_".join(parts[:words])
    return slug(text, words)


_MARKER = re.compile(r"\s*\[REDACTED:[^\]\s]*\]")
_MARKER_TAIL = re.compile(r"\s+(?:is|are|=|:)?\s*$")
# A marker inside a URL or an address ("postgres://ledger:[REDACTED:…]@db:5432/app") hides one part of a value
# whose other parts (host, port, database) are still worth remembering.
_MARKER_IN_ADDRESS = re.compile(r"\S*(?:://|@)\S*\[REDACTED:[^\]\s]*\]|\[REDACTED:[^\]\s]*\]\S*@")


def without_secrets(text: str) -> str:
    """The text without its redaction markers: "[REDACTED:stripe-key]" is no word the user said."""
    return _MARKER.sub(" ", text)


def only_a_secret(text: str) -> bool:
    """Whether what `text` would have a memory hold is a redacted secret itself ("the staging token is
    [REDACTED:…]", "always use [REDACTED:…] for releases"): such a memory says only that a secret exists."""
    return _MARKER.search(text) is not None and _MARKER_IN_ADDRESS.search(text) is None


def short_title(text: str, words: int = 8) -> str:
    """A title of a few words: the first clause, without a leading article or "that", nor a redacted secret."""
    text = _MARKER_TAIL.sub("", _MARKER.sub("", text)) or text  # "the key is [REDACTED:…]" -> "the key"
    head = re.split(r",\s|;\s|\s[-–—]\s|\s(?:because|since|so that|which)\s|[:：。，]", text, maxsplit=1)[0]
    head = re.sub(r"^(?:that|the|a|an)\s+", "", head.strip(), flags=re.I)
    head = re.sub(r"\s+(?:on|as of|in the week of|in|since|until)\s+\d{4}-\d{2}(?:-\d{2})?$", "", head)  # in the hook
    if " " in head and len(head.split()) > words:
        head = " ".join(phrase_end(head.split(), words))
    elif " " not in head and len(head) > 40:  # CJK: no spaces
        head = head[:20]
    head = head.rstrip(" ,;:.")
    return head[:1].upper() + head[1:]


# Words that open a new phrase: a title cut before one ends where a phrase ends ("… test", not "… test next").
_PHRASE_OPENERS = frozenset("""
to in on at for with by from into onto over under after before during until since because when while if unless
and or but so than then which that who whom whose where via per through across about against between without
within as like of instead including except
""".split())
# Words that open a phrase together with the next one: "next to", "close to", "due to", "instead of".
_PHRASE_LEADS = frozenset("next close due prior according ahead apart rather instead along".split())


def phrase_end(words: list[str], most: int) -> list[str]:
    """At most `most` of `words`, ending where a phrase ends, never on a word that needs the next one."""
    if len(words) <= most:
        return words
    ends = [i for i in range(2, most + 1) if words[i].lower() in _PHRASE_OPENERS]
    cut = ends[-1] if ends else most
    if cut > 2 and words[cut - 1].lower() in _PHRASE_LEADS:  # "next | to the fix": the phrase began a word earlier
        cut -= 1
    kept = words[:cut]
    while len(kept) > 2 and kept[-1].lower() in _DANGLING:  # "… into the" reads cut off
        kept.pop()
    return kept


def phrase_title(text: str, limit: int) -> str:
    """`text` on one line in at most `limit` characters, cut where a phrase ends rather than mid-phrase."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    words, used = [], -1
    for word in text.split():
        used += len(word) + 1
        if used > limit:
            break
        words.append(word)
    if len(words) < 2:
        return shorten(text, limit)  # one long word (or a script without spaces): cut with a mark
    return " ".join(phrase_end(text.split(), len(words))).rstrip(" ,;:—-")


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


def name_words(text: str) -> list[str]:
    """The words of `text` for a file name, in its own script (NFKC, as typed on any keyboard), each once."""
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).lower())
    return list(dict.fromkeys(words))  # "staging site … staging": a name says a word once


# A word of a script written without spaces (Japanese, Chinese) runs on for a whole clause: its first characters.
MAX_NAME_RUN = 12


def slug(text: str, words: int = 6) -> str:
    parts = name_words(text)[:words]
    if len(parts) >= 2:
        return "_".join(parts)
    if parts:
        return parts[0][:MAX_NAME_RUN]
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]  # no letter or digit at all: nothing to name it by
