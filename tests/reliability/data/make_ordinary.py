"""Write ordinary.txt: lines with no secret that look like one to a careless detector.

Git SHAs, UUIDs, base64 images and blobs, hashes in lock files, the words
"token" and "password" in prose and in code that only names them, version
strings, paths, URLs without credentials. Seeded, so the file is
reproducible; the tests read the file. They add every line of the demo
store (data/) and, when present, of the shared corpus of real stores.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from pathlib import Path

rnd = random.Random(7)
HEX = "0123456789abcdef"


def sha(n: int = 40) -> str:
    return "".join(rnd.choice(HEX) for _ in range(n))


def uid() -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))


def b64(n: int) -> str:
    return base64.b64encode(bytes(rnd.getrandbits(8) for _ in range(n))).decode()


TEMPLATES = [
    lambda: f"commit {sha()}",
    lambda: f"Merge pull request #{rnd.randint(1, 999)} from acme/{sha(7)}",
    lambda: f"< Reverted {sha(7)} and {sha(12)}; the bisect points at {sha()}.",
    lambda: f". Bash git show {sha()} --stat",
    lambda: f"request_id={uid()} status=200 duration_ms={rnd.randint(1, 900)}",
    lambda: f"> the run id is {uid()}, look at its logs",
    lambda: f"RUN_ID={uid()}",
    lambda: f"GIT_COMMIT={sha()}",
    lambda: f'<img src="data:image/png;base64,{b64(90)}">',
    lambda: f"![chart](data:image/gif;base64,{b64(60)})",
    lambda: f"integrity sha512-{b64(48)}",
    lambda: f'"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.{rnd.randint(0, 9)}.0.tgz", '
            f'"integrity": "sha1-{b64(20)}"',
    lambda: f"sha256:{sha(64)}  dist/dream-0.{rnd.randint(1, 9)}.0.tar.gz",
    lambda: f"docker pull ghcr.io/acme/api@sha256:{sha(64)}",
    lambda: f"etag: W/\"{sha(32)}\"",
    lambda: "> the token budget is too small for long sessions",
    lambda: "< I rotated the password in the vault; nobody needs to know it.",
    lambda: "> never log the password, only whether it matched",
    lambda: "password: required (the form rejects empty ones)",
    lambda: "token: see the vault entry ci/deploy",
    lambda: "api_key: YOUR_API_KEY",
    lambda: 'api_key = os.environ["API_KEY"]',
    lambda: "const token = process.env.GITHUB_TOKEN;",
    lambda: "password = getpass.getpass()",
    lambda: "if not token: raise SystemExit('no token')",
    lambda: "secret_name: prod/db/credentials",
    lambda: "auth_method: oauth2",
    lambda: "SESSION_COOKIE_NAME=sessionid",
    lambda: "PASSWORD_MIN_LENGTH=12",
    lambda: "TOKEN_TTL_SECONDS=3600",
    lambda: "export PATH=$HOME/.local/bin:$PATH",
    lambda: "export PYTHONPATH=/work/ledger/src",
    lambda: "DATABASE_URL=postgres://localhost:5432/ledger",
    lambda: "redis://cache.internal:6379/0",
    lambda: "> remember that the CI uses a short-lived OIDC token, not a stored secret",
    lambda: "< The tokenizer splits on whitespace; each token is at most 64 characters.",
    lambda: "> forget the note about password rotation, it is automated now",
    lambda: f"- [Release {rnd.randint(1, 9)}.{rnd.randint(0, 20)}](project_release.md) — cut from {sha(7)}",
    lambda: f"uuid: {uid()}",
    lambda: f"key: {rnd.choice(['escape', 'enter', 'ctrl+c', 'shift+tab'])}",
    lambda: f"cache_key = f\"{{user_id}}:{{day}}\"  # {sha(8)}",
    lambda: "primary_key: id",
    lambda: "sort_key: created_at",
    lambda: f"keyboard layout {rnd.choice(['us', 'de', 'fr'])}; the key repeat is {rnd.randint(20, 60)} ms",
    lambda: f". Read src/auth/session_{sha(6)}.py",
    lambda: f"< Tests pass: {rnd.randint(100, 999)} passed, {rnd.randint(0, 9)} skipped in {rnd.randint(2, 99)}s",
    lambda: "pip install 'detect-secrets>=1.5,<2' --no-deps",
    lambda: f"version = \"{rnd.randint(0, 3)}.{rnd.randint(0, 30)}.{rnd.randint(0, 9)}\"",
    lambda: f"ssh-keygen -lf ~/.ssh/id_ed25519.pub -> SHA256:{b64(32).rstrip('=')}",
    lambda: "the word bearer appears in this sentence: the bearer of bad news",
    lambda: "Authorization: required for every route except /health",
    lambda: f"X-Request-Id: {uid()}",
    lambda: "BEGIN TRANSACTION; UPDATE accounts SET balance = balance - 10;",
    lambda: "sk-learn compatible estimators, task-based scheduling",
    lambda: f"the build {''.join(rnd.choice(string.ascii_uppercase) for _ in range(3))}-{rnd.randint(1000, 9999)} "
            f"failed on step {rnd.randint(1, 9)}",
]


def main() -> None:
    lines = [TEMPLATES[i % len(TEMPLATES)]() for i in range(len(TEMPLATES) * 6)]
    out = Path(__file__).with_name("ordinary.txt")
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} lines -> {out}")


if __name__ == "__main__":
    main()
