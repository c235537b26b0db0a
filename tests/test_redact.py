"""Secret redaction: every kind is caught, prose is left alone, both forms agree."""

from __future__ import annotations

import re

import polars as pl
import pytest

from dream.redact import PATTERNS, redact, redact_column

ANTHROPIC = "sk-ant-api03-" + "Ab3_-x9Z" * 12
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "q7Wm2Xk9" * 5
OPENAI_PROJECT = "sk-proj-" + "aB3-_cD4eF" * 15
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_TEMP_ID = "ASIAY34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_CLASSIC = "ghp_" + "R2d2C3po" * 4 + "abcd"
GITHUB_FINE = "github_pat_11ABCDEFG0" + "x" * 60
SLACK_TOKEN = "xoxb-2048-4096-" + "AbCdEfGhIjKlMnOp"
SLACK_HOOK = "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6y"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBnZXRzZWNyZXRrZXltYXRlcmlhbGhlcmUAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (text with a secret, expected redacted text, kind that must appear)
CASES = [
    (f"export ANTHROPIC_API_KEY={ANTHROPIC}", "export ANTHROPIC_API_KEY=[REDACTED:anthropic-key]"),
    (f"key: {OPENAI_LEGACY}.", "key: [REDACTED:openai-key]."),
    (f"OPENAI_API_KEY={OPENAI_PROJECT} done", "OPENAI_API_KEY=[REDACTED:openai-key] done"),
    (f"id {AWS_ID} and {AWS_TEMP_ID}", "id [REDACTED:aws-access-key-id] and [REDACTED:aws-access-key-id]"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED:aws-secret-key]"),
    (f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', 'AWS_SECRET_ACCESS_KEY="[REDACTED:aws-secret-key]"'),
    (f"token {GITHUB_CLASSIC} ok", "token [REDACTED:github-token] ok"),
    *[
        (f"{p}_" + "Zz09" * 9, "[REDACTED:github-token]")
        for p in ("gho", "ghu", "ghs", "ghr")
    ],
    (f"pat={GITHUB_FINE}", "pat=[REDACTED:github-token]"),
    (f"SLACK={SLACK_TOKEN}", "SLACK=[REDACTED:slack-token]"),
    ("xoxp-1234567890-abcdef", "[REDACTED:slack-token]"),
    (f"post to {SLACK_HOOK} now", "post to [REDACTED:slack-webhook] now"),
    (f"curl -H 'Authorization: Bearer {JWT}'", "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"),
    (f"bearer {JWT}", "bearer [REDACTED:bearer-token]"),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:authorization]"),
    ("authorization: token abc123def", "authorization: token [REDACTED:authorization]"),
    ('"Authorization": "' + "k" * 8 + "9" * 20 + '"', '"Authorization": "[REDACTED:authorization]"'),
    (f"before\n{PEM}\nafter", "before\n[REDACTED:private-key]\nafter"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9+abc/=\nMIIEpAIBAA",
        "[REDACTED:private-key]",
    ),
    (
        "DATABASE_URL=postgres://alice:s3cr3t!@db.internal:5432/app",
        "DATABASE_URL=postgres://alice:[REDACTED:url-password]@db.internal:5432/app",
    ),
    (
        "git clone https://bob:ghpass@github.com/org/repo.git",
        "git clone https://bob:[REDACTED:url-password]@github.com/org/repo.git",
    ),
]

PROSE = [
    "We use sk-learn and scikit-learn-compatible-estimators for the baseline model.",
    "The task-based scheduler and risk-assessment-for-everything checklist.",
    "He was the bearer of bad news; the bearer responsibilities are clear.",
    "Authorization: required for every endpoint. authorization = denied",
    "Open https://example.com:8080/path and ssh://git@github.com:22/org/repo.",
    "See http://localhost:3000/api?user=me:you@ and mailto:someone@example.com",
    "-----BEGIN PUBLIC KEY----- is not secret, nor -----BEGIN CERTIFICATE-----",
    "AKIA is a prefix; AKIASHORT too. ghp_ is GitHub's prefix; xoxb- is Slack's.",
    "Ich habe die Datei geändert — 日本語のテキスト — résumé, naïve façade.",
    "Run `pytest -k sk-ant` and grep for 'sk-' in the code; the slack channel #dev.",
    "A commit like 3f9a2b1c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a is not a secret.",
    "Use `Bearer <token>` in the header; bearer ${TOKEN} from the env.",
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_secret_kind_is_replaced(text: str, expected: str) -> None:
    out, count = redact(text)
    assert out == expected
    assert count == expected.count("[REDACTED:")


def test_every_pattern_kind_is_covered_by_a_case() -> None:
    expected_text = "".join(expected for _, expected in CASES)
    for pattern in PATTERNS:
        assert pattern.marker in expected_text, pattern.kind


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_is_untouched(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_redaction_is_idempotent(text: str, expected: str) -> None:
    once, _ = redact(text)
    assert redact(once) == (once, 0)
    column, _ = redact_column(pl.Series([once]))
    assert column.to_list() == [once]


def test_several_secrets_in_one_text_are_all_counted() -> None:
    text = f"a {AWS_ID} b {GITHUB_CLASSIC} c {ANTHROPIC} d postgres://u:p@h"
    out, count = redact(text)
    assert count == 4
    for secret in (AWS_ID, GITHUB_CLASSIC, ANTHROPIC, ":p@"):
        assert secret not in out


def test_column_and_string_forms_agree() -> None:
    texts = [t for t, _ in CASES] + PROSE + ["", "\n".join(t for t, _ in CASES)]
    texts += [f"{p} {t}" for p, (t, _) in zip(PROSE, CASES)]
    column, column_count = redact_column(pl.Series(texts))
    singles = [redact(t) for t in texts]
    assert column.to_list() == [s for s, _ in singles]
    assert column_count == sum(n for _, n in singles)
    assert column_count > len(CASES)


def test_column_keeps_nulls_and_order() -> None:
    series = pl.Series(["plain", None, f"k {AWS_ID}", "also plain"])
    column, count = redact_column(series)
    assert column.to_list() == ["plain", None, "k [REDACTED:aws-access-key-id]", "also plain"]
    assert count == 1


def test_column_without_secrets_is_returned_unchanged() -> None:
    series = pl.Series(PROSE)
    column, count = redact_column(series)
    assert count == 0
    assert column.to_list() == PROSE


def test_every_match_contains_its_pattern_hint() -> None:
    """The cheap pre-check (union of hints) must never hide a real match."""
    checked = 0
    for text, _ in CASES:
        for pattern in PATTERNS:
            for match in re.finditer(pattern.python_regex(), text):
                assert re.search(pattern.hint, match.group(0)), (pattern.kind, match.group(0))
                checked += 1
    assert checked >= len(CASES)


def test_forms_agree_next_to_non_ascii_text() -> None:
    texts = [f"é{AWS_ID}ü", f"日本{GITHUB_CLASSIC}語", f"naïve sk-{'é' * 30}", "ß://ä:ö@host"]
    column, count = redact_column(pl.Series(texts))
    singles = [redact(t) for t in texts]
    assert column.to_list() == [s for s, _ in singles]
    assert count == sum(n for _, n in singles) >= 2
