"""The one canonical form of a memory path, and the names a dream may not write.

Every path a dream writes goes through here: the Claude engine's memory tool
(each of its commands, both ends of a rename) and the offline engine's writes
into staging. A path is canonical when it is NFKC-normalized, its slashes are
single, its ``.`` parts are gone and it has no ``..`` part. NFKC comes first,
so a full-width slash (``team／x.md``) or full-width letters (``ｔｅａｍ``)
become the plain ones before any check looks at them.

A name is compared with others by its *look-alike key*: NFKC, casefolded,
accents dropped and letters of other scripts that read as Latin folded to it
(``lookalikes.toml``). The store's reserved names (`layout.RESERVED_NAMES`)
and dot-names are refused at the top by that key, and a new name is refused
when its key is the key of a different name already beside it: a person
reading the store could not tell the two apart, and a case-insensitive disk
would take one for the other.
"""

from __future__ import annotations

import tomllib
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from pathlib import Path

from dream.store.layout import NOT_MEMORY_DIRS, TEAM_DIR

MAX_NAME_BYTES = 255  # a file name's limit on every common file system
# Characters a name never holds: controls, format characters (zero-width, bidi overrides), private use,
# surrogates, unassigned code points and line or paragraph separators. Each could hide what a name says.
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}

# Characters a person reads as a folder separator, which NFKC leaves alone (it folds the full-width ／ to /):
# "team∕x.md" would be one file at the top that reads as team/x.md; macOS shows ':' as '/' and Windows takes '\'.
SEPARATOR_LOOKALIKES = frozenset("\\:∕⁄⧸╱⟋⼃〳")

Siblings = Callable[[str], Iterable[str]]  # folder (store-relative, '' for the top) -> the names in it


class PathRefused(ValueError):
    """A path no dream may use; the message says why, in words fit for the model or a person."""


@cache
def _lookalikes() -> dict[str, str]:
    """The look-alike table, checked: one character each, read as lowercase ASCII letters or digits."""
    table = tomllib.loads(Path(__file__).with_name("lookalikes.toml").read_text("utf-8"))["latin"]
    for char, latin in table.items():
        if len(char) != 1 or not (isinstance(latin, str) and latin.isascii() and latin.isalnum() and latin.islower()):
            raise ValueError(f"dream/store/lookalikes.toml: [latin] {char!r} = {latin!r}: a key must be one "
                             "character and its value lowercase ASCII letters or digits")
    return dict(table)


@lru_cache(maxsize=65536)  # every new file is compared with every name beside it: fold each name once
def name_key(name: str) -> str:
    """`name` as it compares with others: NFKC, casefolded, accents dropped, look-alike letters folded to Latin."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    table = _lookalikes()
    return "".join(table.get(c, c) for c in folded if not unicodedata.combining(c))


def canonical(path: str) -> str:
    """The canonical store-relative form of `path` ('' for the top), or `PathRefused`.

    A leading slash is dropped: the caller has already taken off its own root.
    """
    text = unicodedata.normalize("NFKC", path)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused("uses '..'; give the plain path")
    for part in parts:
        _check_part(part)
    return "/".join(parts)


def _check_part(part: str) -> None:
    hidden = next((c for c in part if unicodedata.category(c) in _INVISIBLE_CATEGORIES), None)
    if hidden is not None:
        raise PathRefused(f"holds the invisible or control character U+{ord(hidden):04X} in a name")
    if part != part.strip() or part.endswith("."):
        raise PathRefused(f"has a name that starts or ends with a space or ends with a dot ({part!r}), which reads "
                          "as another name")
    if len(part.encode("utf-8")) > MAX_NAME_BYTES:
        raise PathRefused(f"has a name over {MAX_NAME_BYTES} bytes")


def check_memory(rel: str, reserved: Iterable[str] = NOT_MEMORY_DIRS) -> None:
    """Refuse a canonical path that is not memory: a hidden part, or a top folder that is not memory's or looks it.

    The team folder is memory; a name that only looks like it (``tеam`` with a Cyrillic е) is not.
    `reserved` is the store layout's (`dream.store.layouts`): a Codex folder adds its evidence.
    """
    parts = rel.split("/") if rel else []
    if any(p.startswith(".") for p in parts):
        raise PathRefused("names a hidden file or folder, which a dream may not touch")
    if not parts:
        return
    top, key = parts[0], name_key(parts[0])
    reserved = {name.casefold() for name in reserved if not name.startswith(".")} - {TEAM_DIR}
    if top.casefold() in reserved:
        raise PathRefused(f"is under {top}/, which is not memory" if len(parts) > 1 else f"is {top}, which is not memory")
    if key in {name_key(n) for n in reserved} or (key == TEAM_DIR and top.casefold() != TEAM_DIR):
        raise PathRefused(f"starts with {top!r}, a name that reads as a reserved folder of the store "
                          "(team, logs, sessions); use another name")


def in_team(rel: str) -> bool:
    """Under team/, spelled in any case: on a case-insensitive disk (macOS, Windows) `Team/` is `team/`."""
    return rel.split("/")[0].casefold() == TEAM_DIR


def resolve(rel: str, siblings: Siblings) -> str:
    """`rel` with each part spelled as the existing name it means: itself, or the one name beside it of its key.

    A name typed in another case or Unicode form (a macOS disk keeps names decomposed) finds its file.
    """
    resolved: list[str] = []
    for part in rel.split("/") if rel else []:
        names = list(siblings("/".join(resolved)))
        if part not in names:
            same = [n for n in names if name_key(n) == name_key(part)]
            part = same[0] if len(same) == 1 else part
        resolved.append(part)
    return "/".join(resolved)


def check_new(rel: str, siblings: Siblings) -> None:
    """Refuse a new file at the canonical, resolved `rel`: in team/, or a name that looks like one beside it."""
    if in_team(rel):
        raise PathRefused("would be a new file in team/; team memories are never created by a dream "
                          "(merge into an existing team file instead)")
    parts = rel.split("/")
    for depth, part in enumerate(parts):
        names = frozenset(siblings("/".join(parts[:depth])))  # no copy of a frozenset: `_first_by_key` finds it
        if part in names:
            continue
        slash = next((c for c in part if c in SEPARATOR_LOOKALIKES), None)
        if slash is not None:
            raise PathRefused(f"names {part!r}, whose {slash!r} reads as a folder separator; use '/' for folders "
                              "and another character in names")
        clash = _first_by_key(names).get(name_key(part))
        if clash is not None:
            raise PathRefused(f"names {part!r}, which reads as {clash!r} already there; use that name or a "
                              "clearly different one")


@lru_cache(maxsize=8)  # a night creating a thousand files beside 20,000 compared each with every name
def _first_by_key(names: frozenset[str]) -> dict[str, str]:
    """Each name key of `names` with the first name (in order) that has it."""
    first: dict[str, str] = {}
    for name in sorted(names, reverse=True):
        first[name_key(name)] = name
    return first


def tree_siblings(paths: Iterable[str]) -> Siblings:
    """`Siblings` over a set of store paths (a tree's keys): the file and folder names in each folder."""
    folders: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/")
        for depth, part in enumerate(parts):
            folders.setdefault("/".join(parts[:depth]), set()).add(part)
    frozen = {folder: frozenset(names) for folder, names in folders.items()}
    return lambda folder: frozen.get(folder, frozenset())


def check_new_in_tree(rel: str, paths: Iterable[str]) -> None:
    """Refuse a new file `rel` among the store `paths` unless it is canonical memory a dream may create."""
    check_new_beside(rel, tree_siblings(paths))


def check_new_beside(rel: str, siblings: Siblings) -> None:
    """`check_new_in_tree` with the tree's names read once: a night creating thousands of files checks each."""
    if canonical(rel) != rel:
        raise PathRefused(f"is not in its canonical form ({canonical(rel)!r})")
    check_memory(rel)
    check_new(rel, siblings)
