"""The structural secret corpus (tests/reliability/data/structural_secrets.toml), its ordinary lines
(ordinary_lines.toml beside it), and how the corpus tests look at everything dream wrote.

Each kind's templates are rendered `PER_KIND` times with fresh values from a
seeded random generator, so the corpus is the same on every run, and no value
is a real credential. The files are checked as they are read: an unknown
class, placeholder or delivery fails loudly, naming the kind.
"""

from __future__ import annotations

import base64
import enum
import gzip
import random
import re
import string
import subprocess
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path

from helpers.cli import console_script

from dream.store.layout import Layout
from dream.versions.manifests import Blobs
from dream.versions.packfiles import open_pack

DATA = Path(__file__).parents[1] / "reliability" / "data"
PER_KIND = 3
ORDINARY_PER_TEMPLATE = 40
WORDS = ["velvet", "harbor", "quartz", "meadow", "falcon", "copper", "lantern", "glacier", "orchid", "thunder",
         "marble", "lagoon", "cobalt", "saffron", "juniper", "walnut"]
USERS = ["deploy", "svc_app", "reporter", "admin", "etl", "backup"]
HOSTS = ["db01.internal", "pg.staging.corp", "10.0.4.17", "mq.prod.corp", "ldap.corp.local"]
DBS = ["ledger", "orders", "billing", "analytics"]
FILES = ["backup", "release", "server", "client", "archive"]


class SecretClass(enum.Enum):
    CLI = "cli"
    CODE = "code"
    PROSE = "prose"
    SPLIT = "split"
    TRANSCRIPT = "transcript"


class Via(enum.Enum):
    MESSAGE = "message"  # a person's request to remember the line
    TOOL = "tool"  # a command an agent ran
    SPLIT = "split"  # the text before the first line break and the rest are two messages


@dataclass(frozen=True)
class Secret:
    cls: SecretClass
    kind: str
    text: str
    secrets: tuple[str, ...]  # every value that must not be written anywhere
    via: Via


class Values:
    """Fresh random values for the placeholders, drawn from one seeded generator."""

    def __init__(self, seed: int):
        self.rnd = random.Random(seed)

    def draw(self, alphabet: str, n: int) -> str:
        return "".join(self.rnd.choice(alphabet) for _ in range(n))

    def pw(self) -> str:
        letters = self.draw(string.ascii_letters, 7)
        return letters[:3] + self.rnd.choice("#%*!^+&") + self.draw(string.digits, 2) + letters[3:] + self.draw(
            string.ascii_letters + string.digits, 2)

    def letters(self) -> str:
        words = [self.rnd.choice(WORDS) for _ in range(3)]
        style = self.rnd.randrange(3)
        if style == 0:
            return words[0] + "".join(w.capitalize() for w in words[1:])
        if style == 1:
            return "".join(w.capitalize() for w in words)
        return "".join(words) + self.rnd.choice(WORDS)  # a lowercase run, 20+ letters

    def fields(self) -> dict[str, str]:
        hex_value = self.draw("0123456789abcdef", 32)
        return {
            "pw": self.pw(), "letters": self.letters(), "pin": self.draw(string.digits, self.rnd.randint(4, 8)),
            "hex": hex_value, "hex_head": hex_value[:16], "hex_tail": hex_value[16:],
            "b64": self.draw(string.ascii_letters + string.digits + "+/", 40),
            "user": self.rnd.choice(USERS), "host": self.rnd.choice(HOSTS), "db": self.rnd.choice(DBS),
            "file": self.rnd.choice(FILES),
        }


_PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")  # braces with anything else inside are code: `{ host: 1 }`


def render(template: str, fields: dict[str, str]) -> str:
    """`template` with its placeholders filled in; KeyError names an unknown one."""
    return _PLACEHOLDER.sub(lambda m: fields[m.group(1)], template)


def _parse(path: Path) -> list[dict]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))["kind"]
    except (tomllib.TOMLDecodeError, KeyError) as exc:
        raise ValueError(f"{path}: not a corpus file ({exc})") from None


def secrets(path: Path = DATA / "structural_secrets.toml", seed: int = 20261207) -> list[Secret]:
    """Every row of the corpus, `PER_KIND` per kind."""
    values = Values(seed)
    rows: list[Secret] = []
    for entry in _parse(path):
        kind = entry.get("kind", "?")
        try:
            cls, via = SecretClass(entry["class"]), Via(entry.get("via", "message"))
            names = entry.get("secret", "pw")
            names = [names] if isinstance(names, str) else list(names)
            templates = list(entry["templates"])
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{path}: kind {kind!r} is malformed ({exc})") from None
        for i in range(PER_KIND):
            fields = values.fields()
            if unknown := [n for n in names if n not in fields]:
                raise ValueError(f"{path}: kind {kind!r} names unknown secret placeholders {unknown}")
            try:
                text = render(templates[i % len(templates)], fields)
            except KeyError as exc:
                raise ValueError(f"{path}: kind {kind!r} has an unknown placeholder {exc}") from None
            rows.append(Secret(cls, kind, text, tuple(fields[n] for n in names), via))
    return rows


# ---------------------------------------------------------------- ordinary lines


class OrdinaryValues:
    """Digests, hashes, ids and images of the right shapes, none a secret."""

    def __init__(self, seed: int):
        self.rnd = random.Random(seed)

    def hexs(self, n: int) -> str:
        return "".join(self.rnd.choice("0123456789abcdef") for _ in range(n))

    def b64(self, n: int) -> str:
        return base64.b64encode(self.rnd.randbytes(n)).decode()

    def fields(self) -> dict[str, str]:
        return {
            "sha1": self.hexs(40), "short": self.hexs(7), "sha256": self.hexs(64), "md5": self.hexs(32),
            "sha512b64": self.b64(64), "sha384b64": self.b64(48), "sha1b64": self.b64(20),
            "uuid": str(uuid.UUID(int=self.rnd.getrandbits(128), version=4)),
            "image": self.b64(self.rnd.randint(60, 180)), "crc": str(self.rnd.getrandbits(32)),
            "n": str(self.rnd.randint(1, 999)), "version": f"{self.rnd.randint(0, 9)}.{self.rnd.randint(0, 30)}."
                                                          f"{self.rnd.randint(0, 20)}",
            "word": self.rnd.choice(WORDS), "user": self.rnd.choice(USERS), "host": self.rnd.choice(HOSTS),
            "db": self.rnd.choice(DBS), "file": self.rnd.choice(FILES),
        }


def ordinary(path: Path = DATA / "ordinary_lines.toml", seed: int = 7) -> list[str]:
    """`ORDINARY_PER_TEMPLATE` lines of every template in `path`: no secret in any."""
    values = OrdinaryValues(seed)
    try:
        templates = tomllib.loads(path.read_text(encoding="utf-8"))["templates"]
    except (tomllib.TOMLDecodeError, KeyError) as exc:
        raise ValueError(f"{path}: not an ordinary-lines file ({exc})") from None
    lines = []
    for template in templates:
        for _ in range(ORDINARY_PER_TEMPLATE):
            try:
                lines.append(render(template, values.fields()))
            except KeyError as exc:
                raise ValueError(f"{path}: template {template!r} has an unknown placeholder {exc}") from None
    return lines


# ---------------------------------------------------------------- everything written


def dream(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*console_script(), *args], capture_output=True, text=True, env=env, timeout=600)


def everything_written(store: Path) -> list[tuple[str, bytes]]:
    """Every name and every file's bytes under the store, stored objects inflated, gzip opened."""
    found = []
    blobs = Blobs(Layout.open(store))
    for path in sorted(store.rglob("*")):
        rel = path.relative_to(store)
        found.append((f"name of {rel}", str(rel).encode()))
        if not path.is_file():
            continue
        data = path.read_bytes()
        found.append((str(rel), data))
        if rel.parts[:3] == (".dream", "objects", "packs") and path.suffix == ".pack":
            found += [(f"{rel}:{digest} (inflated)", blobs.get(digest)) for digest in open_pack(path).index]
        elif rel.parts[:2] == (".dream", "objects"):
            found.append((f"{rel} (inflated)", blobs.get(rel.parent.name + rel.name)))
        if data[:2] == b"\x1f\x8b":
            found.append((f"{rel} (gunzipped)", gzip.decompress(data)))
    return found


def holds(data: bytes, secret: str) -> bool:
    """Whether `data` holds `secret`; a secret of digits only (a PIN) counts only as a number of its own, not
    as digits inside a longer number (a file's mtime once held one by chance)."""
    if not secret.isdigit():
        return secret.encode() in data
    return re.search(rb"(?<![0-9])" + secret.encode() + rb"(?![0-9])", data) is not None
