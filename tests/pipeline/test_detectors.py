"""The detectors' regexes: each plugin's own regex, read alike by Python and polars, and never hiding a find."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from dream.redaction import detectors
from dream.redaction.detectors import common_dialect, hint, prefilter

DATA = Path(__file__).parents[1] / "reliability" / "data"


def _texts() -> list[str]:
    texts = [line.split("\t")[1].replace("\\n", "\n") for line in (DATA / "secrets.tsv").read_text().splitlines()
             if line and not line.startswith("#")]
    texts += (DATA / "ordinary.txt").read_text().splitlines()
    # Where the dialects differ: Python's \s holds \x1c-\x1f; \d and \w hold other scripts' digits and letters.
    texts += [
        "\x1cAKCabcdefghijk9\x1d", "AP٣abcdefgh12 ", "token:\x1fabcdefgh", "xoxb-٣٣-abc",
        "https://user:pässword@host", "https://dé-v:" + "a" * 24 + "@ä.cloudant.com",
        "BEGIN RSA PRIVATE KEY", "export MY_VAR = 'Zx81kQ0pLm4nB7vC2xR9tY5u'", "[REDACTED:aws-access-key-id]",
        "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app", "", "\n",
    ]
    return texts


TEXTS = _texts()


def test_every_plugin_regex_is_translated() -> None:
    plugins = detectors._plugins()
    assert len(plugins) >= 20
    regex = prefilter()
    assert regex.count("|(?") >= sum(len(p.denylist) for _, p in plugins)  # type: ignore[attr-defined]
    pl.Series(["x"]).str.contains(regex)  # polars reads it


def test_python_and_polars_read_the_regexes_alike() -> None:
    for regex in (prefilter(), hint()):
        python = [bool(re.search(regex, t)) for t in TEXTS]
        assert pl.Series(TEXTS).str.contains(regex).to_list() == python
        assert any(python) and not all(python)


def test_every_find_is_in_a_line_the_regexes_keep() -> None:
    found = 0
    for text in TEXTS:
        for line in text.split("\n"):
            if detectors._plugin_spans(line) or detectors._assignment_spans(line):
                found += 1
                assert re.search(prefilter(), line), line
    assert found >= 50


@pytest.mark.parametrize(
    ("regex", "flags", "expected"),
    [
        (r"(?:(?<=\W)|(?<=^))key=(\d+)(?!\w)", 0, r"(?:(?:|)key=([0-9\x80-" + "\U0010ffff" + r"]+))"),
        (r"[^\s\w]$", 0, r"(?:[^\s\x1c-\x1f0-9A-Z_a-z])"),
        (r"[]a]\[x\]", re.IGNORECASE, r"(?i:[]a]\[x\])"),
    ],
)
def test_common_dialect(regex: str, flags: int, expected: str) -> None:
    assert common_dialect(re.compile(regex, flags)) == expected


@pytest.mark.parametrize("regex", [r"(a)\1", r"\x41", r"(?P<name>a)", r"(?m)^a"])
def test_common_dialect_refuses_what_it_cannot_translate(regex: str) -> None:
    with pytest.raises(ValueError):
        common_dialect(re.compile(regex))
