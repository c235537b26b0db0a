"""The Claude engine at real scale, against the strict fake server (issue #37, items 2-4).

- A first message that always fits the model's window: tokens counted per
  script (the server's count near the limit), every part of it capped, and
  the sessions that can never fit one dream dreamed in parts, oldest first,
  each a complete proposal; the gate runs the next part once the pending one
  is decided.
- Budgets that end in a proposal: the model is told what is left after every
  turn and asked to finish at a soft limit; a run stopped at its hard ceiling
  proposes what it staged, marked partial, and what it did not read waits for
  the next run; a run that failed with nothing staged is not repeated as it was.
- Re-reads of what the conversation already carries cost a line, not the bytes.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import anthropic
import pytest
from helpers.claude_store import INDEX, engine_input
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text, tool_use  # noqa: F401
from helpers.reference_store import JAPANESE, make_store
from helpers.scripted_models import Rereader, ScriptedModel

from dream.engines.claude import ClaudeEngine
from dream.engines.claude.tokens import estimate, parse_scripts
from dream.errors import BadInput
from dream.outcomes import Status
from dream.pipeline.run import run
from dream.store.layout import Layout
from dream.store.state import load_state
from dream.versions.proposals import Proposals

SMALL_WINDOW = 24_000  # tokens: a local model behind a gateway, small enough for a test store to outgrow it


def configure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, window: int = SMALL_WINDOW, extra: str = "") -> None:
    """A model priced like Sonnet whose prompt limit is `window` (the fake refuses anything longer as the API does)."""
    config = tmp_path / "config.toml"
    config.write_text(f'model = "small-gw"\n{extra}[prices."small-gw"]\ninput = 2.0\noutput = 10.0\n'
                      f"prompt_tokens = {window}\n")
    monkeypatch.setenv("DREAM_CONFIG", str(config))


def first_text(body: dict[str, Any]) -> str:
    return body["messages"][0]["content"][0]["text"]


def prompt_tokens(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def night(day: int) -> float:
    return datetime(2026, 12, day, 3).timestamp()


# -- the strict server ---------------------------------------------------------------------------------------


def test_the_strict_server_counts_each_script_and_refuses_a_prompt_over_the_window(fake_api: FakeAnthropic) -> None:
    client = anthropic.Anthropic(max_retries=0)
    english = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "deploy " * 1000}])
    japanese = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "デプロイ" * 1750}])
    assert english.input_tokens < 2_000 < 7_000 <= japanese.input_tokens  # 7,000 characters each
    assert len(fake_api.counted) == 2 and fake_api.requests == []  # counting takes no step of the script
    fake_api.context_window = 5_000
    fake_api.play(Reply([text("never sent")]))
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "デプロイ" * 1750}])
    fake_api.count_tokens = "absent"
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "x"}])


def test_the_local_count_errs_high_for_every_script_and_its_table_fails_loudly() -> None:
    for sample, real in (("deploy the payout ledger " * 400, 2_500), ("デプロイの台帳" * 1000, 7_000),
                         ("배포 장부 " * 1000, 4_000), ("развернуть реестр " * 500, 2_500)):
        assert estimate(sample) >= real, sample[:20]  # at least the strict server's count (chars/4, CJK 1)
    with pytest.raises(BadInput, match="scripts.toml: malformed token table"):
        parse_scripts('ascii = 0.3\nother = 0.5\n[[class]]\nname = "x"\ntokens_per_char = 1\nranges = [[5, 1]]\n',
                      "scripts.toml")


# -- a first message that fits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("counting", ["offered", "absent"])
def test_a_first_message_that_would_outgrow_the_window_fits_it(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, counting: str
) -> None:
    """Twelve Japanese sessions of 4,000 characters are about 48K tokens, twice the window; on main the first
    request was refused `prompt is too long` every night."""
    configure(monkeypatch, tmp_path)
    fake_api.context_window, fake_api.count_tokens = SMALL_WINDOW, counting
    store = make_store(tmp_path / "store", topics=4, sessions=12, session_chars=4_000, words=JAPANESE)
    fake_api.play(*[ScriptedModel(read_topics=False, read_sessions=2, edits=1)] * 40)
    outcome = run(store, engine="claude", now=night(1))
    assert outcome.status == Status.PROPOSED, outcome.error
    assert fake_api.protocol_errors == [] and len(fake_api.usages) == len(fake_api.requests)  # no 400
    assert prompt_tokens(fake_api.usages[0]) <= SMALL_WINDOW // 2  # room left for the conversation
    assert max(prompt_tokens(u) for u in fake_api.usages) <= SMALL_WINDOW
    assert fake_api.counted  # near the limit the server's count is asked for; without one, the local count stands


def test_a_long_listing_and_index_are_capped_and_say_how_to_see_the_rest(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path)
    fake_api.context_window = SMALL_WINDOW
    store = make_store(tmp_path / "store", topics=400, sessions=5, session_chars=2_000, index_lines=400)
    fake_api.play(*[ScriptedModel(read_topics=False, read_sessions=0, edits=1, preamble=False)] * 10)
    outcome = run(store, engine="claude", now=night(1))
    assert outcome.status == Status.PROPOSED, outcome.error
    first = first_text(fake_api.requests[0])
    assert re.search(r"- … and \d+ more files, not listed here for room: `view /memories`", first)
    assert "far over its budget; only the first" in first
    assert prompt_tokens(fake_api.usages[0]) <= SMALL_WINDOW // 2


# -- a dream in parts ------------------------------------------------------------------------------------------


def part_model(body: dict[str, Any]) -> Reply:
    """Writes down which sessions its first message gave it, in a new memory, and finishes."""
    sessions = re.findall(r"^### `([^`]+)` — ", first_text(body), flags=re.M)
    name = f"part-{sessions[0]}"
    body_text = (f"---\nname: {name}\ndescription: sessions {sessions[0]} to {sessions[-1]}\ntype: project\n---\n"
                 + "".join(f"- {sid}\n" for sid in sessions))
    return Reply([memory("create", path=f"/memories/{name}.md", file_text=body_text),
                  tool_use("finish", summary=f"- created {name}.md: the sessions of this part")])


def test_sessions_that_can_never_fit_one_dream_are_dreamed_in_parts_each_once(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    configure(monkeypatch, tmp_path)
    fake_api.context_window = SMALL_WINDOW
    store = make_store(tmp_path / "store", topics=3, sessions=120, session_chars=3_000)
    dreamed: list[list[str]] = []
    for _ in range(12):
        fake_api.play(part_model)
        ran = cli("run", "--store", str(store), "--engine", "claude", "--json")
        assert ran.code == 0, ran.stderr
        if ran.json["status"] == "skipped":
            break
        assert ran.json["status"] == "proposed" and fake_api.protocol_errors == [], ran.json
        assert prompt_tokens(fake_api.usages[0]) <= SMALL_WINDOW // 2
        dreamed.append(re.findall(r"^### `([^`]+)` — ", first_text(fake_api.requests[0]), flags=re.M))
        if load_state(Layout.open(store)).next_part:
            fake_api.play(part_model)
            waiting = cli("run", "--store", str(store), "--engine", "claude", "--json")
            assert waiting.json["status"] == "skipped" and waiting.json["reason"] == "part"
            assert fake_api.requests == []  # nothing is dreamed twice while a part waits for a person
        assert cli("accept", ran.json["proposal_id"], "--store", str(store)).code == 0
    everything = [f"s{s:02d}" for s in range(120)]
    assert len(dreamed) > 1, "the store fit one dream: the test does not test parts"
    assert sorted(sid for part in dreamed for sid in part) == sorted(everything)  # every session once
    assert [part[0] for part in dreamed] == sorted((part[0] for part in dreamed), key=everything.index)  # oldest first
    assert all(len(part) >= 1 for part in dreamed) and not load_state(Layout.open(store)).next_part


# -- budgets that end in a proposal ----------------------------------------------------------------------------


class Stubborn:
    """Edits one file, then reads session after session, ignoring what it is told about its budget."""

    def __init__(self, heed: bool = False) -> None:
        self.heed, self.turn, self.told = heed, 0, []

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.turn += 1
        last = body["messages"][-1]["content"]
        self.told += [b["text"] for b in last if isinstance(b, dict) and b.get("type") == "text"
                      and b["text"].startswith("[budget left")]
        if self.turn == 1:
            return Reply([memory("str_replace", path="/memories/topic-00.md", old_str="\ntype: ",
                                 new_str="\nreviewed: 2026-11-30\ntype: "),
                          tool_use("read_session", session_id="s00")], thinking=12_000)
        if self.heed and "near the end of the budget" in self.told[-1]:
            return Reply([tool_use("finish", summary="- dated topic-00.md: reviewed")], thinking=12_000)
        return Reply([tool_use("read_session", session_id=f"s{self.turn - 1:02d}")], thinking=12_000)


def test_a_run_stopped_at_its_hard_ceiling_proposes_what_it_staged_marked_partial(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    """On main the same run failed with nothing proposed, and failed the same way every night after."""
    configure(monkeypatch, tmp_path, window=200_000, extra="max_cost_usd = 0.2\nfirst_message_session_chars = 0\n")
    store = make_store(tmp_path / "store", topics=3, sessions=6, session_chars=3_000)
    model = Stubborn()
    fake_api.play(*[model] * 10)
    ran = cli("run", "--store", str(store), "--engine", "claude", "--json")
    assert ran.json["status"] == "proposed", ran.json
    proposals = Proposals(Layout.open(store))
    report = proposals.report(proposals.get(ran.json["proposal_id"]))
    assert report["partial"].startswith("stopped at its budget") and "max_cost_usd=0.2" in report["partial"]
    assert "reviewed: 2026-11-30" in proposals.tree(proposals.get(ran.json["proposal_id"]))["topic-00.md"].decode()
    assert any("partial dream" in line for line in report["needs_person"])
    assert report["deferred_sessions"] == ["s01", "s02", "s03", "s04", "s05"]  # s00 was read; the rest waits
    assert set(report["logs_read"]) == {next(p for p in report["session_logs"].values() if "s00" in p)}
    assert all(line.startswith("[budget left: $") for line in model.told)
    fake_api.play(*[ScriptedModel(read_topics=False, edits=0, preamble=False)] * 20)
    assert cli("accept", ran.json["proposal_id"], "--store", str(store)).code == 0
    again = cli("run", "--store", str(store), "--engine", "claude", "--json")  # the next part, at once
    assert again.json["status"] in ("proposed", "noop") and again.json["sessions_read"] == 5, again.json


def test_at_the_soft_limit_the_model_is_asked_to_finish_and_its_last_reply_is_kept(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path, window=200_000, extra="max_cost_usd = 0.17\nfirst_message_session_chars = 0\n")
    store = make_store(tmp_path / "store", topics=3, sessions=6, session_chars=3_000)
    model = Stubborn(heed=True)
    fake_api.play(*[model] * 10)
    outcome = run(store, engine="claude", now=night(1))
    assert outcome.status == Status.PROPOSED, outcome.error
    assert "near the end of the budget" in model.told[0] and "call finish" in model.told[0]
    assert outcome.usage.cost_usd > 0.17  # the finishing reply passed the ceiling: paid for, so kept, not failed
    assert not any("partial dream" in line for line in outcome.needs_person)


def test_a_run_that_failed_at_its_budget_with_nothing_staged_is_not_run_the_same_way_again(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, tmp_path, window=200_000, extra="max_cost_usd = 0.05\nfirst_message_session_chars = 0\n")
    store = make_store(tmp_path / "store", topics=3, sessions=40, session_chars=3_000)
    reader = [Reply([tool_use("read_session", session_id=f"s{n:02d}")], thinking=6_000) for n in range(10)]
    fake_api.play(*reader)
    failed = run(store, engine="claude", now=night(1))
    assert failed.status == Status.FAILED and failed.reason == "budget_cost"
    first = first_text(fake_api.requests[0])
    assert load_state(Layout.open(store)).part_sessions == 20  # half of the 40 it took
    fake_api.play(*reader)
    run(store, engine="claude", force=True, now=night(2))
    second = first_text(fake_api.requests[0])
    assert second.count("\n### `") < first.count("\n### `")  # a smaller part: not the same doomed run
    assert "one part of several" in second


def test_a_failure_with_nothing_staged_says_why_and_what_the_next_run_does(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    """Each failed run halves the part until a run proposes; run, status and history tell the user so, and a
    part of one session that still fails says the next run would be the same one."""
    configure(monkeypatch, tmp_path, window=200_000, extra="max_cost_usd = 0.05\nfirst_message_session_chars = 0\n")
    store = make_store(tmp_path / "store", topics=3, sessions=4, session_chars=3_000)
    reader = [Reply([tool_use("read_session", session_id=f"s{n:02d}")], thinking=9_000) for n in range(10)]
    taken = []
    for _ in range(3):
        fake_api.play(*reader)
        ran = cli("run", "--store", str(store), "--engine", "claude", "--force", "--json")
        assert ran.code != 0 and ran.json["status"] == "failed" and ran.json["reason"] == "budget_cost", ran.json
        taken.append(first_text(fake_api.requests[0]).count("\n### `"))
    assert taken == [4, 2, 1]  # never the same doomed run while a smaller one is left
    runs = cli("history", "--store", str(store), "--json").json["runs"]  # newest first
    assert "the next run takes at most 1 of these 2 sessions, oldest first" in runs[1]["error"]
    last = ran.json["error"]
    assert "over max_cost_usd=0.05" in last and "cannot take fewer than this one session" in last
    status = cli("status", "--store", str(store))
    assert "backing off" in status.stdout and "cannot take fewer than this one session" in " ".join(status.stdout.split())
    history = cli("history", "--store", str(store))
    assert "the last run failed:" in history.stdout and "over max_cost_usd=0.05" in " ".join(history.stdout.split())


# -- re-reads --------------------------------------------------------------------------------------------------


def test_re_reads_of_what_the_first_message_shows_return_where_it_is(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    inp = engine_input(tmp_path)
    fake_api.play(
        Reply([memory("view", path="/memories/deploy.md"), tool_use("read_session", session_id="s1"),
               tool_use("read_session", session_id="s1", start="first"), memory("view", path="/memories/MEMORY.md")]),
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.", new_str="CI ships.")]),
        Reply([memory("view", path="/memories/deploy.md"), tool_use("list_sessions")]),
        Reply([memory("view", path="/memories/deploy.md"), tool_use("list_sessions")]),
        Reply([text("- updated deploy.md: wording")]),
    )
    ClaudeEngine().consolidate(inp)
    lines = first_text(fake_api.requests[0]).split("\n")
    results = [r for r in fake_api.tool_results()]
    view, read, malformed = results[0], results[1], results[2]
    span = re.search(r"lines (\d+)-(\d+)", view["content"])
    assert span and "is unchanged since" in view["content"]
    assert "\n".join(lines[int(span.group(1)) - 1:int(span.group(2))]) == (tmp_path / "staging" / "deploy.md") \
        .read_text().replace("CI ships.", "CI publishes.").rstrip("\n")  # exactly the file, where it says
    span = re.search(r"lines (\d+)-(\d+)", read["content"])
    assert span and lines[int(span.group(1)) - 1].startswith("> how do we run tests?")
    assert malformed.get("is_error") is True  # a malformed call still gets its own error
    index = re.search(r"lines (\d+)-(\d+)", results[3]["content"])  # the index, shown whole, is where it is too
    assert index and "\n".join(lines[int(index.group(1)) - 1:int(index.group(2))]) == INDEX.rstrip("\n")
    edited_view, listed, same_view, same_list = results[5], results[6], results[7], results[8]
    assert "CI ships." in edited_view["content"]  # changed since: the bytes
    assert "your turn 3 above" in same_view["content"] and "your turn 3 above" in same_list["content"]
    assert "s1 |" in listed["content"]


def test_re_reads_are_not_paid_in_full(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    """A model that re-reads every session and file its first message shows, three calls a turn: on main each
    re-read sent the bytes again (4.7x the single-prompt bound on the reference store)."""
    store = make_store(tmp_path / "store", topics=6, sessions=4, session_chars=6_000)
    fake_api.play(*[Rereader(calls_per_turn=3, edits=1, preamble=False, heeds=False)] * 30)
    outcome = run(store, engine="claude", force=True, now=night(1))
    assert outcome.status == Status.PROPOSED, outcome.error
    rereads = [r for r in fake_api.tool_results() if "shown in full in your first message" in str(r["content"])]
    assert len(rereads) == 10  # six files and four sessions
    assert sum(len(str(r["content"])) for r in rereads) < 0.1 * sum(
        len(p.read_text()) for p in store.rglob("*.md") if "logs" in p.parts or p.name.startswith("topic"))


def test_a_batch_of_re_reads_says_once_why_its_notes_carry_no_bytes(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    """Every later request carries each note: the reason is given once a turn, each note is the pointer alone."""
    fake_api.play(
        Reply([memory("view", path="/memories/deploy.md"), memory("view", path="/memories/MEMORY.md"),
               tool_use("read_session", session_id="s1")]),
        Reply([memory("view", path="/memories/MEMORY.md")]),
        Reply([text("Nothing needed changing.")]),
    )
    ClaudeEngine().consolidate(engine_input(tmp_path, model="claude-sonnet-5-5"))
    notes = [r["content"] for r in fake_api.tool_results()]
    assert all("shown in full in your first message, lines" in n for n in notes)
    explained = [n for n in notes if "re-reading one returns only a note" in n]
    assert explained == [notes[0], notes[3]]  # the first of each turn
    assert all(len(n) < 120 for n in notes[1:3])  # the pointer alone
    assert fake_api.protocol_errors == []


def test_a_text_reply_answered_with_a_nudge_goes_back_without_its_thinking(
    tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    """Only a reply whose calls are answered must go back with its thinking (docs: extended thinking with tool
    use); a preamble's would be cache-written and then read by every later request for nothing."""
    fake_api.play(
        Reply([text("I'll start by reviewing the index.")], thinking=1_500),
        Reply([memory("str_replace", path="/memories/deploy.md", old_str="CI publishes.", new_str="CI ships.")],
              thinking=1_500),
        Reply([text("- updated deploy.md: wording")], thinking=1_500),
    )
    result = ClaudeEngine().consolidate(engine_input(tmp_path, model="claude-sonnet-5-5"))
    assert [c.path for c in result.changes] == ["deploy.md"]
    assert fake_api.protocol_errors == [] and fake_api.transformations[-1] == []  # the strict server took each
    last = fake_api.requests[-1]["messages"]
    preamble, edit = last[1]["content"], last[3]["content"]
    assert [b["type"] for b in preamble] == ["text"]  # no thinking block: it was never sent
    assert [b["type"] for b in edit][0] == "thinking"  # the edit's turn goes back with its thinking
    assert fake_api.usages[1]["cache_creation_input_tokens"] < 1_000  # the preamble's 1,500 thought are not paid


def test_the_budget_line_never_enters_a_segment_digest() -> None:
    from dream.engines.claude.context import digest_lines

    message = {"role": "user", "content": [{"type": "text", "text": "[budget left: $1.00 of $2.00, 50 min of 60]"}]}
    assert digest_lines(message, {}) == []


# -- a 200K-window model on the audit's stores (slow: megabytes of logs, dozens of requests a part) --------------


def dream_every_part(store: Path, fake: FakeAnthropic, cli, calls: int) -> list[list[str]]:
    """`dream run` and `dream accept` until no part is left; the sessions each part's first message held."""
    parts: list[list[str]] = []
    for _ in range(12):
        fake.play(*[ScriptedModel(calls_per_turn=calls)] * 400)
        ran = cli("run", "--store", str(store), "--engine", "claude", "--json")
        if ran.json["status"] == "skipped":
            return parts
        assert ran.json["status"] == "proposed" and fake.protocol_errors == [], ran.json
        assert len(fake.usages) == len(fake.requests)  # not one request refused
        assert max(prompt_tokens(u) for u in fake.usages) <= 200_000
        parts.append(re.findall(r"^### `([^`]+)` — ", first_text(fake.requests[0]), flags=re.M))
        assert cli("accept", ran.json["proposal_id"], "--store", str(store)).code == 0
    raise AssertionError("more than 12 parts")


@pytest.mark.slow
@pytest.mark.parametrize("calls", [3, 10])
def test_a_200k_model_dreams_twenty_japanese_sessions_of_20k_characters(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, cli, calls: int
) -> None:
    """About 480K tokens of sessions: on main the first request was 213K tokens, refused every night."""
    monkeypatch.setenv("DREAM_CONFIG", str(tmp_path / "none.toml"))
    fake_api.context_window = 200_000
    store = make_store(tmp_path / "store", sessions=20, words=JAPANESE)
    (store / ".dream").mkdir(exist_ok=True)
    (store / ".dream" / "config.toml").write_text('model = "claude-haiku-4-5"\n')
    parts = dream_every_part(store, fake_api, cli, calls)
    assert sorted(sid for part in parts for sid in part) == [f"s{s:02d}" for s in range(20)]


@pytest.mark.slow
def test_a_200k_model_dreams_480_sessions_in_parts_that_cover_them_all(
    tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    """A first dream over 480 sessions of 20K characters (9.6 MB): on main the first request was 233K tokens."""
    monkeypatch.setenv("DREAM_CONFIG", str(tmp_path / "none.toml"))
    fake_api.context_window = 200_000
    store = make_store(tmp_path / "store", sessions=480)
    (store / ".dream").mkdir(exist_ok=True)
    (store / ".dream" / "config.toml").write_text('model = "claude-haiku-4-5"\n')
    parts = dream_every_part(store, fake_api, cli, 10)
    assert len(parts) > 1
    assert sorted(sid for part in parts for sid in part) == sorted(f"s{s:02d}" for s in range(480))


def test_the_lint_claims_in_the_first_message_stay_within_their_room(tmp_path: Path, fake_api: FakeAnthropic) -> None:
    fake_api.context_window = SMALL_WINDOW
    small = {"small-gw": {"input": 2.0, "output": 10.0, "prompt_tokens": SMALL_WINDOW}}
    inp = replace(engine_input(tmp_path, model="small-gw", prices=small),
                  lint=[f"topic-{n}.md: `src/module_{n}.py` no longer exists in the project" for n in range(3_000)])
    fake_api.play(Reply([text("- nothing to change")]), Reply([text("- nothing to change")]))
    ClaudeEngine().consolidate(inp)
    first = first_text(fake_api.requests[0])
    assert re.search(r"- … and \d+ more claims, not shown for room: `dream lint` lists them", first)
    assert "module_0.py" in first and prompt_tokens(fake_api.usages[0]) <= SMALL_WINDOW // 2
