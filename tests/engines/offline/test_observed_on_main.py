"""One test per bullet of issue #20's "Observed on main", phrased as it is written there.

Each drives `dream run` and `dream diff --json` (and `dream accept`) on a
store written the way a user's is: memory files, and activity logs whose
user lines are what people said.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dream.engines.offline.corrections import parse, rewrite
from dream.engines.offline.dates import rewrite_line
from dream.engines.offline.requests import read
from dream.engines.offline import phrases

STORE = {
    "MEMORY.md": "# Memory index\n"
                 "- [Dev server](project_dev_server.md) — the dev server runs on port 8080\n"
                 "- [Job queue](project_job_queue.md) — background jobs run on RabbitMQ 3.11\n"
                 "- [Formatting](feedback_formatting.md) — indent Python with spaces, not tabs\n"
                 "- [Deploys](feedback_deploys.md) — ask Bob about deploys\n"
                 "- [Package manager](feedback_package_manager.md) — we use npm for the web app\n"
                 "- [Standups](project_standups.md) — standup is at 9:30\n"
                 "- [Tests](feedback_tests.md) — run make test before pushing\n"
                 "- [Review](user_review.md) — Alice reviews backend PRs\n",
    "project_dev_server.md": "---\nname: Dev server\ndescription: the dev server runs on port 8080\ntype: project\n"
                             "---\nThe dev server runs on port 8080 with hot reload.\n",
    "project_job_queue.md": "---\nname: Job queue\ndescription: background jobs run on RabbitMQ 3.11\n"
                            "type: project\n---\nBackground jobs run on RabbitMQ 3.11, started by make workers.\n",
    "feedback_formatting.md": "---\nname: Formatting\ndescription: indent Python with spaces, not tabs\n"
                              "type: feedback\n---\nIndent Python with spaces, not tabs.\n",
    "feedback_deploys.md": "---\nname: Deploys\ndescription: ask Bob about deploys\ntype: feedback\n---\n"
                           "Ask Bob about deploys.\n",
    "feedback_package_manager.md": "---\nname: Package manager\ndescription: we use npm for the web app\n"
                                   "type: feedback\n---\nWe use npm for the web app.\n",
    "project_standups.md": "---\nname: Standups\ndescription: standup is at 9:30\ntype: project\n---\n"
                           "Standup is at 9:30 in the small room.\n",
    "feedback_tests.md": "---\nname: Tests\ndescription: run make test before pushing\ntype: feedback\n---\n"
                         "Run make test before pushing.\n",
    "user_review.md": "---\nname: Review\ndescription: Alice reviews backend PRs\ntype: user\n---\n"
                      "Alice reviews the backend pull requests.\n",
}

# 105 ordinary things users say to a coding agent, in 10 languages (issue #20's examples among them).
CHATTER = [
    "Sorry, I was away for a bit.", "Never gonna give you up.", "No, not that file, the other one in src/api.",
    "lol", "ok", "thanks!", "hmm", "wait what", "nice", "that's weird", "can you rerun it", "looks good to me",
    "ugh, CI again", "brb", "back", "Never seen that before.", "Always the same flaky test lol.",
    "Don't know why it broke.", "no worries", "my bad, typo", "oops", "sure, go ahead", "why is it so slow",
    "Actually that makes sense.", "sorry, meeting ran long", "Do not disturb was on, sorry.",
    "For this one test, use port 8081, not 8080.", "hold on, let me check", "no no, the other branch",
    "perfect, ship it",
    "jajaja", "vale, gracias", "Nunca me había pasado esto.", "perdona, estaba comiendo", "olvídalo, ya va",
    "En realidad no sé por qué falló.", "siempre lo mismo jaja", "ok, sube los cambios", "¿por qué tarda tanto?",
    "perfecto",
    "moin", "ach so, alles klar", "Das hab ich noch nie gesehen.", "immer diese Linter haha", "sorry, war kurz weg",
    "Eigentlich wollte ich nur kurz was fixen.", "vergiss es, egal", "passt, danke", "warum dauert das so lange?",
    "super",
    "salut", "ah ok merci", "J'avais jamais vu ça.", "toujours la même galère mdr", "désolé, j'étais en réunion",
    "En fait c'est bon.", "oublie, c'était le cache", "top, merci", "pourquoi c'est si lent ?", "nickel",
    "oi", "beleza, valeu", "Nunca vi isso antes kkk", "sempre dá problema nessa parte", "foi mal, tava almoçando",
    "Na verdade acho que foi o cache.", "esquece, já resolvi", "show, pode subir", "por que tá tão lento?",
    "massa",
    "привет", "ага, понял", "Никогда такого не видел.", "всегда с этим тестом что-то не так", "извини, отходил",
    "На самом деле я устал.", "забудь, сам разберусь", "спасибо, отлично", "почему так долго?", "ок",
    "おはよう", "なるほど、ありがとう", "実はちょっと眠いです。", "いや、そっちじゃなくて上のファイル", "すみません、会議でした",
    "いいね", "哈哈哈哈", "好的，谢谢", "其实我也不太懂这个模块。", "不对，是另一个文件", "忘了说，我刚才在开会", "可以，提交吧",
    "아 그렇구나, 감사합니다", "사실 오늘 좀 피곤해요.", "ㅋㅋㅋ 항상 이 테스트가 문제네", "죄송해요, 잠깐 자리 비웠어요", "좋아요",
    "ciao", "ah ok, grazie", "Non l'avevo mai visto.", "sempre la solita storia", "scusa, ero in pausa",
    "In realtà è colpa mia.", "dimentica, ora va", "perfetto, vai pure",
]


def write_store(root: Path, said: list[str] | list[list[str]], files: dict[str, str] | None = None) -> Path:
    """A store with the memory files and one session log per list of user lines."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or STORE).items():
        (root / rel).write_text(text, encoding="utf-8")
    sessions = said if said and isinstance(said[0], list) else [said]
    for number, lines in enumerate(sessions, 1):
        day = root / "logs" / "2026" / "11" / f"{20 + number:02d}"
        day.mkdir(parents=True, exist_ok=True)
        text = "".join(f"> {line}\n< Ok.\n" for line in lines)
        (day / f"s{number}.md").write_text(text, encoding="utf-8")
    return root


def dream(cli, store: Path) -> dict:
    out = cli("run", "--store", str(store), "--force", "--json")
    assert out.code == 0, out.stderr
    run = out.json
    if run["status"] != "proposed":
        return {"run": run, "changes": [], "files": [], "needs": run.get("needs_person") or []}
    diff = cli("diff", "--store", str(store), "--json").json
    return {"run": run, "changes": diff["changes"], "files": diff["files_changed"],
            "needs": diff["report"]["needs_person"], "summary": diff["report"]["summary"]}


def accept(cli, store: Path) -> None:
    assert cli("accept", "--store", str(store)).code == 0


# ---------------------------------------------------------------- chatter becomes memory


def test_chatter_becomes_memory_105_ordinary_lines_in_10_languages_create_no_file_and_change_no_memory(tmp_path, cli):
    assert len(CHATTER) == 105
    store = write_store(tmp_path / "store", CHATTER)
    result = dream(cli, store)
    created = [c["path"] for c in result["changes"] if c["action"] == "created"]
    assert created == [] and [c for c in result["changes"] if c["kind"] == "request"] == []
    assert result["files"] == []


@pytest.mark.parametrize("said", [
    "Sorry, I was away for a bit.",  # became feedback_away_bit.md
    "Never gonna give you up.",  # became a rule
    "No, not that file, the other one in src/api.",  # became a memory
])
def test_chatter_examples_from_the_issue_become_no_memory(tmp_path, cli, said):
    result = dream(cli, write_store(tmp_path / "store", [said]))
    assert result["files"] == []


def test_for_this_one_test_use_port_8081_does_not_rewrite_the_dev_server_memory(tmp_path, cli):
    store = write_store(tmp_path / "store", ["For this one test, use port 8081, not 8080."])
    result = dream(cli, store)
    assert "project_dev_server.md" not in result["files"]
    assert "8080" in (store / "project_dev_server.md").read_text()


# ---------------------------------------------------------------- corrections said naturally


def test_corrections_said_naturally_edit_the_memory_instead_of_a_second_contradicting_file(tmp_path, cli):
    said = "actually, background jobs run on Redis Streams now, we moved off RabbitMQ in October"
    store = write_store(tmp_path / "store", [said])
    result = dream(cli, store)
    assert [(c["action"], c["path"]) for c in result["changes"] if c["kind"] == "request"] == [
        ("updated", "project_job_queue.md")]
    accept(cli, store)
    body = (store / "project_job_queue.md").read_text()
    assert "Background jobs run on Redis Streams (was RabbitMQ 3.11 until 2026-11-21)" in body
    assert "description: background jobs run on Redis Streams" in body
    assert "background jobs run on Redis Streams" in (store / "MEMORY.md").read_text()
    assert not list(store.glob("feedback_background*"))


# ---------------------------------------------------------------- garbled rewrites


def corrected(said: str, line: str) -> str:
    kind, text, plain = read(said) or ("", "", False)
    correction = parse(text, strict=kind == "update")
    assert correction is not None, said
    return rewrite(line, correction, "2026-11-20", note=True)


def test_garbled_rewrites_we_use_tabs_not_spaces_reads_as_a_sentence():
    new = corrected("Actually, we use tabs, not spaces.", "Indent Python with spaces, not tabs.")
    assert new.startswith("Indent Python with tabs, not spaces") and "use" not in new


def test_garbled_rewrites_for_deploys_ask_alice_not_bob_reads_as_a_sentence():
    assert corrected("Actually, for deploys ask Alice, not Bob.", "Ask Bob about deploys.") == \
        "Ask Alice (was Bob until 2026-11-20) about deploys."


def test_garbled_rewrites_the_same_correction_said_twice_in_one_session_applies_once(tmp_path, cli):
    said = "actually, we use pnpm now, not npm"
    store = write_store(tmp_path / "store", [said, said])
    result = dream(cli, store)
    assert len([c for c in result["changes"] if c["kind"] == "request"]) == 1
    accept(cli, store)
    body = (store / "feedback_package_manager.md").read_text()
    assert "We use pnpm (was npm until 2026-11-21) for the web app." in body
    assert "not pnpm" not in body and "pnpm (was pnpm" not in body


def test_garbled_rewrites_the_last_friday_of_the_month_is_left_as_written():
    from datetime import date

    text, found, _ = rewrite_line("releases freeze on the last Friday of the month", date(2026, 11, 20))
    assert text == "releases freeze on the last Friday of the month" and found == []


# ---------------------------------------------------------------- opposites merged


def test_opposites_merged_never_and_always_deploy_on_fridays_are_a_contradiction(tmp_path, cli):
    files = {"MEMORY.md": "# Rules\n- Never deploy on Fridays; the weekend on-call is thin and rollbacks are slow.\n"
                          "- Always deploy on Fridays; the weekend on-call is thin and rollbacks are slow.\n"}
    store = write_store(tmp_path / "store", ["thanks"], files)
    result = dream(cli, store)
    assert "MEMORY.md" not in result["files"]
    assert any("contradict" in item and "Fridays" in item for item in result["needs"])


# ---------------------------------------------------------------- contradictory reports


def test_contradictory_reports_a_repeated_forget_removes_once_and_does_not_also_say_nothing_matched(tmp_path, cli):
    store = write_store(tmp_path / "store", ["forget the standups memory, we dropped them",
                                             "forget the standups memory please"])
    result = dream(cli, store)
    assert [c["action"] for c in result["changes"] if c["kind"] == "request"] == ["forgotten"]
    assert not any("no memory matches" in item for item in result["needs"])


def test_contradictory_reports_a_repeated_remember_is_created_once_and_not_also_merged(tmp_path, cli):
    said = "remember that the design system lives in packages/ui"
    result = dream(cli, write_store(tmp_path / "store", [said, said]))
    assert [c["action"] for c in result["changes"] if c["kind"] == "request"] == ["created"]
    assert "already covered" not in result["summary"]


# ---------------------------------------------------------------- unattended garbage


def test_unattended_garbage_auto_accept_takes_only_housekeeping_and_the_requests_wait(tmp_path, cli):
    """`auto_accept = true`, sessions with a correction, a forget and 20 chatter lines."""
    files = dict(STORE)  # housekeeping: a relative date in a memory that says when it was written
    files["project_standups.md"] = files["project_standups.md"].replace(
        "type: project\n", "type: project\ncreated: 2026-11-02\n").replace("room.", "room since yesterday.")
    said = ["actually, the dev server runs on port 3000 now, not 8080", "forget the job queue memory",
            *CHATTER[:20]]
    store = write_store(tmp_path / "store", said, files)
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text("auto_accept = true\n")
    run = cli("run", "--store", str(store), "--force", "--json").json
    assert run["accepted_version"] == 2
    status = cli("status", "--store", str(store), "--json").json
    assert len(status["pending"]) == 1 and status["pending"][0] != run["proposal_id"]
    held = cli("diff", status["pending"][0], "--store", str(store), "--json").json["changes"]
    assert {(c["action"], c["path"]) for c in held if c["kind"] == "request"} == {
        ("updated", "project_dev_server.md"), ("forgotten", "project_job_queue.md")}
    taken = cli("diff", "--from", "1", "--to", "2", "--store", str(store), "--json").json["files_changed"]
    assert taken == ["project_standups.md"] and "since 2026-11-01" in (store / "project_standups.md").read_text()
    assert "8080" in (store / "project_dev_server.md").read_text() and (store / "project_job_queue.md").exists()


# ---------------------------------------------------------------- word lists drift


def test_word_lists_drift_the_pre_filter_keeps_a_korean_change_the_pattern_matches():
    import re

    said = "패키지 매니저를 npm에서 pnpm으로바꿨어요"  # no space before the verb
    assert read(said) is not None
    assert re.search(phrases.prefilter(), said)


def test_word_lists_drift_requests_know_every_verb_corrections_know():
    said = "数据库从 MySQL 变成 Postgres 了"
    hit = read(said)
    assert hit is not None and hit[0] == "update"
    assert parse(hit[1], strict=True) is not None


# ---------------------------------------------------------------- housekeeping noise on real stores


def topic_file(name: str, description: str, body: str, kind: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"


def long_hook(n: int) -> str:
    return (f"service {n} keeps its retry budget at {n + 2} attempts with jittered backoff between 200 ms and "
            f"{n + 5} s, and pages the owning team only after the third consecutive failure of the health probe")


def test_housekeeping_noise_trimming_16_long_index_lines_of_a_53_topic_store_appends_no_hook_to_topic_files(
        tmp_path, cli):
    files = {}
    index = ["# Memory index"]
    for n in range(53):
        name, rel = f"Service {n}", f"project_service_{n}.md"
        hook = long_hook(n) if n < 16 else f"service {n} retry budget"
        # Every file already says what its index hook says; the files share one template (they once
        # were merged as duplicates: see data/eval/look-alikes.yaml).
        body = long_hook(n).capitalize() + "."
        files[rel] = topic_file(name, f"service {n} retry budget", body)
        index.append(f"- [{name}]({rel}) — {hook}")
    files["MEMORY.md"] = "\n".join(index) + "\n"
    store = write_store(tmp_path / "store", ["thanks"], files)
    result = dream(cli, store)
    assert result["files"] == ["MEMORY.md"]
    accept(cli, store)
    index_after = (store / "MEMORY.md").read_text().splitlines()
    assert all(len(line) <= 150 for line in index_after) and len(index_after) == 54
    for rel, text in files.items():
        if rel != "MEMORY.md":
            assert (store / rel).read_text() == text, rel  # no hook appended as a last paragraph


def test_housekeeping_noise_new_frontmatter_description_does_not_repeat_name_where_the_index_hook_says_more(
        tmp_path, cli):
    # A long hook the file lacks is moved into it, and that edit gives the file its first frontmatter.
    hook = ("staging deploys need the VPN and a fresh token from the ops vault, which expires after eight hours; "
            "ask in #ops when the vault is sealed")
    files = {"MEMORY.md": f"# Memory index\n- [Staging deploys](project_staging.md) — {hook}\n",
             "project_staging.md": "# Staging deploys\n\nStaging needs the VPN.\n"}
    store = write_store(tmp_path / "store", ["thanks"], files)
    assert "project_staging.md" in dream(cli, store)["files"]
    accept(cli, store)
    text = (store / "project_staging.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["name"] == "Staging deploys" and meta["description"] == hook
    assert "Staging needs the VPN." in text


RULES_INLINE = [
    "never force-push to main", "always run the linter before committing", "keep migrations reversible",
    "use UTC in every log line", "don't log request bodies", "prefer small pull requests",
    "tag releases as vMAJOR.MINOR.PATCH", "write the changelog entry with the change",
    "never commit .env files", "pin Docker base images by digest", "review schema changes with the DBA",
    "keep feature flags under flags/", "name branches type/short-topic", "squash fixups before merging",
    "run the e2e suite before a release", "never store secrets in the wiki", "use pnpm, not yarn",
    "keep API errors in RFC 7807 shape", "don't add dependencies without a ticket", "write tests for every bug fix",
    "document every new env var in README", "prefer composition over inheritance in services",
    "rotate API keys every 90 days", "never skip the pre-commit hooks", "keep handlers under 50 lines",
    "ask before deleting a database table", "use structured logging, not print", "answer in English in PRs",
]


def test_housekeeping_noise_28_rule_lines_whose_files_are_missing_stay_in_the_index_and_nothing_is_dropped(
        tmp_path, cli):
    assert len(RULES_INLINE) == 28
    names = [f"feedback_rule_{n}.md" for n in range(28)]
    index = "# Rules\n" + "".join(f"- [Rule {n}]({rel}) — {rule}\n"
                                  for n, (rel, rule) in enumerate(zip(names, RULES_INLINE)))
    store = write_store(tmp_path / "store", ["thanks"], {"MEMORY.md": index})
    result = dream(cli, store)
    diff = cli("diff", "--store", str(store), "--json").json
    assert diff["retention"]["dropped"] == 0 and diff["retention"]["archived"] == 0
    accept(cli, store)
    after = (store / "MEMORY.md").read_text()
    for rel, rule in zip(names, RULES_INLINE):
        assert f"({rel}) — {rule}" in after  # still read at every session start
        assert rule in (store / rel).read_text()  # and its file now exists, keeping the text
    assert "archive.md" not in result["files"]


# The two files of a real store (AKABUST-STUDIO/era-plus in ../shared/corpus), the user's quote toned down.
SHORT_NAMES = {
    "MEMORY.md": "# Feedback\n"
                 "- [No short variable names](feedback_no_short_variable_names.md) — never `$r`/`$q`/`$e`/`$org`; "
                 "full descriptive names everywhere, including closure params\n",
    "feedback_no_short_variable_names.md":
        "---\nname: feedback_no_short_variable_names\n"
        "description: never use short/single-letter variable names like $r, $q, $e; always full descriptive names\n"
        "metadata:\n  type: feedback\n---\n\n"
        "Never use short or single-letter variable names — `$r`, `$q`, `$e`, `$org`, etc. Use the full descriptive "
        "name (`$organization`, `$query`, `$exception`). Applies everywhere, including closure params in "
        "Filament/Eloquent callbacks (`fn (Builder $query) => ...`, not `fn (Builder $q)`).\n\n"
        "**Why:** direct instruction — \"don't ever use short variable names like this\". Ties to existing "
        "convention [[feedback_writing_style]] on descriptive naming in CLAUDE.md.\n\n"
        "**How to apply:** when writing or editing, name every variable/closure param in full. When told about one "
        "instance, sweep the codebase for the same pattern and fix all of them, not just the flagged line.\n",
    "feedback_full_variable_names.md":  # an orphan: no index line points to it
        "---\nname: feedback-full-variable-names\n"
        "description: \"Never use short throwaway variable names like $q, $v, $r in closures — spell them out "
        "($query, $value, $record).\"\nmetadata: \n  node_type: memory\n  type: feedback\n---\n\n"
        "Never use short throwaway names in closures or block scopes — `$q`, `$v`, `$r`, `$item`, `$el`. "
        "Spell them out: `$query`, `$value`, `$record`, `$participant`, `$organization`.\n\n"
        "**Why:** Reads better in the diff, matches how the surrounding Laravel/Filament APIs name their own "
        "callback params (`Builder $query`, `Model $record`).\n\n"
        "**How to apply:** In every callback signature (`fn (Builder $query) => ...`, arrow-fn args, etc.). "
        "Applies even in tight one-liners.\n",
}


def test_housekeeping_noise_two_files_about_short_variable_names_are_merged_in_one_dream(tmp_path, cli):
    """"never `$r`/`$q`…" and "Never use short throwaway variable names like $q, $v, $r": one memory."""
    store = write_store(tmp_path / "store", ["thanks"], SHORT_NAMES)
    result = dream(cli, store)
    merged = [(c["action"], c["path"]) for c in result["changes"] if c["action"] == "merged"]
    assert merged == [("merged", "feedback_no_short_variable_names.md")]
    accept(cli, store)
    assert not (store / "feedback_full_variable_names.md").exists()
    kept = (store / "feedback_no_short_variable_names.md").read_text()
    for fact in ("`$org`", "sweep the codebase for the same pattern", "`$item`, `$el`", "even in tight one-liners",
                 "spell them out ($query, $value, $record)", "Reads better in the diff"):
        assert fact in kept
    assert "feedback_no_short_variable_names.md" in (store / "MEMORY.md").read_text()


def test_housekeeping_noise_an_opposite_pair_in_other_words_is_a_contradiction_not_merged(tmp_path, cli):
    files = {
        "MEMORY.md": "- [Payment gateway mocks](feedback_gateway_mocks.md) — use mocks for the payment gateway\n"
                     "- [Payment gateway tests](feedback_gateway_sandbox.md) — don't mock the payment gateway\n",
        "feedback_gateway_mocks.md": "---\nname: Payment gateway mocks\ndescription: use mocks for the payment "
                                     "gateway in unit tests\ntype: feedback\n---\nUse mocks for the payment gateway "
                                     "in unit tests; the suite must run offline.\n",
        "feedback_gateway_sandbox.md": "---\nname: Payment gateway tests\ndescription: don't mock the payment gateway "
                                       "in unit tests, call the sandbox\ntype: feedback\n---\nDon't mock the payment "
                                       "gateway in unit tests: call the Stripe sandbox.\n",
    }
    store = write_store(tmp_path / "store", ["thanks"], files)
    result = dream(cli, store)
    assert not [c for c in result["changes"] if c["action"] == "merged"]
    assert {"feedback_gateway_mocks.md", "feedback_gateway_sandbox.md"}.isdisjoint(result["files"])
    assert any("contradict" in item and "feedback_gateway_sandbox.md" in item for item in result["needs"])
