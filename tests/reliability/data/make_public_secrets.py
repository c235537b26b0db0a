"""Write public_secrets.tsv: the kinds secrets.tsv lacked, in the shapes their vendors document.

The second half of the public-style corpus (secrets.tsv is the first): formats
an independent torture run found dream storing (command-line passwords of
sshpass, docker, redis-cli and sqlcmd, Go DSNs, PHP `define`, .netrc, Google
OAuth client secrets, Discord and Teams webhooks, Sentry DSNs, Linear,
Postman and Grafana tokens, age keys, values continued on the next line, GCP
service-account JSON, letters-only passwords after ``password:``, Twilio
auth tokens, assignments behind a ``word: `` prefix, ``LICENSE_KEY=<64 hex>``) and
further vendors' tokens. Every value is random (seeded, reproducible) in the
documented shape of its kind; none is a real credential and none was copied
from a leak. Run ``python tests/reliability/data/make_public_secrets.py`` to
regenerate; the tests read the file.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from corpus_tsv import ALNUM, DIGITS, HEX, LOWER, UPPER, URLSAFE, random_text, write_corpus

rnd = random.Random(20261202)
r = random_text(rnd)
B32 = "023456789ACDEFGHJKLMNPQRSTUVWXYZ"  # bech32, as age writes it (upper case)


def password() -> str:
    return r(ALNUM, 10) + rnd.choice("#%+") + r(DIGITS, 3)


def uid() -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128)))


def words() -> str:
    pool = ["velvet", "harbor", "quartz", "meadow", "falcon", "copper", "lantern", "glacier", "orchid", "thunder"]
    return "".join(rnd.choice(pool) for _ in range(3))


KINDS = {
    "sshpass": (password, ["deploy with sshpass -p '{s}' ssh deploy@web1", "sshpass -p {s} scp dump.sql db2:"]),
    "docker-login": (password, ["docker login -u ci -p {s} registry.example.com",
                                "podman login --password {s} quay.example.com"]),
    "redis-cli": (password, ["check the queue with redis-cli -h cache -a {s} llen jobs"]),
    "sqlcmd": (password, ["sqlcmd -S db.internal -U sa -P {s} -Q 'select 1'"]),
    "go-dsn": (password, ["the Go service connects with app:{s}@tcp(db.internal:3306)/ledger?parseTime=true",
                          "DSN is reporting:{s}@unix(/run/mysqld.sock)/reports"]),
    "php-define": (password, ["wp-config has define('DB_PASSWORD', '{s}');",
                              "define( 'AUTH_KEY', '{s}' ); in the old install"]),
    "netrc": (password, ["~/.netrc holds machine api.example.com login ci password {s}"]),
    "google-oauth-secret": (lambda: "GOCSPX-" + r(URLSAFE, 28), ["the OAuth client secret is {s}"]),
    "discord-webhook": (lambda: f"https://discord.com/api/webhooks/{r(DIGITS, 19)}/{r(URLSAFE, 68)}",
                        ["release notes go to {s}"]),
    "teams-webhook": (lambda: f"https://contoso.webhook.office.com/webhookb2/{uid()}@{uid()}/IncomingWebhook/"
                      f"{r(HEX, 32)}/{uid()}", ["the Teams channel hook is {s}"]),
    "sentry-dsn": (lambda: r(HEX, 32), ["SENTRY_DSN=https://{s}@o{n}.ingest.sentry.io/4504",
                                        "errors go to https://{s}@sentry.internal/12"]),
    "sentry-token": (lambda: "sntrys_eyJpYXQiOjE3" + r(URLSAFE, 60), ["sentry-cli uses {s}"]),
    "linear-key": (lambda: "lin_api_" + r(ALNUM, 40), ["the Linear API key is {s}"]),
    "postman-key": (lambda: f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}", ["newman runs with {s}"]),
    "grafana-service-token": (lambda: f"glsa_{r(ALNUM, 32)}_{r(HEX, 8)}", ["the Grafana service account token is {s}"]),
    "grafana-cloud-token": (lambda: "glc_eyJvIjoi" + r(URLSAFE, 60), ["Grafana Cloud access policy token {s}"]),
    "grafana-api-key": (lambda: "eyJrIjoi" + r(ALNUM, 40) + "IiwibiI6ImRyZWFtIiwiaWQiOjF9", ["old grafana key {s}"]),
    "age-secret-key": (lambda: "AGE-SECRET-KEY-1" + r(B32, 58), ["the sops age key is {s}"]),
    "continued-value": (lambda: r(ALNUM, 30) + r(DIGITS, 4), ["API_TOKEN=\\\n    {s}", "password:\n  {s}",
                                                               "client_secret: >-\n  {s}"]),
    "gcp-service-account": (lambda: r(HEX, 40), ['{{"type": "service_account", "project_id": "ledger", '
                                                  '"private_key_id": "{s}", "client_email": "ci@ledger.iam"}}']),
    "letters-only-password-colon": (words, ["the admin password: {s}", "wifi password: {s}"]),
    "twilio-auth-token": (lambda: r(HEX, 32), ["the Twilio auth token is {s}", "twilio: account AC{n} token {s}"]),
    "prefixed-assignment": (lambda: r(ALNUM, 40) + r(DIGITS, 4), ["note: SECRET_KEY_BASE={s}",
                                                                   "todo: rotate RAILS_MASTER_KEY={s}",
                                                                   "remember: SIGNING_KEY={s}"]),
    # a hex value is a secret only under a name with a secret word (issue 38): FOO=<hex> is a checksum
    "shell-hex-value": (lambda: r(HEX, 64), ["LICENSE_KEY={s}", "WEBHOOK_TOKEN={s} in .env"]),
    "vault-token": (lambda: "hvs." + r(URLSAFE, 90), ["VAULT_TOKEN for CI is {s}"]),
    "doppler-token": (lambda: "dp.st.prd." + r(ALNUM, 43), ["doppler uses {s}"]),
    "terraform-cloud-token": (lambda: r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67), ["the TFC token is {s}"]),
    "new-relic-key": (lambda: "NRAK-" + r(UPPER + DIGITS, 27), ["the New Relic user key is {s}"]),
    "dynatrace-token": (lambda: f"dt0c01.{r(UPPER + DIGITS, 24)}.{r(UPPER + DIGITS, 64)}", ["dynatrace token {s}"]),
    "pulumi-token": (lambda: "pul-" + r(HEX, 40), ["pulumi login with {s}"]),
    "planetscale-token": (lambda: "pscale_tkn_" + r(URLSAFE, 43), ["the PlanetScale service token is {s}"]),
    "supabase-token": (lambda: "sbp_" + r(HEX, 40), ["supabase cli token {s}"]),
    "notion-token": (lambda: "ntn_" + r(ALNUM, 46), ["the Notion integration secret is {s}"]),
    "airtable-token": (lambda: f"pat{r(ALNUM, 14)}.{r(HEX, 64)}", ["Airtable personal token {s}"]),
    "dropbox-token": (lambda: "sl." + r(URLSAFE, 138), ["the Dropbox access token is {s}"]),
    "figma-token": (lambda: "figd_" + r(URLSAFE, 40), ["Figma export uses {s}"]),
    "okta-token": (lambda: "00" + r(URLSAFE, 40), ["call Okta with Authorization: SSWS {s}"]),
    "mapbox-secret-token": (lambda: f"sk.eyJ1IjoibGVkZ2VyIiwi{r(URLSAFE, 30)}.{r(URLSAFE, 22)}",
                            ["the Mapbox upload token is {s}"]),
    "razorpay-key": (lambda: "rzp_live_" + r(ALNUM, 14), ["razorpay key {s}"]),
    "alibaba-access-key": (lambda: "LTAI" + r(ALNUM, 20), ["the Aliyun access key is {s}"]),
    "contentful-token": (lambda: "CFPAT-" + r(URLSAFE, 43), ["contentful management token {s}"]),
    "buildkite-token": (lambda: "bkua_" + r(HEX, 40), ["buildkite agent api {s}"]),
    "sourcegraph-token": (lambda: "sgp_" + r(HEX, 40), ["src cli token {s}"]),
    "replicate-token": (lambda: "r8_" + r(ALNUM, 37), ["REPLICATE key is {s}"]),
    "groq-key": (lambda: "gsk_" + r(ALNUM, 52), ["the Groq key is {s}"]),
    "perplexity-key": (lambda: "pplx-" + r(ALNUM, 48), ["perplexity api {s}"]),
    "xai-key": (lambda: "xai-" + r(ALNUM, 80), ["the Grok key is {s}"]),
    "brevo-key": (lambda: f"xkeysib-{r(HEX, 64)}-{r(ALNUM, 16)}", ["newsletter mail via {s}"]),
    "square-access-token": (lambda: "EAAA" + r(URLSAFE, 60), ["Square production token {s}"]),
    "azure-ad-client-secret": (lambda: r(ALNUM, 3) + "8Q~" + r(URLSAFE + "~.", 34), ["the app registration secret is {s}"]),
    "onepassword-token": (lambda: "ops_eyJzaWduSW5BZGRyZXNzIjoi" + r(URLSAFE, 60), ["1Password service account {s}"]),
    "prefect-key": (lambda: "pnu_" + r(ALNUM, 36), ["prefect cloud login -k {s}"]),
    "rubygems-key": (lambda: "rubygems_" + r(HEX, 48), ["gem push with {s}"]),
    "dockerhub-token": (lambda: "dckr_pat_" + r(URLSAFE, 27), ["the Docker Hub token is {s}"]),
    "heroku-key": (lambda: "HRKU-" + r(URLSAFE, 60), ["heroku auth token {s}"]),
    "tailscale-key": (lambda: f"tskey-auth-k{r(ALNUM, 10)}CNTRL-{r(ALNUM, 33)}", ["join the tailnet with {s}"]),
    "shippo-token": (lambda: "shippo_live_" + r(HEX, 40), ["labels print with {s}"]),
    "flutterwave-key": (lambda: f"FLWSECK-{r(HEX, 32)}-X", ["the Flutterwave secret key is {s}"]),
    "infracost-key": (lambda: "ico-" + r(ALNUM, 32), ["infracost configure set api_key {s}"]),
    "clojars-token": (lambda: "CLOJARS_" + r(LOWER + DIGITS, 60), ["lein deploy with {s}"]),
    "duffel-token": (lambda: "duffel_live_" + r(URLSAFE, 43), ["flight search uses {s}"]),
    "easypost-key": (lambda: "EZAK" + r(ALNUM, 54), ["the EasyPost production key is {s}"]),
    "facebook-token": (lambda: "EAAG" + r(ALNUM, 120), ["the page access token is {s}"]),
    "password-hash": (lambda: "$6$" + r(ALNUM, 8) + "$" + r(ALNUM + "./", 86), ["root's shadow entry is root:{s}:19000"]),
}


def main() -> None:
    write_corpus(KINDS, Path(__file__).with_name("public_secrets.tsv"), lambda: {"n": r(DIGITS, 6)},
                 sentence_column="sentence (\\n: a line break)")


if __name__ == "__main__":
    main()
