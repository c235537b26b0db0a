"""A request or memory that names what an instruction line names, in other words (dream/engines/offline/instructed.py)."""

from __future__ import annotations

import pytest

from dream.engines.instructions import Instruction
from dream.engines.offline.instructed import Known, key_tokens


def known(*lines: str) -> Known:
    return Known([Instruction("CLAUDE.md", n, text) for n, text in enumerate(lines, 1)], 90.0)


@pytest.mark.parametrize("text, keys", [
    ("Use pnpm for installs, never npm.", {"pnpm", "npm"}),  # no vowel: a tool's name
    ("Run the tests with `uv run pytest -q`.", {"uv", "run", "pytest"}),
    ("ricorda: il mio db locale è sulla 5433", {"db", "5433"}),
    ("パッケージのインストールには pnpm を使う。", {"pnpm"}),  # a Latin word among another script
    ("lembra que o banco de staging é resetado toda segunda-feira", set()),  # a hyphen is no flag
    ("CI runs on Node 20.", {"ci", "node", "20"}),
])
def test_key_tokens_name_things_in_any_language(text, keys):
    assert key_tokens(text) == keys


def test_a_request_naming_the_line_in_other_words_or_another_language_is_keyed():
    lines = known("Use pnpm for installs, never npm.", "Deploys go out from the release branch only.",
                  "CI runs on Node 20.")
    assert lines.keyed("siempre pnpm, nada de npm")[0].line == 1
    assert lines.keyed("solo desplegamos desde release")[0].line == 2  # a term kept across languages
    rule, shared = lines.keyed("auf der CI läuft Node 18")  # the same thing with another number
    assert (rule.line, shared) == (3, frozenset({"ci", "node"}))


def test_a_request_adding_a_number_or_naming_nothing_of_a_line_is_not_keyed():
    lines = known("Use pnpm for installs, never npm.")
    assert lines.keyed("the web package pins pnpm 9.12 in package.json") is None  # adds a version
    assert lines.keyed("the staging database is wiped every Monday") is None
    assert lines.keyed("CI builds with pnpm", values_only=True) is None  # a memory: only other numbers count


@pytest.mark.parametrize("over", ["Avoid", "Don'ts", "Never / Git", "Style / Never do any of the following:",
                                  "Bitte vermeiden", "À éviter", "Qué evitar", "やってはいけないこと", "Style / - Never:"])
def test_a_line_under_a_heading_or_lead_in_that_forbids_is_no_rule_a_memory_repeats(over):
    lines = Known([Instruction("CLAUDE.md", 2, "Push directly to main.", over)], 90.0)
    assert lines.repeating("Push directly to main.") is None


def test_a_line_under_an_ordinary_heading_is_repeated_but_never_by_its_negation():
    lines = Known([Instruction("CLAUDE.md", 2, "Do not run database migrations on the staging server manually.",
                               "Database / Migrations")], 90.0)
    assert lines.repeating("Do not run database migrations on the staging server manually.").line == 2
    assert lines.repeating("Run database migrations on the staging server manually.") is None


def test_a_request_plainly_in_another_language_than_every_line_is_told_apart():
    lines = known("Always answer in English, even when I write in German.")
    assert lines.in_another_language("antworte immer auf Englisch").line == 1
    assert lines.in_another_language("the staging box has only 2 GB of RAM") is None
    assert lines.in_another_language("ok") is None  # too few small words to tell a language
    assert known("Usar pnpm para instalar dependências.").in_another_language(
        "lembra que o banco de staging é resetado toda segunda-feira") is None  # a close language is no other


def test_a_memory_swapping_two_words_or_leaving_out_one_is_no_repeat():
    lines = known("Always use pnpm for installs, never npm.", "Load seed data only in non-production environments.",
                  "Always run the full integration test suite before pushing any change.")
    assert lines.repeating("Always use npm for installs, never pnpm.") is None
    assert lines.disagreeing("Always use npm for installs, never pnpm.").line == 1
    assert lines.repeating("Load seed data only in production environments.") is None
    # "always" is a small word: leaving it out says the same
    assert lines.repeating("Run the full integration test suite before pushing any change.").line == 3
