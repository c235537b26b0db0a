"""Phrases as data: the patterns and the pre-filter come from the same files, and stay in step."""

from __future__ import annotations

import re

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dream.engines.offline import phrases
from dream.engines.offline.requests import gather_requests, read
from dream.errors import BadInput

LANGS = phrases.languages()
LEADS = sorted({lead for lang in LANGS for leads in lang.leads.values() for lead in leads})
NEEDED = sorted({word for lang in LANGS for item in lang.patterns for word in phrases._needs(lang, item)})
PIECES = LEADS + NEEDED + ["that", "que", "dass", "from", "to", "not", "now", "port 5433", "Postgres 16", "npm",
                           "pnpm", "에서", "으로", "から", "に", "从", "的", "の", "은", "를", ",", "，", " ", ":", "-"]
FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)


def line_strategy():
    """Lines made of leads, the words patterns need and random text, in any order and case."""
    piece = st.one_of(st.sampled_from(PIECES), FILLER).map(lambda p: p.upper() if len(p) % 3 == 0 else p)
    return st.lists(piece, min_size=1, max_size=8).map(lambda parts: " ".join(parts) if len(parts) % 2 else "".join(parts))


def kept_by_prefilter(line: str) -> bool:
    return pl.Series([line]).str.contains(phrases.prefilter()).item()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line_strategy())
def test_the_prefilter_never_rules_out_a_line_the_patterns_accept(line):
    said = line.strip().rstrip(" .。!！")
    if any(pattern.match(said) for _, pattern in phrases.request_patterns()) or read(line) is not None:
        assert kept_by_prefilter(line), line


@pytest.mark.parametrize("lang", [lang.code for lang in LANGS])
def test_every_lead_of_every_language_reaches_the_patterns_through_the_prefilter(lang):
    language = next(item for item in LANGS if item.code == lang)
    for key, leads in language.leads.items():
        for lead in leads:
            line = f"{lead} the staging database is on port 5433"
            assert kept_by_prefilter(line), (key, lead)


def test_ten_languages_ship_and_adding_one_is_a_data_change(tmp_path):
    assert {lang.code for lang in LANGS} >= {"en", "es", "de", "fr", "pt", "ru", "it", "ja", "zh", "ko"}
    (tmp_path / "nl.toml").write_text('spaced = true\n[leads]\nforget = ["vergeet"]\n', encoding="utf-8")
    dutch = phrases.languages(str(tmp_path))
    assert [lang.leads["forget"] for lang in dutch] == [["vergeet"]]


def test_a_broken_phrase_file_is_named_in_one_line(tmp_path):
    (tmp_path / "xx.toml").write_text("[leads\n", encoding="utf-8")
    with pytest.raises(BadInput, match="xx.toml: cannot read phrases"):
        phrases.languages(str(tmp_path))


def test_the_quick_filter_is_what_gather_requests_uses():
    rows = pl.DataFrame({"session": ["s1"] * 2, "date": [None, None], "seq": [0, 1], "role": ["user"] * 2,
                         "text": ["nothing to see", "패키지 매니저를 npm에서 pnpm으로바꿨어요"]},
                        schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8})
    assert [r.kind for r in gather_requests(rows)] == ["update"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line_strategy())
def test_a_pattern_is_never_skipped_by_its_precheck_on_a_sentence_it_matches(line):
    said = line.strip().rstrip(" .。!！")
    for _, pattern, precheck in phrases.request_checks():
        if precheck is not None and pattern.match(said):
            assert precheck.search(said), (pattern.pattern, said)


def test_required_text_is_what_every_match_must_hold():
    assert phrases.required_text(r"^(?P<text>.+?)(?:のメモ|の記憶)?(?:消して|削除して)(?:ください)?$") == ("削除して", "消して")
    assert phrases.required_text(r"^(?P<text>.+?\bjetzt\b.*?,\s*(?:nicht mehr|nicht)\s+\S.*)$") == ("jetzt",)
    # optional parts, classes and lookarounds are not required: nothing to look for
    assert phrases.required_text(r"^(?:abc)?[xyz]+(?=def)") is None
    # a branch counts only when every alternative holds a text
    assert phrases.required_text(r"^(?:ab|\d+)c") == ("c",)


def test_only_patterns_that_scan_every_position_get_a_precheck():
    checks = phrases.request_checks()
    assert [(kind, pattern) for kind, pattern, _ in checks] == list(phrases.request_patterns())
    prechecked = [pattern.pattern for _, pattern, precheck in checks if precheck is not None]
    assert prechecked and len(prechecked) < len(checks)
    for regex in prechecked:  # "X を忘れて", "X, not Y now": `.+?` first, or an optional part opening with
        # `.*?` ("…jetzt …, nicht mehr Y"); the rest open with their leads
        assert regex.startswith(("^(?P<text>.", "^(?:请)?(?:把|将)?(?P<text>.", "^(?P<text>(?:.*?")), regex
    assert any(regex.startswith("^(?P<text>(?:.*?\\b)?jetzt") for regex in prechecked)


NEEDLES = [needles for lang in LANGS for item in lang.patterns
           if (needles := phrases.required_text(phrases._pattern_regex(lang, item)))]
# Characters that match another case-insensitively without being its plain upper or lower case ("ı" and "i",
# "ſ" and "s", the Kelvin sign and "k"), and needles that start with them, with a symbol or without case.
ODD = "ıİſKßẞΣσςÉé"
NEEDLES += [("ſtop", "İx", "Kelvin"), ("i", "s", "k"), ("éte", "x"), ("-x", "]y", "\\z", "^w"), ("から", "Not")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(NEEDLES), st.lists(st.one_of(st.sampled_from(list(ODD) + PIECES), FILLER), max_size=6),
       st.data())
def test_the_needle_search_finds_what_a_case_insensitive_alternation_finds(needles, parts, data):
    needle = data.draw(st.sampled_from(needles))
    cased = "".join(c.upper() if data.draw(st.booleans()) else c for c in needle)
    parts.insert(data.draw(st.integers(0, len(parts))), data.draw(st.sampled_from([needle, cased, cased[1:], ""])))
    line = data.draw(st.sampled_from(["", " "])).join(parts)
    plain = re.compile("|".join(map(re.escape, needles)), re.I)
    assert (phrases.needle_search(tuple(needles)).search(line) is None) == (plain.search(line) is None), line


def test_a_misspelt_phrase_key_fails_the_load_naming_file_and_line(tmp_path):
    from dream.engines.offline.phrases import languages
    from dream.errors import BadInput

    (tmp_path / "xx.toml").write_text('spaced = true\n\n[words]\nplease = ["pls"]\nnotcie = ["memo"]\n', encoding="utf-8")
    with pytest.raises(BadInput, match=r"xx.toml line 5: .*unknown field `notcie`"):
        languages(str(tmp_path))


def test_eval_coverage_lists_which_languages_fill_each_key():
    from helpers.cli import in_process

    data = in_process("eval", "--coverage", "--json").json
    assert "en" in data["keys"]["words.notice"] and len(data["languages"]) >= 14
    assert "words.not_after_value" in data["keys"]  # every key of the schema, filled or not
