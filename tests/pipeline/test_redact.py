"""Secret redaction: every kind is caught, prose is left alone, both forms agree."""

from __future__ import annotations

import re

import polars as pl
import pytest

from helpers.stores import REPO

from dream.redaction.redact import PATTERNS, redact, redact_column

ANTHROPIC = "sk-ant-api03-" + "Ab3_-x9Z" * 12
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" + "q7Wm2Xk9" * 5
OPENAI_PROJECT = "sk-proj-" + "aB3-_cD4eF" * 15
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_TEMP_ID = "ASIAY34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_CLASSIC = "ghp_" + "R2d2C3po" * 4 + "abcd"
GITHUB_FINE = "github_pat_11ABCDEFG0" + "x" * 60
SLACK_TOKEN = "xoxb-2048-4096-" + "AbCdEfGhIjKlMnOp"
SLACK_HOOK = "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6y"
STRIPE_LIVE = "sk_live_51HxYzAB" + "cD3eF4gH5iJ6kL7m" * 3
STRIPE_RESTRICTED = "rk_live_51HxYzAB" + "Zz9Yy8Xx7Ww6Vv5U"
STRIPE_TEST = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIzaSyD-" + "9tSrke72PouQMnMX7agf" + "_Hb0zk3Xa2b"
NPM = "npm_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5"
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBnZXRzZWNyZXRrZXltYXRlcmlhbGhlcmUAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (text with a secret, expected redacted text, kind that must appear)
CASES = [
    # a password or an AWS secret said in a sentence, in the languages of data/phrases
    ("la contraseña de staging es Tr0ub4dor&3xQ", "la contraseña de staging es [REDACTED:password]"),
    ("das Passwort für die Staging-DB ist Sommer2026!Xy", "das Passwort für die Staging-DB ist [REDACTED:password]"),
    # said the way people type them (data/eval/secrets-everyday.yaml): short, after "pw:", a dash or "to"
    ("remember the staging admin pw: Blu3-Fjord-77", "remember the staging admin pw: [REDACTED:password]"),
    ("fyi the jenkins password is hunter2", "fyi the jenkins password is [REDACTED:password]"),
    ("la clave del wifi es PerroVerde#19", "la clave del wifi es [REDACTED:password]"),
    ("пароль от staging — Zima2026!q", "пароль от staging — [REDACTED:password]"),
    ("hasło do stagingu to Las#Zielony8", "hasło do stagingu to [REDACTED:password]"),
    ("our internal api token is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "our internal api token is [REDACTED:token]"),
    ("the office door PIN is 480913", "the office door PIN is [REDACTED:pin]"),
    ("PIN: 4471", "PIN: [REDACTED:pin]"),
    # ... and what only looks like it: a word, a duration, a place
    ("the token is valid for 30 days", "the token is valid for 30 days"),
    ("la clave es usar caché", "la clave es usar caché"),
    ("the api key is in 1password", "the api key is in 1password"),
    ("the password is required", "the password is required"),
    ("the PIN is on the card", "the PIN is on the card"),
    ("le mot de passe du VPN est Chat-Noir-42", "le mot de passe du VPN est [REDACTED:password]"),
    ("ステージングのパスワードは Himitsu2026xyz", "ステージングのパスワードは [REDACTED:password]"),
    ("the db password is password=hunter2supersecret", "the db password is password=[REDACTED:password]"),
    ("CI signs with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "CI signs with secret [REDACTED:aws-secret-key]"),
    ("SG." + "aB3dE5fG7hJ9kL1mN3pQ5r" + "." + "Zx8Cv6Bn4Mq2Wr0Ty9Ui7Op5As3Df1Gh2Jk4Lz6Xc8Vb",
     "[REDACTED:sendgrid-key]"),
    ("mailgun key-" + "3f9a" * 8, "mailgun [REDACTED:mailgun-key]"),
    ("HF hf_" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3", "HF [REDACTED:huggingface-token]"),
    ("token dapi" + "0a1b" * 8, "token [REDACTED:databricks-token]"),
    ("sid SK" + "9c8d" * 8 + " ok", "sid [REDACTED:twilio-key] ok"),
    ("AccountKey=" + "Ab3+Cd5/" * 11 + "==;", "AccountKey=[REDACTED:azure-storage-key];"),
    ("https://x.blob.core.windows.net/b?sv=2022&sig=" + "Zx8Cv6Bn4Mq2" * 3 + "%3D",
     "https://x.blob.core.windows.net/b?sv=2022&sig=[REDACTED:azure-sas-signature]"),
    ("whsec_" + "Rt5Yu7Io9Pa1" * 3, "[REDACTED:stripe-webhook-secret]"),
    ("xapp-1-A0B1C2D3E4F-1234567890123-" + "ab12" * 16, "[REDACTED:slack-app-token]"),
    ("glpat-" + "Xy7Zw5Vu3Ts1Rq9Po8Nm", "[REDACTED:gitlab-token]"),
    ("shpat_" + "0f1e" * 8, "[REDACTED:shopify-token]"),
    ("dop_v1_" + "a1b2c3d4" * 8, "[REDACTED:digitalocean-token]"),
    ("ATATT3xFfGF0" + "Kj8Hg6Fd4Sa2" * 4, "[REDACTED:atlassian-token]"),
    ("pypi-AgEIcHlwaS5vcmc" + "Ab3Cd5Ef7Gh9" * 6, "[REDACTED:pypi-token]"),
    ("bot 8130614501:AA" + "WrTxQ9bL2mZ8Kd4Vn6Jp3Hs7Fy1Cg5Eq0", "bot [REDACTED:telegram-bot-token]"),
    ("psql --password S3cr3t!pw -h db", "psql --password [REDACTED:cli-password] -h db"),
    ("mysql -u root -pS3cretpw db", "mysql -u root -p[REDACTED:cli-password] db"),
    ("curl -u admin:hunter2pass https://x", "curl -u admin:[REDACTED:curl-credentials] https://x"),
    (f"export ANTHROPIC_API_KEY={ANTHROPIC}", "export ANTHROPIC_API_KEY=[REDACTED:anthropic-key]"),
    (f"key: {OPENAI_LEGACY}.", "key: [REDACTED:openai-key]."),
    (f"OPENAI_API_KEY={OPENAI_PROJECT} done", "OPENAI_API_KEY=[REDACTED:openai-key] done"),
    (f"id {AWS_ID} and {AWS_TEMP_ID}", "id [REDACTED:aws-access-key-id] and [REDACTED:aws-access-key-id]"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [REDACTED:aws-secret-key]"),
    (f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', 'AWS_SECRET_ACCESS_KEY="[REDACTED:aws-secret-key]"'),
    (f"token {GITHUB_CLASSIC} ok", "token [REDACTED:github-token] ok"),
    *[
        (f"{p}_" + "Zz09" * 9, "[REDACTED:github-token]")
        for p in ("gho", "ghu", "ghs", "ghr")
    ],
    (f"pat={GITHUB_FINE}", "pat=[REDACTED:github-token]"),
    (f"SLACK={SLACK_TOKEN}", "SLACK=[REDACTED:slack-token]"),
    ("xoxp-1234567890-abcdef", "[REDACTED:slack-token]"),
    (f"post to {SLACK_HOOK} now", "post to [REDACTED:slack-webhook] now"),
    (f"curl -H 'Authorization: Bearer {JWT}'", "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"),
    (f"bearer {JWT}", "bearer [REDACTED:bearer-token]"),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:authorization]"),
    ("authorization: token abc123def", "authorization: token [REDACTED:authorization]"),
    ('"Authorization": "' + "k" * 8 + "9" * 20 + '"', '"Authorization": "[REDACTED:authorization]"'),
    (f"before\n{PEM}\nafter", "before\n[REDACTED:private-key]\nafter"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9+abc/=\nMIIEpAIBAA",
        "[REDACTED:private-key]",
    ),
    (
        "DATABASE_URL=postgres://alice:s3cr3t!@db.internal:5432/app",
        "DATABASE_URL=postgres://alice:[REDACTED:url-password]@db.internal:5432/app",
    ),
    (
        "git clone https://bob:ghpass@github.com/org/repo.git",
        "git clone https://bob:[REDACTED:url-password]@github.com/org/repo.git",
    ),
    (f"the stripe live key is {STRIPE_LIVE}", "the stripe live key is [REDACTED:stripe-key]"),
    (f"STRIPE_SECRET_KEY={STRIPE_TEST} and {STRIPE_RESTRICTED}", "STRIPE_SECRET_KEY=[REDACTED:stripe-key] and [REDACTED:stripe-key]"),
    (f'"apiKey": "{GOOGLE}"', '"apiKey": "[REDACTED:google-api-key]"'),
    (f"//registry.npmjs.org/:_authToken={NPM}", "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]"),
    (f"session cookie {JWT} expired", "session cookie [REDACTED:jwt] expired"),
    ("the db password is password=hunter2supersecret", "the db password is password=[REDACTED:password]"),
    ('export DB_PASSWORD="s3cr3t-Pa55w0rd"', 'export DB_PASSWORD="[REDACTED:password]"'),
    ("  password: Tr0ub4dor&3\n  user: app", "  password: [REDACTED:password]\n  user: app"),
    ('{"passwd": "letmein-2024!", "pwd": "x9#kLm2pQ7"}', '{"passwd": "[REDACTED:password]", "pwd": "[REDACTED:password]"}'),
    ("mysql -u root --password=N0tS0Secret", "mysql -u root --password=[REDACTED:password]"),
    ("client_secret=9f8e7d6c5b4a39281706", "client_secret=[REDACTED:secret-assignment]"),
    ("SLACK_SIGNING_SECRET: 8f14e45fceea167a5a36dedd4bea2543", "SLACK_SIGNING_SECRET: [REDACTED:secret-assignment]"),
    ("curl -H 'x-api-key: k3y-0f-the-service' host", "curl -H 'x-api-key: [REDACTED:secret-assignment]' host"),
    ("access_key = AbCdEf123456", "access_key = [REDACTED:secret-assignment]"),
    ("SECRET_KEY=django-insecure-0x8#kf2", "SECRET_KEY=[REDACTED:secret-assignment]"),
    ("apiKey=`f00ba4r-b4z-qux`", "apiKey=`[REDACTED:secret-assignment]`"),
    ("refresh_token: 1//0gLxYz-abcdefg", "refresh_token: [REDACTED:secret-assignment]"),
    # by structure (issue 38): a password flag of any tool, a connection call's credential, prose, a broken value
    ("ldapsearch -x -D cn=admin -w Zq8xLw2m -b dc=corp", "ldapsearch -x -D cn=admin -w [REDACTED:cli-password] -b dc=corp"),
    ("keytool -list -keystore a.jks -storepass s3cretStore", "keytool -list -keystore a.jks -storepass [REDACTED:cli-password]"),
    ("htpasswd -b .htpasswd alice hunterhunter", "htpasswd -b .htpasswd alice [REDACTED:cli-password]"),
    ("sqlplus scott/Tiger42@//db:1521/orcl", "sqlplus scott/[REDACTED:cli-password]@//db:1521/orcl"),
    ("snmpwalk -v3 -A auth!Pass1 -X priv!Pass2 host", "snmpwalk -v3 -A [REDACTED:cli-password] -X [REDACTED:cli-password] host"),
    ('DriverManager.getConnection(url, "app", "Pa55word!")', 'DriverManager.getConnection(url, "app", "[REDACTED:code-credential]")'),
    ('new NetworkCredential("svc", "lettersOnlyPassword")', 'new NetworkCredential("svc", "[REDACTED:code-credential]")'),
    ("le mot de passe du wifi, c'est Chat-Noir-42", "le mot de passe du wifi, c'est [REDACTED:password]"),
    ("staging ka password hai Xk9#mPq2", "staging ka password hai [REDACTED:password]"),
    ("스테이징 마스터 키는 Kx7!pQ2mZ", "스테이징 마스터 키는 [REDACTED:password]"),
    ("the admin pw changed to velvetHarborQuartz, update it", "the admin pw changed to [REDACTED:password], update it"),
    ("the prod db password is\n> Zq8x#Lw2m", "the prod db password is\n> [REDACTED:password]"),
    ("my phone pin is 6112", "my phone pin is [REDACTED:pin]"),
    ("api token: 6a78d0d558d9c87a\n0f1e2d3c4b5a6978", "api token: [REDACTED:secret-assignment]\n[REDACTED:continued-secret]"),
]

PROSE = [
    "The password is required on first login, and the secret is that nobody reads the docs.",
    "La contraseña es obligatoria; das Passwort ist Pflicht; le mot de passe est requis.",
    "We use sk-learn and scikit-learn-compatible-estimators for the baseline model.",
    "The task-based scheduler and risk-assessment-for-everything checklist.",
    "He was the bearer of bad news; the bearer responsibilities are clear.",
    "Authorization: required for every endpoint. authorization = denied",
    "Open https://example.com:8080/path and ssh://git@github.com:22/org/repo.",
    "See http://localhost:3000/api?user=me:you@ and mailto:someone@example.com",
    "-----BEGIN PUBLIC KEY----- is not secret, nor -----BEGIN CERTIFICATE-----",
    "AKIA is a prefix; AKIASHORT too. ghp_ is GitHub's prefix; xoxb- is Slack's.",
    "Ich habe die Datei geändert — 日本語のテキスト — résumé, naïve façade.",
    "Run `pytest -k sk-ant` and grep for 'sk-' in the code; the slack channel #dev.",
    "A commit like 3f9a2b1c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a is not a secret.",
    "Use `Bearer <token>` in the header; bearer ${TOKEN} from the env.",
    "The password field is required; the password: required, password: optional.",
    "Token bucket rate limiting; the token: see-the-vault; token = get_token()",
    "Set api_key in the config, api_key: YOUR_API_KEY, apiKey: process.env.API_KEY",
    "max_tokens: 4096000, max_tokens=200000, num_tokens: 12345678, token_count=99999999",
    "PWD=/home/alice/src/app2 OLDPWD=/home/alice/v2 pwd: ~/work/proj3",
    "password=None, password=$DB_PASSWORD, password: ********, password = os.environ['DB_PASSWORD']",
    "secret: ${{ secrets.DEPLOY_KEY }} and password: <your-password-123> and token=[your token]",
    "if password == expected_pw1: and if token := read_token(path):",
    "Stripe keys start with sk_live_ or sk_test_; disk_test_results; pk_live_51HxYzABCDEFGHIJKLMNOPQR",
    "npm_config_cache and npm_package_version; AIza is Google's prefix; eyJ is base64 for '{\"'",
    "version 1.2.3 of eyJhbGciOi.notjwt, and a.b.c dotted names",
    "The secret to good tests: isolation, fast-feedback, determinism.",
    # structure without a value: a flag that prompts, a call with variables, a digest with its prefix
    "mysql -u root -p shop; ssh -p 2222 host; mkdir -p build; docker login --password-stdin",
    "conn = DriverManager.getConnection(url, user, password); new NetworkCredential(user, pw)",
    "IMAGE_DIGEST=sha256:9f2c4e7a1b3d5f608e2a4c6b8d0f1e3a5c7b9d2f4e6a8c0b1d3f5e7a9c2b4d6f",
    "the password is stored in the vault; the key is to keep it small; key: ctrl+c",
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_secret_kind_is_replaced(text: str, expected: str) -> None:
    out, count = redact(text)
    assert out == expected
    assert count == expected.count("[REDACTED:")


def test_every_pattern_kind_is_covered_by_a_case() -> None:
    """Each kind in patterns.toml is met by a case here or by a sentence of the public-style corpus."""
    corpus = REPO / "tests" / "reliability" / "data" / "public_secrets.tsv"
    sentences = [line.split("\t")[1].replace("\\n", "\n") for line in corpus.read_text().splitlines()[1:]]
    seen = "".join(expected for _, expected in CASES) + "".join(redact(s)[0] for s in sentences)
    assert [p.kind for p in PATTERNS if p.marker not in seen] == []


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_is_untouched(text: str) -> None:
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_redaction_is_idempotent(text: str, expected: str) -> None:
    once, _ = redact(text)
    assert redact(once) == (once, 0)
    column, _ = redact_column(pl.Series([once]))
    assert column.to_list() == [once]


def test_several_secrets_in_one_text_are_all_counted() -> None:
    text = f"a {AWS_ID} b {GITHUB_CLASSIC} c {ANTHROPIC} d postgres://u:p@h"
    out, count = redact(text)
    assert count == 4
    for secret in (AWS_ID, GITHUB_CLASSIC, ANTHROPIC, ":p@"):
        assert secret not in out


def test_column_and_string_forms_agree() -> None:
    texts = [t for t, _ in CASES] + PROSE + ["", "\n".join(t for t, _ in CASES)]
    texts += [f"{p} {t}" for p, (t, _) in zip(PROSE, CASES)]
    column, column_count = redact_column(pl.Series(texts))
    singles = [redact(t) for t in texts]
    assert column.to_list() == [s for s, _ in singles]
    assert column_count == sum(n for _, n in singles)
    assert column_count > len(CASES)


def test_column_counts_a_text_said_again_each_time() -> None:
    """Each distinct text is redacted once: one said three times is still three secrets, in three rows."""
    texts = [f"k {AWS_ID}", "plain", f"k {AWS_ID}", None, f"a {ANTHROPIC} b", f"k {AWS_ID}"]
    column, count = redact_column(pl.Series(texts))
    singles = [redact(t) if t is not None else (None, 0) for t in texts]
    assert column.to_list() == [s for s, _ in singles]
    assert count == sum(n for _, n in singles) == 4


def test_column_keeps_nulls_and_order() -> None:
    series = pl.Series(["plain", None, f"k {AWS_ID}", "also plain"])
    column, count = redact_column(series)
    assert column.to_list() == ["plain", None, "k [REDACTED:aws-access-key-id]", "also plain"]
    assert count == 1


def test_column_without_secrets_is_returned_unchanged() -> None:
    series = pl.Series(PROSE)
    column, count = redact_column(series)
    assert count == 0
    assert column.to_list() == PROSE


def test_every_match_contains_its_pattern_hint() -> None:
    """The cheap pre-check (union of hints) must never hide a real match."""
    checked = 0
    for text, _ in CASES:
        for pattern in PATTERNS:
            for match in re.finditer(pattern.python_regex(), text):
                assert re.search(pattern.hint, match.group(0)), (pattern.kind, match.group(0))
                checked += 1
    assert checked >= len(CASES)


def test_forms_agree_next_to_non_ascii_text() -> None:
    texts = [f"é{AWS_ID}ü", f"日本{GITHUB_CLASSIC}語", f"naïve sk-{'é' * 30}", "ß://ä:ö@host"]
    column, count = redact_column(pl.Series(texts))
    singles = [redact(t) for t in texts]
    assert column.to_list() == [s for s, _ in singles]
    assert count == sum(n for _, n in singles) >= 2


@pytest.mark.parametrize("key", ["password", "Password", "PASSWORD", "dbPassword", "DB_PASSWORD", "db-passwd", "PWD"])
def test_password_key_spellings_keep_the_key_and_hide_the_value(key: str) -> None:
    out, count = redact(f"{key}=Zq8-wX2mN7")
    assert (out, count) == (f"{key}=[REDACTED:password]", 1)


@pytest.mark.parametrize("key", ["api_key", "API-KEY", "apiKey", "ApiKey", "AccessKey", "GITLAB_TOKEN", "clientSecret"])
def test_secret_key_spellings_keep_the_key_and_hide_the_value(key: str) -> None:
    out, count = redact(f'{key}: "Zq8wX2mN7pL4"')
    assert (out, count) == (f'{key}: "[REDACTED:secret-assignment]"', 1)


def test_assignment_values_need_eight_characters_with_a_digit_or_symbol() -> None:
    assert redact("password=ab1cdef")[1] == 0  # 7 characters
    assert redact("password=ab1cdefg")[1] == 1
    assert redact("token=abcdefghijklmnop")[1] == 0  # a word, however long
    for shape in ("1bcdefgh", "a#cdefgh", "abcdefg%", "abcdefghijkl+m"):  # the mark anywhere
        assert redact(f"token={shape}") == ("token=[REDACTED:secret-assignment]", 1), shape


# ---------------------------------------------------------------- gitleaks' rules, vendored as data

README_TOKEN = "rdme_" + "q7wm2xk9a3b5" * 5 + "zz0123456y"
FRAMEIO_TOKEN = "fio-u-" + "Kd83Jf02Lq7Zx5Vb" * 4
INTRA42_SECRET = "s-s4t2ud-" + "9f2c4e7a1b3d5f60" * 4


@pytest.mark.parametrize(("text", "kind"), [
    (f"readme key {README_TOKEN}", "readme-api-token"),
    (f"frameio {FRAMEIO_TOKEN}", "frameio-api-token"),  # its rule has a flag group mid-pattern (RE2 syntax)
    (f"42 {INTRA42_SECRET}", "intra42-client-secret"),
])
def test_a_kind_only_gitleaks_rules_know_is_redacted(text: str, kind: str) -> None:
    out, count = redact(text)
    assert count == 1 and f"[REDACTED:{kind}]" in out, out
    assert redact_column(pl.Series([text]))[0].to_list() == [out]


def test_gitleaks_rules_are_read_and_translated() -> None:
    from dream.redaction import gitleaks

    assert len(gitleaks.rules()) >= 150  # of 222: the rest are for files, generic, or keyed by common words
    assert gitleaks.translate("(?i)abc(?:x(?i)yz)q\\z") == "(?i)abc(?:x(?i:yz))q\\Z"
    assert not {rule.id for rule in gitleaks.rules()} & gitleaks.SKIPPED_RULES


def test_a_password_said_across_two_texts_is_redacted_in_the_second() -> None:
    """Observed on main: "the prod db password is" in one message and the password alone in the next."""
    from dream.redaction.redact import redact_following

    texts = pl.Series(["the prod db password is", "Zq8x#Lw2mQ", "thanks", "wifi password:", "MeadowOrchidHarbor",
                       "the password is", "in the vault"])
    redacted, count = redact_following(texts)
    assert redacted.to_list() == ["the prod db password is", "[REDACTED:password]", "thanks", "wifi password:",
                                  "[REDACTED:password]", "the password is", "in the vault"]
    assert count == 2 and texts[1] == "Zq8x#Lw2mQ"  # the caller's series is left as it was


RUN_AND_REPORT = """import sys
from dream.pipeline.run import run
from dream.redaction import redact
outcome = run(sys.argv[1], engine="offline", force=True)
print(outcome.status.value, outcome.redactions, redact._regex.cache_info().currsize)
"""


def test_a_run_redacts_its_logs_without_compiling_the_string_patterns(tmp_path) -> None:
    """The logs are redacted as columns (polars); Python's compile of every pattern (0.05 s of CPU) waits for a
    caller of `redact` on one string, which a plain nightly run has none of."""
    import subprocess
    import sys

    store = tmp_path / "memory"
    (store / "logs" / "2026" / "11" / "10").mkdir(parents=True)
    (store / "MEMORY.md").write_text("# Memory\n")
    (store / "logs" / "2026" / "11" / "10" / "session.md").write_text(
        "> remember that the staging port is 8080\n< ok\n> the deploy uses password=Hunter2-prod-77\n")
    done = subprocess.run([sys.executable, "-c", RUN_AND_REPORT, str(store)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    status, redactions, compiled = done.stdout.split()
    assert status == "proposed"
    assert int(redactions) >= 1  # the password was found and replaced, by the column form
    assert compiled == "0"
