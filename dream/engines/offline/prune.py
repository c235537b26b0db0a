"""Prune: keep the index true and within budget without losing a word.

- Pointers to missing files are repaired when the file moved (same file
  name elsewhere, or a topic whose `name` matches). Else a line whose title
  and hook carry a rule or a fact gets its file back, made from that text,
  and stays indexed: the line is all that is left of that memory, and the
  agent reads the index at session start. A bare pointer (a label, no
  text) moves to the archive file.
- Topic files nobody points to (orphans) get an index line.
- Index lines over 150 characters are shortened; a link line's topic file
  takes the full hook (labelled) only when it lacks words of the part cut;
  a long line without a link gets a topic file of its own.
- An index over 200 lines or 25,000 bytes has its oldest entries (from the
  top) moved to the archive file, however large it is.
- An archive past its size rolls over into dated files (see archive.py).
The archive (``archive.md``, type reference) is itself indexed, and links in
it count as pointers, so archived entries stay reachable.
"""

from __future__ import annotations

import posixpath
import re

from dream.engines.offline.archive import ARCHIVE_HOOK, archive_lines, archive_path, roll_over
from dream.engines.offline.kinds import ChangeAction
from dream.engines.offline.orient import (
    Workspace,
    editable,
    ensure_frontmatter,
    guess_type,
    is_archive,
)
from dream.engines.offline.placement import add_line, add_lines, clean_stem, reads_as_title, title_of
from dream.engines.offline.similarity import CJK, content_keys, normalize, says_something, word_keys
from dream.engines.offline.text import ELLIPSIS, MAX_LINE, fit_line, one_line, phrase_title, shorten, slug
from dream.store.model import MARKDOWN_LINK, IndexLine, new_topic_text, parse_index_line, resolve_link
from dream.store.paths import PathRefused, check_new_in_tree
from dream.store.tree import INDEX_NAME
from dream.store.layouts import named
from dream.store.validate import MAX_INDEX_BYTES, MAX_INDEX_LINES


def prune(ws: Workspace) -> None:
    if not named(ws.settings.layout).index_links_memories:  # Codex's handbook: no pointers, no budget of lines
        drop_repeated_lines(ws)
        return
    repair_pointers(ws)
    drop_repeated_lines(ws)
    retitle_slugs(ws)
    shorten_long_lines(ws)  # before orphans: a cut hook may drop a [[wikilink]]
    index_orphans(ws)
    enforce_budget(ws)
    roll_over(ws)  # last: every move into the archive is made


def _pointed(line: IndexLine, path: str) -> bool:
    return any(resolve_link(INDEX_NAME, t) == path for t in line.links)


# ---------------------------------------------------------------- broken pointers


def _by_basename(ws: Workspace) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(ws.store.topics):
        found.setdefault(posixpath.basename(path), []).append(path)
    return found


def _by_name(ws: Workspace) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path, topic in sorted(ws.store.topics.items()):
        if topic.name:
            found.setdefault(normalize(topic.name), []).append(path)
    return found


def find_moved(ws: Workspace, target: str, title: str, basenames, names) -> str | None:
    """Where a missing link target went: same file name, or a topic named like it."""
    candidates = basenames.get(posixpath.basename(target), [])
    if len(candidates) == 1:
        return candidates[0]
    for key in (posixpath.splitext(posixpath.basename(target))[0], title):
        candidates = names.get(normalize(key), []) if normalize(key) else []
        if len(candidates) == 1:
            return candidates[0]
    return None


def repair_pointers(ws: Workspace) -> None:
    store = ws.store
    basenames, names = _by_basename(ws), _by_name(ws)
    present = store.paths()
    lines = [_follow_moves(ws, text, present, basenames, names) for text in store.index_lines]
    for text in lines:  # all before any unlinking: a prose line may link a file that a later entry brings back
        line = parse_index_line(text)
        if line.kind == "link" and _is_missing(line.target, present) and _restore_from_line(ws, line):
            present.add(resolve_link(INDEX_NAME, line.target) or "")
    to_archive: list[str] = []
    kept: list[str] = []
    for text in lines:
        line = parse_index_line(text)
        if line.kind == "link" and _is_missing(line.target, present):
            to_archive.append(text)
            ws.change(ChangeAction.ARCHIVED, INDEX_NAME,
                      f"points to missing file {resolve_link(INDEX_NAME, line.target)}", one_line(text))
        else:
            kept.append(_unlink_missing(ws, text, present))
    store.index_lines[:] = kept
    for text in store.index_lines:
        for target in parse_index_line(text).links:
            if resolve_link(INDEX_NAME, target) is None and target.endswith(".md") and not re.match(r"^\w+://", target):
                ws.note(f"{INDEX_NAME}: link {target} leaves the store; not checked")
    if to_archive:
        archive_lines(ws, to_archive, "pointers to files that no longer exist")


def _follow_moves(ws: Workspace, text: str, present: set[str], basenames, names) -> str:
    """`text` with each link to a missing file pointed where that file moved, if it did."""
    line, new_text = parse_index_line(text), text
    for target in line.links:
        if not _is_missing(target, present):
            continue
        moved = find_moved(ws, resolve_link(INDEX_NAME, target) or target, line.title, basenames, names)
        if moved:
            new_text = new_text.replace(f"]({target})", f"]({moved})")
            ws.change(ChangeAction.REPAIRED, INDEX_NAME, f"pointer to missing {target} now points to {moved}",
                      one_line(text), moved)
    return new_text


def _restore_from_line(ws: Workspace, line: IndexLine) -> bool:
    """Make the missing file an index line points to from the line's own text, if it says something.

    Only the line's words go in (title as name, hook as description and
    body), so nothing is invented. Only a file that was missing before this
    dream comes back: one removed during it (a forget, a merge, a model's
    delete) stays removed.
    """
    path = resolve_link(INDEX_NAME, line.target)
    if not path or path in ws.store.removed or not says_something(f"{line.title} {line.hook}"):
        return False
    try:
        check_new_in_tree(path, ws.store.paths() | ws.store.removed)
    except PathRefused as err:  # `team/x.md`, `ｔｅａｍ/x.md`, `logs/x.md`: a dream never makes such a file
        ws.ask(f"{INDEX_NAME}: “{line.title}” points to {line.target}, which is missing; it was not made from "
               f"the line, because that path {err}")
        return False
    name = line.title.strip() if reads_as_title(line.title) else clean_stem(path)
    text = line.hook.strip() or line.title.strip()
    ws.store.add_topic(path, new_topic_text(name, shorten(text, MAX_LINE), guess_type(path), [one_line(text)],
                                            newline=ws.store.newline))
    ws.change(ChangeAction.CREATED, path, "its index line pointed to it but the file was missing; made from that "
              "line's text, which stays indexed", shorten(text, 100), INDEX_NAME)
    return True


def _unlink_missing(ws: Workspace, text: str, present: set[str]) -> str:
    """Links to missing files inside prose (or after an entry's own link) lose their markup, not their words."""
    def unlink(match: re.Match[str]) -> str:
        if not _is_missing(match.group("target"), present):
            return match.group(0)
        ws.ask(f"{INDEX_NAME}: “{match.group('title')}” linked {match.group('target')}, which does not exist "
               f"and was not found elsewhere; the link was removed and its words kept: point it at the right file")
        return match.group("title")

    new = MARKDOWN_LINK.sub(unlink, text)
    if new != text:
        ws.change(ChangeAction.REPAIRED, INDEX_NAME, "link to a missing file inside a line, unlinked", one_line(new))
    return new


def _is_missing(target: str, present: set[str]) -> bool:
    resolved = resolve_link(INDEX_NAME, target)
    return resolved is not None and resolved.endswith(".md") and resolved not in present


# ---------------------------------------------------------------- repeated lines


def drop_repeated_lines(ws: Workspace) -> None:
    """Drop index entries that repeat an earlier entry word for word."""
    seen: set[str] = set()
    kept = []
    for text in ws.store.index_lines:
        line = parse_index_line(text)
        key = text.strip()
        if line.is_entry and key in seen:
            ws.change(ChangeAction.MERGED, INDEX_NAME, "index line repeated an earlier one word for word", key)
            continue
        seen.add(key)
        kept.append(text)
    ws.store.index_lines[:] = kept


# ---------------------------------------------------------------- slug titles


def retitle_slugs(ws: Workspace) -> None:
    """An entry titled by its file name (`[feedback_x.md]`, `[use-decimal]`) gets its memory's title."""
    lines = ws.store.index_lines
    for number, text in enumerate(lines):
        line = parse_index_line(text)
        if line.kind != "link" or reads_as_title(line.title):
            continue
        resolved = resolve_link(INDEX_NAME, line.target)
        topic = ws.store.topics.get(resolved) if resolved else None
        title = title_of(topic) if topic is not None else ""
        if not reads_as_title(title) or title == line.title:
            continue
        lines[number] = text.replace(f"[{line.title}]({line.target})", f"[{_bracket_safe(title)}]({line.target})", 1)
        ws.change(ChangeAction.RETITLED, INDEX_NAME, f"title “{line.title}” was a file name", f"now “{title}”",
                  resolved or "")


def _bracket_safe(title: str) -> str:
    return title.replace("[", "(").replace("]", ")")


# ---------------------------------------------------------------- orphans


def referenced_paths(ws: Workspace) -> set[str]:
    """Files reachable from an index: MEMORY.md, a sub-folder MEMORY.md, or the archive."""
    store = ws.store
    found: set[str] = set()
    stems = {t.stem: p for p, t in store.topics.items()}
    names = {normalize(t.name): p for p, t in store.topics.items() if t.name}
    sources = [(INDEX_NAME, store.index_lines)]
    sources += [(p, t.text.lines) for p, t in store.topics.items()
                if is_archive(p) or posixpath.basename(p) == INDEX_NAME]
    for where, lines in sources:
        for text in lines:
            line = parse_index_line(text)
            for target in line.links:
                resolved = resolve_link(where, target)
                if resolved:
                    found.add(resolved)
            for wiki in re.findall(r"\[\[([^\]|#\n]+)", text):
                hit = stems.get(wiki.strip()) or names.get(normalize(wiki))
                if hit:
                    found.add(hit)
    return found


def index_orphans(ws: Workspace) -> None:
    store = ws.store
    reached = referenced_paths(ws)
    new: list[tuple[str, str]] = []
    for path, topic in sorted(store.topics.items()):
        if path in reached or posixpath.basename(path) == INDEX_NAME:
            continue
        hook = topic.description or next((l.strip("# ") for l in topic.body_lines if l.strip()), "")
        line = fit_line(title_of(topic), path, hook)
        new.append((line, topic.type or guess_type(path)))
        ws.change(ChangeAction.INDEXED, INDEX_NAME, f"{path} had no index line (orphan)", line, path)
    add_lines(store.index_lines, new)  # all at once: one at a time re-read the index per orphan
    for path in sorted(store.unparseable):
        if path not in reached:
            ws.note(f"{path}: not indexed: {store.unparseable[path]}")


# ---------------------------------------------------------------- long lines


def shorten_long_lines(ws: Workspace) -> None:
    """Make every index line fit: cut a link line's hook, wrap a rule or prose line, demote the rest."""
    out: list[str] = []
    for text in ws.store.index_lines:
        if len(text) <= MAX_LINE:
            out.append(text)
            continue
        line = parse_index_line(text)
        wrapped = wrap(text) if line.kind in ("rule", "prose") else None
        if line.kind == "link":
            out.append(_shorten_link_line(ws, text, line))
        elif wrapped:
            # A rule or a paragraph is the whole memory: wrapped, it stays whole in the index.
            out += wrapped
            ws.change(ChangeAction.SHORTENED, INDEX_NAME, f"index line had {len(text)} characters (limit {MAX_LINE})",
                      f"wrapped onto {len(wrapped)} lines, every word kept")
        else:
            out.append(_demote_line(ws, text, line))
    ws.store.index_lines[:] = out




def wrap(text: str, limit: int = MAX_LINE) -> list[str] | None:
    """`text` as lines within `limit`, broken between words (or CJK characters); None if it cannot be.

    Continuation lines are indented like the list item's text, so markdown
    reads them as the same item (or the same paragraph).
    """
    item = re.match(r"^(\s*(?:[-*+]|\d+[.)])\s+)", text)
    indent = " " * len(item.group(1)) if item else _line_prefix(text)
    out, rest = [], text
    while len(rest) > limit:
        cut = _break_at(rest, limit)
        if cut is None:
            return None
        out.append(rest[:cut].rstrip())
        rest = indent + rest[cut:].lstrip()
    return out + [rest]


def _break_at(text: str, limit: int) -> int | None:
    space = text.rfind(" ", 0, limit + 1)
    if space > limit // 3 and text[:space].strip():
        return space
    for cut in range(limit, limit // 3, -1):  # CJK text breaks between any two characters
        if CJK.match(text[cut - 1]) and CJK.match(text[cut]):
            return cut
    return None


def _line_prefix(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


HOOK_LABEL = "**From the index:**"  # a hook's words a topic file lacked, moved into it, say where they came from


def _shorten_link_line(ws: Workspace, text: str, line: IndexLine) -> str:
    """Cut the hook; the topic file is edited only when it lacks words of the part cut off.

    A hook usually sums up its file, so the file already says what was cut:
    then nothing but the index changes. When it does not (a date, a status
    the index alone recorded), the full hook goes into the file as a part
    labelled as coming from the index; a file that cannot be edited keeps it
    in the archive.
    """
    resolved = resolve_link(INDEX_NAME, line.target)
    topic = ws.store.topics.get(resolved) if resolved else None
    indent = _line_prefix(text)
    short = indent + fit_line(line.title, line.target, line.hook, MAX_LINE - len(indent))
    lacking = _words_cut(line, parse_index_line(short.strip()))
    if topic is not None:
        lacking -= word_keys("\n".join(topic.text.lines))
    if not lacking:
        where = f"{topic.path} (already there)" if topic is not None else "the shortened line (no word was cut)"
    elif topic is not None and editable(topic):
        ensure_frontmatter(ws, topic, "words of its index line that it lacked were moved into it")
        cut_title = normalize(line.title) not in normalize(short)
        topic.append_body([f"{HOOK_LABEL} " + one_line(f"{line.title} — {line.hook}" if cut_title else line.hook)])
        where = topic.path
    else:
        where = archive_lines(ws, [text], "full text of an index line that was shortened")
    ws.change(ChangeAction.SHORTENED, INDEX_NAME, f"index line had {len(text)} characters (limit {MAX_LINE})",
              f"full text kept in {where}", resolved or "")
    return short


def _words_cut(long: IndexLine, short: IndexLine) -> set[str]:
    """The words of the long line's title and hook that its shortened form no longer holds."""
    return set(content_keys(f"{long.title} {long.hook}") - word_keys(f"{short.title} {short.hook}".rstrip(ELLIPSIS)))


def _demote_line(ws: Workspace, text: str, line: IndexLine) -> str:
    """Move a long line without a link into its own topic file; index that file."""
    store = ws.store
    content = line.hook if line.kind == "rule" else text.strip().lstrip("#> ").strip()
    type_ = "feedback" if re.match(r"^\W*(always|never|don'?t|do not|prefer|use)\b", content, re.I) else "project"

    path = store.free_path(f"{type_}_{slug(content)}")
    title = phrase_title(re.sub(r"[*_`]", "", content), 50)
    store.add_topic(path, new_topic_text(title, shorten(content, MAX_LINE), type_, [content],
                                         newline=store.newline))
    ws.change(ChangeAction.CREATED, path, "holds the full text of an index line over the length limit",
              shorten(content, 100))
    indent = _line_prefix(text) if line.kind == "rule" else ""
    short = indent + fit_line(title, path, content, MAX_LINE - len(indent))
    ws.change(ChangeAction.SHORTENED, INDEX_NAME, f"index line had {len(text)} characters (limit {MAX_LINE})",
              f"full text kept in {path}", path)
    return short


# ---------------------------------------------------------------- budget


def _size(lines: list[str], newline: str) -> int:
    return sum(len(line.encode("utf-8")) + len(newline) for line in lines)


def _keep_rank(ws: Workspace, line: IndexLine) -> tuple:
    target = resolve_link(INDEX_NAME, line.target) if line.kind == "link" else None
    return ws.keep_first.get(target or "", (-1,))


def _named(lines: list[str], shown: int = 50) -> str:
    """The lines that moved out, by title (all of them are in the archive, word for word)."""
    titles = [parse_index_line(t).title or t.strip()[:60] for t in lines]
    more = f" and {len(titles) - shown} more" if len(titles) > shown else ""
    return "; ".join(titles[:shown]) + more


def enforce_budget(ws: Workspace) -> None:
    store = ws.store
    lines = store.index_lines
    newline = store.newline
    if len(lines) <= MAX_INDEX_LINES and _size(lines, newline) <= MAX_INDEX_BYTES:
        return
    archive = archive_path(ws)
    if not any(_pointed(parse_index_line(t), archive) for t in lines):
        add_line(lines, fit_line("Archive", archive, ARCHIVE_HOOK), "reference")  # reserve its line first
    parsed = [parse_index_line(t) for t in lines]
    entries = [i for i, p in enumerate(parsed) if p.is_entry and not _pointed(p, archive)]
    # least worth keeping first: unread, then rarely and long-ago read, pinned last; oldest first among equals
    order = sorted(entries, key=lambda i: _keep_rank(ws, parsed[i]))
    order += [i for i, p in enumerate(parsed) if p.kind == "prose"]
    order += [i for i, p in enumerate(parsed) if p.kind in ("heading", "blank")]
    count, size = len(lines), _size(lines, newline)
    moved: set[int] = set()
    for i in order:
        if count <= MAX_INDEX_LINES and size <= MAX_INDEX_BYTES:
            break
        moved.add(i)
        count -= 1
        size -= len(lines[i].encode("utf-8")) + len(newline)
    archived = [lines[i] for i in sorted(moved) if lines[i].strip()]
    lines[:] = [t for i, t in enumerate(lines) if i not in moved]
    which = "least read" if ws.keep_first else "oldest"
    archive_lines(ws, archived, f"{which} entries, moved to keep the index within budget")
    ws.change(ChangeAction.ARCHIVED, INDEX_NAME,
              f"index over budget ({MAX_INDEX_LINES} lines / {MAX_INDEX_BYTES} bytes)",
              f"moved the {len(moved)} {which} line(s) to {archive}: " + _named(archived))
