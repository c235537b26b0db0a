"""End to end: one secret of every kind dream knows, planted in a demo store's logs.

The user asks to remember each secret, so the offline engine would copy it
into a memory's name, description, body and file name, and from there into the
proposal (files, diff, report), the object store and the history database.
After `dream run` and `dream accept`, no secret, nor a long piece of one, may
be anywhere under the store except in the log the user wrote (logs are input
only and never edited).
"""

from __future__ import annotations

from pathlib import Path

from dream.redaction.redact import PATTERNS, redact
from helpers.stores import REPO, everything_in

# kind -> the secret itself. One per kind in dream.redaction.redact.PATTERNS (checked below).
SECRETS = {
    # On one line with escaped newlines, as in a .env file or JSON: the
    # offline engine remembers one line, so only this form could leak.
    "private-key": (
        "-----BEGIN RSA PRIVATE KEY-----\\n"
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\\n"
        "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\\n"
        "-----END RSA PRIVATE KEY-----"
    ),
    "anthropic-key": "sk-ant-api03-" + "Hq7vT_x2Lm9Rw4Zp" * 5,
    "openai-key": "sk-proj-" + "Nf3kW8_pQ2-zY6tB" * 5,
    "aws-access-key-id": "AKIA" + "Z7XQ4MBN2KLP9RTV",
    "aws-secret-key": "Wq9/zR4kLm2Xv8+TnB6yHc3PdF7sJ1gK0aE5uQ",
    "github-token": "ghp_" + "Kd83Jf02Lq7Zx5Vb" * 2 + "Tm4R",
    "slack-webhook": "https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/" + "Pz8Lq3Wn7Rt2Yv6Kc1Xj4Mb9",
    "slack-token": "xoxb-" + "5920184736-8271635490-" + "QwErTyUiOpAsDfGhJkLz",
    "stripe-key": "sk_live_51HxYzABCDEFGHIJKLMNOPQRstuv",
    "google-api-key": "AIzaSyC" + "8mQ2vW5xE7rT9yU1iO3pA6sD4fG0hJ2k",
    "npm-token": "npm_" + "Xk4Bq9Wm2Zr7Tn5Vp8Ls3Jd6Hf1Gc0Ya4Eu7",
    "bearer-token": "Qm9yZWFsbHlTZWNyZXRCZWFyZXJWYWx1ZTQy",
    "authorization": "dXNlcjpzdXBlcnNlY3JldC1iYXNpYy0yMDI2",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkcmVhbS1zZWNyZXQifQ.8Rk2Lq9Wm4Zx7Tv1Pn6Yb3Hs5Jd0Gc",
    "url-password": "Pg5ecretDbPa55",
    "password": "hunter2supersecret",
    "secret-assignment": "9f8e7d6c5b4a3928x1706",
    "sendgrid-key": "SG.aB3dE5fG7hJ9kL1mN3pQ5r.Zx8Cv6Bn4Mq2Wr0Ty9Ui7Op5As3Df1Gh2Jk4Lz6Xc8Vb",
    "mailgun-key": "key-" + "3f9a" * 8,
    "huggingface-token": "hf_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3",
    "databricks-token": "dapi" + "0a1b" * 8,
    "twilio-key": "SK" + "9c8d" * 8,
    "azure-storage-key": "Ab3+Cd5/" * 11 + "==",
    "azure-sas-signature": "Zx8Cv6Bn4Mq2" * 3 + "%3D",
    "stripe-webhook-secret": "whsec_" + "Rt5Yu7Io9Pa1" * 3,
    "slack-app-token": "xapp-1-A0B1C2D3E4F-1234567890123-" + "ab12" * 16,
    "gitlab-token": "glpat-Xy7Zw5Vu3Ts1Rq9Po8Nm",
    "shopify-token": "shpat_" + "0f1e" * 8,
    "digitalocean-token": "dop_v1_" + "a1b2c3d4" * 8,
    "atlassian-token": "ATATT3xFfGF0" + "Kj8Hg6Fd4Sa2" * 4,
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + "Ab3Cd5Ef7Gh9" * 6,
    "telegram-bot-token": "8130614501:AAWrTxQ9bL2mZ8Kd4Vn6Jp3Hs7Fy1Cg5Eq0",
    "cli-password": "S3cr3t!pw42",
    "curl-credentials": "hunter2pass77",
    "token": "7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d",
    "pin": "739164",
    "code-credential": "Rq7#vLm2Xz",
}

# How a user mentions each secret, in one request to remember it.
MENTIONS = {
    "private-key": "the deploy key is {}",
    "anthropic-key": "the staging Anthropic key is {}",
    "openai-key": "the OpenAI key is {}",
    "aws-access-key-id": "the AWS key id is {}",
    "aws-secret-key": "aws_secret_access_key = {}",
    "github-token": "the CI bot token is {}",
    "slack-webhook": "alerts post to {}",
    "slack-token": "the Slack bot token is {}",
    "stripe-key": "the stripe live key is {}",
    "google-api-key": "the maps key is {}",
    "npm-token": "the npm publish token is {}",
    "bearer-token": "the webhook sends Bearer {}",
    "authorization": "the proxy wants Authorization: Basic {}",
    "jwt": "the admin session is {}",
    "url-password": "the db is postgres://payouts:{}@db.internal:5432/payouts",
    "password": "the db password is password={}",
    "secret-assignment": "the OAuth app has client_secret={}",
    "sendgrid-key": "mail goes out through {}",
    "mailgun-key": "the Mailgun key is {}",
    "huggingface-token": "the HF token is {}",
    "databricks-token": "the Databricks token is {}",
    "twilio-key": "the Twilio key sid is {}",
    "azure-storage-key": "the blob store is AccountName=ledger;AccountKey={};EndpointSuffix=core.windows.net",
    "azure-sas-signature": "the backup URL is https://x.blob.core.windows.net/b?sv=2022&sig={}",
    "stripe-webhook-secret": "the webhook signing secret is {}",
    "slack-app-token": "socket mode needs {}",
    "gitlab-token": "the GitLab token is {}",
    "shopify-token": "the Shopify token is {}",
    "digitalocean-token": "doctl uses {}",
    "atlassian-token": "the Jira token is {}",
    "pypi-token": "twine uploads with {}",
    "telegram-bot-token": "the alert bot token is {}",
    "cli-password": "connect with psql --password {} -h db",
    "curl-credentials": "fetch with curl -u admin:{} https://ci.internal",
    "token": "our internal api token is {}",
    "pin": "the office door PIN is {}",
    "code-credential": 'the report job calls DriverManager.getConnection(url, "reporter", "{}")',
}

PUBLIC_CORPUS = REPO / "tests" / "reliability" / "data" / "public_secrets.tsv"


def _add_the_public_corpus_kinds() -> None:
    """Each kind added with the public-style corpus: its first sentence there that is exactly one such redaction."""
    for line in PUBLIC_CORPUS.read_text().splitlines()[1:]:
        _, sentence, secret = (part.replace("\\n", "\n") for part in line.split("\t"))
        out, count = redact(sentence)
        kinds = [p.kind for p in PATTERNS if p.kind not in SECRETS and p.marker in out]
        if count == 1 and kinds and secret in sentence:
            SECRETS[kinds[0]] = secret
            MENTIONS[kinds[0]] = sentence.replace("{", "{{").replace("}", "}}").replace(secret, "{}")


_add_the_public_corpus_kinds()

PLANTED = Path("logs/2026/11/29/sec1-secrets.md")


def fragments(secret: str) -> list[str]:
    """The secret and, for a long one, 12 characters from its middle (a leak cut short)."""
    if len(secret) < 24:
        return [secret]
    middle = len(secret) // 3
    return [secret, secret[middle : middle + 12]]


def plant(store: Path) -> str:
    log = "".join(f"> remember that {MENTIONS[kind].format(secret)}\n< Noted.\n" for kind, secret in SECRETS.items())
    (store / PLANTED).parent.mkdir(parents=True, exist_ok=True)
    (store / PLANTED).write_text(log)
    return log


def everything_written(store: Path) -> list[tuple[str, bytes]]:
    """Every file under the store but the planted log (names too), and every history table as text."""
    return everything_in(store, skip=frozenset({PLANTED}), names=True)


def leaks(store: Path) -> list[str]:
    return [
        f"{kind} in {where}"
        for where, data in everything_written(store)
        for kind, secret in SECRETS.items()
        for piece in fragments(secret)
        if piece.encode() in data
    ]


def test_every_kind_is_planted_and_each_mention_is_one_redaction() -> None:
    assert set(SECRETS) == {p.kind for p in PATTERNS} == set(MENTIONS)
    for kind, secret in SECRETS.items():
        out, count = redact(MENTIONS[kind].format(secret))
        assert count == 1 and f"[REDACTED:{kind}]" in out, (kind, out)


def test_no_planted_secret_reaches_the_proposal_the_store_or_the_history(demo_store: Path, cli) -> None:
    planted = plant(demo_store)
    other_logs = [p for p in (demo_store / "logs").rglob("*.md") if p.relative_to(demo_store) != PLANTED]
    redactions_elsewhere = sum(redact(p.read_text())[1] for p in other_logs)

    run = cli("run", "--store", str(demo_store), "--force", "--json")

    assert run.code == 0, run.stderr
    outcome = run.json
    assert outcome["status"] == "proposed", outcome
    assert outcome["redactions"] == len(SECRETS) + redactions_elsewhere
    diff = cli("diff", outcome["proposal_id"], "--store", str(demo_store), "--json").json["diff"]
    # A memory of "the stripe live key is [REDACTED:…]" would only say that a key exists: none is made, a person is told
    assert "[REDACTED:stripe-key]" not in diff
    notes = [n["text"] for n in cli("notes", "--store", str(demo_store), "--json").json["shown"]]
    assert any("the stripe live key is [REDACTED:stripe-key]" in n and "was not stored" in n for n in notes)
    assert "postgres://payouts:[REDACTED:url-password]@db.internal:5432/payouts" in diff  # the rest of the URL is kept
    assert leaks(demo_store) == []

    accepted = cli("accept", outcome["proposal_id"], "--store", str(demo_store), "--json")

    assert accepted.code == 0, accepted.stderr
    assert any("db.internal:5432/payouts" in p.read_text() for p in demo_store.glob("*.md"))  # the URL, remembered
    assert any(where == ".dream/history.jsonl" for where, _ in everything_written(demo_store))  # history searched
    assert leaks(demo_store) == []
    assert (demo_store / PLANTED).read_text() == planted  # the user's log is never edited
