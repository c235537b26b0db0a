"""gitleaks' rules (gitleaks.toml, vendored: MIT, see its header), read as data: a maintained list of
credential formats, a layer after dream's own patterns.

Each rule is a regex (Go's RE2 syntax; `translate` makes it Python's), the keywords a line must hold for
the rule to look at it (lowercase, as gitleaks compares them), an entropy floor for the secret, and
allowlists. A rule is left out when it is not for lines of text (a file path rule, a multi-line YAML
rule), when dream has its own and better one (`generic-api-key`: dream's assignment rules and entropy
check), or when all its keywords are words of ordinary talk (`COMMON_KEYWORDS`: a line saying "token"
would otherwise be looked at by a dozen rules; the nightly run reads every log line). Those words are
also dropped from the rules that keep other keywords.

`KEYWORDS` is a regex every line a rule can match holds (case-insensitive literals), in the dialect
Python and Rust read alike: the detectors' cheap first look (`dream.redaction.detectors`) includes it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dream.redaction.entropy import entropy

RULES_FILE = Path(__file__).with_name("gitleaks.toml")
# Not rules for one line of text, or covered better by dream's own rules.
SKIPPED_RULES = frozenset({"generic-api-key", "kubernetes-secret-yaml", "pkcs12-file", "curl-auth-header",
                           "curl-auth-user"})
# Keywords too common in what people and agents write to send a line to a rule.
COMMON_KEYWORDS = frozenset({
    "access", "api", "api-", "auth", "credential", "creds", "curl", "key", "password", "passwd", "secret",
    "secret_key", "token", "test_", "live_", "test_pub", "live_pub", "intra", "ext_", "_pub", "_mmk", "pat.",
    "sat.", "v1.0-", "sumo", "jira", "linear", "sentry", "xray", "plaid", "etsy", "looker", "beamer",
    "kraken", "telegr", "twitch", "travis", "snyk", "sonar", "cohere", "gitter", "flickr",
})
MIN_KEYWORD = 4  # shorter keywords ("sk", "ey", "s.") are in too many words


@dataclass(frozen=True)
class Rule:
    id: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    entropy: float
    secret_group: int
    allow: tuple[tuple[str, re.Pattern[str]], ...]  # (what it looks at: secret | match | line, regex)
    stopwords: tuple[str, ...]


def translate(regex: str) -> str:
    """An RE2 regex as Python reads it: a flag group inside the pattern scopes to the rest of its group,
    and ``\\z`` is ``\\Z``."""
    regex = regex.replace(r"\z", r"\Z")
    out, i, depth_closers = [], 0, [0]
    in_class = False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            out.append(regex[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            if c == "[":  # a literal "[" in a class: Python warns of a nested set without the escape
                out.append("\\[")
                i += 1
                continue
        elif c == "[":
            in_class = True
            if regex.startswith("[]", i) or regex.startswith("[^]", i):
                out.append(regex[i:i + (2 if regex[i + 1] == "]" else 3)])
                i += 2 if regex[i + 1] == "]" else 3
                continue
        elif m := re.match(r"\(\?([a-z]+)\)", regex[i:]):
            if i == 0:
                out.append(m.group(0))
            else:  # scoped to the rest of the enclosing group
                out.append(f"(?{m.group(1)}:")
                depth_closers[-1] += 1
            i += len(m.group(0))
            continue
        elif c == "(":
            depth_closers.append(0)
        elif c == ")":
            out.append(")" * depth_closers.pop())
        out.append(c)
        i += 1
    out.append(")" * depth_closers.pop())
    return "".join(out)


@cache
def _used() -> tuple[tuple[dict, tuple[str, ...]], ...]:
    """(rule as written, its keywords used) for each rule used."""
    used = []
    for raw in tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))["rules"]:
        keywords = tuple(k for k in raw.get("keywords", []) if len(k) >= MIN_KEYWORD and k not in COMMON_KEYWORDS)
        if raw["id"] not in SKIPPED_RULES and "regex" in raw and keywords:
            used.append((raw, keywords))
    return tuple(used)


@cache
def rules() -> tuple[Rule, ...]:
    """The rules used, compiled (on first use: start-up pays only for reading the keywords)."""
    found = []
    for raw, keywords in _used():
        try:
            allow = tuple((a.get("regexTarget", "secret"), re.compile(translate(r), re.ASCII))
                          for a in raw.get("allowlists", []) if "paths" not in a for r in a.get("regexes", []))
            found.append(Rule(raw["id"], re.compile(translate(raw["regex"]), re.ASCII), keywords,
                              float(raw.get("entropy", 0)), int(raw.get("secretGroup", 0)), allow,
                              tuple(s for a in raw.get("allowlists", []) for s in a.get("stopwords", []))))
        except (re.error, ValueError, TypeError) as exc:
            raise ValueError(f"{RULES_FILE}: rule {raw.get('id')!r} cannot be read: {exc}") from None
    return tuple(found)


@cache
def _global_allow() -> tuple[tuple[re.Pattern[str], ...], tuple[str, ...]]:
    allow = tomllib.loads(RULES_FILE.read_text(encoding="utf-8")).get("allowlist", {})
    return tuple(re.compile(translate(r), re.ASCII) for r in allow.get("regexes", [])), tuple(allow.get("stopwords", []))


def _literal(word: str) -> str:
    return "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in word)


def keywords_regex() -> str:
    """Every line a rule may match holds one of these (case-insensitive), in the Python and Rust dialect."""
    words = sorted({k for _, keywords in _used() for k in keywords})
    return "(?i:" + "|".join(map(_literal, words)) + ")"


def find(line: str) -> list[tuple[int, int, str]]:
    """(start, end, rule id) of each secret the rules find in `line`."""
    lowered, found = line.lower(), []
    for rule in rules():
        if not any(k in lowered for k in rule.keywords):
            continue
        for m in rule.regex.finditer(line):
            group = rule.secret_group or next((g for g in range(1, (m.lastindex or 0) + 1) if m.group(g)), 0)
            secret = m.group(group)
            if _allowed(rule, secret, m.group(0), line):
                continue
            found.append((m.start(group), m.end(group), rule.id))
    return found


def _allowed(rule: Rule, secret: str, match: str, line: str) -> bool:
    """A secret the rule or gitleaks' global allowlist lets pass, or too regular to be one."""
    if secret.startswith("[REDACTED") or "[REDACTED:" in secret or (rule.entropy and entropy(secret) < rule.entropy):
        return True
    regexes, stopwords = _global_allow()
    lowered = secret.lower()
    if any(r.search(secret) for r in regexes) or any(s in lowered for s in (*stopwords, *rule.stopwords)):
        return True
    text = {"secret": secret, "match": match, "line": line}
    return any(r.search(text.get(target, secret)) for target, r in rule.allow)
