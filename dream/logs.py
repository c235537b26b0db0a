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

Parsing is vectorised (polars): files are read as bytes (a few threads),
split into entries with one regex pass on the streaming engine, redacted
(`dream.redact.redact_column`) and cut to `max_entry_chars`; no Python loop
runs per line or per entry. Logs are input only: nothing here writes to the
store. ``bench/bench_gather.py`` measures it against ``cat``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from .redact import redact_column

LOGS_DIR = "logs"
ROLES = {">": "user", "<": "assistant", ".": "tool"}

_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_YEAR_RE = re.compile(r"\d{4}")
_TWO_DIGITS_RE = re.compile(r"\d{2}")


# --------------------------------------------------------------------------
# Scanning (stat only)


@dataclass(frozen=True)
class SessionFile:
    path: Path  # absolute
    rel: str  # relative to store root, posix
    session_id: str
    slug: str
    date: dt.date
    mtime: float
    size: int

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
        files.append(SessionFile(Path(entry.path), rel, session_id, slug, date, st.st_mtime, st.st_size))
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
    warnings: list[str] = []
    contents, owners, read = _read_all(files, warnings, on_progress)
    entries = _parse(contents, owners, read, warnings)
    del contents
    text, redactions = redact_column(entries.get_column("text"))
    entries = entries.with_columns(text=_cut(text, max_entry_chars))
    if on_progress:
        total = sum(f.size for f in files)
        on_progress(total, total)
    return Gathered(entries.select(list(SCHEMA)), read, redactions, warnings)


# Reading is plain system calls, so threads overlap them (os.read releases
# the GIL). Batches keep the per-task overhead small on many small files.
_READ_THREADS = min(4, os.cpu_count() or 1)
_READ_BATCH = 64


def _read_all(
    files: list[SessionFile], warnings: list[str], on_progress: Callable[[int, int], None] | None
) -> tuple[list[bytes], list[int], list[SessionFile]]:
    """Read every file: (contents with entries, index in `read` of each, files read)."""
    total = sum(f.size for f in files)
    batches = [files[i : i + _READ_BATCH] for i in range(0, len(files), _READ_BATCH)]
    contents: list[bytes] = []
    owners: list[int] = []
    read: list[SessionFile] = []
    done = 0
    with ThreadPoolExecutor(_READ_THREADS) as pool:
        for batch, results in zip(batches, pool.map(_read_batch, batches)):
            for f, (data, problem) in zip(batch, results):
                done += f.size
                if problem:
                    warnings.append(f"{f.rel}: {problem}")
                if data is None:
                    continue
                read.append(f)
                data, orphan = _from_first_entry(data)
                if orphan:
                    warnings.append(f"{f.rel}: text before the first entry (no '> ', '< ' or '. ' prefix), dropped")
                if data:
                    contents.append(data)
                    owners.append(len(read) - 1)
            if on_progress:
                on_progress(min(done, total), total)
    return contents, owners, read


def _read_batch(batch: list[SessionFile]) -> list[tuple[bytes | None, str | None]]:
    return [_read_one(f) for f in batch]


def _read_one(f: SessionFile) -> tuple[bytes | None, str | None]:
    """(bytes or None, warning or None) for one log; CRLF becomes LF."""
    try:
        fd = os.open(f.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return None, f"cannot open ({exc.strerror}), skipped"
    try:
        chunks = []
        while chunk := os.read(fd, max(f.size + 1, 1 << 16)):
            chunks.append(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError as exc:
        return None, f"cannot read ({exc.strerror}), skipped"
    finally:
        os.close(fd)
    if b"\x00" in data:
        return None, "binary file (NUL bytes), skipped"
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    return data, None


_PREFIXES = (b"> ", b"< ", b". ")
_FIRST_ENTRY = re.compile(rb"\n[<>.] ")


def _from_first_entry(data: bytes) -> tuple[bytes, bool]:
    """Drop lines before the first entry: (rest, whether they held more than whitespace).

    Almost every log starts with an entry, so this is one 2-byte comparison.
    """
    if data[:2] in _PREFIXES:
        return data, False
    match = _FIRST_ENTRY.search(data)
    head = data if match is None else data[: match.start()]
    rest = b"" if match is None else data[match.start() + 1 :]
    return rest, bool(head.strip())


def _parse(contents: list[bytes], owners: list[int], read: list[SessionFile], warnings: list[str]) -> pl.DataFrame:
    """Contents (each starting with an entry) → session, date, seq, role, text.

    `contents[i]` is the text of `read[owners[i]]`. Text is not yet redacted or cut.
    """
    if not contents:
        return pl.DataFrame(schema=SCHEMA)
    text = _decode(contents, [read[i] for i in owners], warnings)
    entries = _split_entries(pl.DataFrame({"row": pl.int_range(len(text), dtype=pl.UInt32, eager=True), "content": text}))
    row = entries.get_column("row")
    owner = pl.Series(owners, dtype=pl.UInt32).gather(row)
    return entries.with_columns(
        session=pl.Series([f.session_id for f in read], dtype=pl.Utf8).gather(owner),
        date=pl.Series([f.date for f in read], dtype=pl.Date).gather(owner),
    ).with_columns(seq=pl.int_range(pl.len(), dtype=pl.Int64).over("session"))


def _decode(contents: list[bytes], files: list[SessionFile], warnings: list[str]) -> pl.Series:
    """Bytes → Utf8 Series; files with invalid UTF-8 get replacement characters."""
    raw = pl.Series("content", contents, dtype=pl.Binary)
    try:
        return raw.cast(pl.Utf8)
    except pl.exceptions.ComputeError:
        pass
    # Rare: find the invalid files one by one and decode them leniently.
    decoded = []
    for f, data in zip(files, contents):
        try:
            decoded.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            warnings.append(f"{f.rel}: invalid UTF-8, decoded with replacement characters")
            decoded.append(data.decode("utf-8", errors="replace"))
    return pl.Series("content", decoded, dtype=pl.Utf8)


# Where a new entry starts: newlines followed by a prefix and a space. The
# newlines (so blank lines closing an entry) become one NUL to split on; NUL
# is never in an accepted file.
_ENTRY_BOUNDARY = r"\n+([<>.] )"
_SPLIT_MARK = "\x00"


def _split_entries(files: pl.DataFrame) -> pl.DataFrame:
    """row, content (each starting with an entry) → row, role, text (one row per entry).

    Runs on the streaming engine, which spreads the regex work over all cores.
    """
    return (
        files.lazy()
        .select(
            "row",
            piece=pl.col("content")
            .str.strip_chars_end()
            .str.replace_all(_ENTRY_BOUNDARY, _SPLIT_MARK + "${1}")
            .str.split(_SPLIT_MARK),
        )
        .explode("piece", empty_as_null=False)
        .select(
            "row",
            role=pl.col("piece").str.head(1).replace_strict(ROLES, return_dtype=pl.Utf8),
            text=pl.col("piece").str.slice(2),
        )
        .collect(engine="streaming")
    )


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
    return text.scatter(long, cut)
