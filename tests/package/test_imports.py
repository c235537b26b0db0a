"""The import graph of `dream/`: every module imports, nothing imports Prefect, no cycle between
modules nor between packages, and imports inside functions only where they save start-up time."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

def package_dirs() -> dict[str, Path]:
    """Each top-level source folder of the package: dream/ itself and pyproject's package-dir mappings."""
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {"dream": REPO / "dream", **{name: REPO / folder for name, folder in tool.get("package-dir", {}).items()}}


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found = {}
    for prefix, folder in package_dirs().items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((prefix, *parts))] = path
    return found


class Imports(ast.NodeVisitor):
    """The imports of one module: (imported name, its lines, inside a function), outside `if TYPE_CHECKING:`."""

    def __init__(self, module: str, is_package: bool):
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[tuple[str, range, bool]] = []
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node):
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            for child in node.orelse:  # never run, so never part of a cycle
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            self.found.append((alias.name, _lines(node), self.depth > 0))

    def visit_ImportFrom(self, node):
        base = node.module or ""
        if node.level:
            anchor = self.package.split(".")[: len(self.package.split(".")) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:  # `from dream import history` imports the module dream.history
            self.found.append((f"{base}.{alias.name}", _lines(node), self.depth > 0))


def _lines(node: ast.stmt) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def imports_of(module: str, path: Path) -> list[tuple[str, range, bool]]:
    visitor = Imports(module, path.name == "__init__.py")
    visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return visitor.found


def resolve(name: str, known: set[str]) -> str | None:
    """The package module `name` loads: itself, or the module that defines the name it imports."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {module of the package it imports: line of the first such import}."""
    known = set(modules())
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules().items():
        edges = graph.setdefault(module, {})
        for name, lines, _ in imports_of(module, path):
            target = resolve(name, known)
            if target is not None and target != module:
                edges.setdefault(target, lines.start)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan), as a path back to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_path_through(graph, set(group)) for group in groups]


def _path_through(graph: dict[str, dict[str, int]], group: set[str]) -> list[str]:
    """A shortest cycle from the group's first member back to it (breadth-first, inside the group)."""
    start = min(group)
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    for node in frontier:  # grows as it is walked
        for nxt in graph[node]:
            if nxt == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if nxt in group and nxt not in parent:
                parent[nxt] = node
                frontier.append(nxt)
    raise AssertionError(f"no cycle through {sorted(group)}")


def package_of(module: str, packages: set[str], depth: int) -> str:
    """The package `depth` names deep that holds `module` (dream.store for dream.store.tree at depth 2),
    or the module itself when it sits higher (dream.errors, or dream.engines.base at depth 3)."""
    parts = module.split(".")
    holder = ".".join(parts[:depth])
    inside = len(parts) > depth or module in packages
    return holder if inside and holder in packages else module


def package_names() -> set[str]:
    return {m for m, path in modules().items() if path.name == "__init__.py"}


def package_graph(graph: dict[str, dict[str, int]], depth: int, packages: set[str]) -> dict[str, dict[str, int]]:
    """The module graph with every package `depth` deep drawn as one node (imports inside it dropped)."""
    folded: dict[str, dict[str, int]] = {}
    for module, edges in graph.items():
        node = folded.setdefault(package_of(module, packages, depth), {})
        for target, line in edges.items():
            target_node = package_of(target, packages, depth)
            if target_node != package_of(module, packages, depth):
                node.setdefault(target_node, line)
    return folded


def describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in pairwise(cycle)) + f" -> {cycle[-1]}"


# ---------------------------------------------------------------- the tests


IMPORT_ALL = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"failed": failed, "prefect": sorted(m for m in sys.modules if m.split(".")[0] == "prefect")}))
"""


def test_every_module_imports_in_a_fresh_interpreter_without_prefect():
    names = sorted(m for m in modules() if m != "dream.__main__")  # importing __main__ would start the CLI
    proc = subprocess.run([sys.executable, "-c", IMPORT_ALL, *names], capture_output=True, text=True,
                          cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["failed"] == {}
    assert result["prefect"] == [], "dream/ must not import Prefect (only flows/ does)"


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert graph["dream.pipeline.run"], "the graph found no import at all: the walk is broken"
    found = [describe(cycle, graph) for cycle in cycles(graph)]
    assert found == [], "import cycles:\n" + "\n".join(found)


def test_no_two_packages_import_each_other_in_a_circle():
    """pipeline -> review -> pipeline is a cycle even when no single module closes it. No allowlist."""
    graph, packages = import_graph(), package_names()
    depths = range(2, max(len(m.split(".")) for m in graph) + 1)
    found = [describe(cycle, folded) for depth in depths
             for folded in [package_graph(graph, depth, packages)] for cycle in cycles(folded)]
    assert found == [], "package import cycles:\n" + "\n".join(found)


def test_the_package_fold_sees_a_cycle_no_module_closes():
    graph = {"dream.a.x": {"dream.b.y": 1}, "dream.b.y": {}, "dream.b.z": {"dream.a.w": 2}, "dream.a.w": {}}
    assert cycles(graph) == []
    packages = {"dream.a", "dream.b"}
    folded = package_graph(graph, 2, packages)
    assert cycles(folded) == [["dream.a", "dream.b", "dream.a"]]
    assert package_of("dream.errors", packages, 2) == "dream.errors"


def test_no_package_imports_a_private_name_of_another():
    """A leading underscore means "only this package relies on it"; another package needs a public name."""
    known, packages = set(modules()), package_names()
    private = []
    for module, path in modules().items():
        for name, lines, _ in imports_of(module, path):
            target, last = resolve(name, known), name.rpartition(".")[2]
            if target is None or not last.startswith("_") or last.startswith("__"):
                continue
            if package_of(target, packages, 2) != package_of(module, packages, 2):
                private.append(f"{path.relative_to(REPO)}:{lines.start}: {name}")
    assert private == [], "\n".join(private)


def test_every_library_dream_imports_is_declared_in_pyproject():
    """A library that arrives only as another's dependency can vanish with that dependency's next release."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {_distribution_name(spec) for spec in project["dependencies"]}
    optional = {_distribution_name(spec) for specs in project["optional-dependencies"].values() for spec in specs}
    providers = packages_distributions()
    undeclared = []
    for module, path in modules().items():
        for name, lines, _ in imports_of(module, path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in {"dream", "flows", "__future__"}:
                continue
            dists = {_distribution_name(d) for d in providers.get(top, [top])}
            if not dists & (declared | optional):
                undeclared.append(f"{path.relative_to(REPO)}:{lines.start}: {top} (from {sorted(dists)})")
    assert undeclared == [], "imported but not declared in pyproject.toml:\n" + "\n".join(undeclared)


def _distribution_name(spec: str) -> str:
    return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert describe(["a", "b", "c", "a"], graph) == "a (line 1) -> b (line 2) -> c (line 3) -> a"


def test_imports_inside_functions_say_which_start_up_cost_they_save():
    unexplained = []
    for module, path in modules().items():
        rel = path.relative_to(REPO).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, span, in_function in imports_of(module, path):
            comments = " ".join(lines[n - 1].partition("#")[2] for n in span)  # a wrapped import may hold it lower
            if in_function and "start-up" not in comments:
                unexplained.append(f"{rel}:{span.start}: import of {name} inside a function, with no "
                                   f"'# start-up: …' comment saying what it saves")
    assert unexplained == [], "\n".join(unexplained)


STORE_FILE_NAMES = {"MEMORY.md", "AGENTS.md", "CLAUDE.md", "SKILL.md"}  # files of the stores dream reads, not documents


def test_the_repository_cites_only_documents_it_holds():
    """A docstring or setting that points to a document the repository lacks sends its reader nowhere."""
    missing = []
    for path in [REPO / "pyproject.toml", *REPO.glob("dream/**/*.py"), *REPO.glob("tests/helpers/*.py")]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for cited in re.findall(r"\b([A-Z][A-Z_]+\.md)\b", line):
                if cited in STORE_FILE_NAMES:
                    continue
                if not any((folder / cited).exists() for folder in (REPO, REPO / "docs")):
                    missing.append(f"{path.relative_to(REPO)}:{number}: {cited}")
    assert missing == [], "cited but not in the repository:\n" + "\n".join(missing)


# A command line quoted for a person: in backticks, after a shell prompt, or as an indented usage line
# (its subcommand followed by an option, an argument in capitals or brackets, or nothing: not prose).
QUOTED_DREAM = re.compile(r"(?:`|\$ )dream ([a-z][a-z-]*)|^\s{4,}dream ([a-z][a-z-]*)(?=$|\s+[-\[<A-Z])")
PYTHON_M = re.compile(r"`python3? -m ([\w.]+)|^\s{4,}python3? -m ([\w.]+)")


def test_every_quoted_command_line_names_a_command_or_module_that_exists():
    """A usage line naming a module or subcommand that is gone (review/page.py's `python -m dream.review_page`)
    sends its reader to an error."""
    import importlib.util

    import typer.main

    from dream.cli import app

    commands = set(typer.main.get_command(app).commands)
    sources = [*REPO.glob("dream/**/*.py"), *REPO.glob("dream/**/*.j2"), REPO / "README.md", *REPO.glob("docs/*.md")]
    stale = []
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(REPO)}:{number}"
            stale += [f"{where}: dream {m[1] or m[2]}" for m in QUOTED_DREAM.finditer(line)
                      if (m[1] or m[2]) not in commands]
            for m in PYTHON_M.finditer(line):
                module = m[1] or m[2]
                if module.split(".")[0] in {"dream", "flows"} and importlib.util.find_spec(module) is None:
                    stale.append(f"{where}: python -m {module}")
    assert commands >= {"run", "accept", "diff"}, "the command list is empty: the lookup is broken"
    assert stale == [], "command lines that name nothing:\n" + "\n".join(stale)
