"""The README stays one screen or two with its Quick start intact, and the generated docs match the code.

.ci/run runs the README's first two ```sh blocks under "## Quick start" in a fresh clone and builds the
site with `mkdocs build --strict`; these are the checks that need neither.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dream.config import SETTING_NAMES

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MAX_README_LINES = 150

# Word for word: a user copies them, and .ci/run runs them in a fresh clone.
DEMO_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && rm -rf /tmp/dream-demo && "
    "cp -r data/demo /tmp/dream-demo && .venv/bin/dream run --store /tmp/dream-demo --engine offline && "
    ".venv/bin/dream diff --store /tmp/dream-demo"
)
TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -n 2 -q"
)


def quick_start_commands(text: str) -> list[str]:
    """The ```sh blocks under "## Quick start", as .ci/run's awk reads them (up to the next section)."""
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"^```sh\n(.*?)^```$", section, re.S | re.M)]


def config_reference(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "config_reference.py"), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def test_the_readme_is_at_most_150_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_quick_start_opens_with_the_demo_then_the_tests_word_for_word() -> None:
    first, second, *_ = quick_start_commands(README.read_text(encoding="utf-8"))
    assert (first, second) == (DEMO_COMMAND, TEST_COMMAND)


def test_the_readme_links_only_to_docs_pages_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#]*)", README.read_text(encoding="utf-8"))
    assert len(links) >= 10, links
    assert [link for link in links if not (REPO / link).exists()] == []


def test_the_configuration_page_is_what_the_settings_generate() -> None:
    done = config_reference("--check")
    assert done.returncode == 0, done.stderr


def test_the_configuration_page_names_every_setting() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(\w+)` \|", page, re.M))
    assert rows == set(SETTING_NAMES)


def test_a_stale_configuration_page_is_named_with_the_command_that_fixes_it(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    stale.write_text(page.replace("| `min_hours` |", "| `min_hour` |"), encoding="utf-8")
    done = config_reference("--check", str(stale))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"{stale} is not what dream/config.py says: run `python scripts/config_reference.py`\n"
