"""How many tokens a text takes: the API's count where the server offers it, else a conservative local one.

The local count goes by script (`scripts.toml`): about a third of a token
for an ASCII character, a whole token or more for a Japanese, Chinese or
Korean one. It is meant to err high, so that what it lets into a prompt
fits; a Japanese session counted at English rates is a third of its real
size, and a first message planned that way outgrew a 200K window.

`count_request` asks the server (``POST /v1/messages/count_tokens``) for the
exact count of a request; a server that does not offer it (a gateway, an
old proxy) answers an error, and the local count stands.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import anthropic

from dream.errors import BadInput


@dataclass(frozen=True)
class ScriptClass:
    name: str
    tokens_per_char: float
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Scripts:
    ascii: float
    other: float
    classes: tuple[ScriptClass, ...]


@cache
def scripts() -> Scripts:
    """The shipped table; a malformed one fails loudly, naming what is wrong."""
    return parse_scripts(files("dream.engines.claude").joinpath("scripts.toml").read_text("utf-8"), "scripts.toml")


def parse_scripts(text: str, where: str) -> Scripts:
    try:
        data = tomllib.loads(text)
        classes = tuple(_script_class(entry) for entry in data["class"])
        return Scripts(_rate(data["ascii"]), _rate(data["other"]), classes)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as err:
        raise BadInput(f"{where}: malformed token table: {err!r}") from None


def _script_class(entry: dict[str, Any]) -> ScriptClass:
    ranges = entry["ranges"]
    if not ranges or any(len(r) != 2 or not 0 <= r[0] <= r[1] <= 0x10FFFF for r in ranges):
        raise ValueError(f"class {entry.get('name')!r}: ranges must be [first, last] code points")
    body = "".join(f"{_escaped(a)}-{_escaped(b)}" for a, b in ranges)
    return ScriptClass(str(entry["name"]), _rate(entry["tokens_per_char"]), re.compile(f"[{body}]"))


def _rate(value: Any) -> float:
    if not isinstance(value, (int, float)) or not 0 < value <= 10:
        raise ValueError(f"tokens_per_char must be a number in (0, 10], not {value!r}")
    return float(value)


def _escaped(code: int) -> str:
    return f"\\U{code:08x}"


def estimate(text: str) -> int:
    """A conservative local count of `text`'s tokens."""
    if text.isascii():
        return int(len(text) * scripts().ascii) + 1
    table = scripts()
    ascii_chars = len(text.encode("ascii", "ignore"))
    tokens, counted = ascii_chars * table.ascii, ascii_chars
    for script in table.classes:
        found = len(script.pattern.findall(text))
        tokens += found * script.tokens_per_char
        counted += found
    return int(tokens + (len(text) - counted) * table.other) + 1


def chars_within(text: str, room: int) -> int:
    """How many leading characters of `text` fit in `room` tokens, at the text's own rate."""
    counted = estimate(text)
    return len(text) if counted <= room else int(len(text) * room / counted)


def ascii_chars(chars: int, text: str) -> int:
    """`chars` characters of English are so many tokens: how many characters of `text` take as many."""
    sample = text[:chars]
    room = int(chars * scripts().ascii)
    return chars if estimate(sample) <= room else chars_within(sample, room)


def estimate_request(params: dict[str, Any]) -> int:
    """The local count of a request's prompt: system, tools and messages as the API receives them."""
    prompt = {k: params.get(k) for k in ("system", "tools", "messages")}
    return estimate(json.dumps(prompt, ensure_ascii=False, default=str))


def count_request(client: anthropic.Anthropic, params: dict[str, Any]) -> int | None:
    """The server's count of the request's prompt tokens, or None when it offers no count (or fails to give one)."""
    asked = {k: params[k] for k in ("model", "system", "tools", "messages", "thinking") if k in params}
    try:
        return int(client.with_options(max_retries=0).beta.messages.count_tokens(**asked).input_tokens)
    except (anthropic.AnthropicError, AttributeError, TypeError, ValueError):
        return None  # no counting here (a gateway's 404, an old server): the local count stands
