"""Each claim checked against the project's files, with the evidence when one fails.

Precision first: a claim fails only when the project plainly refutes it. A
path is looked for as written and as the tail of any path (a memory often
writes `auth/jwt.py` for `src/auth/jwt.py`); a make target only where the
Makefile has no pattern rules or includes that could make it; a module only
when its first part is one of the project's own folders; a dependency only
when a manifest names it, or named it before. Names are looked for in every
file with one `grep -F -w` over the listed files. Where git can say,
the evidence names the commit that changed the claim's subject: each kind
of subject (paths, names, make targets) is looked for in one `git log`
read newest first and only as far as needed, root commits left out (they
remove nothing).

Everything runs against a deadline; claims left when it passes are counted
as not checked, never as findings.

A project opened at a past commit (`Project.rev`, dream.lint.project.open_at)
is read from git's objects instead of the work tree: its files from
`git ls-tree`, manifests and Makefiles from `git show`, names from
`git grep`, history from that commit back. `holds` asks only whether every
claim of a memory held there (dream.lint.verified).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dream.lint import claims as c
from dream.lint.deps import LOCKS, MANIFESTS, Dependency, is_lock, is_manifest, normalize, parse_manifest, scripts_of
from dream.lint.project import Project, git

MAX_READ_BYTES = 4 * 1024 * 1024  # one manifest, lock or Makefile
GREP_BATCH = 4000  # files named on one grep command line (well under any system's argument limit)
MAX_HISTORY = 30  # versions of each manifest read to find when a dependency left or changed
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
NO_ROOT = ["-c", "log.showRoot=false"]  # a root commit adds and removes nothing that lint looks for
MAKE_TARGET = re.compile(r"^([\w./%-]+(?:[ \t]+[\w./%-]+)*)[ \t]*::?(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class Finding:
    memory: str
    line: int
    kind: str
    claim: str
    evidence: str  # one sentence a person can check
    commit: str = ""  # the commit that changed what the claim names, where git can say
    major: int | None = None  # a dependency's claimed major version, when the claim named one

    def sentence(self) -> str:
        return f"{self.memory}:{self.line}: {self.evidence}"


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    held: list[c.Claim] = field(default_factory=list)
    unchecked: list[c.Claim] = field(default_factory=list)


class Checker:
    """Checks claims against one project, reading it only."""

    def __init__(self, project: Project, deadline: float):
        self.project = project
        self.deadline = deadline
        self.at = f" at {project.head}" if project.head else ""
        self.files = set(project.files)
        self.by_name: dict[str, list[str]] = {}  # file name -> the paths ending in it
        for f in project.files:
            self.by_name.setdefault(f.rpartition("/")[2], []).append(f)
        folders = {d for f in {f.rpartition("/")[0] for f in project.files} if f for d in (*_parents(f), f)}
        self.folders = {s for d in folders for s in _tails(d)}
        self.folder_names = {d.rsplit("/", 1)[-1] for d in folders}
        self.module_stems = {name.split(".", 1)[0] for name in self.by_name}  # `cart` of cart.py, cart.ts, …
        self.makefiles = [f for name in MAKEFILES for f in self.by_name.get(name, [])] + \
            [f for f in project.files if f.endswith(".mk")]
        self.manifests = [f for name in MANIFESTS for f in self.by_name.get(name, []) if is_manifest(f)] + \
            [f for name, found in self.by_name.items() if name.startswith("requirements") for f in found
             if is_manifest(f)]
        self.targets, self.make_open = self._make_targets()
        self.deps, self.runnable = self._manifests()
        self._history: dict[str, list[tuple[str, dict[str, Dependency]]]] = {}
        self._removed_in: dict[str, str] = {}
        self._paths_left = LogScan(self, ["-M", "--name-status", "--diff-filter=DR"])
        self._makefile_changes = LogScan(self, ["-p", "-U0", "--", *self.makefiles]) if self.makefiles else None

    def has_path(self, path: str) -> bool:
        """`path` is a file of the project as written or as the tail of one (`auth/jwt.py`)."""
        return path in self.files or any(f.endswith("/" + path) for f in self.by_name.get(path.rpartition("/")[2], ()))

    def _about_this_project(self, claim: c.Claim) -> bool:
        """A name after a module (`asyncio.Lock`, `np.Z`) speaks of this project only if the module is its own."""
        if claim.kind != c.SYMBOL or not claim.tool:
            return True
        return claim.tool in self.folder_names or claim.tool in self.module_stems

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self, claims: list[c.Claim]) -> Outcome:
        outcome = Outcome()
        claims = [claim for claim in claims if self._about_this_project(claim)]
        names = {cl.name for cl in claims if cl.kind in (c.ENV, c.SYMBOL, c.COMMAND)}
        present = self.names_present(names)
        self._removed_in = self._removals(names - present) if present is not None and self.project.git else {}
        for claim in claims:
            if self.remaining() <= 0:
                outcome.unchecked.append(claim)
                continue
            evidence = self._evidence(claim, present)
            if evidence is None:
                outcome.held.append(claim)
            elif isinstance(evidence, str):  # UNCHECKED
                outcome.unchecked.append(claim)
            else:
                sentence, commit = evidence
                outcome.findings.append(Finding(claim.memory, claim.line, claim.kind, claim.name, sentence, commit,
                                                claim.major))
        self._close()
        return outcome

    def holds(self, by_memory: dict[str, list[c.Claim]]) -> dict[str, bool | None]:
        """Per memory: every claim held (True), one did not (False), or time ran out first (None).

        No evidence is asked for beyond what deciding needs; one search for the names of all.
        """
        by_memory = {memory: [cl for cl in claims if self._about_this_project(cl)]
                     for memory, claims in by_memory.items()}
        names = {cl.name for claims in by_memory.values() for cl in claims if cl.kind in (c.ENV, c.SYMBOL, c.COMMAND)}
        present = self.names_present(names)
        answers: dict[str, bool | None] = {}
        for memory, claims in sorted(by_memory.items()):
            answers[memory] = True
            for claim in claims:
                evidence = UNCHECKED if self.remaining() <= 0 else self._evidence(claim, present)
                if evidence is not None:
                    answers[memory] = None if evidence == UNCHECKED else False
                    break
        self._close()
        return answers

    def _close(self) -> None:
        for scan in (self._paths_left, self._makefile_changes):
            if scan is not None:
                scan.close()  # its git log, if still reading, is stopped

    # ---------------------------------------------------------------- one claim

    def _evidence(self, claim: c.Claim, present: set[str] | None) -> Evidence:
        """None: the claim holds, or is not plainly about this project. UNCHECKED: could not tell in time."""
        kind = claim.kind
        if kind == c.PATH:
            return None if self.has_path(claim.name) else self._path_gone(claim.name)
        if kind == c.FOLDER:
            return self._folder(claim.name)
        if kind == c.MAKE:
            return self._make(claim.name)
        if kind == c.SCRIPT:
            return self._script(claim)
        if kind == c.MODULE:
            return self._module(claim.name)
        if kind == c.DEPENDENCY:
            return self._dependency(claim)
        if kind == c.COMMAND and claim.tool not in self.runnable["command"]:
            return None  # not the project's own command: nothing here says what it accepts
        if present is None:
            return UNCHECKED
        return None if claim.name in present else self._name_gone(claim)

    def _path_gone(self, path: str) -> tuple[str, str] | str:
        said = f"`{path}` is not in the tree{self.at}"
        if not self.project.git:
            return UNCHECKED if self.project.truncated else (said, "")
        left = self._paths_left.first(lambda line: _left_path(line, path))
        if left is None:
            return said + "; git has no record of it", ""
        commit, line = left
        parts = line.split("\t")
        if parts[0].startswith("R"):
            return f"{said}; it was renamed to `{parts[2]}` in {commit}", commit
        return f"{said}; it was deleted in {commit}", commit

    def _folder(self, folder: str) -> tuple[str, str] | None:
        if folder in self.folders or self.has_path(folder):
            return None
        if folder.split("/", 1)[0] not in self.folder_names and not self._was_tracked(folder):
            return None  # `input/output`, `and/or`: a folder claim only where the project has or had it
        said = f"folder `{folder}` is not in the tree{self.at}"
        commit = self._last_commit(["--", folder, f":(glob)**/{folder}/**"])
        return (f"{said}; its last files left in {commit}" if commit else said), commit

    def _was_tracked(self, folder: str) -> bool:
        return bool(self.project.git and self._last_commit(["--", folder, f":(glob)**/{folder}/**"]))

    def _make(self, target: str) -> tuple[str, str] | None:
        if target in self.targets:
            return None
        if self.make_open:
            return None  # a pattern rule or an include may define it
        if not self.makefiles:
            commit = self._last_commit(["--diff-filter=D", "--", *MAKEFILES])
            if not commit:
                return None  # never had a Makefile: the memory may mean one that is generated
            return f"`make {target}`: there is no Makefile in the tree{self.at}; it was deleted in {commit}", commit
        where = ", ".join(self.makefiles[:3])
        rule = re.compile(rf"^[-+]{re.escape(target)}[ \t]*:")
        changed = self._makefile_changes.first(rule.match) if self._makefile_changes else None
        commit = changed[0] if changed else ""
        said = f"`make {target}`: no target `{target}` in {where}{self.at}"
        return (f"{said}; it was changed in {commit}" if commit else said), commit

    def _script(self, claim: c.Claim) -> tuple[str, str] | None:
        if claim.name in self.runnable["script"]:
            return None
        manifests = [f for f in self.manifests if f.endswith("package.json")]
        if not manifests:
            return None
        run = "test" if claim.name == "test" and claim.tool != "npm run" else f"run {claim.name}"
        commit = self._last_commit(["-G", rf'"{re.escape(claim.name)}"[ \t]*:', "--", *manifests])
        said = f"`{claim.tool} {run}`: no script `{claim.name}` in {', '.join(manifests[:3])}{self.at}"
        return (f"{said}; it was changed in {commit}" if commit else said), commit

    def _module(self, module: str) -> tuple[str, str] | None:
        parts = module.split(".")
        if parts[0] not in self.folder_names:
            return None  # `os.path`, `self.config`: not a module of this project
        path = "/".join(parts)
        if path in self.folders or self.has_path(f"{path}.py") or self.has_path(f"{path}/__init__.py"):
            return None
        if len(parts) > 1 and self.has_path("/".join(parts[:-1]) + ".py"):
            return None  # `pkg.mod.name`: a name inside pkg/mod.py
        gone = self._path_gone(f"{path}.py")
        if isinstance(gone, str):
            return None
        return f"module `{module}`: " + gone[0].replace(f"`{path}.py`", f"`{path}.py` (or `{path}/`)", 1), gone[1]

    def _dependency(self, claim: c.Claim) -> tuple[str, str] | None:
        name = normalize(claim.name)
        now = self.deps.get(name)
        if now is None:
            return self._dependency_gone(claim, name)
        if claim.major is None or now.major is None or now.major == claim.major:
            return None
        commit = self._major_changed(name, claim.major, now.file)
        said = (f"`{claim.name}` {claim.major}: {now.file} has major version {now.major}{self.at}")
        return (f"{said}; it changed in {commit}" if commit else said), commit

    def _dependency_gone(self, claim: c.Claim, name: str) -> tuple[str, str] | None:
        if not self.project.git:
            return None
        for file in self.manifests:
            versions = self._versions(file)
            for newer, older in zip(versions, versions[1:]):
                if name in older[1] and name not in newer[1]:
                    said = f"`{claim.name}` is not a dependency in {file}{self.at}; it was removed in {newer[0]}"
                    return said, newer[0]
        return None  # never a dependency as far as the manifests tell: the word may mean something else

    def _major_changed(self, name: str, major: int, file: str) -> str:
        versions = self._versions(file) if self.project.git else []
        for newer, older in zip(versions, versions[1:]):
            if name in older[1] and older[1][name].major == major and newer[1].get(name, older[1][name]).major != major:
                return newer[0]
        return self._last_commit(["--", file]) if self.project.git else ""

    def _name_gone(self, claim: c.Claim) -> tuple[str, str]:
        label = {c.ENV: "environment variable", c.COMMAND: f"`{claim.tool}` command", c.SYMBOL: "name"}[claim.kind]
        said = f"{label} `{claim.name}` appears nowhere in the project{self.at}"
        commit = self._removed_in.get(claim.name, "")
        return (f"{said}; it was removed in {commit}" if commit else said), commit

    def _removals(self, names: set[str]) -> dict[str, str]:
        """The newest commit whose diff removed a line naming each of `names`: one `git log -p` for all.

        Read newest first and stopped once every name has its commit, or at
        the deadline (a name then has no commit in its evidence).
        """
        if not names:
            return {}
        word = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")(?!\w)")
        pattern = "|".join(re.escape(n) for n in sorted(names))  # git's -G regex: plain alternation
        cmd = [*NO_ROOT, "log", *self.project.revs, "-p", "-U0", "--no-color", "--no-merges", "--format=%x00%h", "-G", pattern]
        found: dict[str, str] = {}
        commit = ""
        for line in self._stream(cmd):
            if line.startswith("\0"):
                commit = line[1:].strip()
            elif line.startswith("-") and not line.startswith("---"):
                for name in word.findall(line):
                    found.setdefault(name, commit)
                if len(found) == len(names):
                    break
        return found

    def _stream(self, args: list[str], git: bool = True) -> Generator[str, None, None]:
        """A command's output (git's by default) line by line, killed at the deadline or when the reader stops."""
        cmd = ["git", "-C", str(self.project.root), *args] if git else args
        proc = subprocess.Popen(cmd, cwd=self.project.root, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                                encoding="utf-8", errors="replace")
        timer = threading.Timer(max(self.remaining(), 0.1), proc.kill)
        timer.start()
        try:
            assert proc.stdout is not None
            yield from proc.stdout
        finally:
            timer.cancel()
            proc.kill()
            proc.wait()

    # ---------------------------------------------------------------- the project's files

    def names_present(self, names: set[str]) -> set[str] | None:
        """Which `names` occur as whole words in the project's files; None if the search ran out of time.

        One `grep -F -w` (many fixed words at once, Aho-Corasick in GNU grep;
        `git grep` tries each word in turn, several times slower) over the
        listed files in batches, stopped as soon as every name has been seen.
        """
        if not names or self.project.truncated:
            return set() if not names else None
        if self.project.rev:
            return self._names_at_rev(names)
        grep = shutil.which("grep")
        if grep is None:
            return None
        found: set[str] = set()
        with tempfile.NamedTemporaryFile("w", suffix=".words", encoding="utf-8") as words:
            words.write("\n".join(sorted(names)) + "\n")
            words.flush()
            for start in range(0, len(self.project.files), GREP_BATCH):
                batch = self.project.files[start:start + GREP_BATCH]
                cmd = [grep, "-F", "-w", "-o", "-h", "-I", "-s", "-f", words.name, "--", *batch]
                for line in self._stream(cmd, git=False):
                    found.add(line.rstrip("\n"))
                    if names <= found:
                        return names
                if self.remaining() <= 0:
                    return None
        return found & names

    def _names_at_rev(self, names: set[str]) -> set[str] | None:
        """`names_present` in the tree of a past commit: one `git grep` over git's objects."""
        found: set[str] = set()
        with tempfile.NamedTemporaryFile("w", suffix=".words", encoding="utf-8") as words:
            words.write("\n".join(sorted(names)) + "\n")
            words.flush()
            for line in self._stream(["grep", "-F", "-w", "-o", "-h", "-I", "-f", words.name, self.project.rev, "--"]):
                found.add(line.rstrip("\n"))
                if names <= found:
                    return names
        return found & names if self.remaining() > 0 else None

    def _make_targets(self) -> tuple[set[str], bool]:
        targets: set[str] = set()
        open_ = False
        for rel in self.makefiles:
            text = self._text(rel)
            for m in MAKE_TARGET.finditer(text):
                targets.update(m.group(1).split())
            open_ = open_ or "%" in "".join(targets) or bool(re.search(r"^-?include\s", text, re.MULTILINE))
        return {t for t in targets if "%" not in t}, open_

    def _manifests(self) -> tuple[dict[str, Dependency], dict[str, set[str]]]:
        deps: dict[str, Dependency] = {}
        runnable: dict[str, set[str]] = {"script": set(), "command": set()}
        for rel in self.manifests:
            text = self._text(rel)
            for dep in parse_manifest(rel, text):
                deps.setdefault(dep.name, dep)
            for key, found in scripts_of(rel, text).items():
                runnable[key] |= found
        for rel in (f for name in LOCKS for f in self.by_name.get(name, []) if is_lock(f)):  # a locked version beats a manifest's range
            for dep in parse_manifest(rel, self._text(rel)):
                if dep.name in deps and dep.major is not None:
                    deps[dep.name] = dep
        return deps, runnable

    def _versions(self, file: str) -> list[tuple[str, dict[str, Dependency]]]:
        """(commit, dependencies) for the newest versions of one manifest, newest first."""
        if file not in self._history:
            out = git(self.project.root, ["log", *self.project.revs, f"-{MAX_HISTORY}", "--format=%h", "--", file], self._step()) or ""
            versions = []
            for commit in out.split():
                text = git(self.project.root, ["show", f"{commit}:{file}"], self._step())
                deps = {d.name: d for d in parse_manifest(file, text or "")}
                versions.append((commit, deps))
            self._history[file] = versions
        return self._history[file]

    def _last_commit(self, args: list[str]) -> str:
        out = git(self.project.root, ["log", *self.project.revs, "-1", "--format=%h", *args], self._step()) or ""
        return out.strip().split("\n")[0] if out.strip() else ""

    def _text(self, rel: str) -> str:
        """One file of the project (at its commit, when it has one), at most MAX_READ_BYTES; '' if unreadable."""
        if not self.project.rev:
            return _read(self.project.root / rel) or ""
        return (git(self.project.root, ["show", f"{self.project.rev}:{rel}"], self._step()) or "")[:MAX_READ_BYTES]

    def _step(self) -> float:
        return min(max(self.remaining(), 0.1), 10.0)


UNCHECKED = "unchecked"
Evidence = tuple[str, str] | None | str  # (sentence, commit); None: it holds; UNCHECKED: not told in time


def _tails(path: str) -> Iterable[str]:
    """'src/auth/jwt.py' -> itself, 'auth/jwt.py', 'jwt.py'."""
    parts = path.split("/")
    return ("/".join(parts[i:]) for i in range(len(parts)))


def _parents(path: str) -> Iterable[str]:
    parts = path.split("/")
    return ("/".join(parts[:i]) for i in range(1, len(parts)))


def _left_path(line: str, path: str) -> bool:
    """A `--name-status` line of a file deleted or renamed away whose old path is `path`, or ends in it."""
    if path not in line:
        return False  # most lines: no need to split them
    parts = line.split("\t")
    if len(parts) < 2 or parts[0][:1] not in "DR":
        return False
    return parts[1] == path or parts[1].endswith("/" + path)


class LogScan:
    """One `git log` (newest first) read only as far as the questions asked of it need.

    Each question is a test of one output line; the first commit with a
    line that passes answers it. Lines already read are kept, so the next
    question looks at them before reading on: one process answers every
    deleted path, or every make target, however many there are.
    """

    def __init__(self, checker: "Checker", args: list[str]):
        self.checker = checker
        self.args = [*NO_ROOT, "log", *checker.project.revs, "--no-color", "--no-merges", "--format=%x00%h", *args]
        self.seen: list[tuple[str, str]] = []  # (commit, line)
        self.lines: Generator[str, None, None] | None = None
        self.done = False

    def first(self, test: Callable[[str], object]) -> tuple[str, str] | None:
        """(commit, line) of the newest line passing `test`, or None (none, or not found in time)."""
        for commit, line in self.seen:
            if test(line):
                return commit, line
        for commit, line in self._read_on():
            if test(line):
                return commit, line
        return None

    def _read_on(self) -> Iterator[tuple[str, str]]:
        if self.done:
            return
        if self.lines is None:
            self.lines = self.checker._stream(self.args)
        commit = ""
        if self.seen:
            commit = self.seen[-1][0]
        for raw in self.lines:
            if raw.startswith("\0"):
                commit = raw[1:].strip()
                continue
            line = raw.rstrip("\n")
            if line:
                self.seen.append((commit, line))
                yield commit, line
        self.done = True

    def close(self) -> None:
        if self.lines is not None:
            self.lines.close()


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_READ_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
