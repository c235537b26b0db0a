"""A project's dependencies and their major versions, from its manifest and lock files.

Manifests say what the project depends on (pyproject.toml, requirements
files, package.json, Cargo.toml, go.mod, Gemfile); locks say which version it got
(package-lock.json, uv.lock, poetry.lock, Cargo.lock). A major version is
only taken where the text pins it (``^18.2``, ``==2.7``, ``>=2,<3``, a lock's
``19.1.0``); an open range says nothing about which major is in use.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Callable

MANIFESTS = ("pyproject.toml", "package.json", "Cargo.toml", "go.mod", "Gemfile")
LOCKS = ("package-lock.json", "uv.lock", "poetry.lock", "Cargo.lock")
MAX_DEPTH = 3  # manifests this deep or shallower: a monorepo's packages, not vendored trees
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")


@dataclass(frozen=True)
class Dependency:
    name: str  # normalized: lower case, runs of '-', '_', '.' as one '-'
    major: int | None
    file: str  # the manifest or lock that says so


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def is_manifest(rel: str) -> bool:
    base = posixpath.basename(rel)
    return (base in MANIFESTS or (base.startswith("requirements") and base.endswith(".txt"))) \
        and _shallow(rel)


def is_lock(rel: str) -> bool:
    return posixpath.basename(rel) in LOCKS and _shallow(rel)


def _shallow(rel: str) -> bool:
    return rel.count("/") < MAX_DEPTH and "node_modules/" not in rel


def major_of(spec: Any) -> int | None:
    """18 from '^18.2.0', '~18', '18.x', '==18.1', '>=18,<19'; None from '>=18' or '*'."""
    if isinstance(spec, dict):
        spec = spec.get("version")
    if not isinstance(spec, str):
        return None
    spec = spec.strip().strip("'\"")
    bounded = re.fullmatch(r">=\s*v?(\d+)(?:\.[\d*]+)*\s*,\s*<\s*v?(\d+)(?:\.0)*", spec)
    if bounded:
        low, high = int(bounded.group(1)), int(bounded.group(2))
        return low if high == low + 1 else None
    exact = re.fullmatch(r"(?:==|~=|~>|\^|~|=)?\s*v?(\d+)(?:\.[\dx*]+)*(?:[-+][\w.]+)?", spec)
    return int(exact.group(1)) if exact else None


def parse_manifest(rel: str, text: str) -> list[Dependency]:
    """The dependencies one manifest or lock names; [] when it cannot be read."""
    base = posixpath.basename(rel)
    parser = PARSERS.get(base) or (_requirements if base.startswith("requirements") else None)
    if parser is None:
        return []
    try:
        pairs = parser(text)
    except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        return []  # a damaged manifest says nothing; lint never guesses from it
    return [Dependency(normalize(name), major_of(spec), rel) for name, spec in pairs if isinstance(name, str)]


Pairs = list[tuple[str, Any]]


def _pep508(lines: Any) -> Pairs:
    pairs: Pairs = []
    for line in lines if isinstance(lines, list) else []:
        m = REQUIREMENT.match(line.split(";")[0]) if isinstance(line, str) else None
        if m:
            pairs.append((m.group(1), m.group(2).strip() or None))
    return pairs


def _requirements(text: str) -> Pairs:
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    return _pep508([line for line in lines if line and not line.startswith("-")])


def _pyproject(text: str) -> Pairs:
    data = tomllib.loads(text)
    project = data.get("project") or {}
    pairs = _pep508(project.get("dependencies"))
    for group in (project.get("optional-dependencies") or {}).values():
        pairs += _pep508(group)
    for group in (data.get("dependency-groups") or {}).values():
        pairs += _pep508(group)
    poetry = (data.get("tool") or {}).get("poetry") or {}
    tables = [poetry.get("dependencies") or {}, poetry.get("dev-dependencies") or {}]
    tables += [(g or {}).get("dependencies") or {} for g in (poetry.get("group") or {}).values()]
    pairs += [(name, spec) for table in tables for name, spec in table.items() if name != "python"]
    return pairs


def _package_json(text: str) -> Pairs:
    data = json.loads(text)
    keys = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
    return [(name, spec) for key in keys for name, spec in (data.get(key) or {}).items()]


def _cargo(text: str) -> Pairs:
    data = tomllib.loads(text)
    keys = ("dependencies", "dev-dependencies", "build-dependencies")
    return [(name, spec) for key in keys for name, spec in (data.get(key) or {}).items()]


GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.~-]+(?:/[\w.~-]+)+)\s+(v[\w.+-]+)", re.MULTILINE)
GEM = re.compile(r"""^\s*gem\s+["']([\w.-]+)["'](?:\s*,\s*["']([^"']+)["'])?""", re.MULTILINE)


def _go_mod(text: str) -> Pairs:
    """`require example.com/mod v1.2.3`, alone or in a `require ( … )` block; `module` and `go` lines are not."""
    return [(name, version) for name, version in GO_REQUIRE.findall(text)]


def _gemfile(text: str) -> Pairs:
    """`gem "rails", "~> 7.1"`: the name and its first version requirement, if any."""
    return [(name, version or None) for name, version in GEM.findall(text)]


def _package_lock(text: str) -> Pairs:
    data = json.loads(text)
    packages = data.get("packages") or {}
    pairs = [(key[len("node_modules/"):], entry.get("version")) for key, entry in packages.items()
             if key.startswith("node_modules/") and "/node_modules/" not in key and isinstance(entry, dict)]
    return pairs or [(name, entry.get("version")) for name, entry in (data.get("dependencies") or {}).items()]


def _toml_lock(text: str) -> Pairs:
    """uv.lock, poetry.lock, Cargo.lock: [[package]] name and version; a name locked twice says no one major."""
    found: dict[str, set] = {}
    for package in tomllib.loads(text).get("package") or []:
        found.setdefault(package.get("name"), set()).add(major_of(package.get("version")))
    return [(name, f"{next(iter(majors))}" if len(majors) == 1 and None not in majors else None)
            for name, majors in found.items()]


PARSERS: dict[str, Callable[[str], Pairs]] = {
    "pyproject.toml": _pyproject, "package.json": _package_json, "Cargo.toml": _cargo, "go.mod": _go_mod,
    "Gemfile": _gemfile,
    "package-lock.json": _package_lock, "uv.lock": _toml_lock, "poetry.lock": _toml_lock, "Cargo.lock": _toml_lock,
}


def scripts_of(rel: str, text: str) -> dict[str, set[str]]:
    """What a manifest lets people run: {"script": package.json scripts, "command": the project's own CLIs}."""
    found: dict[str, set[str]] = {"script": set(), "command": set()}
    try:
        if rel.endswith("package.json"):
            data = json.loads(text)
            found["script"] = set(data.get("scripts") or {})
            bin_ = data.get("bin")
            found["command"] = set(bin_) if isinstance(bin_, dict) else ({data.get("name")} if bin_ else set())
        elif rel.endswith("pyproject.toml"):
            data = tomllib.loads(text)
            found["command"] = set((data.get("project") or {}).get("scripts") or {})
            found["command"] |= set(((data.get("tool") or {}).get("poetry") or {}).get("scripts") or {})
    except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
        pass
    found["command"] = {c for c in found["command"] if isinstance(c, str)}
    return found
