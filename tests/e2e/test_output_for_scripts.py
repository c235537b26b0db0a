"""Output for scripts and files (#26): hints that run as printed, and no hard wrap when stdout is a file.

Both through the installed `dream` command in a shell of its own, the way
a person who followed the Quick start meets them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DREAM = Path(sys.executable).with_name("dream")

pytestmark = pytest.mark.skipif(not DREAM.is_file(), reason="needs the installed dream console script")


def shell(command: str, cwd: Path, path: str) -> subprocess.CompletedProcess:
    """`command` in /bin/sh with PATH set to `path` (no .venv/bin in it), as a fresh shell runs it."""
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    return subprocess.run(["/bin/sh", "-c", command], cwd=cwd, env={**env, "PATH": path}, capture_output=True,
                          text=True, timeout=120)


def test_the_hint_printed_by_venv_dream_run_runs_as_printed(demo_store: Path) -> None:
    venv = DREAM.parent.parent
    plain_path = "/usr/bin:/bin"
    assert shell("command -v dream || true", venv.parent, plain_path).stdout == "", "dream must not be on PATH"
    relative = os.path.relpath(DREAM, venv.parent)  # `.venv/bin/dream`, as the Quick start types it
    ran = shell(f"{relative} run --store {demo_store} --engine offline", venv.parent, plain_path)
    assert ran.returncode == 0, ran.stderr
    hint = re.search(r"^review: (.*?)   then: (.*)$", ran.stdout, re.M)
    assert hint, ran.stdout
    review, accept = hint.groups()
    assert not review.startswith("dream "), "a bare `dream` is not on this shell's PATH"
    shown = shell(review, venv.parent, plain_path)
    assert shown.returncode == 0 and "# Dream proposal" in shown.stdout, shown.stderr
    accepted = shell(accept, venv.parent, plain_path)
    assert accepted.returncode == 0 and "version 2" in accepted.stdout, accepted.stderr


def test_the_hint_names_dream_when_it_is_on_path(demo_store: Path, tmp_path: Path) -> None:
    path = f"{DREAM.parent}:/usr/bin:/bin"
    ran = shell(f"dream run --store {demo_store} --engine offline", tmp_path, path)
    assert ran.returncode == 0, ran.stderr
    assert f"review: dream diff --store {demo_store}   then: dream accept --store {demo_store}" in ran.stdout


def test_dream_diff_into_a_file_holds_the_index_lines_unbroken(demo_store: Path, tmp_path: Path) -> None:
    path = f"{DREAM.parent}:/usr/bin:/bin"
    assert shell(f"dream run --store {demo_store} --engine offline", tmp_path, path).returncode == 0
    listing = tmp_path / "diff.txt"
    assert shell(f"dream diff --store {demo_store} > {listing}", tmp_path, path).returncode == 0
    written = listing.read_text(encoding="utf-8").splitlines()
    index = [line for line in (demo_store / "MEMORY.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("- [")]
    # The report quotes the dropped and moved index lines word for word, each on one line of the file,
    # and a rewritten one as the file now holds it.
    base = (demo_store / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    proposed = [line[1:] for line in written if line.startswith(("+- [", " - ["))]  # the new index, as diffed
    quoted = [line for line in written if re.match(r"- (?:\w+ )?`MEMORY\.md:\d+`", line)]
    assert len(quoted) >= 3, written[:40]
    for line in quoted:
        number = int(re.search(r"`MEMORY\.md:(\d+)`", line).group(1))
        if line.startswith("- rewritten "):
            assert line.split("the line now reads: ", 1)[1] in proposed, line
        else:
            assert base[number - 1] in line, (base[number - 1], line)
    assert max(len(line) for line in written) > 80, "nothing was wrapped at 80 columns"
