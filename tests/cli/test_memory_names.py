"""New memories' names (issue 39): titles end at a phrase end, file names keep the memory's own script
(NFKC), never a bare hash, and say each word once.

Observed on main: "Always add a regression test next", "…needs basic", `project_3ae1569f.md` for a
Japanese memory, `project_staging_site_staging_….md`.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from dream.engines.offline.text import phrase_title, short_slug, short_title

SAID = {
    "a1": "remember that the payments service needs basic auth with the shared team password from the vault",
    "a2": "ステージングのビルドは金曜日に実行するって覚えておいて",
    "a3": "remember that the staging site of the shop is the staging copy at staging.shop.internal",
    "a4": "remember that the kiosk build runs nightly",
    "a5": "remember that the ｶｰﾄ service retries twice",  # half-width katakana: NFKC makes it カート
}


@pytest.fixture
def named(tmp_path: Path, cli) -> dict:
    store = tmp_path / "shop"
    logs = store / "logs" / "2026" / "11" / "21"
    logs.mkdir(parents=True)
    (store / "MEMORY.md").write_text("- [Notes](project_notes.md) — notes of the ops team\n")
    (store / "project_notes.md").write_text(
        "---\nname: Notes\ndescription: notes of the ops team\ntype: project\n---\n\nNotes of the ops team.\n")
    for session, text in SAID.items():
        (logs / f"{session}-shop.md").write_text(f"> {text}\n< Noted.\n")
    ran = cli("run", "--store", str(store), "--engine", "offline", "--json")
    assert ran.json["status"] == "proposed", ran.stdout
    shown = cli("diff", "--store", str(store), "--json").json
    titles = dict((path, title) for title, path in re.findall(r"^\+- \[([^\]]+)\]\(([^)]+)\)", shown["diff"], re.M))
    return {"files": [f for f in shown["files_changed"] if f != "MEMORY.md"], "titles": titles}


def test_file_names_keep_the_script_and_never_repeat_a_word(named) -> None:
    files = named["files"]
    assert len(files) == len(SAID), files
    assert not [f for f in files if re.fullmatch(r"\w+_[0-9a-f]{8}(-\d+)?\.md", f)], files  # no bare hash
    assert any(f.startswith("project_ステージング") for f in files), files
    assert any("カート" in f for f in files) and not any("ｶｰﾄ" in f for f in files), files
    for name in files:
        words = name.removesuffix(".md").split("_")
        assert len(words) == len(set(words)), name
        assert unicodedata.normalize("NFKC", name) == name


def test_titles_end_where_a_phrase_ends(named) -> None:
    titles = named["titles"]
    assert "Payments service needs basic auth" in titles.values(), titles
    for title in titles.values():
        assert not re.search(r"\b(?:the|a|to|with|of|next|from)$", title, re.I), title
        assert not title.endswith("…"), title


@pytest.mark.parametrize("text, title", [
    ("always add a regression test next to the fix in the same pull request", "Always add a regression test"),
    ("the billing export needs basic auth with the shared password from the vault",
     "Billing export needs basic auth"),
    ("restart the ingest worker after every schema migration in production",
     "Restart the ingest worker after every schema migration"),
])
def test_short_titles_end_at_a_phrase_end(text: str, title: str) -> None:
    assert short_title(text) == title


def test_a_title_cut_to_a_length_ends_at_a_phrase_end_too() -> None:
    text = "The billing export needs basic auth with the shared password from the vault"
    assert phrase_title(text, 50) == "The billing export needs basic auth"
    assert phrase_title("Short enough", 50) == "Short enough"


def test_a_slug_says_each_word_once_in_the_memorys_own_script() -> None:
    assert short_slug("the staging site of the staging shop") == "staging_site_shop"
    assert short_slug("Le café ouvre à huit heures") == "le_café_ouvre_à"
    assert short_slug("ビルドは金曜日") == "ビルドは金曜日"
