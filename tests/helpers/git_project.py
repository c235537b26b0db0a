"""A real git project with history, and a memory store that cites it, for the lint tests and eval cases.

Three commits: the first adds files, make targets, package scripts,
dependencies and environment variables; the second renames a file and a
make target; the third deletes a file, removes a dependency, bumps one to a
new major version, renames a script and drops an environment variable.
`STALE` lists what lint must find (by memory and claim) and which commit
changed each; everything else the memories cite still holds.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from dream.store.layout import Layout
from dream.versions.proposals import Proposals

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": "/usr/bin:/bin"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=GIT_ENV).stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "--short", "HEAD")


def package_json(scripts: dict, deps: dict) -> str:
    return json.dumps({"name": "web", "scripts": scripts, "dependencies": deps}, indent=2)


def pyproject(deps: list[str]) -> str:
    return ('[project]\nname = "shop"\nversion = "1.0"\ndependencies = [' + ", ".join(map(json.dumps, deps))
            + ']\n\n[project.scripts]\nshop = "shop.cli:main"\n')


def make_project(root: Path) -> dict[str, str]:
    """The project with its three commits; returns {"added": c1, "renamed": c2, "removed": c3}."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, {
        "src/auth/jwt.py": "def verify_token(token):\n    return token\n",
        "src/auth/service.py": "class AuthService:\n    pass\n",
        "src/app.py": "import os\nDB = os.environ['DATABASE_URL']\nOLD = os.environ['LEGACY_TOKEN']\n",
        "src/legacy/old.py": "def handler():\n    pass\n",
        "shop/cli.py": "COMMANDS = {'serve': 1, 'migrate': 2}\n",
        "shop/__init__.py": "",
        "docs/setup.md": "# Setup\n",
        "Makefile": "test:\n\tpytest\n\nlint:\n\truff check .\n",
        "package.json": package_json({"build": "vite build", "test": "vitest"}, {"react": "^18.2.0", "lodash": "^4.17.21"}),
        "pyproject.toml": pyproject(["requests>=2,<3", "httpx>=0.27"]),
    })
    added = commit(root, "add the app")
    git(root, "mv", "src/auth/jwt.py", "src/auth/tokens.py")
    write(root, {"Makefile": "check:\n\tpytest\n\nlint:\n\truff check .\n"})
    renamed = commit(root, "rename jwt.py to tokens.py and make test to make check")
    git(root, "rm", "-q", "src/legacy/old.py")
    write(root, {
        "package.json": package_json({"bundle": "vite build", "test": "vitest"}, {"react": "^19.0.0", "lodash": "^4.17.21"}),
        "pyproject.toml": pyproject(["httpx>=0.27"]),
        "src/app.py": "import os\nDB = os.environ['DATABASE_URL']\n",
    })
    removed = commit(root, "drop the legacy handlers, requests and LEGACY_TOKEN; react 19; build is bundle")
    return {"added": added, "renamed": renamed, "removed": removed}


MEMORIES = {
    "MEMORY.md": "".join(f"- [{name}]({name}.md) — {name.replace('_', ' ')}\n" for name in (
        "project_auth", "project_build", "project_deps", "project_env", "project_legacy", "project_facts")),
    "project_auth.md": "---\nname: auth\ndescription: where tokens are checked\ntype: project\n---\n"
                       "Tokens are verified in `src/auth/jwt.py` by `verify_token()`.\n",
    "project_build.md": "---\nname: build\ndescription: how to build\ntype: project\n---\n"
                        "Run `make test` before pushing.\nThe frontend builds with `npm run build`.\n",
    "project_deps.md": "---\nname: deps\ndescription: libraries\ntype: project\n---\n"
                       "HTTP calls go through `requests`.\nThe UI is written for `react@18`.\n",
    "project_env.md": "---\nname: env\ndescription: settings\ntype: project\n---\n"
                      "The app reads `DATABASE_URL` and `LEGACY_TOKEN` at start.\n",
    "project_legacy.md": "---\nname: legacy\ndescription: old handlers\ntype: project\n---\n"
                         "Webhook handlers live in src/legacy/old.py for now.\n",
    "project_facts.md": (
        "---\nname: facts\ndescription: what still holds\ntype: project\n---\n"
        "- The app starts in `src/app.py`; tokens are checked in `tokens.py` by `AuthService`.\n"
        "- `make lint` and `npm test` must pass; setup notes are in `docs/` and docs/setup.md.\n"
        "- HTTP goes through `httpx`; `lodash` 4.x is still used; paths join with `os.path.join`.\n"
        "- The CLI has `shop serve` and `shop migrate`.\n"
        "- We dropped `requests` in favour of httpx, and `src/legacy/old.py` was deleted.\n"
        "- The site runs on Next.js; see https://github.com/acme/shop/blob/main/src/gone.py and `input/output`.\n"
        "- `HOME` and `$PATH` come from the shell.\n"
    ),
}

# (memory, claim) -> which commit of make_project changed it
STALE = {
    ("project_auth.md", "src/auth/jwt.py"): "renamed",
    ("project_build.md", "test"): "renamed",
    ("project_build.md", "build"): "removed",
    ("project_deps.md", "requests"): "removed",
    ("project_deps.md", "react"): "removed",
    ("project_env.md", "LEGACY_TOKEN"): "removed",
    ("project_legacy.md", "src/legacy/old.py"): "removed",
}


def make_store(root: Path, project: Path) -> Path:
    """A memory store citing `project`, which its config names."""
    write(root, MEMORIES)
    (root / ".dream").mkdir()
    (root / ".dream" / "config.toml").write_text(f"project = {json.dumps(str(project))}\n")
    return root


def dream_once(cli, store: Path, session: str = "s1", text: str = "> the checkout works again\n") -> tuple[dict, dict, dict]:
    """One offline run with a new session to read: its outcome, and its proposal's report and tree ({} for none)."""
    write(store, {f"logs/2026/12/01/{session}-work.md": text})
    res = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert res.code == 0, (res.stdout, res.stderr)
    if not res.json.get("proposal_id"):
        return res.json, {}, {}
    proposals = Proposals(Layout.open(store))
    proposal = proposals.get(res.json["proposal_id"])
    return res.json, proposals.report(proposal), proposals.tree(proposal)


def configure(store: Path, line: str) -> None:
    """One more line in the store's config."""
    with open(store / ".dream" / "config.toml", "a") as config:
        config.write(line + "\n")
