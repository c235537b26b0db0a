"""Issue 36, wrong changes on held-out sessions: a relative date read two ways, a request the next line
narrows or takes back, and chatter that looks like a rule. Each is read safely: left as written, or put
before a person, never applied. Wording and values are this file's own."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from dream.engines.offline.dates import rewrite_line
from dream.engines.offline.requests import gather_requests, read

THURSDAY, SUNDAY, WEDNESDAY = date(2026, 11, 19), date(2026, 11, 22), date(2026, 11, 18)
SCHEMA = {"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8}


def said(*lines: tuple[str, str]) -> pl.DataFrame:
    return pl.DataFrame({"session": ["s1"] * len(lines), "date": [THURSDAY] * len(lines),
                         "seq": list(range(len(lines))), "role": [r for r, _ in lines],
                         "text": [t for _, t in lines]}, schema=SCHEMA)


@pytest.mark.parametrize(("line", "base", "why"), [
    ("we shipped the fix last Tuesday", THURSDAY, "may be 2026-11-10 or 2026-11-17"),
    ("the audit is in two weeks", SUNDAY, "was said on a Sunday"),
    ("nächste Woche ist Freeze", SUNDAY, "was said on a Sunday"),
    ("the freeze starts tomorrow (2026-11-21, after the audit)", WEDNESDAY, "part of a longer date phrase"),
    ("the contract ends end of next month", THURSDAY, "part of a longer date phrase"),
    ("freezes start the last week of the month", THURSDAY, "part of a longer date phrase"),
])
def test_a_date_read_two_ways_is_left_as_written_and_said_why(line, base, why):
    new, found, left = rewrite_line(line, base)
    assert (new, found) == (line, [])
    assert any(why in u.why for u in left)


@pytest.mark.parametrize(("line", "base", "absolute"), [
    ("we shipped it last Friday", THURSDAY, "2026-11-13"),  # the Friday before this week: one reading
    ("the cutover is tomorrow 9am PT", THURSDAY, "2026-11-20"),
    ("next week we ship", THURSDAY, "2026-11-23"),
])
def test_a_date_read_one_way_is_made_absolute(line, base, absolute):
    new, _, left = rewrite_line(line, base)
    assert absolute in new and not left


@pytest.mark.parametrize("answer", ["2", "the second", "both", "the old one", "whichever is older"])
def test_a_pick_after_which_one_sends_the_forget_to_a_person(answer):
    found = gather_requests(said(("user", "forget the port note"),
                                 ("assistant", "Which one: 1) the gateway (8080) or 2) the database (5432)?"),
                                 ("user", answer)))
    assert [(r.kind, r.plain) for r in found] == [("forget", False)]


@pytest.mark.parametrize("second", ["hmm maybe keep it?", "or maybe not, idk", "wait no the deploy one is still right",
                                    "jk not that one, the deploy one", "on second thought leave it",
                                    "ach egal, lass sie drin", "nee lass mal", "toch maar niet", "やっぱやめとく"])
def test_a_forget_the_next_line_doubts_goes_to_a_person(second):
    found = gather_requests(said(("user", "forget the release day note"), ("user", second)))
    assert all(not r.plain for r in found if r.kind == "forget")


@pytest.mark.parametrize("sentence", [
    "never passes locally, only on ci", "immer schlägt der build fehl", "altijd faalt die test",
    "всегда падает этот тест", "никогда не проходит с первого раза", "nunca funciona a la primera",
    "toujours il plante ce build", "ab se test pass hona chahiye", "Note: more logging in the deploy script pls",
])
def test_a_complaint_with_always_or_never_is_no_rule(sentence):
    assert read(sentence) is None


@pytest.mark.parametrize("sentence", [
    "from now on the tests must pass", "ab sofort muss der test grün sein",
    "à partir de maintenant les tests doivent passer", "de ahora en adelante el test debe pasar",
    "er meinte, vergiss die vpn notiz, aber das war ironisch",
    '"chore: forget old vpn config, remember new gateway port"',
])
def test_a_wish_a_report_or_a_quotation_goes_to_a_person(sentence):
    hit = read(sentence)
    assert hit is not None and hit[2] is False


def test_a_remember_ending_on_a_quotation_keeps_the_quotation_out_of_its_text():
    hit = read('remember what ops told us: "we fix it tomorrow"')
    assert hit is not None and "tomorrow" not in hit[1]


@pytest.mark.parametrize("line", ["alerts go to #today in slack", "ping @tomorrow bot", "set TODAY=1 in .env",
                                  "images tagged :tomorrow", "run git log --since yesterday", "git log --since=yesterday",
                                  "下周末去团建", "今年度中に移行", "다음 주말에 배포", "ieri l'altro", "elke morgen om 9 uur",
                                  "the audit is in two weeks and three days"])
def test_a_name_a_setting_or_a_longer_period_is_never_rewritten(line):
    assert rewrite_line(line, THURSDAY)[0] == line


@pytest.mark.parametrize(("first", "second"), [
    ("forget the staging", "reset schedule part"),  # the request goes on in the next line
    ("VPNのメモ消して", "うーん、やっぱ残したほうがいいかな？"),
])
def test_a_request_the_next_line_completes_or_hedges_goes_to_a_person(first, second):
    found = gather_requests(said(("user", first), ("user", second)))
    assert found and all(not r.plain for r in found)


def test_a_remember_ending_on_a_particle_goes_on_and_is_not_filed_alone():
    hit = read("覚えておいて：ステージングは")
    assert hit is not None and hit[2] is False


@pytest.mark.parametrize(("asked", "answer"), [
    ("Which one: the gateway (8080) or the database (5432)?", "the database one"),
    ("Welche? Gateway oder Datenbank?", "die datenbank"),
    ("ゲートウェイとデータベース、どちらですか？", "データベースの方"),
    ("网关的还是数据库的？", "数据库的"),
])
def test_a_forget_the_assistant_asks_which_one_about_goes_to_a_person(asked, answer):
    found = gather_requests(said(("user", "forget the port note"), ("assistant", asked), ("user", answer)))
    assert [(r.kind, r.plain) for r in found] == [("forget", False)]


def test_a_forget_the_assistant_just_confirms_is_applied():
    found = gather_requests(said(("user", "forget the port note"), ("assistant", "Done. Anything else?")))
    assert [(r.kind, r.plain) for r in found] == [("forget", True)]
