"""`dream lint`: a name is a claim only where it reads as one; a package named in prose is checked (issue 39).

Observed on main: "`asyncio.Lock` is not in the tree", "name `Z`" and "name
`load`" were findings (a standard module's class, a one-letter name, a
method of another library's class), while "padded with the `left-pad`
package" was never checked after `left-pad` left package.json. A small
project of our own: a web shop with a Go service and a Ruby admin, whose
manifests lose a dependency each in the second commit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.git_project import commit, git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FRONT = "---\nname: {name}\ndescription: {name}\ntype: project\n---\n\n"


def _package(deps: dict[str, str]) -> str:
    return json.dumps({"name": "till", "dependencies": deps}, indent=2)


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, Path, str]:
    """(project, store, the commit that removed the dependencies)."""
    project = tmp_path / "till"
    project.mkdir()
    git(project, "init", "-q")
    write(project, {
        "package.json": _package({"left-pad": "^1.3.0", "express": "^4.19.2"}),
        "service/go.mod": "module example.com/till\n\ngo 1.22\n\nrequire (\n\tgithub.com/pkg/errors v0.9.1\n"
                          "\tgithub.com/google/uuid v1.6.0\n)\n",
        "admin/Gemfile": 'source "https://rubygems.org"\ngem "rails", "~> 7.1"\ngem "sidekiq", "~> 7.2"\n',
        "till/cart.py": "import asyncio\n\nclass Cart:\n    lock = asyncio.Lock()\n\n    def total(self):\n"
                        "        return 0\n",
    })
    commit(project, "till, service and admin")
    write(project, {
        "package.json": _package({"express": "^4.19.2"}),
        "service/go.mod": "module example.com/till\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n",
        "admin/Gemfile": 'source "https://rubygems.org"\ngem "rails", "~> 7.1"\n',
    })
    removed = commit(project, "drop left-pad, pkg/errors and sidekiq")

    store = tmp_path / "store"
    memories = {
        "project_locks.md": "We guard the cart with `asyncio.Lock` in the workers.\n",
        "project_numpy.md": "Scores use `np.Z` and the model is read by `Model.load`.\n",
        "project_axes.md": "The `X`, `Y` and `Z` axes; the name `Z` is the zone.\n",
        "project_cart.md": "The total comes from `cart.Cart` (see `till/cart.py`).\n",
        "project_invoices.md": "Invoice numbers are padded with the `left-pad` package.\n",
        "project_errors.md": "The service wraps errors: we use `github.com/pkg/errors` there.\n",
        "project_jobs.md": "Admin mails go out through the `sidekiq` gem; we use `express` for the API.\n",
    }
    write(store, {rel: FRONT.format(name=rel[8:-3]) + text for rel, text in memories.items()})
    write(store, {"MEMORY.md": "".join(f"- [{rel[8:-3]}]({rel}) — {rel[8:-3]}\n" for rel in memories)})
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f"project = {json.dumps(str(project))}\n")
    return project, store, removed


def test_only_claims_that_read_as_claims_are_found_and_packages_in_prose_are_checked(cli, shop) -> None:
    _, store, removed = shop
    res = cli("lint", "--store", str(store), "--json")
    assert res.code == 1, (res.stdout, res.stderr)
    found = {f["memory"]: f for f in res.json["findings"]}

    assert set(found) == {"project_invoices.md", "project_errors.md", "project_jobs.md"}, found
    assert {f["claim"] for f in found.values()} == {"left-pad", "github.com/pkg/errors", "sidekiq"}
    assert all(f["commit"] == removed for f in found.values())
    assert "package.json" in found["project_invoices.md"]["evidence"]
    assert "service/go.mod" in found["project_errors.md"]["evidence"]
    assert "admin/Gemfile" in found["project_jobs.md"]["evidence"]
    assert "project_cart.md" in res.json["verified"]  # `cart.Cart` and till/cart.py: the project's own, and true

    text = cli("lint", "--store", str(store)).stdout
    for false_one in ("asyncio.Lock", "name `Z`", "name `load`", "`Lock`"):
        assert false_one not in text, text
