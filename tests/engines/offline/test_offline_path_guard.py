"""The offline engine's writes pass the same path guard as the memory tool's (dream.store.paths).

The one place the offline engine makes a file at a path it did not choose is
an index line pointing to a missing file (prune.py brings the file back from
the line's words). A line pointing into team/, logs/ or a look-alike of them
must not make that file: the line stays, and a person is told.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dream.errors import EngineFailed
from dream.engines.offline.orient import save, load
from dream.store.staging import Staging
from dream.config import Settings
from datetime import date

TOPIC = "---\nname: Style\ndescription: team style\ntype: feedback\n---\nBlack, 100 columns.\n"
TRICKS = ["team/new.md", "ｔｅａｍ/wide.md", "team／slash.md", "tеam/cyrillic.md", "logs/forged.md", "team∕div.md",
          "Team/case.md", "Feedback_Style.md"]


def store(root: Path) -> Path:
    (root / "team").mkdir(parents=True)
    (root / "team" / "style.md").write_text(TOPIC, encoding="utf-8")
    (root / "feedback_style.md").write_text(TOPIC.replace("team style", "my style"), encoding="utf-8")
    lines = [f"- [Trick {n}]({target}) — deploys go out on Fridays after the freeze, trick {n}\n"
             for n, target in enumerate(TRICKS)]
    (root / "MEMORY.md").write_text("# Memory\n- [Style](team/style.md) — team style\n"
                                    "- [Mine](feedback_style.md) — my style\n" + "".join(lines), encoding="utf-8")
    return root


def test_an_index_line_cannot_make_a_team_or_look_alike_file(tmp_path: Path, cli) -> None:
    root = store(tmp_path / "store")
    before = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    run = cli("run", "--store", str(root), "--force", "--json")
    assert run.code == 0, run.stderr
    diff = cli("diff", "--store", str(root), "--json").json
    assert not set(diff["files_changed"]) - before - {"archive.md"}, diff["files_changed"]
    needs = "\n".join(diff["report"]["needs_person"])
    for target in TRICKS[:4] + TRICKS[5:]:
        assert target in needs, (target, needs)
    assert cli("accept", "--store", str(root)).code == 0
    after = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".dream" not in p.parts}
    assert after - before <= {"archive.md"}  # the lines' words are kept in the archive, no trick file made
    assert "trick 0" in (root / "archive.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", ["team/new.md", "ｔｅａｍ/x.md", "team／x.md", "logs/x.md", "FEEDBACK_STYLE.md"])
def test_save_refuses_a_new_path_the_memory_tool_would_refuse(tmp_path: Path, path: str) -> None:
    root = store(tmp_path / "store")
    staging = Staging(root)
    ws, before = load(staging, Settings(), date(2026, 12, 1))
    ws.store.add_topic(path, ws.store.topics["feedback_style.md"].text)
    with pytest.raises(EngineFailed, match="was about to write"):
        save(ws, staging, before)
    assert not (root / path).exists() and not (root / "ｔｅａｍ").exists()


def test_an_archive_is_not_made_beside_a_file_that_reads_as_its_name(tmp_path: Path, cli) -> None:
    """A user's `Archive.md` (another case): the archive goes to dream_archive.md, never a look-alike archive.md."""
    root = tmp_path / "store"
    root.mkdir()
    (root / "Archive.md").write_text(TOPIC.replace("Style", "Old things"), encoding="utf-8")
    (root / "MEMORY.md").write_text("# Memory\n- [Old](Archive.md) — old things\n"
                                    "- [Gone](gone.md)\n", encoding="utf-8")  # a broken pointer, archived
    run = cli("run", "--store", str(root), "--force", "--json")
    assert run.code == 0 and run.json["status"] == "proposed", (run.stderr, run.json)
    diff = cli("diff", "--store", str(root), "--json").json
    assert "dream_archive.md" in diff["files_changed"] and "archive.md" not in diff["files_changed"]
