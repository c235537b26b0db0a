"""Activity logs: parse the session logs a scan found (`dream.store.sessions`) into one table.

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

Parsing is a few polars string operations per batch of files (no Python
loop per line or entry); the entries are then redacted (`dream.redaction.redact`)
and cut to `max_entry_chars`. Logs are input only: nothing here writes to the
store. ``bench/bench_gather.py`` measures it against ``cat``.
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import polars as pl

from dream.address_space import address_space_cap, check_log_fits
from dream.store.ledger import Ledger, read_of
from dream.redaction.redact import REDACT_MARGIN, redact_column, redact_following
from dream.store.sessions import SessionFile
from dream.store.regular import kind_of

# --------------------------------------------------------------------------
# Reading and parsing


@dataclass
class Gathered:
    sessions: pl.DataFrame  # session, date, seq, role, text
    files: list[SessionFile]
    redactions: int
    warnings: list[str] = field(default_factory=list)
    reads: Ledger = field(default_factory=dict)  # each file read: size, mtime and hash of the bytes read


SCHEMA = {"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8}

# Logs are parsed a batch of about this many bytes at a time (a long log is
# cut where an entry starts): the memory of one batch is reused by the next,
# and only the parsed table grows.
_BATCH_BYTES = 4 << 20
_WORKERS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
# polars sizes the views of a split by the bytes split (16 bytes a byte),
# address space that a cap counts: with up to one batch per worker waiting,
# this much may be taken by batches in flight. 16 MB batches aborted under
# 2 GB on a 150 MB log; 4 MB batches gather as fast (bench/README.md).
_IN_FLIGHT_BYTES = (_WORKERS + 2) * 16 * _BATCH_BYTES
_PREFIXES = (b"> ", b"< ", b". ")
_FIRST_ENTRY = re.compile(rb"\n[<>.] ")
# Whitespace to Rust (and so to polars): ASCII, and wider characters.
_ASCII_SPACES = b" \t\n\r\x0b\x0c"
_WIDE_SPACES = tuple(
    c.encode() for c in "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# Each entry start becomes NUL, role, NUL (a log with a NUL byte is refused,
# so NUL separates safely); a file then splits into "", role, text, role, text…
_ENTRY_STARTS = ["\n> ", "\n< ", "\n. "]
_ENTRY_MARKS = [mark.encode() for mark in _ENTRY_STARTS]
_ROLE_MARKS = [f"\x00{role}\x00" for role in ("user", "assistant", "tool")]


def read_sessions(
    files: list[SessionFile],
    on_progress: Callable[[int, int], None] | None = None,
    max_entry_chars: int = 2000,
) -> Gathered:
    """Parse `files` into one table of entries, redacted and cut to `max_entry_chars`.

    Never raises on a bad file: binary (NUL bytes) and unreadable files are
    skipped, invalid UTF-8 is decoded with replacement characters; each case
    adds a one-line warning naming the file (the UTF-8 ones last).
    `Gathered.files` lists the files that were read (an empty file is read
    but gives no rows).

    Batches are split into entries in worker threads while the next ones
    are read, and the entries are redacted a slice per worker: polars lets
    go of the GIL, and one polars operation on one Series runs on one core.
    At most one batch per worker waits, so memory stays a few batches above
    the table's own.
    """
    total = sum(f.size for f in files)
    read: list[SessionFile] = []
    reads: Ledger = {}
    warnings: list[str] = []
    parsed: list[_Parsed] = []
    waiting: deque[tuple[Future[_Parsed], int]] = deque()
    seen: dict[str, int] = {}  # entries so far per session: a session may span days
    done = 0

    def collect_oldest() -> None:
        nonlocal done
        future, size = waiting.popleft()
        parsed.append(future.result().numbered(seen))
        done += size
        if on_progress:
            on_progress(min(done, total), total)

    with ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="dream-gather") as pool:
        for texts, owners in _batches(_pieces(files, read, reads, warnings)):
            waiting.append((pool.submit(_parse, texts, owners), sum(map(len, texts))))
            if len(waiting) > _WORKERS:
                collect_oldest()
        while waiting:
            collect_oldest()
        table, redactions = _table(parsed, max_entry_chars, pool)
    if on_progress:
        on_progress(total, total)
    utf8_warnings = list(dict.fromkeys(w for p in parsed for w in p.warnings))  # once for a file of many pieces
    return Gathered(table, read, redactions, warnings + utf8_warnings, reads)


def _pieces(
    files: list[SessionFile], read: list[SessionFile], reads: Ledger, warnings: list[str]
) -> Iterator[tuple[bytes, SessionFile]]:
    """The entries' bytes of each file that has some, "\\n" first, a piece of about `_BATCH_BYTES` at a time.

    A file is cut only where an entry starts, so the work of splitting it
    (polars sizes a split by the bytes of its batch) stays bounded by a
    batch, whatever the size of the file. An entry longer than a batch is
    one piece. Each piece is one copy of the bytes read, made when it is
    needed. Adds every file read to `read` and what was read of it to
    `reads`, and every problem to `warnings`.
    """
    for f in files:
        span, problem = _entries_of(f, reads)
        if problem:
            warnings.append(f"{f.rel}: {problem}")
        if span is None:
            continue
        data, start, end = span
        if address_space_cap() is not None:
            check_log_fits(f.rel, end - start, _entry_count(data, start, end), _IN_FLIGHT_BYTES)
        read.append(f)
        view, first = memoryview(data), b"\n"
        while end - start > _BATCH_BYTES:
            cut = _last_entry_start(data, start + 1, start + _BATCH_BYTES) or _first_entry_start(data, start + 1, end)
            if cut is None:
                break
            stop = cut
            while data[stop - 1] == 0x0A:  # blank lines closing an entry are never its text (see `_split`)
                stop -= 1
            yield first + view[start:stop], f
            start, first = cut, b""
        if end > start:
            yield first + view[start:end], f


def _entry_count(data: bytes, start: int, end: int) -> int:
    return 1 + sum(data.count(mark, start, end) for mark in _ENTRY_MARKS) if end > start else 0


def _last_entry_start(data: bytes, start: int, end: int) -> int | None:
    found = max(data.rfind(mark, start, end) for mark in _ENTRY_MARKS)
    return found if found > 0 else None


def _first_entry_start(data: bytes, start: int, end: int) -> int | None:
    match = _FIRST_ENTRY.search(data, start, end)
    return match.start() if match else None


def _batches(pieces: Iterable[tuple[bytes, SessionFile]]) -> Iterator[tuple[list[bytes], list[SessionFile]]]:
    """The pieces, at most `_BATCH_BYTES` of them at a time (or one longer piece): their texts and files."""
    texts: list[bytes] = []
    owners: list[SessionFile] = []
    size = 0
    for data, f in pieces:
        if texts and size + len(data) > _BATCH_BYTES:
            yield texts, owners
            texts, owners, size = [], [], 0
        texts.append(data)
        owners.append(f)
        size += len(data)
    if texts:
        yield texts, owners


def _entries_of(f: SessionFile, reads: Ledger) -> tuple[tuple[bytes, int, int] | None, str | None]:
    """Where a file's entries are in its bytes (data, start, end), and a problem to report.

    None when the file is skipped (unreadable, binary); start == end when
    it has no entry. CRLF becomes LF; lines before the first entry are
    dropped (a problem if they hold more than whitespace); trailing
    whitespace too.
    """
    data = _read(f)
    if isinstance(data, str):
        return None, data
    reads[f.rel] = read_of(f, data)  # a binary file too: it is accounted for, or every run would read it
    if b"\x00" in data:
        return None, "binary file (NUL bytes), skipped"
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    problem, start = None, 0
    if data[:2] not in _PREFIXES:
        match = _FIRST_ENTRY.search(data)
        head = data if match is None else data[: match.start()]
        if head.strip():
            problem = "text before the first entry (no '> ', '< ' or '. ' prefix), dropped"
        if match is None:
            return (data, 0, 0), problem
        start = match.start() + 1
    end = _end_without_spaces(data, start)
    if end == start + 1:  # a prefix alone, its space stripped with the trailing whitespace: one empty entry
        return (data[start:end] + b" ", 0, 2), problem
    return (data, start, end), problem


def _read(f: SessionFile) -> bytes | str:
    """All of a file's bytes as they are now (it may have changed since the scan), or a problem."""
    try:
        # Non-blocking: a log swapped for a FIFO since the scan must not hang the run.
        fd = os.open(f.location, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return f"cannot open ({exc.strerror}), skipped"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return f"{kind_of(os.fstat(fd).st_mode)}, not a regular file, skipped"
        with open(fd, "rb", buffering=0, closefd=False) as fh:
            return fh.read()
    except OSError as exc:
        return f"cannot read ({exc.strerror}), skipped"
    finally:
        os.close(fd)


def _end_without_spaces(data: bytes, start: int = 0) -> int:
    """Where `data[start:]` ends without its trailing whitespace, as polars' strip_chars_end() counts it.

    The bytes of a wide space cannot end any other character (UTF-8 lead
    bytes are never continuation bytes), so they are safe to test raw.
    """
    end = len(data)
    while end > start:
        last = data[end - 1]
        if last in _ASCII_SPACES:
            end -= 1
        elif last < 0x80:
            return end
        else:
            wide = next((s for s in _WIDE_SPACES if data.endswith(s, start, end)), None)
            if wide is None:
                return end
            end -= len(wide)
    return end


def _as_utf8(texts: list[bytes], owners: list[SessionFile], warnings: list[str]) -> pl.Series:
    """The texts as a polars string Series; files that are not UTF-8 get replacement characters."""
    try:
        return pl.Series(texts, dtype=pl.Binary).cast(pl.Utf8)
    except pl.exceptions.ComputeError:  # rare: find the culprits one by one
        pass
    fixed = []
    for f, data in zip(owners, texts):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(f"{f.rel}: invalid UTF-8, decoded with replacement characters")
            data = data.decode("utf-8", errors="replace").encode()
        fixed.append(data)
    return pl.Series(fixed, dtype=pl.Binary).cast(pl.Utf8)


@dataclass
class _Parsed:
    """One batch's entries, split into rows; redacted, cut and numbered per session later."""

    entries: pl.DataFrame  # file (index into owners), role, text
    owners: list[SessionFile]
    counts: list[int]  # entries per file
    warnings: list[str] = field(default_factory=list)

    def numbered(self, seen: dict[str, int]) -> _Parsed:
        """With session, date and seq; `seen` (entries so far per session) is updated. Batches in file order."""
        shift, row = [], 0
        for f, count in zip(self.owners, self.counts):
            before = seen.get(f.session_id, 0)
            seen[f.session_id] = before + count
            shift.append(before - row)
            row += count
        file = self.entries.get_column("file")
        self.entries = pl.DataFrame({
            "session": pl.Series([f.session_id for f in self.owners], dtype=pl.Utf8).gather(file),
            "date": pl.Series([f.date for f in self.owners], dtype=pl.Date).gather(file),
            "seq": pl.int_range(len(file), dtype=pl.Int64, eager=True) + pl.Series(shift, dtype=pl.Int64).gather(file),
            "role": self.entries.get_column("role"),
            "text": self.entries.get_column("text"),
        })
        return self


def _parse(texts: list[bytes], owners: list[SessionFile]) -> _Parsed:
    """One batch's entries (in a worker thread: nothing shared is touched)."""
    warnings: list[str] = []
    entries, counts = _split(_as_utf8(texts, owners, warnings))
    return _Parsed(entries, owners, counts, warnings)


def _split(texts: pl.Series) -> tuple[pl.DataFrame, list[int]]:
    """file, role, text of every entry in `texts` (one file each), and the entries per file.

    `str.replace_many` (one Aho-Corasick pass) marks the entry starts; it
    leaves the newlines of blank lines closing an entry, which the texts
    that end in one lose afterwards (a regex taking them in the same pass
    was 2-3x slower).
    """
    pieces = texts.str.replace_many(_ENTRY_STARTS, _ROLE_MARKS).str.split("\x00")
    entries = pl.DataFrame(
        {
            "file": pl.int_range(len(texts), dtype=pl.UInt32, eager=True),
            "role": pieces.list.gather_every(2, offset=1),
            "text": pieces.list.gather_every(2, offset=2),
        }
    ).explode("role", "text", empty_as_null=False)  # never empty: each file has an entry
    if texts.str.contains("\n\n", literal=True).any():
        entries = entries.with_columns(text=_drop_closing_newlines(entries.get_column("text")))
    return entries, (pieces.list.len() // 2).to_list()


def _drop_closing_newlines(text: pl.Series) -> pl.Series:
    """Texts without the newlines of the blank lines between them and the next entry."""
    rows = text.str.ends_with("\n").arg_true()
    if not len(rows):
        return text
    return text.scatter(rows, text.gather(rows).str.strip_chars_end("\n"))


def _table(parsed: list[_Parsed], max_chars: int, pool: ThreadPoolExecutor) -> tuple[pl.DataFrame, int]:
    """All batches in one table, redacted (a slice per worker), then cut; and the redaction count."""
    frames = [p.entries for p in parsed if p.entries.height]
    if not frames:
        return pl.DataFrame(schema=SCHEMA), 0
    text, dropped = _trim_past_margin(pl.concat([f.get_column("text") for f in frames], rechunk=False),
                                      max_chars + REDACT_MARGIN)
    step = -(-len(text) // _WORKERS)
    done = list(pool.map(redact_column, [text.slice(at, step) for at in range(0, len(text), step)]))
    # "the password is", then the password alone in the next entry
    text, following = redact_following(pl.concat([t for t, _ in done], rechunk=False))
    text = _cut(text, max_chars, dropped)
    # Back in the batches' chunks: a text column in one chunk beside columns in
    # many would make polars copy those into one chunk too (+110 MB per 500 MB).
    parts, at = [], 0
    for f in frames:
        parts.append(f.with_columns(text=text.slice(at, f.height)))
        at += f.height
    return pl.concat(parts, rechunk=False).select(list(SCHEMA)), sum(count for _, count in done) + following


def _trim_past_margin(text: pl.Series, keep: int) -> tuple[pl.Series, pl.Series | None]:
    """Entries longer than `keep` lose their tail before redaction; per row, how many characters went.

    Only the start of a long entry is kept after the cut, and redacting a
    50 MB line whole takes minutes (detect-secrets' patterns are Python
    regexes). What is kept past the cut, `REDACT_MARGIN`, is longer than any
    secret, so a secret across the cut is still seen whole and redacted.
    """
    long = (text.str.len_bytes() > keep).arg_true()  # bytes >= characters: a superset, read for free
    if not len(long):
        return text, None
    candidates = text.gather(long)
    gone = (candidates.str.len_chars().cast(pl.Int64) - keep).clip(lower_bound=0)
    dropped = pl.zeros(len(text), pl.Int64, eager=True).scatter(long, gone)
    return text.clone().scatter(long, candidates.str.slice(0, keep)), dropped


def _cut(text: pl.Series, max_chars: int, dropped: pl.Series | None = None) -> pl.Series:
    """Entries longer than `max_chars` keep their start and say how much was cut (`dropped` included)."""
    # A string has at least as many bytes as characters, and its byte length
    # is free to read: only the few long ones need their characters counted.
    long = (text.str.len_bytes() > max_chars).arg_true()
    if not len(long):
        return text
    candidates = text.gather(long)
    length = candidates.str.len_chars().cast(pl.Int64)
    if dropped is not None:
        length = length + dropped.gather(long)
    marker = pl.concat_str(
        candidates.str.slice(0, max_chars),
        pl.lit(" […cut "),
        (length - max_chars).cast(pl.Utf8),
        pl.lit(" chars]"),
    )
    cut = pl.select(pl.when(length > max_chars).then(marker).otherwise(candidates)).to_series()
    return text.clone().scatter(long, cut)  # scatter writes in place: leave the caller's series alone
