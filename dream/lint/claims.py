"""What a memory claims about its project, found without running anything.

A claim is something the project's files can confirm or refute: a path, a
make target, a package or project script, an environment variable, a
function, class or module name, a dependency and its major version. Only
what is plainly a claim is taken: text in backticks, a path with a folder
and an extension, a command line in a code block, a package named as one
("the `left-pad` package", "we use `httpx`"). A name written after a module
(`asyncio.Lock`) is a claim only where the module is the project's own, and
one letter (`Z`) is never one. A line that speaks of the
past or of something gone ("we dropped `requests`", "renamed from …") makes
no claim that it exists now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from dream.lint.notes import is_note
from dream.store.model import FrontmatterRefused, TextFile, parse_frontmatter

PATH, FOLDER, MAKE, SCRIPT, COMMAND, ENV, SYMBOL, MODULE, DEPENDENCY = (
    "path", "folder", "make target", "script", "command", "environment variable", "name", "module", "dependency")


@dataclass(frozen=True)
class Claim:
    memory: str  # the memory file's path in the store
    line: int  # 1-based line in that file
    kind: str
    name: str  # what is claimed to exist: a path, a target, a name
    major: int | None = None  # a dependency's claimed major version
    # for a command or a script: the program (npm, make, the project's own CLI); for a name written with a
    # dot (`cart.Cart`): the first part, which must be the project's own module for the name to be a claim
    # about it; for a dependency named in prose ("the `left-pad` package"): PROSE
    tool: str = ""


@cache
def word_list(name: str) -> frozenset[str]:
    """A data file under dream/lint/data: one entry a line, '#' starts a comment."""
    text = files("dream.lint").joinpath("data", name).read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@cache
def _past_pattern() -> re.Pattern[str]:
    words = sorted(word_list("past_words.txt"), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+", re.IGNORECASE)
# a path in running text: at least one folder and a file extension, not inside a URL or a domain
TEXT_PATH = re.compile(r"(?<![\w/.:@~$-])((?:\.{0,2}/)?(?:[\w-][\w.-]*/)+[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?![\w/])")
ENV_NAME = re.compile(r"^\$?\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\}?(?:=.*)?$")
TEXT_ENV = re.compile(r"(?<![\w$])\$\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")
IDENTIFIER = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?$")
PIN = re.compile(r"^(@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)\s*(?:==|@\^?|@~?|@|\s+v)(\d+)(?:\.[\dx*]+)*$")
NAMED_VERSION = re.compile(r"`(@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)`\s+v?(\d+)(?:\.[\dx]+)*\b"
                           r"|(?<![\w@/.-])(@?[A-Za-z][\w-]*)\s+(?:v(\d+)(?:\.[\dx]+)*|(\d+)(?:\.[\dx]+)+)\b")
PACKAGE_NAME = re.compile(r"^@?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9._-]+)?$")
# A dependency named in prose: "the `left-pad` package", "we use `httpx`", "depends on `serde`".
PACKAGE_IN_PROSE = r"(@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)*)"  # `left-pad`, `@scope/pkg`, `github.com/pkg/errors`
PROSE_PACKAGE = re.compile(
    rf"\bthe `{PACKAGE_IN_PROSE}` (?:package|library|crate|gem|dependency)\b"
    rf"|\b(?:we use|we're using|we are using|depends on|depend on|relies on|rely on) (?:the )?`{PACKAGE_IN_PROSE}`",
    re.IGNORECASE)
PROSE = "prose"  # Claim.tool of a dependency named in prose
SCRIPT_RUNNERS = {("npm", "run"), ("npm", "run-script"), ("yarn", "run"), ("pnpm", "run"), ("bun", "run")}
GLOB = set("*?[]{}<>|")


def memory_claims(rel: str, data: bytes) -> list[Claim]:
    """Every claim in one memory file, in line order (frontmatter is skipped)."""
    lines = TextFile.decode(data).lines
    try:
        fm = parse_frontmatter(lines)
    except FrontmatterRefused:
        return []  # validation names such a file; lint reads no claim from it
    start = fm.end + 1 if fm is not None else 0
    claims: list[Claim] = []
    fenced = False
    for number in range(start, len(lines)):
        line = lines[number]
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if is_note(line) or _past_pattern().search(URL.sub(" ", line)):
            continue  # a note dream wrote (dream.lint.notes), or a line about the past: no claim
        found = _fenced_line(line) if fenced else _prose_line(line)
        claims += [Claim(rel, number + 1, *args) for args in found]
    return list(dict.fromkeys(claims))


Found = tuple  # (kind, name[, major[, tool]]) for a Claim after its memory and line


def _fenced_line(line: str) -> list[Found]:
    """A code block: only command lines make claims (code itself is too loose to read as one)."""
    command = line.strip().removeprefix("$ ").strip()
    return _command(command.split())


def _prose_line(line: str) -> list[Found]:
    text = URL.sub(" ", LINK_TARGET.sub("]", line))
    found: list[Found] = []
    for span in CODE_SPAN.findall(text):
        found += _span(span.strip().rstrip(".,;:"))
    prose = CODE_SPAN.sub(" ", text)
    found += [(PATH, path.removeprefix("./")) for path in TEXT_PATH.findall(prose) if not _domain_like(path)]
    found += [(ENV, name) for name in TEXT_ENV.findall(prose)]
    found += _named_versions(text)
    found += [(DEPENDENCY, a or b, None, PROSE) for a, b in PROSE_PACKAGE.findall(text)]
    return found


def _span(span: str) -> list[Found]:
    """What one code span claims, if anything."""
    words = span.split()
    if not words or span in word_list("known_names.txt"):
        return []
    if len(words) > 1:
        return _command(words) or _pinned_dependency(span)
    return _single(span)


def _single(token: str) -> list[Found]:
    env = ENV_NAME.match(token)
    if env:
        return [] if env.group(1) in word_list("known_names.txt") else [(ENV, env.group(1))]
    pinned = _pinned_dependency(token)
    if pinned:
        return pinned
    path = _path(token)
    if path:
        return [path]
    ident = IDENTIFIER.match(token)
    if ident:
        return _identifier(ident.group(1), called=bool(ident.group(2)))
    return []


def _path(token: str) -> Found | None:
    """`src/auth/jwt.py`, `src/auth/`, `jwt.py`, `tests/test_x.py::test_y`, `app.py:12` as a path claim."""
    token = re.sub(r"(::[\w\[\].-]+|:\d+(?::\d+)?|#L\d+(?:-L\d+)?)$", "", token)
    if GLOB & set(token) or token.startswith(("~", "$", "-", "@", "/", "http")) or "://" in token or "\\" in token:
        return None
    token = token.removeprefix("./")
    last = token.rstrip("/").rsplit("/", 1)[-1]
    extension = last.rsplit(".", 1)[-1].lower() if "." in last.strip(".") else ""
    if "/" in token.rstrip("/"):
        if _domain_like(token) or ".." in token.split("/"):
            return None
        if token.endswith("/") or not extension:
            return (FOLDER, token.rstrip("/"))
        return (PATH, token)
    if token.endswith("/") and re.fullmatch(r"[\w.-]+/", token):
        return (FOLDER, token.rstrip("/"))
    if extension in word_list("file_extensions.txt") and extension != "md" and re.fullmatch(r"[\w.-]+", token) \
            and not _capitalized(last.rsplit(".", 1)[-1]):
        return (PATH, token)
    return None


def _capitalized(part: str) -> bool:
    """`Lock` in `asyncio.Lock`: a class name after a module, not a file extension (`.lock`, `.LOCK`)."""
    return part[:1].isupper() and not part.isupper()


def _domain_like(path: str) -> bool:
    """`github.com/org/repo.git`, `example.org/x.html`: the first part is a host, not a folder."""
    first = path.lstrip("./").split("/", 1)[0]
    return "." in first and not first.startswith(".")


def _identifier(name: str, called: bool) -> list[Found]:
    """`parse_config()`, `AuthService`, `dream.lint.checks`: a name the code must contain.

    One lowercase word (`config`, `requests`) could be anything: only a
    dependency check may read it.
    """
    if name in word_list("known_names.txt") or len(name) < 2:
        return []  # one letter (`Z`, `x()`) names nothing a search could confirm
    parts = name.split(".")
    if len(parts) > 1:
        if all(p.islower() or "_" in p for p in parts):
            return [(MODULE, name)]
        return [(SYMBOL, parts[-1], None, parts[0])]  # a claim only where `parts[0]` is the project's module
    snake = "_" in name.strip("_")
    camel = bool(re.search(r"[a-z][A-Z]", name))
    if called or snake or camel:
        return [(SYMBOL, name)]
    if PACKAGE_NAME.match(name):
        return [(DEPENDENCY, name, None)]
    return []


def _pinned_dependency(span: str) -> list[Found]:
    """`react@18`, `pydantic==2.7`, `httpx v0`: a dependency with its major version."""
    m = PIN.match(span)
    return [(DEPENDENCY, m.group(1), int(m.group(2)))] if m else []


def _named_versions(text: str) -> list[Found]:
    """"`pydantic` v2", "React 18.2", "pydantic v2" in running text."""
    found: list[Found] = []
    for m in NAMED_VERSION.finditer(text):
        name = m.group(1) or m.group(3)
        major = m.group(2) or m.group(4) or m.group(5)
        found.append((DEPENDENCY, name, int(major)))
    return found


def _command(words: list[str]) -> list[Found]:
    """`make test lint`, `npm run build`, `yarn run x`, `python -m pkg.mod`, `./scripts/x.sh`, `tool sub`."""
    if not words:
        return []
    head = words[0]
    if head == "make":
        return [(MAKE, w, None, "make") for w in words[1:] if not w.startswith("-") and "=" not in w
                and re.fullmatch(r"[\w./-]+", w)][:8]
    if len(words) >= 3 and (head, words[1]) in SCRIPT_RUNNERS:
        return [(SCRIPT, words[2], None, head)]
    if head in ("npm", "pnpm", "yarn", "bun") and len(words) >= 2 and words[1] == "test":
        return [(SCRIPT, "test", None, head)]
    if head in ("python", "python3") and len(words) >= 3 and words[1] == "-m":
        return [(MODULE, words[2], None, head)] if IDENTIFIER.match(words[2]) else []
    if "/" in head and not head.startswith(("/", "~", "$")):
        path = _path(head)
        return [path] if path and path[0] == PATH else []
    if len(words) >= 2 and re.fullmatch(r"[a-z][\w-]*", head) and re.fullmatch(r"[a-z][\w-]*", words[1]):
        return [(COMMAND, words[1], None, head)]  # checked only when `head` is one of the project's own commands
    return []
