"""Activity logs: find the session logs of a store and parse them into one table.

Layout: ``<store>/logs/YYYY/MM/DD/<session-id>-<slug>.md``. The date comes
from the folders. The session id is a leading UUID (8-4-4-4-12 hex) when the
file name starts with one, otherwise everything before the first ``-``.

Format: every line starts with a one-character prefix and a space::

    > the user said
    < the assistant said
    . a tool call (name and a short argument summary)

A line without a known prefix (including an empty line, or ``>`` with no
space) continues the entry above it; continuation lines are joined with
``"\\n"``. Blank lines closing an entry are dropped, and so is trailing
whitespace at the end of a file. CRLF line ends read as LF. Lines before the
first entry of a file belong to no entry: they are **dropped**, with a
warning when they hold more than whitespace (guessing a role would put words
in someone's mouth).

Parsing is vectorised: files are read in batches into one buffer each (a few
worker threads), entry starts are found on the raw bytes with numpy, each
entry's text is a zero-copy slice of the buffer (Arrow, then polars), then
redacted (`dream.redact`: hints per batch, then all hits at once) and cut to `max_entry_chars`; no
Python loop runs per line or per entry. Logs are input only: nothing here
writes to the store. ``bench/bench_gather.py`` measures it against ``cat``.
"""

from __future__ import annotations

import datetime as dt
import mmap
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from dream import speedups
from dream.pipeline.redact import HINTS, hint_rows, redact_hits

if TYPE_CHECKING:
    import numpy as np

# numpy and pyarrow are imported where logs are parsed, not with this module:
# together they add about 70 ms to the start of every command that imports it.

LOGS_DIR = "logs"
ROLES = {">": "user", "<": "assistant", ".": "tool"}

_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_YEAR_RE = re.compile(r"\d{4}")
_TWO_DIGITS_RE = re.compile(r"\d{2}")


# --------------------------------------------------------------------------
# Scanning (stat only)


@dataclass(frozen=True)
class SessionFile:
    location: str  # absolute path
    rel: str  # relative to store root, posix
    session_id: str
    slug: str
    date: dt.date
    mtime: float
    size: int

    @cached_property
    def path(self) -> Path:
        # Made on demand: building a Path per file was a third of scanning 10,000 logs.
        return Path(self.location)

    @property
    def title(self) -> str:
        return self.slug.replace("-", " ")


class SessionList(list[SessionFile]):
    """The logs found by `scan_sessions`, plus one warning per path that was skipped."""

    def __init__(self, files: Iterable[SessionFile] = (), warnings: list[str] | None = None):
        super().__init__(files)
        self.warnings: list[str] = warnings if warnings is not None else []


def split_session_name(stem: str) -> tuple[str, str]:
    """``<uuid>-<slug>`` or ``<id>-<slug>`` → (id, slug); the slug may be empty."""
    match = _UUID_RE.match(stem)
    if match and (len(stem) == match.end() or stem[match.end()] == "-"):
        return match.group(0), stem[match.end() + 1 :]
    session_id, _, slug = stem.partition("-")
    return session_id, slug


def scan_sessions(store_root: Path, since: float | None = None) -> SessionList:
    """Log files whose mtime > `since` (all when None), sorted by (date, rel).

    Only stat() is called, never read(). Paths that do not fit the layout,
    symlinks and non-regular files are skipped and named in `.warnings`.
    """
    root = Path(store_root).absolute()
    found = SessionList()
    logs = root / LOGS_DIR
    if logs.is_symlink():
        found.warnings.append(f"{LOGS_DIR}: symlink, not followed")
        return found
    if not logs.is_dir():
        return found
    for year in _subdirs(logs, LOGS_DIR, _YEAR_RE, found.warnings):
        for month in _subdirs(year, f"{LOGS_DIR}/{year.name}", _TWO_DIGITS_RE, found.warnings):
            for day in _subdirs(month, f"{LOGS_DIR}/{year.name}/{month.name}", _TWO_DIGITS_RE, found.warnings):
                rel_day = f"{LOGS_DIR}/{year.name}/{month.name}/{day.name}"
                try:
                    date = dt.date(int(year.name), int(month.name), int(day.name))
                except ValueError:
                    found.warnings.append(f"{rel_day}: not a valid date, skipped")
                    continue
                found.extend(_scan_day(day, rel_day, date, since, found.warnings))
    found.sort(key=lambda f: (f.date, f.rel))
    return found


def _subdirs(folder: Path, rel: str, name_re: re.Pattern[str], warnings: list[str]) -> list[Path]:
    """Sub-folders of `folder` whose names fit `name_re`; everything else is reported."""
    keep = []
    for entry in _list_dir(folder, rel, warnings):
        where = f"{rel}/{entry.name}"
        if entry.is_symlink():
            warnings.append(f"{where}: symlink, not followed")
        elif not entry.is_dir(follow_symlinks=False):
            warnings.append(f"{where}: not in the logs/YYYY/MM/DD/ layout, skipped")
        elif not name_re.fullmatch(entry.name):
            warnings.append(f"{where}: folder name does not fit logs/YYYY/MM/DD, skipped")
        else:
            keep.append(Path(entry.path))
    return keep


def _scan_day(day: Path, rel_day: str, date: dt.date, since: float | None, warnings: list[str]) -> list[SessionFile]:
    files = []
    for entry in _list_dir(day, rel_day, warnings):
        rel = f"{rel_day}/{entry.name}"
        if entry.is_symlink():
            warnings.append(f"{rel}: symlink, not followed")
            continue
        if not entry.is_file(follow_symlinks=False):
            warnings.append(f"{rel}: not a regular file, skipped")
            continue
        if not entry.name.endswith(".md") or entry.name.startswith("."):
            warnings.append(f"{rel}: not a .md log, skipped")
            continue
        session_id, slug = split_session_name(entry.name[: -len(".md")])
        if not session_id:
            warnings.append(f"{rel}: no session id before the first '-', skipped")
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            warnings.append(f"{rel}: cannot stat ({exc.strerror}), skipped")
            continue
        if since is not None and st.st_mtime <= since:
            continue
        files.append(SessionFile(entry.path, rel, session_id, slug, date, st.st_mtime, st.st_size))
    return files


def _list_dir(folder: Path, rel: str, warnings: list[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        warnings.append(f"{rel}: cannot list ({exc.strerror}), skipped")
        return []


# --------------------------------------------------------------------------
# Reading and parsing


@dataclass
class Gathered:
    sessions: pl.DataFrame  # session, date, seq, role, text
    files: list[SessionFile]
    redactions: int
    warnings: list[str] = field(default_factory=list)


SCHEMA = {"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8}


def read_sessions(
    files: list[SessionFile],
    on_progress: Callable[[int, int], None] | None = None,
    max_entry_chars: int = 2000,
) -> Gathered:
    """Parse `files` into one table of entries, redacted and cut to `max_entry_chars`.

    Never raises on a bad file: binary (NUL bytes) and unreadable files are
    skipped, invalid UTF-8 is decoded with replacement characters; each case
    adds a one-line warning naming the file. `Gathered.files` lists the files
    that were read (an empty file is read but gives no rows).
    """
    total = sum(f.size for f in files)
    batches = _batches(files)
    parsed: list[_Batch] = []
    done = 0
    with ThreadPoolExecutor(_WORKERS) as pool:
        for batch, result in zip(batches, pool.map(lambda b: _parse_batch(b, max_entry_chars), batches)):
            parsed.append(result)
            done += sum(f.size for f in batch)
            if on_progress:
                on_progress(min(done, total), total)
    if on_progress:
        on_progress(total, total)
    redactions = _redact_hints(parsed, max_entry_chars)
    return _assemble(parsed, redactions)


# --------------------------------------------------------------------------
# Reading and parsing, one batch of files at a time
#
# Files are read in batches of about `_BATCH_BYTES`, each batch into one
# buffer, by `_WORKERS` threads. A worker reads, splits, redacts and cuts its
# batch; reads, numpy and polars release the GIL, so batches overlap on all
# cores. Inside a batch, every file's bytes follow a "\n", so each entry
# starts right after a newline: entry starts are found with numpy on the raw
# bytes, and each entry's text becomes a zero-copy slice of the buffer
# (an Arrow array over it, handed to polars).

_BATCH_BYTES = 16 << 20
Buffer = mmap.mmap | bytearray
_WORKERS = min(3, os.cpu_count() or 1)

_PREFIXES = (b"> ", b"< ", b". ")
_FIRST_ENTRY = re.compile(rb"\n[<>.] ")
_ROLE_NAMES = ("user", "assistant", "tool")
_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")
# What polars' strip_chars_end() strips (Rust's char::is_whitespace) beyond ASCII.
_UNICODE_SPACE = frozenset(
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


@dataclass
class _Batch:
    read: list[SessionFile]  # files read, in order
    warnings: list[str]  # reading problems and orphan text, in file order
    utf8_warnings: list[str]
    entries: pl.DataFrame  # session, date, file (index into `read`), role, text: cut (redacted by `_redact_hints`)
    hint_rows: pl.Series  # rows whose text holds a hint of a secret
    hint_texts: pl.Series  # their texts, not cut: redaction comes first


def _batches(files: list[SessionFile]) -> list[list[SessionFile]]:
    batches: list[list[SessionFile]] = []
    size = _BATCH_BYTES
    for f in files:
        if size >= _BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(f)
        size += f.size
    return batches


def _parse_batch(files: list[SessionFile], max_chars: int) -> _Batch:
    buf, contents, flags = _read_batch(files)
    read: list[SessionFile] = []
    spans: list[tuple[int, int]] = []  # (start, end) in buf of each file in `read`
    warnings: list[str] = []
    for f, content, flag in zip(files, contents, flags):
        if isinstance(content, str):
            warnings.append(f"{f.rel}: {content}")
            continue
        start, end, problem = _content_span(buf, *content, flag)
        if problem:
            warnings.append(f"{f.rel}: {problem}")
        if problem and problem.startswith("binary"):
            continue
        read.append(f)
        spans.append((start, end))
    utf8_warnings: list[str] = []
    entries = _split_batch(buf, spans)
    if entries is None:  # rare: some file is not valid UTF-8
        buf, spans = _repair_utf8(buf, spans, read, utf8_warnings)
        entries = _split_batch(buf, spans)
        assert entries is not None
    text = entries.get_column("text")
    hints = hint_rows(text, entries.get_column("maybe_secret"))
    hint_texts = text.gather(hints)
    return _Batch(read, warnings, utf8_warnings, _rows(read, entries, _cut(text, max_chars)), hints, hint_texts)


def _redact_hints(batches: list[_Batch], max_chars: int) -> int:
    """Redact the few texts with a hint of a secret, all batches' at once; the count.

    One call for all of them, because each call compiles every pattern
    again (about 2 ms: 0.1 s over the 30 batches of 500 MB of logs).
    """
    if not any(len(b.hint_rows) for b in batches):
        return 0
    redacted, total = redact_hits(pl.concat([b.hint_texts for b in batches]))
    if not total:
        return 0
    cut = _cut(redacted, max_chars)
    start = 0
    for b in batches:
        count = len(b.hint_rows)
        if count:
            text = b.entries.get_column("text").clone().scatter(b.hint_rows, cut.slice(start, count))
            b.entries = b.entries.with_columns(text=text)
        start += count
    return total


def _rows(read: list[SessionFile], entries: pl.DataFrame, text: pl.Series) -> pl.DataFrame:
    """The batch's rows in the output schema (seq is set when all batches are in)."""
    file = entries.get_column("file")
    return pl.DataFrame(
        {
            "session": pl.Series([f.session_id for f in read], dtype=pl.Utf8).gather(file),
            "date": pl.Series([f.date for f in read], dtype=pl.Date).gather(file),
            "file": file,
            "role": pl.Series(_ROLE_NAMES, dtype=pl.Utf8).gather(entries.get_column("role")),
            "text": text,
        }
    )


def _read_batch(files: list[SessionFile]) -> tuple[Buffer, list[tuple[int, int] | str], list[int]]:
    """One buffer holding "\n" + bytes of each file; per file (start, end) or a problem,
    and flags for what the file may hold (`_HAS_NUL`, `_HAS_CR`).

    Each file is read straight into its place (sized by the scan). A file
    that grew since the scan is read whole and the buffer rebuilt (rare).
    """
    buf = _buffer(sum(f.size + 1 for f in files) + 2)  # + 2: room to look past the end
    if speedups.native is not None:
        return _read_batch_natively(files, buf)
    view = memoryview(buf)
    contents: list[tuple[int, int] | str] = []
    grown: dict[int, bytes] = {}
    pos = 0
    for i, f in enumerate(files):
        buf[pos] = 10
        start = pos + 1
        got = _read_into(f, view[start : start + f.size])
        if isinstance(got, bytes):
            grown[i] = got
            got = len(got)
        contents.append(got if isinstance(got, str) else (start, start + got))
        pos = start + f.size
    view.release()
    if grown:
        buf, contents = _rebuild(buf, contents, grown)
    return buf, contents, [_HAS_NUL | _HAS_CR] * len(files)  # not checked yet


_OPEN_FAILED, _READ_FAILED, _GREW = 1, 2, 3
_HAS_NUL, _HAS_CR = 1, 2


def _read_batch_natively(
    files: list[SessionFile], buf: Buffer
) -> tuple[Buffer, list[tuple[int, int] | str], list[int]]:
    """`_read_batch` with the reading in C (`dream._speedups.read_logs`): the whole
    batch in one call without the GIL, and the NUL and CR checks of
    `_content_span` done on the way (its `flags`)."""
    import numpy as np

    sizes = np.array([f.size for f in files], dtype=np.int64)
    reads = np.frombuffer(speedups.native.read_logs([os.fsencode(f.location) for f in files], sizes, buf), dtype=np.int64)
    contents: list[tuple[int, int] | str] = []
    grown: dict[int, bytes] = {}
    flags: list[int] = []
    for i, (f, (start, length, outcome, error, flag)) in enumerate(zip(files, reads.reshape(-1, 5).tolist())):
        flags.append(flag)
        if outcome == _OPEN_FAILED:
            contents.append(f"cannot open ({os.strerror(error)}), skipped")
        elif outcome == _READ_FAILED:
            contents.append(f"cannot read ({os.strerror(error)}), skipped")
        elif outcome == _GREW:  # it outgrew its slot since the scan: all of it, as it is now
            whole = _read_whole(f)
            if isinstance(whole, str):
                contents.append(whole)
            else:
                grown[i] = whole
                contents.append((start, start + len(whole)))
        else:
            contents.append((start, start + length))
    if grown:
        buf, contents = _rebuild(buf, contents, grown)
        flags = [_HAS_NUL | _HAS_CR] * len(files)  # the rebuilt buffer was not checked
    return buf, contents, flags


def _read_whole(f: SessionFile) -> bytes | str:
    """All of a file's bytes, or a problem."""
    got = _read_into(f, memoryview(bytearray()))  # a slot of nothing: all of it is "more"
    return b"" if isinstance(got, int) else got  # int: nothing more (an empty file)


def _buffer(size: int) -> mmap.mmap:
    """A writable buffer for a batch, its pages mapped in one system call.

    Touching fresh memory page by page (as bytearray(size) or the reads
    themselves would) costs one page fault per 4 KB; MAP_POPULATE maps them
    all at once. 500 MB of logs: 0.43 s -> 0.28 s to read, of which system
    time 0.37 s -> 0.23 s.
    """
    populate = getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)


def _read_into(f: SessionFile, slot: memoryview) -> int | bytes | str:
    """Bytes read into `slot`; all the bytes if the file outgrew it; or a problem."""
    try:
        fd = os.open(f.location, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return f"cannot open ({exc.strerror}), skipped"
    try:
        got = 0
        while got < len(slot) and (n := os.readv(fd, [slot[got:]])):
            got += n
        more = os.read(fd, 1 << 16)
        if not more:
            return got
        rest = [bytes(slot[:got]), more]
        while chunk := os.read(fd, 1 << 20):
            rest.append(chunk)
        return b"".join(rest)
    except OSError as exc:
        return f"cannot read ({exc.strerror}), skipped"
    finally:
        os.close(fd)


def _rebuild(
    buf: Buffer, contents: list[tuple[int, int] | str], grown: dict[int, bytes]
) -> tuple[Buffer, list[tuple[int, int] | str]]:
    parts: list[bytes] = []
    spans: list[tuple[int, int] | str] = []
    pos = 0
    for i, content in enumerate(contents):
        if isinstance(content, str):
            spans.append(content)
            continue
        data = grown[i] if i in grown else bytes(buf[content[0] : content[1]])
        parts += [b"\n", data]
        spans.append((pos + 1, pos + 1 + len(data)))
        pos += 1 + len(data)
    return bytearray(b"".join(parts) + b"\n\n"), spans


def _content_span(buf: Buffer, start: int, end: int, flags: int = _HAS_NUL | _HAS_CR) -> tuple[int, int, str | None]:
    """Where a file's entries lie in `buf`, after the same checks and fixes as ever.

    Binary files (NUL bytes) are refused; CRLF becomes LF (in place); lines
    before the first entry are dropped (a warning if they hold more than
    whitespace); trailing whitespace is dropped. (start, start) means no entries.
    """
    if flags & _HAS_NUL and buf.find(b"\x00", start, end) >= 0:
        return start, start, "binary file (NUL bytes), skipped"
    if flags & _HAS_CR and buf.find(b"\r", start, end) >= 0:
        fixed = bytes(buf[start:end]).replace(b"\r\n", b"\n")
        buf[start : start + len(fixed)] = fixed
        end = start + len(fixed)
    problem = None
    if bytes(buf[start : start + 2]) not in _PREFIXES:  # almost every log starts with an entry
        match = _FIRST_ENTRY.search(buf, start, end)
        head_end = end if match is None else match.start()
        if bytes(buf[start:head_end]).strip():
            problem = "text before the first entry (no '> ', '< ' or '. ' prefix), dropped"
        start = end if match is None else match.start() + 1
    return start, _stripped_end(buf, start, end), problem


def _stripped_end(buf: Buffer, start: int, end: int) -> int:
    """`end` moved back over trailing whitespace, as polars' strip_chars_end() counts it."""
    while end > start:
        if buf[end - 1] in _ASCII_SPACE:
            end -= 1
            continue
        if buf[end - 1] < 0x80:
            return end
        for width in (2, 3):  # the non-ASCII spaces are 2 or 3 bytes long
            try:
                char = bytes(buf[max(start, end - width) : end]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(char) == 1 and char in _UNICODE_SPACE:
                end -= width
                break
        else:
            return end
    return end


_SCAN_CHUNK = 1 << 20


def _newlines(arr: np.ndarray) -> np.ndarray:
    """Positions of every "\n" in `arr`, found a chunk at a time (no large temporaries)."""
    import numpy as np

    scratch = np.empty(min(_SCAN_CHUNK, len(arr)), dtype=bool)
    found = []
    for at in range(0, len(arr), _SCAN_CHUNK):
        chunk = arr[at : at + _SCAN_CHUNK]
        hits = scratch[: len(chunk)]
        np.equal(chunk, 10, out=hits)
        found.append(np.flatnonzero(hits) + at)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _split_batch(buf: Buffer, spans: list[tuple[int, int]]) -> pl.DataFrame | None:
    """file, role, text of every entry in the files' spans; None if a text is not UTF-8.

    An entry starts at a newline followed by a prefix and a space. Its text
    runs from after the prefix to the newlines before the next entry (blank
    lines closing an entry are dropped), or to the end of its file's span.
    """
    import numpy as np

    if speedups.native is not None and 16 <= len(buf) < 1 << 31:
        return _split_batch_native(buf, spans)
    spans = [(i, s, e) for i, (s, e) in enumerate(spans) if e > s]
    if not spans:
        return pl.DataFrame(schema={"file": pl.UInt32, "role": pl.UInt8, "text": pl.Utf8, "maybe_secret": pl.Boolean})
    owner, starts, ends = (np.array(column, dtype=np.int64) for column in zip(*spans))
    arr = np.frombuffer(buf, dtype=np.uint8)
    newlines = _newlines(arr[: ends[-1]])
    # Each newline's run of newlines starts here (for dropping blank lines).
    run_break = np.ones(len(newlines), dtype=bool)
    run_break[1:] = np.diff(newlines) != 1
    run_start = newlines[np.maximum.accumulate(np.where(run_break, np.arange(len(newlines)), 0))]
    after = arr[newlines + 1]
    is_entry = ((after == 62) | (after == 60) | (after == 46)) & (arr[newlines + 2] == 32)
    # Entries inside a file (a file's first entry is at its start, below).
    inner = np.flatnonzero(is_entry)
    at = newlines[inner]
    file = np.searchsorted(starts, at, side="right") - 1
    keep = (file >= 0) & (at + 3 <= ends[np.maximum(file, 0)])
    inner_at, inner_file, inner_end = at[keep], file[keep], run_start[inner[keep]]
    # All entries, in order: (newline before the prefix, file, where the text of the entry before ends).
    first_at = starts - 1
    order = np.argsort(np.concatenate([first_at, inner_at]), kind="stable")
    entry_at = np.concatenate([first_at, inner_at])[order]
    entry_file = np.concatenate([np.arange(len(starts)), inner_file])[order]
    ends_before = np.concatenate([np.zeros(len(starts), dtype=np.int64), inner_end])[order]
    last_of_file = np.ones(len(entry_at), dtype=bool)
    last_of_file[:-1] = entry_file[1:] != entry_file[:-1]
    text_start = np.minimum(entry_at + 3, ends[entry_file])
    text_end = np.where(last_of_file, ends[entry_file], np.append(ends_before[1:], 0))
    text = _slices(buf, text_start, text_end, starts, ends)
    if text is None:
        return None
    return pl.DataFrame(
        {
            "file": pl.Series(owner[entry_file].astype(np.uint32)),
            "role": pl.Series(_role_index(arr[entry_at + 1])),
            "text": text,
            "maybe_secret": _maybe_secret(buf, text_start, text_end, last_of_file),
        }
    )


def _split_batch_native(buf: Buffer, spans: list[tuple[int, int]]) -> pl.DataFrame | None:
    """`_split_batch` in one pass of C (`dream._speedups.log_entries`), the same rows.

    The scanner returns the entries' texts as Arrow string views into `buf`
    (and views of groups of entries for the redaction pre-check), so polars
    gets them with no copy, as in `_slices`.
    """
    import numpy as np

    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    if _slices_by_offsets(buf, starts, ends) is None:  # polars checks UTF-8 faster than C by hand
        return None
    views, file, role, group_views, entry_group = speedups.native.log_entries(buf, starts, ends, _GROUP_ROWS)
    group_hit = _string_views(buf, group_views).str.contains(HINTS).to_numpy()
    return pl.DataFrame(
        {
            "file": pl.Series(np.frombuffer(file, dtype=np.uint32)),
            "role": pl.Series(np.frombuffer(role, dtype=np.uint8)),
            "text": _string_views(buf, views).alias("text"),
            "maybe_secret": pl.Series(group_hit[np.frombuffer(entry_group, dtype=np.uint32)]),
        }
    )


def _string_views(buf: Buffer, views: bytes | np.ndarray) -> pl.Series:
    """A polars string Series over `buf` from Arrow views (16 bytes each), without copying.

    The caller has checked that the viewed bytes are UTF-8: polars takes
    string views as they are.
    """
    import pyarrow as pa

    count = len(memoryview(views).cast("B")) // 16
    array = pa.Array.from_buffers(pa.string_view(), count, [None, pa.py_buffer(views), pa.py_buffer(buf)])
    return pl.Series(pl.from_arrow(array))


_GROUP_ROWS = 16


def _maybe_secret(buf: Buffer, start: np.ndarray, end: np.ndarray, last_of_file: np.ndarray) -> pl.Series:
    """True on each entry in a group of entries whose bytes hold a redaction hint.

    Searching `HINTS` row by row costs a regex call per entry; searching
    runs of up to `_GROUP_ROWS` consecutive entries of one file as one
    string is several times faster, and secrets are rare, so few groups
    hit. A group is the buffer from its first text's start to its last
    text's end: the texts (already checked to be UTF-8) and, between them,
    only ASCII newlines and prefixes, which hold no hint (no hint holds a
    newline). So a group is valid UTF-8 and hits whenever one of its
    entries does (more often, never less: a superset of the hit rows).
    The groups reach polars as string views into the buffer (see `_slices`).
    """
    import numpy as np
    import pyarrow as pa

    count = len(start)
    if len(buf) >= 1 << 31 or len(buf) < 16:  # no string views (see `_slices`): every row is a candidate
        return pl.Series(np.ones(count, dtype=bool))
    index = np.arange(count)
    first = np.ones(count, dtype=bool)
    first[1:] = last_of_file[:-1] | (index[1:] % _GROUP_ROWS == 0)
    group_first = np.flatnonzero(first)
    group_last = np.append(group_first[1:] - 1, count - 1)
    group_start = start[group_first]
    group_end = np.maximum(end[group_last], group_start)
    views = pa.Array.from_buffers(
        pa.string_view(), len(group_first), [None, pa.py_buffer(_views(buf, group_start, group_end)), pa.py_buffer(buf)]
    )
    groups = pl.Series(pl.from_arrow(views))
    group_hit = groups.str.contains(HINTS).to_numpy()
    return pl.Series(np.repeat(group_hit, np.diff(np.append(group_first, count))))


def _role_index(prefix: np.ndarray) -> np.ndarray:
    """Index into _ROLE_NAMES of each prefix byte: '>' user, '<' assistant, '.' tool."""
    return (prefix == ord("<")).astype("uint8") + 2 * (prefix == ord(".")).astype("uint8")


def _slices(
    buf: Buffer, start: np.ndarray, end: np.ndarray, span_start: np.ndarray, span_end: np.ndarray
) -> pl.Series | None:
    """buf[start[i]:end[i]] as a polars string Series without copying the bytes; None if not UTF-8.

    Every text lies inside one file's span, its ends next to ASCII bytes
    (a prefix, a newline) or at the span's ends, and between texts a span
    holds only ASCII newlines and prefixes. So the texts are UTF-8 exactly
    when the spans are, and checking the few hundred spans of a batch is
    about 3x faster than checking its hundred thousand texts one by one.
    The texts are then handed to polars as string views (Arrow's layout:
    16 bytes per string, pointing into the buffer), built with numpy; polars
    takes them as they are, with no second check and no copy.
    """
    import numpy as np
    import pyarrow as pa

    if len(buf) >= 1 << 31 or len(buf) < 16:  # view offsets are 32-bit; tiny buffers: the other path
        return _slices_by_offsets(buf, start, end)
    if len(start) and (np.any(end < start) or int(end.max()) > len(buf) or int(start.min()) < 0):
        raise ValueError("entry bounds outside the batch buffer")  # a bug here, never bad input
    if _slices_by_offsets(buf, span_start, span_end) is None:
        return None
    views = pa.Array.from_buffers(
        pa.string_view(), len(start), [None, pa.py_buffer(_views(buf, start, end)), pa.py_buffer(buf)]
    )
    return pl.Series("text", pl.from_arrow(views))


_INLINE = 12  # strings up to this many bytes sit inside their view


def _views(buf: Buffer, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Arrow binary views of buf[start[i]:end[i]]: one row of four int32 per string.

    A view is (length, first 4 bytes, buffer index 0, offset) for a longer
    string, or (length, the bytes zero-padded to 12) for a short one.
    """
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    data = np.frombuffer(buf, dtype=np.uint8)
    length = (end - start).astype(np.int32)
    views = np.empty((len(start), 4), dtype=np.int32)
    views[:, 0] = length
    # Every 4-byte window of the buffer as an (unaligned) int32: the prefix is one lookup.
    windows4 = np.ndarray((len(data) - 3,), dtype=np.int32, buffer=buf, strides=(1,))
    views[:, 1] = windows4[np.minimum(start, len(data) - 4)]
    views[:, 2] = 0
    views[:, 3] = start
    short = np.flatnonzero(length <= _INLINE)
    if len(short):
        windows12 = as_strided(data, shape=(len(data) - _INLINE + 1, _INLINE), strides=(1, 1))
        inline = windows12[np.minimum(start[short], len(data) - _INLINE)]
        inline[np.arange(_INLINE)[None, :] >= length[short, None]] = 0
        # The last few bytes of the buffer have no full 12-byte window after them.
        for at in np.flatnonzero(start[short] > len(data) - _INLINE):
            row = short[at]
            inline[at] = 0
            inline[at, : length[row]] = data[start[row] : end[row]]
        views.view(np.uint8)[short, 4:16] = inline
    return views


def _slices_by_offsets(buf: Buffer, start: np.ndarray, end: np.ndarray) -> pl.Series | None:
    """buf[start[i]:end[i]] as a polars string Series, each checked to be UTF-8; None if not.

    Arrow offsets must be contiguous, so the pieces between texts are part
    of the array too (every other element) and are dropped by the gather.
    """
    import numpy as np
    import pyarrow as pa

    offsets = np.empty(2 * len(start) + 2, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1:2] = start
    offsets[2:-1:2] = end
    offsets[-1] = len(buf)
    pieces = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(buf)]
    )
    pieces.validate(full=True)  # offsets in order and inside the buffer (reads no text)
    texts = pl.Series("text", pieces).gather(pl.int_range(1, len(offsets) - 1, 2, eager=True))
    try:
        return texts.cast(pl.Utf8)
    except pl.exceptions.ComputeError:
        return None


def _repair_utf8(
    buf: Buffer, spans: list[tuple[int, int]], read: list[SessionFile], warnings: list[str]
) -> tuple[Buffer, list[tuple[int, int]]]:
    """A new buffer where files with invalid UTF-8 are decoded with replacement characters."""
    parts: list[bytes] = []
    fixed: list[tuple[int, int]] = []
    pos = 0
    for f, (start, end) in zip(read, spans):
        data = bytes(buf[start:end])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(f"{f.rel}: invalid UTF-8, decoded with replacement characters")
            data = data.decode("utf-8", errors="replace").encode()
        parts += [b"\n", data]
        fixed.append((pos + 1, pos + 1 + len(data)))
        pos += 1 + len(data)
    return bytearray(b"".join(parts) + b"\n\n"), fixed


def _assemble(batches: list[_Batch], redactions: int) -> Gathered:
    """One frame from the batches: session, date and seq come from each row's file."""
    import numpy as np

    read = [f for b in batches for f in b.read]
    warnings = [w for b in batches for w in b.warnings] + [w for b in batches for w in b.utf8_warnings]
    first_file = np.cumsum([0] + [len(b.read) for b in batches])
    if not any(b.entries.height for b in batches):
        return Gathered(pl.DataFrame(schema=SCHEMA), read, redactions, warnings)
    # Each row's file as an index into `read`.
    file = np.concatenate([b.entries.get_column("file").to_numpy() + base for b, base in zip(batches, first_file)])
    seq = _seq_in_session(read, file)
    # seq is added batch by batch: a column in one chunk beside texts in many
    # would make polars copy every text into one chunk (0.1 s per 500 MB).
    pieces, row = [], 0
    for b in batches:
        pieces.append(b.entries.with_columns(seq=seq.slice(row, b.entries.height)).select(list(SCHEMA)))
        row += b.entries.height
    return Gathered(pl.concat(pieces), read, redactions, warnings)


def _seq_in_session(read: list[SessionFile], file: np.ndarray) -> pl.Series:
    """Each entry's position in its session, counting across files (a session may span days).

    `file` is each row's index into `read`, in order; a file's rows are consecutive.
    """
    import numpy as np

    per_file = np.bincount(file, minlength=len(read)).tolist()
    before: dict[str, int] = {}
    shift = []  # per file: row number of its first row minus that row's seq
    row = 0
    for f, count in zip(read, per_file):
        seq = before.get(f.session_id, 0)
        before[f.session_id] = seq + count
        shift.append(row - seq)
        row += count
    return pl.Series(np.arange(len(file), dtype=np.int64) - np.repeat(np.array(shift, dtype=np.int64), per_file))


def _cut(text: pl.Series, max_chars: int) -> pl.Series:
    """Entries longer than `max_chars` keep their start and say how much was cut."""
    # A string has at least as many bytes as characters, and its byte length
    # is free to read: only the few long ones need their characters counted.
    long = (text.str.len_bytes() > max_chars).arg_true()
    if not len(long):
        return text
    candidates = text.gather(long)
    length = candidates.str.len_chars()
    marker = pl.concat_str(
        candidates.str.slice(0, max_chars),
        pl.lit(" […cut "),
        (length - max_chars).cast(pl.Utf8),
        pl.lit(" chars]"),
    )
    cut = pl.select(pl.when(length > max_chars).then(marker).otherwise(candidates)).to_series()
    return text.clone().scatter(long, cut)  # scatter writes in place: leave the caller's series alone
