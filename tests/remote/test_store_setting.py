"""`store = "anthropic:memstore_…"` in a store's config: each run mirrors the memory store first, accept, rollback
and auto_accept push back, under `dream push`'s conflict rules. Through the CLI, against the local server."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.cli import assert_one_line_error
from helpers.stores import DEMO

from dream.store.tree import read_tree


def configured(root: Path, store_id: str, extra: str = "") -> Path:
    """A folder holding only its config (naming the memory store) and the night's session logs."""
    (root / ".dream").mkdir(parents=True)
    (root / ".dream" / "config.toml").write_text(f'store = "anthropic:{store_id}"\n{extra}')
    shutil.copytree(DEMO / "logs", root / "logs")  # the sessions are local evidence, never pushed
    return root


def memories(root: Path) -> dict[str, str]:
    return {"/" + rel: data.decode() for rel, data in read_tree(root).items()}


def unguarded(server) -> tuple[int, int, int]:
    return server.unconditional_updates, server.unconditional_deletes, server.creates_over_existing


def test_a_run_pulls_first_and_accept_and_rollback_push(cli, seeded, tmp_path):
    server, original = seeded
    local = configured(tmp_path / "memory", server.store_id)

    run = cli("run", "--store", str(local), "--engine", "offline", "--force", "--json")
    assert run.code == 0 and run.json["status"] == "proposed", run.stderr
    assert run.json["base_version"] == 1 and server.files() == original, "a run reads the service, never writes it"
    history = cli("history", "--store", str(local), "--json").json
    assert history["runs"][0]["proposal_id"] == run.json["proposal_id"]

    acc = cli("accept", "--store", str(local), "--json")
    assert acc.code == 0 and acc.json["push"]["stopped"] is None, acc.stderr
    assert server.files() == memories(local) != original

    back = cli("rollback", "1", "--store", str(local), "--json")
    assert back.code == 0 and back.json["push"]["stopped"] is None, back.stderr
    assert server.files() == original, "rollback restores the service byte for byte"
    assert unguarded(server) == (0, 0, 0)


def test_the_next_run_takes_what_agents_wrote_on_the_service_meanwhile(cli, seeded, tmp_path):
    server, original = seeded
    local = configured(tmp_path / "memory", server.store_id)
    assert cli("run", "--store", str(local), "--engine", "offline", "--force").code == 0
    assert cli("accept", "--store", str(local)).code == 0
    server.put("/notes/from_an_agent.md", "Staging resets every Sunday.\n")  # an agent session, after the push

    again = cli("run", "--store", str(local), "--engine", "offline", "--force", "--json")
    assert again.code == 0, again.stderr
    assert (local / "notes" / "from_an_agent.md").read_text() == "Staging resets every Sunday.\n"
    assert memories(local)["/notes/from_an_agent.md"] == server.files()["/notes/from_an_agent.md"]
    assert unguarded(server) == (0, 0, 0)


def test_auto_accept_pushes_what_it_takes(cli, memory_store, tmp_path):
    server = memory_store
    server.put("/MEMORY.md", "# Memory\n\n- [Database](project_database.md) — Postgres 16\n")
    server.put("/project_database.md", "---\nname: Database\ndescription: Postgres 16\ntype: project\n---\n\n"
                                       "Production runs Postgres 16.\n")
    server.put("/reference_grafana.md", "---\nname: Grafana\ndescription: dashboards at grafana.corp.test\n"
                                        "type: reference\n---\n\nDashboards live at grafana.corp.test.\n")  # no index line
    local = tmp_path / "memory"
    (local / ".dream").mkdir(parents=True)
    (local / ".dream" / "config.toml").write_text(f'store = "anthropic:{server.store_id}"\nauto_accept = true\n')

    run = cli("run", "--store", str(local), "--engine", "offline", "--force", "--json")
    assert run.code == 0 and run.json["accepted_version"], run.stdout
    assert "grafana" in server.files()["/MEMORY.md"].lower(), "the orphan's new index line reached the service"
    assert server.files() == memories(local)
    pushes = [e for e in cli("history", "--store", str(local), "--json").json["events"] if e["action"] == "push"]
    assert [e["version"] for e in pushes] == [run.json["accepted_version"]]
    assert unguarded(server) == (0, 0, 0)


def test_a_folder_with_memories_of_its_own_or_another_stores_mirror_is_refused(cli, seeded, tmp_path):
    server, _ = seeded
    own = configured(tmp_path / "own", server.store_id)
    (own / "MEMORY.md").write_text("- mine\n")
    assert_one_line_error(cli("run", "--store", str(own), "--engine", "offline", "--force"), 2,
                          "mirrors no memory store yet", "dream pull")
    assert (own / "MEMORY.md").read_text() == "- mine\n" and not (own / ".dream" / "anthropic_mirror.json").exists()

    other = configured(tmp_path / "other", server.store_id)
    assert cli("run", "--store", str(other), "--engine", "offline", "--force").code == 0
    (other / ".dream" / "config.toml").write_text('store = "anthropic:memstore_someone_else"\n')
    assert_one_line_error(cli("run", "--store", str(other), "--engine", "offline", "--force"), 2,
                          f"mirrors {server.store_id}", "memstore_someone_else")


def test_a_store_setting_that_names_no_memory_store_is_a_config_error(cli, tmp_path):
    local = tmp_path / "memory"
    (local / ".dream").mkdir(parents=True)
    (local / ".dream" / "config.toml").write_text('store = "s3://bucket/memory"\n')
    assert_one_line_error(cli("run", "--store", str(local), "--engine", "offline", "--force"), 2, "store")


def test_the_store_setting_in_the_global_config_is_refused(cli, tmp_path, monkeypatch):
    personal = tmp_path / "config.toml"
    personal.write_text('store = "anthropic:memstore_01x"\n')
    monkeypatch.setenv("DREAM_CONFIG", str(personal))
    local = configured(tmp_path / "memory", "memstore_01x")
    (local / ".dream" / "config.toml").unlink()
    assert_one_line_error(cli("run", "--store", str(local), "--engine", "offline", "--force"), 2,
                          str(personal), "'store'", ".dream/config.toml")
