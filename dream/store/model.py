"""Read a memory store into a model, edit it, and write it back byte for byte.

A store is an index (``MEMORY.md``) plus topic files (YAML frontmatter and a
markdown body). Real stores vary a lot, so parsing never raises: whatever
cannot be understood is kept as it is and reported as a *problem*.

The round-trip rule: a file that nobody edited comes back with exactly its
original bytes. An edited file keeps its style (line endings, BOM, frontmatter
key order, trailing newline) because edits work on its text line by line.
"""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from urllib.parse import unquote

import yaml

from dream.errors import BadInput
from dream.store.layout import TEAM_DIR
from dream.store.paths import name_key
from dream.store.tree import INDEX_NAME, Tree, text_problem

VALID_TYPES = ("user", "feedback", "project", "reference")
BOM = "\ufeff"

_LIST_ITEM = re.compile(r"^(?P<indent>\s*)(?P<bullet>[-*+]|\d+[.)])\s+(?P<rest>.*)$")
# The target as written: bare, or in angle brackets (CommonMark's form for a name with a space in it)
MARKDOWN_LINK = re.compile(r"\[(?P<title>[^\]\n]*)\]\((?P<target><[^>\n]+>|[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_WIKILINK = re.compile(r"\[\[(?P<name>[^\]|#\n]+)(?:[#|][^\]\n]*)?\]\]")
_HOOK_SEP = re.compile(r"^\s*(?:—|–|-{1,2}|:|\|)\s*")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_FM_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w.-]*)\s*:(?P<value>.*)$")


# ---------------------------------------------------------------- text helpers


@dataclass
class TextFile:
    """Decoded text that remembers how to encode itself back.

    `lines` hold the text without line terminators; `newline` is the file's
    dominant terminator and `final_newline` whether the last line had one.
    """

    lines: list[str]
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False

    @classmethod
    def decode(cls, data: bytes) -> "TextFile":
        """Decode UTF-8 text; raises UnicodeDecodeError for anything else."""
        text = data.decode("utf-8")
        bom = text.startswith(BOM)
        if bom:
            text = text[1:]
        if text == "":
            return cls([], "\n", False, bom)
        crlf = text.count("\r\n")
        newline = "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"
        final = text.endswith("\n")
        body = text[:-1] if final else text
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in body.split("\n")]
        return cls(lines, newline, final, bom)

    def encode(self) -> bytes:
        text = self.newline.join(self.lines)
        if self.lines and self.final_newline:
            text += self.newline
        return ((BOM if self.bom else "") + text).encode("utf-8")


def split_link_target(target: str) -> str:
    """Drop an anchor and URL escapes from a markdown link target."""
    target = target.strip("<>")
    target = target.split("#", 1)[0]
    return unquote(target)


def is_url(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target)) or target.startswith("//")


@functools.lru_cache(maxsize=1 << 16)  # the index's 20,000 links are resolved by every phase of a night
def resolve_link(from_path: str, target: str) -> str | None:
    """The store-relative path a link points to, or None if it leaves the store.

    Links are relative to the file that holds them; absolute paths, URLs and
    links climbing out of the store root are external and left alone.
    """
    target = split_link_target(target)
    if not target or is_url(target) or target.startswith("/"):
        return None
    base = posixpath.dirname(from_path)
    joined = posixpath.normpath(posixpath.join(base, target))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


# ---------------------------------------------------------------- the index


@dataclass(frozen=True)
class IndexLine:
    """One line of MEMORY.md, classified.

    kind: ``link`` (a list item whose first thing is a markdown link),
    ``wikilink`` (a list item starting with ``[[name]]``), ``rule`` (a list
    item without a leading link: the line is the whole memory), ``heading``,
    ``blank`` or ``prose`` (anything else: preambles, quotes, notes).
    """

    text: str
    kind: str
    title: str = ""
    target: str = ""  # the raw link target as written
    hook: str = ""
    links: tuple[str, ...] = ()  # every markdown link target on the line

    @property
    def is_entry(self) -> bool:
        return self.kind in ("link", "wikilink", "rule")


@functools.lru_cache(maxsize=1 << 16)
def parse_index_line(text: str) -> IndexLine:
    """The line classified. Cached (a line parses the same every time; `IndexLine` is frozen): the
    offline engine's phases each read the whole index, ten times per run at 5,000 memories."""
    links = tuple(m.group("target") for m in MARKDOWN_LINK.finditer(text))
    if not text.strip():
        return IndexLine(text, "blank")
    if _HEADING.match(text):
        return IndexLine(text, "heading", links=links)
    item = _LIST_ITEM.match(text)
    if not item:
        return IndexLine(text, "prose", links=links)
    rest = item.group("rest").strip()
    stripped = rest.lstrip("*_ ")  # tolerate **[Title](file.md)**
    link = MARKDOWN_LINK.match(stripped)
    if link:
        after = stripped[link.end():].lstrip("*_")
        hook = _HOOK_SEP.sub("", after, count=1).strip()
        return IndexLine(text, "link", link.group("title"), link.group("target"), hook, links)
    wiki = _WIKILINK.match(stripped)
    if wiki:
        after = stripped[wiki.end():]
        hook = _HOOK_SEP.sub("", after, count=1).strip()
        return IndexLine(text, "wikilink", wiki.group("name"), wiki.group("name"), hook, links)
    return IndexLine(text, "rule", hook=rest, links=links)


def format_index_line(title: str, target: str, hook: str, sep: str = " — ") -> str:
    destination = f"<{target}>" if re.search(r"[\s()<>]", target) else target  # "project flags.md"
    line = f"- [{title}]({destination})"
    return f"{line}{sep}{hook}" if hook else line


# ---------------------------------------------------------------- topic files


@dataclass
class Frontmatter:
    """The block between the opening and closing ``---`` lines.

    `start`/`end` are line numbers of the two fences in the file's lines.
    `data` is the parsed mapping ({} when it could not be parsed, see `error`), shared by
    every file with the same block: read only.
    """

    start: int
    end: int
    data: dict
    error: str | None = None


def _loose_frontmatter(lines: list[str]) -> dict:
    """A forgiving `key: value` reader for frontmatter that YAML rejects.

    Only flat keys and one level of nesting (``metadata:``) are understood;
    enough to recover `name`, `description` and `type` from sloppy files.
    """
    data: dict = {}
    parent: dict | None = None
    for line in lines:
        m = _FM_KEY.match(line)
        if not m:
            continue
        value = m.group("value").strip().strip("'\"")
        if m.group("indent") and parent is not None:
            parent[m.group("key")] = value
        elif not m.group("indent"):
            if value:
                data[m.group("key")] = value
                parent = None
            else:
                parent = data.setdefault(m.group("key"), {})
    return data


MAX_YAML_CHARS = 64 * 1024  # frontmatter is a few keys; this is far beyond any real one
MAX_YAML_DEPTH = 32


class FrontmatterRefused(ValueError):
    """Frontmatter dream will not load: aliases, depth, size, or a value YAML itself cannot build."""


def load_yaml(text: str):
    """YAML with the safe loader, refusing aliases (a 400-byte alias bomb expands to gigabytes),
    depth beyond `MAX_YAML_DEPTH` and text beyond `MAX_YAML_CHARS`: `FrontmatterRefused` for each,
    and for a value the safe loader cannot build (``created: 2026-13-01``). Syntax errors stay
    `yaml.YAMLError`: sloppy frontmatter is common and read leniently."""
    if len(text) > MAX_YAML_CHARS:
        raise FrontmatterRefused(f"is {len(text):,} characters, over {MAX_YAML_CHARS:,}")
    if _might_nest_or_alias(text):
        _check_events(text)
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except (ValueError, TypeError, OverflowError) as exc:  # raised by a constructor, e.g. a date
        raise FrontmatterRefused(f"has a value YAML cannot read ({exc})") from None


_DEEP_INDENT = re.compile(r"^ {%d,}" % (2 * MAX_YAML_DEPTH), re.MULTILINE)


def _might_nest_or_alias(text: str) -> bool:
    """Cheap: aliases need '*' and anchors '&'; deep nesting needs brackets or deep indentation.
    Walking the events costs 4x the load itself, so plain frontmatter skips it."""
    return any(c in text for c in "*&[{") or bool(_DEEP_INDENT.search(text))


def _check_events(text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise FrontmatterRefused("uses a YAML alias (*name), which dream does not expand")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise FrontmatterRefused(f"is nested deeper than {MAX_YAML_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def frontmatter_end(lines: list[str]) -> int | None:
    """The line that closes the frontmatter (``len(lines)`` when nothing does), None without one; no YAML read."""
    if not lines or lines[0].strip() != "---":
        return None
    return next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), len(lines))


def parse_frontmatter(lines: list[str]) -> Frontmatter | None:
    end = frontmatter_end(lines)
    if end is None:
        return None
    if end == len(lines):
        return Frontmatter(0, end, {}, "frontmatter has no closing '---'")
    data, error = _read_block(tuple(lines[1:end]))
    return Frontmatter(0, end, data, error)


@functools.lru_cache(maxsize=1 << 15)
def _read_block(block: tuple[str, ...]) -> tuple[dict, str | None]:
    """A frontmatter block's mapping and what is wrong with it, read once per text.

    A run reads each memory's frontmatter several times (the engine, pins, the
    validation), most often unchanged: the YAML constructor, in Python, was a
    tenth of a large run. The mapping is shared by every file with this block:
    read it, never change it. A refused block raises each time (not cached).
    """
    try:
        data = load_yaml("\n".join(block))
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _loose_frontmatter(list(block)), f"malformed frontmatter: {first}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping"
    return data, None


def frontmatter_of(path: str, lines: list[str]) -> Frontmatter | None:
    """`parse_frontmatter`, with a refused frontmatter as bad input naming the file."""
    try:
        return parse_frontmatter(lines)
    except FrontmatterRefused as exc:
        raise BadInput(f"{path}: frontmatter {exc}; fix it by hand, then run again") from None


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(_as_text(v) for v in value)
    return str(value).strip()


def _as_date(value) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        m = re.match(r"^\s*['\"]?(\d{4})-(\d{2})-(\d{2})", value)
        if m:
            try:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                return None
    return None


DATE_KEYS = ("date", "created", "updated", "modified")


@dataclass
class TopicFile:
    """A memory file other than the index."""

    path: str
    text: TextFile
    frontmatter: Frontmatter | None

    @classmethod
    def parse(cls, path: str, data: bytes) -> "TopicFile":
        text = TextFile.decode(data)
        return cls(path, text, frontmatter_of(path, text.lines))

    def reparse(self) -> None:
        self.frontmatter = frontmatter_of(self.path, self.text.lines)

    def meta(self, key: str):
        """A frontmatter key, flat or nested under ``metadata:``."""
        data = self.frontmatter.data if self.frontmatter else {}
        if key in data and not isinstance(data[key], dict):
            return data[key]
        nested = data.get("metadata")
        if isinstance(nested, dict) and key in nested:
            return nested[key]
        return None

    @property
    def name(self) -> str:
        return _as_text(self.meta("name"))

    @property
    def description(self) -> str:
        return _as_text(self.meta("description"))

    @property
    def type(self) -> str:
        value = self.meta("type")
        if value is None:
            value = self.meta("node_type")
        return _as_text(value)

    @property
    def stem(self) -> str:
        return posixpath.splitext(posixpath.basename(self.path))[0]

    @property
    def body_start(self) -> int:
        return self.frontmatter.end + 1 if self.frontmatter else 0

    @property
    def body_lines(self) -> list[str]:
        return self.text.lines[self.body_start:]

    @property
    def body(self) -> str:
        return "\n".join(self.body_lines)

    @property
    def heading(self) -> str:
        for line in self.body_lines:
            if _HEADING.match(line):
                return line.lstrip("# ").strip()
        return ""

    @property
    def title(self) -> str:
        return self.name or self.heading or self.stem

    def source_dates(self) -> dict[str, date]:
        found = {}
        for key in DATE_KEYS:
            value = _as_date(self.meta(key))
            if value:
                found[key] = value
        return found

    @property
    def format_problems(self) -> list[str]:
        """Why this file does not follow the topic-file format (empty if it does)."""
        if self.frontmatter is None:
            return ["no frontmatter"]
        if self.frontmatter.error:
            return [self.frontmatter.error]
        problems = []
        for key in ("name", "description"):
            if not _as_text(self.meta(key)):
                problems.append(f"frontmatter has no {key!r}")
        if self.type not in VALID_TYPES:
            shown = self.type or "missing"
            problems.append(f"frontmatter type is {shown!r}, expected one of {', '.join(VALID_TYPES)}")
        return problems

    def append_body(self, new_lines: list[str]) -> None:
        """Append lines at the end of the body, separated by a blank line."""
        lines = self.text.lines
        while lines and not lines[-1].strip() and len(lines) > self.body_start:
            lines.pop()
        if len(lines) > self.body_start:
            lines.append("")
        lines.extend(new_lines)
        self.text.final_newline = True

    def add_frontmatter(self, name: str, description: str, type_: str) -> None:
        """Give a file without frontmatter a minimal one (name, description, type)."""
        block = ["---", f"name: {yaml_scalar(name)}", f"description: {yaml_scalar(description)}",
                 f"type: {type_}", "---"]
        if self.text.lines and self.text.lines[0].strip():
            block.append("")
        self.text.lines[0:0] = block
        self.reparse()


def yaml_scalar(value: str) -> str:
    """A one-line YAML scalar that reads back as `value`."""
    value = " ".join(value.split())
    plain_ok = value and not re.search(r"(^[\s\-?:,\[\]{}#&*!|>'\"%@`])|(: )|( #)|(:$)", value)
    if plain_ok and value.lower() not in ("yes", "no", "true", "false", "null", "on", "off", "~"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def new_topic_text(name: str, description: str, type_: str, body: list[str],
                   extra: dict[str, str] | None = None, newline: str = "\n") -> TextFile:
    lines = ["---", f"name: {yaml_scalar(name)}", f"description: {yaml_scalar(description)}",
             f"type: {type_}"]
    for key, value in (extra or {}).items():
        lines.append(f"{key}: {yaml_scalar(value)}")
    lines += ["---", ""] + body
    return TextFile(lines, newline, True, False)


# ---------------------------------------------------------------- the store


def unparseable(tree: Tree) -> dict[str, str]:
    """The files of `tree` a run leaves untouched because they cannot be read as memory: path -> why."""
    return Store.from_tree(tree).unparseable


@dataclass
class Store:
    """A parsed tree of memory files.

    `original` keeps every file's bytes as read; `topics` and `index_text`
    are editable models; files that could not be decoded (not UTF-8, not
    text, frontmatter dream will not load) live only in `unparseable` and
    come back untouched: one bad file never stops the night.
    """

    original: Tree
    index_text: TextFile | None
    topics: dict[str, TopicFile]
    unparseable: dict[str, str]  # path -> why
    removed: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    _free_from: dict[tuple[str, str], int] = field(default_factory=dict, repr=False, compare=False)
    _taken_keys: set[str] | None = field(default=None, repr=False, compare=False)  # look-alike keys of every path

    @classmethod
    def from_tree(cls, tree: Tree) -> "Store":
        index_text = None
        topics: dict[str, TopicFile] = {}
        unparseable: dict[str, str] = {}
        for path in sorted(tree):
            data = tree[path]
            try:
                if path == INDEX_NAME:
                    index_text = TextFile.decode(data)
                elif (problem := text_problem(path, data)) is not None:
                    unparseable[path] = problem
                else:
                    topics[path] = TopicFile.parse(path, data)
            except UnicodeDecodeError as exc:
                unparseable[path] = f"not valid UTF-8 (byte {exc.start})"
            except BadInput as refused:  # frontmatter dream will not load (an alias, a date that is none …)
                unparseable[path] = str(refused).split(": ", 1)[-1].replace("; fix it by hand, then run again", "")
        return cls(dict(tree), index_text, topics, unparseable)

    # -- index ---------------------------------------------------------

    @property
    def index_lines(self) -> list[str]:
        if self.index_text is None:
            self.index_text = TextFile([], "\n", True, False)
        return self.index_text.lines

    def parsed_index(self) -> list[IndexLine]:
        return [parse_index_line(line) for line in self.index_lines]

    @property
    def newline(self) -> str:
        return self.index_text.newline if self.index_text else "\n"

    # -- files ---------------------------------------------------------

    def exists(self, path: str) -> bool:
        return path in self.topics or path in self.unparseable or path == INDEX_NAME and self.index_text is not None

    def paths(self) -> set[str]:
        found = set(self.topics) | set(self.unparseable)
        if self.index_text is not None:
            found.add(INDEX_NAME)
        return found

    def remove(self, path: str) -> None:
        self.topics.pop(path, None)
        self.removed.add(path)
        self.created.discard(path)

    def add_topic(self, path: str, text: TextFile) -> TopicFile:
        topic = TopicFile(path, text, frontmatter_of(path, text.lines))
        self.topics[path] = topic
        self.created.add(path)
        self.removed.discard(path)
        if self._taken_keys is not None:
            self._taken_keys.add(name_key(path))
        return topic

    def clashes(self, path: str) -> bool:
        """Whether a new file at `path` would read as a path already taken (``Archive.md`` beside ``archive.md``)."""
        if self._taken_keys is None:
            self._taken_keys = {name_key(p) for p in self.paths() | self.removed | set(self.original)}
        return not self.exists(path) and name_key(path) in self._taken_keys

    def free_path(self, stem: str, folder: str = "") -> str:
        """A path `stem.md` (or `stem-2.md` …) not used by any file of the store, nor removed from it.

        A path once taken stays taken (a removed file's path is not reused),
        so the search for a stem starts where the last one for it ended:
        thousands of new files with one stem cost no more than one each. A
        path that reads as a taken one (``Project_X.md`` beside ``project_x.md``)
        is taken too: on a case-insensitive disk it is the same file.
        """
        stem = _capped_stem(stem)
        n = self._free_from.get((folder, stem), 1)
        while True:
            name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
            path = f"{folder}/{name}" if folder else name
            if not self.exists(path) and path not in self.removed and not self.clashes(path):
                self._free_from[(folder, stem)] = n
                return path
            n += 1

    def to_tree(self) -> Tree:
        """The store's files as bytes; untouched files keep their original bytes."""
        out: Tree = {}
        for path, data in self.original.items():
            if path in self.unparseable:
                out[path] = data
        if self.index_text is not None:
            out[INDEX_NAME] = self._keep_or_encode(INDEX_NAME, self.index_text)
        for path, topic in self.topics.items():
            out[path] = self._keep_or_encode(path, topic.text)
        return dict(sorted(out.items()))

    def _keep_or_encode(self, path: str, text: TextFile) -> bytes:
        data = text.encode()
        original = self.original.get(path)
        if original is not None and TextFile.decode(original) == text:
            return original  # same content: keep the exact original bytes
        return data


MAX_STEM_BYTES = 120  # a file name may hold 255 bytes; the stem leaves room for a "-2" suffix and temp names


def _capped_stem(stem: str) -> str:
    """`stem` cut to `MAX_STEM_BYTES` of UTF-8 (at a character): a 2,000-letter word must not name a file."""
    data = stem.encode("utf-8")
    if len(data) <= MAX_STEM_BYTES:
        return stem
    return data[:MAX_STEM_BYTES].decode("utf-8", "ignore").rstrip("_-.") or "memory"
