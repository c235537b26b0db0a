"""Reading dream's own JSON records (versions, proposals, state) defensively.

These files live under ``.dream/`` and are written by dream, but a crash, a
hand edit or a disk problem can leave one damaged: not JSON, not an object,
a required key missing or of the wrong type. Every such case must become one
`BadInput` line naming the file, never a `TypeError` deep inside a command.
`load_json_record` checks the basic shape against the dataclass's fields; it
does not try to repair anything.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, TypeVar

from dream.errors import BadInput

T = TypeVar("T")

# Basic JSON types accepted for each annotated Python type. A float field
# takes an int too (JSON writes 3.0 as 3 in some tools); bool is not a number.
_JSON_TYPES: dict[Any, tuple[type, ...]] = {
    int: (int,), float: (int, float), str: (str,), bool: (bool,),
    dict: (dict,), list: (list,), type(None): (type(None),),
}


class DamagedRecord(BadInput):
    """A record file under ``.dream/`` exists but cannot be used."""


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in `path`; `DamagedRecord` if it is unreadable, not JSON or not an object.

    A missing file raises `FileNotFoundError` so each caller decides what
    absence means (an unknown version, a store never consolidated …).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise DamagedRecord(f"{path}: damaged {what}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise DamagedRecord(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if not isinstance(raw, dict):
        raise DamagedRecord(f"{path}: damaged {what}: expected a JSON object, found {type(raw).__name__}")
    return raw


def load_json_record(path: Path, cls: type[T], what: str) -> T:
    """Build dataclass `cls` from the JSON object in `path`, checking required keys and basic types.

    Unknown keys are ignored (a newer dream may have added some).
    """
    return record_from_dict(read_json_object(path, what), cls, f"{path}: damaged {what}")


def record_from_dict(raw: dict[str, Any], cls: type[T], context: str) -> T:
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in raw:
            if f.default is MISSING and f.default_factory is MISSING:
                raise DamagedRecord(f"{context}: missing key {f.name!r}")
            continue
        value = raw[f.name]
        allowed = _allowed_types(hints[f.name])
        if allowed and not _is_instance(value, allowed):
            raise DamagedRecord(f"{context}: key {f.name!r} should be {_names(allowed)}, found {_json_name(value)}")
        _check_items(value, hints[f.name], f"{context}: key {f.name!r}")
        values[f.name] = value
    return cls(**values)


def _allowed_types(hint: Any) -> tuple[type, ...]:
    """The JSON types a field's annotation admits; empty when the annotation is not a simple one."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [_allowed_types(arg) for arg in typing.get_args(hint)]
        return () if any(not p for p in parts) else tuple(t for p in parts for t in p)
    return _JSON_TYPES.get(origin or hint, ())


def _check_items(value: Any, hint: Any, context: str) -> None:
    """For `dict[str, str]` and `list[str]` fields, check the items too (a path map of numbers is damaged)."""
    args = typing.get_args(hint)
    if isinstance(value, dict) and typing.get_origin(hint) is dict and len(args) == 2:
        items = [*value.values()]
        allowed = _allowed_types(args[1])
    elif isinstance(value, list) and typing.get_origin(hint) is list and len(args) == 1:
        items, allowed = value, _allowed_types(args[0])
    else:
        return
    bad = [item for item in items if allowed and not _is_instance(item, allowed)]
    if bad:
        raise DamagedRecord(f"{context} should hold {_names(allowed)} items, found {_json_name(bad[0])}")


def _is_instance(value: Any, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in allowed:
        return False  # True is an int in Python, not a number in a record
    return isinstance(value, allowed)


def _names(allowed: tuple[type, ...]) -> str:
    names = dict.fromkeys(_json_name_of_type(t) for t in allowed)
    return " or ".join(names)


def _json_name_of_type(t: type) -> str:
    return {int: "a number", float: "a number", str: "a string", bool: "true/false", dict: "an object",
            list: "a list", type(None): "null"}.get(t, t.__name__)


def _json_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    return _json_name_of_type(type(value)) if type(value) in _JSON_TYPES else type(value).__name__
