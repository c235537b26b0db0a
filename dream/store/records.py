"""Reading dream's own JSON records (state, versions, proposals, the journal) defensively.

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


def read_record_bytes(path: Path, what: str) -> bytes:
    """The bytes of a regular file of at most `MAX_RECORD_BYTES`; `DamagedRecord` otherwise.

    A FIFO or a device in place of a record is reported instead of hanging
    the command (`dream.store.regular`). A missing file raises
    `FileNotFoundError`: each caller decides what absence means (an unknown
    version, a store never consolidated …).
    """
    return read_regular(path, what, MAX_RECORD_BYTES, DamagedRecord)


def parse_record(data: bytes, cls: type[T], context: str) -> T:
    """Build `cls` (a dataclass, or e.g. ``dict[str, Any]``) from JSON bytes; `DamagedRecord` naming `context`."""
    try:
        return msgspec.json.decode(data, type=cls, strict=True)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise DamagedRecord(f"{context}: {_problem(exc)}") from None


def record_from_dict(raw: dict[str, Any], cls: type[T], context: str) -> T:
    """Build `cls` from an object already read (e.g. completed from elsewhere), with the same checks."""
    try:
        return msgspec.convert(raw, cls, strict=True)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise DamagedRecord(f"{context}: {_problem(exc)}") from None


def load_json_record(path: Path, cls: type[T], what: str) -> T:
    """Build dataclass `cls` from the JSON object in `path`."""
    return parse_record(read_record_bytes(path, what), cls, f"{path}: damaged {what}")


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path`; `DamagedRecord` if it is unreadable, not JSON or not an object."""
    return load_json_record(path, dict[str, Any], what)


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
