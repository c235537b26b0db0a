"""The second and third line of secret detection, after dream's own patterns (`dream.redaction.redact`).

* **detect-secrets** (Yelp, Apache-2.0, https://github.com/Yelp/detect-secrets;
  pinned ``detect-secrets>=1.5,<2`` in pyproject.toml): its vendor plugins
  find kinds dream's patterns do not know. Its keyword and high-entropy
  plugins are left out: on ordinary prose and code they flag git SHAs,
  UUIDs and words after "password", which the checks below do with more care.
* **Entropy of assigned values**: a value assigned to a key-like name
  (``*_KEY``, ``*secret*``, ``passphrase`` …) that looks random, including
  letters-only passwords after ``=``; and a long random value assigned to any
  shell-style name (``export VENDOR_THING=…``), which no list of names covers.

`find_spans` returns where the secrets are in one line of text; the caller
replaces them with markers. Both are Python, so they run only on lines that
two regexes in the dialect both Python and polars read (Rust's ``regex``)
say may hold one: `hint()`, cheap (short pieces; the column form scans a
whole column once for it and dream's hints together), then `prefilter()`, precise (the plugins' own regexes, translated by
`common_dialect`, and the assignment shapes). A line that passes both holds
a candidate; the column form runs both in polars, so that Python looks only
at those lines, and both forms find the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from dream.redaction import gitleaks, tables
from dream.redaction.entropy import entropy

# detect-secrets plugins used, with a cheap regex every secret they find contains (for `hint()`).
_PLUGINS = {
    "ArtifactoryDetector": r"AKC|AP[0-9A-F]",
    "AzureStorageKeyDetector": "AccountKey=",
    "BasicAuthDetector": "://",
    "CloudantDetector": "(?i:cloudant|clou|cl_)",
    "DiscordBotTokenDetector": r"[MNO][A-Za-z0-9_-]{23,25}\.",
    "GitHubTokenDetector": "gh[pousr]_",
    "GitLabTokenDetector": "gl[a-z]+-|GR1348941",
    "IbmCloudIamDetector": "(?i:ibm|cloud)",
    "IbmCosHmacDetector": "(?i:cos)",
    "JwtTokenDetector": "eyJ",
    "MailchimpDetector": "-us[0-9]",
    "NpmDetector": "_authToken",
    "OpenAIDetector": "T3BlbkFJ",
    "PrivateKeyDetector": "PRIVATE KEY",
    "PypiTokenDetector": "pypi-",
    "SendGridDetector": r"SG\.",
    "SlackDetector": "xox|hooks",
    "SoftlayerDetector": "(?i:softlayer|sl_|sl-)",
    "SquareOAuthDetector": "sq0csp-",
    "StripeDetector": "k_live_",
    "TelegramBotTokenDetector": "[0-9]{8}:",
    "TwilioKeyDetector": "AC[a-z0-9]|SK[a-z0-9]",
    "AWSKeyDetector": "A3T|ABIA|ACCA|AKIA|ASIA|(?i:aws)",
}

# Key-like names: the value assigned to one is a credential when it looks random.
_KEYLIKE = re.compile(r"(?i:key|secret|token|passw|passphrase|(?:^|[_.-])pass(?:$|[_.-])|pwd|credential|private|"
                      r"signature|salt|cookie|session|dsn|conn|authorization|(?:^|[_.-])auth(?:$|[_.-]|token|key))")
_ID_NAME = re.compile(r"(?:[Ii][Dd]|[_.-]id)$")  # sessionId, run_id: identifiers, not credentials
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_CODE_REFERENCE = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+$|^[A-Z][A-Z0-9_]*$")
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]{1,80})[\"'`]?(?P<sep>[ \t]*[:=][ \t]*)[\"'`]?"
    r"(?P<value>[^ \t\r\n\"'`,;<>(){}\[\]]{8,})")
_PASSWORD_NAME = re.compile(r"(?i:passw|pwd|passphrase|(?:^|[_.-])pass(?:$|[_.-]))")
_SHELL_NAME = re.compile(r"[A-Z][A-Z0-9_]{2,}")
# Decided by the name (patterns.toml, [names]): CACHE_KEY=build-<hex> is a cache key; a hex value is a secret
# only under a name with a secret word (key, token, password, secret, in any shipped language).
_NAMES = tables.read()["names"]
_NOT_CREDENTIAL = re.compile(_NAMES["not_credential"])
# key, token, password in the other shipped languages, as one part of a name (PASSWORT, DB_SENHA)
_SECRET_WORD = re.compile(rf"(?i:(?:^|[_.-])(?:{_NAMES['secret_words']})(?:$|[_.-]))")
# What a name that may hold a credential contains (`_KEYLIKE`, `_SECRET_WORD`), for the prefilters.
_NAME_WORDS = (r"(?i:key|secret|token|pass|pwd|auth|credential|private|signature|salt|cookie|session|dsn|conn|"
               rf"{_NAMES['secret_words']})")
_PLACEHOLDER = re.compile(r"(?i:^(?:true|false|none|null|nil|undefined|required|optional|changeme|password|secret|"
                          r"token|example|placeholder|redacted|xxx+|\*+|your[_-].*|<.*>|\$.*|%.*|\{.*\}|\[.*)$)")
_HEX = re.compile(r"^[0-9a-fA-F-]+$")
# A digest names its algorithm: sha256:<hex>, sha512-<base64> (lockfiles, SRI), md5:<hex>. Never a secret.
_DIGEST = re.compile(r"(?i:^(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?|blake3|xxh(?:32|64|128)|crc32c?)[:-])")
_NOT_RANDOM = re.compile(r"^(?:[a-z]+(?:[._/-][a-z]+)*|[A-Z][a-z]+(?:[A-Z][a-z]+)*|[0-9.:_/-]+)$")  # words, paths



@cache
def hint() -> str:
    """A cheap first look: every line in which `find_spans` may find a secret matches it.

    Built on first use: gitleaks' keywords are read from its rules file, which a command that never
    redacts (``dream status``) should not pay for.
    """
    return "|".join([
        *_PLUGINS.values(), gitleaks.keywords_regex(),
        _NAME_WORDS + r"[A-Za-z0-9_.-]*[\"'`]?[ \t]*[:=]",
        r"[A-Z][A-Z0-9_]{2,}=[^ \t]{20,}",
    ])


@cache
def _hint_re() -> re.Pattern[str]:
    return re.compile(hint())

# The value of `_ASSIGNMENT`, at its shortest, and what stands before it.
_VALUE = r"[\"'`]?[ \t]*{sep}[ \t]*[\"'`]?[^ \t\r\n\"'`,;<>(){{}}\[\]]{{{length}}}"
# A line that holds a candidate matches it: a key-like name (`_KEYLIKE`) or a
# shell-style name assigned a value long enough for `_looks_like_secret`.
_ASSIGNMENT_PREFILTER = "|".join([
    _NAME_WORDS + r"[A-Za-z0-9_.-]*" + _VALUE.format(sep="[:=]", length=8),
    r"[A-Z][A-Z0-9_]{2,}" + _VALUE.format(sep="=", length=20),
])


def prefilter() -> str:
    """A regex that every line holding a secret `find_spans` finds matches (Python and Rust dialect).

    The plugins' own regexes (a plugin finds only what they match) and the
    shapes of a secret assignment; unlike `hint()`, a line matches it only
    where a candidate really is: not the markers of secrets already replaced.
    """
    return _prefilter()[0]


@cache
def _prefilter() -> tuple[str, re.Pattern[str]]:
    regexes = [common_dialect(r) for _, plugin in _plugins() for r in getattr(plugin, "denylist", ())]
    regex = "|".join([*regexes, _ASSIGNMENT_PREFILTER, gitleaks.keywords_regex()])
    return regex, re.compile(regex)


# Non-ASCII characters, and what Python's and Rust's `\s` hold: Python's also holds \x1c-\x1f.
_NON_ASCII = "\\x80-\U0010ffff"
_SPACE = r"\s\x1c-\x1f"
_ASSERTION = ("(?=", "(?!", "(?<=", "(?<!")


def common_dialect(regex: re.Pattern[str]) -> str:
    """`regex` in the dialect Python and Rust read alike, matching at least what it matches.

    Look-around, ``^``, ``$`` and ``\\b`` (Rust has no look-around; ``$`` differs
    before a final newline) are dropped, which can only widen it. ``\\s``
    becomes what Python's means; ``\\d`` and ``\\w`` (whose Unicode sets
    differ) become their ASCII set plus every non-ASCII character, or, in a
    negated class, the ASCII set alone. Raises ValueError on what it cannot
    translate (a new plugin needs a look then).
    """
    pattern, flags = regex.pattern, regex.flags
    if flags & (re.DOTALL | re.MULTILINE | re.ASCII | re.LOCALE) or (
            flags & re.VERBOSE and re.search(r"[\s#]", pattern)):
        raise ValueError(f"cannot translate {pattern!r}")
    out: list[str] = []
    i, in_class, negated, class_start = 0, False, False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(_escape(pattern, pattern[i + 1], in_class, negated))
            i += 2
        elif in_class:
            if c == "[":
                raise ValueError(f"cannot translate {pattern!r}")
            in_class = c != "]" or i == class_start  # "]" first in a class is itself
            out.append(c)
            i += 1
        elif c == "[":
            in_class, negated = True, pattern.startswith("[^", i)
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            class_start = i
        elif pattern.startswith(_ASSERTION, i):
            i = _group_end(pattern, i)
        elif pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            raise ValueError(f"cannot translate {pattern!r}")
        else:
            out.append("" if c in "^$" else c)
            i += 1
    body = "".join(out)
    return f"(?i:{body})" if flags & re.IGNORECASE else f"(?:{body})"


def _escape(pattern: str, c: str, in_class: bool, negated: bool) -> str:
    """The translation of the escape ``\\c`` (see `common_dialect`)."""
    sets = {"d": "0-9", "w": "0-9A-Z_a-z"}
    if in_class:
        if c == "s":
            return _SPACE
        if c in sets:
            return sets[c] if negated else sets[c] + _NON_ASCII
    elif c in "sSdDwW":
        return {"s": f"[{_SPACE}]", "S": f"[^{_SPACE}]", "d": f"[0-9{_NON_ASCII}]", "D": "[^0-9]",
                "w": f"[0-9A-Z_a-z{_NON_ASCII}]", "W": "[^0-9A-Z_a-z]"}[c]
    elif c in "bBAZ":
        return ""
    if c.isalnum() and c not in "ntrfv":
        raise ValueError(f"cannot translate {pattern!r}")
    return "\\" + c


def _group_end(pattern: str, start: int) -> int:
    """The index after the group that opens at `start`."""
    depth, i, in_class = 0, start, False
    while True:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c in "()":
            depth += 1 if c == "(" else -1
            if depth == 0:
                return i + 1
        i += 1


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


def find_spans(line: str) -> list[Span]:
    """Secrets in one line that the patterns left: detect-secrets' finds, then random assigned values."""
    if not _hint_re().search(line) or not _prefilter()[1].search(line):
        return []
    spans = _plugin_spans(line) + _assignment_spans(line) + [Span(*found) for found in gitleaks.find(line)]
    return _disjoint(spans)


def _plugin_spans(line: str) -> list[Span]:
    spans = []
    for kind, plugin in _plugins():
        try:
            found = plugin.analyze_line(filename="dream", line=line, line_number=0)  # type: ignore[attr-defined]
        except Exception:  # a third-party plugin must never fail a run  # noqa: BLE001
            continue
        for secret in found:
            value = secret.secret_value or ""
            if len(value) < 8 or value.startswith("[REDACTED"):
                continue
            start = line.find(value)
            while start != -1:
                spans.append(Span(start, start + len(value), kind))
                start = line.find(value, start + len(value))
    return spans


def _assignment_spans(line: str, offset: int = 0) -> list[Span]:
    spans = []
    for m in _ASSIGNMENT.finditer(line):
        name, sep, value = m.group("name"), m.group("sep"), m.group("value")
        if _looks_like_secret(name, sep, value):
            spans.append(Span(offset + m.start("value"), offset + m.end("value"), "high-entropy-assignment"))
        elif _ASSIGNMENT.search(value):  # `note: SECRET_KEY_BASE=…`: the assignment behind a prefix
            spans += _assignment_spans(value, offset + m.start("value"))
    return spans


def _looks_like_secret(name: str, sep: str, value: str) -> bool:
    if (value.startswith("[REDACTED") or _PLACEHOLDER.match(value) or _DIGEST.match(value) or "://" in value
            or value.startswith(("/", "~"))
            or _UUID.match(value) or _CODE_REFERENCE.match(value) or _ID_NAME.search(name)):
        return False  # a placeholder, a path or URL, an identifier, or code naming where the secret is
    if (_KEYLIKE.search(name) or _SECRET_WORD.search(name)) and not _NOT_CREDENTIAL.search(name):
        if "=" in sep and value.isalpha() and len(value) >= 8 and _PASSWORD_NAME.search(name):
            return True  # a letters-only password after "=" (prose has ':' instead)
        if _NOT_RANDOM.match(value):
            return False
        return len(value) >= 8 and entropy(value) >= 3.0
    if not _SHELL_NAME.fullmatch(name) or "=" not in sep or _NOT_CREDENTIAL.search(name):
        return False
    if _HEX.match(value):  # no secret word in the name: FOO=<64 hex> is a checksum, a commit or a digest
        return False
    # Any other shell variable: only a long value that is random (not a UUID or run id: the checks above).
    return (len(value) >= 20 and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value) and entropy(value) >= 4.0)


def _disjoint(spans: list[Span]) -> list[Span]:
    """Overlapping finds become one span each, the earliest and longest first."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if kept and span.start < kept[-1].end:
            if span.end > kept[-1].end:
                kept[-1] = Span(kept[-1].start, span.end, kept[-1].kind)
            continue
        kept.append(span)
    return kept


@cache
def _plugins() -> list[tuple[str, object]]:
    """(marker kind, plugin) for each detect-secrets plugin used; none when it is not installed."""
    try:
        from detect_secrets.core.plugins.util import (  # start-up: loads every plugin; only redaction needs them
            get_mapping_from_secret_type_to_class,
        )
    except ImportError:
        return []
    plugins: list[tuple[str, object]] = []
    mapping: dict = get_mapping_from_secret_type_to_class()
    for secret_type, cls in mapping.items():
        if cls.__name__ in _PLUGINS:
            plugins.append((re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-"), cls()))
    return plugins
