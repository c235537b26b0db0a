"""A mirrored Anthropic memory store, driven through the CLI against the local memory-stores server."""

from __future__ import annotations

import json
import shutil


from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.versions.proposals import Proposals
from helpers.stores import DEMO, snapshot_bytes


def _mirror(cli, server, tmp_path):
    local = tmp_path / "mirror"
    pulled = cli("pull", server.store_id, "--into", str(local), "--json")
    assert pulled.code == 0, pulled.stderr
    shutil.copytree(DEMO / "logs", local / "logs")  # the sessions are local evidence, never pushed
    return local


def _unguarded(server) -> tuple[int, int, int]:
    return server.unconditional_updates, server.unconditional_deletes, server.creates_over_existing


def test_pull_records_ids_and_hashes(cli, seeded, tmp_path):
    server, files = seeded
    local = _mirror(cli, server, tmp_path)
    assert {k: v for k, v in snapshot_bytes(local).items() if not k.startswith("logs/")} == \
        {p[1:]: t.encode() for p, t in files.items()}
    record = json.loads((local / ".dream" / "anthropic_mirror.json").read_text())
    assert record["store_id"] == server.store_id
    for path in files:
        memory = server.by_path(path)
        assert record["memories"][path[1:]]["id"] == memory.id
        assert record["memories"][path[1:]]["sha"] == memory.sha


def test_demo_flow_on_a_mirrored_store(cli, seeded, tmp_path):
    server, original = seeded
    ids = {p: server.by_path(p).id for p in original}
    local = _mirror(cli, server, tmp_path)

    run = cli("run", "--store", str(local), "--engine", "offline", "--json")
    assert run.code == 0 and run.json["status"] == "proposed", run.stderr
    assert server.files() == original, "a run must not touch the service"
    assert "+++ /dev/null" in cli("diff", "--store", str(local), "--json").json["diff"]

    acc = cli("accept", run.json["proposal_id"], "--store", str(local), "--json")
    assert acc.code == 0, acc.stderr
    push = acc.json["push"]
    assert push["stopped"] is None and push["pending"] == [] and push["pushed"]
    local_memories = {"/" + rel: data.decode() for rel, data in read_tree(local).items()}
    assert server.files() == local_memories != original
    for path in set(original) & set(local_memories):  # an updated memory keeps its id
        assert server.by_path(path).id == ids[path]

    events = cli("history", "--store", str(local), "--json").json["events"]
    pushes = [e for e in events if e["action"] == "push"]
    assert pushes and pushes[0]["version"] == 2 and "memver_" in pushes[0]["detail"]

    back = cli("rollback", "1", "--store", str(local), "--json")
    assert back.code == 0, back.stderr
    assert back.json["push"]["stopped"] is None
    assert server.files() == original, "rollback restores the service byte for byte"
    assert _unguarded(server) == (0, 0, 0)


def test_concurrent_changes_merge_or_wait_for_a_person(cli, seeded, tmp_path):
    server, original = seeded
    local = _mirror(cli, server, tmp_path)
    run = cli("run", "--store", str(local), "--engine", "offline", "--json").json
    proposal = cli("diff", "--store", str(local), "--json").json
    assert {"reference_jenkins.md", "project_idempotency_keys.md", "kafka_consumer_lag.md"} <= \
        set(proposal["files_changed"])
    # Between pull and accept, agent sessions write to the service:
    appended = "\n- 2026-12-01: keys now expire after 48 hours.\n"
    server.put("/project_idempotency_keys.md", original["/project_idempotency_keys.md"] + appended)  # dream edits it
    server.put("/reference_jenkins.md", original["/reference_jenkins.md"] + "Still used by the billing team.\n")
    server.put("/kafka_consumer_lag.md", "Consumer lag alerts page the data team, not us.\n")  # dream creates it
    concurrent = server.files()

    acc = cli("accept", run["proposal_id"], "--store", str(local), "--json")
    assert acc.code == 0, acc.stderr
    stops = [acc.json["push"]]
    while stops[-1]["stopped"] and len(stops) < 10:
        again = cli("push", "--store", str(local), "--json")
        assert again.code == (1 if again.json["stopped"] else 0), again.stderr
        stops.append(again.json)
    reasons = [(s["stopped"] or "").split(" ")[0] for s in stops]
    assert reasons == ["/reference_jenkins.md", "/project_idempotency_keys.md", "/kafka_consumer_lag.md", ""]
    assert [s["for_person"] for s in stops] == [True, False, True, False]
    assert stops[0]["pending"], "what was not reached stays pending"

    accepted = {"/" + rel: data.decode() for rel, data in read_tree(local).items()}
    assert server.files() == accepted, "after the pushes the service and the mirror agree"
    # The edit dream could not merge is kept, on the service and in the mirror; the one it could is combined.
    assert accepted["/reference_jenkins.md"] == concurrent["/reference_jenkins.md"]
    assert accepted["/kafka_consumer_lag.md"] == concurrent["/kafka_consumer_lag.md"]
    proposals = Proposals(Layout.open(local))
    dreamed = proposals.tree(proposals.get(run["proposal_id"]))["kafka_consumer_lag.md"]
    assert (local / ".dream" / "conflicts" / "kafka_consumer_lag.md").read_bytes() == dreamed
    merged = accepted["/project_idempotency_keys.md"]
    assert merged.endswith(appended) and merged != concurrent["/project_idempotency_keys.md"]
    assert _unguarded(server) == (0, 0, 0)
    detail = " ".join(e["detail"] or "" for e in cli("history", "--store", str(local), "--json").json["events"])
    assert "stopped: /reference_jenkins.md" in detail


def test_bad_pulls_are_one_line_and_write_nothing(cli, seeded, tmp_path):
    from helpers.cli import assert_one_line_error

    server, _ = seeded
    assert_one_line_error(cli("pull", "notastore", "--into", str(tmp_path / "a")), 2, "notastore", "memstore_")
    assert_one_line_error(cli("pull", "memstore_gone", "--into", str(tmp_path / "b")), 2, "memstore_gone", "404")
    used = tmp_path / "used"
    used.mkdir()
    (used / "note.md").write_text("mine\n")
    assert_one_line_error(cli("pull", server.store_id, "--into", str(used)), 2, str(used), "not empty")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b" / ".dream").exists()
    assert [p.name for p in used.iterdir()] == ["note.md"]


def test_a_memory_over_the_service_limit_stops_the_push(cli, seeded, tmp_path):
    server, original = seeded
    local = _mirror(cli, server, tmp_path)
    (local / "huge.md").write_text("x" * 102_401)
    pushed = cli("push", "--store", str(local), "--json")
    assert pushed.code == 1
    assert pushed.json["stopped"].startswith("/huge.md: the service refused the create")
    assert server.files() == original


def test_pull_again_brings_the_services_edits_and_merges_local_ones(cli, seeded, tmp_path):
    server, original = seeded
    local = _mirror(cli, server, tmp_path)
    server.put("/user_role.md", original["/user_role.md"] + "Also on call for payments.\n")
    server.put("/notes/new_from_an_agent.md", "Staging resets every Sunday.\n")
    server.remove("/reference_grafana.md")
    server.put("/project_database.md", original["/project_database.md"] + "Replica lag alarm at 30 s.\n")
    # the mirror's own change to project_database.md, not pushed yet
    (local / "project_database.md").write_text("# Database\n" + original["/project_database.md"])
    (local / "user_schedule.md").write_text("Mine, not pushed.\n")
    server.put("/user_schedule.md", "Theirs, written meanwhile.\n")

    res = cli("pull", "--into", str(local), "--json")
    assert res.code == 0, res.stderr
    assert sorted(res.json["taken"]) == ["notes/new_from_an_agent.md", "reference_grafana.md", "user_role.md"]
    assert res.json["merged"] == ["project_database.md"]
    assert [line.split(":")[0] for line in res.json["for_person"]] == ["user_schedule.md"]
    assert (local / "user_role.md").read_text() == server.files()["/user_role.md"]
    assert (local / "notes/new_from_an_agent.md").read_text() == "Staging resets every Sunday.\n"
    assert not (local / "reference_grafana.md").exists()
    assert (local / "project_database.md").read_text() == \
        "# Database\n" + original["/project_database.md"] + "Replica lag alarm at 30 s.\n"
    assert (local / "user_schedule.md").read_text() == "Mine, not pushed.\n", "left as it was, for a person"

    pushed = cli("push", "--store", str(local), "--json")  # the merge goes; the conflict waits on the service's side
    assert pushed.json["pushed"][0].startswith("updated /project_database.md")
    assert server.files()["/project_database.md"] == (local / "project_database.md").read_text()
    assert server.files()["/user_schedule.md"] == "Theirs, written meanwhile.\n"
    assert _unguarded(server) == (0, 0, 0)
    kept = local / ".dream" / "conflicts" / "user_schedule.md"
    assert pushed.json["for_person"] and str(kept) in pushed.json["stopped"]
    assert kept.read_text() == "Mine, not pushed.\n", "the mirror's own text is kept where the message says"


def test_pull_without_an_api_key_says_so(cli, tmp_path):
    from helpers.cli import assert_one_line_error

    assert_one_line_error(cli("pull", "memstore_01x", "--into", str(tmp_path / "m")), 2, "ANTHROPIC_API_KEY")
    assert not (tmp_path / "m").exists()


def test_a_create_into_another_memorys_path_waits_for_a_person(cli, seeded, tmp_path):
    server, original = seeded
    local = _mirror(cli, server, tmp_path)
    (local / "notes").mkdir()
    (local / "notes" / "a.md").write_text("a new note\n")
    server.put("/notes", "a memory whose path is the folder's\n")  # an agent wrote it meanwhile
    pushed = cli("push", "--store", str(local), "--json")
    assert pushed.code == 1 and pushed.json["for_person"]
    assert pushed.json["stopped"].startswith("/notes/a.md: the path is taken on the service")
    assert (local / "notes" / "a.md").read_text() == "a new note\n", "nothing is lost"
    assert server.files() == {**original, "/notes": "a memory whose path is the folder's\n"}
    assert _unguarded(server) == (0, 0, 0)


def test_pull_follows_every_page(cli, memory_store, tmp_path):
    memory_store.put("/MEMORY.md", "# Memory\n")
    for i in range(130):
        memory_store.put(f"/topics/t{i:03d}.md", f"topic {i}\n")
    local = tmp_path / "mirror"
    assert cli("pull", memory_store.store_id, "--into", str(local)).code == 0
    assert {"/" + rel: data.decode() for rel, data in read_tree(local).items()} == memory_store.files()
    listed = [r for r in memory_store.requests if r == ("GET", f"/v1/memory_stores/{memory_store.store_id}/memories")]
    assert len(listed) == 7, "131 memories at 20 a page (view=full), one list request each"
