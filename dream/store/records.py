"""Reading dream's own JSON records (state, versions, proposals, the journal, the lint cache …) defensively.

This is the one reader of every JSON file under ``.dream/``: none is read
with another library or without the bounded read below.

These files live under ``.dream/`` and are written by dream, but a crash, a
hand edit, a disk problem or a hostile file can leave one damaged: not JSON,
not an object, a key missing or of the wrong type, nested ten thousand
levels deep, a FIFO that never answers, a gigabyte of garbage. Every such
case must become one `DamagedRecord` line naming the file, never a hang or a
`TypeError` deep inside a command.

The shape of a record is its dataclass; msgspec checks it (strictly: a
string is not a number, true is not 1). Unknown keys are ignored, so a newer
dream may add some. msgspec rather than pydantic because every command reads
records, `dream status` included: msgspec imports in a few milliseconds,
pydantic and its first validator take about 0.25 s (bench/bench_startup.py).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from dream.errors import BadInput
from dream.store.regular import read_regular

T = TypeVar("T")

# Far above any record dream writes (a proposal of 20,000 files is ~2 MB);
# below what would hurt to read by mistake.
MAX_RECORD_BYTES = 64 * 1024 * 1024


class DamagedRecord(BadInput):
    """A record file under ``.dream/`` exists but cannot be used."""


class CutShortRecord(DamagedRecord):
    """The JSON ends before it is whole: a write that stopped part-way, nothing a person made."""


def read_record_bytes(path: Path, what: str) -> bytes:
    """The bytes of a regular file of at most `MAX_RECORD_BYTES`; `DamagedRecord` otherwise.

    A FIFO or a device in place of a record is reported instead of hanging
    the command (`dream.store.regular`). A missing file raises
    `FileNotFoundError`: each caller decides what absence means (an unknown
    version, a store never consolidated …).
    """
    return read_regular(path, what, MAX_RECORD_BYTES, DamagedRecord)


def read_gzip_record_bytes(path: Path, what: str) -> bytes:
    """`read_record_bytes` of a gzip file, inflated; refused past `MAX_RECORD_BYTES` either way.

    The cap holds for what it inflates to as well: 200 KB of gzip can be 200 MB of spaces.
    """
    data = read_record_bytes(path, what)
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = inflater.decompress(data, MAX_RECORD_BYTES + 1)
    except zlib.error as exc:
        raise DamagedRecord(f"{path}: damaged {what}: not gzip ({exc})") from None
    if len(out) > MAX_RECORD_BYTES:
        raise DamagedRecord(f"{path}: {what} inflates past dream's limit of {MAX_RECORD_BYTES:,} bytes")
    if not inflater.eof:
        raise CutShortRecord(f"{path}: damaged {what}: the gzip stream is cut short")
    return out


def parse_record(data: bytes, cls: type[T], context: str) -> T:
    """Build `cls` (a dataclass, or e.g. ``dict[str, Any]``) from JSON bytes; `DamagedRecord` naming `context`."""
    try:
        return msgspec.json.decode(data, type=cls, strict=True)
    except (msgspec.DecodeError, RecursionError) as exc:
        kind = CutShortRecord if str(exc) == _CUT_SHORT else DamagedRecord
        raise kind(f"{context}: {_problem(exc)}") from None


def record_from_dict(raw: dict[str, Any], cls: type[T], context: str) -> T:
    """Build `cls` from an object already read (e.g. completed from elsewhere), with the same checks."""
    try:
        return msgspec.convert(raw, cls, strict=True)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise DamagedRecord(f"{context}: {_problem(exc)}") from None


def load_json_record(path: Path, cls: type[T], what: str, gzipped: bool = False) -> T:
    """Build dataclass `cls` from the JSON object in `path` (a gzip file when `gzipped`)."""
    data = read_gzip_record_bytes(path, what) if gzipped else read_record_bytes(path, what)
    return parse_record(data, cls, f"{path}: damaged {what}")


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path`; `DamagedRecord` if it is unreadable, not JSON or not an object."""
    return load_json_record(path, dict[str, Any], what)


_CUT_SHORT = "Input data was truncated"  # msgspec's words for JSON that ends too soon


def _problem(exc: Exception) -> str:
    """One line: 'not valid JSON (…)', 'key files: expected `object`, got `array`'."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    message = str(exc)
    if not isinstance(exc, msgspec.ValidationError):  # the JSON itself (ValidationError is a DecodeError)
        return f"not valid JSON ({message})"
    what, _, where = message.partition(" - at `")
    what = what[:1].lower() + what[1:]
    key = where.rstrip("`").removeprefix("$").removeprefix(".")
    return f"key {key}: {what}" if key else what
