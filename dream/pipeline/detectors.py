"""The second and third line of secret detection, after dream's own patterns (`dream.pipeline.redact`).

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
replaces them with markers. Both are Python, so the column path runs them
only on rows that `PREFILTER` (a regex in the dialect both Python and polars
read) says may hold one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

# detect-secrets plugins used, with a regex every secret they find contains (for the prefilter).
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
    "TwilioKeyDetector": "AC|SK",
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
_PLACEHOLDER = re.compile(r"(?i:^(?:true|false|none|null|nil|undefined|required|optional|changeme|password|secret|"
                          r"token|example|placeholder|redacted|xxx+|\*+|your[_-].*|<.*>|\$.*|%.*|\{.*\}|\[.*)$)")
_HEX = re.compile(r"^[0-9a-fA-F-]+$")
_NOT_RANDOM = re.compile(r"^(?:[a-z]+(?:[._/-][a-z]+)*|[A-Z][a-z]+(?:[A-Z][a-z]+)*|[0-9.:_/-]+)$")  # words, paths

PREFILTER = "|".join([
    *_PLUGINS.values(),
    r"(?i:key|secret|token|pass|pwd|auth|credential|private|signature|salt|cookie|session|dsn|conn)"
    r"[A-Za-z0-9_.-]*[\"'`]?[ \t]*[:=]",
    r"[A-Z][A-Z0-9_]{2,}=[^ \t]{20,}",
])
_PREFILTER_RE = re.compile(PREFILTER)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts, n = Counter(text), len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def find_spans(line: str) -> list[Span]:
    """Secrets in one line that the patterns left: detect-secrets' finds, then random assigned values."""
    if not _PREFILTER_RE.search(line):
        return []
    spans = _plugin_spans(line) + _assignment_spans(line)
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


def _assignment_spans(line: str) -> list[Span]:
    spans = []
    for m in _ASSIGNMENT.finditer(line):
        name, sep, value = m.group("name"), m.group("sep"), m.group("value")
        if _looks_like_secret(name, sep, value):
            spans.append(Span(m.start("value"), m.end("value"), "high-entropy-assignment"))
    return spans


def _looks_like_secret(name: str, sep: str, value: str) -> bool:
    if (value.startswith("[REDACTED") or _PLACEHOLDER.match(value) or "://" in value or value.startswith(("/", "~"))
            or _UUID.match(value) or _CODE_REFERENCE.match(value) or _ID_NAME.search(name)):
        return False  # a placeholder, a path or URL, an identifier, or code naming where the secret is
    if _KEYLIKE.search(name):
        if "=" in sep and value.isalpha() and len(value) >= 8 and _PASSWORD_NAME.search(name):
            return True  # a letters-only password after "=" (prose has ':' instead)
        if _NOT_RANDOM.match(value):
            return False
        return len(value) >= 8 and entropy(value) >= 3.0
    if not _SHELL_NAME.fullmatch(name) or "=" not in sep:
        return False
    # Any other shell variable: only a long value that is random, not a hash or UUID (commit ids, run ids).
    return (len(value) >= 20 and not _HEX.match(value) and any(c.isdigit() for c in value)
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
